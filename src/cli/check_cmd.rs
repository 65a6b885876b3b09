//! `--check`: read digest lines, hash the files they name, say which match.
//! Behaves like coreutils' `sha256sum -c` (docs/SPEC.md, "Check files").

use std::ffi::OsStr;
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use treehash::checkfile::{CheckLine, digests_equal, escape_name, parse_line};
use treehash::{HashError, Hasher, TreeParams};

use super::args::{CheckArgs, Cli, TreeArgs};
use super::progress_bar::InputProgress;
use super::{Fatal, exit, hasher, inputs, report, tree_params};

/// What one check file's lines came to.
#[derive(Default)]
struct Tally {
    /// Lines that name a file and a digest (missing files ignored included).
    formatted: usize,
    matched: usize,
    mismatched: usize,
    unreadable: usize,
    malformed: usize,
}

pub fn run(cli: &Cli) -> Result<i32, Fatal> {
    let params = tree_params(&cli.tree, cli.height)?;
    let hasher = hasher(&cli.run, cli.backend)?;
    let checker = Checker {
        hasher,
        params: &params,
        tree: &cli.tree,
        opts: &cli.check,
        progress: !cli.output.no_progress && !cli.check.status,
    };
    let mut code = exit::OK;
    for list in inputs(&cli.files) {
        if !checker.check_list(&list) {
            code = exit::FAILED;
        }
    }
    Ok(code)
}

struct Checker<'a> {
    hasher: &'a Hasher,
    /// The command line's parameters, for untagged lines.
    params: &'a TreeParams,
    tree: &'a TreeArgs,
    opts: &'a CheckArgs,
    progress: bool,
}

impl Checker<'_> {
    /// Checks every line of one check file; true if all is well.
    fn check_list(&self, list: &Path) -> bool {
        let text = match read_list(list) {
            Ok(text) => text,
            Err(e) => {
                report(format!(
                    "{}: {}",
                    list.display(),
                    treehash::error::io_reason(&e)
                ));
                return false;
            }
        };
        let mut tally = Tally::default();
        let lines = text.split(|&b| b == b'\n');
        let line_count = lines.clone().count() - usize::from(text.ends_with(b"\n"));
        for (number, line) in lines.take(line_count).enumerate() {
            match parse_line(line) {
                Ok(parsed) => self.check_line(list, number + 1, &parsed, &mut tally),
                Err(why) => {
                    tally.malformed += 1;
                    if self.opts.warn {
                        report(format!(
                            "{}: {}: improperly formatted line ({why})",
                            list.display(),
                            number + 1
                        ));
                    }
                }
            }
        }
        self.summarise(list, &tally)
    }

    fn check_line(&self, list: &Path, number: usize, line: &CheckLine, tally: &mut Tally) {
        let params = match self.line_params(line) {
            Ok(params) => params,
            Err(LineProblem::Malformed(why)) => {
                tally.malformed += 1;
                if self.opts.warn {
                    report(format!("{}: {number}: {why}", list.display()));
                }
                return;
            }
            Err(LineProblem::NeedsPrefix) => {
                tally.formatted += 1;
                report(format!(
                    "{}: {number}: this digest was made with a prefix; give it with \
                     --prefix-hex or --prefix-file",
                    list.display()
                ));
                self.say(line, "FAILED");
                tally.mismatched += 1;
                return;
            }
        };
        tally.formatted += 1;
        let path = Path::new(OsStr::from_bytes(&line.name));
        let progress = InputProgress::new(&path.display().to_string(), self.progress);
        let result = self.hasher.hash_path(&params, path, &progress);
        progress.finish();
        match result {
            Ok(out) if digests_equal(&out.digest, &line.digest) => {
                tally.matched += 1;
                if !self.opts.quiet {
                    self.say(line, "OK");
                }
            }
            Ok(_) => {
                tally.mismatched += 1;
                self.say(line, "FAILED");
            }
            Err(HashError::Io(e))
                if self.opts.ignore_missing && e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                tally.unreadable += 1;
                if !self.opts.status {
                    report(format!("{}: {e}", path.display()));
                }
                self.say(line, "FAILED open or read");
            }
        }
    }

    /// The parameters a line is checked with: its own if it is tagged, the
    /// command line's otherwise.
    fn line_params(&self, line: &CheckLine) -> Result<TreeParams, LineProblem> {
        let malformed = |e: treehash::ParamError| LineProblem::Malformed(e.to_string());
        match &line.label {
            Some(label) => {
                let prefix = if label.keyed {
                    if !self.params.has_prefix() {
                        return Err(LineProblem::NeedsPrefix);
                    }
                    self.params.prefix().to_vec()
                } else {
                    Vec::new()
                };
                label
                    .to_params(prefix, line.digest.len())
                    .map_err(malformed)
            }
            // A SHAKE length not given on the command line is read off the line.
            None if self.params.algorithm().is_xof() && self.tree.length.is_none() => self
                .params
                .with_output_len(line.digest.len())
                .map_err(malformed),
            None if line.digest.len() != self.params.output_len() => {
                Err(LineProblem::Malformed(format!(
                    "digest of {} bytes, expected {}",
                    line.digest.len(),
                    self.params.output_len()
                )))
            }
            None => Ok(self.params.clone()),
        }
    }

    /// Prints `NAME: VERDICT` unless --status.
    fn say(&self, line: &CheckLine, verdict: &str) {
        if self.opts.status {
            return;
        }
        let mut out = Vec::new();
        let mut name = Vec::new();
        if escape_name(&line.name, &mut name) {
            out.push(b'\\');
        }
        out.extend_from_slice(&name);
        out.extend_from_slice(b": ");
        out.extend_from_slice(verdict.as_bytes());
        out.push(b'\n');
        let mut stdout = io::stdout().lock();
        let _ = stdout.write_all(&out).and_then(|()| stdout.flush());
    }

    /// Prints the warnings coreutils prints; true if the list passed.
    fn summarise(&self, list: &Path, t: &Tally) -> bool {
        if t.formatted == 0 {
            report(format!(
                "{}: no properly formatted checksum lines found",
                list.display()
            ));
            return false;
        }
        if !self.opts.status {
            warn_count(t.malformed, "line is", "lines are", "improperly formatted");
            warn_count(
                t.unreadable,
                "listed file",
                "listed files",
                "could not be read",
            );
            warn_count(
                t.mismatched,
                "computed checksum",
                "computed checksums",
                "did NOT match",
            );
        }
        if self.opts.ignore_missing && t.matched + t.mismatched + t.unreadable == 0 {
            report(format!("{}: no file was verified", list.display()));
            return false;
        }
        t.mismatched == 0 && t.unreadable == 0 && !(self.opts.strict && t.malformed > 0)
    }
}

enum LineProblem {
    Malformed(String),
    NeedsPrefix,
}

fn warn_count(n: usize, one: &str, many: &str, what: &str) {
    match n {
        0 => {}
        1 => report(format!("WARNING: 1 {one} {what}")),
        n => report(format!("WARNING: {n} {many} {what}")),
    }
}

fn read_list(list: &Path) -> io::Result<Vec<u8>> {
    if list.as_os_str() == treehash::input::STDIN_NAME {
        let mut text = Vec::new();
        io::stdin().lock().read_to_end(&mut text)?;
        Ok(text)
    } else {
        if list.is_dir() {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        std::fs::read(list)
    }
}
