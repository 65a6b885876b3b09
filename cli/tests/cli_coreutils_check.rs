//! GNU coreutils' own check-mode tests (tests/cksum/ in coreutils: md5sum.pl,
//! sha1sum.pl, md5sum-bsd.sh, cksum-c.sh, cksum-sha3.sh, b2sum.sh), replayed
//! against `treehash -H 0 -c` (plain SHA3-256: one function, as
//! `sha256sum -c` checks one). Each test names the coreutils test and
//! scenario it replays; the expected output is coreutils' (from those tests,
//! or from running `sha256sum -c` of GNU coreutils 9.1 where a test only
//! checks the exit code), with `treehash` for the program's name and
//! SHA3-256 for the function's. Digests come from FIPS 202 (Python's
//! hashlib), not from treehash. Usage errors exit 2 (treehash's documented
//! code; coreutils exits 1). The scenarios left out, and why, are listed in
//! docs/SPEC.md ("Check files", "As coreutils reads them"). If you add a
//! test of check mode that is not a coreutils scenario, it goes in
//! cli_check.rs.

mod common;

use std::fs;
use std::path::Path;

use common::cli::treehash;

/// SHA3-256 of the empty input (FIPS 202).
const EMPTY: &str = "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a";
/// A digest of no file here.
const INVALID: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaafdb57c725157cb40b5aee8d937b8351477e";

/// What one run printed, and its exit code.
#[derive(Debug, PartialEq)]
struct Run {
    stdout: String,
    stderr: String,
    code: i32,
}

/// The expected run.
fn want(stdout: &str, stderr: &str, code: i32) -> Run {
    Run {
        stdout: stdout.into(),
        stderr: stderr.into(),
        code,
    }
}

/// `treehash -H 0 ARGS` in `dir`, with `stdin` on standard input.
fn run_in(dir: &Path, args: &[&str], stdin: &[u8]) -> Run {
    let out = treehash()
        .current_dir(dir)
        .args(["-H", "0"])
        .args(args)
        .write_stdin(stdin)
        .output()
        .unwrap();
    Run {
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
        code: out.status.code().unwrap(),
    }
}

fn run(dir: &Path, args: &[&str]) -> Run {
    run_in(dir, args, b"")
}

/// A directory holding `files` (name, content).
fn dir_with(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in files {
        fs::write(dir.path().join(name), content).unwrap();
    }
    dir
}

/// A scenario: its name in coreutils' test, the options, the files (name,
/// content), and what coreutils prints.
type Scenario = (
    &'static str,
    Vec<&'static str>,
    Vec<(&'static str, String)>,
    Run,
);

/// md5sum.pl's and sha1sum.pl's check scenarios.
#[test]
fn md5sum_pl_and_sha1sum_pl_check_scenarios() {
    let e = EMPTY;
    let scenarios: Vec<Scenario> = vec![
        (
            "check-1",
            vec!["--check", "f.sum"],
            vec![("f", "".into()), ("f.sum", format!("{e}  f\n"))],
            want("f: OK\n", "", 0),
        ),
        (
            "check-windows",
            vec!["--check", "f.sum"],
            vec![("f", "".into()), ("f.sum", format!("{e}  f\r\n"))],
            want("f: OK\n", "", 0),
        ),
        (
            "ck-strict-1",
            vec!["--check", "--strict", "f.sum"],
            vec![("f", "".into()), ("f.sum", format!("{e}  f\n\n"))],
            want("f: OK\n", "", 0),
        ),
        (
            "ck-strict-2",
            vec!["--check", "--strict", "in.sum"],
            vec![("f", "".into()), ("in.sum", format!("ERR\n{e}  f\n"))],
            want(
                "f: OK\n",
                "treehash: WARNING: 1 line is improperly formatted\n",
                1,
            ),
        ),
        (
            "check-2",
            vec!["--check", "--status", "f.sum"],
            vec![("f", "foo".into()), ("f.sum", format!("{e}  f\n"))],
            want("", "", 1),
        ),
        (
            "check-quiet1",
            vec!["--check", "--quiet", "f.sum"],
            vec![("f", "".into()), ("f.sum", format!("{e}  f\n"))],
            want("", "", 0),
        ),
        (
            "check-quiet2",
            vec!["--check", "--quiet", "f.sum"],
            vec![("f", "foo".into()), ("f.sum", format!("{e}  f\n"))],
            want(
                "f: FAILED\n",
                "treehash: WARNING: 1 computed checksum did NOT match\n",
                1,
            ),
        ),
        (
            "check-multifail",
            vec!["--check", "f.sum"],
            vec![
                ("f", "foo".into()),
                ("f.sum", format!("{e}  f\n{e}  f\ninvalid\n")),
            ],
            want(
                "f: FAILED\nf: FAILED\n",
                "treehash: WARNING: 1 line is improperly formatted\n\
                 treehash: WARNING: 2 computed checksums did NOT match\n",
                1,
            ),
        ),
        (
            "check-multifail-warn",
            vec!["--check", "--warn", "f.sum"],
            vec![
                ("f", "foo".into()),
                ("f.sum", format!("{e}  f\n{e}  f\ninvalid\n")),
            ],
            want(
                "f: FAILED\nf: FAILED\n",
                "treehash: f.sum: 3: improperly formatted SHA3-256 checksum line\n\
                 treehash: WARNING: 1 line is improperly formatted\n\
                 treehash: WARNING: 2 computed checksums did NOT match\n",
                1,
            ),
        ),
        (
            "check-multifail-state",
            vec!["--check", "--warn", "f.sum"],
            vec![
                ("f", "".into()),
                ("g", "a".into()),
                ("f.sum", format!("{e}  f\n{e}  g\n{e}  f\n")),
            ],
            want(
                "f: OK\ng: FAILED\nf: OK\n",
                "treehash: WARNING: 1 computed checksum did NOT match\n",
                1,
            ),
        ),
        // Another function's tag is not this function's line.
        (
            "check-bsd",
            vec!["--check", "f.md5"],
            vec![("f", "".into()), ("f.md5", format!("MD5 (f) = {e}\n"))],
            want(
                "",
                "treehash: f.md5: no properly formatted checksum lines found\n",
                1,
            ),
        ),
        (
            "check-bsd2",
            vec!["--check", "f.sum"],
            vec![("f", "".into()), ("f.sum", format!("SHA3-256 (f) = {e}\n"))],
            want("f: OK\n", "", 0),
        ),
        (
            "check-bsd3",
            vec!["--check", "--status", "f.sum"],
            vec![
                ("f", "bar".into()),
                ("f.sum", format!("SHA3-256 (f) = {e}\n")),
            ],
            want("", "", 1),
        ),
        (
            "check-openssl",
            vec!["--check", "f.md5"],
            vec![("f", "".into()), ("f.md5", format!("MD5(f)= {e}\n"))],
            want(
                "",
                "treehash: f.md5: no properly formatted checksum lines found\n",
                1,
            ),
        ),
        (
            "check-openssl2",
            vec!["--check", "f.sum"],
            vec![("f", "".into()), ("f.sum", format!("SHA3-256(f)= {e}\n"))],
            want("f: OK\n", "", 0),
        ),
        (
            "check-openssl3",
            vec!["--check", "--status", "f.sum"],
            vec![
                ("f", "bar".into()),
                ("f.sum", format!("SHA3-256(f)= {e}\n")),
            ],
            want("", "", 1),
        ),
        (
            "check-ignore-missing-1",
            vec!["--check", "--ignore-missing", "f.sum"],
            vec![
                ("f", "".into()),
                ("f.sum", format!("{e}  f\n{e}  f.missing\n")),
            ],
            want("f: OK\n", "", 0),
        ),
        (
            "check-ignore-missing-3",
            vec!["--check", "--quiet", "--ignore-missing", "f.sum"],
            vec![
                ("f", "".into()),
                ("f.sum", format!("{e}  missing/f\n{e}  f\n")),
            ],
            want("", "", 0),
        ),
        (
            "check-ignore-missing-4",
            vec!["--ignore-missing", "f"],
            vec![("f", "".into())],
            want(
                "",
                "treehash: the --ignore-missing option is meaningful only when \
                 verifying checksums\nTry 'treehash --help' for more information.\n",
                2,
            ),
        ),
        (
            "check-ignore-missing-5",
            vec!["--check", "--ignore-missing", "f.sum"],
            vec![("f", "".into()), ("f.sum", format!("{e}  missing\n"))],
            want("", "treehash: f.sum: no file was verified\n", 1),
        ),
        // A digest that starts with 00 is no missing file (coreutils 8.25).
        (
            "check-ignore-missing-6",
            vec!["--check", "--ignore-missing", "f.sum"],
            vec![
                ("f", "20t".into()),
                (
                    "f.sum",
                    "000697f8794d8bddadb47daf54bf6d7971635fa60fd78c018c3c54461035e6e9  f\n".into(),
                ),
            ],
            want("f: OK\n", "", 0),
        ),
        (
            "bsd-segv",
            vec!["--check", "z"],
            vec![("z", "SHA3-256 (".into())],
            want(
                "",
                "treehash: z: no properly formatted checksum lines found\n",
                1,
            ),
        ),
        (
            "nul-in-cksum",
            vec!["--check", "h"],
            vec![("h", format!("{}  h\n", "\0".repeat(64)))],
            want(
                "",
                "treehash: h: no properly formatted checksum lines found\n",
                1,
            ),
        ),
    ];
    for (name, args, files, expected) in scenarios {
        let files: Vec<(&str, &[u8])> = files.iter().map(|(n, c)| (*n, c.as_bytes())).collect();
        let dir = dir_with(&files);
        assert_eq!(run(dir.path(), &args), expected, "{name}");
    }
}

/// The five names of md5sum-bsd.sh (and cksum-sha3.sh), each file holding
/// its name and a newline, and their SHA3-256 digests (FIPS 202).
const BSD_NAMES: [(&str, &str); 5] = [
    (
        "a",
        "be5215abf72333a73b992dafdf4ab59884b948452e0015cfaddaa0b87a0e4515",
    ),
    (
        " b",
        "78de1c9f6aa5337b7b1056d5e503889653d0a6d325526191587de39a903b840d",
    ),
    (
        "*c",
        "691cb714973d55d8f8ba5ba1e300d480c75ba7e24162ab58a19be780736f0c27",
    ),
    (
        "dd",
        "024e9690e077e199d56bd78d1f8abf555e5494c3b9eb30b5ed8fb0ef38960632",
    ),
    (
        " ",
        "5936bc75237ee7d2b349ae008fd4b730726099a0d475782f51d9ef03e32420e8",
    ),
];

fn bsd_names_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, _) in BSD_NAMES {
        fs::write(dir.path().join(name), format!("{name}\n")).unwrap();
    }
    dir
}

const ALL_OK: &str = "a: OK\n b: OK\n*c: OK\ndd: OK\n : OK\n";

/// md5sum-bsd.sh: BSD's reversed form `HEX NAME` (`md5 -r`), the GNU form,
/// and the tagged form, with names that start with a space or `*`.
#[test]
fn md5sum_bsd_sh_reversed_gnu_and_tagged_forms() {
    let dir = bsd_names_dir();
    let gnu: String = BSD_NAMES.map(|(n, d)| format!("{d}  {n}\n")).concat();
    let reversed: String = BSD_NAMES.map(|(n, d)| format!("{d} {n}\n")).concat();
    let tagged: String = BSD_NAMES
        .map(|(n, d)| format!("SHA3-256 ({n}) = {d}\n"))
        .concat();
    for (file, lines) in [
        ("check.sum", &gnu),
        ("check.bsd", &reversed),
        ("check.tag", &tagged),
    ] {
        fs::write(dir.path().join(file), lines).unwrap();
        assert_eq!(
            run(dir.path(), &["--strict", "-c", file]),
            want(ALL_OK, "", 0),
            "{file}"
        );
    }
    // A GPG header does not turn on the reversed form.
    let signed = format!("____not_all_hex_so_no_match_____ blah\n{gnu}");
    fs::write(dir.path().join("check2.sum"), signed).unwrap();
    assert_eq!(
        run(dir.path(), &["-c", "check2.sum"]),
        want(
            ALL_OK,
            "treehash: WARNING: 1 line is improperly formatted\n",
            0
        )
    );
    // Without its first line, the reversed list reads as GNU lines: ` b`
    // and `*c` are then the files `b` and `c` (binary mode), and `dd`
    // and ` ` are BSD lines in a GNU file. (The test checks the exit
    // code; the output is sha256sum 9.1's.)
    let tail: String = reversed.lines().skip(1).map(|l| format!("{l}\n")).collect();
    assert_eq!(
        run_in(dir.path(), &["--strict", "-c"], tail.as_bytes()),
        want(
            "b: FAILED open or read\nc: FAILED open or read\n",
            "treehash: b: No such file or directory\n\
             treehash: c: No such file or directory\n\
             treehash: WARNING: 2 lines are improperly formatted\n\
             treehash: WARNING: 2 listed files could not be read\n",
            1
        )
    );
    // --tag and --check together are a usage error.
    assert_eq!(
        run(dir.path(), &["--tag", "--check", "/dev/null"]),
        want(
            "",
            "treehash: the --tag option is meaningless when verifying checksums\n\
             Try 'treehash --help' for more information.\n",
            2
        )
    );
}

/// md5sum-bsd.sh: tagged lines of names escaped with the GNU extension
/// check back; the verdicts print a name as coreutils 9.1 prints it
/// (escaped only when it holds a newline).
#[test]
fn md5sum_bsd_sh_escaped_names() {
    let names = ["a\\b", "a\\", "\\a", "a\nb", "a\tb"];
    let dir = tempfile::tempdir().unwrap();
    let mut list = String::new();
    for name in names {
        fs::write(dir.path().join(name), b"").unwrap();
        let escaped = name.replace('\\', "\\\\").replace('\n', "\\n");
        let mark = if escaped != name { "\\" } else { "" };
        list.push_str(&format!("{mark}SHA3-256 ({escaped}) = {EMPTY}\n"));
    }
    fs::write(dir.path().join("check.sum"), &list).unwrap();
    assert_eq!(
        run(dir.path(), &["--strict", "-c", "check.sum"]),
        want("a\\b: OK\na\\: OK\n\\a: OK\n\\a\\nb: OK\na\tb: OK\n", "", 0)
    );
    // And the tagged line written for `test\n\\file`.
    fs::write(dir.path().join("test\n\\file"), b"").unwrap();
    assert_eq!(
        run(dir.path(), &["--tag", "test\n\\file"]),
        want(&format!("\\SHA3-256 (test\\n\\\\file) = {EMPTY}\n"), "", 0)
    );
}

/// cksum-c.sh, the scenarios of one function: a list of SHA3-256 lines of
/// `input` checked with each option, malformed and failing lines added
/// one by one as the test adds them.
#[test]
fn cksum_c_sh_scenarios() {
    let input: &[u8] = b"3\n1\n4\n10\n5\n9\n2\n6\n8\n7\n";
    let digest = "b291f33c357d92ad22d145054b3a6ab42ef8336a81ce2a91d20916b0ceab1f06";
    let dir = dir_with(&[("input", input)]);
    let d = dir.path();
    let sums = |text: &str| fs::write(d.join("CHECKSUMS"), text).unwrap();
    let mut text = format!("SHA3-256 (input) = {digest}\n");
    sums(&text);
    assert_eq!(
        run(d, &["--strict", "--check", "CHECKSUMS"]),
        want("input: OK\n", "", 0)
    );
    // Leading blanks and a backslash are skipped.
    let indented: String = text.lines().map(|l| format!(" \\{l}\n")).collect();
    assert_eq!(
        run_in(d, &["--strict", "-c"], indented.as_bytes()),
        want("input: OK\n", "", 0)
    );
    // A name holding " (" and ") = ".
    fs::write(d.join("abc (f) = abc"), b"").unwrap();
    fs::write(
        d.join("tag-awkward.sum"),
        format!("SHA3-256 (abc (f) = abc) = {EMPTY}\n"),
    )
    .unwrap();
    assert_eq!(
        run(d, &["--check", "tag-awkward.sum"]),
        want("abc (f) = abc: OK\n", "", 0)
    );
    // A signed list: the PGP armour is skipped, without --strict.
    let signed = format!(
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA384\n\n# ignored comment\n{text}\
         -----BEGIN PGP SIGNATURE-----\n\n\
         # Note base64 doesn't have ambiguous delimiters in its charset\n\
         SHA384+BCAAdFiEEjFummQvbJuGfKhqAEWGuaUVxmjkFAmCDId0ACgkQEWGuaUVx\n\
         BLAKE2b/00001EuON62pTEnqrJ5lav61QxRByiuDp/6VODrRL2JWM6Stxu1Myws=\n\
         =AWU7\n-----END PGP SIGNATURE-----\n"
    );
    fs::write(d.join("signed_CHECKSUMS"), signed).unwrap();
    let out = run(d, &["--check", "signed_CHECKSUMS"]);
    assert_eq!((out.stdout.as_str(), out.code), ("input: OK\n", 0));
    // --status, then a comment: nothing printed.
    assert_eq!(
        run(d, &["--status", "--check", "CHECKSUMS"]),
        want("", "", 0)
    );
    text.push_str("# Very important comment\n");
    sums(&text);
    assert_eq!(
        run(d, &["--status", "--check", "CHECKSUMS"]),
        want("", "", 0)
    );
    // Improperly formatted lines: counted; a failure only with --strict.
    text.push_str("invalid line\n");
    sums(&text);
    let one_bad = "treehash: WARNING: 1 line is improperly formatted\n";
    assert_eq!(
        run(d, &["--check", "CHECKSUMS"]),
        want("input: OK\n", one_bad, 0)
    );
    assert_eq!(
        run(d, &["--strict", "--check", "CHECKSUMS"]),
        want("input: OK\n", one_bad, 1)
    );
    text.push_str("invalid line\n");
    sums(&text);
    assert_eq!(
        run(d, &["--strict", "--check", "CHECKSUMS"]),
        want(
            "input: OK\n",
            "treehash: WARNING: 2 lines are improperly formatted\n",
            1
        )
    );
    // A digest that does not match.
    text.push_str(&format!("SHA3-256 (input) = {INVALID}\n"));
    sums(&text);
    let mismatch = want(
        "input: OK\ninput: FAILED\n",
        "treehash: WARNING: 2 lines are improperly formatted\n\
         treehash: WARNING: 1 computed checksum did NOT match\n",
        1,
    );
    assert_eq!(run(d, &["--check", "CHECKSUMS"]), mismatch);
    assert_eq!(run(d, &["--check", "--strict", "CHECKSUMS"]), mismatch);
    // A file that does not exist.
    fs::write(
        d.join("CHECKSUMS2"),
        format!("SHA3-256 (input2) = {INVALID}\n"),
    )
    .unwrap();
    let unread = want(
        "input2: FAILED open or read\n",
        "treehash: input2: No such file or directory\n\
         treehash: WARNING: 1 listed file could not be read\n",
        1,
    );
    assert_eq!(run(d, &["--check", "CHECKSUMS2"]), unread);
    assert_eq!(run(d, &["--check", "--strict", "CHECKSUMS2"]), unread);
    // With errors, --status prints nothing.
    assert_eq!(
        run(d, &["--status", "--check", "CHECKSUMS"]),
        want("", "", 1)
    );
    // --warn names each malformed line and its function: a line of
    // another length is malformed, named by its own label.
    text.push_str(&format!("SHA3-512 (missing-file) = {INVALID}\n"));
    sums(&text);
    let warned = "treehash: CHECKSUMS: 3: improperly formatted SHA3-256 checksum line\n\
                  treehash: CHECKSUMS: 4: improperly formatted SHA3-256 checksum line\n\
                  treehash: CHECKSUMS: 6: improperly formatted SHA3-512 checksum line";
    let out = run(d, &["--warn", "--check", "CHECKSUMS"]);
    assert!(out.stderr.starts_with(warned), "{out:?}");
    assert_eq!(out.code, 1);
    // --ignore-missing, of a list naming only a missing file.
    fs::write(
        d.join("CHECKSUMS-missing"),
        format!("SHA3-256 (nonexistent) = {INVALID}\n"),
    )
    .unwrap();
    assert_eq!(
        run(d, &["--check", "CHECKSUMS-missing"]),
        want(
            "nonexistent: FAILED open or read\n",
            "treehash: nonexistent: No such file or directory\n\
             treehash: WARNING: 1 listed file could not be read\n",
            1
        )
    );
    let nothing_verified = want("", "treehash: CHECKSUMS-missing: no file was verified\n", 1);
    assert_eq!(
        run(d, &["--ignore-missing", "--check", "CHECKSUMS-missing"]),
        nothing_verified
    );
    // --status then --warn: --warn wins, and the warnings are printed.
    let out = run(d, &["--status", "--warn", "--check", "CHECKSUMS"]);
    assert!(
        out.stderr
            .contains("CHECKSUMS: 6: improperly formatted SHA3-512 checksum line")
    );
    assert!(
        out.stderr
            .contains("WARNING: 3 lines are improperly formatted")
    );
    assert!(
        out.stderr
            .contains("WARNING: 1 computed checksum did NOT match")
    );
    assert_eq!(out.code, 1);
    // --warn then --status: --status wins.
    assert_eq!(
        run(d, &["--warn", "--status", "--check", "CHECKSUMS"]),
        want("", "", 1)
    );
    // --status and --ignore-missing: nothing printed.
    assert_eq!(
        run(d, &["--status", "--ignore-missing", "--check", "CHECKSUMS"]),
        want("", "", 1)
    );
    // All three, of a list that verifies nothing: --warn is the last of
    // --status and --warn, so it is said.
    assert_eq!(
        run(
            d,
            &[
                "--status",
                "--warn",
                "--ignore-missing",
                "--check",
                "CHECKSUMS-missing"
            ]
        ),
        nothing_verified
    );
    // Several lists that do not exist, then several empty ones.
    assert_eq!(
        run(d, &["--check", "non-existing-1", "non-existing-2"]),
        want(
            "",
            "treehash: non-existing-1: No such file or directory\n\
             treehash: non-existing-2: No such file or directory\n",
            1
        )
    );
    fs::write(d.join("empty-1"), b"").unwrap();
    fs::write(d.join("empty-2"), b"").unwrap();
    assert_eq!(
        run(d, &["--check", "empty-1", "empty-2"]),
        want(
            "",
            "treehash: empty-1: no properly formatted checksum lines found\n\
             treehash: empty-2: no properly formatted checksum lines found\n",
            1
        )
    );
    // --tag with --check.
    let out = run(d, &["--tag", "--check", "/dev/null"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("the --tag option is meaningless when verifying checksums")
    );
}

/// cksum-c.sh: a tagged line whose digest is one hex digit short is
/// improperly formatted, not FAILED.
#[test]
fn cksum_c_sh_truncated_digests() {
    let dir = dir_with(&[("ff1", b""), ("ff2", b""), ("ff3", b"")]);
    let d = dir.path();
    let short = &EMPTY[..EMPTY.len() - 1];
    fs::write(
        d.join("trunc-bad.sum"),
        format!("SHA3-256 (ff1) = {EMPTY}\nSHA3-256 (ff2) = {short}\nSHA3-256 (ff3) = {short}\n"),
    )
    .unwrap();
    assert_eq!(
        run(d, &["--check", "trunc-bad.sum"]),
        want(
            "ff1: OK\n",
            "treehash: WARNING: 2 lines are improperly formatted\n",
            0
        )
    );
    assert_eq!(
        run(d, &["--warn", "--check", "trunc-bad.sum"]),
        want(
            "ff1: OK\n",
            "treehash: trunc-bad.sum: 2: improperly formatted SHA3-256 checksum line\n\
             treehash: trunc-bad.sum: 3: improperly formatted SHA3-256 checksum line\n\
             treehash: WARNING: 2 lines are improperly formatted\n",
            0
        )
    );
    assert_eq!(run(d, &["--strict", "--check", "trunc-bad.sum"]).code, 1);
    // cksum-c.sh's sha2-bad-length.sum: a tag of a length that is none of
    // the function's.
    fs::write(
        d.join("bad-length.sum"),
        "SHA3-128 (/dev/null) = 38b060a751ac96384cd9327eb1b1e36a\n",
    )
    .unwrap();
    assert_eq!(
        run(d, &["--check", "bad-length.sum"]),
        want(
            "",
            "treehash: bad-length.sum: no properly formatted checksum lines found\n",
            1
        )
    );
}

/// cksum-sha3.sh: tagged lines of the four SHA-3 lengths in one list, in
/// coreutils' and OpenSSL's spacing; untagged lines of each length; a tag
/// of an unsupported length.
#[test]
fn cksum_sha3_sh_scenarios() {
    let dir = bsd_names_dir();
    let d = dir.path();
    let mut tagged = String::new();
    for (name, _) in BSD_NAMES {
        for bits in ["224", "256", "384", "512"] {
            let out = run(d, &["--tag", "-a", &format!("sha3-{bits}"), name]);
            assert_eq!(out.code, 0);
            tagged.push_str(&out.stdout);
        }
    }
    // The lines of SHA3-256 are FIPS 202's digests.
    for (name, digest) in BSD_NAMES {
        assert!(tagged.contains(&format!("SHA3-256 ({name}) = {digest}\n")));
    }
    let all_ok: String = ALL_OK
        .lines()
        .flat_map(|l| [l; 4])
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(d.join("check.sha3"), &tagged).unwrap();
    assert_eq!(
        run(d, &["--strict", "-c", "check.sha3"]),
        want(&all_ok, "", 0)
    );
    // sed 's/ //; s/ =/=/': OpenSSL's spacing.
    let openssl: String = tagged
        .lines()
        .map(|l| format!("{}\n", l.replacen(' ', "", 1).replacen(" =", "=", 1)))
        .collect();
    assert!(openssl.starts_with("SHA3-224(a)= "));
    fs::write(d.join("openssl.sha3"), &openssl).unwrap();
    assert_eq!(
        run(d, &["--strict", "-c", "openssl.sha3"]),
        want(&all_ok, "", 0)
    );
    // Untagged lines of each length, checked with that function.
    fs::write(d.join("empty"), b"").unwrap();
    for bits in ["224", "256", "384", "512"] {
        let function = format!("sha3-{bits}");
        let out = run(d, &["-a", &function, "empty"]);
        fs::write(d.join("check.vals"), &out.stdout).unwrap();
        assert_eq!(
            run(d, &["-a", &function, "--strict", "-c", "check.vals"]),
            want("empty: OK\n", "", 0)
        );
    }
    // SHA3-248 is no function.
    let short = &EMPTY[..EMPTY.len() - 2];
    fs::write(d.join("inp"), format!("SHA3-248 (check.vals) = {short}\n")).unwrap();
    assert_eq!(
        run(d, &["-c", "--warn", "inp"]),
        want(
            "",
            "treehash: inp: 1: improperly formatted SHA3-256 checksum line \
             (unrecognised label 'SHA3-248')\n\
             treehash: inp: no properly formatted checksum lines found\n",
            1
        )
    );
}

/// b2sum.sh: truncated tags and a short hex line (lists that crashed or
/// read past their end in old coreutils) are no digest lines.
#[test]
fn b2sum_sh_crash_and_overflow_lists() {
    let dir = dir_with(&[
        (
            "crash.check",
            b"SHA3-256\nSHA3-256-\nSHA3-256(\nSHA3-256 (\nSHA3\n",
        ),
        ("overflow.check", b"0A0BA0"),
    ]);
    for list in ["crash.check", "overflow.check"] {
        assert_eq!(
            run(dir.path(), &["-c", list]),
            want(
                "",
                &format!("treehash: {list}: no properly formatted checksum lines found\n"),
                1
            )
        );
    }
}

/// coreutils' digest_check: with --status, a listed file that cannot be
/// read is still reported on standard error (its verdict is not printed);
/// a line naming `-` in a list read from standard input is malformed, and
/// standard input is named as coreutils names it.
#[test]
fn status_reports_unreadable_files_and_stdin_is_named() {
    let dir = dir_with(&[("sums", format!("{EMPTY}  gone\n").as_bytes())]);
    assert_eq!(
        run(dir.path(), &["--status", "-c", "sums"]),
        want("", "treehash: gone: No such file or directory\n", 1)
    );
    assert_eq!(
        run_in(dir.path(), &["-c", "-"], format!("{EMPTY}  -\n").as_bytes()),
        want(
            "",
            "treehash: 'standard input': no properly formatted checksum lines found\n",
            1
        )
    );
}

/// treehash's -c -z (coreutils 9.1 refuses -z with -c): a list with no NUL
/// byte but newlines was written without -z, and is said so, unread.
#[test]
fn zero_check_of_a_list_without_nul_says_so() {
    let dir = dir_with(&[("f", b"")]);
    fs::write(dir.path().join("sums"), format!("{EMPTY}  f\n{EMPTY}  f\n")).unwrap();
    assert_eq!(
        run(dir.path(), &["-c", "-z", "sums"]),
        want(
            "",
            "treehash: sums: no NUL-ended lines: was it written with -z?\n",
            1
        )
    );
    // One line with no ending and no newline is a line.
    fs::write(dir.path().join("one"), format!("{EMPTY}  f")).unwrap();
    assert_eq!(
        run(dir.path(), &["-c", "-z", "one"]),
        want("f: OK\0", "", 0)
    );
}

/// cksum-c.sh: a listed file whose reads fail with EIO (strace's fault
/// injection, on every read of that file, in every thread) is `FAILED open
/// or read`, and the other lines are checked. Skipped, as coreutils skips
/// it, where strace cannot inject faults. (The files are empty, as
/// coreutils' are; in a longer file treehash names the offset of the read
/// that failed: `read error at byte N: Input/output error`.)
#[test]
fn cksum_c_sh_a_file_that_fails_to_read() {
    let works = std::process::Command::new("strace")
        .args(["-o", "/dev/null", "-P", "_", "-e", "/read,splice"])
        .args(["-e", "fault=all:error=EIO", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !works {
        eprintln!("skipped: strace cannot inject faults here");
        return;
    }
    let dir = dir_with(&[("eio", b""), ("ok", b"")]);
    fs::write(
        dir.path().join("check.sum"),
        format!("{EMPTY}  eio\n{EMPTY}  ok\n"),
    )
    .unwrap();
    let out = std::process::Command::new("strace")
        .current_dir(dir.path())
        .args(["-f", "-o", "/dev/null", "-P", "eio"])
        .args(["-e", "/read,readv,pread64,preadv,splice"])
        .args(["-e", "fault=all:error=EIO"])
        .arg(common::cli::BIN)
        .args(["--backend=cpu", "-H", "0", "--check", "check.sum"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "eio: FAILED open or read\nok: OK\n"
    );
    let err = String::from_utf8(out.stderr).unwrap();
    let ours: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("treehash: "))
        .collect();
    assert_eq!(
        ours,
        [
            "treehash: eio: Input/output error",
            "treehash: WARNING: 1 listed file could not be read"
        ],
        "{err}"
    );
}
