//! `treehash -c`, check mode: what a list may hold (comments and empty
//! lines, its own output in both forms, tagged lines with their own
//! parameters, of LI trees and of the standard functions, a list on
//! standard input), the verdicts and warnings it prints, --quiet,
//! --status, --warn, --strict and --ignore-missing, and the keyed-check
//! rules (docs/SPEC.md, "Checking keyed lines"), and the hints naming the
//! parameters a failed line implies. If you add a test of check mode, it
//! goes here; coreutils' own check-mode scenarios, replayed, are in
//! cli_coreutils_check.rs. A long list checked side by side is in cli_list.rs,
//! and `join -c` in cli_parts.rs; -z lists (cli_hash.rs) and --timings in
//! check mode (cli_hash.rs) sit beside hashing's.

mod common;

use std::fs;
use std::path::Path;

use common::cli::{binary, check_file, fixture, stdout_of, treehash};
use predicates::prelude::*;
use treehash::label::StandardLabel;
use treehash::standard::Standard;

/// coreutils' `sha256sum -c` skips lines that start with `#` and empty lines
/// (a lone CR too): they are neither checked nor improperly formatted.
#[test]
fn check_skips_comments_and_empty_lines_as_coreutils_does() {
    let (dir, a, _) = fixture();
    let line = stdout_of(treehash().arg(&a));
    let list = check_file(
        dir.path(),
        &format!("# made by treehash\n\n{line}\r\n#{line}"),
    );
    treehash()
        .args(["-c", "--strict", "--warn"])
        .arg(&list)
        .assert()
        .success()
        .stdout(format!("{}: OK\n", a.display()))
        .stderr("");
    // The same with NUL-ended lines.
    let zero_line = stdout_of(treehash().arg("-z").arg(&a));
    let list = check_file(dir.path(), &format!("# comment\0\0{zero_line}"));
    treehash()
        .args(["-c", "-z", "--strict", "--warn"])
        .arg(&list)
        .assert()
        .success()
        .stdout(format!("{}: OK\0", a.display()))
        .stderr("");
    // A list written with -z and read without it, tagged or not: a hint,
    // not a NUL in a message.
    let tagged_zero_line = stdout_of(treehash().args(["-z", "--tag"]).arg(&a));
    for written in [&zero_line, &tagged_zero_line] {
        let list = check_file(dir.path(), &written.repeat(2));
        let out = treehash().arg("-c").arg(&list).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            format!(
                "treehash: {}: no properly formatted checksum lines found \
                 (its lines hold NUL bytes: a list written with -z is checked with -c -z)\n",
                list.display()
            )
        );
    }
    // Comments alone are no digest lines at all.
    assert_no_digest_lines(&check_file(dir.path(), "# nothing here\n\n"));
}

/// `treehash -c LIST` finds no digest line in `list`: exit 1, and says so.
fn assert_no_digest_lines(list: &Path) {
    treehash()
        .arg("-c")
        .arg(list)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "no properly formatted checksum lines found",
        ));
}

#[test]
fn check_accepts_its_own_output_in_both_forms() {
    let (dir, a, b) = fixture();
    for form in [&["--tag"][..], &[]] {
        let sums = stdout_of(treehash().args(["-H", "3"]).args(form).arg(&a).arg(&b));
        let list = check_file(dir.path(), &sums);
        treehash()
            .args(["-H", "3", "-c"])
            .arg(&list)
            .assert()
            .success()
            .stdout(format!("{}: OK\n{}: OK\n", a.display(), b.display()))
            .stderr("");
    }
}

/// Tagged lines carry every parameter, of either kind: `-c` checks a list
/// of LI lines of several functions, heights and lengths and of every
/// standard function with its options, with no option given (the command
/// line's default parameters play no part); each label reads back to the
/// same parameters; and once the file changes, every line fails.
#[test]
fn tagged_lines_are_checked_with_their_own_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m");
    fs::write(&file, common::spec_input(70_000)).unwrap();
    let functions: [&[&str]; 8] = [
        &["-a", "kt128"],
        &["-a", "kt256", "--customization", "x"],
        &["-a", "parallelhash128", "-B", "100", "-l", "40"],
        &["-a", "parallelhash256"],
        &["-a", "turboshake256", "--domain", "7f", "-l", "3"],
        &["-a", "sha3-512", "-H", "3"],
        &["-a", "sha3-512", "-H", "2"],
        &["-a", "shake128", "-H", "0", "-l", "50"],
    ];
    let mut list = String::new();
    for args in functions {
        list.push_str(&stdout_of(treehash().args(args).arg("--tag").arg(&file)));
    }
    let sums = check_file(dir.path(), &list);
    let ok = format!("{}: OK\n", file.display()).repeat(functions.len());
    treehash()
        .arg("-c")
        .arg(&sums)
        .assert()
        .success()
        .stdout(ok);
    // The labels read back to the same parameters.
    for line in list.lines() {
        let label = line.split(" (").next().unwrap();
        assert_eq!(
            label.parse::<treehash::label::Label>().unwrap().to_string(),
            label
        );
    }
    let first_label: StandardLabel = list.split(" (").next().unwrap().parse().unwrap();
    assert_eq!(first_label.standard, Standard::Kt128);
    fs::write(&file, common::spec_input(70_001)).unwrap();
    treehash()
        .arg("-c")
        .arg(&sums)
        .assert()
        .code(1)
        .stdout(format!("{}: FAILED\n", file.display()).repeat(functions.len()));
}

#[test]
fn check_reports_mismatches_and_unreadable_files() {
    let (dir, a, b) = fixture();
    let sums = stdout_of(treehash().arg(&a).arg(&b));
    let list = check_file(dir.path(), &sums);
    fs::write(&a, b"changed").unwrap();
    fs::remove_file(&b).unwrap();
    treehash()
        .arg("-c")
        .arg(&list)
        .assert()
        .code(1)
        .stdout(format!(
            "{}: FAILED\n{}: FAILED open or read\n",
            a.display(),
            b.display()
        ))
        .stderr(predicate::str::contains("No such file or directory"))
        .stderr(predicate::str::contains(
            "WARNING: 1 listed file could not be read",
        ))
        .stderr(predicate::str::contains(
            "WARNING: 1 computed checksum did NOT match",
        ));
}

/// An untagged line made with other parameters than the command line's:
/// a line of plain SHA3-256 (FIPS 202's digest of "abc", as sha3sum and
/// openssl write it) fails under the default tree, and the run ends with
/// one hint, whatever the lists; --warn names the line as plain SHA3-256.
/// A line of SHA3-512's length is improperly formatted, its reason naming
/// -a sha3-512.
#[test]
fn lines_of_other_parameters_get_a_hint_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("f"), b"abc").unwrap();
    let sha3_256 = "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532";
    let sha3_512 = "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e\
                    10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0";
    fs::write(dir.path().join("one"), format!("{sha3_256}  f\n")).unwrap();
    fs::write(dir.path().join("two"), format!("{sha3_256}  f\n")).unwrap();
    fs::write(dir.path().join("long"), format!("{sha3_512}  f\n")).unwrap();
    let hint = "treehash: hint: untagged lines are checked with the command line's parameters, \
                SHA3-256-LI(H=8,D=4,B=136); a line made with others fails. A line of plain \
                SHA3-256 (as sha3sum, openssl and cksum -a sha3 write it) is checked with -H 0; \
                --warn names such lines. --tag lines carry their parameters.\n";
    let mismatch = "treehash: WARNING: 1 computed checksum did NOT match\n";
    let run = |args: &[&str]| {
        let out = treehash()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        (out.status.code(), text(out.stdout), text(out.stderr))
    };
    assert_eq!(
        run(&["-c", "one", "two"]),
        (
            Some(1),
            "f: FAILED\nf: FAILED\n".into(),
            format!("{mismatch}{mismatch}{hint}")
        )
    );
    assert_eq!(
        run(&["-c", "--warn", "one"]),
        (
            Some(1),
            "f: FAILED\n".into(),
            format!(
                "treehash: one: 1: the line is the file's plain SHA3-256 (-H 0), not \
                 SHA3-256-LI(H=8,D=4,B=136)\n{mismatch}{hint}"
            )
        )
    );
    // --status: no hint; -H 0: the line matches, and nothing is said.
    assert_eq!(
        run(&["-c", "--status", "one"]),
        (Some(1), "".into(), "".into())
    );
    assert_eq!(
        run(&["-c", "-H", "0", "one"]),
        (Some(0), "f: OK\n".into(), "".into())
    );
    assert_eq!(
        run(&["-c", "--warn", "long"]),
        (
            Some(1),
            "".into(),
            "treehash: long: 1: improperly formatted SHA3-256-LI(H=8,D=4,B=136) checksum line \
             (digest of 64 bytes, expected 32; SHA3-512's length: -a sha3-512)\n\
             treehash: long: no properly formatted checksum lines found\n"
                .into()
        )
    );
    assert_eq!(
        run(&["-c", "-H", "0", "-a", "sha3-512", "long"]),
        (Some(0), "f: OK\n".into(), "".into())
    );
}

#[test]
fn quiet_status_and_ignore_missing_behave_as_in_coreutils() {
    let (dir, a, b) = fixture();
    let sums = stdout_of(treehash().arg(&a).arg(&b));
    let list = check_file(dir.path(), &sums);
    treehash()
        .args(["-c", "--quiet"])
        .arg(&list)
        .assert()
        .success()
        .stdout("");
    fs::remove_file(&b).unwrap();
    // --status prints no verdict, but a file that cannot be read is still
    // reported on standard error, as coreutils reports it.
    treehash()
        .args(["-c", "--status"])
        .arg(&list)
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!(
            "treehash: {}: No such file or directory\n",
            b.display()
        ));
    treehash()
        .args(["-c", "--ignore-missing"])
        .arg(&list)
        .assert()
        .success()
        .stdout(format!("{}: OK\n", a.display()));
    fs::remove_file(&a).unwrap();
    treehash()
        .args(["-c", "--ignore-missing"])
        .arg(&list)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no file was verified"));
}

#[test]
fn improperly_formatted_lines_are_counted_and_fail_only_with_strict() {
    let (dir, a, _) = fixture();
    let good = stdout_of(treehash().arg(&a));
    let list = check_file(dir.path(), &format!("{good}not a digest line\nzz  x\n"));
    treehash()
        .arg("-c")
        .arg(&list)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "WARNING: 2 lines are improperly formatted",
        ));
    treehash()
        .args(["-c", "--strict"])
        .arg(&list)
        .assert()
        .code(1);
    treehash()
        .args(["-c", "--warn"])
        .arg(&list)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            ": 2: improperly formatted SHA3-256-LI(H=8,D=4,B=136) checksum line\n",
        ));
    assert_no_digest_lines(&check_file(dir.path(), "nothing here\n"));
}

/// As in coreutils (`sha256sum -c`), the last of --quiet, --status and
/// --warn given wins: each turns the other two off.
#[test]
fn the_last_of_quiet_status_and_warn_wins() {
    let (dir, a, _) = fixture();
    let good = stdout_of(treehash().arg(&a));
    let list = check_file(dir.path(), &format!("{good}not a digest line\n"));
    let ok = format!("{}: OK\n", a.display());
    let line_warning = format!(
        "treehash: {}: 2: improperly formatted SHA3-256-LI(H=8,D=4,B=136) checksum line",
        list.display()
    );
    let count_warning = "treehash: WARNING: 1 line is improperly formatted\n";
    // What each mode prints: (standard output, the line's warning, the count).
    let warn = (ok.as_str(), true, true);
    let quiet = ("", false, true);
    let status = ("", false, false);
    let normal = (ok.as_str(), false, true);
    for (args, (stdout, warns_line, counts)) in [
        (&[][..], normal),
        (&["--warn"], warn),
        (&["--quiet"], quiet),
        (&["--status"], status),
        (&["--status", "--warn"], warn),
        (&["--warn", "--status"], status),
        (&["--quiet", "--warn"], warn),
        (&["--warn", "--quiet"], quiet),
        (&["--status", "--quiet"], quiet),
        (&["--quiet", "--status"], status),
        (&["-w", "--quiet", "--status", "-w"], warn),
        (&["--status", "-w", "-q"], quiet),
        (&["-q", "--warn", "--status"], status),
    ] {
        let out = treehash().arg("-c").args(args).arg(&list).output().unwrap();
        let what = format!("{args:?}");
        assert_eq!(out.status.code(), Some(0), "{what}: {out:?}");
        assert_eq!(String::from_utf8(out.stdout).unwrap(), stdout, "{what}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(
            stderr.contains(&line_warning),
            warns_line,
            "{what}: {stderr}"
        );
        assert_eq!(stderr.contains(count_warning), counts, "{what}: {stderr}");
        let lines = usize::from(warns_line) + usize::from(counts);
        assert_eq!(stderr.lines().count(), lines, "{what}: {stderr}");
    }
    // Overridden or not, each still needs --check: the one left is named.
    treehash()
        .args(["--status", "--quiet"])
        .arg(&a)
        .assert()
        .code(2)
        .stderr(
            "treehash: the --quiet option is meaningful only when verifying checksums\n\
             Try 'treehash --help' for more information.\n",
        );
}

/// `--backend gpu` in check mode with no usable GPU: device 999 exists on no
/// machine, so this holds with a CUDA driver or without one.
#[test]
fn gpu_backend_without_a_gpu_in_check_mode_is_exit_3() {
    let (dir, a, _) = fixture();
    let list = check_file(dir.path(), &stdout_of(treehash().arg(&a)));
    binary()
        .args(["--backend", "gpu", "--device", "999", "-c"])
        .arg(&list)
        .assert()
        .code(3)
        .stdout("")
        .stderr(predicate::str::starts_with(
            "treehash: --backend gpu: GPU: ",
        ));
}

#[test]
fn keyed_lines_need_the_prefix_and_check_with_it() {
    let (dir, a, _) = fixture();
    let sums = stdout_of(
        treehash()
            .args(["--tag", "--prefix-hex", "0badc0de"])
            .arg(&a),
    );
    let list = check_file(dir.path(), &sums);
    treehash()
        .arg("-c")
        .arg(&list)
        .assert()
        .code(1)
        .stdout(format!("{}: FAILED\n", a.display()))
        .stderr(predicate::str::contains("made with a prefix"))
        .stderr(predicate::str::contains(
            "WARNING: 1 line was refused by the keyed-check rules",
        ));
    treehash()
        .args(["-c", "--prefix-hex", "0badc0de"])
        .arg(&list)
        .assert()
        .success();
    treehash()
        .args(["-c", "--prefix-hex", "0badc0df"])
        .arg(&list)
        .assert()
        .code(1)
        .stdout(format!("{}: FAILED\n", a.display()));
}

#[test]
fn check_reads_a_list_from_standard_input_and_reports_a_missing_list() {
    let (dir, a, _) = fixture();
    let sums = stdout_of(treehash().arg(&a));
    treehash()
        .arg("-c")
        .write_stdin(sums)
        .assert()
        .success()
        .stdout(format!("{}: OK\n", a.display()));
    treehash()
        .arg("-c")
        .arg(dir.path().join("no-such-list"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("No such file or directory"));
}

#[test]
fn untagged_shake_lines_take_their_length_from_the_digest() {
    let (dir, a, _) = fixture();
    let sums = stdout_of(treehash().args(["-a", "shake128", "-l", "77"]).arg(&a));
    let list = check_file(dir.path(), &sums);
    treehash()
        .args(["-a", "shake128", "-c"])
        .arg(&list)
        .assert()
        .success();
    // With an explicit, different length the line does not fit.
    treehash()
        .args(["-a", "shake128", "-l", "32", "-c"])
        .arg(&list)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no properly formatted"));
}

// ---- keyed checks (docs/SPEC.md, "Checking keyed lines")

const KEY: &str = "00112233445566778899aabbccddeeff";

#[test]
fn with_a_prefix_a_tagged_line_without_p_fails() {
    let (dir, a, b) = fixture();
    let keyed = stdout_of(treehash().args(["--tag", "--prefix-hex", KEY]).arg(&a));
    let unkeyed = stdout_of(treehash().arg("--tag").arg(&b));
    let list = check_file(dir.path(), &(keyed + &unkeyed));
    treehash()
        .args(["-c", "--prefix-hex", KEY])
        .arg(&list)
        .assert()
        .code(1)
        .stdout(format!("{}: OK\n{}: FAILED\n", a.display(), b.display()))
        .stderr(predicate::str::contains(
            "SUMS: 2: a prefix was given, but this line's label has no ,P",
        ))
        .stderr(predicate::str::contains(
            "keyed check needs a line made with the prefix",
        ))
        .stderr(predicate::str::contains(
            "WARNING: 1 line was refused by the keyed-check rules",
        ));
    // Without a prefix, the unkeyed line is checked as before.
    let list = check_file(dir.path(), &stdout_of(treehash().arg("--tag").arg(&b)));
    treehash().arg("-c").arg(&list).assert().success();
}

#[test]
fn keyed_digests_shorter_than_16_bytes_are_refused() {
    let (dir, a, _) = fixture();
    let keyed = |len: &str, tag: bool| {
        let mut cmd = treehash();
        cmd.args(["-a", "shake128", "-l", len, "--prefix-hex", KEY]);
        if tag {
            cmd.arg("--tag");
        }
        stdout_of(cmd.arg(&a))
    };
    for tag in [true, false] {
        // 15 bytes: refused, although the digest is right.
        let list = check_file(dir.path(), &keyed("15", tag));
        treehash()
            .args(["-a", "shake128", "-c", "--prefix-hex", KEY])
            .arg(&list)
            .assert()
            .code(1)
            .stdout(format!("{}: FAILED\n", a.display()))
            .stderr(predicate::str::contains(
                "a keyed digest of 15 bytes is refused: a keyed check needs at least 16 bytes \
                 (32 hex digits)",
            ));
        // 16 bytes: checked.
        let list = check_file(dir.path(), &keyed("16", tag));
        treehash()
            .args(["-a", "shake128", "-c", "--prefix-hex", KEY])
            .arg(&list)
            .assert()
            .success()
            .stdout(format!("{}: OK\n", a.display()));
    }
    // Without a prefix, short digests are checked as before.
    let short = stdout_of(treehash().args(["-a", "shake128", "-l", "4"]).arg(&a));
    let list = check_file(dir.path(), &short);
    treehash()
        .args(["-a", "shake128", "-c"])
        .arg(&list)
        .assert()
        .success();
}
