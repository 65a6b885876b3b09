//! The command-line tool: a thin layer over the library.

pub mod args;
pub mod bench;
pub mod bench_cmd;
pub mod check_cmd;
pub mod hash_cmd;
pub mod plain;
pub mod progress_bar;
pub mod signals;

use std::io::Write;
use std::path::Path;

use treehash::TreeParams;

use args::TreeArgs;

/// Exit codes (documented in `--help` and the README).
pub mod exit {
    /// Every digest made; with --check, every line matched.
    pub const OK: i32 = 0;
    /// An input could not be read, or a check failed.
    pub const FAILED: i32 = 1;
    /// Usage error or invalid parameters; nothing was read.
    pub const USAGE: i32 = 2;
    /// `--backend gpu` and no usable GPU, or the GPU failed.
    pub const GPU: i32 = 3;
}

/// A failure that ends the whole run before any input is hashed.
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
}

/// Prints `treehash: MESSAGE` on standard error.
pub fn report(message: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "treehash: {message}");
}

/// Reads and validates the tree parameters. The prefix's value never
/// appears in any message.
pub fn tree_params(args: &TreeArgs, height: u32) -> Result<TreeParams, Fatal> {
    let prefix = match (&args.prefix_hex, &args.prefix_file) {
        (Some(text), _) => hex::decode(text.trim()).map_err(|_| {
            Fatal::usage("--prefix-hex: not an even number of hex digits (value not shown)")
        })?,
        (None, Some(path)) => read_prefix_file(path)?,
        (None, None) => Vec::new(),
    };
    TreeParams::with_options(
        args.algorithm,
        height,
        args.degree,
        args.block_size,
        prefix,
        args.length,
    )
    .map_err(|e| Fatal::usage(e.to_string()))
}

fn read_prefix_file(path: &Path) -> Result<Vec<u8>, Fatal> {
    let bytes = std::fs::read(path).map_err(|e| {
        Fatal::usage(format!(
            "--prefix-file {}: {}",
            path.display(),
            treehash::error::io_reason(&e)
        ))
    })?;
    Ok(bytes)
}

/// A path's bytes, as written in digest lines.
pub fn name_bytes(path: &Path) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes()
}

/// The hasher for the whole run. With `--backend gpu` the GPU is started
/// here, so that a missing one is one error, not one per input. It lives
/// until the process exits: leaking it lets the exit skip tearing down the
/// CUDA context and pinned buffers one by one.
pub fn hasher(
    run: &args::RunArgs,
    backend: args::BackendArg,
) -> Result<&'static treehash::Hasher, Fatal> {
    let options = treehash::HasherOptions {
        backend: backend.into(),
        threads: run.threads.map(usize::from),
        piece_bytes: run.chunk_bytes,
        device: run.device,
        copy_mode: run.gpu_copy.into(),
        ..Default::default()
    };
    let hasher: &'static treehash::Hasher =
        Box::leak(Box::new(treehash::Hasher::new(options).map_err(|e| {
            Fatal {
                message: e.to_string(),
                code: exit::FAILED,
            }
        })?));
    if backend == args::BackendArg::Gpu {
        hasher.gpu().map_err(|e| Fatal {
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
