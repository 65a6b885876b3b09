//! Digest lines, written and read back: `HEX  NAME` (untagged) and
//! `LABEL (NAME) = HEX` (tagged) are written; every form coreutils'
//! `sha256sum -c` reads is read (BSD's reversed `HEX NAME`, OpenSSL's
//! `LABEL(NAME)= HEX`, leading blanks). A name holding a backslash, a
//! newline or a carriage return is escaped and its line starts with a
//! backslash, as coreutils and b3sum do. docs/SPEC.md describes the format.

use crate::label::{Label, LabelError};

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
    /// coreutils reads one untagged form per check file: a `HEX NAME` line
    /// (BSD's reversed form) after `HEX  NAME` lines is not read, so that a
    /// name with a leading space or `*` means one thing in a file.
    #[error("BSD's reversed form HEX NAME in a file of HEX  NAME lines")]
    MixedForms,
    #[error(transparent)]
    Label(#[from] LabelError),
}

/// Which untagged form a check file's lines have taken so far: coreutils
/// settles it at the first untagged line and holds the file to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum UntaggedForm {
    /// No untagged line read yet.
    #[default]
    Unknown,
    /// `HEX  NAME` or `HEX *NAME` (the GNU form, with its binary mark).
    Gnu,
    /// `HEX NAME` (BSD's `sha256 -r`): every byte after the one blank is
    /// the name, so `HEX *c` names `*c`.
    BsdReversed,
}

/// Reads the lines of one check file in order, as coreutils' `sha256sum -c`
/// reads them (docs/SPEC.md, "Check files"). A line is read without its
/// ending; leading blanks (spaces, tabs) are skipped; a line may be
/// untagged (`HEX  NAME`, `HEX *NAME`, or BSD's reversed `HEX NAME`) or
/// tagged (`LABEL (NAME) = HEX`, or OpenSSL's `LABEL(NAME)= HEX`).
#[derive(Clone, Debug, Default)]
pub struct LineReader {
    /// The lines end with NUL (`-z`): a trailing CR is part of the name.
    nul_ended: bool,
    form: UntaggedForm,
}

impl LineReader {
    /// A reader of one check file whose lines end with NUL if `nul_ended`,
    /// with newlines otherwise (then one trailing CR, of a CRLF line, is
    /// dropped).
    pub fn new(nul_ended: bool) -> LineReader {
        LineReader {
            nul_ended,
            form: UntaggedForm::Unknown,
        }
    }

    /// Reads the next line of the file (without its line ending).
    pub fn parse(&mut self, line: &[u8]) -> Result<CheckLine, LineError> {
        let line = match self.nul_ended {
            true => line,
            false => line.strip_suffix(b"\r").unwrap_or(line),
        };
        let line = trim_blanks(line);
        let (escaped, line) = match line.strip_prefix(b"\\") {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        // Labels start with a letter of a function's name, never with a hex
        // digit, and untagged lines start with their digest.
        let (label, hex_digest, raw_name) = if line.first().is_some_and(u8::is_ascii_hexdigit) {
            let (hex_digest, name) = self.untagged(line)?;
            (None, hex_digest, name)
        } else {
            let (label, hex_digest, name) = tagged(line)?;
            (Some(label), hex_digest, name)
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

    /// Splits an untagged line into its digest and name, and settles the
    /// file's form at its first untagged line. The digest runs to the first
    /// blank; one blank follows it. Then, in the GNU form, a space or the
    /// binary mark `*` comes before the name; in BSD's reversed form the
    /// name follows at once. A line whose name could be read either way is
    /// read in the form the file has taken (GNU at the first line).
    fn untagged<'l>(&mut self, line: &'l [u8]) -> Result<(&'l [u8], &'l [u8]), LineError> {
        let end = line
            .iter()
            .position(|&b| is_blank(b))
            .ok_or(LineError::Malformed)?;
        let (hex_digest, rest) = (&line[..end], &line[end + 1..]);
        if hex_digest.len() % 2 != 0 {
            return Err(LineError::Malformed);
        }
        if !hex_digest.iter().all(u8::is_ascii_hexdigit) {
            return Err(LineError::BadHex);
        }
        let reversed = rest.len() <= 1 || !matches!(rest[0], b' ' | b'*');
        let name = match (reversed, self.form) {
            (true, UntaggedForm::Gnu) => return Err(LineError::MixedForms),
            (true, _) => {
                self.form = UntaggedForm::BsdReversed;
                rest
            }
            (false, UntaggedForm::BsdReversed) => rest,
            (false, _) => {
                self.form = UntaggedForm::Gnu;
                &rest[1..]
            }
        };
        Ok((hex_digest, name))
    }
}

/// Reads one line on its own, as the first line of a check file ending
/// with newlines (a trailing CR is dropped).
pub fn parse_line(line: &[u8]) -> Result<CheckLine, LineError> {
    LineReader::new(false).parse(line)
}

/// A space or a tab, the blanks coreutils skips.
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn trim_blanks(line: &[u8]) -> &[u8] {
    let start = line
        .iter()
        .position(|&b| !is_blank(b))
        .unwrap_or(line.len());
    &line[start..]
}

/// Splits a tagged line into its label, digest and name: `LABEL (NAME) =
/// HEX`, or OpenSSL's `LABEL(NAME)= HEX`; as coreutils reads them, one
/// space may come before the `(`, the name runs to the last `)`, and blanks
/// may surround the `=`. A label may hold parentheses of its own
/// (`SHA3-256-LI(H=8,D=4,B=136)`), so the label with them is tried first,
/// then the name alone (`KT128(f)= HEX` names the file `f`).
fn tagged(line: &[u8]) -> Result<(Label, &[u8], &[u8]), LineError> {
    let name_end = line
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || b == b'-'))
        .unwrap_or(line.len());
    let with_fields = match line.get(name_end) {
        Some(b'(') => line[name_end..]
            .iter()
            .position(|&b| b == b')')
            .map(|close| name_end + close + 1),
        _ => None,
    };
    let mut error = LineError::Malformed;
    for label_end in with_fields.into_iter().chain([name_end]) {
        let Some((hex_digest, name)) = split_tagged_rest(&line[label_end..]) else {
            continue;
        };
        let Ok(text) = std::str::from_utf8(&line[..label_end]) else {
            continue;
        };
        match text.parse::<Label>() {
            Ok(label) => return Ok((label, hex_digest, name)),
            Err(e) => error = LineError::Label(e),
        }
    }
    Err(error)
}

/// What follows a tagged line's label: ` (NAME) = HEX` in coreutils'
/// spacing; returns the digest and the name.
fn split_tagged_rest(rest: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = rest.strip_prefix(b" ").unwrap_or(rest);
    let rest = rest.strip_prefix(b"(")?;
    let close = rest.iter().rposition(|&b| b == b')')?;
    let after = trim_blanks(&rest[close + 1..]);
    let hex_digest = trim_blanks(after.strip_prefix(b"=")?);
    Some((hex_digest, &rest[..close]))
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
            let Some(Label::Tree(label)) = parsed.label else {
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
            b"abcd",
            b"abcd ",
            b"SHA3-256 (file) =",
            b"SHA3-256 (file) = abc",
            b"SHA3-999 (file) = abcd",
            b"\\abcd  bad\\q",
            b"SHA3-256 file = abcd",
        ] {
            assert!(parse_line(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    /// The lines coreutils' `sha256sum -c` reads beside its own
    /// (tests/cksum/md5sum-bsd.sh, cksum-c.sh and cksum-sha3.sh in coreutils).
    #[test]
    fn lines_coreutils_reads_are_read() {
        // OpenSSL's form, and coreutils' spacings around it.
        for line in [
            &b"SHA3-256(f)= abcd"[..],
            b"SHA3-256 (f) = abcd",
            b"SHA3-256(f)=abcd",
            b"SHA3-256 (f)\t=\tabcd",
        ] {
            let read = parse_line(line).unwrap();
            assert_eq!((read.name, read.digest), (b"f".to_vec(), vec![0xab, 0xcd]));
            assert_eq!(read.label.unwrap().to_string(), "SHA3-256");
        }
        // A label with parentheses of its own, in OpenSSL's form; a name
        // that could be read as a label's fields is a name.
        let read = parse_line(b"SHA3-256-LI(H=2,D=4,B=136)(f)= abcd").unwrap();
        assert_eq!(
            read.label.unwrap().to_string(),
            "SHA3-256-LI(H=2,D=4,B=136)"
        );
        let read = parse_line(b"KT128(C=00)= abcd").unwrap();
        assert_eq!(
            (read.label.unwrap().to_string(), read.name),
            ("KT128".into(), b"C=00".to_vec())
        );
        // Leading blanks are skipped, before the escape mark too.
        assert_eq!(parse_line(b" \t abcd  f").unwrap().name, b"f");
        assert_eq!(parse_line(b"\t\\abcd  a\\nb").unwrap().name, b"a\nb");
        assert_eq!(parse_line(b"  SHA3-256 (f) = abcd").unwrap().name, b"f");
    }

    /// coreutils settles a file's untagged form at its first untagged line
    /// (tests/cksum/md5sum-bsd.sh): in BSD's reversed form `HEX *c` names
    /// `*c`, and GNU lines after it keep their space or `*` in the name.
    #[test]
    fn one_untagged_form_per_file() {
        let names = |lines: &[&[u8]]| -> Vec<Result<Vec<u8>, LineError>> {
            let mut reader = LineReader::new(false);
            lines
                .iter()
                .map(|l| reader.parse(l).map(|r| r.name))
                .collect()
        };
        assert_eq!(
            names(&[b"abcd a", b"abcd  b", b"abcd *c", b"abcd  "]),
            [
                Ok(b"a".to_vec()),
                Ok(b" b".to_vec()),
                Ok(b"*c".to_vec()),
                Ok(b" ".to_vec())
            ]
        );
        assert_eq!(
            names(&[b"abcd  b", b"abcd *c", b"abcd dd", b"abcd  "]),
            [
                Ok(b"b".to_vec()),
                Ok(b"c".to_vec()),
                Err(LineError::MixedForms),
                Err(LineError::MixedForms)
            ]
        );
        // A tab ends the digest as a space does; tagged and malformed lines
        // settle nothing.
        assert_eq!(
            names(&[b"SHA3-256 (t) = abcd", b"0z x", b"abcd\tc", b"abcd  d"]),
            [
                Ok(b"t".to_vec()),
                Err(LineError::BadHex),
                Ok(b"c".to_vec()),
                Ok(b" d".to_vec())
            ]
        );
    }

    #[test]
    fn nul_ended_lines_keep_a_trailing_cr() {
        let mut reader = LineReader::new(true);
        assert_eq!(reader.parse(b"abcd  f\r").unwrap().name, b"f\r");
        assert_eq!(parse_line(b"abcd  f\r").unwrap().name, b"f");
    }

    #[test]
    fn digest_comparison() {
        assert!(digests_equal(b"abc", b"abc"));
        assert!(!digests_equal(b"abc", b"abd"));
        assert!(!digests_equal(b"abc", b"ab"));
    }
}
