//! `treehash join`: the parts of a file to its digest line, or a check of
//! that digest against a SUMS file (docs/SPEC.md, "Parts and joins").

use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use treehash::TreeParams;
use treehash::checkfile::{CheckLine, LineReader, digests_equal};
use treehash::input::is_stdin_name;
use treehash::parts::{JoinError, Joined, NameRule, join_bytes, read_part};

use super::args::JoinArgs;
use super::check_cmd::say_verdict;
use super::check_read::{LineRead, is_comment_or_empty, open_list, read_line};
use super::hash_cmd::digest_line;
use super::{Fatal, exit, report, stdout};

pub fn run(args: &JoinArgs) -> Result<i32, Fatal> {
    let start = Instant::now();
    if args.parts.iter().filter(|p| is_stdin_name(p)).count() > 1 {
        return Err(Fatal::usage("standard input (-) can hold one part only"));
    }
    let mut parts = Vec::with_capacity(args.parts.len());
    for path in &args.parts {
        match read_part_file(path) {
            Ok(bytes) => parts.push(bytes),
            Err(e) => {
                report(format!(
                    "{}: {}",
                    path.display(),
                    treehash::error::io_reason(&e)
                ));
                return Ok(exit::FAILED);
            }
        }
    }
    let names = if args.any_name {
        NameRule::Any
    } else {
        NameRule::BaseName
    };
    let joined = match join_bytes(&parts, names) {
        Ok(joined) => joined,
        Err(e) => {
            let name = |at: usize| args.parts[at].display().to_string();
            let mut reason = e.reason(&name);
            if matches!(
                e,
                JoinError::Differs {
                    what: "file name",
                    ..
                }
            ) {
                reason.push_str(" (--any-name joins parts made from other names)");
            }
            match e.part() {
                Some(at) => report(format!("{}: {reason}", name(at))),
                None => report(format!("join: {reason}")),
            }
            return Ok(exit::FAILED);
        }
    };
    let name = display_name(&joined);
    if let Some(sums) = &args.check {
        return check(args, &joined, &name, sums);
    }
    let mut out = joined.output();
    out.timings.total = start.elapsed();
    let label = joined.label().to_string();
    let line = digest_line(
        &args.output,
        &joined.params,
        &label,
        joined.keyed,
        &name,
        &out,
    );
    stdout::write(&line).map_err(|e| Fatal::write(&e, exit::OK))?;
    Ok(exit::OK)
}

/// The name the parts recorded, `-` if none.
fn display_name(joined: &Joined) -> PathBuf {
    if joined.name.is_empty() {
        PathBuf::from(treehash::input::STDIN_NAME)
    } else {
        PathBuf::from(OsStr::from_bytes(&joined.name))
    }
}

/// A part's bytes from a file, a pipe or standard input for `-`, read as
/// far as its header allows ([`read_part`]); a device, a directory or a
/// socket is refused unread.
fn read_part_file(path: &Path) -> std::io::Result<Vec<u8>> {
    if is_stdin_name(path) {
        return read_part(&mut std::io::stdin().lock());
    }
    let mut file = File::open(path)?;
    let kind = file.metadata()?.file_type();
    if !(kind.is_file() || kind.is_fifo()) {
        return Err(std::io::Error::other(
            "not a regular file: a part is the file `treehash part -o` wrote",
        ));
    }
    read_part(&mut file)
}

/// `-c SUMS`: every line of SUMS that names the file gets a verdict, as
/// `--check` gives it; the exit code is 0 only if each matched. A line
/// names the file by the name the parts recorded or, where no line does,
/// by its last component (a SUMS made with another path to the file, as
/// another host spells it).
fn check(args: &JoinArgs, joined: &Joined, name: &Path, sums: &Path) -> Result<i32, Fatal> {
    let mut reader = match open_list(sums) {
        Ok(reader) => reader,
        Err(e) => {
            report(format!(
                "{}: {}",
                sums.display(),
                treehash::error::io_reason(&e)
            ));
            return Ok(exit::FAILED);
        }
    };
    let zero = args.output.zero;
    let end = if zero { b'\0' } else { b'\n' };
    let wanted = name.as_os_str().as_bytes();
    let base_name = |name: &[u8]| {
        Path::new(OsStr::from_bytes(name))
            .file_name()
            .map(|f| f.as_bytes().to_vec())
    };
    let wanted_base = base_name(wanted);
    // One line at a time, as `--check` reads them; comments, malformed and
    // overlong lines skipped. Only the lines that name the file are kept.
    let mut buffer = Vec::new();
    let mut parser = LineReader::new(zero);
    let (mut exact, mut same_base) = (Vec::new(), Vec::new());
    let mut read_error = None;
    loop {
        match read_line(reader.as_mut(), end, &mut buffer) {
            Ok(LineRead::End) => break,
            Err(e) => {
                read_error = Some(e);
                break;
            }
            Ok(LineRead::TooLong) => continue,
            Ok(LineRead::Line { .. }) => {}
        }
        if is_comment_or_empty(&buffer, zero) {
            continue;
        }
        let Ok(line) = parser.parse(&buffer) else {
            continue;
        };
        if line.name == wanted {
            exact.push(line);
        } else if exact.is_empty() && wanted_base.is_some() && base_name(&line.name) == wanted_base
        {
            same_base.push(line);
        }
    }
    let lines = if exact.is_empty() { same_base } else { exact };
    let mut code = None;
    for line in lines {
        let verdict = match refusal(joined, &line) {
            Some(why) => {
                report(format!("{}: {}", sums.display(), why));
                "FAILED"
            }
            None if digests_equal(&joined.digest, &line.digest) => "OK",
            None => "FAILED",
        };
        let failed = verdict != "OK";
        code = Some(
            code.unwrap_or(exit::OK)
                .max(if failed { exit::FAILED } else { exit::OK }),
        );
        say_verdict(zero, &line, verdict).map_err(|e| Fatal::write(&e, exit::OK))?;
    }
    if let Some(e) = read_error {
        report(format!(
            "{}: {}",
            sums.display(),
            treehash::error::io_reason(&e)
        ));
        return Ok(exit::FAILED);
    }
    Ok(code.unwrap_or_else(|| {
        report(format!(
            "{}: no line names {}",
            sums.display(),
            name.display()
        ));
        exit::FAILED
    }))
}

/// Why a line cannot vouch for the parts' digest, if it cannot: a label
/// of other parameters (a keyed set needs `,P`), a digest of another
/// length, or a keyed digest too short for a keyed check (docs/SPEC.md).
/// An untagged line is checked with the parts' parameters, prefix included.
fn refusal(joined: &Joined, line: &CheckLine) -> Option<String> {
    let label = joined.label();
    if let Some(theirs) = &line.label
        && *theirs != label
    {
        return Some(format!(
            "the line's label is {theirs}, the parts' {label}: no match"
        ));
    }
    let n = joined.params.output_len();
    if line.digest.len() != n {
        return Some(format!(
            "the line's digest has {} bytes, the parts' {n}",
            line.digest.len()
        ));
    }
    let shortest = TreeParams::MIN_KEYED_DIGEST_LEN;
    if joined.keyed && n < shortest {
        return Some(format!(
            "a keyed digest of {n} bytes is refused: a keyed check needs at least \
             {shortest} bytes"
        ));
    }
    None
}
