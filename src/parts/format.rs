//! A part as bytes: the versioned binary format of docs/SPEC.md, "Parts and
//! joins". Every integer is little-endian. Every part starts with the
//! signature, the version and the tree mode, and ends with a check value of
//! all the bytes before it; the fields between are the mode's. This module
//! reads and writes the frame and every mode's fields: LI (mode 1), KT
//! (mode 2) and ParallelHash (mode 3); `standard` is what a standard part
//! holds, `origin` what every part records of its file.

use std::io::{self, Read};

use sha3::{Digest, Sha3_256};

use super::origin::{HostTag, Identity, Origin};
use super::plan::{Subtrees, part_leaves, stored, subtrees, value_len};
use super::standard::{StandardPart, first_chunk_len, holds_first_chunk, split, values_stored};
use super::{Body, KeyCheck, Part, TreePart};
use crate::params::{Algorithm, TreeParams};
use crate::standard::{Family, KT_CHUNK_LEN, Standard, StandardParams};
use crate::tree::Dealing;

/// The first bytes of every part (as PNG's, the first is not ASCII and a
/// line feed ends them, so a text transfer that mangles them shows).
const MAGIC: [u8; 8] = *b"\x89THPART\n";
/// The format version: `Part::FORMAT_VERSION` in the API, whose
/// documentation says what it is.
const FORMAT_VERSION: u8 = 2;
/// The tree modes a part can belong to; the fields after the mode byte are
/// the mode's own (docs/SPEC.md).
const MODE_LI: u8 = 1;
const MODE_KT: u8 = 2;
const MODE_PARALLEL_HASH: u8 = 3;
/// The node functions, by their code in the format.
const ALGORITHM_CODES: [(Algorithm, u8); Algorithm::ALL.len()] = [
    (Algorithm::Sha3_224, 1),
    (Algorithm::Sha3_256, 2),
    (Algorithm::Sha3_384, 3),
    (Algorithm::Sha3_512, 4),
    (Algorithm::Shake128, 5),
    (Algorithm::Shake256, 6),
];
/// Flag bits (bit 0 only in LI parts).
const KEYED: u8 = 1;
const MODIFIED_KNOWN: u8 = 2;
const IDENTITY_KNOWN: u8 = 4;
/// The flags of the origin's fields, which every mode has.
const ORIGIN_FLAGS: u8 = MODIFIED_KNOWN | IDENTITY_KNOWN;
/// Bytes of the check value.
const CHECK_LEN: usize = 16;
/// Bytes of the LI header, up to the name.
const HEADER_LEN: usize = 138;
/// The largest file a part can be of: a file offset is a signed 64-bit
/// number (`off_t`), so no file is longer, and sums of a file's length and
/// a few bytes more (a prefix, KT's suffix) cannot overflow.
const MAX_FILE_LEN: u64 = i64::MAX as u64;
/// The domain string hashed before the prefix into the key check.
const KEY_CHECK_DOMAIN: &[u8] = b"treehash part key check v1\0";

/// Why bytes are not a part that can be joined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PartError {
    /// The bytes do not start with a part's signature.
    #[error("not a treehash part (it does not start with a part's signature)")]
    NotAPart,
    /// The check value does not match: the part was damaged or cut short.
    #[error("corrupt or truncated part: its check value does not match its contents")]
    Corrupt,
    #[error(
        "part format version {0}, which this treehash cannot read (it reads version \
         {FORMAT_VERSION}): make every part of the set with one treehash"
    )]
    /// A format version other than [`Part::FORMAT_VERSION`] (the version read).
    Version(u8),
    #[error(
        "a part of tree mode {0}, which this treehash does not know (it knows 1, LI; 2, KT; \
         3, ParallelHash)"
    )]
    /// A tree mode this treehash does not know (the code read).
    Mode(u8),
    /// The check value matches, but the fields contradict each other: not
    /// made by treehash, or by a faulty one.
    #[error("inconsistent part: {0}")]
    Inconsistent(String),
}

/// An [`PartError::Inconsistent`] for `why`.
fn inconsistent(why: String) -> PartError {
    PartError::Inconsistent(why)
}

/// The key check of a prefix: SHA3-256 of a fixed domain string and the
/// prefix, its first 16 bytes.
pub(crate) fn key_check(prefix: &[u8]) -> KeyCheck {
    let digest = Sha3_256::new()
        .chain_update(KEY_CHECK_DOMAIN)
        .chain_update(prefix)
        .finalize();
    let mut check = [0u8; 16];
    check.copy_from_slice(&digest[..16]);
    check
}

/// The check value of `bytes`.
fn check_value(bytes: &[u8]) -> [u8; CHECK_LEN] {
    let digest = Sha3_256::digest(bytes);
    let mut check = [0u8; CHECK_LEN];
    check.copy_from_slice(&digest[..CHECK_LEN]);
    check
}

impl Part {
    /// The format version this treehash writes and reads. A new tree mode is
    /// no new version: readers refuse a mode they do not know by its number.
    /// Version 2 added the file's identity (host, inode, change time).
    pub const FORMAT_VERSION: u8 = FORMAT_VERSION;

    /// The part in the format of docs/SPEC.md.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + self.origin.name.len() + CHECK_LEN);
        out.extend_from_slice(&MAGIC);
        out.push(FORMAT_VERSION);
        match &self.body {
            Body::Tree(tree) => tree.write(&self.origin, &mut out),
            Body::Standard(standard) => standard.write(&self.origin, &mut out),
        }
        let check = check_value(&out);
        out.extend_from_slice(&check);
        out
    }

    /// Reads a part written by [`Part::to_bytes`], and checks that its
    /// fields agree: its leaves (or chunks) are part I of N's, and it holds
    /// the values they call for.
    pub fn from_bytes(bytes: &[u8]) -> Result<Part, PartError> {
        if !bytes.starts_with(&MAGIC) {
            // Cut within the signature: a part, truncated.
            return Err(if MAGIC.starts_with(bytes) {
                PartError::Corrupt
            } else {
                PartError::NotAPart
            });
        }
        if bytes.len() < MAGIC.len() + 2 + CHECK_LEN {
            return Err(PartError::Corrupt);
        }
        let (body, check) = bytes.split_at(bytes.len() - CHECK_LEN);
        if check_value(body) != check {
            return Err(PartError::Corrupt);
        }
        let mut r = Reader {
            bytes: body,
            at: MAGIC.len(),
        };
        let version = r.u8();
        if version != FORMAT_VERSION {
            return Err(PartError::Version(version));
        }
        match r.u8() {
            MODE_LI => TreePart::read(r),
            mode @ (MODE_KT | MODE_PARALLEL_HASH) => StandardPart::read(mode, r),
            mode => Err(PartError::Mode(mode)),
        }
    }
}

/// Reads one part's bytes from `reader`: the signature, version and mode
/// first, then the mode's fixed header, then at most the bytes its fields
/// allow, so that an input that is no part (a device, the data file itself,
/// a pipe that never ends) is given up after a few bytes, not read whole.
/// What it returns is for [`Part::from_bytes`] to judge: bytes that are no
/// part's, or a part cut short or longer than its fields, come back as read
/// (at most one byte past what the fields allow). An unknown version or
/// mode is an error of kind `InvalidData` carrying the [`PartError`].
pub fn read_part(reader: &mut dyn Read) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut take = |bytes: &mut Vec<u8>, up_to: u128| -> io::Result<()> {
        let more = u64::try_from(up_to.saturating_sub(bytes.len() as u128)).unwrap_or(u64::MAX);
        reader.take(more).read_to_end(bytes).map(drop)
    };
    take(&mut bytes, (MAGIC.len() + 2) as u128)?;
    if bytes.len() < MAGIC.len() + 2 || !bytes.starts_with(&MAGIC) {
        return Ok(bytes);
    }
    let refused = |e: PartError| io::Error::new(io::ErrorKind::InvalidData, e);
    let (version, mode) = (bytes[MAGIC.len()], bytes[MAGIC.len() + 1]);
    if version != FORMAT_VERSION {
        return Err(refused(PartError::Version(version)));
    }
    let header = match mode {
        MODE_LI => HEADER_LEN,
        MODE_KT | MODE_PARALLEL_HASH => STANDARD_HEADER_LEN,
        mode => return Err(refused(PartError::Mode(mode))),
    };
    take(&mut bytes, header as u128)?;
    if bytes.len() < header {
        return Ok(bytes);
    }
    // A field at its offset in the part (docs/SPEC.md), widened.
    let field = |at: usize, len: usize| {
        let mut le = [0u8; 16];
        le[..len].copy_from_slice(&bytes[at..at + len]);
        u128::from_le_bytes(le)
    };
    // The longest part the fields allow: a value is at most 64 bytes, or
    // the digest's n (offset 28) at an LI root.
    let name = field(header - 2, 2);
    let longest = match mode {
        MODE_LI => header as u128 + name + field(header - 10, 8) * field(28, 4).max(64),
        _ => {
            let (customization, values, first) =
                (field(20, 4), field(header - 14, 8), field(header - 6, 4));
            header as u128 + name + customization + first + values * 64
        }
    };
    take(&mut bytes, longest + CHECK_LEN as u128 + 1)?;
    Ok(bytes)
}

impl Origin {
    /// The flags it sets: whether the modification time and the identity
    /// are known.
    fn flags(&self) -> u8 {
        let modified = if self.modified_ns.is_some() {
            MODIFIED_KNOWN
        } else {
            0
        };
        let identity = if self.identity.is_some() {
            IDENTITY_KNOWN
        } else {
            0
        };
        modified | identity
    }

    /// |F|, the modification time, N, I, the host's tag, the inode and the
    /// change time (the unknown ones 0): 56 bytes.
    fn write_numbers(&self, out: &mut Vec<u8>) {
        let identity = self.identity.unwrap_or(NO_IDENTITY);
        out.extend_from_slice(&self.file_len.to_le_bytes());
        out.extend_from_slice(&self.modified_ns.unwrap_or(0).to_le_bytes());
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.index.to_le_bytes());
        out.extend_from_slice(&identity.host);
        out.extend_from_slice(&identity.inode.to_le_bytes());
        out.extend_from_slice(&identity.changed_ns.to_le_bytes());
    }

    /// Reads what [`Origin::write_numbers`] wrote (the name comes later),
    /// the fields known where `flags` say so, and checks that |F| is a
    /// file's size, that I is a part of N, and that the fields not known
    /// are 0 (one part has one encoding).
    fn read_numbers(r: &mut Reader<'_>, flags: u8) -> Result<Origin, PartError> {
        let file_len = r.u64();
        let modified = r.i64();
        let count = r.u64();
        let index = r.u64();
        let identity = Identity {
            host: r.array(),
            inode: r.u64(),
            changed_ns: r.i64(),
        };
        if file_len > MAX_FILE_LEN {
            return Err(inconsistent(format!(
                "a file of {file_len} bytes, longer than any file ({MAX_FILE_LEN} bytes)"
            )));
        }
        if count == 0 || index >= count {
            return Err(inconsistent(format!("part {index} of {count}")));
        }
        let modified_ns = match flags & MODIFIED_KNOWN != 0 {
            true => Some(modified),
            false if modified == 0 => None,
            false => return Err(inconsistent("a modification time flagged unknown".into())),
        };
        let identity = match flags & IDENTITY_KNOWN != 0 {
            true => Some(identity),
            false if identity == NO_IDENTITY => None,
            false => return Err(inconsistent("a file identity flagged unknown".into())),
        };
        Ok(Origin {
            file_len,
            modified_ns,
            identity,
            count,
            index,
            name: Vec::new(),
        })
    }
}

impl TreePart {
    /// The LI mode's fields, from the mode byte to the values.
    fn write(&self, origin: &Origin, out: &mut Vec<u8>) {
        let p = &self.params;
        out.push(MODE_LI);
        out.push(algorithm_code(p.algorithm()));
        let keyed = if self.key_check.is_some() { KEYED } else { 0 };
        out.push(keyed | origin.flags());
        out.extend_from_slice(&p.height().to_le_bytes());
        out.extend_from_slice(&p.degree().to_le_bytes());
        out.extend_from_slice(&(p.block_size() as u32).to_le_bytes());
        out.extend_from_slice(&(p.output_len() as u32).to_le_bytes());
        out.extend_from_slice(&self.key_check.unwrap_or_default());
        origin.write_numbers(out);
        out.extend_from_slice(&self.leaves.start.to_le_bytes());
        out.extend_from_slice(&self.leaves.end.to_le_bytes());
        out.extend_from_slice(&self.holding.to_le_bytes());
        out.extend_from_slice(&self.value_count().to_le_bytes());
        debug_assert_eq!(out.len(), HEADER_LEN - 2);
        out.extend_from_slice(&(origin.name.len() as u16).to_le_bytes());
        out.extend_from_slice(&origin.name);
        out.extend_from_slice(&self.values);
    }

    /// Reads the LI mode's fields after the mode byte, and checks that they
    /// agree: the leaves are part I of N's, and it holds a value for each of
    /// their whole subtrees that holds a block.
    fn read(mut r: Reader<'_>) -> Result<Part, PartError> {
        let body = r.bytes;
        if body.len() < HEADER_LEN {
            return Err(inconsistent(format!(
                "{} bytes, shorter than an LI part's header",
                body.len() + CHECK_LEN
            )));
        }
        let bad = inconsistent;
        let code = r.u8();
        let algorithm = ALGORITHM_CODES
            .iter()
            .find(|(_, c)| *c == code)
            .map(|(a, _)| *a)
            .ok_or_else(|| bad(format!("unknown function code {code}")))?;
        let flags = r.u8();
        if flags & !(KEYED | ORIGIN_FLAGS) != 0 {
            return Err(bad(format!("unknown flags {flags:#04x}")));
        }
        let height = r.u32();
        let degree = r.u64();
        let block_size = r.u32() as usize;
        let output_len = r.u32() as usize;
        let params = TreeParams::with_options(
            algorithm,
            height,
            degree,
            Some(block_size),
            Vec::new(),
            Some(output_len),
        )
        .map_err(|e| bad(e.to_string()))?;
        let key_check: KeyCheck = r.array();
        let key_check = if flags & KEYED != 0 {
            Some(key_check)
        } else if key_check != KeyCheck::default() {
            return Err(bad("a key check without a prefix".into()));
        } else {
            None
        };
        let origin = Origin::read_numbers(&mut r, flags)?;
        let leaves = r.u64()..r.u64();
        let holding = r.u64();
        let value_count = r.u64();
        let name_len = r.u16() as usize;
        debug_assert_eq!(r.at, HEADER_LEN);
        let (count, index) = (origin.count, origin.index);
        let own = part_leaves(params.leaf_count(), count, index);
        if leaves != own {
            return Err(bad(format!(
                "leaves {}..{}, where part {index} of {count} owns {}..{}",
                leaves.start, leaves.end, own.start, own.end
            )));
        }
        let part = TreePart {
            params,
            key_check,
            leaves,
            holding,
            values: Vec::new(),
        };
        let holding_range = part.holding_range(origin.file_len);
        if !holding_range.contains(&holding) {
            return Err(bad(format!(
                "{holding} leaves hold a block, where a file of {} bytes fills {}..={}",
                origin.file_len,
                holding_range.start(),
                holding_range.end()
            )));
        }
        let tiles = part.subtrees();
        let expected: u64 = tiles.iter().map(|t| stored(&part.params, t, holding)).sum();
        if value_count != expected {
            return Err(bad(format!(
                "{value_count} values, where its leaves need {expected}"
            )));
        }
        // In u128: the counts are the header's, and no product overflows.
        let values_len: u128 = tiles
            .iter()
            .map(|t| {
                u128::from(stored(&part.params, t, holding))
                    * value_len(&part.params, t.level) as u128
            })
            .sum();
        let need = (HEADER_LEN + name_len) as u128 + values_len;
        if body.len() as u128 != need {
            return Err(bad(format!(
                "{} bytes, where its fields need {}",
                body.len() + CHECK_LEN,
                need + CHECK_LEN as u128
            )));
        }
        let name = body[HEADER_LEN..HEADER_LEN + name_len].to_vec();
        let values = body[HEADER_LEN + name_len..].to_vec();
        Ok(Part {
            origin: Origin { name, ..origin },
            body: Body::Tree(TreePart { values, ..part }),
        })
    }

    /// The whole subtrees of its leaves, in order.
    pub(crate) fn subtrees(&self) -> Vec<Subtrees> {
        subtrees(&self.params, self.leaves.clone())
    }

    /// The leaves that can hold a block for a file of `file_len` bytes:
    /// exactly ⌈|F| / B⌉ (at most L) without a prefix; with one, as many as
    /// a prefix of 1 to 255 bytes can make.
    fn holding_range(&self, file_len: u64) -> std::ops::RangeInclusive<u64> {
        let dealing = Dealing::of(&self.params);
        let leaves = |message_len: u64| dealing.leaves_with_blocks(message_len);
        let prefix = if self.key_check.is_some() {
            1..=TreeParams::MAX_PREFIX_LEN as u64
        } else {
            0..=0
        };
        leaves(file_len + prefix.start())..=leaves(file_len + prefix.end())
    }
}

/// Bytes of the header of modes 2 and 3, up to the name.
const STANDARD_HEADER_LEN: usize = 118;
/// A standard function's mode and code in the format: the mode is its
/// family's (2 KT, 3 ParallelHash), the code its strength's (1 for the
/// 128-bit function, 2 for the 256-bit one); `None` for a function that
/// has no parts (TurboSHAKE: one sponge, no chunks).
fn function_code(standard: Standard) -> Option<(u8, u8)> {
    let mode = match standard.family() {
        Family::Kangaroo => MODE_KT,
        Family::ParallelHash => MODE_PARALLEL_HASH,
        Family::TurboShake => return None,
    };
    let code = match standard.shake() {
        Algorithm::Shake128 => 1,
        Algorithm::Shake256 => 2,
        _ => return None,
    };
    Some((mode, code))
}

impl StandardPart {
    /// The fields of mode 2 (KT) or 3 (ParallelHash), from the mode byte to
    /// the values.
    fn write(&self, origin: &Origin, out: &mut Vec<u8>) {
        let p = &self.params;
        let (mode, code) =
            function_code(p.standard()).expect("parts are made of the functions with a code");
        out.push(mode);
        out.push(code);
        out.push(origin.flags());
        out.extend_from_slice(&(p.block_size() as u32).to_le_bytes());
        out.extend_from_slice(&(p.output_len() as u32).to_le_bytes());
        out.extend_from_slice(&(p.customization().len() as u32).to_le_bytes());
        origin.write_numbers(out);
        out.extend_from_slice(&self.chunks.start.to_le_bytes());
        out.extend_from_slice(&self.chunks.end.to_le_bytes());
        out.extend_from_slice(&self.chunk_count.to_le_bytes());
        out.extend_from_slice(&self.value_count().to_le_bytes());
        out.extend_from_slice(&(self.first_chunk.len() as u32).to_le_bytes());
        debug_assert_eq!(out.len(), STANDARD_HEADER_LEN - 2);
        out.extend_from_slice(&(origin.name.len() as u16).to_le_bytes());
        out.extend_from_slice(&origin.name);
        out.extend_from_slice(p.customization());
        out.extend_from_slice(&self.first_chunk);
        out.extend_from_slice(&self.values);
    }

    /// Reads the fields of `mode` (2 or 3) after the mode byte, and checks
    /// that they agree: the parameters are in range, n is the file's chunk
    /// count, the chunks are part I of N's, and the first chunk and the
    /// values are those they call for.
    fn read(mode: u8, mut r: Reader<'_>) -> Result<Part, PartError> {
        let body = r.bytes;
        if body.len() < STANDARD_HEADER_LEN {
            return Err(inconsistent(format!(
                "{} bytes, shorter than a standard function's part header",
                body.len() + CHECK_LEN
            )));
        }
        let code = r.u8();
        let standard = Standard::ALL
            .into_iter()
            .find(|s| function_code(*s) == Some((mode, code)))
            .ok_or_else(|| inconsistent(format!("unknown function code {code} of mode {mode}")))?;
        let flags = r.u8();
        if flags & !ORIGIN_FLAGS != 0 {
            return Err(inconsistent(format!("unknown flags {flags:#04x}")));
        }
        let block_size = r.u32() as usize;
        let output_len = r.u32() as usize;
        let customization_len = r.u32() as usize;
        if customization_len > StandardParams::MAX_CUSTOMIZATION_LEN {
            return Err(inconsistent(format!(
                "a customization string of {customization_len} bytes (at most \
                 {})",
                StandardParams::MAX_CUSTOMIZATION_LEN
            )));
        }
        let origin = Origin::read_numbers(&mut r, flags)?;
        let chunks = r.u64()..r.u64();
        let chunk_count = r.u64();
        let value_count = r.u64();
        let first_len = r.u32() as u64;
        let name_len = r.u16() as usize;
        debug_assert_eq!(r.at, STANDARD_HEADER_LEN);
        let name_end = STANDARD_HEADER_LEN + name_len;
        let fixed_end = name_end + customization_len;
        if body.len() < fixed_end {
            return Err(inconsistent(format!(
                "{} bytes, where its name and customization string need {}",
                body.len() + CHECK_LEN,
                fixed_end + CHECK_LEN
            )));
        }
        let customization = body[name_end..fixed_end].to_vec();
        let mut params = StandardParams::new(standard)
            .with_output_len(output_len)
            .and_then(|p| p.with_customization(customization));
        params = match standard.family() {
            Family::ParallelHash => params.and_then(|p| p.with_block_size(block_size)),
            _ if block_size == KT_CHUNK_LEN => params,
            _ => {
                return Err(inconsistent(format!(
                    "chunks of {block_size} bytes, where {standard}'s are {KT_CHUNK_LEN}"
                )));
            }
        };
        let params = params.map_err(|e| inconsistent(e.to_string()))?;
        let (own, n) = split(&params, origin.file_len, origin.count, origin.index);
        if chunk_count != n {
            return Err(inconsistent(format!(
                "{chunk_count} chunks, where a file of {} bytes has {n}",
                origin.file_len
            )));
        }
        if chunks != own {
            return Err(inconsistent(format!(
                "chunks {}..{}, where part {} of {} owns {}..{}",
                chunks.start, chunks.end, origin.index, origin.count, own.start, own.end
            )));
        }
        let first_want = if holds_first_chunk(&params, &chunks) {
            first_chunk_len(&params, origin.file_len)
        } else {
            0
        };
        if first_len != first_want {
            return Err(inconsistent(format!(
                "a first chunk of {first_len} bytes, where it holds {first_want}"
            )));
        }
        let values_want = values_stored(&params, &chunks);
        if value_count != values_want {
            return Err(inconsistent(format!(
                "{value_count} values, where its chunks need {values_want}"
            )));
        }
        // In u128: the count is the header's, and no product overflows.
        let values_len = u128::from(values_want) * params.standard().chaining_len() as u128;
        let first_end = fixed_end + first_len as usize;
        let need = first_end as u128 + values_len;
        if body.len() as u128 != need {
            return Err(inconsistent(format!(
                "{} bytes, where its fields need {}",
                body.len() + CHECK_LEN,
                need + CHECK_LEN as u128
            )));
        }
        let part = StandardPart {
            params,
            chunks,
            chunk_count,
            first_chunk: body[fixed_end..first_end].to_vec(),
            values: body[first_end..].to_vec(),
        };
        Ok(Part {
            origin: Origin {
                name: body[STANDARD_HEADER_LEN..name_end].to_vec(),
                ..origin
            },
            body: Body::Standard(part),
        })
    }
}

fn algorithm_code(algorithm: Algorithm) -> u8 {
    ALGORITHM_CODES
        .iter()
        .find(|(a, _)| *a == algorithm)
        .map(|(_, c)| *c)
        .expect("every function has a code")
}

/// The identity fields of a part whose identity is not known.
const NO_IDENTITY: Identity = Identity {
    host: [0; std::mem::size_of::<HostTag>()],
    inode: 0,
    changed_ns: 0,
};

/// Fixed-width fields from the start of a body whose length the mode checks
/// beforehand (at least its header's).
struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl Reader<'_> {
    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        out.copy_from_slice(&self.bytes[self.at..self.at + N]);
        self.at += N;
        out
    }
    fn u8(&mut self) -> u8 {
        self.array::<1>()[0]
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.array())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.array())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.array())
    }
    fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.array())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes parts already on disk carry: a function keeps its code,
    /// and no two functions share one.
    #[test]
    fn each_function_keeps_a_code_of_its_own() {
        let codes = Standard::ALL.map(function_code);
        let mut given: Vec<_> = codes.iter().flatten().collect();
        given.sort_unstable();
        given.dedup();
        assert_eq!(given.len(), codes.iter().flatten().count());
        assert_eq!(
            codes,
            [
                Some((2, 1)),
                Some((2, 2)),
                Some((3, 1)),
                Some((3, 2)),
                None,
                None,
            ]
        );
    }
}
