//! `treehash bench FILE...`: timings across heights, functions and backends,
//! of one file or a list of files hashed side by side, each function's
//! digests checked against an independent computation, as a table, JSON or
//! an SVG chart.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use treehash::{BackendChoice, Function, HasherOptions, Params};

use super::args::BenchArgs;
use super::bench::{self, BenchConfig};
use super::{Fatal, exit, failure_code, report, signals, stdout};

pub fn run(args: &BenchArgs) -> Result<i32, Fatal> {
    if let Some(height) = &args.height {
        return Err(Fatal::usage(format!(
            "-H/--height {height}: bench measures every height of a list: use --heights \
             {height} (0..=8 unless given)"
        )));
    }
    let functions = functions(args)?;
    let trees = functions.iter().filter(|f| matches!(f, Params::Tree(_)));
    if args.vs_plain && trees.count() == 0 {
        return Err(Fatal::usage(
            "--vs-plain times plain SHA-3 of an LI function (sha3-256, shake128, …); \
             none is measured",
        ));
    }
    for params in &functions {
        if let Params::Tree(tree) = params {
            for &height in &args.heights.0 {
                tree.at_height(height)
                    .map_err(|e| Fatal::usage(format!("--heights: H={height}: {e}")))?;
            }
        }
    }
    if let Some(plot) = &args.plot {
        check_svg_name(plot)?;
    }
    if let Some(code) = refuse_inputs(&args.files)? {
        return Ok(code);
    }
    if let Some(plot) = &args.plot {
        check_plot_path(plot)?;
    }
    let mut options = HasherOptions::default();
    options.threads = args.run.threads.map(usize::from);
    options.piece_bytes = args.run.piece_bytes;
    options.devices = args.run.device.clone();
    options.copy_mode = args.run.gpu_copy.into();
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
        files: args.files.clone(),
        functions,
        heights: args.heights.0.clone(),
        backends,
        repeat: args.repeat as usize,
        vs_plain: args.vs_plain,
        hasher: options,
    };
    // The SIGBUS handler names the input: only one file can be named.
    if let [only] = args.files.as_slice() {
        signals::hashing(only);
    }
    let result = bench::run(&config, &|step| spinner.set_message(step.to_string()));
    spinner.finish_and_clear();
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(e) => {
            match (&e.path, args.files.as_slice()) {
                (Some(_), _) => report(&e),
                (None, [only]) => report(format!("{}: {e}", only.display())),
                (None, _) => report(&e),
            }
            return Ok(failure_code(&e.error));
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
    if let Some(plot) = &args.plot
        && let Err(e) = bench::plot_svg(&outcome, plot)
    {
        report(format!("--plot {}: {e}", plot.display()));
        code = exit::FAILED;
    }
    for unavailable in &outcome.unavailable {
        report(format!(
            "--backend {}: {} (its rows were skipped)",
            unavailable.backend, unavailable.reason
        ));
        code = code.max(exit::GPU);
    }
    for v in outcome.verification.iter().filter(|v| v.failed()) {
        let at = v.height.map(|h| format!(" at H = {h}")).unwrap_or_default();
        let files = match outcome.is_list() {
            true => format!(" ({} of {} files)", v.files_failed, v.files_checked),
            false => String::new(),
        };
        report(format!(
            "verification FAILED: {}{at} on {} differs from {}{files}",
            v.function, v.backend, v.against
        ));
        code = exit::FAILED;
    }
    Ok(code)
}

/// The parameters of every function measured: -a's, then --also's (each
/// once), with the options given, which each must take.
fn functions(args: &BenchArgs) -> Result<Vec<Params>, Fatal> {
    let mut names: Vec<Function> = vec![args.tree.algorithm];
    for &f in &args.also {
        if !names.contains(&f) {
            names.push(f);
        }
    }
    let mut tree = args.tree.clone();
    let mut all = Vec::with_capacity(names.len());
    for function in names {
        tree.algorithm = function;
        let height = matches!(function, Function::Tree(_)).then_some(0);
        let params = super::params(&tree, height, &args.files)?;
        // A prefix file (standard input, say) is read once: the LI
        // functions after this one take its bytes.
        if params.keyed() && tree.prefix_file.is_some() {
            tree.prefix_file = None;
            tree.prefix_hex = Some(hex::encode(params.prefix()));
        }
        all.push(params);
    }
    Ok(all)
}

/// Refuses inputs a bench cannot time: standard input (a usage error,
/// before anything is read), and files that are missing, not regular, or
/// (a file alone, or every file of a list) empty. Each bad file is
/// reported; the exit code is returned if there was one.
fn refuse_inputs(files: &[PathBuf]) -> Result<Option<i32>, Fatal> {
    if files.iter().any(|f| treehash::input::is_stdin_name(f)) {
        return Err(Fatal::usage(match files {
            [_] => "bench needs a regular file, not standard input (it reads the file many times)",
            _ => "bench needs regular files, not standard input (it reads each file many times)",
        }));
    }
    let mut bad = false;
    let mut bytes = 0;
    for file in files {
        let why = match std::fs::metadata(file) {
            Ok(meta) if meta.is_file() => {
                bytes += meta.len();
                continue;
            }
            Ok(meta) if meta.is_dir() => format!(
                "a directory: bench takes regular files (name those in it, e.g. {}/*)",
                file.display()
            ),
            Ok(_) => "not a regular file (bench reads it many times)".to_string(),
            Err(e) => treehash::error::io_reason(&e),
        };
        report(format!("{}: {why}", file.display()));
        bad = true;
    }
    if bad {
        return Ok(Some(exit::FAILED));
    }
    // No throughput can be measured on no bytes.
    if bytes == 0 {
        let message = match files {
            [only] => format!(
                "{}: the file is empty: bench has nothing to time (--verify checks an empty \
                 file's H = 0 digest)",
                only.display()
            ),
            _ => format!(
                "the {} files are all empty: bench has nothing to time",
                files.len()
            ),
        };
        return Err(Fatal {
            message,
            code: exit::FAILED,
        });
    }
    Ok(None)
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

/// The chart's path, checked before the benchmark runs so that a bad path
/// does not cost a whole run. Nothing is made under its name until the
/// chart is written (a run that fails leaves nothing behind).
fn check_plot_path(path: &Path) -> Result<(), Fatal> {
    treehash::output_file::check(path).map_err(|e| Fatal {
        message: format!(
            "--plot {}: {}",
            path.display(),
            treehash::error::io_reason(&e)
        ),
        code: exit::FAILED,
    })
}
