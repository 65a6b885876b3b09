//! Wide trees on the CPU (issue 21): leaf states that grow piece by piece,
//! as sequential inputs and slices, in pieces of a few blocks, on every CPU
//! path this machine has, against the shared vectors (L = 2^24, computed by
//! the spec's reference outside this crate) and the reference.

mod common;

use common::{reference_tree, vectors};
use treehash::{Algorithm, CpuPath, Hasher, HasherOptions, TreeParams};

/// A hasher on `path` with pieces of `piece_bytes` (the default when
/// `None`) and two threads, or `None` if this CPU lacks the path. The
/// portable path is always there; AVX2 must be where CI says so.
fn hasher(path: CpuPath, piece_bytes: Option<usize>) -> Option<Hasher> {
    let hasher = Hasher::new(
        HasherOptions::default()
            .with_cpu_path(path)
            .with_piece_bytes(piece_bytes)
            .with_threads(Some(2)),
    );
    let required = path == CpuPath::Portable
        || (path == CpuPath::Avx2
            && cfg!(target_arch = "x86_64")
            && ["CI", "TREEHASH_REQUIRE_AVX2"]
                .iter()
                .any(|v| std::env::var_os(v).is_some()));
    match hasher {
        Ok(hasher) => Some(hasher),
        Err(e) if !required => {
            eprintln!("SKIPPED the {path} path: {e}");
            None
        }
        Err(e) => panic!("the {path} path: {e}"),
    }
}

const PATHS: [CpuPath; 3] = [CpuPath::Portable, CpuPath::Avx2, CpuPath::Avx512];

/// The vectors of 2^24 leaves (H = 12 with 1000 bytes and with 1 MiB, a
/// prefix and SHAKE256; H = 24, D = 2), as sequential inputs and as slices,
/// in pieces of the default size and of a few blocks (1 MiB in 1,000 pieces:
/// the states grow at every one), on every path.
#[test]
fn wide_trees_match_the_vectors_on_every_path_in_pieces_of_any_size() {
    let wide: Vec<_> = vectors()
        .into_iter()
        .filter(|v| v.params().leaf_count() == 1 << 24)
        .collect();
    assert!(
        wide.iter().filter(|v| v.height == 12).count() >= 2,
        "the vector file lost its H = 12 cases"
    );
    let mut checked = 0;
    for path in PATHS {
        for piece_bytes in [None, Some(1050)] {
            let Some(hasher) = hasher(path, piece_bytes) else {
                continue;
            };
            for v in &wide {
                let (params, input) = (v.params(), v.input());
                let case = format!("{path}, pieces {piece_bytes:?}, {v:?}");
                let sequential = hasher.hash_reader(&params, &mut &input[..]).unwrap();
                assert_eq!(
                    hex::encode(&sequential.digest),
                    v.digest,
                    "sequential: {case}"
                );
                let slice = hasher.hash_bytes(&params, &input).unwrap();
                assert_eq!(hex::encode(&slice.digest), v.digest, "slice: {case}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 2 * wide.len(), "only {checked} cases ran");
}

/// Leaves that absorb one block in each of many pieces (pieces of one
/// block, a few, and not a whole number of lane groups), and many leaves
/// per piece: every path against the reference, as sequential inputs and
/// slices.
#[test]
fn states_kept_across_tiny_pieces_match_the_reference_on_every_path() {
    let p = |a, h, d, b| TreeParams::with_options(a, h, d, b, vec![], None).unwrap();
    let cases = [
        p(Algorithm::Sha3_256, 6, 4, None),
        p(Algorithm::Sha3_512, 4, 5, None),
        p(Algorithm::Shake128, 3, 9, Some(336)),
        p(Algorithm::Sha3_224, 1, 2, None),
    ];
    for params in cases {
        let (b, stripe) = (params.block_size(), params.stripe_len() as usize);
        let len = 3 * stripe + 5 * b + 17;
        let data: Vec<u8> = (0..len).map(|k| (k * 131 + k / 7) as u8).collect();
        let want = treehash_reference::tree_hash(&reference_tree(&params), &data);
        for path in PATHS {
            for piece_bytes in [b, 3 * b, 11 * b + b / 2, stripe + 1] {
                let Some(hasher) = hasher(path, Some(piece_bytes)) else {
                    continue;
                };
                let case = format!("{path}, {}, pieces of {piece_bytes}", params.label());
                let sequential = hasher.hash_reader(&params, &mut &data[..]).unwrap();
                assert_eq!(sequential.digest, want, "sequential: {case}");
                let slice = hasher.hash_bytes(&params, &data).unwrap();
                assert_eq!(slice.digest, want, "slice: {case}");
            }
        }
    }
}
