//! Helpers shared by the integration tests: the shared test vectors and the
//! spec's test input; those of the binary's tests in cli.rs, those of parts
//! in parts.rs.
#![allow(dead_code)]

// Only where the binary is built (it needs the `cli` feature), and with
// it the `CARGO_BIN_EXE_treehash` that names it.
#[cfg(feature = "cli")]
pub mod cli;
pub mod parts;

use serde::Deserialize;
use treehash::{Algorithm, TreeParams};

/// One case of `tests/vectors/li-v1.json` (a copy of `shared/vectors/li-v1.json`).
#[derive(Debug, Deserialize)]
pub struct Vector {
    pub input_len: usize,
    pub algo: String,
    pub height: u32,
    pub degree: u64,
    pub block_size: usize,
    pub prefix_hex: String,
    pub length: Option<usize>,
    pub digest: String,
}

impl Vector {
    pub fn params(&self) -> TreeParams {
        let algorithm: Algorithm = self.algo.parse().expect("known algorithm");
        TreeParams::with_options(
            algorithm,
            self.height,
            self.degree,
            Some(self.block_size),
            hex::decode(&self.prefix_hex).expect("hex prefix"),
            self.length,
        )
        .expect("valid parameters")
    }

    pub fn input(&self) -> Vec<u8> {
        spec_input(self.input_len)
    }
}

#[derive(Deserialize)]
struct VectorFile {
    cases: Vec<Vector>,
}

pub fn vectors() -> Vec<Vector> {
    let text = include_str!("../vectors/li-v1.json");
    let file: VectorFile = serde_json::from_str(text).expect("vector file parses");
    assert!(file.cases.len() >= 50, "the vector file lost cases");
    file.cases
}

/// The spec's test input: byte k is k mod 251.
pub fn spec_input(len: usize) -> Vec<u8> {
    (0..len).map(|k| (k % 251) as u8).collect()
}

/// One case of `tests/vectors/fips202-plain.json`: plain SHA-3 / SHAKE of the
/// spec's test input, computed by OpenSSL (through Python's hashlib), not by
/// RustCrypto.
#[derive(Debug, Deserialize)]
pub struct PlainVector {
    pub algo: String,
    pub input_len: usize,
    pub digest: String,
}

impl PlainVector {
    /// The parameters whose H = 0 digest is this plain digest.
    pub fn params(&self) -> TreeParams {
        let algorithm: Algorithm = self.algo.parse().expect("known algorithm");
        TreeParams::with_options(
            algorithm,
            0,
            4,
            None,
            Vec::new(),
            Some(self.digest.len() / 2),
        )
        .expect("valid parameters")
    }
}

#[derive(Deserialize)]
struct PlainFile {
    cases: Vec<PlainVector>,
}

pub fn plain_vectors() -> Vec<PlainVector> {
    let text = include_str!("../vectors/fips202-plain.json");
    let file: PlainFile = serde_json::from_str(text).expect("plain vector file parses");
    assert_eq!(file.cases.len(), 54, "the plain vector file lost cases");
    file.cases
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
