//! `treehash FILE...`, hashing, with functions of both kinds (LI trees and
//! the standard functions, KT, ParallelHash and TurboSHAKE): what it prints
//! in each output form (hex lines, --tag, --json, --raw, -z), the function
//! names and the parameters that reach the digest, prefixes (keys and
//! salts), --timings, the backends, and the errors, bounds and exit codes
//! of hashing. If you add a test of what hashing prints or of how it
//! refuses, it goes here. Check mode (`-c`) is in cli_check.rs, `bench` and
//! `--verify` in cli_bench.rs, `--help`, man pages and completions in
//! cli_generate.rs, standard input and output and inputs that shrink in
//! cli_io.rs; lists hashed side by side in cli_list.rs, `part` and `join`
//! in cli_parts.rs, the files the tool writes in cli_output.rs, limits
//! on threads in thread_limits.rs, and the vector files through the tool
//! (`--customization-file`) in cli_vectors.rs.

mod common;

use std::fs;
use std::path::Path;

use common::cli::{BIN, bench, binary, check_file, digest_hex, fixture, stdout_of, treehash};
use common::reference_tree;
use predicates::prelude::*;
use sha3::Digest;
use treehash::standard::{Standard, StandardParams};
use treehash::{Algorithm, Params, TreeParams};

/// The reference digest of `message` under `params`, in hex.
fn hex_of(params: &Params, message: &[u8]) -> String {
    hex::encode(common::reference_digest(params, message))
}

// ---- output forms and parameters

#[test]
fn default_output_is_hex_two_spaces_name_with_spec_defaults() {
    let (_dir, a, b) = fixture();
    let params = TreeParams::default();
    let out = stdout_of(treehash().arg(&a).arg(&b));
    let want = format!(
        "{}  {}\n{}  {}\n",
        digest_hex(&params, &a),
        a.display(),
        digest_hex(&params, &b),
        b.display()
    );
    assert_eq!(out, want);
}

/// Every function of both kinds by name, with its defaults: the
/// reference's digest, of a file named by `-a` as treehash writes it, and
/// of standard input named as the standards write it (in capitals).
#[test]
fn every_function_by_name_gives_the_reference_digest() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m");
    let message = common::spec_input(40_000);
    fs::write(&file, &message).unwrap();
    let mut functions: Vec<(String, String, Params)> = Algorithm::ALL
        .into_iter()
        .map(|a| {
            // The spec's defaults: H = 8, D = 4.
            let params = TreeParams::new(a, 8, 4).unwrap().into();
            (a.to_string(), a.to_string().to_uppercase(), params)
        })
        .collect();
    for standard in Standard::ALL {
        let params = StandardParams::new(standard).into();
        let (name, standard_name) = (standard.name(), standard.standard_name());
        functions.push((name.to_string(), standard_name.to_string(), params));
    }
    for (name, standard_name, params) in functions {
        let want = hex_of(&params, &message);
        treehash()
            .args(["-a", &name, "--no-names"])
            .arg(&file)
            .assert()
            .success()
            .stdout(format!("{want}\n"));
        treehash()
            .args(["-a", &standard_name, "--no-names"])
            .write_stdin(message.clone())
            .assert()
            .success()
            .stdout(format!("{want}\n"));
    }
}

/// Each option of both kinds on the command line reaches the digest: an
/// LI tree's function, H, D, B, length and prefix; KT's C (as text and in
/// hex) and length, ParallelHash's B, S and length, TurboSHAKE's D. The
/// reference's digest, bare (`--no-names`) and tagged with the label.
#[test]
fn options_on_the_command_line_reach_the_digest() {
    let (_dir, a, _) = fixture();
    let message = fs::read(&a).unwrap();
    let cases: [(&[&str], Params); 6] = [
        (
            &[
                "-a",
                "shake256",
                "-H",
                "3",
                "-D",
                "5",
                "-B",
                "64",
                "-l",
                "100",
                "--prefix-hex",
                "abcd",
            ],
            TreeParams::with_options(
                Algorithm::Shake256,
                3,
                5,
                Some(64),
                vec![0xab, 0xcd],
                Some(100),
            )
            .unwrap()
            .into(),
        ),
        (
            &["-a", "kt128", "--customization", "abc", "-l", "50"],
            StandardParams::new(Standard::Kt128)
                .with_customization(b"abc".to_vec())
                .and_then(|p| p.with_output_len(50))
                .unwrap()
                .into(),
        ),
        (
            &["-a", "kt256", "--customization-hex", "00ff"],
            StandardParams::new(Standard::Kt256)
                .with_customization(vec![0, 0xff])
                .unwrap()
                .into(),
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
                .unwrap()
                .into(),
        ),
        (
            &["-a", "parallelhash256", "-l", "20"],
            StandardParams::new(Standard::ParallelHash256)
                .with_output_len(20)
                .unwrap()
                .into(),
        ),
        (
            &["-a", "turboshake128", "--domain", "0x06"],
            StandardParams::new(Standard::TurboShake128)
                .with_domain(6)
                .unwrap()
                .into(),
        ),
    ];
    for (args, params) in cases {
        let want = hex_of(&params, &message);
        let out = stdout_of(treehash().args(args).arg("--no-names").arg(&a));
        assert_eq!(out, format!("{want}\n"), "{args:?}");
        let out = stdout_of(treehash().args(args).arg("--tag").arg(&a));
        let label = params.label();
        assert_eq!(
            out,
            format!("{label} ({}) = {want}\n", a.display()),
            "{args:?}"
        );
    }
}

#[test]
fn height_zero_tagged_line_reads_like_plain_sha3() {
    let (_dir, a, _) = fixture();
    let out = stdout_of(treehash().args(["--tag", "-H", "0"]).arg(&a));
    let plain = hex::encode(sha3::Sha3_256::digest(fs::read(&a).unwrap()));
    assert_eq!(out, format!("SHA3-256 ({}) = {plain}\n", a.display()));
}

#[test]
fn tagged_lines_carry_the_parameters() {
    let (_dir, a, _) = fixture();
    let out = stdout_of(treehash().args(["--tag", "-H", "2", "-D", "3"]).arg(&a));
    let params = TreeParams::new(Algorithm::Sha3_256, 2, 3).unwrap();
    let want = format!(
        "SHA3-256-LI(H=2,D=3,B=136) ({}) = {}\n",
        a.display(),
        digest_hex(&params, &a)
    );
    assert_eq!(out, want);
}

/// `--json`, one record a line, for each kind: the fields every record
/// has (the name, the digest, the bytes, the backend, the time, the key
/// flag, the length), and those of the function's parameters, none of the
/// other kind's.
#[test]
fn json_has_the_documented_fields() {
    let (_dir, a, b) = fixture();
    let ph = StandardParams::new(Standard::ParallelHash128)
        .with_block_size(77)
        .and_then(|p| p.with_customization(b"S".to_vec()))
        .unwrap();
    let cases: [(&[&str], Params, serde_json::Value, &[&str]); 2] = [
        (
            &["-H", "3"],
            TreeParams::new(Algorithm::Sha3_256, 3, 4).unwrap().into(),
            serde_json::json!({
                "label": "SHA3-256-LI(H=3,D=4,B=136)",
                "algorithm": "sha3-256",
                "height": 3,
                "degree": 4,
                "block_size": 136,
                "leaves": 64,
            }),
            &["customization_hex"],
        ),
        (
            &["-a", "parallelhash128", "-B", "77", "--customization", "S"],
            ph.into(),
            serde_json::json!({
                "label": "ParallelHash128(B=77,S=53)",
                "algorithm": "parallelhash128",
                "block_size": 77,
                "customization_hex": "53",
            }),
            &["height", "degree", "leaves"],
        ),
    ];
    for (args, params, fields, absent) in cases {
        let out = stdout_of(treehash().arg("--json").args(args).arg(&a).arg(&b));
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        let first = &lines[0];
        assert_eq!(first["name"], a.to_str().unwrap());
        assert_eq!(first["keyed"], false);
        assert_eq!(first["output_len"], 32);
        assert_eq!(first["digest"], hex_of(&params, &fs::read(&a).unwrap()));
        assert_eq!(first["bytes"], 100_003);
        assert_eq!(first["backend"], "cpu");
        assert!(first["seconds"].as_f64().unwrap() >= 0.0);
        for (field, value) in fields.as_object().unwrap() {
            assert_eq!(&first[field], value, "{args:?}: {field}");
        }
        for field in absent {
            assert!(first.get(field).is_none(), "{args:?}: {field}");
        }
    }
}

#[test]
fn json_gives_the_exact_bytes_of_a_name_that_is_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let (dir, a, _) = fixture();
    let odd = dir.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    fs::copy(&a, &odd).unwrap();
    let out = stdout_of(treehash().arg("--json").arg(&odd).arg(&a));
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let odd_bytes = odd.as_os_str().as_bytes();
    assert_eq!(lines[0]["name_hex"], hex::encode(odd_bytes));
    assert_eq!(
        lines[0]["name"],
        String::from_utf8_lossy(odd_bytes).as_ref()
    );
    assert!(lines[0]["name"].as_str().unwrap().ends_with("caf\u{fffd}"));
    assert_eq!(lines[0]["digest"], lines[1]["digest"]);
    // A UTF-8 name has no name_hex.
    assert!(lines[1].get("name_hex").is_none(), "{}", lines[1]);
}

/// `--json` writes a record for an input that got no digest too, in its
/// place among the others (standard output; the reason also on standard
/// error), so that a script reading standard output sees every input.
#[test]
fn json_writes_a_record_with_its_error_for_a_failing_input() {
    let (dir, a, _) = fixture();
    let missing = dir.path().join("missing");
    let out = treehash()
        .args(["--json", "-H", "0"])
        .arg(&missing)
        .arg(&a)
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[0],
        serde_json::json!({
            "name": missing.to_str().unwrap(),
            "label": "SHA3-256",
            "algorithm": "sha3-256",
            "keyed": false,
            "output_len": 32,
            "digest": null,
            "error": "No such file or directory",
        })
    );
    assert_eq!(lines[1]["name"], a.to_str().unwrap());
    assert!(lines[1]["digest"].is_string());
    assert_eq!(lines[2]["name"], dir.path().to_str().unwrap());
    assert_eq!(lines[2]["digest"], serde_json::Value::Null);
    assert!(lines[2]["error"].as_str().unwrap().contains("directory"));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with(&format!("treehash: {}: No such file", missing.display())));
}

#[test]
fn raw_writes_the_digest_bytes_and_takes_one_input() {
    let (_dir, a, b) = fixture();
    let out = treehash().arg("--raw").arg(&a).output().unwrap();
    assert!(out.status.success());
    let params = TreeParams::default();
    assert_eq!(
        out.stdout,
        treehash_reference::tree_hash(&reference_tree(&params), &fs::read(&a).unwrap())
    );
    treehash()
        .arg("--raw")
        .arg(&a)
        .arg(&b)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--raw takes exactly one input"));
}

#[test]
fn awkward_names_are_escaped_like_coreutils() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new\nline\\x");
    fs::write(&path, b"abc").unwrap();
    let out = stdout_of(treehash().args(["-H", "0"]).arg(&path));
    let escaped = path
        .display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('\n', "\\n");
    assert_eq!(
        out,
        format!("\\3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532  {escaped}\n")
    );
    // And check mode reads the escaped name back.
    let sums = dir.path().join("sums");
    fs::write(&sums, &out).unwrap();
    treehash()
        .args(["-H", "0", "-c"])
        .arg(&sums)
        .assert()
        .success()
        .stdout(predicate::str::ends_with(": OK\n"));
}

#[test]
fn empty_files_hash_like_empty_input() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    fs::write(&empty, b"").unwrap();
    let out = stdout_of(treehash().args(["-H", "0", "--no-names"]).arg(&empty));
    assert_eq!(
        out,
        "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a\n"
    );
}

// ---- -z / --zero

#[test]
fn zero_ends_lines_with_nul_and_leaves_names_unescaped() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("new\nline\\x\r");
    let plain = dir.path().join("plain");
    fs::write(&odd, b"abc").unwrap();
    fs::write(&plain, b"abc").unwrap();
    let abc = "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532";
    let name = |p: &Path| p.to_str().unwrap().to_string();
    let out = stdout_of(treehash().args(["-z", "-H", "0"]).arg(&odd).arg(&plain));
    assert_eq!(
        out,
        format!("{abc}  {}\0{abc}  {}\0", name(&odd), name(&plain))
    );
    let tagged = stdout_of(treehash().args(["--zero", "--tag", "-H", "0"]).arg(&odd));
    assert_eq!(tagged, format!("SHA3-256 ({}) = {abc}\0", name(&odd)));
    let bare = stdout_of(treehash().args(["-z", "--no-names", "-H", "0"]).arg(&odd));
    assert_eq!(bare, format!("{abc}\0"));

    // Check mode reads NUL-ended lines and answers in kind.
    let list = check_file(dir.path(), &(out.clone() + &tagged));
    treehash()
        .args(["-z", "-H", "0", "-c"])
        .arg(&list)
        .assert()
        .success()
        .stdout(format!(
            "{}: OK\0{}: OK\0{}: OK\0",
            name(&odd),
            name(&plain),
            name(&odd)
        ));
    fs::write(&plain, b"abd").unwrap();
    treehash()
        .args(["-z", "-H", "0", "-c"])
        .arg(&list)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "{}: FAILED\0",
            name(&plain)
        )));
    // Without -z the NULs and newlines cut the lines elsewhere.
    treehash()
        .args(["-H", "0", "-c"])
        .arg(&list)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("improperly formatted"));
    treehash()
        .args(["-z", "--raw"])
        .arg(&plain)
        .assert()
        .code(2);
}

// ---- prefixes (keys and salts)

#[test]
fn a_short_keyed_digest_is_made_with_a_warning() {
    let (_dir, a, _) = fixture();
    treehash()
        .args([
            "--prefix-hex",
            "0011",
            "-a",
            "shake128",
            "-l",
            "8",
            "--no-names",
        ])
        .arg(&a)
        .assert()
        .success()
        .stdout(predicate::function(|s: &str| s.trim().len() == 16))
        .stderr(predicate::str::contains(
            "warning: a keyed digest of 8 bytes is shorter than the 16",
        ));
}

#[test]
fn a_prefix_is_never_printed() {
    let (dir, a, _) = fixture();
    let key = "00112233445566778899aabbccddeeff";
    for form in [&["--tag"][..], &["--json"], &[]] {
        let out = treehash()
            .args(["--prefix-hex", key])
            .args(form)
            .arg(&a)
            .output()
            .unwrap();
        let all = [out.stdout, out.stderr].concat();
        let text = String::from_utf8_lossy(&all);
        assert!(!text.contains(key), "{text}");
    }
    let bad = treehash()
        .args(["--prefix-hex", "secretzz"])
        .arg(&a)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&bad.stderr).contains("secret"));
    // A key in a file works the same as in hex.
    let keyfile = dir.path().join("key");
    fs::write(&keyfile, hex::decode(key).unwrap()).unwrap();
    let from_hex = stdout_of(treehash().args(["--prefix-hex", key, "--tag"]).arg(&a));
    let from_file = stdout_of(
        treehash()
            .arg("--prefix-file")
            .arg(&keyfile)
            .arg("--tag")
            .arg(&a),
    );
    assert_eq!(from_hex, from_file);
    assert!(from_hex.starts_with("SHA3-256-LI(H=8,D=4,B=136,P) ("));
}

#[test]
fn a_prefix_on_standard_input_is_refused_when_an_input_reads_it_too() {
    let (_dir, a, _) = fixture();
    let key = b"k";
    let keyed = |data: &[u8]| {
        let params =
            TreeParams::with_options(Algorithm::Sha3_256, 8, 4, None, key.to_vec(), None).unwrap();
        hex::encode(treehash_reference::tree_hash(
            &reference_tree(&params),
            data,
        ))
    };
    // The key from standard input, the data from a file: fine.
    for name in ["-", "/dev/stdin"] {
        let out = stdout_of(
            treehash()
                .args(["--no-names", "--prefix-file", name])
                .arg(&a)
                .write_stdin(key.as_slice()),
        );
        assert_eq!(out.trim(), keyed(&fs::read(&a).unwrap()), "{name}");
    }
    // Both from standard input: the key would take the data.
    for (name, inputs) in [
        ("-", &[][..]),
        ("/dev/stdin", &[][..]),
        ("/dev/stdin", &["-"][..]),
    ] {
        treehash()
            .args(["--prefix-file", name])
            .args(inputs)
            .write_stdin(b"kdata".as_slice())
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(format!(
                "--prefix-file {name}: this is standard input, which an input is read from too"
            )));
    }
}

#[test]
fn prefixes_are_read_within_bounds_and_refused_clearly() {
    let (dir, a, _) = fixture();
    let empty = dir.path().join("empty.key");
    fs::write(&empty, b"").unwrap();
    let long = dir.path().join("long.key");
    fs::write(&long, vec![7u8; 256]).unwrap();
    let longest = dir.path().join("longest.key");
    fs::write(&longest, vec![7u8; 255]).unwrap();
    let file_cases: [(&Path, &str); 3] = [
        (
            Path::new("/dev/zero"),
            "--prefix-file /dev/zero: longer than 255 bytes",
        ),
        (&long, "long.key: longer than 255 bytes"),
        (
            &empty,
            "empty.key: the file is empty; a key or salt needs at least one byte",
        ),
    ];
    for (path, message) in file_cases {
        for mode in [&[][..], &["-c"]] {
            treehash()
                .args(mode)
                .arg("--prefix-file")
                .arg(path)
                .arg(&a)
                .timeout(std::time::Duration::from_secs(20))
                .assert()
                .code(2)
                .stdout("")
                .stderr(predicate::str::contains(message));
        }
    }
    treehash()
        .arg("--prefix-file")
        .arg(&longest)
        .arg(&a)
        .assert()
        .success();
    let hex_cases = [
        ("secretzz", "--prefix-hex: the text is not hexadecimal"),
        ("0x1234", "--prefix-hex: the text is not hexadecimal"),
        ("abc", "--prefix-hex: an odd number of hex digits"),
        ("", "--prefix-hex: the prefix is empty"),
    ];
    for (text, message) in hex_cases {
        let out = treehash()
            .args(["--prefix-hex", text])
            .arg(&a)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{text}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains(message), "{stderr}");
        assert!(stderr.contains("(value not shown)"), "{stderr}");
        assert!(text.is_empty() || !stderr.contains(text), "{stderr}");
    }
}

// ---- errors, bounds and exit codes

#[test]
fn an_empty_name_is_one_more_missing_file() {
    let (_dir, a, _) = fixture();
    treehash()
        .arg(&a)
        .arg("")
        .assert()
        .code(1)
        .stdout(predicate::str::contains(a.to_str().unwrap()))
        .stderr("treehash: : No such file or directory\n");
}

#[test]
fn errors_name_the_input_and_the_others_are_still_hashed() {
    let (dir, a, _) = fixture();
    let missing = dir.path().join("missing");
    treehash()
        .arg(&missing)
        .arg(dir.path())
        .arg(&a)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(a.to_str().unwrap()))
        .stderr(predicate::str::contains(format!(
            "treehash: {}: No such file or directory",
            missing.display()
        )))
        .stderr(predicate::str::contains(format!(
            "treehash: {}: Is a directory",
            dir.path().display()
        )));
}

#[test]
fn unreadable_files_are_reported() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let locked = dir.path().join("locked.bin");
    fs::write(&locked, b"secret").unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let mut cmd = std::process::Command::new(BIN);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // Root reads any file (CI runs as root): run as nobody instead.
        cmd = std::process::Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(BIN);
    }
    let out = cmd
        .arg(&locked)
        .output()
        .expect("setpriv (util-linux) runs");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("treehash: {}: Permission denied\n", locked.display())
    );
}

/// Parameters out of range, and options that the function (of either
/// kind) does not take: exit 2 with the reason, before any input is read.
#[test]
fn invalid_parameters_exit_2_before_reading_anything() {
    let (_dir, a, _) = fixture();
    let cases: [(&[&str], &str); 17] = [
        (&["-D", "1"], "degree 1 is out of range"),
        (&["-H", "13"], "more than 2^24 leaves"),
        (&["-H", "4294967295", "-D", "2"], "more than 2^24 leaves"),
        (&["-B", "12"], "block size 12 is out of range"),
        (&["-B", "0"], "block size 0 is out of range"),
        (
            &["-l", "31"],
            "output length 31 is out of range for sha3-256",
        ),
        (
            &["-a", "shake128", "-l", "0"],
            "output length 0 is out of range",
        ),
        (&["-a", "md5"], "invalid value 'md5' for '--algorithm"),
        // Options of the other kind, each refused with the reason.
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
    for (args, message) in cases {
        treehash()
            .args(args)
            .arg(&a)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(message));
    }
    let long_prefix = "ab".repeat(256);
    treehash()
        .args(["--prefix-hex", &long_prefix])
        .arg(&a)
        .assert()
        .code(2)
        .stderr("treehash: --prefix-hex: 256 bytes; a prefix is at most 255 (value not shown)\n");
}

#[test]
fn threads_and_repeat_are_bounded_with_clear_messages() {
    let (_dir, a, _) = fixture();
    for (args, message) in [
        (&["--threads", "65535"][..], "65535 is not in 1..=1024"),
        (&["--threads", "0"], "0 is not in 1..=1024"),
    ] {
        treehash()
            .args(args)
            .arg(&a)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
    }
    treehash()
        .args(["--threads", "1024"])
        .arg(&a)
        .assert()
        .success();
    for (repeat, message) in [
        ("4000000000", "4000000000 is not in 1..=1000"),
        ("0", "0 is not in 1..=1000"),
    ] {
        bench()
            .args(["--repeat", repeat])
            .arg(&a)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
    }
}

#[test]
fn help_is_a_file_name_and_only_the_subcommands_are_reserved() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("help"), b"abc").unwrap();
    fs::write(dir.path().join("bench"), b"abc").unwrap();
    let abc = "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532";
    treehash()
        .current_dir(dir.path())
        .args(["-H", "0", "help", "./bench"])
        .assert()
        .success()
        .stdout(format!("{abc}  help\n{abc}  ./bench\n"));
    treehash()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Files named bench, part or join must be written ./bench, ./part, ./join",
        ));
}

// ---- --timings and the backends

#[test]
fn timings_print_the_phases_to_stderr() {
    let (dir, a, b) = fixture();
    treehash()
        .arg("--timings")
        .arg(&a)
        .assert()
        .success()
        .stderr(predicate::str::contains("leaf hashing"))
        .stderr(predicate::str::contains("tree reduction"))
        .stderr(predicate::str::contains("total"));
    // In check mode too, one block per file checked.
    let list = check_file(dir.path(), &stdout_of(treehash().arg(&a).arg(&b)));
    let out = treehash()
        .args(["-c", "--timings"])
        .arg(&list)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    for file in [&a, &b] {
        assert!(
            stderr.contains(&format!("timings for {}:\n", file.display())),
            "{stderr}"
        );
    }
    assert_eq!(stderr.matches("leaf hashing").count(), 2, "{stderr}");
}

/// `--piece-bytes` (hidden: tuning and tests) cuts the input into pieces of
/// that many bytes and leaves the digest as it is; `--chunk-bytes`, its old
/// name, is still taken; a size out of range is refused.
#[test]
fn piece_bytes_under_either_name_leave_the_digest_alone() {
    let (_dir, a, _) = fixture();
    let want = format!(
        "{}  {}\n",
        digest_hex(&TreeParams::default(), &a),
        a.display()
    );
    for name in ["--piece-bytes", "--chunk-bytes"] {
        let out = stdout_of(treehash().args([name, "4096"]).arg(&a));
        assert_eq!(out, want, "{name}");
        treehash()
            .args([name, "0"])
            .arg(&a)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("'0' is not a piece size"));
    }
}

/// For a test of a machine without a CUDA driver: such tests are ignored
/// where the machine that built them has one (build.rs); where they run
/// and find one after all (installed since, or the binary carried here),
/// they fail rather than pass unchecked.
fn no_cuda_driver() {
    assert!(
        !treehash::gpu::driver_present(),
        "this test needs a machine without a CUDA driver, and this one has one \
         (built where there was none: rebuild here, and it is listed as ignored)"
    );
}

#[test]
#[cfg_attr(
    treehash_test_cuda_driver,
    ignore = "needs a machine without a CUDA driver; the one that built this test has one (build.rs)"
)]
fn gpu_backend_without_a_gpu_is_exit_3() {
    no_cuda_driver();
    let (_dir, a, _) = fixture();
    binary()
        .args(["--backend", "gpu"])
        .arg(&a)
        .assert()
        .code(3)
        .stdout("")
        .stderr(predicate::str::contains(
            "--backend gpu: GPU: no CUDA driver found",
        ));
}

#[test]
#[cfg_attr(
    treehash_test_cuda_driver,
    ignore = "needs a machine without a CUDA driver; the one that built this test has one (build.rs)"
)]
fn auto_without_a_gpu_is_quiet_unless_asked_and_then_says_so_once() {
    no_cuda_driver();
    let (dir, a, b) = fixture();
    let auto = || {
        let mut cmd = binary();
        cmd.arg(&a).arg(&b);
        cmd
    };
    let out = auto().output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "");
    let sums = String::from_utf8(out.stdout).unwrap();
    assert_eq!(sums.lines().count(), 2);
    let note = "treehash: no CUDA driver found; hashing on the CPU\n";
    for flag in ["-v", "--verbose"] {
        auto().arg(flag).assert().success().stderr(note);
    }
    let timings = auto().arg("--timings").output().unwrap();
    let stderr = String::from_utf8(timings.stderr).unwrap();
    assert_eq!(stderr.matches(note).count(), 1, "{stderr}");
    // Check mode too: quiet, or the note once with -v.
    let list = check_file(dir.path(), &sums);
    let check = || {
        let mut cmd = binary();
        cmd.arg("-c").arg(&list);
        cmd
    };
    check().assert().success().stderr("");
    check().arg("-v").assert().success().stderr(note);
}
