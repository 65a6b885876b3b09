//! `treehash part`: hash one part of a file and write it, or print the plan
//! of a split (docs/SPEC.md, "Parts and joins").

use std::io::{IsTerminal, Write};
use std::path::Path;

use treehash::input::is_stdin_name;
use treehash::parts::{
    MIN_RUN_BYTES, PartOutput, longer_runs, max_parts_with_long_runs, plan, runs_are_short,
};
use treehash::{Params, TreeLabel, TreeParams};

use super::args::PartArgs;
use super::progress_bar::InputProgress;
use super::{Fatal, exit, failure_code, hasher, params, report, stdout};

pub fn run(args: &PartArgs) -> Result<i32, Fatal> {
    let files: Vec<_> = args.file.iter().cloned().collect();
    let params = match params(&args.tree, args.height, &files)? {
        Params::Tree(params) => params,
        // The part format has a mode byte for them (docs/SPEC.md).
        other => {
            return Err(Fatal::usage(format!(
                "parts are made of LI trees (sha3-*, shake*), not of {}",
                other.function()
            )));
        }
    };
    if args.plan {
        return print_plan(args, &params);
    }
    let (Some(file), Some(index), Some(output)) = (&args.file, args.index, &args.output) else {
        return Err(Fatal::usage("a part needs FILE, --index and -o"));
    };
    if index >= args.parts {
        return Err(Fatal::usage(format!(
            "--index {index} is not a part of --parts {}: parts are numbered 0 to {}",
            args.parts,
            args.parts - 1
        )));
    }
    let to_stdout = is_stdin_name(output);
    if to_stdout && std::io::stdout().is_terminal() {
        return Err(Fatal::usage(
            "-o -: standard output is a terminal, and a part is binary; redirect it or give a file",
        ));
    }
    if let Some(warning) = short_runs(&params, args.parts) {
        report(format!("warning: {warning}"));
    }
    let hasher = hasher(&args.run, args.backend)?;
    let progress = InputProgress::new(&file.display().to_string(), !args.no_progress);
    let result = hasher.hash_part(&params, file, index, args.parts, &progress);
    progress.finish();
    let out = match result {
        Ok(out) => out,
        Err(e) => {
            report(format!("{}: {e}", file.display()));
            return Ok(failure_code(&e));
        }
    };
    notes(args, file, &out);
    let bytes = out.part.to_bytes();
    if to_stdout {
        stdout::write(&bytes).map_err(|e| Fatal::write(&e, exit::OK))?;
    } else if let Err(e) = write_whole(output, &bytes) {
        report(format!(
            "{}: {}",
            output.display(),
            treehash::error::io_reason(&e)
        ));
        return Ok(exit::FAILED);
    }
    Ok(exit::OK)
}

/// Writes `bytes` to a file beside `path`, then renames it there: a part
/// that could not be written whole is never left under its name.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".{}.tmp", std::process::id()));
    let written = std::fs::File::create(&temporary)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// What `-v` and `--timings` ask to hear.
fn notes(args: &PartArgs, file: &Path, out: &PartOutput) {
    if let Some(note) = &out.fallback_note
        && (args.verbose || args.timings)
    {
        report(note);
    }
    if args.verbose {
        let leaves = out.part.leaves();
        report(format!(
            "{}: part {} of {}: leaves {}..{}, {} bytes read on the {}",
            file.display(),
            out.part.index(),
            out.part.count(),
            leaves.start,
            leaves.end,
            out.bytes_read,
            out.backend
        ));
    }
    if args.timings {
        report(format!("timings for {}:\n{}", file.display(), out.timings));
    }
}

/// The warning for a split whose parts read runs shorter than
/// [`MIN_RUN_BYTES`], with the parameters or part counts that avoid it.
fn short_runs(params: &TreeParams, count: u64) -> Option<String> {
    if !runs_are_short(params, count) {
        return None;
    }
    let run = params.leaf_count() / count * params.block_size() as u64;
    let most = max_parts_with_long_runs(params);
    let mut ways = vec![if most > 1 {
        format!("at most {most} parts")
    } else {
        "one part".to_string()
    }];
    let (height, block_size) = longer_runs(params, count);
    ways.extend(height.map(|h| format!("-H {h}")));
    ways.extend(block_size.map(|b| format!("-B {b}")));
    Some(format!(
        "{count} parts read runs of {run} bytes per stripe (under {} MiB), which a parallel \
         file system serves slowly; runs reach 1 MiB with {} (another -H or -B changes the \
         digest; --plan shows a split)",
        MIN_RUN_BYTES >> 20,
        join_ways(&ways)
    ))
}

/// `a`, `a or b`, `a, b or c`.
fn join_ways(ways: &[String]) -> String {
    match ways {
        [] => String::new(),
        [only] => only.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// `--plan`: one line per part, on standard output; the warning of short
/// runs on standard error.
fn print_plan(args: &PartArgs, params: &TreeParams) -> Result<i32, Fatal> {
    let file_len = match &args.file {
        Some(file) => match std::fs::metadata(file) {
            Ok(meta) if meta.is_file() => Some(meta.len()),
            Ok(_) => {
                report(format!("{}: not a regular file", file.display()));
                return Ok(exit::FAILED);
            }
            Err(e) => {
                report(format!(
                    "{}: {}",
                    file.display(),
                    treehash::error::io_reason(&e)
                ));
                return Ok(exit::FAILED);
            }
        },
        None => None,
    };
    let label = TreeLabel::of(params);
    let mut text = format!(
        "{label}: {} leaves, stripes of {} bytes; {} parts{}\n",
        params.leaf_count(),
        params.stripe_len(),
        args.parts,
        file_len.map_or(String::new(), |len| format!(" of {len} bytes")),
    );
    text.push_str("part\tleaves\trun bytes\tread bytes\tvalues\n");
    let write = |text: &str| stdout::write(text.as_bytes()).map_err(|e| Fatal::write(&e, exit::OK));
    write(&text)?;
    for part in plan(params, args.parts, file_len) {
        let read = part.read_len.map_or("-".to_string(), |n| n.to_string());
        write(&format!(
            "{}\t{}..{}\t{}\t{read}\t{}\n",
            part.index, part.leaves.start, part.leaves.end, part.run_len, part.values
        ))?;
    }
    if let Some(warning) = short_runs(params, args.parts) {
        report(format!("warning: {warning}"));
    }
    Ok(exit::OK)
}
