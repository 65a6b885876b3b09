//! Standard input and standard output, whatever the command: standard
//! input (read from its offset; closed is an error, not an empty input),
//! standard output that cannot be written (/dev/full, closed, a closed
//! pipe), and an input that shrinks while it is read or mapped. If you add
//! a test of standard input, standard output or an input that changes
//! under the tool, it goes here.

mod common;

use std::fs;
use std::path::Path;

use common::cli::{BIN, check_file, digest_hex, fixture, stdout_of, treehash};
use common::reference_tree;
use sha3::Digest;
use treehash::{Algorithm, TreeParams};

// ---- standard input

#[test]
fn standard_input_is_read_when_named_dash_or_when_no_file_is_given() {
    let data = common::spec_input(5000);
    let params = TreeParams::default();
    let want = hex::encode(treehash_reference::tree_hash(
        &reference_tree(&params),
        &data,
    ));
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
    let out = std::process::Command::new(BIN)
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
            .arg(BIN)
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
    // Nor is it an empty check list (named as coreutils names a list on
    // standard input), or an empty prefix.
    let list = with_stdin_closed(&["-c".as_ref(), "-".as_ref()]);
    assert_eq!(list.status.code(), Some(1), "{list:?}");
    assert_eq!(
        String::from_utf8_lossy(&list.stderr),
        "treehash: 'standard input': Bad file descriptor\n"
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
        hex::encode(treehash_reference::tree_hash(&reference_tree(&params), b""))
    );
}

// ---- writing standard output

/// The binary with standard output on /dev/full.
fn into_full(args: &[&str], file: Option<&Path>) -> std::process::Output {
    let mut cmd = std::process::Command::new(BIN);
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
        .arg(BIN)
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
    let mut child = std::process::Command::new(BIN)
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
    let mut child = std::process::Command::new(BIN)
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
    let mut child = std::process::Command::new(BIN)
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
