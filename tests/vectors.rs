//! Every shared test vector, on the reference and on the fast CPU backend.

mod common;

use common::vectors;
use treehash::{Hasher, HasherOptions, reference};

#[test]
fn reference_reproduces_every_vector() {
    for v in vectors() {
        let got = reference::tree_hash(&v.params(), &v.input());
        assert_eq!(hex::encode(got), v.digest, "{v:?}");
    }
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
