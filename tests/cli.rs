//! The real `treehash` binary: every output form, check mode and its
//! failures, exit codes, standard input, several inputs, and errors.

mod common;

/// The command line's definitions, to check that the man page and the
/// completions cover every option without listing them here again.
#[allow(dead_code)]
#[path = "../src/cli/args.rs"]
mod args;

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use sha3::Digest;
use tempfile::TempDir;
use treehash::{Algorithm, TreeParams, reference};

fn treehash() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_treehash"));
    // Tests must not depend on whether this machine has a GPU.
    cmd.arg("--backend=cpu");
    cmd
}

/// A directory with a few files of the spec's test input.
fn fixture() -> (TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.bin");
    let b = dir.path().join("b b.bin");
    fs::write(&a, common::spec_input(100_003)).unwrap();
    fs::write(&b, common::spec_input(1000)).unwrap();
    (dir, a, b)
}

fn digest_hex(params: &TreeParams, path: &Path) -> String {
    hex::encode(reference::tree_hash(params, &fs::read(path).unwrap()))
}

fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

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

#[test]
fn parameters_on_the_command_line_reach_the_digest() {
    let (_dir, a, _) = fixture();
    let params = TreeParams::with_options(
        Algorithm::Shake256,
        3,
        5,
        Some(64),
        vec![0xab, 0xcd],
        Some(100),
    )
    .unwrap();
    let out = stdout_of(
        treehash()
            .args([
                "-a", "shake256", "-H", "3", "-D", "5", "-B", "64", "-l", "100",
            ])
            .args(["--prefix-hex", "abcd", "--no-names"])
            .arg(&a),
    );
    assert_eq!(out, format!("{}\n", digest_hex(&params, &a)));
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

#[test]
fn json_has_the_documented_fields() {
    let (_dir, a, b) = fixture();
    let out = stdout_of(treehash().args(["--json", "-H", "3"]).arg(&a).arg(&b));
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let first = &lines[0];
    let params = TreeParams::new(Algorithm::Sha3_256, 3, 4).unwrap();
    assert_eq!(first["name"], a.to_str().unwrap());
    assert_eq!(first["label"], "SHA3-256-LI(H=3,D=4,B=136)");
    assert_eq!(first["algorithm"], "sha3-256");
    assert_eq!(first["height"], 3);
    assert_eq!(first["degree"], 4);
    assert_eq!(first["block_size"], 136);
    assert_eq!(first["leaves"], 64);
    assert_eq!(first["keyed"], false);
    assert_eq!(first["output_len"], 32);
    assert_eq!(first["digest"], digest_hex(&params, &a));
    assert_eq!(first["bytes"], 100_003);
    assert_eq!(first["backend"], "cpu");
    assert!(first["seconds"].as_f64().unwrap() >= 0.0);
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

#[test]
fn raw_writes_the_digest_bytes_and_takes_one_input() {
    let (_dir, a, b) = fixture();
    let out = treehash().arg("--raw").arg(&a).output().unwrap();
    assert!(out.status.success());
    let params = TreeParams::default();
    assert_eq!(
        out.stdout,
        reference::tree_hash(&params, &fs::read(&a).unwrap())
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
fn standard_input_is_read_when_named_dash_or_when_no_file_is_given() {
    let data = common::spec_input(5000);
    let params = TreeParams::default();
    let want = hex::encode(reference::tree_hash(&params, &data));
    let piped = stdout_of(treehash().write_stdin(data.clone()));
    assert_eq!(piped, format!("{want}  -\n"));
    let dashed = stdout_of(treehash().arg("-").write_stdin(data));
    assert_eq!(dashed, format!("{want}  -\n"));
}

/// Like coreutils and b3sum: a regular file on standard input that was partly
/// read already is hashed from where its offset stands, and the offset is
/// left at its end.
#[test]
fn standard_input_is_hashed_from_its_current_offset() {
    use std::io::{Read, Seek};
    let (_dir, a, _) = fixture();
    let data = fs::read(&a).unwrap();
    let mut stdin = fs::File::open(&a).unwrap();
    stdin.read_exact(&mut [0u8; 100]).unwrap();
    let want = hex::encode(sha3::Sha3_256::digest(&data[100..]));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_treehash"))
        .args(["-H", "0", "--no-names", "-"])
        .stdin(stdin.try_clone().unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), want);
    assert_eq!(stdin.stream_position().unwrap(), data.len() as u64);
}

/// A closed standard input is an error, as in coreutils (`sha256sum: -: Bad
/// file descriptor`), not an empty input, whether it is named `-` or read
/// for want of a file; the other inputs are still hashed.
#[test]
fn a_closed_standard_input_is_an_error_not_an_empty_input() {
    let (_dir, a, _) = fixture();
    let with_stdin_closed = |args: &[&std::ffi::OsStr]| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" <&-"#)
            .arg(env!("CARGO_BIN_EXE_treehash"))
            .arg("--backend=cpu")
            .args(args)
            .output()
            .unwrap()
    };
    for args in [&[][..], &["-".as_ref()][..]] {
        let out = with_stdin_closed(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "treehash: -: Bad file descriptor\n",
            "{args:?}"
        );
    }
    let out = with_stdin_closed(&["-".as_ref(), a.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let params = TreeParams::default();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{}  {}\n", digest_hex(&params, &a), a.display())
    );
    // Nor is it an empty check list, or an empty prefix.
    let list = with_stdin_closed(&["-c".as_ref(), "-".as_ref()]);
    assert_eq!(list.status.code(), Some(1), "{list:?}");
    assert_eq!(
        String::from_utf8_lossy(&list.stderr),
        "treehash: -: Bad file descriptor\n"
    );
    let prefix = with_stdin_closed(&["--prefix-file".as_ref(), "-".as_ref(), a.as_os_str()]);
    assert_eq!(prefix.status.code(), Some(2), "{prefix:?}");
    assert_eq!(
        String::from_utf8_lossy(&prefix.stderr),
        "treehash: --prefix-file -: Bad file descriptor\n"
    );
    // Standard input that is open but empty is still the digest of nothing.
    let empty = stdout_of(treehash().arg("--no-names").write_stdin(Vec::new()));
    assert_eq!(
        empty.trim(),
        hex::encode(reference::tree_hash(&params, b""))
    );
}

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
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_treehash"));
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // Root reads any file (CI runs as root): run as nobody instead.
        cmd = std::process::Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_treehash"));
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

#[test]
fn invalid_parameters_exit_2_before_reading_anything() {
    let (_dir, a, _) = fixture();
    let cases: [(&[&str], &str); 8] = [
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
        hex::encode(reference::tree_hash(&params, data))
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
    Command::new(env!("CARGO_BIN_EXE_treehash"))
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
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_treehash"));
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
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_treehash"));
        cmd.arg("-c").arg(&list);
        cmd
    };
    check().assert().success().stderr("");
    check().arg("-v").assert().success().stderr(note);
}

// ---- check mode

/// Writes `lines` to a check file in `dir`.
fn check_file(dir: &Path, lines: &str) -> PathBuf {
    let path = dir.join("SUMS");
    fs::write(&path, lines).unwrap();
    path
}

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

#[test]
fn tagged_lines_use_their_own_parameters() {
    let (dir, a, b) = fixture();
    let h2 = stdout_of(
        treehash()
            .args(["--tag", "-H", "2", "-a", "sha3-512"])
            .arg(&a),
    );
    let h0 = stdout_of(
        treehash()
            .args(["--tag", "-H", "0", "-a", "shake128", "-l", "50"])
            .arg(&b),
    );
    let list = check_file(dir.path(), &(h2 + &h0));
    // The command line's (default) parameters play no part.
    treehash()
        .arg("-c")
        .arg(&list)
        .assert()
        .success()
        .stdout(format!("{}: OK\n{}: OK\n", a.display(), b.display()));
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
    treehash()
        .args(["-c", "--status"])
        .arg(&list)
        .assert()
        .code(1)
        .stdout("")
        .stderr("");
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
        .stderr(predicate::str::contains(": 2: improperly formatted line"));
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
    let line_warning = format!("treehash: {}: 2: improperly formatted line", list.display());
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
    // Overridden or not, each still needs --check.
    treehash()
        .args(["--status", "--quiet"])
        .arg(&a)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--check"));
}

/// `--backend gpu` in check mode with no usable GPU: device 999 exists on no
/// machine, so this holds with a CUDA driver or without one.
#[test]
fn gpu_backend_without_a_gpu_in_check_mode_is_exit_3() {
    let (dir, a, _) = fixture();
    let list = check_file(dir.path(), &stdout_of(treehash().arg(&a)));
    Command::new(env!("CARGO_BIN_EXE_treehash"))
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

// ---- bench and --verify

fn bench() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_treehash"));
    cmd.args(["bench", "--backend=cpu"]);
    cmd
}

#[test]
fn bench_prints_one_row_per_height_and_verifies_height_zero() {
    let (_dir, a, _) = fixture();
    let out = stdout_of(
        bench()
            .args(["--heights", "0..=3", "--repeat", "2", "--vs-plain"])
            .arg(&a),
    );
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("| cpu |")).collect();
    assert_eq!(rows.len(), 4, "{out}");
    for (height, row) in rows.iter().enumerate() {
        let params = TreeParams::new(Algorithm::Sha3_256, height as u32, 4).unwrap();
        let digest = digest_hex(&params, &a);
        assert!(row.starts_with(&format!("| cpu | {height} | {} |", params.leaf_count())));
        assert!(row.contains(&digest[..16]), "{row}");
    }
    // The speed-up is over the same backend's H = 0 row, which is 1.00 over
    // itself; the sha3 crate is a reference row apart, its speed-up none.
    assert!(
        out.contains("| backend | H | leaves | ms median | ms min–max | GB/s | × H=0 | leaf phase ms | reduce ms | digest |"),
        "{out}"
    );
    assert_eq!(rows[0].split(" | ").nth(6), Some("1.00"), "{out}");
    assert!(
        out.contains("| reference: plain SHA3-256 by the sha3 crate, 1 thread | – | – |"),
        "{out}"
    );
    assert!(out.contains("H=0 on cpu: PASS"));
    // No GPU took part: no GPU columns.
    assert!(!out.contains("copies") && !out.contains("kernels"), "{out}");
    // The spread: min–max around the median.
    for row in &rows {
        let cells: Vec<&str> = row.split(" | ").collect();
        let median: f64 = cells[3].parse().unwrap();
        let (min, max) = cells[4].split_once('–').unwrap();
        let (min, max): (f64, f64) = (min.parse().unwrap(), max.parse().unwrap());
        assert!(min <= median && median <= max, "{row}");
    }
}

#[test]
fn bench_json_parses_and_has_the_documented_fields() {
    let (_dir, a, _) = fixture();
    let out = stdout_of(
        bench()
            .args([
                "--heights",
                "0,2,5",
                "--repeat",
                "1",
                "--json",
                "--vs-plain",
            ])
            .args(["-a", "shake128", "-l", "40"])
            .arg(&a),
    );
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["bytes"], 100_003);
    assert_eq!(report["algorithm"], "shake128");
    assert_eq!(report["degree"], 4);
    assert_eq!(report["repeat"], 1);
    assert_eq!(report["verification"][0]["verdict"], "PASS");
    assert_eq!(report["sha3_crate"]["label"], "SHAKE128");
    assert!(report["sha3_crate"]["median_seconds"].as_f64().unwrap() > 0.0);
    // The CPU started no GPU: its start-up costs are null, not 0.
    assert_eq!(report["startup"][0]["backend"], "cpu");
    assert!(report["startup"][0]["gpu_init_ms"].is_null());
    assert!(report["startup"][0]["compile_ms"].is_null());
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let h0_seconds = rows[0]["median_seconds"].as_f64().unwrap();
    for (row, height) in rows.iter().zip([0u32, 2, 5]) {
        let params =
            TreeParams::with_options(Algorithm::Shake128, height, 4, None, vec![], Some(40))
                .unwrap();
        assert_eq!(row["backend"], "cpu");
        assert_eq!(row["height"], height);
        assert_eq!(row["leaves"], params.leaf_count());
        assert_eq!(row["digest"], digest_hex(&params, &a));
        let seconds =
            ["min_seconds", "median_seconds", "max_seconds"].map(|key| row[key].as_f64().unwrap());
        assert!(0.0 < seconds[0] && seconds[0] <= seconds[1] && seconds[1] <= seconds[2]);
        let rate = 100_003.0 / seconds[1] / 1e9;
        assert!(
            (row["gb_per_s"].as_f64().unwrap() / rate - 1.0).abs() < 1e-9,
            "{row}"
        );
        // Over this backend's own H = 0 row.
        let speedup = row["speedup_vs_h0"].as_f64().unwrap();
        assert!(
            (speedup / (h0_seconds / seconds[1]) - 1.0).abs() < 1e-9,
            "{row}"
        );
        assert!(row["phases"]["leaves_ms"].as_f64().unwrap() >= 0.0);
        // GPU phases are null where no GPU ran, not 0.
        assert!(row["phases"]["copies_busy_ms"].is_null(), "{row}");
        assert!(row["phases"]["kernels_busy_ms"].is_null(), "{row}");
    }
    assert_eq!(rows[0]["speedup_vs_h0"], 1.0);
}

/// Without H = 0 among the heights there is nothing to take a speed-up over.
#[test]
fn bench_without_height_zero_has_no_speedup() {
    let (_dir, a, _) = fixture();
    let out = stdout_of(
        bench()
            .args(["--heights", "2,3", "--repeat", "1", "--json"])
            .arg(&a),
    );
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    for row in report["rows"].as_array().unwrap() {
        assert!(row["speedup_vs_h0"].is_null(), "{row}");
        assert!(row["gb_per_s"].as_f64().unwrap() > 0.0, "{row}");
    }
    assert!(report["sha3_crate"].is_null());
    // H = 0 is still checked against plain SHA-3.
    assert_eq!(report["verification"][0]["verdict"], "PASS");
}

/// A chart small enough to sit in plotters' buffer used to lose its write
/// error; it is written by us now.
#[test]
fn a_chart_that_cannot_be_written_is_an_error_however_small() {
    let (dir, a, _) = fixture();
    let full = dir.path().join("full.svg");
    std::os::unix::fs::symlink("/dev/full", &full).unwrap();
    bench()
        .args(["--heights", "0", "--repeat", "1", "--plot"])
        .arg(&full)
        .arg(&a)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "--plot {}: No space left on device",
            full.display()
        )));
}

/// The chart's every height is labelled, and its log axis has a labelled
/// tick below the slowest run and above the fastest (the reference row's
/// too), with neighbouring ticks at most 2.5 × apart over this range, so
/// that every value drawn can be read off it.
#[test]
fn bench_plot_is_well_formed_svg_whose_every_value_can_be_read() {
    let (dir, a, _) = fixture();
    let svg = dir.path().join("chart.svg");
    let out = stdout_of(
        bench()
            .args([
                "--heights",
                "0..=6",
                "--repeat",
                "2",
                "--vs-plain",
                "--json",
            ])
            .arg("--plot")
            .arg(&svg)
            .arg(&a),
    );
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rates: Vec<f64> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .chain([&report["sha3_crate"]])
        .flat_map(|row| ["min_seconds", "max_seconds"].map(|k| row[k].as_f64().unwrap()))
        .map(|seconds| 100_003.0 / seconds / 1e9)
        .collect();
    let text = fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let texts = doc.descendants().filter(|n| n.has_tag_name("text"));
    let label = |n: roxmltree::Node| n.text().map(|t| t.trim().to_string());
    let labels: Vec<String> = texts.clone().filter_map(label).collect();
    for height in 0..=6 {
        assert!(labels.contains(&height.to_string()), "{labels:?}");
    }
    assert!(labels.iter().any(|l| l == "cpu"), "{labels:?}");
    assert!(
        labels
            .iter()
            .any(|l| l.starts_with("reference: plain SHA3-256")),
        "{labels:?}"
    );
    // The y axis's labels are the ones drawn to the left of it (end-anchored).
    let mut ticks: Vec<f64> = texts
        .filter(|n| n.attribute("text-anchor") == Some("end"))
        .filter_map(label)
        .map(|l| l.parse().unwrap())
        .collect();
    ticks.sort_by(f64::total_cmp);
    let (bottom, top) = (ticks[0], ticks[ticks.len() - 1]);
    for rate in rates {
        assert!(bottom < rate && rate < top, "{rate} outside {ticks:?}");
    }
    assert!(
        ticks.windows(2).all(|w| w[1] / w[0] <= 2.5 + 1e-9),
        "{ticks:?}"
    );
}

/// The chart is SVG: another extension is a usage error before anything is
/// measured or any file made.
#[test]
fn bench_refuses_a_chart_name_that_is_not_svg() {
    let (dir, a, _) = fixture();
    for name in ["chart.png", "chart", "chart.svg.pdf"] {
        let chart = dir.path().join(name);
        bench()
            .args(["--heights", "0", "--repeat", "1", "--plot"])
            .arg(&chart)
            .arg(&a)
            .assert()
            .code(2)
            .stdout("")
            .stderr(format!(
                "treehash: --plot {}: the chart is written as SVG; give a file name ending in .svg\n",
                chart.display()
            ));
        assert!(!chart.exists(), "{name}");
    }
    let upper = dir.path().join("CHART.SVG");
    bench()
        .args(["--heights", "0", "--repeat", "1", "--plot"])
        .arg(&upper)
        .arg(&a)
        .assert()
        .success();
    assert!(fs::read_to_string(&upper).unwrap().starts_with("<svg"));
}

/// An empty file has no throughput: it is refused before anything runs,
/// with or without a chart, and no chart file is left behind.
#[test]
fn bench_refuses_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    fs::write(&empty, b"").unwrap();
    let chart = dir.path().join("chart.svg");
    for plot in [false, true] {
        let mut cmd = bench();
        if plot {
            cmd.arg("--plot").arg(&chart);
        }
        cmd.arg(&empty).assert().code(1).stdout("").stderr(format!(
            "treehash: {}: the file is empty: bench has nothing to time (--verify checks an \
                 empty file's H = 0 digest)\n",
            empty.display()
        ));
    }
    assert!(!chart.exists());
    treehash()
        .arg("--verify")
        .arg(&empty)
        .assert()
        .success()
        .stderr(predicate::str::contains("PASS"));
}

#[test]
fn height_zero_verification_passes_on_many_sizes() {
    let dir = tempfile::tempdir().unwrap();
    for size in [0usize, 1, 135, 136, 137, 4096, 100_003] {
        let path = dir.path().join(format!("f{size}"));
        fs::write(&path, common::spec_input(size)).unwrap();
        // bench refuses an empty file (bench_refuses_an_empty_file).
        if size > 0 {
            bench()
                .args(["--heights", "0", "--repeat", "1"])
                .arg(&path)
                .assert()
                .success()
                .stdout(predicate::str::contains("H=0 on cpu: PASS"));
        }
        treehash()
            .args(["--verify", "-a", "sha3-384", "--prefix-hex", "0102"])
            .arg(&path)
            .assert()
            .success()
            .stderr(predicate::str::contains(
                "H=0 on cpu equals plain SHA3-384 of prefix ‖ file (sha3 crate): PASS",
            ));
    }
}

#[test]
fn bench_refuses_standard_input_and_checks_the_chart_path_first() {
    let (dir, a, _) = fixture();
    bench().arg("-").assert().code(2).stdout("").stderr(
        "treehash: bench needs a regular file, not standard input (it reads the file many times)\n",
    );
    // The chart's path is refused before anything is measured.
    let nowhere = dir.path().join("no-such-dir").join("chart.svg");
    bench()
        .args(["--heights", "0", "--repeat", "1", "--plot"])
        .arg(&nowhere)
        .arg(&a)
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!(
            "treehash: --plot {}: No such file or directory\n",
            nowhere.display()
        ));
    // A chart file made for a run that measures nothing (its one backend
    // cannot start) is taken away again; so is one whose run could not
    // write its table.
    let chart = dir.path().join("chart.svg");
    // A bench whose one backend, a GPU that does not exist, measures nothing.
    let on_no_gpu = || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_treehash"));
        cmd.args(["bench", "--backend", "gpu", "--device", "999"])
            .args(["--heights", "0", "--repeat", "1", "--plot"])
            .arg(&chart)
            .arg(&a);
        cmd
    };
    on_no_gpu()
        .assert()
        .code(3)
        .stderr(predicate::str::contains("nothing was measured"));
    assert!(!chart.exists());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_treehash"))
        .args([
            "bench",
            "--backend",
            "cpu",
            "--heights",
            "0",
            "--repeat",
            "1",
            "--plot",
        ])
        .arg(&chart)
        .arg(&a)
        .stdout(fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(!chart.exists());
    // A file that was there before is never removed, even left empty.
    fs::write(&chart, "").unwrap();
    on_no_gpu().assert().code(3);
    assert!(chart.exists());
}

/// A GPU asked for by name that cannot start (device 999 exists nowhere):
/// the CPU's rows are still measured, the GPU's say why they were skipped,
/// and the exit code is the GPU's.
#[test]
fn bench_measures_the_cpu_and_skips_a_gpu_that_cannot_start() {
    let (_dir, a, _) = fixture();
    let out = Command::new(env!("CARGO_BIN_EXE_treehash"))
        .args(["bench", "--backend", "cpu,gpu", "--device", "999"])
        // A height given twice is measured once.
        .args(["--heights", "0,3,0", "--repeat", "1", "--json"])
        .arg(&a)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("treehash: --backend gpu: GPU: ")
            && stderr.ends_with("(its rows were skipped)\n"),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["unavailable"][0]["backend"], "gpu");
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for row in &rows[..2] {
        assert_eq!(row["backend"], "cpu");
        assert!(row["skipped"].is_null());
        let params = TreeParams::new(
            Algorithm::Sha3_256,
            row["height"].as_u64().unwrap() as u32,
            4,
        )
        .unwrap();
        assert_eq!(row["digest"], digest_hex(&params, &a));
    }
    for row in &rows[2..] {
        assert_eq!(row["backend"], "gpu");
        assert!(
            row["skipped"]
                .as_str()
                .unwrap()
                .starts_with("unavailable: GPU: "),
            "{row}"
        );
        // Nothing measured: no times, rates or phases, rather than zeros.
        for key in [
            "median_seconds",
            "gb_per_s",
            "speedup_vs_h0",
            "phases",
            "digest",
        ] {
            assert!(row.get(key).is_none(), "{key}: {row}");
        }
    }
    let verdicts: Vec<&str> = report["verification"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["PASS", "SKIPPED"]);
    // The table: the GPU's rows say why, and no GPU columns appear.
    let out = Command::new(env!("CARGO_BIN_EXE_treehash"))
        .args(["bench", "--backend", "cpu,gpu", "--device", "999"])
        .args(["--heights", "0", "--repeat", "1"])
        .arg(&a)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        !table.contains("copies") && !table.contains("kernels"),
        "{table}"
    );
    let gpu_row = table.lines().find(|l| l.starts_with("| gpu |")).unwrap();
    assert!(
        gpu_row.starts_with("| gpu | 0 | 1 | skipped: unavailable: GPU: "),
        "{gpu_row}"
    );
    assert!(!gpu_row.contains("0.0"), "{gpu_row}");
}

#[test]
fn bench_refuses_bad_heights_and_missing_files() {
    let (dir, a, _) = fixture();
    bench()
        .args(["--heights", "0..=13"])
        .arg(&a)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("H=13"));
    bench().args(["--heights", "x"]).arg(&a).assert().code(2);
    bench()
        .arg(dir.path().join("nope"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("No such file or directory"));
}

/// A list of files: `common::spec_input` of each size, in `dir`.
fn list_of(dir: &Path, sizes: &[usize]) -> Vec<PathBuf> {
    sizes
        .iter()
        .enumerate()
        .map(|(i, &size)| {
            let path = dir.join(format!("list-{i}"));
            fs::write(&path, common::spec_input(size)).unwrap();
            path
        })
        .collect()
}

/// Two or more files are measured as a list, hashed side by side: every
/// rate is over their bytes in all, each file's H = 0 digest is checked
/// against plain SHA-3, and a list has no one digest or phases.
#[test]
fn bench_measures_a_list_of_files_and_checks_each_at_height_zero() {
    let dir = tempfile::tempdir().unwrap();
    // An empty file may be one of a list's.
    let sizes = [0, 1, 136, 137, 5000, 100_003];
    let files = list_of(dir.path(), &sizes);
    let total: usize = sizes.iter().sum();
    let out = stdout_of(
        bench()
            .args([
                "--heights",
                "0,2,3",
                "--repeat",
                "2",
                "--json",
                "--vs-plain",
            ])
            .args(&files),
    );
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(report["file"].is_null(), "{report}");
    assert_eq!(report["files"], sizes.len());
    assert_eq!(report["bytes"], total);
    let v = &report["verification"][0];
    assert_eq!(v["verdict"], "PASS", "{v}");
    assert_eq!(v["files_checked"], sizes.len());
    assert_eq!(v["files_failed"], 0);
    assert_eq!(v["against"], "plain SHA3-256 by the sha3 crate");
    assert!(report["sha3_crate"]["digest"].is_null());
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for (row, height) in rows.iter().zip([0u32, 2, 3]) {
        assert_eq!(row["height"], height);
        assert_eq!(row["function"], "sha3-256");
        assert!(row["skipped"].is_null());
        let median = row["median_seconds"].as_f64().unwrap();
        let gb = total as f64 / median / 1e9;
        assert!((row["gb_per_s"].as_f64().unwrap() / gb - 1.0).abs() < 1e-9);
        let files_per_s = sizes.len() as f64 / median;
        assert!((row["files_per_s"].as_f64().unwrap() / files_per_s - 1.0).abs() < 1e-9);
        assert!(row["digest"].is_null() && row["phases"].is_null(), "{row}");
    }
    // The table says it is a list, with a files/s column.
    let table = stdout_of(
        bench()
            .args(["--heights", "0", "--repeat", "1"])
            .args(&files),
    );
    assert!(
        table.starts_with(&format!(
            "treehash bench: a list of 6 files ({total} bytes in all, hashed side by side"
        )),
        "{table}"
    );
    assert!(
        table
            .contains("H=0 on cpu: PASS (6 files, each equal to plain SHA3-256 by the sha3 crate)"),
        "{table}"
    );
    assert!(table.contains("| GB/s | files/s | × H=0 |"), "{table}");
    // A list of one file is the one file.
    let one = stdout_of(
        bench()
            .args(["--heights", "0", "--repeat", "1", "--json"])
            .arg(&files[5]),
    );
    let one: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(one["file"], files[5].display().to_string());
    assert_eq!((&one["files"], &one["bytes"]), (&1.into(), &100_003.into()));
    let params = TreeParams::new(Algorithm::Sha3_256, 0, 4).unwrap();
    assert_eq!(one["rows"][0]["digest"], digest_hex(&params, &files[5]));
    assert_eq!(
        one["verification"][0]["digest"],
        digest_hex(&params, &files[5])
    );
}

/// `--also` adds functions: a standard function gets one row per backend,
/// with no height, its speed-up over the first LI function's H = 0 row and
/// its digest checked against the reference code.
#[test]
fn bench_measures_standard_functions_beside_the_li_rows() {
    let (dir, a, _) = fixture();
    let svg = dir.path().join("chart.svg");
    let out = stdout_of(
        bench()
            .args([
                "--heights",
                "0,2",
                "--repeat",
                "2",
                "--json",
                "--also",
                "KT128",
            ])
            .arg("--plot")
            .arg(&svg)
            .arg(&a),
    );
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = report["rows"].as_array().unwrap();
    let functions: Vec<(&str, Option<u64>)> = rows
        .iter()
        .map(|r| (r["function"].as_str().unwrap(), r["height"].as_u64()))
        .collect();
    assert_eq!(
        functions,
        [
            ("sha3-256", Some(0)),
            ("sha3-256", Some(2)),
            ("kt128", None)
        ]
    );
    let kt = &rows[2];
    assert!(kt["leaves"].is_null() && kt["skipped"].is_null(), "{kt}");
    assert_eq!(kt["label"], "KT128");
    let data = fs::read(&a).unwrap();
    let reference = hex::encode(reference::kangaroo::kt128(&data, b"", 32));
    assert_eq!(kt["digest"], reference);
    let hashed = stdout_of(treehash().args(["-a", "kt128", "--no-names"]).arg(&a));
    assert_eq!(hashed, format!("{reference}\n"));
    let h0 = rows[0]["median_seconds"].as_f64().unwrap();
    let speedup = h0 / kt["median_seconds"].as_f64().unwrap();
    assert!((kt["speedup_vs_h0"].as_f64().unwrap() / speedup - 1.0).abs() < 1e-9);
    let verdicts: Vec<(&str, &str)> = report["verification"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["function"].as_str().unwrap(),
                v["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(verdicts, [("sha3-256", "PASS"), ("kt128", "PASS")]);
    assert_eq!(report["verification"][1]["expected"], reference);
    assert_eq!(
        report["verification"][1]["against"],
        "KT128 by the reference code"
    );
    // The chart draws it as a line labelled with its name and backend.
    let text = fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let labels: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(str::trim))
        .collect();
    assert!(labels.contains(&"kt128 on cpu"), "{labels:?}");
    // The table: a function column, and no height for KT.
    let table = stdout_of(
        bench()
            .args(["--heights", "0", "--repeat", "1", "--also", "kt128"])
            .arg(&a),
    );
    assert!(
        table.contains("| backend | function | H | leaves |"),
        "{table}"
    );
    assert!(table.contains("| cpu | kt128 | – | – |"), "{table}");
    assert!(
        table.contains("kt128 on cpu: PASS (KT128 by the reference code: "),
        "{table}"
    );
    assert!(table.contains("sha3-256 H=0 on cpu: PASS"), "{table}");
    // The options given apply to every function: here the output length.
    let out = stdout_of(
        bench()
            .args([
                "-a",
                "shake128",
                "-l",
                "40",
                "--also",
                "kt256,parallelhash128",
            ])
            .args(["--heights", "0", "--repeat", "1", "--json"])
            .arg(&a),
    );
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = report["rows"].as_array().unwrap();
    for (row, name) in rows[1..].iter().zip(["kt256", "parallelhash128"]) {
        let want = stdout_of(
            treehash()
                .args(["-a", name, "-l", "40", "--no-names"])
                .arg(&a),
        );
        assert_eq!(
            format!("{}\n", row["digest"].as_str().unwrap()),
            want,
            "{row}"
        );
    }
    // A standard function alone has no speed-up to take.
    let out = stdout_of(
        bench()
            .args(["-a", "turboshake256", "--repeat", "1", "--json"])
            .arg(&a),
    );
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["rows"].as_array().unwrap().len(), 1);
    assert!(report["rows"][0]["speedup_vs_h0"].is_null());
    assert!(report["degree"].is_null());
    assert_eq!(report["verification"][0]["verdict"], "PASS");
}

/// A list can mix standard functions with LI: each file of it is checked.
#[test]
fn bench_checks_every_file_of_a_list_for_a_standard_function() {
    let dir = tempfile::tempdir().unwrap();
    let files = list_of(dir.path(), &[0, 8191, 8192, 8193, 30_000]);
    let out = stdout_of(
        bench()
            .args([
                "-a",
                "parallelhash256",
                "-B",
                "1000",
                "--also",
                "parallelhash128",
            ])
            .args(["--repeat", "1", "--json"])
            .args(&files),
    );
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    for v in report["verification"].as_array().unwrap() {
        assert_eq!(
            (&v["verdict"], &v["files_checked"]),
            (&"PASS".into(), &5.into()),
            "{v}"
        );
    }
    let rows = report["rows"].as_array().unwrap();
    let labels: Vec<&str> = rows.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        ["ParallelHash256(B=1000)", "ParallelHash128(B=1000)"]
    );
    // TurboSHAKE, one sponge, and KT over and under one chunk.
    let out = stdout_of(
        bench()
            .args(["-a", "turboshake128", "--also", "kt256", "--repeat", "1"])
            .args(&files),
    );
    assert!(
        out.contains("turboshake128 on cpu: PASS (5 files, each equal to TurboSHAKE128 by the reference code)"),
        "{out}"
    );
    assert!(
        out.contains("kt256 on cpu: PASS (5 files, each equal to KT256 by the reference code)"),
        "{out}"
    );
}

#[test]
fn bench_refuses_lists_it_cannot_time() {
    let dir = tempfile::tempdir().unwrap();
    let files = list_of(dir.path(), &[10, 20]);
    // No file at all.
    bench()
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("<FILE>..."));
    // Standard input among the files: a usage error, before anything runs.
    bench()
        .arg(&files[0])
        .arg("-")
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "treehash: bench needs regular files, not standard input (it reads each file many \
             times)\n",
        );
    // A directory, and a file that is missing: each is named.
    let missing = dir.path().join("missing");
    bench()
        .arg(&files[0])
        .arg(dir.path())
        .arg(&missing)
        .arg(&files[1])
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!(
            "treehash: {d}: a directory: bench takes regular files (name those in it, e.g. \
             {d}/*)\ntreehash: {}: No such file or directory\n",
            missing.display(),
            d = dir.path().display(),
        ));
    // Files that are all empty have nothing to time.
    let empty = list_of(dir.path(), &[0, 0]);
    bench()
        .args(&empty)
        .assert()
        .code(1)
        .stdout("")
        .stderr("treehash: the 2 files are all empty: bench has nothing to time\n");
    // An option a function of --also does not take, and a function that
    // does not exist.
    bench()
        .args(["-D", "2", "--also", "kt128"])
        .arg(&files[0])
        .assert()
        .code(2)
        .stderr("treehash: -D/--degree does not apply to kt128: its tree is fixed by RFC 9861\n");
    bench()
        .args(["--also", "kt512"])
        .arg(&files[0])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "invalid value 'kt512' for '--also <FUNCTION>'",
        ));
    // --vs-plain needs an LI function to take plain SHA-3 of.
    bench()
        .args(["-a", "kt128", "--vs-plain"])
        .arg(&files[0])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--vs-plain times plain SHA-3 of an LI function",
        ));
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

// ---- bounds and messages

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
fn reversed_empty_and_huge_height_ranges_are_explained() {
    let (_dir, a, _) = fixture();
    for (heights, message) in [
        ("5..=2", "'5..=2' is a reversed range (5 > 2)"),
        ("5..2", "'5..2' is a reversed range (5 > 2)"),
        ("2..2", "'2..2' is an empty range"),
        ("0..=4000000000", "holds 4000000001 heights (at most 64)"),
    ] {
        bench()
            .args(["--heights", heights])
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

// ---- --generate

/// The long options of the top-level command that the man page and the
/// completions must show (hidden ones excepted).
fn long_options() -> Vec<String> {
    let options = long_options_of(&args::command());
    assert!(options.len() > 20, "{options:?}");
    options
}

fn long_options_of(command: &clap::Command) -> Vec<String> {
    command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .filter_map(|arg| arg.get_long().map(str::to_string))
        .collect()
}

fn generated(kind: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_treehash"))
        .args(["--generate", kind])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A man page with title `title`, the usual sections and every option.
fn assert_man_page(man: &str, title: &str, options: &[String]) {
    // clap_mangen defines the Aq string first; the title comes before any section.
    let title_line = man
        .lines()
        .position(|l| l.starts_with(&format!(".TH {title} 1 ")));
    let first_section = man.lines().position(|l| l.starts_with(".SH "));
    assert!(title_line.is_some() && title_line < first_section, "{man}");
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS"] {
        assert!(man.lines().any(|l| l == section), "{title}: {section}");
    }
    for option in options {
        // roff writes each '-' as '\-'.
        let roff = format!("--{option}").replace('-', "\\-");
        assert!(man.contains(&roff), "{title}'s man page lacks {roff}");
    }
}

#[test]
fn generate_man_writes_a_man_page_with_every_option() {
    let man = generated("man");
    assert_man_page(&man, "treehash", &long_options());
    // The main page refers to the bench page, which man-bench makes.
    assert!(man.contains("treehash\\-bench(1)"), "{man}");
    let mut command = args::command();
    command.build();
    let bench = command.find_subcommand("bench").unwrap();
    let bench_options = long_options_of(bench);
    assert!(
        bench_options.contains(&"plot".to_string()),
        "{bench_options:?}"
    );
    assert_man_page(&generated("man-bench"), "treehash-bench", &bench_options);
}

#[test]
fn generate_writes_completions_for_every_shell_with_every_option() {
    // Each shell's marker of a well-formed script, and how it writes an option.
    type Spellings = fn(&str) -> Vec<String>;
    let shells: [(&str, &str, Spellings); 4] = [
        ("complete-bash", "_treehash() {", |o| {
            vec![format!("--{o} ")]
        }),
        ("complete-zsh", "#compdef treehash", |o| {
            vec![format!("--{o}["), format!("--{o}=[")]
        }),
        ("complete-fish", "complete -c treehash", |o| {
            vec![format!(" -l {o} ")]
        }),
        (
            "complete-powershell",
            "Register-ArgumentCompleter -Native -CommandName 'treehash'",
            |o| vec![format!("'--{o}'")],
        ),
    ];
    let options = long_options();
    for (kind, marker, spellings) in shells {
        let script = generated(kind);
        assert!(script.contains(marker), "{kind}: no {marker}");
        for option in &options {
            let written = spellings(option);
            assert!(
                written.iter().any(|w| script.contains(w)),
                "{kind} lacks {written:?}"
            );
        }
    }
    let bash = generated("complete-bash");
    assert!(bash.contains("complete -F _treehash"), "{bash}");
}

#[test]
fn generate_takes_no_file_and_nothing_else() {
    let (_dir, a, _) = fixture();
    treehash()
        .args(["--generate", "man"])
        .arg(&a)
        .assert()
        .code(2)
        .stdout("");
    Command::new(env!("CARGO_BIN_EXE_treehash"))
        .args(["--generate", "nroff"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid value 'nroff'"));
}

// ---- writing standard output

/// The binary with standard output on /dev/full.
fn into_full(args: &[&str], file: Option<&Path>) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_treehash"));
    cmd.args(args);
    if let Some(file) = file {
        cmd.arg(file);
    }
    cmd.stdout(fs::File::create("/dev/full").unwrap())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The binary started by a shell with standard output closed (`>&-`).
fn with_stdout_closed(args: &[&str], file: Option<&Path>) -> std::process::Output {
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(r#"exec "$0" "$@" >&-"#)
        .arg(env!("CARGO_BIN_EXE_treehash"))
        .args(args);
    if let Some(file) = file {
        cmd.arg(file);
    }
    cmd.stdin(std::process::Stdio::null()).output().unwrap()
}

fn assert_one_write_error(out: &std::process::Output, reason: &str, what: &str) {
    assert_eq!(out.status.code(), Some(1), "{what}: {out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr
            .matches(&format!("treehash: standard output: {reason}\n"))
            .count(),
        1,
        "{what}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
}

#[test]
fn write_errors_are_reported_once_with_exit_1() {
    let (dir, a, b) = fixture();
    let list = check_file(dir.path(), &stdout_of(treehash().arg(&a).arg(&b)));
    let cases: [(&[&str], Option<&Path>); 11] = [
        (&["--backend=cpu"], Some(&a)),
        (&["--backend=cpu", "--json"], Some(&a)),
        (&["--backend=cpu", "--raw"], Some(&a)),
        (&["--backend=cpu", "-c"], Some(&list)),
        (
            &["bench", "--backend=cpu", "--heights", "0", "--repeat", "1"],
            Some(&a),
        ),
        (&["--help"], None),
        (&["-h"], None),
        (&["--version"], None),
        (&["bench", "--help"], None),
        (&["--generate", "man"], None),
        (&["--generate", "complete-bash"], None),
    ];
    for (args, file) in cases {
        let what = format!("{args:?} > /dev/full");
        assert_one_write_error(&into_full(args, file), "No space left on device", &what);
        let what = format!("{args:?} >&-");
        assert_one_write_error(
            &with_stdout_closed(args, file),
            "Bad file descriptor",
            &what,
        );
    }
    // Nothing to write, nothing to fail.
    let quiet = with_stdout_closed(&["--backend=cpu", "-c", "--status"], Some(&list));
    assert_eq!(quiet.status.code(), Some(0), "{quiet:?}");
}

#[test]
fn a_closed_pipe_ends_the_run_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let (_dir, _, b) = fixture();
    // Far more output than a pipe holds, so a write meets the closed pipe.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_treehash"))
        .args(["--backend=cpu", "-H", "0"])
        .args(std::iter::repeat_n(&b, 3000))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

// ---- a read input that shrinks

/// One input of a list hashed alone (a one-sponge tree, H = 0) is read, not
/// mapped: cut while it is read, it gets the same one error, and the next
/// input is hashed.
#[test]
fn a_file_truncated_while_it_is_read_gets_one_error_and_the_run_goes_on() {
    use std::time::{Duration, Instant};
    let (dir, next, _) = fixture();
    let path = dir.path().join("shrinks.bin");
    let file = fs::File::create(&path).unwrap();
    // Sparse: no disk is written, but one sponge takes seconds over it.
    file.set_len(2 << 30).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_treehash"))
        .args(["--backend=cpu", "-H", "0"])
        .arg(&path)
        .arg(&next)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the file is open (and being read), cut it.
    let fds = format!("/proc/{}/fd", child.id());
    let deadline = Instant::now() + Duration::from_secs(30);
    let open = || {
        fs::read_dir(&fds).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| fs::read_link(e.path()).is_ok_and(|target| target == path))
        })
    };
    while !open() {
        if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "the input was never seen open: {:?}",
                child.wait_with_output()
            );
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    file.set_len(0).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!("treehash: {}: ", path.display()))
            && stderr.contains("shrank")
            && stderr.lines().count() == 1,
        "{stderr}"
    );
    let params = TreeParams::new(Algorithm::Sha3_256, 0, 4).unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{}  {}\n", digest_hex(&params, &next), next.display())
    );
}

// ---- a mapped input that shrinks

#[test]
fn a_file_truncated_while_it_is_hashed_gets_one_error_and_the_run_goes_on() {
    use std::time::{Duration, Instant};
    let (dir, next, _) = fixture();
    let path = dir.path().join("shrinks.bin");
    let file = fs::File::create(&path).unwrap();
    // Sparse: no disk is written, but hashing it takes a second or more.
    // (A tree of several leaves: it is mapped, window by window, on the
    // pool; a list's one-sponge input is read instead, on one thread.)
    file.set_len(2 << 30).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_treehash"))
        .args(["--backend=cpu", "-H", "8"])
        .arg(&path)
        .arg(&next)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the file is mapped, cut it: the pages past the new end are gone.
    let maps = format!("/proc/{}/maps", child.id());
    let deadline = Instant::now() + Duration::from_secs(30);
    while !fs::read_to_string(&maps).is_ok_and(|m| m.contains("shrinks.bin")) {
        if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "the input was never seen mapped: {:?}",
                child.wait_with_output()
            );
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    file.set_len(0).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    // Whether the next window finds the file shorter or the cut lands in the
    // window being hashed (SIGBUS, survived), the same one line, and the
    // next input is hashed.
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "treehash: {}: the file changed while it was being hashed (it shrank from \
             2147483648 to 0 bytes while being read); no digest\n",
            path.display()
        )
    );
    let params = TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{}  {}\n", digest_hex(&params, &next), next.display())
    );
}
