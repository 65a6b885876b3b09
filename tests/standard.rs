//! The standard functions through the hasher on every CPU path against the
//! reference (`treehash::reference`), on lengths around every boundary (0, 1,
//! the rate ± 1, KT's chunk ± 1 and multiples of it ± 1, ParallelHash's B ± 1),
//! read from memory, from files (several pieces of them) and from streams,
//! with customization strings and output lengths of several sizes.

mod common;

use std::io::Write;

use treehash::standard::{Family, Standard, StandardParams};
use treehash::{NoProgress, Params};

/// The lengths around a function's boundaries.
fn lengths(params: &StandardParams) -> Vec<usize> {
    let r = params.standard().rate();
    let mut lens = vec![0, 1, r - 1, r, r + 1];
    let chunk = match params.standard().family() {
        Family::TurboShake => 8192,
        _ => params.block_size(),
    };
    for n in [1, 2, 3, 9, 17] {
        lens.extend([n * chunk - 1, n * chunk, n * chunk + 1]);
    }
    lens.sort_unstable();
    lens.dedup();
    lens
}

/// Every function with its defaults, and with the options it takes.
fn cases() -> Vec<StandardParams> {
    let mut cases = Vec::new();
    for standard in Standard::ALL {
        let base = StandardParams::new(standard);
        cases.push(base.clone());
        match standard.family() {
            Family::Kangaroo => {
                for c in [&b"C"[..], &[0x5a; 255], b"a customization string"] {
                    let p = base.clone().with_customization(c.to_vec()).unwrap();
                    cases.push(p.with_output_len(7).unwrap());
                }
            }
            Family::ParallelHash => {
                for (b, s) in [
                    (1usize, &b""[..]),
                    (135, b"S"),
                    (136, b""),
                    (137, b"Parallel Data"),
                    (1000, b""),
                ] {
                    let p = base.clone().with_block_size(b).unwrap();
                    cases.push(p.with_customization(s.to_vec()).unwrap());
                }
                cases.push(base.clone().with_output_len(300).unwrap());
            }
            Family::TurboShake => {
                for d in [0x01, 0x06, 0x7f] {
                    cases.push(base.clone().with_domain(d).unwrap());
                }
                cases.push(base.clone().with_output_len(500).unwrap());
            }
            // `Family` may grow: a new family needs cases of its options.
            other => panic!("no cases for the options of {other:?}"),
        }
    }
    cases
}

/// Deterministic bytes that differ from chunk to chunk.
fn message(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn every_cpu_path_matches_the_reference_from_memory() {
    let hashers = common::cpu_hashers_of_every_path(&[None, Some(8192 * 2)]);
    for params in cases() {
        let want_of = |m: &[u8]| common::reference_digest(&Params::Standard(params.clone()), m);
        for len in lengths(&params) {
            let m = message(len, len as u64);
            let want = want_of(&m);
            for hasher in &hashers {
                let out = hasher.hash_bytes(&params, &m).unwrap();
                assert_eq!(out.digest, want, "{}, {len} bytes", params.label());
                assert_eq!(out.bytes, len as u64);
            }
        }
    }
}

/// Files (mapped in several pieces) and streams of the same messages.
#[test]
fn files_and_streams_match_the_reference() {
    let hashers = common::cpu_hashers_of_every_path(&[Some(8192)]);
    let dir = tempfile::tempdir().unwrap();
    for params in cases().into_iter().step_by(2) {
        for len in [0, 8191, 8193, 5 * 8192 + 17, 300_001] {
            let m = message(len, 7 * len as u64 + 1);
            let want = common::reference_digest(&Params::Standard(params.clone()), &m);
            let path = dir.path().join("m");
            std::fs::File::create(&path).unwrap().write_all(&m).unwrap();
            for hasher in &hashers {
                let from_file = hasher.hash_path(&params, &path, &NoProgress).unwrap();
                assert_eq!(
                    from_file.digest,
                    want,
                    "{} file, {len} bytes",
                    params.label()
                );
                let from_stream = hasher
                    .hash_reader(&params, &mut std::io::Cursor::new(&m))
                    .unwrap();
                assert_eq!(
                    from_stream.digest,
                    want,
                    "{} stream, {len} bytes",
                    params.label()
                );
            }
        }
    }
}
