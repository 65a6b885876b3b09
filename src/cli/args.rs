//! The command line, defined once: `--help` is written from these definitions.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser};
use treehash::gpu::CopyMode;
use treehash::{Algorithm, BackendChoice};

#[derive(Parser, Debug)]
#[command(
    name = "treehash",
    version,
    about = "Keccak/SHA-3 tree-mode (LI) digests of large files, on all CPU cores or an NVIDIA GPU",
    long_about = "Keccak/SHA-3 tree-mode (LI) digests of large files, on all CPU cores or an NVIDIA GPU.\n\n\
        The file's blocks are dealt round-robin onto D^H leaves, every leaf is hashed, then the \
        parent levels up to the root. Height 0 is plain SHA-3 / SHAKE. The tree mode is defined \
        in docs/SPEC.md.",
    after_help = "Exit codes: 0 all digests made (or, with --check, all matched); 1 an input could \
        not be read or a check failed; 2 usage error or invalid parameters; 3 --backend gpu was \
        asked for and no usable GPU was found, or the GPU failed."
)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Files to hash; `-` or nothing reads standard input. (A file named
    /// `bench` must be written `./bench`.)
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Tree height H (0 = plain SHA-3 of the whole input).
    #[arg(short = 'H', long, default_value_t = 8)]
    pub height: u32,

    #[command(flatten)]
    pub tree: TreeArgs,

    /// Backend: auto uses the GPU when one is present, the tree has at least
    /// 256 leaves and the file at least 8 GiB (1 GiB on a CPU without
    /// AVX-512; 64 MiB once the GPU runs; streams only then), else the CPU.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,

    /// Also hash each file at H = 0 on the chosen backend and compare with
    /// plain SHA-3 by the sha3 crate: PASS or FAIL on standard error (exit 1 on FAIL).
    #[arg(long, conflicts_with = "check")]
    pub verify: bool,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub check: CheckArgs,

    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Hash one file at every height on each backend and compare the timings;
    /// check that H = 0 equals plain SHA-3.
    Bench(BenchArgs),
}

/// `treehash bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// The file to hash (a regular file: it is read many times).
    pub file: PathBuf,

    /// Heights to measure: `0..=8`, `2..6`, `0,4,8` or `5`.
    #[arg(long, default_value = "0..=8", value_parser = parse_heights)]
    pub heights: Heights,

    #[command(flatten)]
    pub tree: TreeArgs,

    /// Backends to measure, comma-separated [default: cpu, and gpu when one is present].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub backend: Vec<BackendArg>,

    /// Timed runs per height (their median is reported), after one warm-up per backend.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,

    /// Add plain single-stream SHA-3 on one CPU core as the baseline row.
    #[arg(long)]
    pub vs_plain: bool,

    /// Print the results as one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Write a chart of throughput against height (one line per backend) to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,

    /// No progress indicator.
    #[arg(long)]
    pub no_progress: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

/// A list of heights.
#[derive(Clone, Debug)]
pub struct Heights(pub Vec<u32>);

fn parse_heights(s: &str) -> Result<Heights, String> {
    let bad = || format!("'{s}' is not a height list (try 0..=8, 2..6 or 0,4,8)");
    let number = |t: &str| t.trim().parse::<u32>().map_err(|_| bad());
    let heights: Vec<u32> = if let Some((a, b)) = s.split_once("..=") {
        (number(a)?..=number(b)?).collect()
    } else if let Some((a, b)) = s.split_once("..") {
        (number(a)?..number(b)?).collect()
    } else {
        s.split(',').map(number).collect::<Result<_, _>>()?
    };
    if heights.is_empty() || heights.len() > 64 {
        return Err(bad());
    }
    Ok(Heights(heights))
}

/// The tree's shape and function (docs/SPEC.md); the height is given apart.
#[derive(Args, Debug, Clone)]
pub struct TreeArgs {
    /// Node function: sha3-224, sha3-256, sha3-384, sha3-512, shake128, shake256.
    #[arg(short, long, default_value = "sha3-256", value_parser = parse_algorithm)]
    pub algorithm: Algorithm,

    /// Tree degree D: children per inner node (L = D^H leaves, at most 2^24).
    #[arg(short = 'D', long, default_value_t = 4)]
    pub degree: u64,

    /// Leaf block size B in bytes, a multiple of 8 [default: the algorithm's rate].
    #[arg(short = 'B', long)]
    pub block_size: Option<usize>,

    /// Output length in bytes (SHAKE only; 1 to 65536) [default: 32 for shake128, 64 for shake256].
    #[arg(short, long)]
    pub length: Option<usize>,

    /// Prefix P (a key or salt, up to 255 bytes) in hex. Never printed.
    #[arg(long, value_name = "HEX", conflicts_with = "prefix_file")]
    pub prefix_hex: Option<String>,

    /// Prefix P read from a file (up to 255 bytes). Never printed.
    #[arg(long, value_name = "FILE")]
    pub prefix_file: Option<PathBuf>,
}

/// How digests are printed.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Print `LABEL (NAME) = HEX` lines, whose label records the parameters.
    #[arg(long, conflicts_with_all = ["json", "no_names", "raw"])]
    pub tag: bool,

    /// Print one JSON object per input (name, label, parameters, digest, bytes, seconds, backend).
    #[arg(long, conflicts_with_all = ["no_names", "raw"])]
    pub json: bool,

    /// Print only the hex digest, one per line.
    #[arg(long, conflicts_with = "raw")]
    pub no_names: bool,

    /// Write the digest as raw bytes (a single input only).
    #[arg(long)]
    pub raw: bool,

    /// Print a per-phase time breakdown to standard error.
    #[arg(long)]
    pub timings: bool,

    /// Never show a progress bar (it is shown only on a terminal, for large inputs).
    #[arg(long)]
    pub no_progress: bool,
}

/// Check mode.
#[derive(Args, Debug, Clone)]
pub struct CheckArgs {
    /// Read digest lines from the FILEs and check them.
    #[arg(short, long, conflicts_with_all = ["tag", "json", "no_names", "raw"])]
    pub check: bool,

    /// With --check: don't print OK for each file that matched.
    #[arg(short, long, requires = "check")]
    pub quiet: bool,

    /// With --check: print nothing; the exit code tells.
    #[arg(long, requires = "check")]
    pub status: bool,

    /// With --check: improperly formatted lines make the check fail.
    #[arg(long, requires = "check")]
    pub strict: bool,

    /// With --check: don't fail or report a listed file that does not exist.
    #[arg(long, requires = "check")]
    pub ignore_missing: bool,

    /// With --check: warn about each improperly formatted line.
    #[arg(short, long, requires = "check")]
    pub warn: bool,
}

/// Where and how the hashing runs.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// CUDA device number.
    #[arg(long, default_value_t = 0)]
    pub device: usize,

    /// How a mapped file reaches the GPU: `staging` (CPU threads read chunks
    /// into pinned buffers) or `register` (the mapping itself is pinned; slower
    /// on the machines measured, see docs/PERFORMANCE.md).
    #[arg(long, value_enum, default_value_t = CopyArg::Staging)]
    pub gpu_copy: CopyArg,

    /// Bytes per chunk handed to a backend (tuning and tests).
    #[arg(long, hide = true)]
    pub chunk_bytes: Option<usize>,

    /// CPU worker threads [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..), action = ArgAction::Set)]
    pub threads: Option<u16>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendArg {
    Auto,
    Cpu,
    Gpu,
}

impl From<BackendArg> for BackendChoice {
    fn from(b: BackendArg) -> Self {
        match b {
            BackendArg::Auto => BackendChoice::Auto,
            BackendArg::Cpu => BackendChoice::Cpu,
            BackendArg::Gpu => BackendChoice::Gpu,
        }
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyArg {
    Staging,
    Register,
}

impl From<CopyArg> for CopyMode {
    fn from(c: CopyArg) -> Self {
        match c {
            CopyArg::Staging => CopyMode::Staging,
            CopyArg::Register => CopyMode::Register,
        }
    }
}

fn parse_algorithm(s: &str) -> Result<Algorithm, String> {
    s.parse().map_err(|e: treehash::ParamError| e.to_string())
}
