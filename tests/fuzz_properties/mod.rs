//! The properties that the fuzz targets (fuzz/fuzz_targets/) check on every
//! input, one function per target. The fuzz crate includes this file
//! (`#[path]` in fuzz/src/lib.rs), and tests/fuzz_regressions.rs runs the
//! kept inputs (fuzz/corpus/, fuzz/regressions/) through it on stable Rust,
//! so a property has one definition wherever it is checked. Only the
//! library's public API is used: the part format may change under it.
//!
//! Each function panics where a property fails, and returns where the
//! input holds them (including inputs that are rightly refused).

use std::path::Path;
use std::sync::OnceLock;

use sha3::{Digest, Sha3_256};
use treehash::checkfile::{digests_equal, parse_line, tagged_line, untagged_line};
use treehash::label::{Label, StandardLabel, TreeLabel};
use treehash::parts::{JoinError, NameRule, Part, join, join_bytes};
use treehash::standard::{Standard, StandardParams};
use treehash::{Algorithm, BackendChoice, Function, Hasher, HasherOptions, Params, TreeParams};

/// Bytes of a part's check value, at its end: the first 16 bytes of
/// SHA3-256 of every byte before it (docs/SPEC.md, "The format").
const CHECK_LEN: usize = 16;

/// `body` with the check value a part ends with appended: a part whose
/// fields are the fuzzer's but whose check value holds, so that the fields'
/// checks are reached.
pub fn sealed(body: &[u8]) -> Vec<u8> {
    let digest = Sha3_256::digest(body);
    [body, &digest[..CHECK_LEN]].concat()
}

/// `part_bytes`: any bytes, as they are and sealed ([`sealed`]). A part
/// that is read writes back as exactly its bytes (the format is
/// canonical), and a lone part joins exactly when it is the whole split
/// (N = 1).
pub fn part_bytes(data: &[u8]) {
    read_back(data);
    read_back(&sealed(data));
}

fn read_back(bytes: &[u8]) {
    let Ok(part) = Part::from_bytes(bytes) else {
        return;
    };
    assert_eq!(
        part.to_bytes(),
        bytes,
        "a part read back writes other bytes"
    );
    assert!(part.index() < part.count(), "{part:?}");
    let joined = join(std::slice::from_ref(&part), NameRule::default());
    match (part.count(), joined) {
        (1, Ok(joined)) => {
            assert_eq!(joined.file_len, part.file_len());
            assert_eq!(joined.parts, 1);
            assert_eq!(joined.digest.len(), part.params().output_len());
        }
        (1, Err(e)) => panic!("a whole split of one part is refused: {e}"),
        (_, Ok(_)) => panic!("part {} of {} joined alone", part.index(), part.count()),
        (_, Err(JoinError::Missing { .. })) => {}
        (_, Err(e)) => panic!("a lone part of a larger split: {e}, not a missing part"),
    }
}

/// Reads structured values off the fuzzer's bytes; past their end, zeros.
pub struct Draw<'d> {
    bytes: &'d [u8],
}

impl<'d> Draw<'d> {
    pub fn new(bytes: &'d [u8]) -> Self {
        Draw { bytes }
    }
    pub fn u8(&mut self) -> u8 {
        let (&first, rest) = self.bytes.split_first().unwrap_or((&0, &[]));
        self.bytes = rest;
        first
    }
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        usize::from(self.u16()) % n
    }
    /// Up to `len` bytes (fewer where the input ends).
    pub fn bytes(&mut self, len: usize) -> &'d [u8] {
        let (taken, rest) = self.bytes.split_at(len.min(self.bytes.len()));
        self.bytes = rest;
        taken
    }
    /// What is left.
    pub fn rest(&mut self) -> &'d [u8] {
        self.bytes(self.bytes.len())
    }
}

/// One CPU hasher for every input: a thread, no GPU.
fn hasher() -> &'static Hasher {
    static HASHER: OnceLock<Hasher> = OnceLock::new();
    HASHER.get_or_init(|| {
        let options = HasherOptions::default()
            .with_backend(BackendChoice::Cpu)
            .with_threads(Some(1));
        Hasher::new(options).expect("a CPU hasher")
    })
}

/// Parameters with small trees: an LI tree of at most 64 leaves with a
/// small B and maybe a prefix, KT128/KT256 with a customization string,
/// ParallelHash with a small B, or TurboSHAKE (which has no parts).
fn small_params(draw: &mut Draw<'_>) -> Params {
    let kind = draw.u8();
    let custom_len = draw.below(24);
    match kind % 8 {
        0..=3 => {
            let algorithm = Algorithm::ALL[draw.below(Algorithm::ALL.len())];
            let height = draw.below(4) as u32;
            let degree = 2 + draw.below(3) as u64;
            let block_size = match draw.below(3) {
                0 => algorithm.rate(),
                _ => 8 * (1 + draw.below(24)),
            };
            let prefix_len = match kind % 4 {
                3 => 1 + draw.below(200),
                _ => 0,
            };
            let prefix = draw.bytes(prefix_len).to_vec();
            let prefix = if prefix_len > 0 && prefix.is_empty() {
                vec![0]
            } else {
                prefix
            };
            let output_len = algorithm.is_xof().then(|| 1 + draw.below(80));
            let params = TreeParams::with_options(
                algorithm,
                height,
                degree,
                Some(block_size),
                prefix,
                output_len,
            );
            Params::Tree(params.expect("small LI parameters are valid"))
        }
        4 | 5 => {
            let standard = [Standard::Kt128, Standard::Kt256][usize::from(kind & 1)];
            let params = StandardParams::new(standard)
                .with_customization(draw.bytes(custom_len * 400).to_vec())
                .and_then(|p| p.with_output_len(1 + draw.below(80)));
            Params::Standard(params.expect("KT parameters are valid"))
        }
        6 => {
            let standard = [Standard::ParallelHash128, Standard::ParallelHash256][draw.below(2)];
            let params = StandardParams::new(standard)
                .with_customization(draw.bytes(custom_len).to_vec())
                .and_then(|p| p.with_block_size(1 + draw.below(64)))
                .and_then(|p| p.with_output_len(1 + draw.below(80)));
            Params::Standard(params.expect("ParallelHash parameters are valid"))
        }
        _ => {
            let standard = [Standard::TurboShake128, Standard::TurboShake256][draw.below(2)];
            Params::Standard(StandardParams::new(standard))
        }
    }
}

/// A file's bytes: `len` bytes of `pattern` repeated (zeros if it is empty).
fn file_bytes(len: usize, pattern: &[u8]) -> Vec<u8> {
    if pattern.is_empty() {
        return vec![0; len];
    }
    pattern.iter().copied().cycle().take(len).collect()
}

/// Every part of a split of `count` of the file at `path`, as bytes.
fn parts_of(params: &Params, path: &Path, count: u64) -> Vec<Vec<u8>> {
    (0..count)
        .map(|index| {
            let made = hasher().hash_part(params, path, index, count, &());
            let made = made.unwrap_or_else(|e| panic!("part {index} of {count}: {e}"));
            made.part.to_bytes()
        })
        .collect()
}

/// What is done to a whole set of parts before the join.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mutation {
    /// Nothing.
    None,
    /// The same parts in another order: joins to the same digest.
    Reorder,
    /// One byte of one part flipped.
    Flip,
    /// One part left out.
    Drop,
    /// One part given twice.
    Duplicate,
    /// One part replaced by the same part of another file.
    OtherFile,
    /// One part replaced by a part of the same file split in more parts.
    OtherSplit,
    /// One part cut short, or with bytes appended.
    Resize,
    /// One byte of one part flipped and its check value made again: the
    /// join may take it or refuse it, but must not panic.
    FlipSealed,
}

const MUTATIONS: [Mutation; 9] = [
    Mutation::None,
    Mutation::Reorder,
    Mutation::Flip,
    Mutation::Drop,
    Mutation::Duplicate,
    Mutation::OtherFile,
    Mutation::OtherSplit,
    Mutation::Resize,
    Mutation::FlipSealed,
];

/// `part_set`: a small file, small parameters and a split of N ≤ 4 drawn
/// from `data`; the parts are made with the library (files written in
/// `scratch`), written as bytes, then changed as `data` says. A set that is
/// whole, in any order, joins to the digest of the file hashed in one
/// process; a set with any byte changed, a part missing, given twice, of
/// another file or of another split is refused. TurboSHAKE makes no part.
pub fn part_set(data: &[u8], scratch: &Path) {
    let mut draw = Draw::new(data);
    let params = small_params(&mut draw);
    let count = 1 + draw.below(4) as u64;
    let max_len = match &params {
        Params::Standard(p) if matches!(p.standard(), Standard::Kt128 | Standard::Kt256) => {
            3 * 8192 + 64
        }
        _ => 4096,
    };
    let len = draw.below(max_len + 1);
    let mutation = MUTATIONS[draw.below(MUTATIONS.len())];
    let (which, at, mask) = (draw.u16(), draw.u16(), draw.u8().max(1));
    let other_len = draw.below(max_len + 1);
    let order = draw.bytes(4);
    let file = file_bytes(len, draw.rest());

    let path = scratch.join("a");
    std::fs::write(&path, &file).expect("the file is written");
    if let Some(why) = params.unsplittable() {
        let made = hasher().hash_part(&params, &path, 0, 1, &());
        assert!(
            made.is_err(),
            "a part under {params:?}, which has none: {why}"
        );
        return;
    }
    let mut parts = parts_of(&params, &path, count);
    // The part a mutation changes.
    let i = usize::from(which) % parts.len();
    // The file the set is whole for, where it is.
    let mut whole_for = matches!(mutation, Mutation::None | Mutation::Reorder)
        .then(|| (path.clone(), file.clone()));

    match mutation {
        Mutation::None => {}
        Mutation::Reorder => {
            let n = parts.len();
            for (at, &r) in order.iter().enumerate().take(n) {
                parts.swap(at, usize::from(r) % n);
            }
        }
        Mutation::Flip | Mutation::FlipSealed => {
            let part = &mut parts[i];
            let body_len = part.len() - CHECK_LEN;
            let at = match mutation {
                Mutation::Flip => usize::from(at) % part.len(),
                _ => usize::from(at) % body_len,
            };
            part[at] ^= mask;
            if mutation == Mutation::FlipSealed {
                *part = sealed(&part[..body_len]);
            }
        }
        Mutation::Drop => {
            parts.remove(i);
        }
        Mutation::Duplicate => {
            let copy = parts[i].clone();
            parts.insert(usize::from(at) % (parts.len() + 1), copy);
        }
        Mutation::OtherFile => {
            let other = scratch.join("b");
            let other_file = file_bytes(other_len, order);
            std::fs::write(&other, &other_file).expect("the other file is written");
            let made = hasher().hash_part(&params, &other, i as u64, count, &());
            parts[i] = made.expect("a part of the other file").part.to_bytes();
            // A split of one part: the set is now the other file's, whole.
            if count == 1 {
                whole_for = Some((other, other_file));
            }
        }
        Mutation::OtherSplit => {
            let more = count + 1 + u64::from(mask % 3);
            let made = hasher().hash_part(&params, &path, i as u64, more, &());
            parts[i] = made.expect("a part of another split").part.to_bytes();
        }
        Mutation::Resize => {
            let part = &mut parts[i];
            match mask % 2 {
                0 => part.truncate(usize::from(at) % part.len()),
                _ => part.extend(std::iter::repeat_n(mask, 1 + usize::from(at % 64))),
            }
        }
    }

    let joined = join_bytes(&parts, NameRule::default());
    // The same set read first, then joined, comes to the same.
    let read: Result<Vec<Part>, _> = parts.iter().map(|b| Part::from_bytes(b)).collect();
    if let Ok(read) = &read {
        for (part, bytes) in read.iter().zip(&parts) {
            assert_eq!(
                &part.to_bytes(),
                bytes,
                "a part read back writes other bytes"
            );
        }
        let again = join(read, NameRule::default());
        assert_eq!(
            again.as_ref().map(|j| &j.digest).ok(),
            joined.as_ref().map(|j| &j.digest).ok(),
            "join and join_bytes disagree"
        );
    } else {
        assert!(
            matches!(joined, Err(JoinError::Unreadable { .. })),
            "an unreadable part, but join_bytes says {joined:?}"
        );
    }
    match (whole_for, joined) {
        (Some((path, file)), joined) => {
            let joined = joined.unwrap_or_else(|e| panic!("a whole set is refused: {e}"));
            let want = hasher()
                .hash_bytes(&params, &file)
                .expect("the file's digest");
            assert_eq!(
                joined.digest, want.digest,
                "the parts join to another digest than the file's"
            );
            assert_eq!(joined.file_len, file.len() as u64);
            assert_eq!(joined.parts, count);
            assert_eq!(joined.keyed, params.keyed());
            assert_eq!(joined.name, path.as_os_str().as_encoded_bytes());
            assert_eq!(joined.params, unkeyed(&params));
        }
        (None, Ok(joined)) if mutation != Mutation::FlipSealed => {
            let want = hasher()
                .hash_bytes(&params, &file)
                .expect("the file's digest");
            panic!(
                "a set changed by {mutation:?} is joined (to {} the file's digest)",
                if joined.digest == want.digest {
                    "exactly"
                } else {
                    "other than"
                }
            );
        }
        (None, _) => {}
    }
}

/// `params` without an LI prefix, as a part records them.
fn unkeyed(params: &Params) -> Params {
    match params {
        Params::Tree(p) => Params::Tree(
            TreeParams::with_options(
                p.algorithm(),
                p.height(),
                p.degree(),
                Some(p.block_size()),
                Vec::new(),
                Some(p.output_len()),
            )
            .expect("the same parameters without a prefix"),
        ),
        other => other.clone(),
    }
}

/// `check_lines`: any bytes as one line, then lines written from values
/// drawn from the bytes. A line either reads or is refused; a line read,
/// written again, reads as the same digest, name and label; a digest and
/// name written in every form the tool writes (`HEX  NAME`, `--tag`, and
/// both with `-z`) read back as exactly that digest and name, and the
/// digests compare equal exactly when they are.
pub fn check_lines(data: &[u8]) {
    if let Ok(line) = parse_line(data) {
        let hex_digest = hex::encode(&line.digest);
        let written = match &line.label {
            Some(label) => tagged_line(&label.to_string(), &hex_digest, &line.name),
            None => untagged_line(&hex_digest, &line.name),
        };
        let again = parse_line(&written).unwrap_or_else(|e| {
            panic!("{line:?}, written as {written:?}, is refused: {e}");
        });
        assert_eq!(again, line, "written as {written:?}");
    }

    let mut draw = Draw::new(data);
    let digest_len = 1 + draw.below(64);
    let digest = draw.bytes(digest_len).to_vec();
    let digest = if digest.is_empty() { vec![0] } else { digest };
    let other_len = 1 + draw.below(64);
    let other = draw.bytes(other_len).to_vec();
    let label = drawn_label(&mut draw);
    let name: Vec<u8> = draw.rest().iter().map(|&b| b.max(1)).collect();
    let name = if name.is_empty() { b"f".to_vec() } else { name };
    let hex_digest = hex::encode(&digest);
    let label_text = label.to_string();

    // As the tool writes them (cli/src/hash_cmd.rs): escaped names on lines
    // that end with LF, names as they are on lines that end with NUL; and as
    // the check reads a NUL-ended line (cli/src/check_cmd.rs), with a CR
    // added for parse_line to drop.
    let lines: [(Option<&Label>, Vec<u8>); 4] = [
        (None, untagged_line(&hex_digest, &name)),
        (Some(&label), tagged_line(&label_text, &hex_digest, &name)),
        (None, [hex_digest.as_bytes(), b"  ", &name, b"\r"].concat()),
        (
            Some(&label),
            [
                label_text.as_bytes(),
                b" (",
                &name,
                b") = ",
                hex_digest.as_bytes(),
                b"\r",
            ]
            .concat(),
        ),
    ];
    for (i, (label, line)) in lines.iter().enumerate() {
        if i < 2 {
            assert!(!line.contains(&b'\n') && !line.contains(&b'\r'), "{line:?}");
        }
        let read = parse_line(line).unwrap_or_else(|e| panic!("{line:?} is refused: {e}"));
        assert_eq!(read.label.as_ref(), *label, "{line:?}");
        assert_eq!(read.name, name, "{line:?}");
        assert_eq!(read.digest, digest, "{line:?}");
        assert!(digests_equal(&read.digest, &digest));
        assert_eq!(digests_equal(&read.digest, &other), digest == other);
    }
}

/// A label drawn from the input: of every function, with parameters.
fn drawn_label(draw: &mut Draw<'_>) -> Label {
    let functions: Vec<Function> = Function::all().collect();
    let function = functions[draw.below(functions.len())];
    let params = match function {
        Function::Tree(algorithm) => {
            let keyed = draw.u8() & 1 == 1;
            let height = draw.below(13) as u32;
            let degree = 2 + draw.below(3) as u64;
            let block_size = 8 * (1 + draw.below(1 << 10));
            let prefix = if keyed { vec![1] } else { Vec::new() };
            match TreeParams::with_options(
                algorithm,
                height,
                degree,
                Some(block_size),
                prefix,
                None,
            ) {
                Ok(params) => Params::Tree(params),
                Err(_) => Params::Tree(TreeParams::new(algorithm, 2, 4).expect("valid")),
            }
        }
        Function::Standard(standard) => {
            let custom_len = draw.below(40);
            let custom = draw.bytes(custom_len).to_vec();
            let mut params = StandardParams::new(standard);
            if standard.family() != treehash::standard::Family::TurboShake {
                params = params.with_customization(custom).expect("short enough");
            }
            let b = 1 + draw.below(1 << 14);
            let d = 1 + draw.below(0x7f) as u8;
            params = params.clone().with_block_size(b).unwrap_or(params);
            params = params.clone().with_domain(d).unwrap_or(params);
            Params::Standard(params)
        }
    };
    params
        .label()
        .parse()
        .unwrap_or_else(|e| panic!("the label of {params:?} is refused: {e}"))
}

/// Output lengths tried with every label read: each function's default,
/// and lengths at and past the edges of the ranges.
const OUTPUT_LENS: [usize; 6] = [0, 1, 28, 64, 65536, 65537];

/// `labels`: any text, read as every kind of label and name. Reading never
/// panics; a label read writes as text that reads as the same label and
/// writes the same again; the parameters it describes (where they are in
/// range) have a label that reads as the same label and describes the same
/// parameters.
pub fn labels(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();

    if let Ok(label) = text.parse::<Label>() {
        let written = label.to_string();
        let again: Label = written
            .parse()
            .unwrap_or_else(|e| panic!("{text:?} read as {label:?}, written {written:?}: {e}"));
        assert_eq!(again, label, "{text:?} written as {written:?}");
        assert_eq!(again.to_string(), written);
        let prefix = if label.keyed() { vec![7] } else { Vec::new() };
        let default_len = label.default_output_len();
        for output_len in OUTPUT_LENS.into_iter().chain([default_len]) {
            let Ok(params) = label.to_params(&prefix, output_len) else {
                continue;
            };
            assert_eq!(params.output_len(), output_len);
            let from_params: Label = params
                .label()
                .parse()
                .unwrap_or_else(|e| panic!("the label of {params:?} is refused: {e}"));
            assert_eq!(from_params, label, "{text:?} gives {params:?}");
            let params_again = from_params.to_params(&prefix, output_len);
            assert_eq!(params_again.as_ref(), Ok(&params));
        }
    }
    if let Ok(label) = text.parse::<TreeLabel>() {
        let again: TreeLabel = label.to_string().parse().expect("a tree label written");
        assert_eq!(again, label);
    }
    if let Ok(label) = text.parse::<StandardLabel>() {
        let again: StandardLabel = label.to_string().parse().expect("a standard label written");
        assert_eq!(again, label);
    }
    if let Ok(function) = text.parse::<Function>() {
        assert_eq!(function.name().parse::<Function>(), Ok(function));
        assert!(function.name().eq_ignore_ascii_case(text) || is_standard_name(function, text));
    }
    if let Ok(algorithm) = text.parse::<Algorithm>() {
        assert_eq!(algorithm.fips_name().parse::<Algorithm>(), Ok(algorithm));
    }
}

/// Whether `text` is the name a standard writes `function` by (`KT128`).
fn is_standard_name(function: Function, text: &str) -> bool {
    matches!(function, Function::Standard(s) if s.standard_name().eq_ignore_ascii_case(text))
}
