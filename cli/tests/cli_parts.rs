//! `treehash part` and `treehash join`: the joined line is the line that
//! hashing the file prints, in every form; broken sets, usage errors and
//! their exit codes; and the bytes each part reads, counted by the kernel.
//! If you add a test of `part` or `join`, it goes here (their man pages are
//! in cli_generate.rs, how `part -o` writes its file in cli_output.rs).

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::cli::{BIN, binary, stdout_bytes_of, treehash};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use tempfile::TempDir;

/// `treehash SUBCOMMAND --backend=cpu …`: tests must not depend on whether
/// this machine has a GPU.
fn sub(name: &str) -> Command {
    let mut cmd = binary();
    cmd.arg(name);
    if name == "part" {
        cmd.arg("--backend=cpu");
    }
    cmd
}

/// Writes every part of a split of `file` into `dir`, returns their paths.
fn make_parts(dir: &Path, tree: &[&str], file: &Path, count: u64) -> Vec<PathBuf> {
    (0..count)
        .map(|index| {
            let part = dir.join(format!("part.{index}"));
            sub("part")
                .args(tree)
                .args(["--parts", &count.to_string(), "--index", &index.to_string()])
                .arg(file)
                .arg("-o")
                .arg(&part)
                .assert()
                .success();
            part
        })
        .collect()
}

fn fixture(len: usize) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data file.bin");
    fs::write(&file, common::spec_input(len)).unwrap();
    (dir, file)
}

#[test]
fn the_joined_line_is_the_line_hashing_prints_in_every_form() {
    let mut rng = StdRng::seed_from_u64(7);
    let cases: [(&[&str], usize, u64); 5] = [
        (&["-H", "2"], 100_003, 3),
        (
            &["-H", "3", "-D", "3", "-a", "shake256", "-l", "100"],
            50_000,
            27,
        ),
        (&["-H", "2", "--prefix-hex", "00112233"], 9_999, 40),
        (&["-H", "0", "-a", "sha3-512"], 5_000, 2),
        (&["-H", "1", "-D", "5", "-B", "64", "-a", "sha3-224"], 0, 4),
    ];
    for (tree, len, count) in cases {
        let (dir, file) = fixture(len);
        let mut parts = make_parts(dir.path(), tree, &file, count);
        parts.shuffle(&mut rng);
        assert_join_prints_as_hashing(tree, &file, &parts);
    }
}

/// `treehash join PARTS` prints the line `treehash TREE FILE` prints, in
/// every form: untagged, tagged, NUL-ended, without names, raw, and JSON
/// (the same record, but for the time and the engines).
fn assert_join_prints_as_hashing(tree: &[&str], file: &Path, parts: &[PathBuf]) {
    let hashed = |form: &[&str]| stdout_bytes_of(treehash().args(tree).args(form).arg(file));
    for form in [
        &[][..],
        &["--tag"],
        &["-z"],
        &["--tag", "-z"],
        &["--no-names"],
        &["--raw"],
    ] {
        let joined = stdout_bytes_of(sub("join").args(form).args(parts));
        assert_eq!(
            String::from_utf8_lossy(&joined),
            String::from_utf8_lossy(&hashed(form)),
            "{tree:?} {form:?}"
        );
    }
    let json = |out: Vec<u8>| {
        let mut v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        for volatile in ["seconds", "engines"] {
            v.as_object_mut().unwrap().remove(volatile);
        }
        v
    };
    let joined = json(stdout_bytes_of(sub("join").arg("--json").args(parts)));
    assert_eq!(joined, json(hashed(&["--json"])), "{tree:?}");
}

#[test]
fn a_part_can_go_to_standard_output() {
    let (dir, file) = fixture(30_000);
    let parts = make_parts(dir.path(), &["-H", "2"], &file, 2);
    let out = stdout_bytes_of(
        sub("part")
            .args(["-H", "2", "--parts", "2", "--index", "1", "-o", "-"])
            .arg(&file),
    );
    assert_eq!(out, fs::read(&parts[1]).unwrap());
    // A part read from standard input joins like one read from a file.
    sub("join")
        .arg(&parts[0])
        .arg("-")
        .write_stdin(out)
        .assert()
        .success()
        .stdout(format!(
            "{}  {}\n",
            hex::encode(treehash_reference::tree_hash(
                &common::reference_tree(
                    &treehash::TreeParams::new(treehash::Algorithm::Sha3_256, 2, 4).unwrap()
                ),
                &common::spec_input(30_000)
            )),
            file.display()
        ));
}

#[test]
fn join_checks_against_the_line_that_names_the_file() {
    let tree = ["-H", "2", "-a", "shake128", "-l", "20"];
    assert_join_checks(&tree, ("H=2", "H=3"), "label is SHAKE128-LI(H=3");
}

/// `treehash join -c SUMS PARTS` of parts made with `tree`: the lines that
/// name the file get verdicts (tagged and untagged OK; a wrong digest and a
/// label with `relabel.0` made `relabel.1` FAILED, with `complaint` on
/// standard error), and a SUMS that does not name it fails.
fn assert_join_checks(tree: &[&str], relabel: (&str, &str), complaint: &str) {
    let (dir, file) = fixture(70_000);
    let parts = make_parts(dir.path(), tree, &file, 3);
    let hashed =
        |form: &[&str], file: &Path| stdout_bytes_of(treehash().args(tree).args(form).arg(file));
    let (tagged, plain) = (hashed(&["--tag"], &file), hashed(&[], &file));
    let other = hashed(&[], &parts[0]);
    let sums = dir.path().join("SUMS");
    let name = file.display().to_string();
    // The other file's line first: only the lines that name this file count.
    fs::write(&sums, [&other[..], &tagged, &plain].concat()).unwrap();
    sub("join")
        .arg("-c")
        .arg(&sums)
        .args(&parts)
        .assert()
        .success()
        .stdout(format!("{name}: OK\n{name}: OK\n"));
    // A wrong digest; a label of other parameters.
    let mut wrong = plain.clone();
    wrong[0] = if wrong[0] == b'0' { b'1' } else { b'0' };
    let tagged = String::from_utf8(tagged).unwrap();
    let relabelled = tagged.replacen(relabel.0, relabel.1, 1);
    assert_ne!(relabelled, tagged);
    fs::write(&sums, [&wrong[..], relabelled.as_bytes()].concat()).unwrap();
    sub("join")
        .arg("-c")
        .arg(&sums)
        .args(&parts)
        .assert()
        .code(1)
        .stdout(format!("{name}: FAILED\n{name}: FAILED\n"))
        .stderr(predicates::str::contains(complaint));
    // No line names the file.
    fs::write(&sums, &other).unwrap();
    sub("join")
        .arg("-c")
        .arg(&sums)
        .args(&parts)
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!(
            "treehash: {}: no line names {name}\n",
            sums.display()
        ));
}

#[test]
fn broken_sets_are_refused_with_the_part_named() {
    let (dir, file) = fixture(40_000);
    let parts = make_parts(dir.path(), &["-H", "2"], &file, 4);
    let join = |parts: &[&PathBuf]| {
        let out = sub("join").args(parts).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        err
    };
    let err = join(&[&parts[0], &parts[1], &parts[3]]);
    assert_eq!(err, "treehash: join: part 2 of 4 is missing\n");
    let err = join(&[&parts[0], &parts[1], &parts[2], &parts[3], &parts[2]]);
    assert_eq!(
        err,
        format!(
            "treehash: {}: part 2 of 4 is given twice (also as {})\n",
            parts[2].display(),
            parts[2].display()
        )
    );
    let mut bytes = fs::read(&parts[1]).unwrap();
    bytes[50] ^= 4;
    let corrupt = dir.path().join("corrupt");
    fs::write(&corrupt, &bytes).unwrap();
    let err = join(&[&parts[0], &corrupt, &parts[2], &parts[3]]);
    assert_eq!(
        err,
        format!(
            "treehash: {}: corrupt or truncated part: its check value does not match its \
             contents\n",
            corrupt.display()
        )
    );
    let elsewhere = dir.path().join("other");
    fs::create_dir(&elsewhere).unwrap();
    let other = make_parts(&elsewhere, &["-H", "2", "-D", "3"], &file, 4);
    let err = join(&[&parts[0], &parts[1], &other[2], &parts[3]]);
    assert!(
        err.starts_with(&format!("treehash: {}: its parameters", other[2].display())),
        "{err}"
    );
    let err = join(&[&parts[0], &file]);
    assert!(err.contains("not a treehash part"), "{err}");
    let err = join(&[&parts[0], &dir.path().join("none")]);
    assert!(err.contains("No such file"), "{err}");
}

/// Parts made by three hosts that spell the file's path three ways
/// (`big.img`, `./big.img`, `/…/lustre/x/big.img`) join to the digest one
/// process makes. The other hosts are simulated as the format defines a
/// host: their parts carry another host tag, inode and change time (a
/// copy of the file on each host), resealed. Parts of another file (size
/// or modification time) are refused, and so are parts of another name
/// but with --any-name.
#[test]
fn parts_made_on_three_hosts_with_three_spellings_join() {
    // (options, offsets of the host tag, inode and change time in a part)
    let kinds: [(&[&str], usize); 2] = [(&["-H", "2"], 80), (&["-a", "kt128"], 56)];
    for (tree, host_at) in kinds {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("lustre/x");
        fs::create_dir_all(&home).unwrap();
        let data = common::spec_input(50_000);
        let file = home.join("big.img");
        fs::write(&file, &data).unwrap();
        let absolute = file.to_str().unwrap();
        let mut parts = Vec::new();
        for (index, spelling) in ["big.img", "./big.img", absolute].into_iter().enumerate() {
            let part = dir.path().join(format!("part.{index}"));
            sub("part")
                .current_dir(&home)
                .args(tree)
                .args([
                    "--parts",
                    "3",
                    "--index",
                    &index.to_string(),
                    spelling,
                    "-o",
                ])
                .arg(&part)
                .assert()
                .success();
            if index > 0 {
                as_made_on_host(&part, host_at, index as u8);
            }
            parts.push(part);
        }
        let hashed = stdout_bytes_of(
            treehash()
                .current_dir(&home)
                .args(tree)
                .args(["--tag", "big.img"]),
        );
        let joined = stdout_bytes_of(sub("join").arg("--tag").args(&parts));
        assert_eq!(
            String::from_utf8(joined).unwrap(),
            String::from_utf8(hashed).unwrap(),
            "{tree:?}"
        );
        // join -c: a SUMS made with the absolute path names the file by its
        // last component; where a line names it as the parts do, only that
        // line is checked.
        let by_path = stdout_bytes_of(treehash().args(tree).arg(&file));
        let sums = dir.path().join("SUMS");
        fs::write(&sums, &by_path).unwrap();
        let verdicts = stdout_bytes_of(sub("join").arg("-c").arg(&sums).args(&parts));
        assert_eq!(
            String::from_utf8(verdicts).unwrap(),
            format!("{absolute}: OK\n")
        );
        let by_name = stdout_bytes_of(treehash().current_dir(&home).args(tree).arg("big.img"));
        fs::write(&sums, [by_path, by_name].concat()).unwrap();
        let verdicts = stdout_bytes_of(sub("join").arg("-c").arg(&sums).args(&parts));
        assert_eq!(String::from_utf8(verdicts).unwrap(), "big.img: OK\n");

        // Parts of another file, made on a fourth host: of another size, of
        // another modification time, or the file under another name.
        let [(shorter, _), (touched, _), (renamed, _)] =
            common::parts::other_files(&home, &file, &data);
        let refusal = |other: &Path, extra: &[&str]| {
            let part = dir.path().join("other.part");
            sub("part")
                .args(tree)
                .args(["--parts", "3", "--index", "2"])
                .arg(other)
                .arg("-o")
                .arg(&part)
                .assert()
                .success();
            as_made_on_host(&part, host_at, 9);
            let out = sub("join")
                .args(extra)
                .args(&parts[..2])
                .arg(&part)
                .output()
                .unwrap();
            (
                out.status.code(),
                String::from_utf8(out.stderr).unwrap(),
                part,
            )
        };
        let (code, err, part) = refusal(&shorter, &[]);
        assert_eq!(code, Some(1));
        assert_eq!(
            err,
            format!(
                "treehash: {}: its file size (49999 bytes) differs from {}'s (50000 bytes): \
                 a part of another file or other parameters\n",
                part.display(),
                parts[0].display()
            )
        );
        // Times are written as times.
        let (code, err, _) = refusal(&touched, &["--any-name"]);
        assert_eq!(code, Some(1));
        assert!(
            err.contains("its modification time (2004-01-10 13:37:04.000000000 UTC) differs from"),
            "{err}"
        );
        let (code, err, part) = refusal(&renamed, &[]);
        assert_eq!(code, Some(1));
        assert_eq!(
            err,
            format!(
                "treehash: {}: its file name ('{}') differs from {}'s ('big.img'): a part of \
                 another file or other parameters (--any-name joins parts made from other \
                 names)\n",
                part.display(),
                renamed.display(),
                parts[0].display()
            )
        );
        let (code, err, _) = refusal(&renamed, &["--any-name"]);
        assert_eq!((code, err.as_str()), (Some(0), ""), "{tree:?}");
    }
}

/// Rewrites the part at `path` as if host `n` had made it from its own
/// copy of the file: another host tag, inode and change time (the fields
/// at `host_at` of its format), and the check value made anew.
fn as_made_on_host(path: &Path, host_at: usize, n: u8) {
    let bytes = fs::read(path).unwrap();
    let mut body = bytes[..bytes.len() - 16].to_vec();
    body[host_at..host_at + 8].copy_from_slice(&[n; 8]);
    body[host_at + 8..host_at + 16].copy_from_slice(&(1000 + u64::from(n)).to_le_bytes());
    body[host_at + 16..host_at + 24].copy_from_slice(&(7 + u64::from(n)).to_le_bytes());
    fs::write(path, common::parts::seal(body)).unwrap();
}

#[test]
fn usage_errors_exit_2() {
    let (_dir, file) = fixture(1000);
    let bad: [&[&str]; 6] = [
        &["part", "--parts", "3", "--index", "3", "-o", "x"],
        &[
            "part",
            "-a",
            "turboshake128",
            "--parts",
            "2",
            "--index",
            "0",
            "-o",
            "x",
        ],
        &["part", "--parts", "0", "--index", "0", "-o", "x"],
        &["part", "--parts", "3", "--index", "1"],
        &["part", "--parts", "3", "-D", "1", "--index", "1", "-o", "x"],
        &["join"],
    ];
    for args in bad {
        let mut cmd = binary();
        cmd.args(args);
        if args[0] == "part" {
            cmd.arg(&file);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(out.stdout.is_empty());
    }
}

/// Runs `treehash ARGS` in a shell and returns the bytes the kernel counts
/// it reading (`rchar` of /proc/PID/io: a reaped child's reads are added
/// to its parent's), and what it wrote on standard error.
fn bytes_read_by(args: &[&std::ffi::OsStr]) -> (u64, String) {
    let script = r#"r() { while read -r k v; do [ "$k" = rchar: ] && echo "$v"; done < /proc/$$/io; }
        a=$(r); "$@" || exit 1; b=$(r); echo $((b - a))"#;
    let out = std::process::Command::new("sh")
        .args(["-c", script, "sh", BIN])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    (
        // The count is the last line (after what the command printed).
        text.lines().last().unwrap().parse().unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Each part reads its share of the file (the leaves it owns, ⌈L/N⌉ of L
/// at most) and at most one stripe more, never the whole file; together
/// they read it once.
#[test]
fn each_part_reads_its_share_of_the_file() {
    // 4096 leaves of 136 bytes: stripes of 557,056 bytes; 12 stripes and a half.
    let tree = ["-H", "6", "-D", "4"];
    let stripe = 4096 * 136u64;
    let len = 12 * stripe + stripe / 2 + 77;
    let (dir, file) = fixture(len as usize);
    // What the process reads whatever it does (the loader's, /proc and
    // cgroup files): a few kilobytes.
    let (noise, _) = bytes_read_by(&["--version".as_ref()]);
    assert!(noise < 64 << 10, "{noise}");
    for count in [2u64, 4, 3, 7, 64] {
        let mut total = 0;
        for index in 0..count {
            let part = dir.path().join(format!("p{index}"));
            let (read, stderr) = bytes_read_by(&[
                "part".as_ref(),
                "--backend=cpu".as_ref(),
                tree[0].as_ref(),
                tree[1].as_ref(),
                tree[2].as_ref(),
                tree[3].as_ref(),
                "--parts".as_ref(),
                count.to_string().as_ref(),
                "--index".as_ref(),
                index.to_string().as_ref(),
                file.as_os_str(),
                "-o".as_ref(),
                part.as_os_str(),
            ]);
            let read = read.saturating_sub(noise);
            let share = len * 4096u64.div_ceil(count) / 4096;
            assert!(
                read <= share + stripe,
                "{count} parts: part {index} read {read}, its share is {share}: {stderr}"
            );
            let least = len * (4096 / count) / 4096;
            assert!(
                read + stripe >= least,
                "part {index} of {count} read {read}"
            );
            total += read;
        }
        // Everything was read once, and little else.
        assert!(
            total >= len && total < len + stripe,
            "{count} parts read {total}"
        );
    }
}

#[test]
fn the_plan_shows_every_part_and_warns_of_short_runs() {
    let (_dir, file) = fixture(3 * 65536 * 136);
    let out = sub("part")
        .args(["--plan", "--parts", "16"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 + 16, "{text}");
    // Each part's size: 3 stripes of its run, the file being 3 stripes long.
    assert_eq!(
        lines[0],
        "SHA3-256-LI(H=8,D=4,B=136): 65536 leaves, stripes of 8912896 bytes; 16 parts of a \
         file of 26738688 bytes, each reading 1671168 bytes"
    );
    // Part 5 owns leaves 20480..24576: runs of 4096 · 136 bytes, three stripes.
    assert_eq!(lines[2 + 5], "5\t20480..24576\t557056\t1671168\t1");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("at most 8 parts, -H 9 or -B 272"), "{err}");
    // The parts themselves do not: the warning is said once, by part 0, and
    // only of a file on a network or parallel file system (this one is in
    // a temporary directory, on a local one).
    for count in [16, 8] {
        let dir = tempfile::tempdir().unwrap();
        let out = sub("part")
            .args(["--parts", &count.to_string(), "--index", "0", "-o"])
            .arg(dir.path().join("p"))
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(!err.contains("warning: "), "{count}: {err}");
    }
}

#[test]
fn a_part_of_a_pipe_is_refused() {
    let out = sub("part")
        .args(["--parts", "2", "--index", "0", "-o", "/dev/null", "-"])
        .write_stdin("some bytes")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("treehash: -: a part is read by ranges"),
        "{err}"
    );
}

/// The standard functions' options in the tests below: KT128, KT256 with
/// a customization string that spills into chunks of its own, and
/// ParallelHash with a small B, an S and an output length.
const STANDARD_CASES: [&[&str]; 4] = [
    &["-a", "kt128"],
    &["-a", "kt256", "--customization", "a customization string"],
    &[
        "-a",
        "parallelhash256",
        "-B",
        "100",
        "--customization",
        "S",
        "-l",
        "40",
    ],
    &["-a", "parallelhash128"],
];

#[test]
fn standard_parts_join_to_the_line_hashing_prints_in_every_form() {
    let mut rng = StdRng::seed_from_u64(8);
    // KT256's C of 22 bytes and length_encode(22) make |S| = 8192 with
    // 8,168 bytes of file: one chunk, the single node.
    let sizes = [(100_003, 5), (8_168, 3), (20_000, 7), (0, 2)];
    for (tree, (len, count)) in STANDARD_CASES.into_iter().zip(sizes) {
        let (dir, file) = fixture(len);
        let mut parts = make_parts(dir.path(), tree, &file, count);
        parts.shuffle(&mut rng);
        assert_join_prints_as_hashing(tree, &file, &parts);
    }
}

#[test]
fn join_checks_standard_digests_against_the_line_that_names_the_file() {
    assert_join_checks(STANDARD_CASES[0], ("KT128", "KT256"), "label is KT256");
    let label = "label is ParallelHash256(B=101,S=53), the parts' ParallelHash256(B=100,S=53)";
    assert_join_checks(STANDARD_CASES[2], ("B=100", "B=101"), label);
}

/// Each standard part reads its chunks' bytes of the file, one range (at
/// most ⌈n/N⌉ chunks), never the whole file; together they read it once.
#[test]
fn each_standard_part_reads_its_chunks_of_the_file() {
    let len = 4 * 1024 * 1024 + 77;
    let (dir, file) = fixture(len);
    let (noise, _) = bytes_read_by(&["--version".as_ref()]);
    for (function, chunk) in [
        (&["-a", "kt128"][..], 8192),
        (&["-a", "parallelhash256", "-B", "136"], 136),
    ] {
        let n = (len as u64).div_ceil(chunk);
        for count in [2u64, 3, 7] {
            let mut total = 0;
            for index in 0..count {
                let part = dir.path().join(format!("p{index}"));
                let (count_text, index_text) = (count.to_string(), index.to_string());
                let mut args: Vec<&std::ffi::OsStr> =
                    vec!["part".as_ref(), "--backend=cpu".as_ref()];
                args.extend(function.iter().map(std::ffi::OsStr::new));
                args.extend([
                    "--parts".as_ref(),
                    count_text.as_ref(),
                    "--index".as_ref(),
                    index_text.as_ref(),
                    file.as_os_str(),
                    "-o".as_ref(),
                    part.as_os_str(),
                ]);
                let (read, stderr) = bytes_read_by(&args);
                let read = read.saturating_sub(noise);
                let in_file = |c: u64| (c * chunk).min(len as u64);
                let share = in_file((index + 1) * n / count) - in_file(index * n / count);
                assert!(share <= (len as u64).div_ceil(count) + chunk);
                let slack = 64 << 10;
                assert!(
                    read <= share + slack && read + slack >= share,
                    "{function:?}: part {index} of {count} read {read}, its share is {share}: \
                     {stderr}"
                );
                total += read;
            }
            assert!(
                total >= len as u64 && total < len as u64 + count * (64 << 10),
                "{function:?}: {count} parts read {total}"
            );
        }
    }
}

#[test]
fn the_plan_of_a_standard_function_shows_its_chunks() {
    let (_dir, file) = fixture(100_000);
    let out = stdout_bytes_of(
        sub("part")
            .args(["-a", "kt128", "--plan", "--parts", "3"])
            .arg(&file),
    );
    // |S| = 100,001: 13 chunks; parts own 4, 4 and 5; part 0 stores its
    // first chunk whole.
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "KT128: 13 chunks of 8192 bytes; 3 parts of a file of 100000 bytes, each reading \
         32768 to 34464 bytes\n\
         part\tchunks\tread bytes\tvalues\n\
         0\t0..4\t32768\t3\n\
         1\t4..8\t32768\t4\n\
         2\t8..13\t34464\t5\n"
    );
    let out = stdout_bytes_of(
        sub("part")
            .args([
                "-a",
                "parallelhash256",
                "-B",
                "30000",
                "--customization",
                "S",
            ])
            .args(["--plan", "--parts", "5"])
            .arg(&file),
    );
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with(
            "ParallelHash256(B=30000), a customization string of 1 bytes: 4 chunks of 30000 \
             bytes; 5 parts of a file of 100000 bytes, each reading 0 to 30000 bytes\n"
        ),
        "{text}"
    );
    assert!(text.ends_with("0\t0..0\t0\t0\n1\t0..1\t30000\t1\n2\t1..2\t30000\t1\n3\t2..3\t30000\t1\n4\t3..4\t10000\t1\n"), "{text}");
    // The chunks are counted from the file's size: no plan without it.
    let out = sub("part")
        .args(["-a", "kt256", "--plan", "--parts", "3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn a_set_of_li_and_standard_parts_is_refused() {
    let (dir, file) = fixture(30_000);
    let li = make_parts(dir.path(), &["-H", "2"], &file, 2);
    let elsewhere = dir.path().join("kt");
    fs::create_dir(&elsewhere).unwrap();
    let kt = make_parts(&elsewhere, &["-a", "kt128"], &file, 2);
    let out = sub("join").arg(&li[0]).arg(&kt[1]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "treehash: {}: its function (kt128) differs from {}'s (sha3-256): a part of \
             another file or other parameters\n",
            kt[1].display(),
            li[0].display()
        )
    );
}

/// What `treehash join ARGS` (standard input `stdin`) printed on standard
/// error and its exit code.
fn join_refusal(args: &[&std::ffi::OsStr], stdin: std::process::Stdio) -> (Option<i32>, String) {
    let out = std::process::Command::new(BIN)
        .arg("join")
        .args(args)
        .stdin(stdin)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

/// A name that is no part (a device, a directory, the data file itself,
/// endless standard input) is refused with one line, after at most a
/// header's bytes: never read whole. `-c` refuses a device as `--check`
/// does.
#[test]
fn join_reads_no_more_of_a_file_than_a_part_holds() {
    let (dir, file) = fixture(20 << 20);
    let parts = make_parts(dir.path(), &["-H", "2"], &file, 2);
    let one_line = |(code, err): (Option<i32>, String), name: &str, why: &str| {
        assert_eq!(code, Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("treehash: {name}: {why}")),
            "{err}"
        );
    };
    let zero = std::ffi::OsStr::new("/dev/zero");
    let none = std::process::Stdio::null;
    one_line(
        join_refusal(&[zero], none()),
        "/dev/zero",
        "not a regular file",
    );
    one_line(
        join_refusal(&[dir.path().as_os_str()], none()),
        &dir.path().display().to_string(),
        "not a regular file",
    );
    let from_zero = std::process::Stdio::from(fs::File::open("/dev/zero").unwrap());
    one_line(
        join_refusal(&["-".as_ref()], from_zero),
        "-",
        "not a treehash part",
    );
    // The data file given as a part: its first bytes are read, no more.
    let script = r#"r() { while read -r k v; do [ "$k" = rchar: ] && echo "$v"; done < /proc/$$/io; }
        a=$(r); "$@"; b=$(r); echo $((b - a))"#;
    let out = std::process::Command::new("sh")
        .args(["-c", script, "sh", BIN, "join"])
        .arg(&parts[0])
        .arg(&file)
        .output()
        .unwrap();
    let read: u64 = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .parse()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("not a treehash part"), "{err}");
    let part_len = fs::metadata(&parts[0]).unwrap().len();
    // The part, the data file's first bytes, and the binary's own start-up
    // reads (its /proc and /sys files), far from the file's 20 MiB.
    assert!(read < part_len + (1 << 20), "{read} bytes read");
    one_line(
        join_refusal(
            &[
                parts[0].as_os_str(),
                parts[1].as_os_str(),
                "-c".as_ref(),
                zero,
            ],
            none(),
        ),
        "/dev/zero",
        "a device, not a file of check lines",
    );
}

/// The parts that made the join's sums overflow (docs/SPEC.md: a file of
/// at most 2^63 − 1 bytes) are refused with exit code 1 and one line, by a
/// build with overflow checks or without.
#[test]
fn a_part_claiming_an_impossible_file_is_refused() {
    let (dir, file) = fixture(100_000);
    for (tree, size_at) in [(&["-a", "kt128"][..], 24), (&["-H", "2"][..], 48)] {
        let parts = make_parts(dir.path(), tree, &file, 2);
        let mut body = fs::read(&parts[1]).unwrap();
        body.truncate(body.len() - 16);
        body[size_at..size_at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        let bytes = common::parts::seal(body);
        let crafted = dir.path().join("crafted");
        fs::write(&crafted, &bytes).unwrap();
        let (code, err) = join_refusal(
            &[parts[0].as_os_str(), crafted.as_os_str()],
            std::process::Stdio::null(),
        );
        assert_eq!(code, Some(1), "{err}");
        assert_eq!(
            err,
            format!(
                "treehash: {}: inconsistent part: a file of {} bytes, longer than any file \
                 ({} bytes)\n",
                crafted.display(),
                u64::MAX,
                i64::MAX
            )
        );
    }
}
