//! Reading a check file: opening it (a path, or `-` for standard input),
//! its lines one at a time with a bound on their length, and which lines
//! hold no digest. `--check` and `join -c` read their lists with these.

use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Read};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// A check file's line (without its line end) that holds no digest: one
/// that starts with `#`, or is empty (but for the CR of a CRLF line, where
/// lines end with newlines).
pub(super) fn is_comment_or_empty(line: &[u8], nul_ended: bool) -> bool {
    match line {
        [] | [b'#', ..] => true,
        [b'\r'] => !nul_ended,
        _ => false,
    }
}

/// The longest check line read: a name (at most PATH_MAX, 4096 bytes, on
/// Linux) and the longest digest's hex fit many times over. A longer line is
/// malformed, and is skipped without being held in memory.
pub(super) const MAX_LINE_BYTES: usize = 1 << 20;

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
    /// A line, without its ending, is in the buffer; `ended` is false for
    /// a last line that has no ending.
    Line { ended: bool },
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
        return Ok(LineRead::Line { ended: true });
    }
    if line.len() <= MAX_LINE_BYTES {
        return Ok(LineRead::Line { ended: false });
    }
    line.clear();
    reader.skip_until(end)?;
    Ok(LineRead::TooLong)
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
        let line = |ended| LineRead::Line { ended };
        assert_eq!(next(), (line(true), "one".into()));
        assert_eq!(next(), (LineRead::TooLong, String::new()));
        assert_eq!(next(), (line(true), "two".into()));
        assert_eq!(next(), (line(true), String::new()));
        assert_eq!(next(), (line(false), "last".into()));
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
            LineRead::Line { ended: true }
        );
        assert_eq!(line.len(), MAX_LINE_BYTES);
        assert_eq!(
            read_line(&mut reader, 0, &mut line).unwrap(),
            LineRead::Line { ended: false }
        );
        assert_eq!(line, b"z");
    }
}
