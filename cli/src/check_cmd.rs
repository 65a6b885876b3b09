//! `--check`: read digest lines, hash the files they name, say which match.
//! Behaves like coreutils' `sha256sum -c` (docs/SPEC.md, "Check files"),
//! and holds lines to a MAC's standard when a prefix is given ("Checking
//! keyed lines").

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use treehash::checkfile::{CheckLine, digests_equal, escape_name, parse_line};
use treehash::params::MIN_KEYED_DIGEST_LEN;
use treehash::{HashError, Hasher, ListInput, ListResult, Params};

use super::args::{CheckArgs, Cli, OutputArgs, TreeArgs};
use super::progress_bar::ListProgress;
use super::{
    Fatal, exit, failure_code, hasher, inputs, note_fallback, note_no_gpu, note_timings, params,
    report, stdout,
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
    };
    let mut code = exit::OK;
    for list in inputs(&cli.files) {
        code = code.max(
            checker
                .check_list(&list)
                .map_err(|e| Fatal::write(&e, code))?,
        );
    }
    note_no_gpu(&cli.output, cli.backend, hasher);
    Ok(code)
}

/// A check file's line (without its line end) that holds no digest: one
/// that starts with `#`, or is empty (but for the CR of a CRLF line, where
/// lines end with newlines).
fn is_comment_or_empty(line: &[u8], nul_ended: bool) -> bool {
    match line {
        [] | [b'#', ..] => true,
        [b'\r'] => !nul_ended,
        _ => false,
    }
}

struct Checker<'a> {
    hasher: &'a Hasher,
    /// The command line's parameters, for untagged lines.
    params: &'a Params,
    tree: &'a TreeArgs,
    opts: &'a CheckArgs,
    output: &'a OutputArgs,
    progress: bool,
}

/// One line of a check file, as the reader classified it.
enum Line {
    /// A digest line whose file is hashed.
    Check { line: CheckLine },
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
}

/// The lines of a check file, one at a time (a list on a pipe is checked as
/// it arrives, and a large file given as a list by mistake costs no
/// memory), comments and empty lines skipped, as coreutils skips them.
struct Lines<'c> {
    checker: &'c Checker<'c>,
    reader: Box<dyn BufRead + Send>,
    buffer: Vec<u8>,
    number: usize,
    ended: bool,
}

impl Iterator for Lines<'_> {
    type Item = (Line, Option<ListInput>);

    fn next(&mut self) -> Option<Self::Item> {
        let zero = self.checker.output.zero;
        let line = &mut self.buffer;
        while !self.ended {
            self.number += 1;
            let number = self.number;
            let parsed = match read_line(&mut self.reader, self.checker.line_end(), line) {
                Err(e) => {
                    self.ended = true;
                    return Some((Line::ReadError(e), None));
                }
                Ok(LineRead::End) => {
                    self.ended = true;
                    return None;
                }
                Ok(LineRead::Line) if is_comment_or_empty(line, zero) => continue,
                Ok(LineRead::TooLong) => Err(format!("longer than {MAX_LINE_BYTES} bytes")),
                // parse_line drops one trailing CR (of a CRLF line); a
                // NUL-ended line has none, so a CR is added for it to drop,
                // and a name that ends with CR keeps it.
                Ok(LineRead::Line) if zero => {
                    line.push(b'\r');
                    parse_line(line).map_err(|why| why.to_string())
                }
                Ok(LineRead::Line) => parse_line(line).map_err(|why| why.to_string()),
            };
            let item = match parsed {
                Err(why) => Line::Malformed {
                    number,
                    why: format!("improperly formatted line ({why})"),
                    // However it failed, a NUL in the line points to -z.
                    nul: !zero && line.contains(&0),
                },
                Ok(parsed) => match self.checker.line_params(&parsed) {
                    Ok(params) => {
                        let path = PathBuf::from(OsStr::from_bytes(&parsed.name));
                        let input = ListInput { params, path };
                        return Some((Line::Check { line: parsed }, Some(input)));
                    }
                    Err(LineProblem::Malformed(why)) => Line::Malformed {
                        number,
                        why,
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
                Line::Check { line } => self.verdict(&line, result, &mut tally),
                Line::Malformed { number, why, nul } => {
                    tally.malformed += 1;
                    tally.nul_lines += usize::from(nul);
                    if self.opts.warn {
                        report(format!("{}: {number}: {why}", list.display()));
                    }
                    Ok(())
                }
                Line::Refused { line, number, why } => {
                    tally.formatted += 1;
                    tally.refused += 1;
                    if !self.opts.status {
                        report(format!("{}: {number}: {why}", list.display()));
                    }
                    self.say(&line, "FAILED")
                }
                Line::ReadError(e) => {
                    report_list_error(list, &e);
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

    /// The byte that ends a check file's lines and the lines printed.
    fn line_end(&self) -> u8 {
        if self.output.zero { b'\0' } else { b'\n' }
    }

    /// Counts and prints a digest line's verdict, from its file's digest.
    fn verdict(&self, line: &CheckLine, result: ListResult, tally: &mut Tally) -> io::Result<()> {
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
                }
            }
            Some(Err(HashError::Io(e)))
                if self.opts.ignore_missing && e.kind() == io::ErrorKind::NotFound => {}
            Some(Err(e)) => {
                let verdict = tally.count_failure(&e);
                if !self.opts.status {
                    report(format!("{}: {e}", path.display()));
                }
                self.say(line, verdict)?;
            }
            None => unreachable!("a digest line's file is hashed"),
        }
        Ok(())
    }

    /// The parameters a line is checked with: its own if it is tagged, the
    /// command line's otherwise; with a prefix given, only if the line meets
    /// the keyed-check rules.
    fn line_params(&self, line: &CheckLine) -> Result<Params, LineProblem> {
        let params = self.unkeyed_line_params(line)?;
        if params.keyed() && line.digest.len() < MIN_KEYED_DIGEST_LEN {
            return Err(LineProblem::Refused(format!(
                "a keyed digest of {} bytes is refused: a keyed check needs at least \
                 {MIN_KEYED_DIGEST_LEN} bytes ({} hex digits)",
                line.digest.len(),
                2 * MIN_KEYED_DIGEST_LEN
            )));
        }
        Ok(params)
    }

    /// [`Self::line_params`] before the length rule.
    fn unkeyed_line_params(&self, line: &CheckLine) -> Result<Params, LineProblem> {
        let malformed = |e: treehash::ParamError| LineProblem::Malformed(e.to_string());
        match &line.label {
            Some(label) => {
                let prefix = match (label.keyed(), self.params.keyed()) {
                    (true, true) => self.params.prefix().to_vec(),
                    (false, false) => Vec::new(),
                    (true, false) => {
                        return Err(LineProblem::Refused(
                            "this digest was made with a prefix; give it with --prefix-hex \
                             or --prefix-file"
                                .into(),
                        ));
                    }
                    (false, true) => {
                        return Err(LineProblem::Refused(
                            "a prefix was given, but this line's label has no ,P: a keyed \
                             check needs a line made with the prefix (label ending ,P)"
                                .into(),
                        ));
                    }
                };
                label
                    .to_params(prefix, line.digest.len())
                    .map_err(malformed)
            }
            // A free length not given on the command line is read off the line.
            None if self.params.free_output_len() && self.tree.length.is_none() => self
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

    /// Prints `NAME: VERDICT` unless --status (with -z: the name as it is,
    /// and a NUL at the end).
    fn say(&self, line: &CheckLine, verdict: &str) -> io::Result<()> {
        if self.opts.status {
            return Ok(());
        }
        say_verdict(self.output.zero, line, verdict)
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
                list.display()
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
        if self.opts.ignore_missing && t.checked() == 0 {
            report(format!("{}: no file was verified", list.display()));
            return exit::FAILED;
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

    /// Lines that reached a verdict (files ignored as missing not counted).
    fn checked(&self) -> usize {
        self.matched + self.mismatched + self.unreadable + self.gpu_failed + self.refused
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

fn report_list_error(list: &Path, e: &io::Error) {
    report(format!(
        "{}: {}",
        list.display(),
        treehash::error::io_reason(e)
    ));
}

/// The longest check line read: a name (at most PATH_MAX, 4096 bytes, on
/// Linux) and the longest digest's hex fit many times over. A longer line is
/// malformed, and is skipped without being held in memory.
const MAX_LINE_BYTES: usize = 1 << 20;

pub(super) fn open_list(list: &Path) -> io::Result<Box<dyn BufRead + Send>> {
    if treehash::input::is_stdin_name(list) {
        // A closed standard input is an error, not an empty list.
        treehash::input::open_stdin()?;
        return Ok(Box::new(BufReader::new(io::stdin())));
    }
    if list.is_dir() {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    }
    let file = File::open(list)?;
    // A device other than a terminal (/dev/zero, a disk) holds no lines:
    // refused unread rather than read without end.
    let kind = file.metadata()?.file_type();
    if kind.is_block_device() || (kind.is_char_device() && !file.is_terminal()) {
        return Err(io::Error::other("a device, not a file of check lines"));
    }
    Ok(Box::new(BufReader::new(file)))
}

/// What [`read_line`] found.
#[derive(Debug, PartialEq)]
pub(super) enum LineRead {
    /// A line, without its ending, is in the buffer.
    Line,
    /// A line longer than [`MAX_LINE_BYTES`], skipped up to its ending.
    TooLong,
    /// The end of the list.
    End,
}

/// Reads the next line ending with `end` (the last one may lack it) into
/// `line`, without the ending.
pub(super) fn read_line(
    reader: &mut dyn BufRead,
    end: u8,
    line: &mut Vec<u8>,
) -> io::Result<LineRead> {
    line.clear();
    let read = reader
        .take(MAX_LINE_BYTES as u64 + 1)
        .read_until(end, line)?;
    if read == 0 {
        return Ok(LineRead::End);
    }
    if line.last() == Some(&end) {
        line.pop();
        return Ok(LineRead::Line);
    }
    if line.len() <= MAX_LINE_BYTES {
        return Ok(LineRead::Line); // the last line, with no ending
    }
    line.clear();
    reader.skip_until(end)?;
    Ok(LineRead::TooLong)
}

/// `NAME: VERDICT` and the line's end (NUL under `-z`), as `--check` and
/// `join -c` print a verdict.
pub(super) fn say_verdict(zero: bool, line: &CheckLine, verdict: &str) -> std::io::Result<()> {
    let mut out = Vec::new();
    if zero {
        out.extend_from_slice(&line.name);
    } else {
        let mut name = Vec::new();
        if escape_name(&line.name, &mut name) {
            out.push(b'\\');
        }
        out.extend_from_slice(&name);
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
    fn lines_are_read_one_at_a_time_and_long_ones_skipped() {
        let long = vec![b'x'; MAX_LINE_BYTES + 10];
        let text = [b"one\n".as_slice(), &long, b"\ntwo\n\nlast"].concat();
        let mut reader = io::Cursor::new(text);
        let mut line = Vec::new();
        let mut next = || {
            let read = read_line(&mut reader, b'\n', &mut line).unwrap();
            (read, String::from_utf8(line.clone()).unwrap())
        };
        assert_eq!(next(), (LineRead::Line, "one".into()));
        assert_eq!(next(), (LineRead::TooLong, String::new()));
        assert_eq!(next(), (LineRead::Line, "two".into()));
        assert_eq!(next(), (LineRead::Line, String::new()));
        assert_eq!(next(), (LineRead::Line, "last".into()));
        assert_eq!(next(), (LineRead::End, String::new()));
        assert_eq!(next(), (LineRead::End, String::new()));
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_read() {
        let text = [vec![b'y'; MAX_LINE_BYTES], b"\0z".to_vec()].concat();
        let mut reader = io::Cursor::new(text);
        let mut line = Vec::new();
        assert_eq!(
            read_line(&mut reader, 0, &mut line).unwrap(),
            LineRead::Line
        );
        assert_eq!(line.len(), MAX_LINE_BYTES);
        assert_eq!(
            read_line(&mut reader, 0, &mut line).unwrap(),
            LineRead::Line
        );
        assert_eq!(line, b"z");
    }

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
        assert_eq!(tally.checked(), 3);
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
