//! `treehash bench` and `--verify`: the table and the JSON report, the
//! chart (--plot), lists of files, standard functions beside the LI rows
//! (--also), a GPU that cannot start, the H = 0 check against plain SHA-3,
//! `--verify` of every function (LI and standard), and bench's refusals.
//! If you add a test of bench or of --verify, it goes here; how bench
//! writes its chart file (links, devices) is in cli_output.rs.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::cli::{BIN, bench, binary, digest_hex, fixture, stdout_of, treehash};
use predicates::prelude::*;
use treehash::standard::Standard;
use treehash::{Algorithm, TreeParams};

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

/// A chart of every function the tool has: the title names their count (it
/// fits the canvas), the legend has an entry per line in a panel of its own
/// (right of the plot), and the first ten lines' colours all differ.
#[test]
fn bench_plot_of_every_function_is_legible() {
    let (dir, a, _) = fixture();
    let svg = dir.path().join("chart.svg");
    let also = "sha3-224,sha3-384,sha3-512,shake128,shake256,kt128,kt256,\
                parallelhash128,parallelhash256,turboshake128,turboshake256";
    bench()
        .args([
            "--heights",
            "0..=1",
            "--repeat",
            "1",
            "--also",
            also,
            "--plot",
        ])
        .arg(&svg)
        .arg(&a)
        .assert()
        .success();
    let text = fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let width: f64 = doc
        .root_element()
        .attribute("width")
        .unwrap()
        .parse()
        .unwrap();
    let texts: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .collect();
    let title = texts
        .iter()
        .find(|n| n.text().is_some_and(|t| t.contains("throughput")))
        .expect("a title");
    let title = title.text().unwrap();
    assert!(title.contains("12 functions"), "{title}");
    // Legend entries: the labels right of the plot (x beyond 900).
    let legend: Vec<&str> = texts
        .iter()
        .filter(|n| {
            n.attribute("x")
                .and_then(|x| x.parse::<f64>().ok())
                .is_some_and(|x| x > 900.0)
        })
        .filter_map(|n| n.text().map(str::trim))
        .collect();
    assert_eq!(legend.len(), 12, "{legend:?}");
    assert!(legend.iter().all(|l| !l.is_empty()) && width > 900.0);
    // The plot's lines: one colour each for the first ten series.
    let strokes: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline") || n.has_tag_name("path"))
        .filter_map(|n| n.attribute("stroke"))
        .filter(|s| *s != "#000000" && *s != "#FFFFFF")
        .collect();
    let distinct: std::collections::BTreeSet<&str> = strokes.iter().copied().collect();
    assert!(distinct.len() >= 10, "{distinct:?}");
    for label in ["kt128 on cpu", "turboshake256 on cpu", "cpu sha3-224"] {
        assert!(legend.contains(&label), "{label} in {legend:?}");
    }
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

/// `--verify` on files of many sizes (0, 1, the rate ± 1, pages, chunks
/// and more): an LI function's H = 0 digest of prefix ‖ file against plain
/// SHA-3, every standard function's digest against the reference code; and
/// bench's own H = 0 check.
#[test]
fn verification_passes_for_every_function_on_many_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let mut functions: Vec<(Vec<&str>, String)> = vec![(
        vec!["-a", "sha3-384", "--prefix-hex", "0102"],
        "H=0 on cpu equals plain SHA3-384 of prefix ‖ file (sha3 crate): PASS".to_string(),
    )];
    for standard in Standard::ALL {
        functions.push((
            vec!["-a", standard.name()],
            format!(
                "the digest on cpu equals the reference's ({}): PASS",
                standard.standard_name()
            ),
        ));
    }
    for size in [0usize, 1, 135, 136, 137, 4096, 9000, 100_003] {
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
        for (args, says) in &functions {
            treehash()
                .arg("--verify")
                .args(args)
                .arg(&path)
                .assert()
                .success()
                .stderr(predicate::str::contains(says.as_str()));
        }
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
        let mut cmd = binary();
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
    let out = std::process::Command::new(BIN)
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
    let out = binary()
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
    let out = binary()
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
    // -H, as hashing takes it, is answered with --heights.
    for height in [
        &["-H", "3"][..],
        &["-H3"],
        &["--height", "3"],
        &["--height=3"],
    ] {
        bench()
            .args(height)
            .arg(&a)
            .assert()
            .code(2)
            .stdout("")
            .stderr(
                "treehash: -H/--height 3: bench measures every height of a list: use \
                 --heights 3 (0..=8 unless given)\n",
            );
    }
    bench()
        .arg(dir.path().join("nope"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("No such file or directory"));
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
    let reference = hex::encode(treehash_reference::kangaroo::kt128(&data, b"", 32));
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
