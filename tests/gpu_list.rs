//! Lists that share the GPU: under auto, long inputs go whole to the GPU
//! beside the CPU's, small ones to the CPU's workers; under `--backend gpu`
//! every input goes to the GPU. These need a CUDA GPU, so CI skips them;
//! `scripts/gpu-check.sh` runs them on the device machine.

// The GPU backend is built on Linux only (build.rs's `gpu_backend`);
// elsewhere these tests are not compiled.
#![cfg(gpu_backend)]

mod common;

use std::fs;

use common::reference_tree;
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use treehash::{
    Algorithm, BackendChoice, BackendUsed, Hasher, HasherOptions, ListInput, TreeParams,
};

/// A list of long inputs (many pieces of 1 MiB), short ones, H = 0 ones and
/// a missing name, and each item's expected digest.
fn mixed_list(dir: &std::path::Path) -> Vec<(ListInput, Option<Vec<u8>>)> {
    let mut rng = StdRng::seed_from_u64(22);
    let tree = TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap();
    let shake = TreeParams::new(Algorithm::Shake128, 5, 4).unwrap();
    let plain = TreeParams::new(Algorithm::Sha3_512, 0, 4).unwrap();
    (0..40)
        .map(|k| {
            let path = dir.join(format!("in{k}"));
            let params = [&tree, &shake, &plain][k % 3].clone();
            if k == 17 {
                return (
                    ListInput {
                        params: params.into(),
                        path,
                    },
                    None,
                );
            }
            let len = match k % 4 {
                0 | 1 => rng.random_range(8 << 20..24 << 20),
                2 => rng.random_range(0..100_000),
                _ => rng.random_range(1 << 20..3 << 20),
            };
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            fs::write(&path, &bytes).unwrap();
            let want = treehash_reference::tree_hash(&reference_tree(&params), &bytes);
            (
                ListInput {
                    params: params.into(),
                    path,
                },
                Some(want),
            )
        })
        .collect()
}

/// Hashes the list and checks every digest and failure; returns the
/// backends that made the digests.
fn check(hasher: &Hasher, list: &[(ListInput, Option<Vec<u8>>)]) -> Vec<BackendUsed> {
    let items = list
        .iter()
        .enumerate()
        .map(|(k, (i, _))| (k, Some(i.clone())));
    let mut used = Vec::new();
    let mut next = 0;
    hasher
        .hash_list(items, &(), |k, result| {
            assert_eq!(k, next);
            next += 1;
            let result = result.expect("every item holds an input");
            match &list[k].1 {
                Some(want) => {
                    let out = result.unwrap_or_else(|e| panic!("item {k}: {e}"));
                    assert_eq!(&out.digest, want, "item {k}");
                    used.push(out.backend);
                }
                None => assert!(result.is_err(), "item {k} is missing"),
            }
            Ok::<_, ()>(())
        })
        .unwrap();
    assert_eq!(next, list.len());
    used
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn auto_lists_give_long_inputs_to_the_gpu_beside_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let list = mixed_list(dir.path());
    let hasher = Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Auto)
            .with_piece_bytes(Some(1 << 20))
            .with_wait_for_gpus(true),
    )
    .unwrap();
    let used = check(&hasher, &list);
    assert!(used.contains(&BackendUsed::Gpu), "{used:?}");
    assert!(used.contains(&BackendUsed::Cpu), "{used:?}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_lists_hash_every_tree_on_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let list = mixed_list(dir.path());
    let hasher = Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Gpu)
            .with_piece_bytes(Some(1 << 20)),
    )
    .unwrap();
    hasher.gpu().expect("a usable CUDA GPU");
    let used = check(&hasher, &list);
    assert!(used.iter().all(|&b| b == BackendUsed::Gpu), "{used:?}");
}
