//! The files the tool writes (src/output_file.rs): `part -o` and
//! `bench --plot` never write through a symbolic link that another user
//! could have planted, write a device or FIFO in place and never replace
//! it, make a keyed part readable by its owner only, refuse a directory by
//! name, and never leave a part half-written or a temporary behind.
//! (`bench --json` prints to standard output and writes no file.) If you
//! add a test of how the tool writes a file, it goes here.

mod common;

use std::fs;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::cli::BIN;
use tempfile::TempDir;

/// A file to make parts of, in a fresh directory.
fn fixture() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.bin");
    fs::write(&file, common::spec_input(50_000)).unwrap();
    (dir, file)
}

/// The one part of a one-part split of `file`, on the CPU, written to
/// `out`, with `extra` options (one part: no warning of short runs, so a
/// failure's message is all of standard error).
fn part(file: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args([
        "part",
        "--backend=cpu",
        "-H",
        "2",
        "--parts",
        "1",
        "--index",
        "0",
    ])
    .args(extra)
    .arg(file)
    .arg("-o")
    .arg(out);
    cmd
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap()
}

fn assert_ok(out: &Output) {
    assert!(out.status.success(), "{out:?}");
}

/// The run failed with exit code 1 and this one line on standard error.
fn assert_refused(out: &Output, line: String) {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), format!("{line}\n"));
}

/// The bytes of the part, written to a fresh name in a directory of its own.
fn reference_part(file: &Path) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("reference.part");
    assert_ok(&run(&mut part(file, &out, &[])));
    let bytes = fs::read(&out).unwrap();
    treehash::Part::from_bytes(&bytes).expect("a valid part");
    bytes
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A file another user must not be able to change through us, mode 0600.
fn victim(dir: &Path) -> (PathBuf, &'static [u8]) {
    let victim = dir.join("victim");
    let bytes: &[u8] = b"root-only secret, not to be overwritten\n";
    fs::write(&victim, bytes).unwrap();
    fs::set_permissions(&victim, fs::Permissions::from_mode(0o600)).unwrap();
    (victim, bytes)
}

/// A symbolic link at `link` to `target`, handed to another user (nobody,
/// uid 65534) as if that user had planted it. Only root can do this: `None`
/// (the test is skipped, and says so) otherwise.
fn foreign_symlink(target: &Path, link: &Path) -> Option<()> {
    symlink(target, link).unwrap();
    match std::os::unix::fs::lchown(link, Some(65534), Some(65534)) {
        Ok(()) => Some(()),
        Err(e) => {
            eprintln!("skipped: a link of another user needs root ({e})");
            None
        }
    }
}

/// The old code wrote `PART.<pid>.tmp` with `File::create`, which follows a
/// link: links planted at those names for the next process ids aimed its
/// write at the victim, and its rename then left the link at PART. Now the
/// temporary has an unpredictable name and is made with O_EXCL: the victim
/// is unchanged, PART is a regular file holding a valid part, and no
/// temporary is left.
#[test]
fn links_planted_at_the_old_temporary_names_are_never_written_through() {
    let (dir, file) = fixture();
    let expected = reference_part(&file);
    let (victim, secret) = victim(dir.path());
    let out = dir.path().join("out.part");
    let last = fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
        .unwrap_or(std::process::id());
    let planted: Vec<PathBuf> = (last + 1..=last + 2000)
        .map(|pid| {
            let link = dir.path().join(format!("out.part.{pid}.tmp"));
            symlink(&victim, &link).unwrap();
            link
        })
        .collect();
    let before = names_in(dir.path());
    assert_ok(&run(&mut part(&file, &out, &[])));
    assert_eq!(fs::read(&victim).unwrap(), secret);
    assert!(fs::symlink_metadata(&out).unwrap().is_file());
    assert_eq!(fs::read(&out).unwrap(), expected);
    for link in &planted {
        assert_eq!(fs::read_link(link).unwrap(), victim);
    }
    let mut after = before;
    after.push("out.part".into());
    after.sort();
    assert_eq!(names_in(dir.path()), after, "no temporary is left");
}

/// A link at PART itself, owned by another user (planted in a shared
/// directory): the run is refused with exit code 1 and one line naming
/// PART; the victim is unchanged and the link is left as it was (not
/// followed, not replaced). So is a link of ours that leads through one of
/// theirs. Root only (only root can give a link to another user).
#[test]
fn a_link_of_another_user_at_the_output_is_refused() {
    let (dir, file) = fixture();
    let (victim, secret) = victim(dir.path());
    let out = dir.path().join("out.part");
    if foreign_symlink(&victim, &out).is_none() {
        return;
    }
    assert_refused(
        &run(&mut part(&file, &out, &[])),
        format!(
            "treehash: {}: a symbolic link owned by another user (uid 65534), not followed",
            out.display()
        ),
    );
    assert_eq!(fs::read(&victim).unwrap(), secret);
    assert_eq!(fs::read_link(&out).unwrap(), victim);
    let ours = dir.path().join("ours.part");
    symlink(&out, &ours).unwrap();
    assert_refused(
        &run(&mut part(&file, &ours, &[])),
        format!(
            "treehash: {}: leads to {}, a symbolic link owned by another user (uid 65534), \
             not followed",
            ours.display(),
            out.display()
        ),
    );
    assert_eq!(fs::read(&victim).unwrap(), secret);
    assert_eq!(fs::read_link(&out).unwrap(), victim);
}

/// A link of our own is followed: the regular file it leads to is replaced
/// by the part (a new file under the target's name), and the link stays.
#[test]
fn a_link_of_our_own_is_followed_and_stays() {
    let (dir, file) = fixture();
    let expected = reference_part(&file);
    let target = dir.path().join("target.part");
    fs::write(&target, b"old").unwrap();
    let out = dir.path().join("out.part");
    symlink("target.part", &out).unwrap();
    assert_ok(&run(&mut part(&file, &out, &[])));
    assert_eq!(fs::read_link(&out).unwrap(), Path::new("target.part"));
    assert_eq!(fs::read(&target).unwrap(), expected);
    assert_eq!(
        names_in(dir.path()),
        ["data.bin", "out.part", "target.part"]
    );
}

/// `-o FIFO`: the part goes down the FIFO (a reader on another thread gets
/// the bytes a regular file gets), and the FIFO is still a FIFO.
#[test]
fn a_fifo_is_written_in_place() {
    let (dir, file) = fixture();
    let expected = reference_part(&file);
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let (sent, received) = std::sync::mpsc::channel();
    let reader = fifo.clone();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        fs::File::open(&reader)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .unwrap();
        let _ = sent.send(bytes);
    });
    assert_ok(&run(&mut part(&file, &fifo, &[])));
    // A FIFO replaced by a file would never be opened for writing: the
    // reader would wait for ever.
    let bytes = received
        .recv_timeout(Duration::from_secs(60))
        .expect("the reader got the part through the FIFO");
    assert_eq!(bytes, expected);
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(names_in(dir.path()), ["data.bin", "fifo"]);
}

/// `-o` onto a link to `/proc/self/fd/1`, as `/dev/stdout` is, when
/// standard output is a pipe: the link's text, `pipe:[…]`, names no path,
/// and only the kernel can follow it to the pipe, which gets the part. (A
/// link of our own in a fresh directory stands for `/dev/stdout`, so that a
/// broken build run as root replaces that link, not the system's.)
#[test]
fn a_link_to_standard_output_writes_the_pipe() {
    let (dir, file) = fixture();
    let expected = reference_part(&file);
    let stdout = dir.path().join("stdout");
    symlink("/proc/self/fd/1", &stdout).unwrap();
    let out = run(part(&file, &stdout, &[]).stdout(Stdio::piped()));
    assert_ok(&out);
    assert_eq!(out.stdout, expected);
    assert_eq!(
        fs::read_link(&stdout).unwrap(),
        Path::new("/proc/self/fd/1")
    );
}

/// A character device like `/dev/null` (1, 3) or `/dev/full` (1, 7). As
/// root, a copy made in `dir`, so that a broken build replaces only the
/// copy; otherwise the device itself, which only root could replace.
fn char_device(dir: &Path, name: &str, minor: u32) -> PathBuf {
    let copy = dir.join(name);
    let made = Command::new("mknod")
        .arg(&copy)
        .args(["c", "1", &minor.to_string()])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    // A copy on a file system mounted nodev cannot be opened.
    if made && fs::OpenOptions::new().write(true).open(&copy).is_ok() {
        copy
    } else {
        Path::new("/dev").join(name)
    }
}

fn assert_char_device(path: &Path, minor: u64) {
    let meta = fs::symlink_metadata(path).unwrap();
    assert!(meta.file_type().is_char_device(), "{}", path.display());
    // Major 1 is Linux's memory devices; elsewhere (a check of this file
    // for macOS) the types differ.
    #[cfg(target_os = "linux")]
    let want = libc::makedev(1, minor as u32);
    #[cfg(not(target_os = "linux"))]
    let want = libc::makedev(1, minor as i32) as u64;
    assert_eq!(meta.rdev(), want);
}

/// `-o /dev/null` succeeds and `-o /dev/full` fails with one line (exit
/// code 1); both stay character devices.
#[test]
fn character_devices_are_written_in_place() {
    let (dir, file) = fixture();
    let null = char_device(dir.path(), "null", 3);
    assert_ok(&run(&mut part(&file, &null, &[])));
    assert_char_device(&null, 3);
    let full = char_device(dir.path(), "full", 7);
    assert_refused(
        &run(&mut part(&file, &full, &[])),
        format!("treehash: {}: No space left on device", full.display()),
    );
    assert_char_device(&full, 7);
}

/// The mode of `out` made by `part` under umask 022, with `extra` options.
fn mode_under_umask_022(file: &Path, out: &Path, extra: &[&str]) -> u32 {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "umask 022; exec \"$0\" \"$@\"", BIN])
        .args(part(file, out, extra).get_args());
    assert_ok(&run(&mut cmd));
    fs::metadata(out).unwrap().permissions().mode() & 0o7777
}

/// Under umask 022 an unkeyed part is 0644, as `File::create` makes files;
/// a keyed part (--prefix-file) is 0600, even where a 0644 file was.
#[test]
fn a_keyed_part_is_readable_by_its_owner_only() {
    let (dir, file) = fixture();
    let key = dir.path().join("key");
    fs::write(&key, b"a secret key").unwrap();
    let keyed = ["--prefix-file", key.to_str().unwrap()];
    let plain = dir.path().join("plain.part");
    assert_eq!(mode_under_umask_022(&file, &plain, &[]), 0o644);
    let secret = dir.path().join("keyed.part");
    assert_eq!(mode_under_umask_022(&file, &secret, &keyed), 0o600);
    assert!(
        treehash::Part::from_bytes(&fs::read(&secret).unwrap())
            .unwrap()
            .keyed()
    );
    assert_eq!(mode_under_umask_022(&file, &plain, &keyed), 0o600);
}

/// A directory or a socket at PART: exit code 1, one line naming it, and
/// it is left as it was.
#[test]
fn a_directory_or_socket_is_refused_by_name() {
    let (dir, file) = fixture();
    let sub = dir.path().join("parts");
    fs::create_dir(&sub).unwrap();
    assert_refused(
        &run(&mut part(&file, &sub, &[])),
        format!(
            "treehash: {}: a directory, not a file to write",
            sub.display()
        ),
    );
    assert!(fs::symlink_metadata(&sub).unwrap().is_dir());
    assert!(names_in(&sub).is_empty());
    let socket = dir.path().join("socket");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    assert_refused(
        &run(&mut part(&file, &socket, &[])),
        format!(
            "treehash: {}: a socket, not a file to write",
            socket.display()
        ),
    );
    assert!(
        fs::symlink_metadata(&socket)
            .unwrap()
            .file_type()
            .is_socket()
    );
}

/// A write that fails part-way (here at the file-size limit, 0 blocks):
/// exit code 1, one line; the part that was there is unchanged and no
/// temporary is left.
#[test]
fn a_failed_write_leaves_the_old_file_and_no_temporary() {
    let (dir, file) = fixture();
    let out = dir.path().join("out.part");
    fs::write(&out, b"the part of an earlier run").unwrap();
    let mut cmd = Command::new("sh");
    // SIGXFSZ ignored, so that the write fails with EFBIG instead.
    cmd.args(["-c", "trap '' XFSZ; ulimit -f 0; exec \"$0\" \"$@\"", BIN])
        .args(part(&file, &out, &[]).get_args());
    assert_refused(
        &run(&mut cmd),
        format!("treehash: {}: File too large", out.display()),
    );
    assert_eq!(fs::read(&out).unwrap(), b"the part of an earlier run");
    assert_eq!(names_in(dir.path()), ["data.bin", "out.part"]);
}

/// `bench --plot` onto a directory is refused before anything is measured;
/// onto a link planted by another user (root only) too, and the victim is
/// unchanged.
#[test]
fn bench_plot_refuses_a_directory_and_another_users_link() {
    let (dir, file) = fixture();
    let bench = |chart: &Path| {
        let mut cmd = Command::new(BIN);
        cmd.args([
            "bench",
            "--backend",
            "cpu",
            "--heights",
            "0",
            "--repeat",
            "1",
        ])
        .arg("--plot")
        .arg(chart)
        .arg(&file);
        run(&mut cmd)
    };
    let sub = dir.path().join("charts.svg");
    fs::create_dir(&sub).unwrap();
    let out = bench(&sub);
    assert_refused(
        &out,
        format!(
            "treehash: --plot {}: a directory, not a file to write",
            sub.display()
        ),
    );
    assert!(out.stdout.is_empty(), "nothing was measured");
    let (victim, secret) = victim(dir.path());
    let chart = dir.path().join("chart.svg");
    if foreign_symlink(&victim, &chart).is_none() {
        return;
    }
    let out = bench(&chart);
    assert_refused(
        &out,
        format!(
            "treehash: --plot {}: a symbolic link owned by another user (uid 65534), not \
             followed",
            chart.display()
        ),
    );
    assert!(out.stdout.is_empty(), "nothing was measured");
    assert_eq!(fs::read(&victim).unwrap(), secret);
}
