//! `treehash`: the command-line tool, a thin layer over the library. Parse
//! the command line, run the mode it asks for, exit with the documented
//! code; the rules shared by the modes (exit codes, `Fatal`, parameters and
//! prefixes, the run's `Hasher`) are here, each mode in a module of its own.

mod args;
mod bench;
mod bench_cmd;
mod check_cmd;
mod check_hints;
mod check_read;
mod generate;
mod hash_cmd;
mod join_cmd;
mod part_cmd;
mod plain;
mod progress_bar;
mod signals;
mod stdout;

use std::io::{self, IsTerminal, Read, Write};
use std::path::Path;

use treehash::function::{OptionBytes, OptionNames, ParamOptions};
use treehash::input::is_stdin_name;
use treehash::{Params, StandardParams, TreeParams};

use args::TreeArgs;
use clap::error::ErrorKind;

fn main() {
    signals::install();
    let args = match args::parse() {
        Ok(args) => args,
        Err(e) => std::process::exit(help_or_usage_error(&e)),
    };
    if let Some(why) = args.check.misuse(args.output.format.tag) {
        report(format!(
            "{why}\nTry 'treehash --help' for more information."
        ));
        exit_now(exit::USAGE);
    }
    let outcome = match &args.command {
        Some(args::Command::Bench(bench)) => bench_cmd::run(bench),
        Some(args::Command::Part(part)) => part_cmd::run(part),
        Some(args::Command::Join(join)) => join_cmd::run(join),
        None => match args.generate {
            Some(kind) => generate::run(kind),
            None if args.check.check => check_cmd::run(&args),
            None => hash_cmd::run(&args),
        },
    };
    let code = outcome.unwrap_or_else(|fatal| {
        report(&fatal.message);
        fatal.code
    });
    exit_now(code);
}

/// Ends the process with `code` at once. Everything written to standard
/// output was flushed at its write; skipping the C library's exit handlers
/// means that the process never waits for the CUDA driver's own teardown,
/// nor for a GPU still starting in the background that no input needed
/// (the kernel releases both).
fn exit_now(code: i32) -> ! {
    let _ = std::io::Write::flush(&mut std::io::stdout());
    // SAFETY: _exit only ends the process; nothing of ours is left unwritten.
    unsafe { libc::_exit(code) }
}

/// Prints what clap had to say and returns the exit code: `--help` and
/// `--version` go to standard output, every write checked (clap's own
/// printing ignores write errors); usage errors go to standard error with
/// exit code 2.
fn help_or_usage_error(e: &clap::Error) -> i32 {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let text = e.render();
            let text = if std::io::stdout().is_terminal() {
                text.ansi().to_string()
            } else {
                text.to_string()
            };
            match stdout::write(text.as_bytes()) {
                Ok(()) => exit::OK,
                Err(write_error) => {
                    let fatal = Fatal::write(&write_error, exit::OK);
                    report(&fatal.message);
                    fatal.code
                }
            }
        }
        _ => {
            // Standard error: nothing useful can be done if writing it fails.
            let _ = e.print();
            e.exit_code()
        }
    }
}

/// Exit codes (documented in `--help` and the README).
pub mod exit {
    /// Every digest made; with --check, every line matched.
    pub const OK: i32 = 0;
    /// An input could not be read, a check failed, standard output could
    /// not be written, or an internal error (a bug in treehash).
    pub const FAILED: i32 = 1;
    /// Usage error or invalid parameters; nothing was read.
    pub const USAGE: i32 = 2;
    /// `--backend gpu` and no usable GPU, or the GPU failed.
    pub const GPU: i32 = 3;
}

/// A failure that ends the whole run: before any input is hashed, or at a
/// write to standard output that failed.
#[derive(Debug)]
pub struct Fatal {
    pub message: String,
    pub code: i32,
}

impl Fatal {
    pub fn usage(message: impl Into<String>) -> Fatal {
        Fatal {
            message: message.into(),
            code: exit::USAGE,
        }
    }

    /// Standard output could not be written: nothing more is worth doing.
    /// The exit code is `code_so_far`, or [`exit::FAILED`] if that is lower.
    pub fn write(e: &io::Error, code_so_far: i32) -> Fatal {
        Fatal {
            message: format!("standard output: {}", treehash::error::io_reason(e)),
            code: code_so_far.max(exit::FAILED),
        }
    }
}

/// Prints `treehash: MESSAGE` on standard error.
pub fn report(message: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "treehash: {message}");
}

/// How the command line spells its options in the messages that refuse one.
const OPTION_NAMES: OptionNames = OptionNames {
    height: "-H/--height",
    degree: "-D/--degree",
    block_size: "-B/--block-size",
    prefix: "a prefix (--prefix-hex, --prefix-file)",
    customization: "--customization",
    domain: "--domain",
};

/// Reads and validates the parameters: of an LI tree of height `height`
/// (the default height when `None`), or of a standard function, which takes
/// no height, degree or prefix. `inputs` are the files the command will
/// read. The prefix's value never appears in any message.
pub fn params(
    args: &TreeArgs,
    height: Option<u32>,
    inputs: &[std::path::PathBuf],
) -> Result<Params, Fatal> {
    if let (Some(prefix), Some(customization)) = (&args.prefix_file, &args.customization_file)
        && is_stdin_name(prefix)
        && is_stdin_name(customization)
    {
        return Err(Fatal::usage(
            "--prefix-file - and --customization-file -: standard input holds one of them; \
             give the other in a file",
        ));
    }
    options(args, height, inputs)
        .build(args.algorithm, &OPTION_NAMES)
        .map_err(|e| Fatal::usage(e.to_string()))
}

/// The options given, the prefix and customization string read only if the
/// function takes them.
fn options<'a>(
    args: &'a TreeArgs,
    height: Option<u32>,
    inputs: &'a [std::path::PathBuf],
) -> ParamOptions<'a> {
    let usage = |f: Fatal| f.message;
    let prefix: Option<OptionBytes<'a>> = match (&args.prefix_hex, &args.prefix_file) {
        (Some(text), _) => Some(Box::new(move || prefix_from_hex(text).map_err(usage))),
        (None, Some(path)) => Some(Box::new(move || {
            read_prefix_file(path, inputs).map_err(usage)
        })),
        (None, None) => None,
    };
    let customization: Option<OptionBytes<'a>> = match (
        &args.customization,
        &args.customization_hex,
        &args.customization_file,
    ) {
        (Some(text), _, _) => Some(Box::new(move || Ok(text.as_bytes().to_vec()))),
        (None, Some(hex_text), _) => Some(Box::new(move || {
            hex::decode(hex_text.trim()).map_err(|_| {
                format!(
                    "--customization-hex: '{hex_text}' is not hexadecimal bytes (two \
                     digits each)"
                )
            })
        })),
        (None, None, Some(path)) => Some(Box::new(move || {
            let what = ("--customization-file", "customization string");
            read_option_file(what, path, inputs, StandardParams::MAX_CUSTOMIZATION_LEN)
                .map_err(usage)
        })),
        (None, None, None) => None,
    };
    ParamOptions {
        height,
        degree: args.degree,
        block_size: args.block_size,
        length: args.length,
        prefix,
        customization,
        domain: args.domain,
    }
}

/// The prefix given in hex. A prefix given is a key or salt: an empty one is
/// refused (docs/SPEC.md, "Checking keyed lines").
fn prefix_from_hex(text: &str) -> Result<Vec<u8>, Fatal> {
    let text = text.trim();
    let refuse = |why: &str| Fatal::usage(format!("--prefix-hex: {why} (value not shown)"));
    if text.is_empty() {
        return Err(refuse(
            "the prefix is empty; a key or salt needs at least one byte",
        ));
    }
    if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(refuse("the text is not hexadecimal (0-9, a-f)"));
    }
    let bytes = hex::decode(text)
        .map_err(|_| refuse("an odd number of hex digits; each byte takes two"))?;
    if bytes.len() > TreeParams::MAX_PREFIX_LEN {
        return Err(refuse(&format!(
            "{} bytes; a prefix is at most {}",
            bytes.len(),
            TreeParams::MAX_PREFIX_LEN
        )));
    }
    Ok(bytes)
}

/// The prefix read from a file (`-` is standard input), as
/// [`read_option_file`] reads it; an empty file is refused like an empty
/// key.
fn read_prefix_file(path: &Path, inputs: &[std::path::PathBuf]) -> Result<Vec<u8>, Fatal> {
    let bytes = read_option_file(
        ("--prefix-file", "prefix"),
        path,
        inputs,
        TreeParams::MAX_PREFIX_LEN,
    )?;
    if bytes.is_empty() {
        return Err(Fatal::usage(format!(
            "--prefix-file {}: the file is empty; a key or salt needs at least one byte",
            path.display()
        )));
    }
    Ok(bytes)
}

/// An option's bytes read from a file (`-` is standard input); `option` is
/// the option's name and what it gives, for messages. At most `most` bytes
/// are read (so `/dev/zero` or a large file is refused at
/// once). Standard input can hold them only when no input is read from it:
/// otherwise the option would take the data, and the digest would be of
/// whatever was left.
fn read_option_file(
    (option, what): (&str, &str),
    path: &Path,
    inputs: &[std::path::PathBuf],
    most: usize,
) -> Result<Vec<u8>, Fatal> {
    let refuse = |why: &str| Fatal::usage(format!("{option} {}: {why}", path.display()));
    let dash = is_stdin_name(path);
    if (dash || is_standard_input(path)) && inputs.iter().any(|input| is_stdin_name(input)) {
        return Err(refuse(&format!(
            "this is standard input, which an input is read from too; \
             give the {what} in another file"
        )));
    }
    let limit = most as u64 + 1;
    let mut bytes = Vec::new();
    let read = if dash {
        // A closed standard input is an error, not empty bytes.
        treehash::input::open_stdin()
            .and_then(|_| std::io::stdin().lock().take(limit).read_to_end(&mut bytes))
    } else {
        std::fs::File::open(path).and_then(|file| file.take(limit).read_to_end(&mut bytes))
    };
    read.map_err(|e| refuse(&treehash::error::io_reason(&e)))?;
    if bytes.len() > most {
        return Err(refuse(&format!(
            "longer than {most} bytes (a {what} is at most {most})"
        )));
    }
    Ok(bytes)
}

/// Whether `path` is the file that standard input is (`/dev/stdin`, or the
/// file or pipe it was redirected from).
fn is_standard_input(path: &Path) -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let stdin = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|file| file.metadata());
    match (stdin, std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// Prints the library's note that `--backend auto` hashed on the CPU, when
/// the user asked to hear it (`-v` or `--timings`).
pub fn note_fallback(output: &args::OutputArgs, out: &treehash::HashOutput) {
    if let Some(note) = &out.fallback_note
        && (output.verbose || output.timings)
    {
        report(note);
    }
}

/// With `--timings`: the input's phases and each engine's share, on
/// standard error.
pub fn note_timings(output: &args::OutputArgs, path: &Path, out: &treehash::HashOutput) {
    if output.timings {
        report(format!(
            "timings for {}:\n{}{}",
            path.display(),
            out.timings,
            shares_table(out)
        ));
    }
}

/// Each engine's share of the input and its rate, for `--timings`: empty
/// when one engine did everything.
fn shares_table(out: &treehash::HashOutput) -> String {
    if out.shares.len() < 2 {
        return String::new();
    }
    let total: u64 = out.shares.iter().map(|s| s.bytes).sum::<u64>().max(1);
    let mut table = String::from("\n  engine       share          bytes    busy ms     GB/s");
    for s in &out.shares {
        let secs = s.busy.as_secs_f64();
        let rate = if secs > 0.0 {
            s.bytes as f64 / secs / 1e9
        } else {
            0.0
        };
        table.push_str(&format!(
            "\n  {:<8} {:>8.1} % {:>14} {:>10.1} {:>8.2}",
            s.engine,
            100.0 * s.bytes as f64 / total as f64,
            s.bytes,
            secs * 1e3,
            rate
        ));
    }
    table
}

/// At the end of a run under `--backend auto`, when the user asked to hear
/// it (`-v` or `--timings`): why no GPU took part, if none did (this waits
/// for the GPUs' start in the background to end).
pub fn note_no_gpu(
    output: &args::OutputArgs,
    backend: args::BackendArg,
    hasher: &treehash::Hasher,
) {
    if backend != args::BackendArg::Auto || !(output.verbose || output.timings) {
        return;
    }
    if let Some(reason) = hasher.why_no_gpu() {
        report(format!("{reason}; hashing on the CPU"));
    }
}

/// A path's bytes, as written in digest lines.
pub fn name_bytes(path: &Path) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes()
}

/// The hasher for the whole run. With `--backend gpu` every GPU asked for
/// is started here, side by side, so that a missing one is one error, not
/// one per input, and an input shared by several finds them all ready. It lives
/// until the process exits: leaking it lets the exit skip tearing down the
/// CUDA context and pinned buffers one by one.
pub fn hasher(
    run: &args::RunArgs,
    backend: args::BackendArg,
) -> Result<&'static treehash::Hasher, Fatal> {
    let mut options = treehash::HasherOptions::default();
    options.backend = backend.into();
    options.threads = run.threads.map(usize::from);
    options.piece_bytes = run.piece_bytes;
    options.devices = run.device.clone();
    options.copy_mode = run.gpu_copy.into();
    let hasher: &'static treehash::Hasher =
        Box::leak(Box::new(treehash::Hasher::new(options).map_err(|e| {
            Fatal {
                message: e.to_string(),
                code: exit::FAILED,
            }
        })?));
    if backend == args::BackendArg::Gpu {
        hasher.gpus().map_err(|e| Fatal {
            message: format!("--backend gpu: {e}"),
            code: exit::GPU,
        })?;
    }
    Ok(hasher)
}

/// The exit code an input's failure calls for.
pub fn failure_code(e: &treehash::HashError) -> i32 {
    match e {
        treehash::HashError::Gpu(_) => exit::GPU,
        // A bug: the input got no digest, as when it cannot be read.
        treehash::HashError::Internal(_) => exit::FAILED,
        _ => exit::FAILED,
    }
}

/// The inputs named on the command line; none means standard input.
pub fn inputs(files: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    if files.is_empty() {
        vec![treehash::input::STDIN_NAME.into()]
    } else {
        files.to_vec()
    }
}
