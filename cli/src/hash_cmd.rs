//! The default mode: hash every input and print one digest line each.

use std::path::Path;

use treehash::checkfile::{tagged_line, untagged_line};
use treehash::input::is_stdin_name;
use treehash::{HashError, HashOutput, Hasher, ListInput, Params, StandardParams, TreeParams};

use super::args::{Cli, OutputFormatArgs};
use super::progress_bar::ListProgress;
use super::{
    Fatal, exit, failure_code, hasher, inputs, name_bytes, note_fallback, note_no_gpu,
    note_timings, params, plain, report, signals, stdout,
};

pub fn run(cli: &Cli) -> Result<i32, Fatal> {
    let files = inputs(&cli.files);
    let params = params(&cli.tree, cli.height, &files)?;
    if cli.output.format.raw && files.len() != 1 {
        return Err(Fatal::usage("--raw takes exactly one input"));
    }
    if cli.verify && files.iter().any(|f| is_stdin_name(f)) {
        return Err(Fatal::usage(
            "--verify reads each file twice; it cannot take standard input",
        ));
    }
    let shortest = TreeParams::MIN_KEYED_DIGEST_LEN;
    if params.keyed() && params.output_len() < shortest {
        report(format!(
            "warning: a keyed digest of {} bytes is shorter than the {shortest} \
             that --check accepts for a keyed line",
            params.output_len()
        ));
    }
    let hasher = hasher(&cli.run, cli.backend)?;
    let code = hash_each(cli, hasher, &params, &files)?;
    note_no_gpu(&cli.output, cli.backend, hasher);
    Ok(code)
}

/// Hashes the inputs side by side and prints their lines in order, each as
/// soon as it and those before it are done; returns the exit code.
fn hash_each(
    cli: &Cli,
    hasher: &Hasher,
    params: &Params,
    files: &[std::path::PathBuf],
) -> Result<i32, Fatal> {
    let mut code = exit::OK;
    let progress = ListProgress::new(files, !cli.output.no_progress);
    // The SIGBUS handler's last resort names the input only when there is one.
    if let [only] = files {
        signals::hashing(only);
    }
    let items = files.iter().map(|path| {
        let input = ListInput {
            params: params.clone(),
            path: path.clone(),
        };
        (path, Some(input))
    });
    let written = hasher.hash_list(items, &progress, |path, result| {
        progress.input_done();
        match result {
            Some(Ok(out)) => {
                progress.suspend(|| {
                    note_fallback(&cli.output, &out);
                    let label = params.label();
                    let format = &cli.output.format;
                    let line = digest_line(format, params, &label, params.keyed(), path, &out);
                    stdout::write(&line)?;
                    note_timings(&cli.output, path, &out);
                    Ok::<_, std::io::Error>(())
                })?;
                if cli.verify {
                    code = code.max(verify(hasher, params, path));
                }
            }
            Some(Err(e)) => {
                progress.suspend(|| {
                    report(format!("{}: {e}", path.display()));
                    // A script reading standard output sees every input.
                    if cli.output.format.json {
                        let record = json_failure(params, path, &e.to_string());
                        let end = if cli.output.format.zero { "\0" } else { "\n" };
                        stdout::write(format!("{record}{end}").as_bytes())?;
                    }
                    Ok::<_, std::io::Error>(())
                })?;
                code = code.max(failure_code(&e));
            }
            None => {}
        }
        Ok(())
    });
    progress.finish();
    written.map_err(|e| Fatal::write(&e, code))?;
    Ok(code)
}

/// `--verify`: checks the backend against an independent computation of
/// the same function; returns the exit code.
fn verify(hasher: &Hasher, params: &Params, path: &Path) -> i32 {
    match params {
        Params::Tree(p) => verify_height_zero(hasher, p, path),
        Params::Standard(p) => verify_standard(hasher, p, path),
    }
}

/// Hashes `path` with a standard function on the hasher's backend and with
/// the project's reference code for it (which reads the whole file into
/// memory); reports PASS or FAIL. Returns the exit code.
fn verify_standard(hasher: &Hasher, params: &StandardParams, path: &Path) -> i32 {
    let result = hasher.hash_path(params, path, &()).and_then(|out| {
        let reference = plain::reference_of_file(params, path)?;
        Ok((out, hex::encode(reference)))
    });
    let name = params.standard().standard_name();
    match result {
        Ok((out, reference)) => {
            let digest = hex::encode(&out.digest);
            let (verdict, code) = if digest == reference {
                (format!("equals the reference's ({name}): PASS"), exit::OK)
            } else {
                (
                    format!("is {digest}, the reference's ({name}) is {reference}: FAIL"),
                    exit::FAILED,
                )
            };
            report(format!(
                "{}: the digest on {} {verdict}",
                path.display(),
                out.backend
            ));
            code
        }
        Err(e) => {
            report(format!("{}: --verify: {e}", path.display()));
            failure_code(&e)
        }
    }
}

/// Hashes `path` at H = 0 on the hasher's backend and, independently, with
/// plain SHA-3 of the sha3 crate; reports PASS or FAIL. Returns the exit code.
fn verify_height_zero(hasher: &Hasher, params: &TreeParams, path: &Path) -> i32 {
    let result = params
        .at_height(0)
        .map_err(HashError::from)
        .and_then(|h0| hasher.hash_path(&h0, path, &()))
        .and_then(|tree| Ok((tree, hex::encode(plain::digest_of_file(params, path)?))));
    match result {
        Ok((tree, plain)) => {
            let of = if params.has_prefix() {
                " of prefix ‖ file"
            } else {
                ""
            };
            let label = format!("{}{of}", params.algorithm().fips_name());
            let tree_hex = hex::encode(&tree.digest);
            if tree_hex == plain {
                report(format!(
                    "{}: H=0 on {} equals plain {label} (sha3 crate): PASS",
                    path.display(),
                    tree.backend
                ));
                exit::OK
            } else {
                report(format!(
                    "{}: H=0 on {} is {tree_hex}, plain {label} (sha3 crate) is {plain}: FAIL",
                    path.display(),
                    tree.backend
                ));
                exit::FAILED
            }
        }
        Err(e) => {
            report(format!("{}: --verify: {e}", path.display()));
            failure_code(&e)
        }
    }
}

/// One input's digest in the form the options ask for, with its line end.
/// `label` and `keyed` are those of `params`, but for `treehash join`, whose
/// parts know that a prefix was used without knowing the prefix.
pub fn digest_line(
    output: &OutputFormatArgs,
    params: &Params,
    label: &str,
    keyed: bool,
    path: &Path,
    out: &HashOutput,
) -> Vec<u8> {
    if output.raw {
        return out.digest.clone();
    }
    let hex_digest = hex::encode(&out.digest);
    let name = name_bytes(path);
    let mut line = if output.json {
        json_record(params, (label, keyed), path, out, &hex_digest).into_bytes()
    } else if output.no_names {
        hex_digest.into_bytes()
    } else if output.zero {
        // -z: names are written as they are; the NUL ends the line.
        unescaped_line(output.tag.then_some(label), &hex_digest, name)
    } else if output.tag {
        tagged_line(label, &hex_digest, name)
    } else {
        untagged_line(&hex_digest, name)
    };
    line.push(if output.zero { b'\0' } else { b'\n' });
    line
}

/// `HEX  NAME`, or `LABEL (NAME) = HEX` with a label, the name not escaped
/// (for `-z`, whose lines end with NUL).
fn unescaped_line(label: Option<&str>, hex_digest: &str, name: &[u8]) -> Vec<u8> {
    match label {
        Some(label) => [
            label.as_bytes(),
            b" (",
            name,
            b") = ",
            hex_digest.as_bytes(),
        ]
        .concat(),
        None => [hex_digest.as_bytes(), b"  ", name].concat(),
    }
}

/// The `--json` record of an input that got no digest: its name and
/// parameters as a digest's record has them, `digest` null, and `error`
/// the reason (as standard error says it).
fn json_failure(params: &Params, path: &Path, error: &str) -> String {
    let mut record = serde_json::json!({
        "name": path.to_string_lossy(),
        "label": params.label(),
        "algorithm": params.function().name(),
        "keyed": params.keyed(),
        "output_len": params.output_len(),
        "digest": null,
        "error": error,
    });
    if path.to_str().is_none() {
        record["name_hex"] = hex::encode(name_bytes(path)).into();
    }
    record.to_string()
}

/// One JSON object on one line. The prefix itself is never included. A name
/// that is not UTF-8 cannot be a JSON string as it is: `name` then has U+FFFD
/// for each bad sequence, and `name_hex` the name's exact bytes.
fn json_record(
    params: &Params,
    (label, keyed): (&str, bool),
    path: &Path,
    out: &HashOutput,
    hex_digest: &str,
) -> String {
    let mut record = serde_json::json!({
        "name": path.to_string_lossy(),
        "label": label,
        "algorithm": params.function().name(),
        "keyed": keyed,
        "output_len": params.output_len(),
        "digest": hex_digest,
        "bytes": out.bytes,
        "seconds": out.timings.total.as_secs_f64(),
        "backend": out.backend.to_string(),
        "engines": out.shares.iter().map(|s| serde_json::json!({
            "engine": s.engine.to_string(),
            "bytes": s.bytes,
            "busy_seconds": s.busy.as_secs_f64(),
        })).collect::<Vec<_>>(),
    });
    match params {
        Params::Tree(p) => {
            record["height"] = p.height().into();
            record["degree"] = p.degree().into();
            record["block_size"] = p.block_size().into();
            record["leaves"] = p.leaf_count().into();
        }
        Params::Standard(p) => {
            use treehash::standard::Family;
            match p.standard().family() {
                Family::Kangaroo | Family::ParallelHash => {
                    record["block_size"] = p.block_size().into();
                    record["customization_hex"] = hex::encode(p.customization()).into();
                }
                Family::TurboShake => record["domain"] = format!("{:02X}", p.domain()).into(),
                // A family this tool does not know yet: no fields of its own.
                _ => {}
            }
        }
    }
    if path.to_str().is_none() {
        record["name_hex"] = hex::encode(name_bytes(path)).into();
    }
    record.to_string()
}
