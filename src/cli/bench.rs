//! The measurements of `treehash bench`: one file hashed at every height on
//! every backend asked for, timed (median, fastest and slowest of N runs
//! after a warm-up), with the H = 0 digest checked against plain SHA-3
//! computed independently ([`super::plain`]), and the results as a table,
//! JSON and an SVG chart. Each row's speed-up is over the same backend's
//! H = 0 row: treehash's own plain SHA-3. The command itself (arguments,
//! progress, output) is `bench_cmd`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use treehash::timings::{Timings, ms};
use treehash::{
    BackendChoice, BackendUsed, HashError, HashOutput, Hasher, HasherOptions, NoProgress,
    TreeParams,
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
    /// Time plain SHA-3 by the sha3 crate on one thread as a reference row.
    pub vs_plain: bool,
    /// Options for every backend's hasher (threads, device, copy mode); the
    /// backend field is replaced by each entry of `backends`.
    pub hasher: HasherOptions,
}

/// One backend at one height: measured, or skipped and why.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The backend asked for (`cpu`, `gpu`, `auto`).
    pub backend: String,
    pub height: u32,
    pub leaves: u64,
    /// Why the row was not measured, if it was not.
    pub skipped: Option<String>,
    /// What was measured (in JSON, its fields are the row's; absent when skipped).
    #[serde(flatten)]
    pub measured: Option<Measurement>,
}

impl Row {
    /// A row that was not measured, and why.
    fn skipped(backend: &str, height: u32, params: &TreeParams, why: String) -> Row {
        Row {
            backend: backend.to_string(),
            height,
            leaves: params.leaf_count(),
            skipped: Some(why),
            measured: None,
        }
    }
}

/// One backend's timed runs at one height.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    /// The backend that ran (differs from the row's only for `auto`).
    pub ran_on: String,
    pub digest: String,
    #[serde(flatten)]
    pub seconds: Spread,
    /// Throughput of the median run.
    pub gb_per_s: f64,
    /// Throughput over the same backend's H = 0 row (plain SHA-3 on that
    /// backend); none when H = 0 was not measured on it.
    pub speedup_vs_h0: Option<f64>,
    pub phases: Phases,
}

/// The median, fastest and slowest of a set of timed runs, in seconds.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Spread {
    #[serde(rename = "median_seconds")]
    pub median: f64,
    #[serde(rename = "min_seconds")]
    pub min: f64,
    #[serde(rename = "max_seconds")]
    pub max: f64,
}

impl Spread {
    /// The spread of `times` (at least one).
    fn of(times: &mut [f64]) -> Spread {
        times.sort_by(f64::total_cmp);
        Spread {
            median: times[times.len() / 2],
            min: times[0],
            max: times[times.len() - 1],
        }
    }
}

/// Gigabytes per second.
fn rate(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 / seconds / 1e9
}

/// The phases of the run whose time was the median, in milliseconds. The
/// copy and kernel times are a GPU's: none when no GPU took part.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Phases {
    pub leaves_ms: f64,
    pub copies_busy_ms: Option<f64>,
    pub kernels_busy_ms: Option<f64>,
    pub reduce_ms: f64,
}

impl Phases {
    fn of(out: &HashOutput) -> Phases {
        let t: &Timings = &out.timings;
        let on_gpu = uses_gpu(out.backend);
        Phases {
            leaves_ms: ms(t.leaves),
            copies_busy_ms: on_gpu.then(|| ms(t.copy_busy)),
            kernels_busy_ms: on_gpu.then(|| ms(t.kernel_busy)),
            reduce_ms: ms(t.reduce),
        }
    }
}

/// Whether a run had a GPU take part.
fn uses_gpu(backend: BackendUsed) -> bool {
    match backend {
        BackendUsed::Gpu | BackendUsed::CpuGpu => true,
        BackendUsed::Cpu => false,
    }
}

/// One-time costs of a backend, shown apart from the rows: a GPU's (none
/// when the backend ran on no GPU).
#[derive(Clone, Debug, Serialize)]
pub struct Startup {
    pub backend: String,
    pub device: Option<String>,
    pub gpu_init_ms: Option<f64>,
    pub compile_ms: Option<f64>,
}

/// The reference row of `--vs-plain`: plain single-stream SHA-3 / SHAKE of
/// the file by RustCrypto's sha3 crate on one thread (slower than
/// treehash's own H = 0, which no row's speed-up is taken over).
#[derive(Clone, Debug, Serialize)]
pub struct Sha3Crate {
    pub label: String,
    pub digest: String,
    #[serde(flatten)]
    pub seconds: Spread,
    /// Throughput of the median run.
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
    /// With `--vs-plain`: the sha3 crate's plain SHA-3, for reference.
    pub sha3_crate: Option<Sha3Crate>,
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

/// Runs the bench; `status` is told what is being measured.
pub fn run(config: &BenchConfig, status: &dyn Fn(&str)) -> Result<Report, HashError> {
    let bytes = std::fs::metadata(&config.file)?.len();
    let plain_digest = {
        status("plain SHA-3 (sha3 crate, one thread)");
        let runs = if config.vs_plain { config.repeat } else { 1 };
        plain_of_file(&config.params, &config.file, runs)?
    };
    let sha3_crate = config.vs_plain.then(|| Sha3Crate {
        label: config.params.algorithm().fips_name().to_string(),
        digest: plain_digest.0.clone(),
        seconds: plain_digest.1,
        gb_per_s: rate(bytes, plain_digest.1.median),
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
        sha3_crate,
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
            let device = uses_gpu(out.backend).then(|| hasher.gpu().ok()).flatten();
            let on_gpu = device.is_some();
            report.startup.push(Startup {
                backend: name.to_string(),
                device: device.map(|g| format!("{} ({})", g.info().name, g.info().arch)),
                gpu_init_ms: on_gpu.then(|| ms(out.timings.gpu_init)),
                compile_ms: on_gpu.then(|| ms(out.timings.compile)),
            });
        }
        let first_row = report.rows.len();
        for &height in &config.heights {
            let params = config.params.at_height(height)?;
            if let Some(why) = skip(&params) {
                report.rows.push(Row::skipped(name, height, &params, why));
                continue;
            }
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
            let seconds = Spread::of(&mut times);
            let (_, out) = runs
                .iter()
                .find(|r| r.0 == seconds.median)
                .expect("the median is one of the runs");
            report.rows.push(Row {
                backend: name.to_string(),
                height,
                leaves: params.leaf_count(),
                skipped: None,
                measured: Some(Measurement {
                    ran_on: out.backend.to_string(),
                    digest: hex::encode(&out.digest),
                    seconds,
                    gb_per_s: rate(bytes, seconds.median),
                    speedup_vs_h0: None,
                    phases: Phases::of(out),
                }),
            });
        }
        set_speedups(&mut report.rows[first_row..]);
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

/// Each measured row's speed-up over the H = 0 row among `rows` (one
/// backend's), if H = 0 was measured.
fn set_speedups(rows: &mut [Row]) {
    let h0 = rows
        .iter()
        .filter(|r| r.height == 0)
        .find_map(|r| r.measured.as_ref())
        .map(|m| m.seconds.median);
    for m in rows.iter_mut().filter_map(|r| r.measured.as_mut()) {
        m.speedup_vs_h0 = h0.map(|h0| h0 / m.seconds.median);
    }
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
            .push(Row::skipped(name, height, &params, why.clone()));
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
        .filter(|r| r.backend == name && r.height == 0)
        .find_map(|r| r.measured.as_ref())
        .map(|m| m.digest.clone());
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
/// digest in hex and the spread of `runs`.
fn plain_of_file(
    params: &TreeParams,
    path: &Path,
    runs: usize,
) -> Result<(String, Spread), HashError> {
    let mut times = Vec::with_capacity(runs);
    let mut digest = Vec::new();
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        digest = plain::digest_of_file(params, path)?;
        times.push(start.elapsed().as_secs_f64());
    }
    Ok((hex::encode(digest), Spread::of(&mut times)))
}

/// The report as a markdown table with its header lines. The GPU's copy
/// and kernel columns appear only when a row ran on a GPU.
pub fn to_markdown(r: &Report) -> String {
    let mut s = format!(
        "treehash bench: {} ({} bytes), {}, D={}, B={}, median (and min–max) of {} run(s) \
         after a warm-up; × H=0 is the speed-up over the same backend's H = 0 row\n",
        r.file, r.bytes, r.algorithm, r.degree, r.block_size, r.repeat
    );
    for st in &r.startup {
        if let (Some(device), Some(init), Some(compile)) =
            (&st.device, st.gpu_init_ms, st.compile_ms)
        {
            s += &format!(
                "{}: {device}: GPU init {init:.0} ms, kernel compile/load {compile:.0} ms (once, not in the rows)\n",
                st.backend
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
    let gpu = r
        .rows
        .iter()
        .filter_map(|row| row.measured.as_ref())
        .any(|m| m.phases.copies_busy_ms.is_some());
    let mut header = vec![
        "backend",
        "H",
        "leaves",
        "ms median",
        "ms min–max",
        "GB/s",
        "× H=0",
        "leaf phase ms",
    ];
    if gpu {
        header.extend(["copies busy ms", "kernels busy ms"]);
    }
    header.extend(["reduce ms", "digest"]);
    let columns = header.len();
    s += "\n";
    s += &table_line(header.iter().map(|h| h.to_string()));
    s += &table_line((0..columns).map(|i| match i {
        0 => "---".to_string(),
        _ if i == columns - 1 => "---".to_string(),
        _ => "---:".to_string(),
    }));
    let optional = |x: Option<f64>, decimals: usize| {
        x.map_or_else(|| "–".to_string(), |x| format!("{x:.decimals$}"))
    };
    let timing = |t: &Spread| {
        [
            format!("{:.1}", t.median * 1e3),
            format!("{:.1}–{:.1}", t.min * 1e3, t.max * 1e3),
        ]
    };
    if let Some(p) = &r.sha3_crate {
        let mut cells = vec![
            format!("reference: plain {} by the sha3 crate, 1 thread", p.label),
            "–".into(),
            "–".into(),
        ];
        cells.extend(timing(&p.seconds));
        cells.extend([format!("{:.3}", p.gb_per_s), "–".into()]);
        cells.resize(columns - 1, String::new());
        cells.push(short(&p.digest).to_string());
        s += &table_line(cells);
    }
    for row in &r.rows {
        let backend = match &row.measured {
            Some(m) if m.ran_on != row.backend => format!("{} ({})", row.backend, m.ran_on),
            _ => row.backend.clone(),
        };
        let mut cells = vec![backend, row.height.to_string(), row.leaves.to_string()];
        let Some(m) = &row.measured else {
            let why = row.skipped.as_deref().unwrap_or("not measured");
            cells.push(format!("skipped: {why}"));
            cells.resize(columns, String::new());
            s += &table_line(cells);
            continue;
        };
        let p = &m.phases;
        cells.extend(timing(&m.seconds));
        cells.extend([
            format!("{:.3}", m.gb_per_s),
            optional(m.speedup_vs_h0, 2),
            format!("{:.1}", p.leaves_ms),
        ]);
        if gpu {
            cells.extend([
                optional(p.copies_busy_ms, 1),
                optional(p.kernels_busy_ms, 1),
            ]);
        }
        cells.extend([format!("{:.2}", p.reduce_ms), short(&m.digest).to_string()]);
        s += &table_line(cells);
    }
    s
}

/// One line of a markdown table.
fn table_line(cells: impl IntoIterator<Item = String>) -> String {
    let mut line = String::from("|");
    for cell in cells {
        line.push(' ');
        line.push_str(&cell);
        line.push_str(" |");
    }
    line.push('\n');
    line
}

/// The first 16 hex digits, enough to compare digests across rows.
fn short(digest: &str) -> &str {
    &digest[..digest.len().min(16)]
}

/// Writes an SVG chart of throughput against height, one line per backend
/// measured (a backend that could not start has none), each point's bar
/// spanning its slowest to fastest run, and the sha3 crate's reference as a
/// flat line. The y axis is logarithmic, labelled at [`log_ticks`].
pub fn plot_svg(r: &Report, path: &Path) -> Result<(), String> {
    use plotters::prelude::*;
    let measured: Vec<(&Row, &Measurement)> = r
        .rows
        .iter()
        .filter_map(|row| row.measured.as_ref().map(|m| (row, m)))
        .collect();
    if measured.is_empty() || r.bytes == 0 {
        return Err("nothing was measured".into());
    }
    // Every rate drawn: each run's slowest and fastest.
    let spreads = measured
        .iter()
        .map(|(_, m)| m.seconds)
        .chain(r.sha3_crate.iter().map(|p| p.seconds));
    let (lo, hi) = spreads.fold((f64::MAX, f64::MIN), |(lo, hi), t| {
        (lo.min(rate(r.bytes, t.max)), hi.max(rate(r.bytes, t.min)))
    });
    let ticks = log_ticks(lo, hi);
    let (bottom, top) = (ticks[0], ticks[ticks.len() - 1]);
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
            (bottom..top).log_scale().with_key_points(ticks),
        )
        .map_err(|e| draw(&e))?;
    chart
        .configure_mesh()
        .x_desc("tree height H (leaves = D^H)")
        .y_desc("throughput, GB/s (log scale; bars: slowest to fastest run)")
        .x_labels((h_max - h_min + 1) as usize)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| tick_label(*y))
        .draw()
        .map_err(|e| draw(&e))?;
    let mut backends: Vec<&str> = measured
        .iter()
        .map(|(row, _)| row.backend.as_str())
        .collect();
    backends.dedup();
    let palette = [RED, BLUE, GREEN, MAGENTA, CYAN];
    for (i, backend) in backends.iter().enumerate() {
        let color = palette[i % palette.len()];
        let rows: Vec<&(&Row, &Measurement)> = measured
            .iter()
            .filter(|(row, _)| row.backend == *backend)
            .collect();
        let points: Vec<(f64, f64)> = rows
            .iter()
            .map(|(row, m)| (f64::from(row.height), m.gb_per_s))
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
        chart
            .draw_series(rows.iter().map(|(row, m)| {
                let h = f64::from(row.height);
                PathElement::new(
                    vec![
                        (h, rate(r.bytes, m.seconds.max)),
                        (h, rate(r.bytes, m.seconds.min)),
                    ],
                    color.stroke_width(1),
                )
            }))
            .map_err(|e| draw(&e))?;
    }
    if let Some(p) = &r.sha3_crate {
        let line = vec![(h_min as f64, p.gb_per_s), (h_max as f64, p.gb_per_s)];
        chart
            .draw_series(LineSeries::new(line, BLACK.stroke_width(1)))
            .map_err(|e| draw(&e))?
            .label(format!(
                "reference: plain {} by the sha3 crate, 1 thread",
                p.label
            ))
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

/// The most labelled ticks on the chart's y axis.
const MAX_TICKS: usize = 12;

/// Mantissas of the ticks in each decade, finest first: the finest that
/// keeps the axis within [`MAX_TICKS`] is used.
const TICK_MANTISSAS: [&[f64]; 4] = [
    &[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0],
    &[1.0, 2.0, 3.0, 5.0],
    &[1.0, 2.0, 5.0],
    &[1.0],
];

/// The labelled ticks of a log axis that shows `lo..=hi` (both above 0):
/// the first lies below `lo` and the last above `hi`, so that they are the
/// axis's ends and every value drawn lies between two labelled ticks (at
/// most 10 × apart, and at most 2.5 × apart where the range allows).
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    // Room between the outermost value and the axis's end.
    const MARGIN: f64 = 1.05;
    let (first, last) = (lo.log10().floor() as i32 - 1, hi.log10().ceil() as i32 + 1);
    let mut ticks = Vec::new();
    for mantissas in TICK_MANTISSAS {
        let candidates: Vec<f64> = (first..=last)
            .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
            .collect();
        let start = candidates
            .iter()
            .rposition(|&t| t < lo / MARGIN)
            .unwrap_or(0);
        let end = candidates
            .iter()
            .position(|&t| t > hi * MARGIN)
            .unwrap_or(candidates.len() - 1);
        ticks = candidates[start..=end].to_vec();
        if ticks.len() <= MAX_TICKS {
            break;
        }
    }
    ticks
}

/// A tick's label: its one or two significant digits (`0.15`, `2`, `40`).
fn tick_label(y: f64) -> String {
    let decimals = (1 - y.log10().floor() as i32).max(0) as usize;
    let text = format!("{y:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ratio of the widest gap between neighbouring ticks.
    fn widest_gap(ticks: &[f64]) -> f64 {
        ticks.windows(2).map(|w| w[1] / w[0]).fold(0.0, f64::max)
    }

    #[test]
    fn log_ticks_frame_every_value_and_stay_few() {
        // The chart: 0.345 GB/s (the sha3 crate) to about 5 GB/s.
        for (lo, hi) in [
            (0.345, 5.0),
            (2.6, 2.7),
            (1.0, 1.0),
            (0.01, 500.0),
            (1e-4, 1e4),
            (40.0, 60.0),
            (0.469, 0.469),
        ] {
            let ticks = log_ticks(lo, hi);
            assert!(
                ticks.len() >= 2 && ticks.len() <= MAX_TICKS,
                "{lo} {hi}: {ticks:?}"
            );
            assert!(ticks.windows(2).all(|w| w[0] < w[1]), "{ticks:?}");
            assert!(
                ticks[0] < lo && hi < ticks[ticks.len() - 1],
                "{lo} {hi}: {ticks:?}"
            );
            assert!(widest_gap(&ticks) <= 10.0 + 1e-9, "{ticks:?}");
            if hi / lo < 100.0 {
                assert!(widest_gap(&ticks) <= 2.5 + 1e-9, "{lo} {hi}: {ticks:?}");
            }
        }
        let labels: Vec<String> = log_ticks(0.345, 5.0).into_iter().map(tick_label).collect();
        assert_eq!(
            labels,
            [
                "0.3", "0.4", "0.5", "0.6", "0.8", "1", "1.5", "2", "3", "4", "5", "6"
            ]
        );
    }

    #[test]
    fn tick_labels_show_one_or_two_significant_digits() {
        for (y, label) in [
            (0.15, "0.15"),
            (0.1 * 3.0, "0.3"),
            (1.0, "1"),
            (1.5, "1.5"),
            (2.0, "2"),
            (40.0, "40"),
            (1500.0, "1500"),
            (0.0005, "0.0005"),
        ] {
            assert_eq!(tick_label(y), label);
        }
    }
}
