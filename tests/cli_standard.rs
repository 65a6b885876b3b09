//! The real binary with the standard functions: their names, options and
//! refusals, tagged lines that `-c` checks with nothing else given, JSON,
//! standard input, and `--verify` against the reference. If you add a
//! test of the tool with KT, ParallelHash or TurboSHAKE, it goes here.

mod common;

use std::fs;

use common::cli::treehash;
use predicates::prelude::*;
use treehash::standard::{Standard, StandardParams};
use treehash::{Params, StandardLabel};

fn hex_of(params: StandardParams, message: &[u8]) -> String {
    hex::encode(common::reference_digest(&Params::Standard(params), message))
}

#[test]
fn every_standard_function_by_name_gives_the_reference_digest() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m");
    let message = common::spec_input(40_000);
    fs::write(&file, &message).unwrap();
    for standard in Standard::ALL {
        let want = hex_of(StandardParams::new(standard), &message);
        treehash()
            .args(["-a", standard.name(), "--no-names"])
            .arg(&file)
            .assert()
            .success()
            .stdout(format!("{want}\n"));
        // Standard input, and the name as the standards write it.
        treehash()
            .args(["-a", standard.standard_name(), "--no-names"])
            .write_stdin(message.clone())
            .assert()
            .success()
            .stdout(format!("{want}\n"));
    }
}

#[test]
fn options_reach_the_function() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m");
    let message = common::spec_input(20_000);
    fs::write(&file, &message).unwrap();
    let cases: [(&[&str], StandardParams); 5] = [
        (
            &["-a", "kt128", "--customization", "abc", "-l", "50"],
            StandardParams::new(Standard::Kt128)
                .with_customization(b"abc".to_vec())
                .and_then(|p| p.with_output_len(50))
                .unwrap(),
        ),
        (
            &["-a", "kt256", "--customization-hex", "00ff"],
            StandardParams::new(Standard::Kt256)
                .with_customization(vec![0, 0xff])
                .unwrap(),
        ),
        (
            &[
                "-a",
                "parallelhash128",
                "-B",
                "12",
                "--customization",
                "Parallel Data",
            ],
            StandardParams::new(Standard::ParallelHash128)
                .with_block_size(12)
                .and_then(|p| p.with_customization(b"Parallel Data".to_vec()))
                .unwrap(),
        ),
        (
            &["-a", "parallelhash256", "-l", "20"],
            StandardParams::new(Standard::ParallelHash256)
                .with_output_len(20)
                .unwrap(),
        ),
        (
            &["-a", "turboshake128", "--domain", "0x06"],
            StandardParams::new(Standard::TurboShake128)
                .with_domain(6)
                .unwrap(),
        ),
    ];
    for (args, params) in cases {
        let label = params.label();
        let want = hex_of(params, &message);
        treehash()
            .args(args)
            .arg("--tag")
            .arg(&file)
            .assert()
            .success()
            .stdout(format!("{label} ({}) = {want}\n", file.display()));
    }
}

/// Tagged lines carry every parameter: `-c` checks a list of every function
/// with no option given, and a wrong digest or a changed file fails.
#[test]
fn tagged_lines_are_checked_with_nothing_else_given() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m");
    fs::write(&file, common::spec_input(70_000)).unwrap();
    let mut list = String::new();
    for args in [
        &["-a", "kt128"][..],
        &["-a", "kt256", "--customization", "x"],
        &["-a", "parallelhash128", "-B", "100", "-l", "40"],
        &["-a", "parallelhash256"],
        &["-a", "turboshake256", "--domain", "7f", "-l", "3"],
        &["-a", "sha3-512", "-H", "3"],
    ] {
        let out = treehash()
            .args(args)
            .arg("--tag")
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        list.push_str(&String::from_utf8(out.stdout).unwrap());
    }
    let sums = dir.path().join("SUMS");
    fs::write(&sums, &list).unwrap();
    let ok = format!("{}: OK\n", file.display()).repeat(6);
    treehash()
        .arg("-c")
        .arg(&sums)
        .assert()
        .success()
        .stdout(ok);
    // The labels read back to the same parameters.
    for line in list.lines() {
        let label = line.split(" (").next().unwrap();
        assert_eq!(label.parse::<treehash::Label>().unwrap().to_string(), label);
    }
    let first_label: StandardLabel = list.split(" (").next().unwrap().parse().unwrap();
    assert_eq!(first_label.standard, Standard::Kt128);
    fs::write(&file, common::spec_input(70_001)).unwrap();
    treehash()
        .arg("-c")
        .arg(&sums)
        .assert()
        .code(1)
        .stdout(format!("{}: FAILED\n", file.display()).repeat(6));
}

#[test]
fn tree_options_are_refused_with_the_reason() {
    let refusals: [(&[&str], &str); 9] = [
        (
            &["-a", "kt128", "-H", "2"],
            "-H/--height does not apply to kt128: its tree is fixed by RFC 9861",
        ),
        (
            &["-a", "parallelhash256", "-D", "4"],
            "-D/--degree does not apply to parallelhash256: its tree is fixed by NIST SP 800-185",
        ),
        (
            &["-a", "kt256", "--prefix-hex", "00"],
            "a prefix (--prefix-hex, --prefix-file) does not apply to kt256",
        ),
        (
            &["-a", "kt128", "-B", "4096"],
            "-B/--block-size (its chunks are 8192 bytes) does not apply to kt128",
        ),
        (
            &["-a", "turboshake128", "-B", "8"],
            "-B/--block-size does not apply to turboshake128",
        ),
        (
            &["-a", "kt128", "--domain", "1f"],
            "kt128 takes no domain byte",
        ),
        (
            &["-a", "turboshake128", "--customization", "x"],
            "turboshake128 takes no customization string",
        ),
        (
            &["-a", "sha3-256", "--customization", "x"],
            "--customization is for the standard functions",
        ),
        (
            &["-a", "turboshake128", "--domain", "80"],
            "domain byte 0x80 is out of range for TurboSHAKE (0x01 to 0x7f)",
        ),
    ];
    for (args, message) in refusals {
        treehash()
            .args(args)
            .arg("/dev/null")
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(message));
    }
}

#[test]
fn json_and_verify_describe_the_function() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m");
    let message = common::spec_input(9000);
    fs::write(&file, &message).unwrap();
    let out = treehash()
        .args([
            "-a",
            "parallelhash128",
            "-B",
            "77",
            "--customization",
            "S",
            "--json",
        ])
        .arg(&file)
        .output()
        .unwrap();
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let params = StandardParams::new(Standard::ParallelHash128)
        .with_block_size(77)
        .and_then(|p| p.with_customization(b"S".to_vec()))
        .unwrap();
    assert_eq!(record["algorithm"], "parallelhash128");
    assert_eq!(record["label"], "ParallelHash128(B=77,S=53)");
    assert_eq!(record["block_size"], 77);
    assert_eq!(record["customization_hex"], "53");
    assert_eq!(record["digest"], hex_of(params, &message));
    assert!(record.get("height").is_none());
    for standard in Standard::ALL {
        treehash()
            .args(["-a", standard.name(), "--verify"])
            .arg(&file)
            .assert()
            .success()
            .stderr(predicate::str::contains("PASS"));
    }
}
