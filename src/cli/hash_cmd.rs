//! The default mode: hash every input and print one digest line each.

use std::io::{self, Write};
use std::path::Path;

use treehash::checkfile::{tagged_line, untagged_line};
use treehash::{HashOutput, TreeParams};

use super::args::{Cli, OutputArgs};
use super::progress_bar::InputProgress;
use super::{Fatal, exit, failure_code, hasher, inputs, name_bytes, report, tree_params};

pub fn run(cli: &Cli) -> Result<i32, Fatal> {
    let params = tree_params(&cli.tree)?;
    let files = inputs(&cli.files);
    if cli.output.raw && files.len() != 1 {
        return Err(Fatal::usage("--raw takes exactly one input"));
    }
    let hasher = hasher(&cli.run)?;
    let mut code = exit::OK;
    for path in &files {
        let progress = InputProgress::new(&path.display().to_string(), !cli.output.no_progress);
        let result = hasher.hash_path(&params, path, &progress);
        progress.finish();
        match result {
            Ok(out) => {
                if let Some(note) = &out.fallback_note {
                    report(note);
                }
                if let Err(e) = print_digest(&cli.output, &params, path, &out) {
                    report(format!(
                        "standard output: {}",
                        treehash::error::io_reason(&e)
                    ));
                    return Ok(exit::FAILED);
                }
                if cli.output.timings {
                    report(format!("timings for {}:\n{}", path.display(), out.timings));
                }
            }
            Err(e) => {
                report(format!("{}: {e}", path.display()));
                code = code.max(failure_code(&e));
            }
        }
    }
    Ok(code)
}

/// Writes one input's digest in the form the options ask for.
fn print_digest(
    output: &OutputArgs,
    params: &TreeParams,
    path: &Path,
    out: &HashOutput,
) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    if output.raw {
        stdout.write_all(&out.digest)?;
        return stdout.flush();
    }
    let hex_digest = hex::encode(&out.digest);
    let name = name_bytes(path);
    let mut line = if output.json {
        json_record(params, path, out, &hex_digest).into_bytes()
    } else if output.no_names {
        hex_digest.into_bytes()
    } else if output.tag {
        tagged_line(&params.label(), &hex_digest, name)
    } else {
        untagged_line(&hex_digest, name)
    };
    line.push(b'\n');
    stdout.write_all(&line)?;
    stdout.flush()
}

/// One JSON object on one line. The prefix itself is never included.
fn json_record(params: &TreeParams, path: &Path, out: &HashOutput, hex_digest: &str) -> String {
    serde_json::json!({
        "name": path.to_string_lossy(),
        "label": params.label(),
        "algorithm": params.algorithm().name(),
        "height": params.height(),
        "degree": params.degree(),
        "block_size": params.block_size(),
        "leaves": params.leaf_count(),
        "keyed": params.has_prefix(),
        "output_len": params.output_len(),
        "digest": hex_digest,
        "bytes": out.bytes,
        "seconds": out.timings.total.as_secs_f64(),
        "backend": out.backend.to_string(),
    })
    .to_string()
}
