//! Helpers shared by the integration tests, in one place: the spec's test
//! input, random bytes, the reference digest of either kind of parameters
//! and CPU hashers of every path here; the vector files in vectors.rs, the
//! tables of parameters and lengths the engines are checked on in
//! cases.rs, those of the binary's tests in cli.rs, those of parts in
//! parts.rs.
#![allow(dead_code)]

pub mod cases;
// Only where the binary is built (it needs the `cli` feature), and with
// it the `CARGO_BIN_EXE_treehash` that names it.
#[cfg(feature = "cli")]
pub mod cli;
pub mod parts;
pub mod vectors;

// Not every test binary uses every one.
#[allow(unused_imports)]
pub use vectors::{KnownAnswer, known_answers, plain_vectors, vectors};

use rand::Rng;
use rand::rngs::StdRng;

/// The spec's test input: byte k is k mod 251.
pub fn spec_input(len: usize) -> Vec<u8> {
    (0..len).map(|k| (k % 251) as u8).collect()
}

/// `len` random bytes.
pub fn random_bytes(rng: &mut StdRng, len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    rng.fill_bytes(&mut data);
    data
}

/// The reference digest of `message` with parameters of either kind.
pub fn reference_digest(params: &treehash::Params, message: &[u8]) -> Vec<u8> {
    use treehash::reference::{kangaroo, parallel_hash, turboshake};
    use treehash::standard::Standard;
    let p = match params {
        treehash::Params::Tree(p) => return treehash::reference::tree_hash(p, message),
        treehash::Params::Standard(p) => p,
        _ => unreachable!("parameters are of a tree or a standard function"),
    };
    let (c, n) = (p.customization(), p.output_len());
    match p.standard() {
        Standard::Kt128 => kangaroo::kt128(message, c, n),
        Standard::Kt256 => kangaroo::kt256(message, c, n),
        Standard::ParallelHash128 => parallel_hash::parallel_hash128(message, p.block_size(), n, c),
        Standard::ParallelHash256 => parallel_hash::parallel_hash256(message, p.block_size(), n, c),
        Standard::TurboShake128 => turboshake::turboshake128(message, p.domain(), n),
        Standard::TurboShake256 => turboshake::turboshake256(message, p.domain(), n),
        other => unreachable!("{other} has a reference"),
    }
}

/// CPU hashers of every code path this build tests (the portable one, and
/// AVX2 and AVX-512 where build.rs says the building CPU has them; a path
/// the CPU lacks then fails the test), each with each of `pieces` (piece
/// lengths; `None` is the tuned default), on two threads.
pub fn cpu_hashers_of_every_path(pieces: &[Option<usize>]) -> Vec<treehash::Hasher> {
    let mut paths = vec![treehash::CpuPath::Portable];
    if cfg!(treehash_test_avx2) {
        paths.push(treehash::CpuPath::Avx2);
    }
    if cfg!(treehash_test_avx512) {
        paths.push(treehash::CpuPath::Avx512);
    }
    paths
        .into_iter()
        .flat_map(|cpu_path| {
            pieces.iter().map(move |&piece_bytes| {
                treehash::Hasher::new(
                    treehash::HasherOptions::default()
                        .with_backend(treehash::BackendChoice::Cpu)
                        .with_threads(Some(2))
                        .with_piece_bytes(piece_bytes)
                        .with_cpu_path(cpu_path),
                )
                .unwrap_or_else(|e| panic!("the {cpu_path} path: {e}"))
            })
        })
        .collect()
}
