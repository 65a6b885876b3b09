//! The fuzz targets' inputs that are kept in the tree, run through the
//! targets' properties (tests/fuzz_properties/, the same code the targets
//! run) on stable Rust: the seed corpora (fuzz/corpus/TARGET/, valid inputs
//! of every kind) and the inputs that once failed (fuzz/regressions/TARGET/).
//! A failing input found by `cargo fuzz` is added to fuzz/regressions/ once
//! it is fixed (fuzz/README.md).

mod fuzz_properties;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// Every kept input of `target`, sorted.
fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files = Vec::new();
    for kind in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(kind).join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_file() && path.extension().is_none_or(|e| e != "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Runs `check` on every kept input of `target`; fails naming each input
/// that fails.
fn run(target: &str, check: impl Fn(&[u8])) {
    let files = inputs(target);
    assert!(!files.is_empty(), "no inputs kept for {target}");
    let failed: Vec<String> = files
        .iter()
        .filter(|path| {
            let data = std::fs::read(path).expect("a kept input is read");
            catch_unwind(AssertUnwindSafe(|| check(&data))).is_err()
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(failed.is_empty(), "{target}: failed on {failed:#?}");
}

#[test]
fn part_bytes() {
    run("part_bytes", fuzz_properties::part_bytes);
}

#[test]
fn part_set() {
    let scratch = tempfile::tempdir().expect("a scratch directory");
    run("part_set", |data| {
        fuzz_properties::part_set(data, scratch.path())
    });
}

#[test]
fn check_lines() {
    run("check_lines", fuzz_properties::check_lines);
}

#[test]
fn labels() {
    run("labels", fuzz_properties::labels);
}
