//! The command line, defined once: `--help`, the man page and the shell
//! completions are all written from these definitions ([`command`]).

use std::path::PathBuf;

use clap::{ArgAction, Args, CommandFactory, FromArgMatches, Parser};
use std::str::FromStr;

use treehash::gpu::{CopyMode, Devices};
use treehash::{BackendChoice, Function};

/// The command: `--help`, the man page and the completions come from it.
pub fn command() -> clap::Command {
    Cli::command()
}

/// Parses the process's arguments with [`command`].
pub fn parse() -> Result<Cli, clap::Error> {
    let mut matches = command().try_get_matches()?;
    Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut command()))
}

#[derive(Parser, Debug)]
#[command(
    name = "treehash",
    version,
    about = "Keccak/SHA-3 tree-mode (LI) digests of large files, on all CPU cores or an NVIDIA GPU",
    long_about = "Keccak/SHA-3 tree-mode (LI) digests of large files, on all CPU cores or an NVIDIA GPU.\n\n\
        The input is cut into blocks of B bytes, dealt round-robin onto L = D^H leaves; every \
        leaf is hashed with the node function, then each level of D children up to the root. \
        Height 0 is plain SHA-3 / SHAKE of the input. A --tag line's label, such as \
        SHA3-256-LI(H=8,D=4,B=136), records the parameters that --check needs. The tree mode \
        (LI v1) is defined in docs/SPEC.md in treehash's source distribution.",
    after_help = "Files named bench, part or join must be written ./bench, ./part, ./join (those \
        names are subcommands).\n\n\
        Exit codes: 0 all digests made (or, with --check, all matched); 1 an input could not be \
        read, a check failed, or standard output could not be written; 2 usage error or invalid \
        parameters; 3 --backend gpu was asked for and no usable GPU was found, or the GPU failed."
)]
#[command(args_conflicts_with_subcommands = true, disable_help_subcommand = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Files to hash; `-` or nothing reads standard input. (A file named
    /// `bench`, `part` or `join` must be written `./bench`, `./part`, `./join`.)
    // Any name, the empty one too: it gets its own error, like coreutils.
    #[arg(value_name = "FILE", value_parser = any_path())]
    pub files: Vec<PathBuf>,

    /// Tree height H (0 = plain SHA-3 of the whole input) [default: 8]. Not for
    /// the standard functions, whose trees their documents fix.
    #[arg(short = 'H', long, value_name = "HEIGHT")]
    pub height: Option<u32>,

    #[command(flatten)]
    pub tree: TreeArgs,

    /// Backend: `auto` hashes on the CPU at once, and for an input long
    /// enough to repay it the GPUs of --device start in the background; each
    /// GPU joins when it is ready and takes the leaves, which go back to the
    /// CPU only while that makes the input go faster (an input that ends
    /// first is the CPU's alone). `cpu`; or `gpu`: the GPUs only, started
    /// side by side and sharing an input from its first piece, as many as
    /// it has 4 GPU transfers (32 MiB each) and one more for (a shorter input
    /// is the first GPU's).
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

    /// Print a man page (man, man-bench) or a shell's completion script, made
    /// from these definitions, and exit: `treehash --generate man > treehash.1`.
    #[arg(long, value_enum, value_name = "KIND", exclusive = true)]
    pub generate: Option<GenerateKind>,
}

/// What `--generate` prints.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum GenerateKind {
    /// A roff man page: `man ./treehash.1`.
    Man,
    /// The man page of `treehash bench`: `man ./treehash-bench.1`.
    ManBench,
    /// The man page of `treehash part`: `man ./treehash-part.1`.
    ManPart,
    /// The man page of `treehash join`: `man ./treehash-join.1`.
    ManJoin,
    CompleteBash,
    CompleteZsh,
    CompleteFish,
    CompletePowershell,
}

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Hash one file, or a list of files side by side, at every height on
    /// each backend (and with standard functions beside) and compare the
    /// timings; check that H = 0 equals plain SHA-3.
    Bench(BenchArgs),
    /// Hash part I of N of a file: only the leaves that part owns (an LI
    /// tree's, or the chunks of kt128, kt256, parallelhash128 or
    /// parallelhash256), read from their bytes of the file alone (docs/SPEC.md,
    /// "Parts and joins"). Run the N parts anywhere the file can be read;
    /// `treehash join` makes the digest.
    Part(PartArgs),
    /// Join the parts of a file made by `treehash part` into its digest, and
    /// print its line as hashing prints it (or check it with -c).
    Join(JoinArgs),
}

/// `treehash bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// The file to hash (a regular file: it is read many times), or two or
    /// more: a list, hashed side by side as `treehash FILE...` hashes it,
    /// every rate over the bytes in all (a list may hold empty files).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// Heights to measure each LI function at: `0..=8`, `2..6`, `0,4,8` or
    /// `5` (at most 64; a height given twice is measured once).
    #[arg(long, default_value = "0..=8", value_parser = parse_heights)]
    pub heights: Heights,

    /// `-H`/`--height`, which hashing takes: refused with a hint to use
    /// --heights (bench_cmd.rs). Hidden: not an option of bench.
    #[arg(short = 'H', long = "height", hide = true, value_name = "HEIGHT")]
    pub height: Option<String>,

    #[command(flatten)]
    pub tree: TreeArgs,

    /// More functions to measure beside -a's, comma-separated: an LI tree
    /// gets rows by height as -a's does; a standard function (kt128,
    /// parallelhash256, …) one row per backend, with no height, its × H=0
    /// over the first LI function's H = 0 row. Every option given (-l, -B,
    /// --customization, …) applies to each function, which must take it.
    #[arg(long, value_name = "FUNCTION", value_delimiter = ',', ignore_case = true, value_parser = algorithm())]
    pub also: Vec<Function>,

    /// Backends to measure, comma-separated [default: cpu, and gpu when one is present].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub backend: Vec<BackendArg>,

    /// Timed runs per row (their median, fastest and slowest are reported),
    /// after one warm-up per backend and function.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=MAX_REPEAT))]
    pub repeat: u32,

    /// Add plain SHA-3 (of the first LI function) by the sha3 crate on one
    /// thread as a reference row. (Each row's speed-up, × H=0, is over the
    /// same backend's H = 0 row, treehash's own plain SHA-3, whether or not
    /// this is given.)
    #[arg(long)]
    pub vs_plain: bool,

    /// Print the results as one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Write a chart of throughput against height (one line per backend and
    /// LI function; a standard function is a dashed flat line) to this SVG
    /// file (its name must end in .svg), written as `part -o` writes a part.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,

    /// No progress indicator.
    #[arg(long)]
    pub no_progress: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

/// `treehash part`.
#[derive(Args, Debug)]
pub struct PartArgs {
    /// The file (a regular file; `-` is standard input when it is one). With
    /// --plan it gives the bytes each part reads.
    #[arg(value_name = "FILE", value_parser = any_path(), required_unless_present = "plan")]
    pub file: Option<PathBuf>,

    /// How many parts the file is split into (any N ≥ 1; with more parts
    /// than leaves or chunks, some own none and read nothing).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub parts: u64,

    /// Which part to hash: 0 to N − 1.
    #[arg(long, value_name = "I", required_unless_present = "plan")]
    pub index: Option<u64>,

    /// Where to write the part; `-` is standard output. A regular file (or
    /// none) is replaced whole: a new file, written beside it under an
    /// unpredictable name and renamed onto it, mode 0666 less the umask, or
    /// 0600 for a keyed part. A character device or FIFO is written in
    /// place. A symbolic link owned by you or root is followed; one owned by
    /// another user is refused, as are directories, sockets and block
    /// devices.
    #[arg(short, long, value_name = "PART", value_parser = any_path(), required_unless_present = "plan")]
    pub output: Option<PathBuf>,

    /// Print each part's leaves, its run of bytes per stripe and what it reads,
    /// and how many parts keep those runs at 1 MiB or more; for kt128, kt256
    /// and parallelhash*, each part's chunks and bytes to read (FILE needed:
    /// the chunks are counted from its size). Hash nothing.
    #[arg(long, conflicts_with_all = ["index", "output"])]
    pub plan: bool,

    /// Tree height H [default: 8].
    #[arg(short = 'H', long, value_name = "HEIGHT")]
    pub height: Option<u32>,

    #[command(flatten)]
    pub tree: TreeArgs,

    /// Backend, as for hashing; under `auto` an LI part goes to the GPU when
    /// it has enough bytes to read to repay the GPU's start, a standard
    /// function's part stays on the CPU (`gpu` puts its chunks on the GPU).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,

    /// Print a per-phase time breakdown to standard error.
    #[arg(long)]
    pub timings: bool,

    /// Say on standard error which backend hashed the part, and why a GPU
    /// was left.
    #[arg(short, long)]
    pub verbose: bool,

    /// Never show a progress bar.
    #[arg(long)]
    pub no_progress: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

/// `treehash join`.
#[derive(Args, Debug)]
pub struct JoinArgs {
    /// The parts, in any order: every part of one split, each once. Parts
    /// made from one file under other paths (`big.img`, `./big.img`,
    /// `/lustre/x/big.img`, as hosts spell it) join: their size,
    /// modification time and the last component of their names must agree.
    #[arg(value_name = "PART", required = true, value_parser = any_path())]
    pub parts: Vec<PathBuf>,

    /// Join parts made from files of other names (copies of the file under
    /// another name); their size and modification time must still agree.
    /// The digest line names the file as the first part given does.
    #[arg(long)]
    pub any_name: bool,

    #[command(flatten)]
    pub output: OutputFormatArgs,

    /// Check the joined digest against every line of SUMS that names the
    /// parts' file (`-` is standard input), as --check does: NAME: OK or
    /// NAME: FAILED. Where no line names it as the first part does, the
    /// lines whose name ends in the same last component are checked.
    #[arg(short, long, value_name = "SUMS", value_parser = any_path(), conflicts_with_all = ["tag", "json", "no_names", "raw"])]
    pub check: Option<PathBuf>,
}

/// The most timed runs per height `bench --repeat` takes.
const MAX_REPEAT: i64 = 1000;
/// The most heights one bench measures.
const MAX_HEIGHTS: usize = 64;
/// The most CPU worker threads `--threads` takes.
const MAX_THREADS: i64 = treehash::HasherOptions::MAX_THREADS as i64;

/// A list of heights.
#[derive(Clone, Debug)]
pub struct Heights(pub Vec<u32>);

fn parse_heights(s: &str) -> Result<Heights, String> {
    let bad = || format!("'{s}' is not a height list (try 0..=8, 2..6 or 0,4,8)");
    let number = |t: &str| t.trim().parse::<u32>().map_err(|_| bad());
    let range = |a: u32, b: u32, inclusive: bool| -> Result<Vec<u32>, String> {
        if a > b {
            return Err(format!(
                "'{s}' is a reversed range ({a} > {b}): it holds no height; write the smaller \
                 height first"
            ));
        }
        if a == b && !inclusive {
            return Err(format!(
                "'{s}' is an empty range (the end is excluded); {a}..={a} or {a} is height {a}"
            ));
        }
        let count = u64::from(b - a) + u64::from(inclusive);
        if count > MAX_HEIGHTS as u64 {
            return Err(format!(
                "'{s}' holds {count} heights (at most {MAX_HEIGHTS})"
            ));
        }
        Ok(if inclusive {
            (a..=b).collect()
        } else {
            (a..b).collect()
        })
    };
    let heights: Vec<u32> = if let Some((a, b)) = s.split_once("..=") {
        range(number(a)?, number(b)?, true)?
    } else if let Some((a, b)) = s.split_once("..") {
        range(number(a)?, number(b)?, false)?
    } else {
        // Each height once, in the order first given (as --backend's list).
        let mut list: Vec<u32> = Vec::new();
        for height in s.split(',').map(number) {
            let height = height?;
            if !list.contains(&height) {
                list.push(height);
            }
        }
        list
    };
    if heights.is_empty() {
        return Err(bad());
    }
    if heights.len() > MAX_HEIGHTS {
        return Err(format!(
            "'{s}' holds {} heights (at most {MAX_HEIGHTS})",
            heights.len()
        ));
    }
    Ok(Heights(heights))
}

/// The tree's shape and function (docs/SPEC.md); the height is given apart.
#[derive(Args, Debug, Clone)]
pub struct TreeArgs {
    /// The function: an LI tree of sha3-224, sha3-256, sha3-384, sha3-512,
    /// shake128 or shake256 (plain SHA-3 / SHAKE at -H 0), or a standard
    /// function with its own fixed tree: kt128, kt256 (KangarooTwelve, RFC
    /// 9861), parallelhash128, parallelhash256 (NIST SP 800-185),
    /// turboshake128, turboshake256 (RFC 9861).
    #[arg(short, long, default_value = "sha3-256", ignore_case = true, value_parser = algorithm())]
    pub algorithm: Function,

    /// Tree degree D: children per inner node (L = D^H leaves, at most 2^24) [default: 4].
    #[arg(short = 'D', long, value_name = "DEGREE")]
    pub degree: Option<u64>,

    /// Leaf block size B in bytes, a multiple of 8 [default: the algorithm's
    /// rate]; for parallelhash128/256, its block size B (1 to 2^24) [default: 8192].
    #[arg(short = 'B', long)]
    pub block_size: Option<usize>,

    /// Output length in bytes (SHAKE and the standard functions; 1 to 65536)
    /// [default: 32 for shake128, kt128, parallelhash128 and turboshake128; 64
    /// for shake256, kt256, parallelhash256 and turboshake256].
    #[arg(short, long)]
    pub length: Option<usize>,

    /// The customization string (KT's C, ParallelHash's S), as text: at most
    /// 256 KiB (Linux takes at most 128 KiB in one argument: a longer string
    /// is given with --customization-file). It is recorded, in hex, in --tag
    /// labels.
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["customization_hex", "customization_file"])]
    pub customization: Option<String>,

    /// The customization string in hex.
    #[arg(long, value_name = "HEX", conflicts_with = "customization_file")]
    pub customization_hex: Option<String>,

    /// The customization string read from a file, its bytes as they are (at
    /// most 256 KiB; - is standard input, when no input is read from it).
    #[arg(long, value_name = "FILE")]
    pub customization_file: Option<PathBuf>,

    /// TurboSHAKE's domain byte D in hex, 01 to 7F [default: 1F].
    #[arg(long, value_name = "HEX", value_parser = parse_domain)]
    pub domain: Option<u8>,

    /// Prefix P (a key or salt, 1 to 255 bytes) in hex. Never printed.
    #[arg(long, value_name = "HEX", conflicts_with = "prefix_file")]
    pub prefix_hex: Option<String>,

    /// Prefix P read from a file (1 to 255 bytes; - is standard input, when
    /// no input is read from it). Never printed.
    #[arg(long, value_name = "FILE")]
    pub prefix_file: Option<PathBuf>,
}

/// How a digest line is written: the forms that hashing and `treehash join`
/// share, defined once for both.
#[derive(Args, Debug, Clone)]
pub struct OutputFormatArgs {
    /// Print `LABEL (NAME) = HEX` lines, whose label records the parameters.
    #[arg(long, conflicts_with_all = ["json", "no_names", "raw"])]
    pub tag: bool,

    /// Print one JSON object per input (name, label, parameters, digest,
    /// bytes, seconds, backend; a join's seconds are the join's time). A name
    /// that is not UTF-8 is written with U+FFFD in `name`, and exactly, in
    /// hex, in `name_hex`. When hashing, an input that got no digest has a
    /// record too: `digest` null, and `error` saying why.
    #[arg(long, conflicts_with_all = ["no_names", "raw"])]
    pub json: bool,

    /// Print only the hex digest, one per line.
    #[arg(long, conflicts_with = "raw")]
    pub no_names: bool,

    /// Write the digest as raw bytes (when hashing, a single input only).
    #[arg(long)]
    pub raw: bool,

    /// End each output line with NUL instead of a newline, and write names
    /// as they are (not escaped); with --check, the check file's lines end
    /// with NUL too.
    #[arg(short, long, conflicts_with = "raw")]
    pub zero: bool,
}

/// How digests are printed when hashing, and what is said on standard
/// error.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    #[command(flatten)]
    pub format: OutputFormatArgs,

    /// Print a per-phase time breakdown to standard error (and what -v says).
    #[arg(long)]
    pub timings: bool,

    /// Say on standard error when --backend auto hashed on the CPU alone,
    /// and why (no usable GPU, or no input long enough to repay starting one).
    #[arg(short, long)]
    pub verbose: bool,

    /// Never show a progress bar (it is shown only on a terminal, for large inputs).
    #[arg(long)]
    pub no_progress: bool,
}

/// Check mode.
#[derive(Args, Debug, Clone)]
pub struct CheckArgs {
    /// Read digest lines from the FILEs and check them. Every line
    /// coreutils' `sha256sum -c` reads is read: `HEX  NAME`, BSD's `HEX
    /// NAME`, `LABEL (NAME) = HEX` (checked with the label's parameters)
    /// and OpenSSL's `LABEL(NAME)= HEX`. With a prefix, lines are held to a
    /// MAC's standard: a tagged line needs `,P` in its label, and a digest
    /// shorter than 16 bytes is FAILED.
    // --tag and the options below without --check are refused in
    // coreutils' words (main.rs), not clap's.
    #[arg(short, long, conflicts_with_all = ["json", "no_names", "raw"])]
    pub check: bool,

    /// With --check: don't print OK for each file that matched. The last of
    /// --quiet, --status and --warn given wins, as in coreutils.
    #[arg(short, long, overrides_with_all = ["status", "warn"])]
    pub quiet: bool,

    /// With --check: print no verdict and no warning; the exit code tells (a
    /// file that cannot be read is still reported). The last of --quiet,
    /// --status and --warn given wins.
    #[arg(long, overrides_with_all = ["quiet", "warn"])]
    pub status: bool,

    /// With --check: improperly formatted lines make the check fail.
    #[arg(long)]
    pub strict: bool,

    /// With --check: don't fail or report a listed file that does not exist.
    #[arg(long)]
    pub ignore_missing: bool,

    /// With --check: warn about each improperly formatted line, naming the
    /// function it was read for. The last of --quiet, --status and --warn
    /// given wins.
    #[arg(short, long, overrides_with_all = ["quiet", "status"])]
    pub warn: bool,
}

impl CheckArgs {
    /// Refuses, in coreutils' words, `--tag` with `--check` and the check
    /// options without it (the last of --quiet, --status and --warn given
    /// is the one looked at, as in coreutils).
    pub fn misuse(&self, tag: bool) -> Option<String> {
        if self.check {
            return tag.then(|| "the --tag option is meaningless when verifying checksums".into());
        }
        let given = [
            (self.ignore_missing, "--ignore-missing"),
            (self.status, "--status"),
            (self.warn, "--warn"),
            (self.quiet, "--quiet"),
            (self.strict, "--strict"),
        ];
        let (_, option) = given.into_iter().find(|(given, _)| *given)?;
        Some(format!(
            "the {option} option is meaningful only when verifying checksums"
        ))
    }
}

/// Where and how the hashing runs.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// CUDA devices: `all` (every visible one) or numbers, e.g. `0` or `0,1`.
    /// With `--backend gpu` every device asked for starts at once, before
    /// the first input.
    #[arg(long, default_value = "all", value_parser = Devices::from_str)]
    pub device: Devices,

    /// How a file reaches the GPU: `staging` (CPU threads read each transfer
    /// into pinned buffers), `readers` (CPU threads read 2 MiB runs into small
    /// pinned buffers of their own, each copied at once) or `register` (the
    /// mapping itself is pinned; slower on the machines measured).
    #[arg(long, value_enum, default_value_t = CopyArg::Staging)]
    pub gpu_copy: CopyArg,

    /// Bytes per piece handed to a backend, which are also a GPU's bytes per
    /// transfer (tuning and tests): 1 to 128 MiB.
    // `--chunk-bytes`, its old name, is still taken: scripts keep working.
    #[arg(long, hide = true, alias = "chunk-bytes", value_parser = parse_piece_bytes)]
    pub piece_bytes: Option<usize>,

    /// CPU worker threads, 1 to 1024 [default: one per CPU]. More than the
    /// CPUs this process may run on start one per CPU: no more can run at
    /// once.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=MAX_THREADS), action = ArgAction::Set)]
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
    Readers,
}

impl From<CopyArg> for CopyMode {
    fn from(c: CopyArg) -> Self {
        match c {
            CopyArg::Staging => CopyMode::Staging,
            CopyArg::Register => CopyMode::Register,
            CopyArg::Readers => CopyMode::Readers,
        }
    }
}

/// A path as given, the empty one included (clap's own parser refuses it)
/// and bytes that are not UTF-8.
fn any_path() -> impl clap::builder::TypedValueParser<Value = PathBuf> {
    use clap::builder::TypedValueParser;
    clap::builder::OsStringValueParser::new().map(PathBuf::from)
}

/// A domain byte in hex: `1F`, `0x1f`, `6`.
fn parse_domain(s: &str) -> Result<u8, String> {
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if digits.is_empty() || digits.len() > 2 {
        return Err(format!("'{s}' is not a byte in hex (such as 1F)"));
    }
    u8::from_str_radix(digits, 16).map_err(|_| format!("'{s}' is not a byte in hex (such as 1F)"))
}

fn parse_piece_bytes(s: &str) -> Result<usize, String> {
    let most = treehash::HasherOptions::MAX_PIECE_BYTES;
    s.parse::<usize>()
        .ok()
        .filter(|n| (1..=most).contains(n))
        .ok_or_else(|| format!("'{s}' is not a piece size from 1 to {most} bytes"))
}

/// The six functions by name (what --help, the man page and completions
/// list), parsed by the library.
fn algorithm() -> impl clap::builder::TypedValueParser<Value = Function> {
    use clap::builder::TypedValueParser;
    let names: Vec<&'static str> = Function::all().map(Function::name).collect();
    clap::builder::PossibleValuesParser::new(names).try_map(|name| name.parse::<Function>())
}
