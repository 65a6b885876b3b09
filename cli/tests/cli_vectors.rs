//! Known answers through the command line: every vector of
//! tests/vectors/rfc9861.json (RFC 9861 Section 5, and pycryptodome's
//! further KT128 and TurboSHAKE cases), hashed by `treehash` with the
//! customization string given by `--customization-file` (RFC 9861's
//! C = ptn(41³) is 68921 bytes, 137842 hex digits: longer than Linux lets
//! one argument be) and the domain byte by `--domain`. The library's own
//! known-answer tests are tests/vectors.rs; if you add a test of a vector
//! file through the tool, it goes here.

mod common;

use std::fs;

use common::cli::treehash;
use serde_json::Value;

/// A byte string as the vector file writes it: `{"hex": …}` or
/// `{"ptn": n}` (RFC 9861 §5: byte k of ptn(n) is k mod 251).
fn bytes(value: &Value) -> Vec<u8> {
    if let Some(hex_text) = value["hex"].as_str() {
        return hex::decode(hex_text).unwrap();
    }
    let n = value["ptn"].as_u64().expect("hex or ptn") as usize;
    (0..n).map(|k| (k % 251) as u8).collect()
}

#[test]
fn customization_file_reproduces_every_rfc_9861_vector() {
    let file: Value =
        serde_json::from_str(include_str!("../../tests/vectors/rfc9861.json")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (message, customization) = (dir.path().join("M"), dir.path().join("C"));
    let mut checked = 0;
    let mut longest_c = 0;
    for group in file["groups"].as_array().unwrap() {
        let function = group["function"].as_str().unwrap();
        for case in group["cases"].as_array().unwrap() {
            fs::write(&message, bytes(&case["message"])).unwrap();
            let len = case["output_len"].as_u64().unwrap().to_string();
            let mut cmd = treehash();
            cmd.args(["--no-names", "-a", &function.to_lowercase(), "-l", &len]);
            if let Some(c) = case.get("customization") {
                let c = bytes(c);
                longest_c = longest_c.max(c.len());
                fs::write(&customization, c).unwrap();
                cmd.arg("--customization-file").arg(&customization);
            }
            if let Some(d) = case["domain"].as_str() {
                cmd.args(["--domain", d]);
            }
            let out = cmd.arg(&message).output().unwrap();
            let what = format!("{function} {}", case["as_in_source"]);
            assert!(out.status.success(), "{what}: {out:?}");
            let digest = String::from_utf8(out.stdout).unwrap();
            let skip = case["skip"].as_u64().unwrap_or(0) as usize;
            assert_eq!(
                &digest.trim_end()[2 * skip..],
                case["output"].as_str().unwrap(),
                "{what}"
            );
            checked += 1;
        }
    }
    // RFC 9861's 67 vectors and pycryptodome's 162.
    assert_eq!(checked, 67 + 162);
    assert_eq!(longest_c, 41 * 41 * 41);
}

/// `--customization-file -` reads C from standard input; the longest C of
/// RFC 9861, with its vector: KT128(`FF`×7, C = ptn(41³), 32).
#[test]
fn customization_file_reads_standard_input() {
    let c: Vec<u8> = (0..41 * 41 * 41).map(|k| (k % 251) as u8).collect();
    let dir = tempfile::tempdir().unwrap();
    let message = dir.path().join("M");
    fs::write(&message, [0xff; 7]).unwrap();
    let out = treehash()
        .args(["--no-names", "-a", "kt128", "--customization-file", "-"])
        .arg(&message)
        .write_stdin(c.clone())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "75d2f86a2e644566726b4fbcfc5657b9dbcf070c7b0dca06450ab291d7443bcf\n"
    );
    // Standard input holds C or the input, not both.
    treehash()
        .args(["-a", "kt128", "--customization-file", "-", "-"])
        .write_stdin(c)
        .assert()
        .code(2)
        .stderr(
            "treehash: --customization-file -: this is standard input, which an input is \
             read from too; give the customization string in another file\n",
        );
    // At most 256 KiB, and only for the functions that take one.
    let long = dir.path().join("long");
    fs::write(&long, vec![b'x'; (256 << 10) + 1]).unwrap();
    treehash()
        .args(["-a", "kt256", "--customization-file"])
        .arg(&long)
        .arg(&message)
        .assert()
        .code(2)
        .stderr(format!(
            "treehash: --customization-file {}: longer than 262144 bytes (a customization \
             string is at most 262144)\n",
            long.display()
        ));
    treehash()
        .args(["-a", "turboshake128", "--customization-file"])
        .arg(&message)
        .arg(&message)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "turboshake128 takes no customization string",
        ));
    // --prefix-file - and --customization-file - cannot both be read.
    treehash()
        .args(["--prefix-file", "-", "--customization-file", "-"])
        .arg(&message)
        .assert()
        .code(2);
}
