//! Trees far wider than their input (issue #7.11): most leaves are empty, and
//! a subtree of empty leaves has a value that depends only on its height.
//! The CPU backend keeps states only for leaves that hold a block and
//! computes each level's empty-subtree value once; these tests hold it to the
//! reference on trees with many empty leaves, at the edges where a node has
//! both real and empty children, on every CPU path this machine has.

mod common;

use common::reference_tree;

use rayon::prelude::*;
use treehash::{Algorithm, CpuPath, Hasher, HasherOptions, TreeParams};

/// Hashers for the portable path and the best one here (they are the same
/// on a CPU without SIMD paths, and the test then checks the portable twice).
fn hashers() -> Vec<Hasher> {
    [CpuPath::Portable, CpuPath::Auto]
        .into_iter()
        .map(|cpu_path| {
            Hasher::new(
                HasherOptions::default()
                    .with_cpu_path(cpu_path)
                    .with_piece_bytes(Some(1 << 16)),
            )
            .unwrap()
        })
        .collect()
}

/// Input sizes in bytes around the edges that matter for B-byte blocks and
/// L leaves: nothing, parts of one block, a few blocks, and L − 1, L, L + 1
/// blocks (the first wrap round the leaves).
fn sizes(block_size: usize, leaves: usize) -> Vec<usize> {
    let b = block_size;
    vec![
        0,
        1,
        b - 1,
        b,
        b + 1,
        3 * b + 5,
        17 * b,
        (leaves - 1) * b,
        leaves * b - 3,
        leaves * b,
        (leaves + 1) * b,
        (leaves + 2) * b + 1,
    ]
}

#[test]
fn wide_trees_with_empty_leaves_match_the_reference() {
    let hashers = hashers();
    let shapes = [
        (Algorithm::Sha3_256, 16, 2, None),
        (Algorithm::Sha3_512, 10, 3, None),
        (Algorithm::Shake128, 8, 4, Some(24)),
        (Algorithm::Sha3_224, 8, 4, None),
    ];
    for (algorithm, height, degree, block_size) in shapes {
        let output = algorithm.is_xof().then_some(100);
        let params =
            TreeParams::with_options(algorithm, height, degree, block_size, vec![], output)
                .unwrap();
        // The reference hashes every empty leaf: its cost is O(L) per size.
        let sizes = sizes(params.block_size(), params.leaf_count() as usize);
        sizes.into_par_iter().for_each(|size| {
            let data = common::spec_input(size);
            let want = treehash_reference::tree_hash(&reference_tree(&params), &data);
            for hasher in &hashers {
                let got = hasher.hash_bytes(&params, &data).unwrap();
                assert_eq!(got.digest, want, "{params:?}, {size} bytes");
                let sequential = hasher.hash_reader(&params, &mut &data[..]).unwrap();
                assert_eq!(
                    sequential.digest, want,
                    "{params:?}, {size} bytes as a sequential input"
                );
            }
        });
    }
}

/// With a prefix the first block is partly prefix; the tree is otherwise empty.
#[test]
fn a_prefix_alone_in_a_wide_tree_matches_the_reference() {
    for hasher in hashers() {
        for prefix_len in [1usize, 135, 136, 137, 255] {
            let prefix = vec![0xA5; prefix_len];
            let params =
                TreeParams::with_options(Algorithm::Sha3_256, 9, 3, None, prefix, None).unwrap();
            for size in [0usize, 1, 200] {
                let data = common::spec_input(size);
                let got = hasher.hash_bytes(&params, &data).unwrap().digest;
                assert_eq!(
                    got,
                    treehash_reference::tree_hash(&reference_tree(&params), &data),
                    "{params:?}, {size}"
                );
            }
        }
    }
}

/// `-H 24 -D 2` of an empty input: 2^24 empty leaves. This used to take 10 s
/// and 3.8 GB; it must now cost a few dozen hashes. (Not timed here: in a
/// release build it runs in milliseconds; were it O(L) again, the suite
/// would show it.)
#[test]
fn the_widest_tree_of_nothing_is_cheap() {
    let vectors = common::vectors();
    let wide: Vec<_> = vectors
        .iter()
        .filter(|v| v.params().leaf_count() == 1 << 24 && v.input_len <= 1000)
        .collect();
    assert!(wide.len() >= 3, "the wide-tree vectors are missing");
    for hasher in hashers() {
        for v in &wide {
            let out = hasher.hash_bytes(v.params(), &v.input()).unwrap();
            assert_eq!(hex::encode(&out.digest), v.digest, "{v:?}");
            let out = hasher.hash_reader(v.params(), &mut &v.input()[..]).unwrap();
            assert_eq!(
                hex::encode(&out.digest),
                v.digest,
                "{v:?} as a sequential input"
            );
        }
        let params = TreeParams::new(Algorithm::Sha3_256, 24, 2).unwrap();
        let empty = hasher.hash_bytes(&params, b"").unwrap().digest;
        assert_eq!(
            hex::encode(empty),
            "0a9e0adacad512fb783a5b3fc43a4bc6b1aaa1a2e974448b8aafa7e7deaf182b"
        );
    }
}
