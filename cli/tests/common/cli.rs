//! Helpers of the tests of the `treehash` binary (cli/tests/*.rs): the
//! command (bare, on the CPU, `bench`), two files to hash, a check file,
//! and what a run printed.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;
use treehash::TreeParams;

use super::reference_tree;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_treehash");

/// `treehash` with no argument yet: for a subcommand, or for a test of
/// the backend that is chosen when none is given.
pub fn binary() -> Command {
    Command::new(BIN)
}

/// `treehash --backend=cpu`: tests must not depend on whether this machine
/// has a GPU.
pub fn treehash() -> Command {
    let mut cmd = binary();
    cmd.arg("--backend=cpu");
    cmd
}

/// `treehash bench --backend=cpu`.
pub fn bench() -> Command {
    let mut cmd = binary();
    cmd.args(["bench", "--backend=cpu"]);
    cmd
}

/// A directory with a few files of the spec's test input.
pub fn fixture() -> (TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.bin");
    let b = dir.path().join("b b.bin");
    fs::write(&a, super::spec_input(100_003)).unwrap();
    fs::write(&b, super::spec_input(1000)).unwrap();
    (dir, a, b)
}

/// The reference digest of the file at `path`, in hex.
pub fn digest_hex(params: &TreeParams, path: &Path) -> String {
    hex::encode(treehash_reference::tree_hash(
        &reference_tree(params),
        &fs::read(path).unwrap(),
    ))
}

/// Runs `cmd`, which must succeed, and returns its standard output.
pub fn stdout_bytes_of(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    out.stdout
}

/// Runs `cmd`, which must succeed, and returns its standard output, which
/// must be UTF-8.
pub fn stdout_of(cmd: &mut Command) -> String {
    String::from_utf8(stdout_bytes_of(cmd)).unwrap()
}

/// Writes `lines` to a check file in `dir`.
pub fn check_file(dir: &Path, lines: &str) -> PathBuf {
    let path = dir.join("SUMS");
    fs::write(&path, lines).unwrap();
    path
}
