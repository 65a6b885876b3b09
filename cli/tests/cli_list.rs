//! The real binary on lists of inputs, which it hashes side by side: the
//! output, in every form, and the exit code are those of the same inputs
//! hashed one process at a time, and `-c` gives each line its verdict in
//! the list's order. If you add a test of what a list of inputs prints
//! beside the same inputs one at a time, it goes here.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::cli::treehash;
use common::reference_tree;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tempfile::TempDir;
use treehash::TreeParams;

/// A random list: files from empty to a few MiB (several pieces of 64 KiB
/// with `--piece-bytes`), missing names and directories among them.
fn random_files(rng: &mut StdRng, dir: &Path, count: usize) -> Vec<PathBuf> {
    (0..count)
        .map(|k| {
            let path = dir.join(format!("f{k:03}"));
            match rng.random_range(0..12) {
                0 => {}
                1 => fs::create_dir(&path).unwrap(),
                2 => fs::write(
                    &path,
                    common::spec_input(rng.random_range(200_000..600_000)),
                )
                .unwrap(),
                _ => fs::write(&path, common::spec_input(rng.random_range(0..20_000))).unwrap(),
            }
            path
        })
        .collect()
}

/// The output and exit code of one run.
fn run(cmd: &mut Command) -> (Vec<u8>, i32) {
    let out = cmd.output().unwrap();
    (out.stdout, out.status.code().unwrap())
}

/// JSON lines without the fields that are timings (they differ run to run).
fn without_timings(json: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(json)
        .lines()
        .map(|line| {
            let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
            let record = v.as_object_mut().unwrap();
            record.remove("seconds");
            record.remove("engines");
            v
        })
        .collect()
}

#[test]
fn a_list_prints_what_one_input_at_a_time_prints() {
    let mut rng = StdRng::seed_from_u64(7);
    let dir = TempDir::new().unwrap();
    let files = random_files(&mut rng, dir.path(), 60);
    let forms: [&[&str]; 5] = [
        &[],
        &["--tag", "-H", "0"],
        &["-z", "-a", "shake256", "-l", "20"],
        &["--json", "-H", "2"],
        &["--no-names", "-H", "4", "-D", "2", "--piece-bytes", "65536"],
    ];
    for form in forms {
        let (list_out, list_code) = run(treehash().args(form).args(&files));
        let mut want = Vec::new();
        let mut want_code = 0;
        for file in &files {
            let (out, code) = run(treehash().args(form).arg(file));
            want.extend(out);
            want_code = want_code.max(code);
        }
        if form.contains(&"--json") {
            assert_eq!(
                without_timings(&list_out),
                without_timings(&want),
                "{form:?}"
            );
        } else {
            assert_eq!(list_out, want, "{form:?}");
        }
        assert_eq!(list_code, want_code, "{form:?}");
        assert_eq!(list_code, 1, "the list has missing names and directories");
    }
}

/// Standard input, named once among files, is hashed in its place.
#[test]
fn standard_input_in_a_list_is_hashed_in_its_place() {
    let dir = TempDir::new().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    fs::write(&a, common::spec_input(5000)).unwrap();
    fs::write(&b, common::spec_input(7)).unwrap();
    let piped = common::spec_input(300_001);
    let out = treehash()
        .arg(&a)
        .arg("-")
        .arg(&b)
        .write_stdin(piped.clone())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let params = TreeParams::default();
    let line = |bytes: &[u8], name: &str| {
        format!(
            "{}  {name}\n",
            hex::encode(treehash_reference::tree_hash(
                &reference_tree(&params),
                bytes
            ))
        )
    };
    let want = [
        line(&common::spec_input(5000), &a.display().to_string()),
        line(&piped, "-"),
        line(&common::spec_input(7), &b.display().to_string()),
    ]
    .concat();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
}

/// `-c` over a list with matching, corrupted, missing and malformed lines,
/// comments and a keyed-rule refusal: every line's verdict, in order, and
/// the exit code, with and without `--quiet`, `-z` lists too.
#[test]
fn check_gives_each_line_its_verdict_in_order() {
    let mut rng = StdRng::seed_from_u64(9);
    let dir = TempDir::new().unwrap();
    let names: Vec<PathBuf> = (0..80)
        .map(|k| dir.path().join(format!("c{k:02}")))
        .collect();
    let mut list = String::new();
    let mut verdicts = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let bytes = common::spec_input(rng.random_range(0..300_000));
        let (params, tag) = if k % 3 == 0 {
            (
                TreeParams::new(treehash::Algorithm::Sha3_256, 0, 4).unwrap(),
                true,
            )
        } else {
            (TreeParams::default(), false)
        };
        let mut digest = hex::encode(treehash_reference::tree_hash(
            &reference_tree(&params),
            &bytes,
        ));
        let shown = name.display().to_string();
        match k % 7 {
            1 => {
                digest.replace_range(0..1, if digest.starts_with('0') { "1" } else { "0" });
                verdicts.push(format!("{shown}: FAILED"));
            }
            2 => verdicts.push(format!("{shown}: FAILED open or read")),
            5 => {
                list.push_str("# a comment\n\nnot a digest line\n");
                verdicts.push(format!("{shown}: OK"));
            }
            _ => verdicts.push(format!("{shown}: OK")),
        }
        if k % 7 != 2 {
            fs::write(name, &bytes).unwrap();
        }
        if tag {
            list.push_str(&format!("{} ({shown}) = {digest}\n", params.label()));
        } else {
            list.push_str(&format!("{digest}  {shown}\n"));
        }
    }
    let sums = dir.path().join("SUMS");
    fs::write(&sums, &list).unwrap();
    let (out, code) = run(treehash().arg("-c").arg(&sums));
    assert_eq!(String::from_utf8(out).unwrap(), verdicts.join("\n") + "\n");
    assert_eq!(code, 1);
    let (out, _) = run(treehash().args(["-c", "--quiet"]).arg(&sums));
    let failures: Vec<&String> = verdicts.iter().filter(|v| !v.ends_with(": OK")).collect();
    let failures: Vec<String> = failures.into_iter().cloned().collect();
    assert_eq!(String::from_utf8(out).unwrap(), failures.join("\n") + "\n");
    let zero_sums = dir.path().join("SUMS0");
    fs::write(&zero_sums, list.replace('\n', "\0")).unwrap();
    let (out, code) = run(treehash().args(["-c", "-z"]).arg(&zero_sums));
    assert_eq!(String::from_utf8(out).unwrap(), verdicts.join("\0") + "\0");
    assert_eq!(code, 1);
}
