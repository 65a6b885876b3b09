//! Helpers shared by the integration tests, in one place: CPU hashers of
//! every path here; the spec's test input, random bytes and the reference
//! digest of either kind of parameters in inputs.rs; the vector files in
//! vectors.rs, the tables of parameters and lengths the engines are checked
//! on in cases.rs, those of parts in parts.rs. The tool's tests
//! (cli/tests/) share inputs.rs and parts.rs.
#![allow(dead_code)]

pub mod cases;
mod inputs;
pub mod parts;
pub mod vectors;

// Not every test binary uses every one.
#[allow(unused_imports)]
pub use inputs::{random_bytes, reference_digest, reference_node, reference_tree, spec_input};
#[allow(unused_imports)]
pub use vectors::{KnownAnswer, known_answers, plain_vectors, vectors};

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
