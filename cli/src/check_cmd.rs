//! `--check`: read digest lines, hash the files they name, say which match.
//! Behaves like coreutils' `sha256sum -c` (docs/SPEC.md, "Check files"),
//! and holds lines to a MAC's standard when a prefix is given ("Checking
//! keyed lines").

use std::ffi::OsStr;
use std::io::{self, BufRead};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use treehash::checkfile::{
    CheckLine, LineError, LineReader, digests_equal, escape_name, parse_line,
};
use treehash::{HashError, HashOutput, Hasher, ListInput, Params, TreeParams};

use super::args::{CheckArgs, Cli, OutputArgs, TreeArgs};
use super::check_read::{LineRead, MAX_LINE_BYTES, is_comment_or_empty, open_list, read_line};
use super::progress_bar::ListProgress;
use super::{
    Fatal, check_hints, exit, failure_code, hasher, inputs, note_fallback, note_no_gpu,
    note_timings, params, report, stdout,
};

/// What one check file's lines came to.
#[derive(Default)]
struct Tally {
    /// Lines that name a file and a digest (missing files ignored included).
    formatted: usize,
    matched: usize,
    mismatched: usize,
    unreadable: usize,
    /// Files whose hashing failed on the GPU.
    gpu_failed: usize,
    /// Lines refused by the keyed-check rules.
    refused: usize,
    malformed: usize,
    /// Malformed lines that held a NUL byte.
    nul_lines: usize,
}

pub fn run(cli: &Cli) -> Result<i32, Fatal> {
    let params = params(&cli.tree, cli.height, &inputs(&cli.files))?;
    let hasher = hasher(&cli.run, cli.backend)?;
    let checker = Checker {
        hasher,
        params: &params,
        tree: &cli.tree,
        opts: &cli.check,
        output: &cli.output,
        progress: !cli.output.no_progress && !cli.check.status,
        untagged_failed: AtomicBool::new(false),
    };
    let mut code = exit::OK;
    for list in inputs(&cli.files) {
        code = code.max(
            checker
                .check_list(&list)
                .map_err(|e| Fatal::write(&e, code))?,
        );
    }
    if checker.untagged_failed.load(Ordering::Relaxed)
        && !cli.check.status
        && let Some(hint) = check_hints::mismatch_hint(&params)
    {
        report(hint);
    }
    note_no_gpu(&cli.output, cli.backend, hasher);
    Ok(code)
}

struct Checker<'a> {
    hasher: &'a Hasher,
    /// The command line's parameters, for untagged lines.
    params: &'a Params,
    tree: &'a TreeArgs,
    opts: &'a CheckArgs,
    output: &'a OutputArgs,
    progress: bool,
    /// An untagged line failed: the run ends with a hint of the parameters
    /// untagged lines are checked with.
    untagged_failed: AtomicBool,
}

/// One line of a check file, as the reader classified it.
enum Line {
    /// A digest line whose file is hashed.
    Check { line: CheckLine, number: usize },
    /// Not a usable digest line (counted, reported with --warn).
    Malformed {
        number: usize,
        why: String,
        /// The line held a NUL byte (a hint that the list was written with -z).
        nul: bool,
    },
    /// A line that the keyed-check rules refuse: reported FAILED.
    Refused {
        line: CheckLine,
        number: usize,
        why: String,
    },
    /// Reading the list failed here; nothing after it is read.
    ReadError(io::Error),
    /// Under `-z`, the list holds no NUL byte but holds newlines: it was
    /// written without `-z`, and nothing of it is checked.
    NotNulEnded,
}

/// The lines of a check file, one at a time (a list on a pipe is checked as
/// it arrives, and a large file given as a list by mistake costs no
/// memory), comments and empty lines skipped, as coreutils skips them.
struct Lines<'c> {
    checker: &'c Checker<'c>,
    reader: Box<dyn BufRead + Send>,
    parser: LineReader,
    /// The list is standard input: a line naming `-` is malformed, as in
    /// coreutils (standard input holds the list, not the file).
    from_stdin: bool,
    buffer: Vec<u8>,
    number: usize,
    ended: bool,
}

impl Iterator for Lines<'_> {
    type Item = (Line, Option<ListInput>);

    fn next(&mut self) -> Option<Self::Item> {
        let zero = self.checker.output.format.zero;
        while !self.ended {
            self.number += 1;
            let number = self.number;
            let line = &mut self.buffer;
            let parsed = match read_line(&mut self.reader, self.checker.line_end(), line) {
                Err(e) => {
                    self.ended = true;
                    return Some((Line::ReadError(e), None));
                }
                Ok(LineRead::End) => {
                    self.ended = true;
                    return None;
                }
                // The whole list read as its first line: it holds no NUL.
                Ok(LineRead::Line { ended: false })
                    if zero && number == 1 && line.contains(&b'\n') =>
                {
                    self.ended = true;
                    return Some((Line::NotNulEnded, None));
                }
                Ok(LineRead::Line { .. }) if is_comment_or_empty(line, zero) => continue,
                Ok(LineRead::TooLong) => Err(format!("longer than {MAX_LINE_BYTES} bytes")),
                Ok(LineRead::Line { .. }) => match self.parser.parse(line) {
                    Ok(read) if self.from_stdin && read.name == b"-" => {
                        Err("the list is standard input, which the name - means too".into())
                    }
                    Ok(read) => Ok(read),
                    Err(LineError::Malformed) => Err(String::new()),
                    Err(why) => Err(why.to_string()),
                },
            };
            let item = match parsed {
                Err(why) => Line::Malformed {
                    number,
                    why: self.checker.improperly_formatted(None, &why),
                    nul: !zero && written_with_z(line),
                },
                Ok(parsed) => match self.checker.line_params(&parsed) {
                    Ok(params) => {
                        let path = PathBuf::from(OsStr::from_bytes(&parsed.name));
                        let input = ListInput { params, path };
                        let line = Line::Check {
                            line: parsed,
                            number,
                        };
                        return Some((line, Some(input)));
                    }
                    Err(LineProblem::Malformed(why)) => Line::Malformed {
                        number,
                        why: self
                            .checker
                            .improperly_formatted(parsed.label.as_ref(), &why),
                        nul: false,
                    },
                    Err(LineProblem::Refused(why)) => Line::Refused {
                        line: parsed,
                        number,
                        why,
                    },
                },
            };
            return Some((item, None));
        }
        None
    }
}

/// Whether a line read up to a newline holds lines ended with NUL: a
/// digest line before its first NUL.
fn written_with_z(line: &[u8]) -> bool {
    match line.iter().position(|&b| b == 0) {
        Some(nul) => parse_line(&line[..nul]).is_ok(),
        None => false,
    }
}

impl Checker<'_> {
    /// Checks every line of one check file, the files hashed side by side
    /// and the verdicts printed in the lines' order; returns the exit code
    /// it calls for, or the error of a write to standard output.
    fn check_list(&self, list: &Path) -> io::Result<i32> {
        let reader = match open_list(list) {
            Ok(reader) => reader,
            Err(e) => {
                report_list_error(list, &e);
                return Ok(exit::FAILED);
            }
        };
        let lines = Lines {
            checker: self,
            reader,
            parser: LineReader::new(self.output.format.zero),
            from_stdin: treehash::input::is_stdin_name(list),
            buffer: Vec::new(),
            number: 0,
            ended: false,
        };
        let mut tally = Tally::default();
        let mut read_failed = false;
        let progress = ListProgress::unknown(self.progress);
        self.hasher.hash_list(lines, &progress, |item, result| {
            progress.input_done();
            progress.suspend(|| match item {
                Line::Check { line, number } => {
                    self.verdict((list, number), &line, result, &mut tally)
                }
                Line::Malformed { number, why, nul } => {
                    tally.malformed += 1;
                    tally.nul_lines += usize::from(nul);
                    if self.opts.warn {
                        report(format!("{}: {number}: {why}", list_name(list)));
                    }
                    Ok(())
                }
                Line::Refused { line, number, why } => {
                    tally.formatted += 1;
                    tally.refused += 1;
                    if !self.opts.status {
                        report(format!("{}: {number}: {why}", list_name(list)));
                    }
                    self.say(&line, "FAILED")
                }
                Line::ReadError(e) => {
                    report_list_error(list, &e);
                    read_failed = true;
                    Ok(())
                }
                Line::NotNulEnded => {
                    report(format!(
                        "{}: no NUL-ended lines: was it written with -z?",
                        list_name(list)
                    ));
                    read_failed = true;
                    Ok(())
                }
            })
        })?;
        progress.finish();
        if read_failed {
            // The lines before it were checked: their warnings too.
            let code = match tally.formatted {
                0 => exit::FAILED,
                _ => self.summarise(list, &tally),
            };
            return Ok(code.max(exit::FAILED));
        }
        Ok(self.summarise(list, &tally))
    }

    /// Why a line was not read, in coreutils' words with the function
    /// named (the line's label's, or the command line's): `improperly
    /// formatted SHA3-256 checksum line`, and treehash's reason, if it has
    /// one beyond that, in parentheses.
    fn improperly_formatted(&self, label: Option<&treehash::label::Label>, why: &str) -> String {
        let function = match label {
            Some(label) => label.to_string(),
            None => self.params.label(),
        };
        match why {
            "" => format!("improperly formatted {function} checksum line"),
            why => format!("improperly formatted {function} checksum line ({why})"),
        }
    }

    /// The byte that ends a check file's lines and the lines printed.
    fn line_end(&self) -> u8 {
        if self.output.format.zero {
            b'\0'
        } else {
            b'\n'
        }
    }

    /// Counts and prints a digest line's verdict, from its file's digest.
    fn verdict(
        &self,
        (list, number): (&Path, usize),
        line: &CheckLine,
        result: Option<Result<HashOutput, HashError>>,
        tally: &mut Tally,
    ) -> io::Result<()> {
        tally.formatted += 1;
        let path = Path::new(OsStr::from_bytes(&line.name));
        match result {
            Some(Ok(out)) => {
                note_fallback(self.output, &out);
                note_timings(self.output, path, &out);
                if digests_equal(&out.digest, &line.digest) {
                    tally.matched += 1;
                    if !self.opts.quiet {
                        self.say(line, "OK")?;
                    }
                } else {
                    tally.mismatched += 1;
                    self.say(line, "FAILED")?;
                    if line.label.is_none() {
                        self.untagged_failed.store(true, Ordering::Relaxed);
                        self.name_plain_line((list, number), line);
                    }
                }
            }
            Some(Err(HashError::Io(e)))
                if self.opts.ignore_missing && e.kind() == io::ErrorKind::NotFound => {}
            Some(Err(e)) => {
                // Said even with --status, as coreutils says it.
                let verdict = tally.count_failure(&e);
                report(format!("{}: {e}", path.display()));
                self.say(line, verdict)?;
            }
            None => unreachable!("a digest line's file is hashed"),
        }
        Ok(())
    }

    /// With --warn, for an untagged line that failed: says so if the line
    /// is the file's plain SHA-3 (-H 0), the parameters it is most often
    /// made with (a second read of the file).
    fn name_plain_line(&self, (list, number): (&Path, usize), line: &CheckLine) {
        let Some(plain) = check_hints::plain_of(self.params) else {
            return;
        };
        if self.opts.warn
            && line.digest.len() == plain.output_len()
            && check_hints::matches_plain(self.hasher, &plain, &line.name, &line.digest)
        {
            report(format!(
                "{}: {number}: the line is the file's plain {} (-H 0), not {}",
                list_name(list),
                plain.label(),
                self.params.label()
            ));
        }
    }

    /// The parameters a line is checked with: its own if it is tagged, the
    /// command line's otherwise; with a prefix given, only if the line meets
    /// the keyed-check rules.
    fn line_params(&self, line: &CheckLine) -> Result<Params, LineProblem> {
        let params = self.unkeyed_line_params(line)?;
        let shortest = TreeParams::MIN_KEYED_DIGEST_LEN;
        if params.keyed() && line.digest.len() < shortest {
            return Err(LineProblem::Refused(format!(
                "a keyed digest of {} bytes is refused: a keyed check needs at least \
                 {shortest} bytes ({} hex digits)",
                line.digest.len(),
                2 * shortest
            )));
        }
        Ok(params)
    }

    /// [`Self::line_params`] before the length rule.
    fn unkeyed_line_params(&self, line: &CheckLine) -> Result<Params, LineProblem> {
        let malformed = |e: treehash::ParamError| LineProblem::Malformed(e.to_string());
        match &line.label {
            Some(label) => {
                // The label's rule, in check mode's words: a keyed line needs
                // the prefix given, and a prefix needs a keyed line.
                let prefix = self.params.prefix();
                label
                    .to_params(prefix, line.digest.len())
                    .map_err(|e| match e {
                        treehash::ParamError::LabelPrefix { keyed: true, .. } => {
                            LineProblem::Refused(
                                "this digest was made with a prefix; give it with --prefix-hex \
                                 or --prefix-file"
                                    .into(),
                            )
                        }
                        treehash::ParamError::LabelPrefix { keyed: false, .. } => {
                            LineProblem::Refused(
                                "a prefix was given, but this line's label has no ,P: a keyed \
                                 check needs a line made with the prefix (label ending ,P)"
                                    .into(),
                            )
                        }
                        e => malformed(e),
                    })
            }
            // A free length not given on the command line is read off the line.
            None if self.params.free_output_len() && self.tree.length.is_none() => self
                .params
                .with_output_len(line.digest.len())
                .map_err(malformed),
            None if line.digest.len() != self.params.output_len() => {
                Err(LineProblem::Malformed(format!(
                    "digest of {} bytes, expected {}{}",
                    line.digest.len(),
                    self.params.output_len(),
                    check_hints::length_hint(self.params, line.digest.len())
                )))
            }
            None => Ok(self.params.clone()),
        }
    }

    /// Prints `NAME: VERDICT` unless --status (with -z: the name as it is,
    /// and a NUL at the end).
    fn say(&self, line: &CheckLine, verdict: &str) -> io::Result<()> {
        if self.opts.status {
            return Ok(());
        }
        say_verdict(self.output.format.zero, line, verdict)
    }

    /// Prints the warnings coreutils prints; returns the exit code the list
    /// calls for.
    fn summarise(&self, list: &Path, t: &Tally) -> i32 {
        if t.formatted == 0 {
            let hint = match t.nul_lines {
                0 => "",
                _ => " (its lines hold NUL bytes: a list written with -z is checked with -c -z)",
            };
            report(format!(
                "{}: no properly formatted checksum lines found{hint}",
                list_name(list)
            ));
            return exit::FAILED;
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
                t.gpu_failed,
                "listed file",
                "listed files",
                "could not be hashed: the GPU failed",
            );
            warn_count(
                t.refused,
                "line was",
                "lines were",
                "refused by the keyed-check rules",
            );
            warn_count(
                t.mismatched,
                "computed checksum",
                "computed checksums",
                "did NOT match",
            );
        }
        // A list that verified no file fails, with --status too; it is
        // said only without --status, as in coreutils.
        if self.opts.ignore_missing && t.matched == 0 {
            if !self.opts.status {
                report(format!("{}: no file was verified", list_name(list)));
            }
            return t.code(self.opts.strict).max(exit::FAILED);
        }
        t.code(self.opts.strict)
    }
}

impl Tally {
    /// Counts a file that got no digest; returns the verdict for its line.
    /// A failed GPU is told apart from a file that could not be read: it is
    /// the machine's fault, not the file's, and calls for exit code 3.
    fn count_failure(&mut self, e: &HashError) -> &'static str {
        if failure_code(e) == exit::GPU {
            self.gpu_failed += 1;
            "FAILED"
        } else {
            self.unreadable += 1;
            "FAILED open or read"
        }
    }

    /// The exit code these lines call for: the highest any line calls for.
    fn code(&self, strict: bool) -> i32 {
        if self.gpu_failed > 0 {
            exit::GPU
        } else if self.mismatched + self.unreadable + self.refused > 0
            || (strict && self.malformed > 0)
        {
            exit::FAILED
        } else {
            exit::OK
        }
    }
}

/// Why a line is not checked.
enum LineProblem {
    /// Not a usable digest line (counted, reported with --warn).
    Malformed(String),
    /// A line that the keyed-check rules refuse: reported FAILED.
    Refused(String),
}

fn warn_count(n: usize, one: &str, many: &str, what: &str) {
    match n {
        0 => {}
        1 => report(format!("WARNING: 1 {one} {what}")),
        n => report(format!("WARNING: {n} {many} {what}")),
    }
}

/// A list as messages name it: standard input as coreutils names it.
fn list_name(list: &Path) -> std::borrow::Cow<'_, str> {
    if treehash::input::is_stdin_name(list) {
        "'standard input'".into()
    } else {
        list.to_string_lossy()
    }
}

fn report_list_error(list: &Path, e: &io::Error) {
    report(format!(
        "{}: {}",
        list_name(list),
        treehash::error::io_reason(e)
    ));
}

/// `NAME: VERDICT` and the line's end (NUL under `-z`), as `--check` and
/// `join -c` print a verdict. As coreutils 9.1 prints it, a name is escaped
/// (with a backslash before the line) only if it holds a line feed or a
/// carriage return, which would break the line; a backslash alone is
/// printed as it is. Under `-z` the name is printed as it is.
pub(super) fn say_verdict(zero: bool, line: &CheckLine, verdict: &str) -> std::io::Result<()> {
    let mut out = Vec::new();
    if zero || !line.name.iter().any(|&b| b == b'\n' || b == b'\r') {
        out.extend_from_slice(&line.name);
    } else {
        out.push(b'\\');
        escape_name(&line.name, &mut out);
    }
    out.extend_from_slice(b": ");
    out.extend_from_slice(verdict.as_bytes());
    out.push(if zero { b'\0' } else { b'\n' });
    stdout::write(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_gpu_is_a_failed_line_and_exit_code_3() {
        let mut tally = Tally {
            formatted: 3,
            matched: 1,
            ..Tally::default()
        };
        let unreadable = HashError::Io(io::Error::from_raw_os_error(libc::ENOENT));
        assert_eq!(tally.count_failure(&unreadable), "FAILED open or read");
        assert_eq!(tally.code(false), exit::FAILED);
        let gpu = HashError::Gpu("the kernel launch failed".into());
        assert_eq!(tally.count_failure(&gpu), "FAILED");
        assert_eq!((tally.unreadable, tally.gpu_failed), (1, 1));
        assert_eq!(tally.code(false), exit::GPU);
    }

    #[test]
    fn refused_and_malformed_lines_fail_as_documented() {
        let refused = Tally {
            formatted: 1,
            refused: 1,
            ..Tally::default()
        };
        assert_eq!(refused.code(false), exit::FAILED);
        let malformed = Tally {
            formatted: 1,
            matched: 1,
            malformed: 1,
            ..Tally::default()
        };
        assert_eq!(malformed.code(false), exit::OK);
        assert_eq!(malformed.code(true), exit::FAILED);
    }
}
