//! Parts and joins: one file hashed by many processes or hosts (issue 25).
//!
//! The leaves of an LI tree are independent, so N processes can each own a
//! range of them: part I of N owns leaves [⌊I·L/N⌋, ⌊(I+1)·L/N⌋) and reads
//! only their run of bytes in every stripe of the file
//! ([`Hasher::hash_part`](crate::Hasher::hash_part)). A part stores the
//! roots of the whole subtrees that tile its range (the chaining values of
//! single leaves where no larger subtree fits), with the parameters, the
//! file's size, modification time and name, and a check value, in a small
//! versioned format ([`Part::to_bytes`], docs/SPEC.md "Parts and joins").
//! [`join`] takes a whole set, in any order, and returns the digest that
//! one process hashing the file would; it refuses a set with a part
//! missing or given twice, parts of another file or other parameters, or a
//! corrupt part.
//!
//! The standard functions with a tree, KT128, KT256 (RFC 9861) and
//! ParallelHash128/256 (SP 800-185), split the same way: part I of N owns
//! chunks [⌊I·n/N⌋, ⌊(I+1)·n/N⌋) of their n chunks (KT's 8192 bytes of S,
//! ParallelHash's B bytes of X), one contiguous range of the file, and
//! stores their chaining values (KT's first chunk whole); the join feeds
//! them to the function's final node. TurboSHAKE, one sponge, has no parts.
//!
//! ```
//! use treehash::parts::{join, NameRule};
//! use treehash::standard::{Standard, StandardParams};
//! use treehash::{Hasher, HasherOptions};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("data");
//! std::fs::write(&path, vec![7u8; 100_000])?;
//! let kt = StandardParams::new(Standard::Kt128).with_customization(b"C".to_vec())?;
//! let hasher = Hasher::new(HasherOptions::default())?;
//! let parts: Vec<_> = (0..4)
//!     .map(|i| hasher.hash_part(&kt, &path, i, 4, &()).map(|p| p.part))
//!     .collect::<Result<_, _>>()?;
//! let joined = join(&parts, NameRule::default())?;
//! assert_eq!(joined.digest, hasher.hash_path(&kt, &path, &())?.digest);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ```
//! use treehash::parts::{join_bytes, NameRule};
//! use treehash::{Algorithm, Hasher, HasherOptions, TreeParams};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("data");
//! std::fs::write(&path, vec![7u8; 100_000])?;
//! let params = TreeParams::new(Algorithm::Sha3_256, 2, 4)?;
//! let hasher = Hasher::new(HasherOptions::default())?;
//! // On three hosts, one part each; the bytes travel to one place.
//! let parts: Vec<Vec<u8>> = (0..3)
//!     .map(|i| hasher.hash_part(&params, &path, i, 3, &()).map(|p| p.part.to_bytes()))
//!     .collect::<Result<_, _>>()?;
//! let joined = join_bytes(&parts, NameRule::default())?;
//! assert_eq!(joined.digest, hasher.hash_path(&params, &path, &())?.digest);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod format;
mod join;
mod nodes;
mod origin;
mod plan;
mod read;
mod standard;
mod standard_read;

use std::fmt;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Instant;

use crate::error::HashError;
use crate::function::Params;
use crate::hasher::{BackendUsed, Hasher, Resumed};
use crate::input::InputFile;
use crate::params::TreeParams;
use crate::progress::Progress;
use crate::timings::{Timings, timed};
use origin::Origin;

pub use format::{PartError, read_part};
pub use join::{JoinError, Joined, NameRule, join, join_bytes};
pub use read::PartOutput;
// What a split reads and whether its runs are short: for the treehash tool
// (`part --plan`, its warning), the Python package and the tests; not part
// of the API.
#[doc(hidden)]
pub use plan::{MIN_RUN_BYTES, PartPlan, ShortRuns, part_leaves, plan, short_runs};
#[doc(hidden)]
pub use standard::{StandardPlan, standard_plan};

/// The key check of a prefix (`format::key_check`).
type KeyCheck = [u8; 16];

/// The result of hashing the leaves (or chunks) one part owns: see the
/// module's documentation. Made by
/// [`Hasher::hash_part`](crate::Hasher::hash_part) or read by
/// [`Part::from_bytes`].
#[derive(Clone, PartialEq, Eq)]
pub struct Part {
    origin: Origin,
    body: Body,
}

/// What a part holds of its tree.
#[derive(Clone, PartialEq, Eq)]
enum Body {
    Tree(TreePart),
    Standard(standard::StandardPart),
}

impl Body {
    fn tree(&self) -> Option<&TreePart> {
        match self {
            Body::Tree(tree) => Some(tree),
            Body::Standard(_) => None,
        }
    }
    fn standard(&self) -> Option<&standard::StandardPart> {
        match self {
            Body::Standard(part) => Some(part),
            Body::Tree(_) => None,
        }
    }
}

/// An LI part's own fields.
#[derive(Clone, PartialEq, Eq)]
struct TreePart {
    /// The parameters, without the prefix (which is never written).
    params: TreeParams,
    /// Where a prefix was used: its key check.
    key_check: Option<KeyCheck>,
    leaves: Range<u64>,
    /// Leaves of the whole tree that hold a block (the first ones).
    holding: u64,
    /// The values of its whole subtrees that hold a block, in order.
    values: Vec<u8>,
}

impl TreePart {
    /// The values it stores.
    fn value_count(&self) -> u64 {
        self.subtrees()
            .iter()
            .map(|t| plan::stored(&self.params, t, self.holding))
            .sum()
    }
}

impl Part {
    /// The parameters it was made with, without an LI prefix.
    pub fn params(&self) -> Params {
        match &self.body {
            Body::Tree(tree) => Params::Tree(tree.params.clone()),
            Body::Standard(standard) => Params::Standard(standard.params.clone()),
        }
    }
    /// Whether it was made with a prefix (LI only).
    pub fn keyed(&self) -> bool {
        self.key_check().is_some()
    }
    /// Whether `prefix` is the one it was made with (by its key check).
    pub fn prefix_matches(&self, prefix: &[u8]) -> bool {
        match self.key_check() {
            Some(check) => format::key_check(prefix) == check,
            None => prefix.is_empty(),
        }
    }
    /// The file's size in bytes.
    pub fn file_len(&self) -> u64 {
        self.origin.file_len
    }
    /// The file's modification time in nanoseconds since 1970, if known.
    pub fn modified_ns(&self) -> Option<i64> {
        self.origin.modified_ns
    }
    /// The number of parts in its split.
    pub fn count(&self) -> u64 {
        self.origin.count
    }
    /// Its index in the split, 0 ≤ index < count.
    pub fn index(&self) -> u64 {
        self.origin.index
    }
    /// The leaves it owns: an LI tree's leaves, or a standard function's
    /// chunks.
    pub fn leaves(&self) -> Range<u64> {
        match &self.body {
            Body::Tree(tree) => tree.leaves.clone(),
            Body::Standard(standard) => standard.chunks.clone(),
        }
    }
    /// The file's name as given (bytes; empty if none).
    pub fn name(&self) -> &[u8] {
        &self.origin.name
    }
    /// The values it stores: an LI part's subtrees', a standard part's
    /// chaining values (KT's first chunk, stored whole, not counted).
    pub fn value_count(&self) -> u64 {
        match &self.body {
            Body::Tree(tree) => tree.value_count(),
            Body::Standard(standard) => standard.value_count(),
        }
    }

    fn key_check(&self) -> Option<KeyCheck> {
        match &self.body {
            Body::Tree(tree) => tree.key_check,
            Body::Standard(_) => None,
        }
    }
}

impl fmt::Debug for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Part")
            .field("params", &self.params())
            .field("keyed", &self.keyed())
            .field("file_len", &self.origin.file_len)
            .field("modified_ns", &self.origin.modified_ns)
            .field("index", &self.origin.index)
            .field("count", &self.origin.count)
            .field("leaves", &self.leaves())
            .field("name", &String::from_utf8_lossy(&self.origin.name))
            .field("values", &self.value_count())
            .finish()
    }
}

impl Hasher {
    /// Part `index` of `count` of the file at `path` (`-` is standard input
    /// when it is a regular file), read from that part's bytes of the file
    /// alone (docs/SPEC.md, "Parts and joins"): for an LI tree, the outputs
    /// of the leaves it owns, from their runs of every stripe; for KT128,
    /// KT256, ParallelHash128 or ParallelHash256, the chaining values of
    /// the chunks it owns, one range of the file. [`crate::parts::join`]
    /// makes the digest of a whole set. `progress` is told the part's bytes
    /// as they are hashed. A file whose size, times or inode change
    /// meanwhile gets an error, not a part; so does TurboSHAKE, which has
    /// no tree to split.
    pub fn hash_part(
        &self,
        params: impl Into<Params>,
        path: &Path,
        index: u64,
        count: u64,
        progress: &dyn Progress,
    ) -> Result<PartOutput, HashError> {
        let params = params.into();
        if let Some(why) = params.unsplittable() {
            return Err(invalid(why));
        }
        let name = part_name(path, index, count)?;
        let start = Instant::now();
        let mut timings = Timings::default();
        let opened = timed(&mut timings.open, || read::open(path))?;
        let (file_len, stamp) = opened.stamp()?;
        let part = PartFile {
            file: opened.input(),
            file_len,
            index,
            count,
        };
        let made = match &params {
            Params::Tree(params) => self.tree_part(params, part, progress, &mut timings)?,
            Params::Standard(params) => self.standard_part(params, part, progress, &mut timings)?,
        };
        // After the reads: a file changed while they ran gives no part.
        opened.check_unchanged(&stamp)?;
        timings.total = start.elapsed();
        Ok(PartOutput {
            part: Part {
                origin: Origin::new(&stamp, file_len, count, index, name),
                body: made.body,
            },
            bytes_read: made.read_len,
            backend: made.backend,
            timings,
            fallback_note: made.note,
        })
    }

    /// Runs a part's reads on a GPU where `on_gpu` (the policy's answer:
    /// `auto.rs`), else on the CPU, from a thread that is no rayon worker;
    /// under `Auto` a GPU that fails is left for a redo on the CPU (a part's
    /// file can always be read again), which keeps the time the file took to
    /// open. With the redo's note, if any. (A standard part takes a GPU only
    /// under `Gpu`, where nothing is redone: `chunk_part_on_gpu`.)
    fn part_on_engines<T: Send>(
        &self,
        on_gpu: bool,
        progress: &dyn Progress,
        timings: &mut Timings,
        gpu: impl FnOnce(&dyn Progress, &mut Timings) -> Result<T, HashError> + Send,
        cpu: impl FnOnce(&dyn Progress, &mut Timings) -> Result<T, HashError> + Send,
    ) -> Result<(T, Option<String>), HashError> {
        self.cpu().run_pieces(|| {
            let first_try = Resumed::new(progress, 0);
            if !on_gpu {
                return Ok((cpu(&first_try, timings)?, None));
            }
            let result = gpu(&first_try, timings);
            self.or_redo_on_cpu(result, true, &first_try, |redo| {
                let open = timings.open;
                *timings = Timings {
                    open,
                    ..Timings::default()
                };
                cpu(redo, timings)
            })
        })
    }
}

/// Where a part lies in its file.
#[derive(Clone, Copy)]
struct PartFile<'f> {
    /// The file, where it has bytes.
    file: Option<&'f InputFile>,
    file_len: u64,
    /// Part `index` of `count`.
    index: u64,
    count: u64,
}

/// What hashing a part's own bytes made, and how.
struct Made {
    body: Body,
    /// Bytes of the file it read.
    read_len: u64,
    backend: BackendUsed,
    /// Why `auto` redid it on the CPU, if it did.
    note: Option<String>,
}

/// An error that a part cannot be made, for a reason of the caller's.
fn invalid(why: String) -> HashError {
    HashError::Io(std::io::Error::new(std::io::ErrorKind::InvalidInput, why))
}

/// The name a part of `path` records, once `index` is known to be a part
/// of `count` and the name to fit a part.
fn part_name(path: &Path, index: u64, count: u64) -> Result<Vec<u8>, HashError> {
    if index >= count {
        return Err(invalid(format!(
            "part {index} of {count}: the index must be below the count"
        )));
    }
    let name = path.as_os_str().as_bytes().to_vec();
    if name.len() > usize::from(u16::MAX) {
        return Err(invalid(format!(
            "a name of {} bytes is longer than a part holds (65535)",
            name.len()
        )));
    }
    Ok(name)
}
