//! Every known answer of tests/vectors/rfc9861.json (TurboSHAKE, KT128,
//! KT256) and tests/vectors/sp800-185.json (cSHAKE, ParallelHash) on the
//! references of `treehash::reference`.

mod common;

use serde::Deserialize;
use treehash::reference::cshake::{cshake128, cshake256};
use treehash::reference::kangaroo::{kt128, kt256};
use treehash::reference::parallel_hash::{
    parallel_hash_xof128, parallel_hash_xof256, parallel_hash128, parallel_hash256,
};
use treehash::reference::turboshake::{turboshake128, turboshake256};

/// A byte string as the vector files write it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum Bytes {
    Hex(String),
    Ascii(String),
    /// RFC 9861's ptn(n).
    Ptn(usize),
}

impl Bytes {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Bytes::Hex(h) => hex::decode(h).expect("hex in a vector file"),
            Bytes::Ascii(s) => s.as_bytes().to_vec(),
            Bytes::Ptn(n) => ptn(*n),
        }
    }
}

/// ptn(n), RFC 9861 §5: `00 01 .. FA` repeated and truncated to n bytes, which
/// is the LI vectors' test input (byte k is k mod 251).
fn ptn(n: usize) -> Vec<u8> {
    common::spec_input(n)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// How the source writes this case, to find it there.
    #[allow(dead_code)]
    as_in_source: Option<String>,
    message: Bytes,
    /// C of KT, S of cSHAKE and ParallelHash.
    customization: Option<Bytes>,
    /// N of cSHAKE.
    function_name: Option<Bytes>,
    /// D of TurboSHAKE, in hex.
    domain: Option<String>,
    /// B of ParallelHash, in bytes.
    block_size: Option<usize>,
    /// L in bytes.
    output_len: usize,
    /// `output` is bytes `skip..output_len` of the output.
    #[serde(default)]
    skip: usize,
    output: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Group {
    function: String,
    source: String,
    generated_by: Option<String>,
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
struct VectorFile {
    source: String,
    groups: Vec<Group>,
}

fn load(text: &str) -> VectorFile {
    let file: VectorFile = serde_json::from_str(text).expect("vector file parses");
    assert!(!file.source.is_empty());
    for group in &file.groups {
        assert!(!group.source.is_empty(), "{} has no source", group.function);
    }
    file
}

/// The reference's answer for one case, `skip` bytes dropped.
fn compute(function: &str, case: &Case) -> Vec<u8> {
    let m = case.message.bytes();
    let l = case.output_len;
    let c = || case.customization.as_ref().map_or(Vec::new(), Bytes::bytes);
    let n = || case.function_name.as_ref().map_or(Vec::new(), Bytes::bytes);
    let d = || {
        let text = case.domain.as_deref().expect("TurboSHAKE needs a domain");
        u8::from_str_radix(text, 16).expect("hex domain byte")
    };
    let b = || case.block_size.expect("ParallelHash needs a block size");
    let out = match function {
        "TurboSHAKE128" => turboshake128(&m, d(), l),
        "TurboSHAKE256" => turboshake256(&m, d(), l),
        "KT128" => kt128(&m, &c(), l),
        "KT256" => kt256(&m, &c(), l),
        "cSHAKE128" => cshake128(&m, l, &n(), &c()),
        "cSHAKE256" => cshake256(&m, l, &n(), &c()),
        "ParallelHash128" => parallel_hash128(&m, b(), l, &c()),
        "ParallelHash256" => parallel_hash256(&m, b(), l, &c()),
        "ParallelHashXOF128" => parallel_hash_xof128(&m, b(), l, &c()),
        "ParallelHashXOF256" => parallel_hash_xof256(&m, b(), l, &c()),
        other => panic!("no reference for {other}"),
    };
    assert_eq!(out.len(), l, "{function} gave the wrong length");
    out[case.skip..].to_vec()
}

/// Checks every case; returns how many were checked per group.
fn check_all(file: &VectorFile) -> Vec<(String, bool, usize)> {
    let mut counts = Vec::new();
    for group in &file.groups {
        for case in &group.cases {
            assert_eq!(
                hex::encode(compute(&group.function, case)),
                case.output,
                "{}: {case:?} (source: {})",
                group.function,
                group.source
            );
        }
        counts.push((
            group.function.clone(),
            group.generated_by.is_some(),
            group.cases.len(),
        ));
    }
    counts
}

/// How many cases of `function` a file holds from its standard (not generated).
fn from_the_standard(counts: &[(String, bool, usize)], function: &str) -> usize {
    counts
        .iter()
        .filter(|(f, generated, _)| f == function && !generated)
        .map(|(_, _, n)| n)
        .sum()
}

#[test]
fn references_reproduce_every_rfc_9861_vector() {
    let counts = check_all(&load(include_str!("vectors/rfc9861.json")));
    // RFC 9861 §5 has 16 TurboSHAKE128, 15 TurboSHAKE256, 18 KT128 and 18
    // KT256 vectors: the file must keep all of them.
    assert_eq!(from_the_standard(&counts, "TurboSHAKE128"), 16);
    assert_eq!(from_the_standard(&counts, "TurboSHAKE256"), 15);
    assert_eq!(from_the_standard(&counts, "KT128"), 18);
    assert_eq!(from_the_standard(&counts, "KT256"), 18);
    let generated: usize = counts.iter().filter(|c| c.1).map(|c| c.2).sum();
    assert!(generated >= 100, "only {generated} pycryptodome vectors");
}

#[test]
fn references_reproduce_every_sp_800_185_vector() {
    let counts = check_all(&load(include_str!("vectors/sp800-185.json")));
    // NIST's samples: cSHAKE #1–#4, ParallelHash #1–#6 and ParallelHashXOF #1–#6.
    assert!(from_the_standard(&counts, "cSHAKE128") >= 2);
    assert!(from_the_standard(&counts, "cSHAKE256") >= 2);
    assert!(from_the_standard(&counts, "ParallelHash128") >= 3);
    assert!(from_the_standard(&counts, "ParallelHash256") >= 3);
    assert!(from_the_standard(&counts, "ParallelHashXOF128") >= 3);
    assert!(from_the_standard(&counts, "ParallelHashXOF256") >= 3);
}

/// The standard function and parameters a case describes, where treehash
/// computes it (not cSHAKE alone, not the XOF variants).
fn engine_params(function: &str, case: &Case) -> Option<treehash::StandardParams> {
    use treehash::standard::Standard;
    let standard = Standard::from_name(function)?;
    let mut params = treehash::StandardParams::new(standard)
        .with_output_len(case.output_len)
        .unwrap();
    if let Some(c) = &case.customization {
        params = params.with_customization(c.bytes()).unwrap();
    }
    if let Some(d) = &case.domain {
        params = params
            .with_domain(u8::from_str_radix(d, 16).unwrap())
            .unwrap();
    }
    if let Some(b) = case.block_size {
        params = params.with_block_size(b).unwrap();
    }
    Some(params)
}

/// Every vector of both files that treehash's engines compute, on every CPU
/// path this build tests and in pieces of several sizes, from memory.
#[test]
fn every_cpu_path_reproduces_the_standards_vectors() {
    let mut checked = 0;
    for file in [
        load(include_str!("vectors/rfc9861.json")),
        load(include_str!("vectors/sp800-185.json")),
    ] {
        for group in &file.groups {
            for case in &group.cases {
                let Some(params) = engine_params(&group.function, case) else {
                    continue;
                };
                let message = case.message.bytes();
                for hasher in common::cpu_hashers_of_every_path(&[None, Some(8192), Some(16384)]) {
                    let out = hasher.hash_bytes(&params, &message).unwrap();
                    assert_eq!(
                        hex::encode(&out.digest[case.skip..]),
                        case.output,
                        "{}: {case:?}",
                        group.function
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 200, "only {checked} vectors reached the engines");
}
