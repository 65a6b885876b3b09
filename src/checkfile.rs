//! Digest lines, written and read back: `HEX  NAME` (untagged) and
//! `LABEL (NAME) = HEX` (tagged). A name holding a backslash, a newline or a
//! carriage return is escaped and its line starts with a backslash, as
//! coreutils and b3sum do. docs/SPEC.md describes the format.

use crate::function::{Label, LabelError};

/// Writes `name` with `\`, LF and CR escaped; returns true if anything was.
pub fn escape_name(name: &[u8], out: &mut Vec<u8>) -> bool {
    let mut escaped = false;
    for &b in name {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => {
                out.push(b);
                continue;
            }
        }
        escaped = true;
    }
    escaped
}

/// Undoes [`escape_name`]; `None` for an unknown escape or a trailing backslash.
pub fn unescape_name(name: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(name.len());
    let mut bytes = name.iter();
    while let Some(&b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        out.push(match bytes.next()? {
            b'\\' => b'\\',
            b'n' => b'\n',
            b'r' => b'\r',
            _ => return None,
        });
    }
    Some(out)
}

/// The untagged line `HEX  NAME`, without its newline.
pub fn untagged_line(hex_digest: &str, name: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    let escaped = escape_name(name, &mut body);
    let mut line = Vec::with_capacity(body.len() + hex_digest.len() + 3);
    if escaped {
        line.push(b'\\');
    }
    line.extend_from_slice(hex_digest.as_bytes());
    line.extend_from_slice(b"  ");
    line.extend_from_slice(&body);
    line
}

/// The tagged line `LABEL (NAME) = HEX`, without its newline.
pub fn tagged_line(label: &str, hex_digest: &str, name: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    let escaped = escape_name(name, &mut body);
    let mut line = Vec::new();
    if escaped {
        line.push(b'\\');
    }
    line.extend_from_slice(label.as_bytes());
    line.extend_from_slice(b" (");
    line.extend_from_slice(&body);
    line.extend_from_slice(b") = ");
    line.extend_from_slice(hex_digest.as_bytes());
    line
}

/// One line of a check file, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckLine {
    /// The parameters of a tagged line; `None` for an untagged line, which
    /// uses the command line's.
    pub label: Option<Label>,
    /// The expected digest.
    pub digest: Vec<u8>,
    /// The file name, unescaped.
    pub name: Vec<u8>,
}

/// Why a line is not a digest line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    #[error("not a digest line")]
    Malformed,
    #[error("the digest is not hexadecimal")]
    BadHex,
    /// No file name holds a NUL: the line most likely comes from a list
    /// whose lines end with NUL, read as if they ended with newlines.
    #[error("the name holds a NUL byte; a list written with -z is checked with -c -z")]
    NulInName,
    #[error(transparent)]
    Label(#[from] LabelError),
}

/// Reads one line (without its line ending; a trailing CR is dropped).
pub fn parse_line(line: &[u8]) -> Result<CheckLine, LineError> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let (escaped, line) = match line.strip_prefix(b"\\") {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let (label, hex_digest, raw_name) = if line.first().is_some_and(u8::is_ascii_hexdigit) {
        // Labels start with "SHA", never with a hex digit.
        // HEX  NAME, or HEX *NAME (coreutils' binary-mode mark).
        let split = line
            .iter()
            .position(|&b| b == b' ')
            .ok_or(LineError::Malformed)?;
        let (hex_part, rest) = line.split_at(split);
        // One space, then (as coreutils reads it) a second space or the
        // binary-mode `*` if there is one.
        let rest = rest.strip_prefix(b" ").ok_or(LineError::Malformed)?;
        let name = rest
            .strip_prefix(b" ")
            .or_else(|| rest.strip_prefix(b"*"))
            .unwrap_or(rest);
        (None, hex_part, name)
    } else {
        // LABEL (NAME) = HEX
        let open = find(line, b" (").ok_or(LineError::Malformed)?;
        let close = rfind(line, b") = ").ok_or(LineError::Malformed)?;
        if close < open + 2 {
            return Err(LineError::Malformed);
        }
        let label = std::str::from_utf8(&line[..open]).map_err(|_| LineError::Malformed)?;
        let label: Label = label.parse()?;
        (Some(label), &line[close + 4..], &line[open + 2..close])
    };
    if raw_name.is_empty() || hex_digest.is_empty() || hex_digest.len() % 2 != 0 {
        return Err(LineError::Malformed);
    }
    if raw_name.contains(&0) {
        return Err(LineError::NulInName);
    }
    let digest = hex::decode(hex_digest).map_err(|_| LineError::BadHex)?;
    let name = if escaped {
        unescape_name(raw_name).ok_or(LineError::Malformed)?
    } else {
        raw_name.to_vec()
    };
    Ok(CheckLine {
        label,
        digest,
        name,
    })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// Compares two digests in time that does not depend on where they differ
/// (a digest made with a prefix is a MAC).
pub fn digests_equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Algorithm;

    #[test]
    fn lines_round_trip_with_awkward_names() {
        let names: [&[u8]; 5] = [
            b"plain.iso",
            b"a b  c",
            b"back\\slash",
            b"new\nline",
            b"cr\r",
        ];
        for name in names {
            let line = untagged_line("00ff", name);
            let parsed = parse_line(&line).unwrap();
            assert_eq!(parsed.name, name);
            assert_eq!(parsed.digest, vec![0x00, 0xff]);
            assert_eq!(parsed.label, None);
            assert!(!line.contains(&b'\n'));

            let line = tagged_line("SHA3-256-LI(H=2,D=4,B=136)", "abcd", name);
            let parsed = parse_line(&line).unwrap();
            assert_eq!(parsed.name, name);
            let Some(crate::Label::Tree(label)) = parsed.label else {
                panic!("an LI label")
            };
            assert_eq!(label.algorithm, Algorithm::Sha3_256);
        }
    }

    #[test]
    fn names_with_parentheses_and_equals_survive_tagged_lines() {
        let name = b"x (1) = 2.bin";
        let parsed = parse_line(&tagged_line("SHAKE128", "aa", name)).unwrap();
        assert_eq!(parsed.name, name);
        assert_eq!(parsed.digest, vec![0xaa]);
    }

    #[test]
    fn a_name_with_a_nul_byte_is_refused() {
        assert_eq!(parse_line(b"00ff  a\0b").unwrap_err(), LineError::NulInName);
        assert_eq!(
            parse_line(b"SHA3-256 (a\0b) = 00ff").unwrap_err(),
            LineError::NulInName
        );
    }

    #[test]
    fn binary_mark_and_crlf_are_accepted() {
        let parsed = parse_line(b"abcd *file.bin\r").unwrap();
        assert_eq!(parsed.name, b"file.bin");
        // A single space, as coreutils accepts it.
        assert_eq!(parse_line(b"abcd file.bin").unwrap().name, b"file.bin");
    }

    #[test]
    fn malformed_lines_are_refused() {
        for bad in [
            &b""[..],
            b"abc  file",
            b"zz  file",
            b"abcd  ",
            b"SHA3-256 (file) =",
            b"SHA3-256 (file) = abc",
            b"SHA3-999 (file) = abcd",
            b"\\abcd  bad\\q",
            b"SHA3-256 file = abcd",
        ] {
            assert!(parse_line(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn digest_comparison() {
        assert!(digests_equal(b"abc", b"abc"));
        assert!(!digests_equal(b"abc", b"abd"));
        assert!(!digests_equal(b"abc", b"ab"));
    }
}
