//! The library called from inside a caller's own rayon parallel loop: many
//! inputs hashed from `par_iter`, as a program that hashes a dataset would.
//! Rayon lets a worker that waits for another pool run its own pool's next
//! job meanwhile; a hasher that waited that way nested one input inside
//! another until the stack overflowed and the process aborted.

mod common;

use common::reference_tree;
use rayon::prelude::*;
use treehash::{Algorithm, BackendChoice, Hasher, HasherOptions, TreeParams};

fn cpu_hasher(piece_bytes: Option<usize>) -> Hasher {
    Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Cpu)
            .with_piece_bytes(piece_bytes),
    )
    .unwrap()
}

/// `count` inputs of `len` bytes, each different.
fn inputs(count: usize, len: usize) -> Vec<Vec<u8>> {
    (0..count)
        .map(|i| {
            let seed = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            (0..len)
                .map(|k| (seed >> (k % 57)) as u8 ^ k as u8)
                .collect()
        })
        .collect()
}

/// Hashes `data` from a `par_iter` on the global pool and from a plain loop:
/// the same digests, and a few of them the reference's.
fn par_iter_agrees_with_a_loop(hasher: &Hasher, params: &TreeParams, data: &[Vec<u8>]) {
    let from_par_iter: Vec<Vec<u8>> = data
        .par_iter()
        .map(|d| hasher.hash_bytes(params, d).unwrap().digest)
        .collect();
    for (k, d) in data.iter().enumerate() {
        let alone = hasher.hash_bytes(params, d).unwrap().digest;
        assert_eq!(from_par_iter[k], alone, "input {k}");
    }
    for k in [0, data.len() / 2, data.len() - 1] {
        assert_eq!(
            from_par_iter[k],
            treehash_reference::tree_hash(&reference_tree(params), &data[k]),
            "input {k}"
        );
    }
}

#[test]
fn a_hundred_thousand_small_inputs_from_par_iter() {
    let hasher = cpu_hasher(None);
    let params = TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap();
    let data = inputs(100_000, 100);
    par_iter_agrees_with_a_loop(&hasher, &params, &data);
}

/// Inputs above the inline size (hashed on the hasher's pool), of one piece
/// and of several, and at height 0.
#[test]
fn larger_inputs_from_par_iter() {
    let h8 = TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap();
    let h2 = TreeParams::new(Algorithm::Shake128, 2, 4).unwrap();
    let h0 = TreeParams::new(Algorithm::Sha3_512, 0, 4).unwrap();
    let one_piece = cpu_hasher(None);
    par_iter_agrees_with_a_loop(&one_piece, &h8, &inputs(2000, 70_000));
    par_iter_agrees_with_a_loop(&one_piece, &h8, &inputs(300, 300_000));
    par_iter_agrees_with_a_loop(&one_piece, &h0, &inputs(300, 100_000));
    let many_pieces = cpu_hasher(Some(64 << 10));
    par_iter_agrees_with_a_loop(&many_pieces, &h2, &inputs(200, 1 << 20));
}

/// A caller's pool of one thread: the worker that calls the hasher is the
/// only one its pool has, so any waiting on it that ran the pool's next job
/// would show as a nested call.
#[test]
fn inputs_from_a_one_thread_pool() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let hasher = cpu_hasher(Some(64 << 10));
    let params = TreeParams::new(Algorithm::Sha3_256, 3, 4).unwrap();
    let data = inputs(64, 300_000);
    pool.install(|| par_iter_agrees_with_a_loop(&hasher, &params, &data));
}
