//! `treehash bench FILE`: timings across heights and backends, H = 0 checked
//! against plain SHA-3, as a table, JSON or an SVG chart.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use treehash::{BackendChoice, HasherOptions};

use super::args::BenchArgs;
use super::bench::{self, BenchConfig};
use super::{Fatal, exit, failure_code, report, signals, stdout, tree_params};

pub fn run(args: &BenchArgs) -> Result<i32, Fatal> {
    let treehash::Function::Tree(algorithm) = args.tree.algorithm else {
        return Err(Fatal::usage(format!(
            "bench measures LI trees by height; {} has no height",
            args.tree.algorithm
        )));
    };
    let params = tree_params(&args.tree, algorithm, 0, std::slice::from_ref(&args.file))?;
    for &height in &args.heights.0 {
        params
            .at_height(height)
            .map_err(|e| Fatal::usage(format!("--heights: H={height}: {e}")))?;
    }
    if let Some(plot) = &args.plot {
        check_svg_name(plot)?;
    }
    if treehash::input::is_stdin_name(&args.file) {
        return Err(Fatal::usage(
            "bench needs a regular file, not standard input (it reads the file many times)",
        ));
    }
    match std::fs::metadata(&args.file) {
        // No throughput can be measured on no bytes.
        Ok(meta) if meta.is_file() && meta.len() == 0 => {
            return Err(Fatal {
                message: format!(
                    "{}: the file is empty: bench has nothing to time (--verify checks \
                     an empty file's H = 0 digest)",
                    args.file.display()
                ),
                code: exit::FAILED,
            });
        }
        Ok(meta) if meta.is_file() => {}
        Ok(_) => {
            return Err(Fatal {
                message: format!(
                    "{}: not a regular file (bench reads it many times)",
                    args.file.display()
                ),
                code: exit::FAILED,
            });
        }
        Err(e) => {
            return Err(Fatal {
                message: format!(
                    "{}: {}",
                    args.file.display(),
                    treehash::error::io_reason(&e)
                ),
                code: exit::FAILED,
            });
        }
    }
    let plot = args.plot.as_deref().map(PlotFile::open).transpose()?;
    let options = HasherOptions {
        threads: args.run.threads.map(usize::from),
        piece_bytes: args.run.chunk_bytes,
        devices: args.run.device.clone(),
        copy_mode: args.run.gpu_copy.into(),
        ..Default::default()
    };
    let mut backends: Vec<BackendChoice> = Vec::new();
    for &b in &args.backend {
        if !backends.contains(&b.into()) {
            backends.push(b.into());
        }
    }

    let spinner = if args.no_progress || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} bench {msg} [{elapsed}]") {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    };
    let config = BenchConfig {
        file: args.file.clone(),
        params,
        heights: args.heights.0.clone(),
        backends,
        repeat: args.repeat as usize,
        vs_plain: args.vs_plain,
        hasher: options,
    };
    signals::hashing(&args.file);
    let result = bench::run(&config, &|step| spinner.set_message(step.to_string()));
    spinner.finish_and_clear();
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(e) => {
            report(format!("{}: {e}", args.file.display()));
            return Ok(failure_code(&e));
        }
    };
    let text = if args.json {
        let json = serde_json::to_string_pretty(&outcome).expect("the report serialises");
        format!("{json}\n")
    } else {
        bench::to_markdown(&outcome)
    };
    stdout::write(text.as_bytes()).map_err(|e| Fatal::write(&e, exit::OK))?;
    let mut code = exit::OK;
    if let Some(plot) = plot {
        match bench::plot_svg(&outcome, plot.path) {
            Ok(()) => plot.keep(),
            Err(e) => {
                report(format!("--plot {}: {e}", plot.path.display()));
                code = exit::FAILED;
            }
        }
    }
    for unavailable in &outcome.unavailable {
        report(format!(
            "--backend {}: {} (its rows were skipped)",
            unavailable.backend, unavailable.reason
        ));
        code = code.max(exit::GPU);
    }
    if !outcome.verified() {
        report("H = 0 verification FAILED: a backend's H = 0 digest differs from plain SHA-3");
        code = exit::FAILED;
    }
    Ok(code)
}

/// The chart is SVG: a name that says otherwise (`chart.png`) would get
/// SVG under another type's name, so it is refused before anything runs.
fn check_svg_name(path: &Path) -> Result<(), Fatal> {
    let svg = path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("svg"));
    if svg {
        Ok(())
    } else {
        Err(Fatal::usage(format!(
            "--plot {}: the chart is written as SVG; give a file name ending in .svg",
            path.display()
        )))
    }
}

/// The chart's file, checked before the benchmark runs so that a bad path
/// does not cost a whole run: opened for writing (made if missing, never
/// truncated here). A file made here that no chart was written into (the
/// run failed, or standard output did) is removed when this drops, if it is
/// still that same empty file.
struct PlotFile<'a> {
    path: &'a Path,
    /// The device and inode of the file made here, until a chart is kept.
    made: Option<(u64, u64)>,
}

impl<'a> PlotFile<'a> {
    fn open(path: &'a Path) -> Result<PlotFile<'a>, Fatal> {
        use std::os::unix::fs::MetadataExt;
        let refuse = |e: &std::io::Error| Fatal {
            message: format!(
                "--plot {}: {}",
                path.display(),
                treehash::error::io_reason(e)
            ),
            code: exit::FAILED,
        };
        let made = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(file) => {
                let meta = file.metadata().map_err(|e| refuse(&e))?;
                Some((meta.dev(), meta.ino()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(|e| refuse(&e))?;
                None
            }
            Err(e) => return Err(refuse(&e)),
        };
        Ok(PlotFile { path, made })
    }

    /// The chart was written: the file stays.
    fn keep(mut self) {
        self.made = None;
    }
}

impl Drop for PlotFile<'_> {
    fn drop(&mut self) {
        use std::os::unix::fs::MetadataExt;
        if let Some(made) = self.made
            && let Ok(meta) = std::fs::symlink_metadata(self.path)
            && (meta.dev(), meta.ino()) == made
            && meta.len() == 0
        {
            let _ = std::fs::remove_file(self.path);
        }
    }
}
