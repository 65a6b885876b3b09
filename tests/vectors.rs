//! Known answers: every case of the vector files in tests/vectors/ (the LI
//! vectors of li-v1.json, OpenSSL's plain SHA-3 and SHAKE of
//! fips202-plain.json, RFC 9861's TurboSHAKE, KT128 and KT256 in
//! rfc9861.json, SP 800-185's cSHAKE and ParallelHash in sp800-185.json),
//! on the references of `treehash_reference` and on the CPU's kernels. If
//! you add a known-answer test or a vector file, it goes here (the GPU's
//! are in gpu.rs and gpu_device.rs, the vectors split into parts in
//! parts.rs).

mod common;

use common::vectors::{StandardFile, rfc9861, sp800_185};
use common::{known_answers, reference_digest};
use treehash::{Hasher, HasherOptions, Params};

/// The reference holds every leaf in memory and hashes each one: for the
/// wide-tree vectors (L = 2^24 leaves) that is minutes and gigabytes, so it
/// checks only the vectors with at most this many leaves. The engines
/// check every vector, the wide ones included.
const REFERENCE_MAX_LEAVES: u64 = 1 << 20;

/// Every known answer on the references: those of the functions treehash
/// computes through `common::reference_digest` (the LI tree up to a
/// million leaves, OpenSSL's plain digests as H = 0 trees, TurboSHAKE, KT
/// and ParallelHash), and the others (cSHAKE alone, ParallelHashXOF)
/// through the reference function the case names.
#[test]
fn the_references_reproduce_every_vector() {
    let mut li_checked = 0;
    let answers = known_answers();
    for answer in &answers {
        if let Params::Tree(p) = &answer.params
            && p.leaf_count() > REFERENCE_MAX_LEAVES
        {
            eprintln!(
                "reference: not run on {} with {} leaves (too slow for the literal spec)",
                p.label(),
                p.leaf_count()
            );
            continue;
        }
        let got = reference_digest(&answer.params, &answer.message);
        assert_eq!(
            hex::encode(&got[answer.skip..]),
            answer.output,
            "{}",
            answer.what
        );
        li_checked += usize::from(answer.what.starts_with("li-v1.json"));
    }
    assert!(li_checked >= 50, "only {li_checked} LI vectors checked");
    let mut others = 0;
    for file in [rfc9861(), sp800_185()] {
        for group in &file.groups {
            for case in &group.cases {
                if case.params(&group.function).is_some() {
                    continue; // among the known answers above
                }
                assert_eq!(
                    hex::encode(case.reference(&group.function)),
                    case.output,
                    "{}: {case:?} (source: {})",
                    group.function,
                    group.source
                );
                others += 1;
            }
        }
    }
    // cSHAKE128/256 and ParallelHashXOF128/256 (the file counts are
    // checked below).
    assert!(others > 0);
}

/// How many cases of `function` a file holds from its standard (not generated).
fn from_the_standard(file: &StandardFile, function: &str) -> usize {
    file.groups
        .iter()
        .filter(|g| g.function == function && g.generated_by.is_none())
        .map(|g| g.cases.len())
        .sum()
}

/// The standards' files keep every answer of their standards.
#[test]
fn the_vector_files_keep_their_standards_answers() {
    let rfc = rfc9861();
    // RFC 9861 §5 has 16 TurboSHAKE128, 15 TurboSHAKE256, 18 KT128 and 18
    // KT256 vectors: the file must keep all of them.
    assert_eq!(from_the_standard(&rfc, "TurboSHAKE128"), 16);
    assert_eq!(from_the_standard(&rfc, "TurboSHAKE256"), 15);
    assert_eq!(from_the_standard(&rfc, "KT128"), 18);
    assert_eq!(from_the_standard(&rfc, "KT256"), 18);
    let generated: usize = rfc
        .groups
        .iter()
        .filter(|g| g.generated_by.is_some())
        .map(|g| g.cases.len())
        .sum();
    assert!(generated >= 100, "only {generated} pycryptodome vectors");
    let sp = sp800_185();
    // NIST's samples: cSHAKE #1–#4, ParallelHash #1–#6 and ParallelHashXOF #1–#6.
    assert!(from_the_standard(&sp, "cSHAKE128") >= 2);
    assert!(from_the_standard(&sp, "cSHAKE256") >= 2);
    assert!(from_the_standard(&sp, "ParallelHash128") >= 3);
    assert!(from_the_standard(&sp, "ParallelHash256") >= 3);
    assert!(from_the_standard(&sp, "ParallelHashXOF128") >= 3);
    assert!(from_the_standard(&sp, "ParallelHashXOF256") >= 3);
}

/// Every known answer that treehash computes, of either kind (the wide
/// LI trees included), on the default hasher and on every CPU path this
/// build tests in pieces of several sizes, from memory (with the byte
/// count); and on the default hasher as a sequential input.
#[test]
fn every_cpu_path_reproduces_every_vector() {
    let mut hashers = vec![Hasher::new(HasherOptions::default()).unwrap()];
    hashers.extend(common::cpu_hashers_of_every_path(&[
        None,
        Some(8192),
        Some(16384),
    ]));
    let answers = known_answers();
    for answer in &answers {
        let what = &answer.what;
        for hasher in &hashers {
            let out = hasher.hash_bytes(&answer.params, &answer.message).unwrap();
            assert_eq!(
                hex::encode(&out.digest[answer.skip..]),
                answer.output,
                "{what}"
            );
            assert_eq!(out.bytes, answer.message.len() as u64, "{what}");
        }
        let out = hashers[0]
            .hash_reader(&answer.params, &mut &answer.message[..])
            .unwrap();
        let got = hex::encode(&out.digest[answer.skip..]);
        assert_eq!(got, answer.output, "{what}, as a sequential input");
    }
    let standard = answers
        .iter()
        .filter(|a| matches!(a.params, Params::Standard(_)))
        .count();
    assert!(
        standard >= 200,
        "only {standard} vectors reached the engines"
    );
}
