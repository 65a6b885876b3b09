//! Every shared test vector, on the reference and on the fast CPU backend.

mod common;

use common::{plain_vectors, vectors};
use treehash::{Hasher, HasherOptions, reference};

/// The reference holds every leaf in memory and hashes each one: for the
/// wide-tree vectors (L = 2^24 leaves) that is minutes and gigabytes, so it
/// checks only the vectors with at most this many leaves. The fast backends
/// check every vector, the wide ones included.
const REFERENCE_MAX_LEAVES: u64 = 1 << 20;

#[test]
fn reference_reproduces_every_vector_up_to_a_million_leaves() {
    let mut checked = 0;
    for v in vectors() {
        let params = v.params();
        if params.leaf_count() > REFERENCE_MAX_LEAVES {
            eprintln!(
                "reference: not run on {} with {} leaves (too slow for the literal spec)",
                params.label(),
                params.leaf_count()
            );
            continue;
        }
        let got = reference::tree_hash(&params, &v.input());
        assert_eq!(hex::encode(got), v.digest, "{v:?}");
        checked += 1;
    }
    assert!(checked >= 50, "only {checked} vectors checked");
}

#[test]
fn cpu_backend_reproduces_every_vector() {
    let hasher = Hasher::new(HasherOptions::default()).unwrap();
    for v in vectors() {
        let out = hasher.hash_bytes(&v.params(), &v.input()).unwrap();
        assert_eq!(hex::encode(&out.digest), v.digest, "{v:?}");
        assert_eq!(out.bytes, v.input_len as u64);
    }
}

#[test]
fn cpu_backend_reproduces_every_vector_as_a_stream() {
    let hasher = Hasher::new(HasherOptions::default()).unwrap();
    for v in vectors() {
        let input = v.input();
        let out = hasher.hash_reader(&v.params(), &mut &input[..]).unwrap();
        assert_eq!(hex::encode(&out.digest), v.digest, "{v:?}");
    }
}

#[test]
fn height_zero_on_the_cpu_is_plain_sha3_by_openssl() {
    let hasher = Hasher::new(HasherOptions::default()).unwrap();
    for v in plain_vectors() {
        let input = common::spec_input(v.input_len);
        let out = hasher.hash_bytes(&v.params(), &input).unwrap();
        assert_eq!(hex::encode(&out.digest), v.digest, "{v:?}");
        let out = hasher.hash_reader(&v.params(), &mut &input[..]).unwrap();
        assert_eq!(hex::encode(&out.digest), v.digest, "{v:?} as a stream");
    }
}
