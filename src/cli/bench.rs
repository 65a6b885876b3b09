//! The measurements of `treehash bench`: one file hashed at every height on
//! every backend asked for, timed (median of N runs after a warm-up), with
//! the H = 0 digest checked against plain SHA-3 computed independently
//! ([`super::plain`]), and the results as a table, JSON and an SVG chart.
//! The command itself (arguments, progress, output) is `bench_cmd`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use treehash::timings::{Timings, ms};
use treehash::{
    BackendChoice, BackendUsed, HashError, Hasher, HasherOptions, NoProgress, TreeParams,
};

use super::plain;

/// On the GPU one leaf's sponge absorbs about 64 MB/s (a warp per leaf on an
/// H200, docs/PERFORMANCE.md): a run whose leaves would each absorb more than
/// this is skipped (it would take seconds to minutes and show only that one
/// sponge is sequential).
pub const GPU_MAX_BYTES_PER_LEAF: u64 = 64 << 20;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub file: PathBuf,
    /// Every height's parameters are these at another height.
    pub params: TreeParams,
    pub heights: Vec<u32>,
    /// Backends to measure; empty means the CPU, and the GPU if one starts.
    pub backends: Vec<BackendChoice>,
    /// Timed runs per height (after one warm-up per backend).
    pub repeat: usize,
    /// Time plain single-stream SHA-3 on the CPU as the baseline row.
    pub vs_plain: bool,
    /// Options for every backend's hasher (threads, device, copy mode); the
    /// backend field is replaced by each entry of `backends`.
    pub hasher: HasherOptions,
}

/// One backend at one height.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The backend asked for (`cpu`, `gpu`, `auto`).
    pub backend: String,
    /// The backend that ran (differs from `backend` only for `auto`).
    pub ran_on: String,
    pub height: u32,
    pub leaves: u64,
    /// Why the row was not measured, if it was not.
    pub skipped: Option<String>,
    pub digest: String,
    pub median_seconds: f64,
    pub gb_per_s: f64,
    /// Throughput over the plain SHA-3 baseline's, with `--vs-plain`.
    pub speedup_vs_plain: Option<f64>,
    pub phases: Phases,
}

impl Row {
    /// A row with nothing measured yet; `skipped` says why, if it will stay so.
    fn unmeasured(backend: &str, height: u32, params: &TreeParams, skipped: Option<String>) -> Row {
        Row {
            backend: backend.to_string(),
            ran_on: String::new(),
            height,
            leaves: params.leaf_count(),
            skipped,
            digest: String::new(),
            median_seconds: 0.0,
            gb_per_s: 0.0,
            speedup_vs_plain: None,
            phases: Phases::default(),
        }
    }
}

/// The phases of the run whose time was the median, in milliseconds.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Phases {
    pub leaves_ms: f64,
    pub copies_busy_ms: f64,
    pub kernels_busy_ms: f64,
    pub reduce_ms: f64,
}

impl From<&Timings> for Phases {
    fn from(t: &Timings) -> Self {
        Phases {
            leaves_ms: ms(t.leaves),
            copies_busy_ms: ms(t.copy_busy),
            kernels_busy_ms: ms(t.kernel_busy),
            reduce_ms: ms(t.reduce),
        }
    }
}

/// One-time costs of a backend, shown apart from the rows.
#[derive(Clone, Debug, Serialize)]
pub struct Startup {
    pub backend: String,
    pub device: Option<String>,
    pub gpu_init_ms: f64,
    pub compile_ms: f64,
}

/// Plain single-stream SHA-3 / SHAKE of the file by RustCrypto on one core.
#[derive(Clone, Debug, Serialize)]
pub struct Plain {
    pub label: String,
    pub digest: String,
    pub median_seconds: f64,
    pub gb_per_s: f64,
}

/// The H = 0 digest of a backend against plain SHA-3.
#[derive(Clone, Debug, Serialize)]
pub struct Verification {
    pub backend: String,
    /// `PASS`, `FAIL` or `SKIPPED`.
    pub verdict: String,
    pub h0_digest: Option<String>,
    pub plain_digest: String,
    pub note: Option<String>,
}

/// A backend asked for that could not start (`--backend gpu` with no usable GPU).
#[derive(Clone, Debug, Serialize)]
pub struct Unavailable {
    pub backend: String,
    pub reason: String,
}

/// Everything a bench measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub file: String,
    pub bytes: u64,
    pub algorithm: String,
    pub degree: u64,
    pub block_size: usize,
    pub repeat: usize,
    pub startup: Vec<Startup>,
    /// Backends asked for by name that could not start: nothing was measured
    /// on them, and their rows say why.
    pub unavailable: Vec<Unavailable>,
    pub plain: Option<Plain>,
    pub verification: Vec<Verification>,
    pub rows: Vec<Row>,
}

impl Report {
    /// True when no H = 0 verification failed.
    pub fn verified(&self) -> bool {
        self.verification.iter().all(|v| v.verdict != "FAIL")
    }
}

fn backend_name(b: BackendChoice) -> &'static str {
    match b {
        BackendChoice::Auto => "auto",
        BackendChoice::Cpu => "cpu",
        BackendChoice::Gpu => "gpu",
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Runs the bench; `status` is told what is being measured.
pub fn run(config: &BenchConfig, status: &dyn Fn(&str)) -> Result<Report, HashError> {
    let bytes = std::fs::metadata(&config.file)?.len();
    let plain_digest = {
        status("plain SHA-3 (sha3 crate, one thread)");
        let runs = if config.vs_plain { config.repeat } else { 1 };
        plain_of_file(&config.params, &config.file, runs)?
    };
    let plain = config.vs_plain.then(|| Plain {
        label: config.params.algorithm().fips_name().to_string(),
        digest: plain_digest.0.clone(),
        median_seconds: plain_digest.1,
        gb_per_s: bytes as f64 / plain_digest.1 / 1e9,
    });
    let mut report = Report {
        file: config.file.display().to_string(),
        bytes,
        algorithm: config.params.algorithm().name().to_string(),
        degree: config.params.degree(),
        block_size: config.params.block_size(),
        repeat: config.repeat,
        startup: Vec::new(),
        unavailable: Vec::new(),
        plain,
        verification: Vec::new(),
        rows: Vec::new(),
    };
    for (backend, hasher) in hashers(config)? {
        let name = backend_name(backend);
        let hasher = match hasher {
            Ok(hasher) => hasher,
            Err(e) => {
                record_unavailable(&mut report, config, name, &e.to_string(), &plain_digest.0)?;
                continue;
            }
        };
        let gpu_bound = backend == BackendChoice::Gpu;
        let skip = |params: &TreeParams| {
            (gpu_bound && bytes / params.leaf_count() > GPU_MAX_BYTES_PER_LEAF).then(|| {
                format!(
                    "{} MiB per leaf: one sponge per leaf on the GPU would take too long",
                    (bytes / params.leaf_count()) >> 20
                )
            })
        };
        // Warm-up: starts the GPU, compiles kernels, pulls the file into the page cache.
        status(&format!("{name}: warm-up"));
        let warm_params = config
            .heights
            .iter()
            .rev()
            .map(|&h| config.params.at_height(h))
            .find_map(|p| p.ok().filter(|p| skip(p).is_none()));
        if let Some(params) = warm_params {
            let out = hasher.hash_path(&params, &config.file, &NoProgress)?;
            // Asked only of a hasher that ran on the GPU, so that it starts nothing.
            let device = match out.backend {
                BackendUsed::Gpu | BackendUsed::CpuGpu => hasher.gpu().ok(),
                BackendUsed::Cpu => None,
            };
            report.startup.push(Startup {
                backend: name.to_string(),
                device: device.map(|g| format!("{} ({})", g.info().name, g.info().arch)),
                gpu_init_ms: ms(out.timings.gpu_init),
                compile_ms: ms(out.timings.compile),
            });
        }
        for &height in &config.heights {
            let params = config.params.at_height(height)?;
            let mut row = Row::unmeasured(name, height, &params, skip(&params));
            if row.skipped.is_none() {
                let mut runs = Vec::with_capacity(config.repeat);
                for r in 0..config.repeat {
                    status(&format!(
                        "{name}: H={height}, run {}/{}",
                        r + 1,
                        config.repeat
                    ));
                    let start = Instant::now();
                    let out = hasher.hash_path(&params, &config.file, &NoProgress)?;
                    runs.push((start.elapsed().as_secs_f64(), out));
                }
                let mut times: Vec<f64> = runs.iter().map(|r| r.0).collect();
                let mid = median(&mut times);
                let (_, out) = runs
                    .iter()
                    .find(|r| r.0 == mid)
                    .expect("the median is one of the runs");
                row.ran_on = out.backend.to_string();
                row.digest = hex::encode(&out.digest);
                row.median_seconds = mid;
                row.gb_per_s = bytes as f64 / mid / 1e9;
                row.speedup_vs_plain = report.plain.as_ref().map(|p| p.median_seconds / mid);
                row.phases = Phases::from(&out.timings);
            }
            report.rows.push(row);
        }
        status(&format!("{name}: H=0 verification"));
        report.verification.push(verify_h0(
            &hasher,
            name,
            config,
            &report.rows,
            &plain_digest.0,
            &skip,
        )?);
    }
    Ok(report)
}

/// A backend to measure, and its hasher or why it could not start.
type Measured = (BackendChoice, Result<Hasher, HashError>);

/// One hasher per backend measured, or why it could not start. The GPU is
/// started here, by the hasher that will use it, so that its start-up time
/// is the process's first. A GPU that does not start is left out when no
/// backend was named, and reported when `--backend gpu` asked for it.
fn hashers(config: &BenchConfig) -> Result<Vec<Measured>, HashError> {
    let detect = config.backends.is_empty();
    let wanted = if detect {
        vec![BackendChoice::Cpu, BackendChoice::Gpu]
    } else {
        config.backends.clone()
    };
    let mut hashers = Vec::new();
    for backend in wanted {
        let hasher = Hasher::new(HasherOptions {
            backend,
            ..config.hasher.clone()
        })?;
        let started = match backend {
            BackendChoice::Gpu => hasher.gpu().map(|_| ()),
            BackendChoice::Auto | BackendChoice::Cpu => Ok(()),
        };
        match started {
            Ok(()) => hashers.push((backend, Ok(hasher))),
            Err(_) if detect => {}
            Err(e) => hashers.push((backend, Err(e))),
        }
    }
    Ok(hashers)
}

/// The rows and H = 0 verdict of a backend that could not start.
fn record_unavailable(
    report: &mut Report,
    config: &BenchConfig,
    name: &str,
    reason: &str,
    plain: &str,
) -> Result<(), HashError> {
    let why = format!("unavailable: {reason}");
    for &height in &config.heights {
        let params = config.params.at_height(height)?;
        report
            .rows
            .push(Row::unmeasured(name, height, &params, Some(why.clone())));
    }
    report.verification.push(Verification {
        backend: name.to_string(),
        verdict: "SKIPPED".to_string(),
        h0_digest: None,
        plain_digest: plain.to_string(),
        note: Some(why),
    });
    report.unavailable.push(Unavailable {
        backend: name.to_string(),
        reason: reason.to_string(),
    });
    Ok(())
}

/// The backend's H = 0 digest (from its H = 0 row, or a run made for it)
/// against plain SHA-3.
fn verify_h0(
    hasher: &Hasher,
    name: &str,
    config: &BenchConfig,
    rows: &[Row],
    plain: &str,
    skip: &dyn Fn(&TreeParams) -> Option<String>,
) -> Result<Verification, HashError> {
    let h0 = config.params.at_height(0)?;
    let measured = rows
        .iter()
        .find(|r| r.backend == name && r.height == 0 && r.skipped.is_none())
        .map(|r| r.digest.clone());
    let digest = match measured {
        Some(d) => Some(d),
        None if skip(&h0).is_some() => None,
        None => Some(hex::encode(
            hasher.hash_path(&h0, &config.file, &NoProgress)?.digest,
        )),
    };
    Ok(Verification {
        backend: name.to_string(),
        verdict: match &digest {
            Some(d) if d == plain => "PASS",
            Some(_) => "FAIL",
            None => "SKIPPED",
        }
        .to_string(),
        note: digest.is_none().then(|| skip(&h0).unwrap_or_default()),
        h0_digest: digest,
        plain_digest: plain.to_string(),
    })
}

/// Plain single-stream SHA-3 / SHAKE of prefix ‖ file ([`plain`]): the
/// digest in hex and the median time of `runs`.
fn plain_of_file(
    params: &TreeParams,
    path: &Path,
    runs: usize,
) -> Result<(String, f64), HashError> {
    let mut times = Vec::with_capacity(runs);
    let mut digest = Vec::new();
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        digest = plain::digest_of_file(params, path)?;
        times.push(start.elapsed().as_secs_f64());
    }
    Ok((hex::encode(digest), median(&mut times)))
}

/// The report as a markdown table with its header lines.
pub fn to_markdown(r: &Report) -> String {
    let mut s = format!(
        "treehash bench: {} ({} bytes), {}, D={}, B={}, median of {} run(s) after a warm-up\n",
        r.file, r.bytes, r.algorithm, r.degree, r.block_size, r.repeat
    );
    for st in &r.startup {
        if let Some(device) = &st.device {
            s += &format!(
                "{}: {device}: GPU init {:.0} ms, kernel compile/load {:.0} ms (once, not in the rows)\n",
                st.backend, st.gpu_init_ms, st.compile_ms
            );
        }
    }
    for v in &r.verification {
        s += &format!(
            "H=0 on {}: {} (plain {} by the sha3 crate: {}){}\n",
            v.backend,
            v.verdict,
            r.algorithm,
            v.plain_digest,
            v.note
                .as_ref()
                .map(|n| format!(" — {n}"))
                .unwrap_or_default()
        );
    }
    s += "\n| backend | H | leaves | time ms | GB/s | × plain | leaf phase ms | copies busy ms | kernels busy ms | reduce ms | digest |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
    if let Some(p) = &r.plain {
        s += &format!(
            "| plain {} (sha3 crate, 1 thread) | – | – | {:.1} | {:.3} | 1.00 | | | | | {} |\n",
            p.label,
            p.median_seconds * 1e3,
            p.gb_per_s,
            short(&p.digest)
        );
    }
    for row in &r.rows {
        let backend = if row.ran_on.is_empty() || row.ran_on == row.backend {
            row.backend.clone()
        } else {
            format!("{} ({})", row.backend, row.ran_on)
        };
        if let Some(why) = &row.skipped {
            s += &format!(
                "| {backend} | {} | {} | skipped: {why} | | | | | | | |\n",
                row.height, row.leaves
            );
            continue;
        }
        let p = &row.phases;
        let speedup = row
            .speedup_vs_plain
            .map(|x| format!("{x:.2}"))
            .unwrap_or_else(|| "–".into());
        s += &format!(
            "| {backend} | {} | {} | {:.1} | {:.3} | {speedup} | {:.1} | {:.1} | {:.1} | {:.2} | {} |\n",
            row.height,
            row.leaves,
            row.median_seconds * 1e3,
            row.gb_per_s,
            p.leaves_ms,
            p.copies_busy_ms,
            p.kernels_busy_ms,
            p.reduce_ms,
            short(&row.digest)
        );
    }
    s
}

/// The first 16 hex digits, enough to compare digests across rows.
fn short(digest: &str) -> &str {
    &digest[..digest.len().min(16)]
}

/// Writes an SVG chart of throughput against height, one line per backend
/// (and the plain baseline as a flat line), with a logarithmic y axis.
pub fn plot_svg(r: &Report, path: &Path) -> Result<(), String> {
    use plotters::prelude::*;
    let measured: Vec<&Row> = r.rows.iter().filter(|row| row.skipped.is_none()).collect();
    let mut all_rates: Vec<f64> = measured.iter().map(|row| row.gb_per_s).collect();
    all_rates.extend(r.plain.iter().map(|p| p.gb_per_s));
    let (lo, hi) = all_rates
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    if measured.is_empty() || lo <= 0.0 {
        return Err("nothing was measured".into());
    }
    let heights: Vec<u32> = r.rows.iter().map(|row| row.height).collect();
    let (h_min, h_max) = (
        *heights.iter().min().expect("rows"),
        *heights.iter().max().expect("rows"),
    );
    // Drawn into memory, then written: plotters drops a write error of its
    // own file (a small chart fails only when its buffer is flushed on drop).
    let mut svg = String::new();
    let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
    let draw = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|e| draw(&e))?;
    let caption = format!(
        "treehash {} throughput, {:.1} MB file, D={}",
        r.algorithm,
        r.bytes as f64 / 1e6,
        r.degree
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 22))
        .margin(20)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (h_min as f64 - 0.2)..(h_max as f64 + 0.2),
            // At least a decade, so that the log axis has labelled ticks.
            ((lo / 1.5).min(hi / 10.0)..(hi * 1.5)).log_scale(),
        )
        .map_err(|e| draw(&e))?;
    chart
        .configure_mesh()
        .x_desc("tree height H (leaves = D^H)")
        .y_desc("throughput, GB/s (log scale)")
        .x_labels((h_max - h_min + 1) as usize)
        .y_labels(12)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.2}"))
        .draw()
        .map_err(|e| draw(&e))?;
    let mut backends: Vec<&str> = measured.iter().map(|row| row.backend.as_str()).collect();
    backends.dedup();
    let palette = [RED, BLUE, GREEN, MAGENTA, CYAN];
    for (i, backend) in backends.iter().enumerate() {
        let color = palette[i % palette.len()];
        let points: Vec<(f64, f64)> = measured
            .iter()
            .filter(|row| row.backend == *backend)
            .map(|row| (f64::from(row.height), row.gb_per_s))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(|e| draw(&e))?
            .label(*backend)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 4, color.filled())),
            )
            .map_err(|e| draw(&e))?;
    }
    if let Some(p) = &r.plain {
        let line = vec![(h_min as f64, p.gb_per_s), (h_max as f64, p.gb_per_s)];
        chart
            .draw_series(LineSeries::new(line, BLACK.stroke_width(1)))
            .map_err(|e| draw(&e))?
            .label(format!("plain {} (1 thread)", p.label))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| draw(&e))?;
    root.present().map_err(|e| draw(&e))?;
    drop(chart);
    drop(root);
    std::fs::write(path, svg).map_err(|e| treehash::error::io_reason(&e))
}
