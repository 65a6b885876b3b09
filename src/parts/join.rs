//! Parts to the digest: the set is checked whole (one file, one function
//! and set of parameters, every part once), then an LI tree is reduced from
//! the parts' subtrees up, level by level, and a standard function's
//! chaining values are fed to its final node (`standard::digest`).

use rayon::prelude::*;

use super::nodes::Nodes;
use super::origin::{Identity, base_name, show_time};
use super::plan::{stored, value_len};
use super::{Body, Part, PartError, TreePart, standard};
use crate::function::Params;
use crate::hasher::{BackendUsed, HashOutput};
use crate::label::{Label, StandardLabel, TreeLabel};
use crate::timings::Timings;

/// The digest that a set of parts comes to, and what the parts say of it.
#[derive(Clone, Debug)]
pub struct Joined {
    /// The digest, as one process hashing the file would make it.
    pub digest: Vec<u8>,
    /// The parameters, without an LI prefix: no part records it.
    pub params: Params,
    /// The parts were made with a prefix.
    pub keyed: bool,
    /// The file's name as the first part given recorded it (bytes; empty
    /// if none). Other parts may spell it otherwise ([`NameRule`]).
    pub name: Vec<u8>,
    /// The file's size in bytes.
    pub file_len: u64,
    /// How many parts the file was split into.
    pub parts: u64,
}

impl Joined {
    /// The label of the digest's parameters (`,P` where keyed).
    pub fn label(&self) -> Label {
        match &self.params {
            Params::Tree(params) => Label::Tree(TreeLabel {
                keyed: self.keyed,
                ..TreeLabel::of(params)
            }),
            Params::Standard(params) => Label::Standard(StandardLabel::of(params)),
        }
    }

    /// The digest as a [`HashOutput`] of the file's bytes, made on the CPU
    /// (the join itself; the parts ran wherever they ran), with no times.
    pub fn output(&self) -> HashOutput {
        HashOutput {
            digest: self.digest.clone(),
            bytes: self.file_len,
            backend: BackendUsed::Cpu,
            timings: Timings::default(),
            shares: Vec::new(),
            fallback_note: None,
        }
    }
}

/// How a join holds the file names the parts recorded against each other.
/// Size and modification time must agree whatever the rule. The default is
/// [`NameRule::BaseName`], the rule of `treehash join` without `--any-name`:
/// `join(&parts, NameRule::default())`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameRule {
    /// The names' last components agree: `big.img`, `./big.img` and
    /// `/lustre/x/big.img` name one file, as hosts that see it from another
    /// directory or mount point spell it.
    #[default]
    BaseName,
    /// Any names: parts made from copies of the file under other names.
    Any,
}

/// Why a set of parts was refused. Parts are named by their position in
/// the list given to the join (`at`, `other`: 0 is the first).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JoinError {
    /// The list is empty.
    NoParts,
    /// A part could not be read.
    Unreadable {
        /// Its position.
        at: usize,
        /// Why.
        error: PartError,
    },
    /// A part belongs to another file or other parameters than the first
    /// part given: `what` differs, `this` being its value, `first` the
    /// first part's.
    Differs {
        /// Its position.
        at: usize,
        /// The field that differs.
        what: &'static str,
        /// Its value in this part.
        this: String,
        /// Its value in the first part.
        first: String,
    },
    /// Two parts made on one host from two files, or from two versions of
    /// the file (`what`: its inode or its change time differs): `this` is
    /// the value of the part at `at`, `that` the value of the part at `other`.
    OtherVersion {
        /// The position of one part.
        at: usize,
        /// The position of the other.
        other: usize,
        /// The field that differs.
        what: &'static str,
        /// Its value in the part at `at`.
        this: String,
        /// Its value in the part at `other`.
        that: String,
    },
    /// The same part twice.
    Duplicate {
        /// The position of the second copy.
        at: usize,
        /// The position of the first.
        other: usize,
        /// I, the part's index in the split.
        index: u64,
        /// N, the split's number of parts.
        count: u64,
    },
    /// A part of the split is not in the list.
    Missing {
        /// I, the missing part's index.
        index: u64,
        /// N, the split's number of parts.
        count: u64,
    },
}

impl JoinError {
    /// The position of the part that is refused, where one is.
    pub fn part(&self) -> Option<usize> {
        match self {
            JoinError::Unreadable { at, .. }
            | JoinError::Differs { at, .. }
            | JoinError::OtherVersion { at, .. }
            | JoinError::Duplicate { at, .. } => Some(*at),
            JoinError::NoParts | JoinError::Missing { .. } => None,
        }
    }

    /// What is wrong, other parts named by `name` (of their position).
    pub fn reason(&self, name: &dyn Fn(usize) -> String) -> String {
        match self {
            JoinError::NoParts => "no parts to join".into(),
            JoinError::Unreadable { error, .. } => error.to_string(),
            JoinError::Differs {
                what, this, first, ..
            } => format!(
                "its {what} ({this}) {} from {}'s ({first}): a part of another file \
                 or other parameters",
                differ(what),
                name(0)
            ),
            JoinError::OtherVersion {
                other,
                what,
                this,
                that,
                ..
            } => format!(
                "its file's {what} ({this}) differs from {}'s ({that}), made on the same host: \
                 the file was changed or replaced between the parts",
                name(*other)
            ),
            JoinError::Duplicate {
                other,
                index,
                count,
                ..
            } => format!(
                "part {index} of {count} is given twice (also as {})",
                name(*other)
            ),
            JoinError::Missing { index, count } => {
                format!("part {index} of {count} is missing")
            }
        }
    }
}

/// The verb of a field's name: `its parameters differ`, `its file size
/// differs`.
fn differ(what: &str) -> &'static str {
    match what {
        "parameters" | "leaves holding a block" => "differ",
        _ => "differs",
    }
}

impl std::fmt::Display for JoinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = |at: usize| format!("part #{}", at + 1);
        match self.part() {
            Some(at) => write!(f, "{}: {}", name(at), self.reason(&name)),
            None => f.write_str(&self.reason(&name)),
        }
    }
}

impl std::error::Error for JoinError {}

/// Reads every part of `parts` ([`Part::from_bytes`]) and joins them
/// ([`join`], the file names held to `names`). The parts are read side by
/// side (their check values are a hash of every byte: as much work as the
/// join itself for a standard function's many chaining values); the first
/// one that cannot be read is the one named.
pub fn join_bytes<B: AsRef<[u8]> + Sync>(
    parts: &[B],
    names: NameRule,
) -> Result<Joined, JoinError> {
    let read: Vec<Result<Part, PartError>> = parts
        .par_iter()
        .map(|bytes| Part::from_bytes(bytes.as_ref()))
        .collect();
    let parts = read
        .into_iter()
        .enumerate()
        .map(|(at, part)| part.map_err(|error| JoinError::Unreadable { at, error }))
        .collect::<Result<Vec<_>, _>>()?;
    join(&parts, names)
}

/// The digest of the file that `parts` were made from, in any order. The
/// set must be whole: parts of one file (size, modification time, and the
/// name as `names` holds it: under [`NameRule::default`], the last
/// component), made with the same function, parameters and prefix, each
/// part of the split once.
pub fn join(parts: &[Part], names: NameRule) -> Result<Joined, JoinError> {
    let Some(first) = parts.first() else {
        return Err(JoinError::NoParts);
    };
    for (at, part) in parts.iter().enumerate().skip(1) {
        if let Some((what, this, first)) = difference(part, first, names) {
            return Err(JoinError::Differs {
                at,
                what,
                this,
                first,
            });
        }
    }
    same_version_on_each_host(parts)?;
    let count = first.origin.count;
    // Each index once: the parts in the split's order.
    let mut by_index: Vec<(u64, usize)> = parts
        .iter()
        .enumerate()
        .map(|(at, p)| (p.origin.index, at))
        .collect();
    by_index.sort_unstable();
    for pair in by_index.windows(2) {
        if pair[0].0 == pair[1].0 {
            return Err(JoinError::Duplicate {
                at: pair[1].1,
                other: pair[0].1,
                index: pair[0].0,
                count,
            });
        }
    }
    if let Some(index) = (0..count).zip(&by_index).find(|(i, p)| p.0 != *i) {
        return Err(JoinError::Missing {
            index: index.0,
            count,
        });
    }
    if (by_index.len() as u64) < count {
        return Err(JoinError::Missing {
            index: by_index.len() as u64,
            count,
        });
    }
    // The parts' bodies in the split's order, all of the first's kind.
    let bodies = by_index.iter().map(|&(_, at)| &parts[at].body);
    let digest = match &first.body {
        Body::Tree(_) => reduce(&bodies.filter_map(Body::tree).collect::<Vec<_>>()),
        Body::Standard(_) => {
            standard::digest(&bodies.filter_map(Body::standard).collect::<Vec<_>>())
        }
    };
    Ok(Joined {
        digest,
        params: first.params(),
        keyed: first.keyed(),
        name: first.origin.name.clone(),
        file_len: first.origin.file_len,
        parts: count,
    })
}

/// What makes `part` another file's or another tree's than `first`'s:
/// the field's name and both values (the names in full, whatever the rule
/// compares of them).
fn difference(
    part: &Part,
    first: &Part,
    names: NameRule,
) -> Option<(&'static str, String, String)> {
    let both = |what, show: &dyn Fn(&Part) -> String| Some((what, show(part), show(first)));
    let own = match (&part.body, &first.body) {
        (Body::Tree(this), Body::Tree(first)) => this.difference(first),
        (Body::Standard(this), Body::Standard(first)) => this.difference(first),
        _ => return both("function", &|p| p.params().function().to_string()),
    };
    if own.is_some() {
        return own;
    }
    let (this, first_origin) = (&part.origin, &first.origin);
    if this.count != first_origin.count {
        return both("part count", &|p| p.origin.count.to_string());
    }
    if this.file_len != first_origin.file_len {
        return both("file size", &|p| format!("{} bytes", p.origin.file_len));
    }
    if this.modified_ns != first_origin.modified_ns {
        return both("modification time", &|p| match p.origin.modified_ns {
            Some(ns) => show_time(ns),
            None => "unknown".into(),
        });
    }
    let same_name = match names {
        NameRule::BaseName => base_name(&this.name) == base_name(&first_origin.name),
        NameRule::Any => true,
    };
    if !same_name {
        return both("file name", &|p| {
            format!("'{}'", String::from_utf8_lossy(&p.origin.name))
        });
    }
    match (&part.body, &first.body) {
        (Body::Tree(this), Body::Tree(first)) if this.holding != first.holding => Some((
            "leaves holding a block",
            this.holding.to_string(),
            first.holding.to_string(),
        )),
        _ => None,
    }
}

/// An error if two parts made on one host saw two files, or two versions
/// of the file: another inode, or another change time (a write, even one
/// that kept the size and set the modification time back). Parts of
/// different hosts are not compared by these (a copy of the file has its
/// own): each is held against the first part given of its host.
fn same_version_on_each_host(parts: &[Part]) -> Result<(), JoinError> {
    let mut first_of_host: Vec<(usize, Identity)> = Vec::new();
    for (at, part) in parts.iter().enumerate() {
        let Some(this) = part.origin.identity else {
            continue;
        };
        let Some(&(first_at, first)) = first_of_host.iter().find(|(_, i)| i.host == this.host)
        else {
            first_of_host.push((at, this));
            continue;
        };
        let differs = |what, show: fn(&Identity) -> String| {
            Err(JoinError::OtherVersion {
                at,
                other: first_at,
                what,
                this: show(&this),
                that: show(&first),
            })
        };
        if this.inode != first.inode {
            return differs("inode", |i| i.inode.to_string());
        }
        if this.changed_ns != first.changed_ns {
            return differs("change time", |i| show_time(i.changed_ns));
        }
    }
    Ok(())
}

impl TreePart {
    /// What makes `self` another tree's than `first`'s, or made with
    /// another prefix: the field's name and both values.
    fn difference(&self, first: &TreePart) -> Option<(&'static str, String, String)> {
        let both = |what, show: &dyn Fn(&TreePart) -> String| Some((what, show(self), show(first)));
        if self.params != first.params {
            return both("parameters", &|p| {
                format!(
                    "{}, {}-byte digest",
                    TreeLabel::of(&p.params),
                    p.params.output_len()
                )
            });
        }
        if self.key_check != first.key_check {
            return both("prefix", &|p| match p.key_check {
                Some(check) => format!("key check {}", hex::encode(check)),
                None => "none".into(),
            });
        }
        None
    }
}

/// The digest from a whole set of parts in the split's order. Their
/// subtrees tile the leaves; from the leaves up, each level's runs of
/// consecutive nodes (the subtrees of that level given by parts, and the
/// parents made of the level below) are reduced to their parents. A run
/// ends only at the edge of a larger subtree, which starts and ends on a
/// multiple of D nodes of the level, so every parent's children are in one run.
fn reduce(parts: &[&TreePart]) -> Vec<u8> {
    let params = &parts[0].params;
    let holding = parts[0].holding;
    let nodes = Nodes::new(params);
    // For each level: (first node, nodes, values of those holding a block).
    let mut pending: Vec<Vec<(u64, u64, Vec<u8>)>> = vec![Vec::new(); params.height() as usize + 1];
    for part in parts {
        let mut at = 0;
        for tiles in part.subtrees() {
            let len = stored(params, &tiles, holding) as usize * value_len(params, tiles.level);
            let values = part.values[at..at + len].to_vec();
            at += len;
            pending[tiles.level as usize].push((tiles.first, tiles.count, values));
        }
    }
    for level in (1..=params.height()).rev() {
        // In the split's order already, but parents come after the level's own.
        let mut level_runs = std::mem::take(&mut pending[level as usize]);
        level_runs.sort_unstable_by_key(|r| r.0);
        let mut runs = level_runs.into_iter().peekable();
        while let Some((first, mut len, mut values)) = runs.next() {
            while let Some((_, more, more_values)) = runs.next_if(|r| r.0 == first + len) {
                len += more;
                values.extend_from_slice(&more_values);
            }
            let parents = nodes.parents(level, len, &values);
            let degree = params.degree();
            pending[level as usize - 1].push((first / degree, len / degree, parents));
        }
    }
    let mut root = std::mem::take(&mut pending[0]);
    debug_assert_eq!(root.len(), 1, "the tiles cover the tree once");
    root.pop().map(|(_, _, value)| value).unwrap_or_default()
}
