//! The measurements of `treehash bench`: one file, or a list of files
//! hashed side by side as `treehash FILE...` hashes them, with each LI
//! function at every height and each standard function once, on every
//! backend asked for, timed (median, fastest and slowest of N runs after a
//! warm-up). Each function's digests are held to an independent computation,
//! file by file: an LI function's at H = 0 to plain SHA-3 by the sha3 crate,
//! a standard function's to the reference code ([`super::plain`]). Each
//! row's speed-up is over the same backend's H = 0 row, treehash's own plain
//! SHA-3: of the same LI function, or, for a standard function, of the first
//! LI function. The results as a table ([`to_markdown`]), JSON, or an SVG
//! chart ([`plot_svg`]); the command itself (arguments, progress, output)
//! is `bench_cmd`.

mod chart;
mod inputs;
mod table;
mod verify;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;
use treehash::Timings;
use treehash::standard::Family;
use treehash::{
    BackendChoice, BackendUsed, HashError, HashOutput, Hasher, HasherOptions, Params,
    StandardParams, TreeParams,
};

pub use chart::plot_svg;
pub use inputs::BenchError;
pub use table::to_markdown;

use super::plain;
use inputs::{Inputs, uses_gpu};
use verify::{Expected, plain_digests, reference_digests, single_hex, verify};

/// About what one leaf's sponge absorbs in a second on the GPU (a warp per
/// leaf: docs/decisions/0013-warp-per-leaf-up-to-2048.md): a run whose
/// leaves would each absorb more than this is skipped (it would take
/// seconds to minutes and show only that one sponge is sequential).
pub const GPU_MAX_BYTES_PER_LEAF: u64 = 64 << 20;

/// The longest file a standard function's digest is checked on: the
/// reference code ([`plain::reference_of_file`]) reads a whole file into
/// memory.
pub const REFERENCE_MAX_BYTES: u64 = 1 << 30;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// One file, or (more than one) a list hashed side by side.
    pub files: Vec<PathBuf>,
    /// The functions, in order: an LI tree's parameters (every height's are
    /// these at another height) or a standard function's.
    pub functions: Vec<Params>,
    /// The LI functions' heights.
    pub heights: Vec<u32>,
    /// Backends to measure; empty means the CPU, and the GPU if one starts.
    pub backends: Vec<BackendChoice>,
    /// Timed runs per row (after one warm-up per backend and function).
    pub repeat: usize,
    /// Time plain SHA-3 of the first LI function by the sha3 crate on one
    /// thread as a reference row.
    pub vs_plain: bool,
    /// Options for every backend's hasher (threads, device, copy mode); the
    /// backend field is replaced by each entry of `backends`.
    pub hasher: HasherOptions,
}

/// A function measured.
#[derive(Clone, Debug, Serialize)]
pub struct FunctionInfo {
    pub name: String,
    /// An LI tree's degree and leaf block size (none for a standard function).
    pub degree: Option<u64>,
    pub block_size: Option<usize>,
    /// A standard function's label, which records its parameters: `KT128`,
    /// `ParallelHash256(B=8192)` (none for an LI tree, whose label has a height).
    pub label: Option<String>,
}

impl FunctionInfo {
    fn of(params: &Params) -> FunctionInfo {
        let name = params.function().name().to_string();
        match params {
            Params::Tree(p) => FunctionInfo {
                name,
                degree: Some(p.degree()),
                block_size: Some(p.block_size()),
                label: None,
            },
            Params::Standard(p) => FunctionInfo {
                name,
                degree: None,
                block_size: None,
                label: Some(p.label()),
            },
        }
    }

    /// Whether this is an LI tree (measured by height).
    pub fn is_tree(&self) -> bool {
        self.label.is_none()
    }
}

/// One backend and function at one height (none for a standard function):
/// measured, or skipped and why.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The backend asked for (`cpu`, `gpu`, `auto`).
    pub backend: String,
    /// The function's name (`sha3-256`, `kt128`).
    pub function: String,
    /// The parameters' label: `SHA3-256-LI(H=3,D=4,B=136)`, `KT128`.
    pub label: String,
    /// An LI tree's height and leaf count; none for a standard function.
    pub height: Option<u32>,
    pub leaves: Option<u64>,
    /// Why the row was not measured, if it was not.
    pub skipped: Option<String>,
    /// What was measured (in JSON, its fields are the row's; absent when skipped).
    #[serde(flatten)]
    pub measured: Option<Measurement>,
}

impl Row {
    /// The row of `point` on `backend`, not measured yet.
    fn of(backend: &str, point: &Point) -> Row {
        let (height, leaves) = match &point.params {
            Params::Tree(p) => (Some(p.height()), Some(p.leaf_count())),
            Params::Standard(_) => (None, None),
        };
        Row {
            backend: backend.to_string(),
            function: point.params.function().name().to_string(),
            label: point.params.label(),
            height,
            leaves,
            skipped: None,
            measured: None,
        }
    }
}

/// One backend's timed runs of one row.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    /// The backend that ran (differs from the row's only for `auto`;
    /// `cpu+gpu` for a list some of whose files went to each).
    pub ran_on: String,
    /// The digest of the one file; none for a list (each file's digest is
    /// checked by the verification).
    pub digest: Option<String>,
    #[serde(flatten)]
    pub seconds: Spread,
    /// Throughput of the median run, over every file's bytes.
    pub gb_per_s: f64,
    /// Files hashed per second in the median run.
    pub files_per_s: f64,
    /// Throughput over the same backend's H = 0 row (plain SHA-3 on that
    /// backend: the same LI function's, or for a standard function the
    /// first LI function's); none when that was not measured.
    pub speedup_vs_h0: Option<f64>,
    /// The median run's phases, for one file; none for a list, whose files
    /// are hashed side by side.
    pub phases: Option<Phases>,
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

/// One-time costs of a backend, shown apart from the rows: a GPU's (none
/// when the backend ran on no GPU), from its first warm-up.
#[derive(Clone, Debug, Serialize)]
pub struct Startup {
    pub backend: String,
    pub device: Option<String>,
    pub gpu_init_ms: Option<f64>,
    pub compile_ms: Option<f64>,
}

/// The reference row of `--vs-plain`: plain SHA-3 / SHAKE (one sponge) of
/// each file by RustCrypto's sha3 crate on one thread, the first LI
/// function's (slower than treehash's own H = 0, which no row's speed-up is
/// taken over).
#[derive(Clone, Debug, Serialize)]
pub struct Sha3Crate {
    pub label: String,
    /// The one file's digest; none for a list.
    pub digest: Option<String>,
    #[serde(flatten)]
    pub seconds: Spread,
    /// Throughput of the median run.
    pub gb_per_s: f64,
    pub files_per_s: f64,
}

/// One backend's digests of one function, file by file, against an
/// independent computation: an LI function's at H = 0 against plain SHA-3
/// by the sha3 crate, a standard function's against the reference code.
#[derive(Clone, Debug, Serialize)]
pub struct Verification {
    pub backend: String,
    pub function: String,
    /// The height checked: 0 for an LI function, none for a standard one.
    pub height: Option<u32>,
    /// What the backend's digests are held to: `plain SHA3-256 by the
    /// sha3 crate`, `KT128 by the reference code`.
    pub against: String,
    /// `PASS` (every file checked agrees), `FAIL` (one differs) or
    /// `SKIPPED` (none was checked).
    pub verdict: String,
    pub files_checked: usize,
    pub files_failed: usize,
    /// The backend's digest and the independent one: the one file's, or a
    /// list's first file that differs (`failed_file`).
    pub digest: Option<String>,
    pub expected: Option<String>,
    pub failed_file: Option<String>,
    pub note: Option<String>,
}

impl Verification {
    pub fn failed(&self) -> bool {
        self.verdict == "FAIL"
    }
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
    /// The one file measured; none for a list.
    pub file: Option<String>,
    /// How many files, and their bytes together (every rate is over these).
    pub files: usize,
    pub bytes: u64,
    /// The function of `-a`, the first of `functions`.
    pub algorithm: String,
    /// The first LI function's degree and leaf block size (none without one).
    pub degree: Option<u64>,
    pub block_size: Option<usize>,
    /// Every function measured: `-a`'s, then `--also`'s.
    pub functions: Vec<FunctionInfo>,
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
    /// Whether more than one file was measured.
    pub fn is_list(&self) -> bool {
        self.files > 1
    }

    /// The first LI function, whose H = 0 rows the standard functions'
    /// speed-ups are over.
    pub fn first_tree(&self) -> Option<&FunctionInfo> {
        self.functions.iter().find(|f| f.is_tree())
    }
}

fn backend_name(b: BackendChoice) -> &'static str {
    match b {
        BackendChoice::Auto => "auto",
        BackendChoice::Cpu => "cpu",
        BackendChoice::Gpu => "gpu",
    }
}

/// One row to measure on every backend: an LI function at one height, or
/// a standard function.
struct Point {
    /// The function's index in [`BenchConfig::functions`].
    function: usize,
    params: Params,
}

impl Point {
    /// Every function's points, in order: an LI function's at each height.
    fn all(config: &BenchConfig) -> Result<Vec<Point>, HashError> {
        let mut points = Vec::new();
        for (function, params) in config.functions.iter().enumerate() {
            match params {
                Params::Tree(p) => {
                    for &height in &config.heights {
                        let params = Params::Tree(p.at_height(height)?);
                        points.push(Point { function, params });
                    }
                }
                Params::Standard(_) => points.push(Point {
                    function,
                    params: params.clone(),
                }),
            }
        }
        Ok(points)
    }
}

/// Runs the bench; `status` is told what is being measured.
pub fn run(config: &BenchConfig, status: &dyn Fn(&str)) -> Result<Report, BenchError> {
    let inputs = Inputs::look_up(&config.files)?;
    let points = Point::all(config)?;
    let functions: Vec<FunctionInfo> = config.functions.iter().map(FunctionInfo::of).collect();
    let first_tree = config
        .functions
        .iter()
        .position(|f| matches!(f, Params::Tree(_)));
    let mut sha3_crate = None;
    let mut expected = Vec::with_capacity(config.functions.len());
    for (index, function) in config.functions.iter().enumerate() {
        expected.push(match function {
            Params::Tree(params) => {
                let fips = params.algorithm().fips_name();
                status(&format!("plain {fips} (sha3 crate, one thread)"));
                let timed = config.vs_plain && first_tree == Some(index);
                let runs = if timed { config.repeat } else { 1 };
                let (digests, seconds) = plain_digests(params, &inputs, runs)?;
                if timed {
                    sha3_crate = Some(Sha3Crate {
                        label: fips.to_string(),
                        digest: single_hex(&digests),
                        seconds,
                        gb_per_s: rate(inputs.bytes(), seconds.median),
                        files_per_s: inputs.count() as f64 / seconds.median,
                    });
                }
                Expected {
                    against: format!("plain {fips} by the sha3 crate"),
                    digests: digests.into_iter().map(Some).collect(),
                    note: None,
                }
            }
            Params::Standard(params) => {
                status(&format!("{} by the reference code", params.label()));
                reference_digests(params, &inputs)?
            }
        });
    }
    let first = &functions[0];
    let tree = functions.iter().find(|f| f.is_tree());
    let mut report = Report {
        file: (!inputs.is_list()).then(|| inputs.paths()[0].display().to_string()),
        files: inputs.count(),
        bytes: inputs.bytes(),
        algorithm: first.name.clone(),
        degree: tree.and_then(|f| f.degree),
        block_size: tree.and_then(|f| f.block_size),
        functions: functions.clone(),
        repeat: config.repeat,
        startup: Vec::new(),
        unavailable: Vec::new(),
        sha3_crate,
        verification: Vec::new(),
        rows: Vec::new(),
    };
    let bench = Bench {
        config,
        inputs: &inputs,
        status,
    };
    for (backend, hasher) in hashers(config)? {
        let name = backend_name(backend);
        let hasher = match hasher {
            Ok(hasher) => hasher,
            Err(e) => {
                let why = format!("unavailable: {e}");
                for point in &points {
                    let mut row = Row::of(name, point);
                    row.skipped = Some(why.clone());
                    report.rows.push(row);
                }
                for (function, expected) in config.functions.iter().zip(&expected) {
                    let digests = Err(why.clone());
                    let v = verify(name, function, expected, &inputs, digests);
                    report.verification.push(v);
                }
                report.unavailable.push(Unavailable {
                    backend: name.to_string(),
                    reason: e.to_string(),
                });
                continue;
            }
        };
        let first_row = report.rows.len();
        for (index, function) in config.functions.iter().enumerate() {
            let mine: Vec<&Point> = points.iter().filter(|p| p.function == index).collect();
            let digests = bench.measure(&hasher, backend, function, &mine, &mut report)?;
            let v = verify(name, function, &expected[index], &inputs, digests);
            report.verification.push(v);
        }
        let base = first_tree.map(|i| functions[i].name.as_str());
        set_speedups(&mut report.rows[first_row..], base);
    }
    Ok(report)
}

/// What every function's measurement shares.
struct Bench<'a> {
    config: &'a BenchConfig,
    inputs: &'a Inputs,
    status: &'a dyn Fn(&str),
}

impl Bench<'_> {
    /// Measures one function's `points` on one backend: pushes their rows
    /// (and the backend's start-up costs, at its first warm-up), and returns
    /// the digests its verification compares (each file's, at H = 0 for an
    /// LI function), or why there are none.
    fn measure(
        &self,
        hasher: &Hasher,
        backend: BackendChoice,
        function: &Params,
        points: &[&Point],
        report: &mut Report,
    ) -> Result<Result<Vec<Vec<u8>>, String>, BenchError> {
        let name = backend_name(backend);
        let function_name = function.function().name();
        let several = self.config.functions.len() > 1;
        let subject = |point: &Point| match (&point.params, several) {
            (Params::Tree(p), false) => format!("H={}", p.height()),
            (Params::Tree(p), true) => format!("{function_name} H={}", p.height()),
            (Params::Standard(_), _) => function_name.to_string(),
        };
        let skip = |params: &Params| gpu_skip(backend, params, self.inputs);
        // Warm-up: starts the GPU, compiles kernels, pulls the files into the
        // page cache; and shows where this backend hashes the function.
        let mut refused = None;
        if let Some(point) = points.iter().rev().find(|p| skip(&p.params).is_none()) {
            (self.status)(&format!("{name}: {} warm-up", subject(point)));
            let warm = self.inputs.hash(hasher, &point.params)?;
            if !report.startup.iter().any(|s| s.backend == name) {
                report.startup.push(startup(hasher, name, &warm));
            }
            if !ran_as_asked(backend, warm.ran_on) {
                refused = Some(format!(
                    "{function_name} ran on {} under --backend {name}: not measured as {name}",
                    warm.ran_on
                ));
            }
        }
        let checked_height = match function {
            Params::Tree(_) => Some(0),
            Params::Standard(_) => None,
        };
        let mut checked = None;
        for point in points {
            let mut row = Row::of(name, point);
            if let Some(why) = refused.clone().or_else(|| skip(&point.params)) {
                row.skipped = Some(why);
                report.rows.push(row);
                continue;
            }
            let repeat = self.config.repeat;
            let mut runs = Vec::with_capacity(repeat);
            for r in 0..repeat {
                (self.status)(&format!(
                    "{name}: {}, run {}/{repeat}",
                    subject(point),
                    r + 1
                ));
                let start = Instant::now();
                let hashed = self.inputs.hash(hasher, &point.params)?;
                runs.push((start.elapsed().as_secs_f64(), hashed));
            }
            let mut times: Vec<f64> = runs.iter().map(|r| r.0).collect();
            let seconds = Spread::of(&mut times);
            let median = runs
                .iter()
                .position(|r| r.0 == seconds.median)
                .expect("the median is one of the runs");
            let (_, hashed) = runs.swap_remove(median);
            row.measured = Some(Measurement {
                ran_on: hashed.ran_on.to_string(),
                digest: hashed.single.as_ref().map(|out| hex::encode(&out.digest)),
                seconds,
                gb_per_s: rate(self.inputs.bytes(), seconds.median),
                files_per_s: self.inputs.count() as f64 / seconds.median,
                speedup_vs_h0: None,
                phases: hashed.single.as_ref().map(Phases::of),
            });
            if row.height == checked_height {
                checked = Some(hashed.digests);
            }
            report.rows.push(row);
        }
        if let Some(why) = refused {
            return Ok(Err(why));
        }
        if let Some(digests) = checked {
            return Ok(Ok(digests));
        }
        // Not measured: an LI function's H = 0 not among the heights is
        // hashed for the check alone, unless the GPU would take too long.
        let params = match function {
            Params::Tree(p) => Params::Tree(p.at_height(0).map_err(HashError::from)?),
            Params::Standard(_) => function.clone(),
        };
        if let Some(why) = skip(&params) {
            return Ok(Err(why));
        }
        (self.status)(&format!("{name}: {function_name} H=0 verification"));
        let hashed = self.inputs.hash(hasher, &params)?;
        Ok(Ok(hashed.digests))
    }
}

/// The start-up costs of the backend `name` shown by its first warm-up.
fn startup(hasher: &Hasher, name: &str, warm: &inputs::Hashed) -> Startup {
    // Asked only of a hasher that ran on the GPU, so that it starts nothing.
    let device = uses_gpu(warm.ran_on).then(|| hasher.gpu().ok()).flatten();
    let timings = warm.gpu_startup.filter(|_| device.is_some());
    Startup {
        backend: name.to_string(),
        device: device.map(|g| format!("{} ({})", g.info().name, g.info().arch)),
        gpu_init_ms: timings.map(|t| ms(t.gpu_init)),
        compile_ms: timings.map(|t| ms(t.compile)),
    }
}

/// Whether a run was made where its row's backend says: a `gpu` row's on
/// the GPU alone, a `cpu` row's on the CPU (`auto` may run on either).
fn ran_as_asked(asked: BackendChoice, used: BackendUsed) -> bool {
    match asked {
        BackendChoice::Auto => true,
        BackendChoice::Cpu => used == BackendUsed::Cpu,
        BackendChoice::Gpu => used == BackendUsed::Gpu,
    }
}

/// Why `params` are not measured on `backend`: on the GPU, a sponge that
/// would absorb more than [`GPU_MAX_BYTES_PER_LEAF`] of the longest file
/// (an LI leaf, TurboSHAKE's one sponge).
fn gpu_skip(backend: BackendChoice, params: &Params, inputs: &Inputs) -> Option<String> {
    if backend != BackendChoice::Gpu {
        return None;
    }
    let longest = inputs.largest();
    let (per_sponge, what) = match params {
        Params::Tree(p) => (
            longest / p.leaf_count(),
            "per leaf: one sponge per leaf on the GPU would take too long",
        ),
        Params::Standard(p) if p.standard().family() == Family::TurboShake => (
            longest,
            "in its one sponge: one sponge on the GPU would take too long",
        ),
        Params::Standard(_) => return None,
    };
    let of = if inputs.is_list() {
        "the longest file: "
    } else {
        ""
    };
    (per_sponge > GPU_MAX_BYTES_PER_LEAF).then(|| format!("{of}{} MiB {what}", per_sponge >> 20))
}

/// Each measured row's speed-up over the H = 0 row among `rows` (one
/// backend's) of its own LI function, or for a standard function of
/// `base`, the first LI function, where that was measured.
fn set_speedups(rows: &mut [Row], base: Option<&str>) {
    let h0 = |function: &str| {
        rows.iter()
            .filter(|r| r.function == function && r.height == Some(0))
            .find_map(|r| r.measured.as_ref())
            .map(|m| m.seconds.median)
    };
    let over: Vec<Option<f64>> = rows
        .iter()
        .map(|row| match row.height {
            Some(_) => h0(&row.function),
            None => base.and_then(h0),
        })
        .collect();
    for (row, over) in rows.iter_mut().zip(over) {
        if let Some(m) = row.measured.as_mut() {
            m.speedup_vs_h0 = over.map(|h0| h0 / m.seconds.median);
        }
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
        let mut options = config.hasher.clone();
        options.backend = backend;
        let hasher = Hasher::new(options)?;
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

/// A duration in milliseconds, as a float: the unit of the report's times.
fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests;
