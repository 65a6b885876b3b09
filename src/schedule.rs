//! One input on several engines at once. The CPU and every GPU each own a
//! contiguous range of the leaves; every piece of M goes to all of them side
//! by side, and each absorbs only its own leaves' blocks (one run of bytes
//! per stripe). An engine that becomes ready late (a GPU's driver, kernels
//! and buffers take a few hundred milliseconds) joins at a piece boundary,
//! and leaves move to it with their states. The split follows the rates the
//! engines show, and is rebalanced at piece boundaries so that they finish
//! together. At the end each engine pads its leaves and the host reduces the
//! tree; an engine that owns every leaf finishes the tree itself.

use std::io::Read;
use std::ops::Range;
use std::time::{Duration, Instant};

use crate::engine::{LeafEngine, LeafStates, packed_len};
use crate::error::HashError;
use crate::input::InputFile;
use crate::message::{self, Access, Piece};
use crate::params::TreeParams;
use crate::progress::Progress;
use crate::timings::{Timings, timed};

/// One input, as the input path reads it.
pub(crate) enum Input<'i> {
    Bytes(&'i [u8]),
    File(&'i InputFile),
    Stream(&'i mut (dyn Read + Send)),
}

impl Input<'_> {
    pub(crate) fn known_len(&self) -> Option<u64> {
        match self {
            Input::Bytes(b) => Some(b.len() as u64),
            Input::File(f) => Some(f.len()),
            Input::Stream(_) => None,
        }
    }

    /// True when the input can be hashed again from its start.
    pub(crate) fn can_reread(&self) -> bool {
        !matches!(self, Input::Stream(_))
    }
}

/// How one engine took part in one input (`--timings`).
#[derive(Clone, Debug, PartialEq)]
pub struct EngineShare {
    /// `cpu`, or `gpu` and the device's ordinal.
    pub engine: String,
    /// Bytes of M that were its leaves' blocks.
    pub bytes: u64,
    /// Time it spent absorbing them (for a GPU: staging its chunks and
    /// waiting for free buffers; the device works on behind it).
    pub busy: Duration,
}

/// Bytes and time, counted per engine.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    bytes: u64,
    busy: Duration,
    pieces: u32,
}

impl Tally {
    /// Bytes a second, once anything was measured.
    fn rate(&self) -> Option<f64> {
        (self.bytes > 0 && !self.busy.is_zero())
            .then(|| self.bytes as f64 / self.busy.as_secs_f64())
    }
}

/// An engine taking part in one input.
pub(crate) struct Member<'a> {
    name: String,
    engine: Box<dyn LeafEngine + 'a>,
    /// Since the split last changed.
    recent: Tally,
    total: Tally,
}

impl<'a> Member<'a> {
    pub(crate) fn new(name: impl Into<String>, engine: Box<dyn LeafEngine + 'a>) -> Self {
        Member {
            name: name.into(),
            engine,
            recent: Tally::default(),
            total: Tally::default(),
        }
    }
}

/// Engines that may join while an input is hashed (GPUs starting up).
pub(crate) trait Joiners<'a> {
    /// Engines ready to join now, `message_len` bytes into M, owning no leaf.
    fn poll(&mut self, message_len: u64) -> Vec<Member<'a>>;
}

/// No engine joins.
pub(crate) struct NoJoiners;

impl<'a> Joiners<'a> for NoJoiners {
    fn poll(&mut self, _message_len: u64) -> Vec<Member<'a>> {
        Vec::new()
    }
}

/// What a plan sees before each piece.
pub(crate) struct Moment {
    pub leaf_count: u64,
    /// Bytes of M still to come, if known.
    pub remaining: Option<u64>,
    /// The piece length.
    pub piece_len: usize,
    /// Each engine's leaves and, since the split last changed, its bytes,
    /// busy time and pieces, in leaf order.
    pub ranges: Vec<Range<u64>>,
    recent: Vec<Tally>,
}

/// Where the split goes.
pub(crate) trait Plan {
    /// The new boundaries b₀ = 0 ≤ b₁ ≤ … ≤ bₙ = L (engine i owns
    /// [bᵢ, bᵢ₊₁)), or `None` to keep the split.
    fn boundaries(&mut self, now: &Moment) -> Option<Vec<u64>>;
}

/// The split that makes the engines finish together: leaves in proportion
/// to the rates the engines showed. An engine that has not shown one yet
/// (it just joined) is taken to be as fast as the mean of the others, and
/// the split is corrected once every engine has absorbed a few pieces.
#[derive(Default)]
pub(crate) struct Balance {
    /// Engines that had their first share.
    seen: usize,
}

/// Pieces an engine absorbs on a split before its rate is trusted.
const PIECES_MEASURED: u32 = 3;
/// A split closer than this (a share of the leaves) to the balanced one is kept.
const REBALANCE_SLACK: f64 = 0.04;

impl Plan for Balance {
    fn boundaries(&mut self, now: &Moment) -> Option<Vec<u64>> {
        let n = now.ranges.len();
        if n < 2 {
            return None;
        }
        // Not worth moving states for the last few pieces.
        if now
            .remaining
            .is_some_and(|left| left < 4 * now.piece_len as u64)
        {
            return None;
        }
        let newcomer = n > self.seen;
        self.seen = n;
        let measured = now
            .recent
            .iter()
            .zip(&now.ranges)
            .all(|(t, r)| r.is_empty() || t.pieces >= PIECES_MEASURED);
        if !newcomer && !measured {
            return None;
        }
        let rates: Vec<Option<f64>> = now
            .recent
            .iter()
            .zip(&now.ranges)
            .map(|(t, r)| if r.is_empty() { None } else { t.rate() })
            .collect();
        let known: Vec<f64> = rates.iter().flatten().copied().collect();
        let mean = if known.is_empty() {
            1.0
        } else {
            known.iter().sum::<f64>() / known.len() as f64
        };
        let weights: Vec<f64> = rates.iter().map(|r| r.unwrap_or(mean)).collect();
        let total: f64 = weights.iter().sum();
        let l = now.leaf_count;
        let mut bounds = Vec::with_capacity(n + 1);
        let mut acc = 0.0;
        bounds.push(0);
        for w in &weights[..n - 1] {
            acc += w / total;
            bounds.push(((acc * l as f64).round() as u64).min(l));
        }
        bounds.push(l);
        let moved = now
            .ranges
            .iter()
            .enumerate()
            .map(|(i, r)| r.end.abs_diff(bounds[i + 1]))
            .max()
            .unwrap_or(0);
        (moved as f64 > REBALANCE_SLACK * l as f64 || newcomer).then_some(bounds)
    }
}

/// What an input came to.
pub(crate) struct Hashed {
    pub digest: Vec<u8>,
    /// Bytes of input (the prefix not counted).
    pub bytes: u64,
    /// Every engine that took part, in leaf order at the end.
    pub shares: Vec<EngineShare>,
}

/// Hashes `input` on `members` (together they own every leaf) and on any
/// engine `joiners` bring, splitting the leaves as `plan` says. `reduce`
/// turns the leaves' outputs into the digest when more than one engine owns
/// leaves at the end.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<'a>(
    params: &TreeParams,
    input: &mut Input<'_>,
    mut members: Vec<Member<'a>>,
    joiners: &mut dyn Joiners<'a>,
    plan: &mut dyn Plan,
    reduce: &(dyn Fn(Vec<u8>) -> Vec<u8> + Sync),
    progress: &dyn Progress,
    times: &mut Timings,
) -> Result<Hashed, HashError> {
    let first = &members[0].engine;
    let piece_len = first.piece_len();
    let access = if members.iter().all(|m| m.engine.access() == Access::Read) {
        Access::Read
    } else {
        Access::Map
    };
    let total_len = input.known_len().map(|n| n + params.prefix().len() as u64);
    let mut message_len = 0u64;
    let mut step = |piece: Piece<'_>| -> Result<(), HashError> {
        for joined in joiners.poll(message_len) {
            members.push(joined);
        }
        let now = Moment {
            leaf_count: params.leaf_count(),
            remaining: total_len.map(|t| t.saturating_sub(message_len)),
            piece_len,
            ranges: members.iter().map(|m| m.engine.leaves()).collect(),
            recent: members.iter().map(|m| m.recent).collect(),
        };
        if let Some(bounds) = plan.boundaries(&now) {
            migrate(&mut members, &bounds)?;
            members.iter_mut().for_each(|m| m.recent = Tally::default());
        }
        absorb_everywhere(params, &mut members, piece, message_len)?;
        message_len += piece_len_of(piece) as u64;
        Ok(())
    };
    let bytes = timed(&mut times.leaves, || match input {
        Input::Bytes(data) => {
            message::for_each_piece_of_slice(params, data, piece_len, progress, &mut step)?;
            Ok(data.len() as u64)
        }
        Input::File(file) => {
            message::for_each_piece_of_file(params, file, piece_len, access, progress, &mut step)?;
            Ok(file.len())
        }
        Input::Stream(reader) => message::for_each_piece_of_stream::<HashError>(
            params,
            *reader,
            piece_len,
            progress,
            |bytes| step(Piece::Memory(bytes)),
        ),
    })?;
    drop(step);
    finish(params, members, reduce, times).map(|(digest, shares)| Hashed {
        digest,
        bytes,
        shares,
    })
}

fn piece_len_of(piece: Piece<'_>) -> usize {
    match piece {
        Piece::Memory(b) | Piece::Mapped(b) => b.len(),
        Piece::Unread { len, .. } => len,
    }
}

/// Every engine absorbs its blocks of `piece`, each on its own thread (the
/// first on this one), and counts its bytes and time.
fn absorb_everywhere(
    params: &TreeParams,
    members: &mut [Member<'_>],
    piece: Piece<'_>,
    message_len: u64,
) -> Result<(), HashError> {
    let len = piece_len_of(piece) as u64;
    let absorb = |m: &mut Member<'_>| -> Result<(), HashError> {
        let leaves = m.engine.leaves();
        let start = Instant::now();
        m.engine.absorb(piece)?;
        if !leaves.is_empty() {
            let busy = start.elapsed();
            let bytes = packed_len(params, &leaves, message_len + len)
                - packed_len(params, &leaves, message_len);
            for tally in [&mut m.recent, &mut m.total] {
                tally.bytes += bytes;
                tally.busy += busy;
                tally.pieces += 1;
            }
        }
        Ok(())
    };
    match members {
        [only] => absorb(only),
        [first, rest @ ..] => std::thread::scope(|s| {
            let others: Vec<_> = rest.iter_mut().map(|m| s.spawn(|| absorb(m))).collect();
            let mut result = absorb(first);
            for handle in others {
                let other = handle.join().unwrap_or_else(|_| {
                    Err(HashError::Threads("an engine's thread panicked".into()))
                });
                result = result.and(other);
            }
            result
        }),
        [] => Ok(()),
    }
}

/// Moves leaves so that engine i owns [bounds[i], bounds[i + 1]): every
/// engine first gives up what it loses (an end of its range), then takes
/// what it gains (next to what it kept), with the states handed over.
fn migrate(members: &mut [Member<'_>], bounds: &[u64]) -> Result<(), HashError> {
    let old: Vec<Range<u64>> = members.iter().map(|m| m.engine.leaves()).collect();
    let new: Vec<Range<u64>> = bounds.windows(2).map(|w| w[0]..w[1]).collect();
    let mut moving: Vec<(Range<u64>, LeafStates)> = Vec::new();
    for ((m, old), new) in members.iter_mut().zip(&old).zip(&new) {
        for lost in difference(old, new).into_iter().rev() {
            let states = m.engine.take_leaves(lost.clone())?;
            moving.push((lost, states));
        }
    }
    for ((m, old), new) in members.iter_mut().zip(&old).zip(&new) {
        for gained in difference(new, old) {
            let states = gather(&moving, &gained);
            m.engine.give_leaves(gained, states)?;
        }
    }
    Ok(())
}

/// The leaves of `a` that are not in `b`, as at most two ranges, each an end
/// of `a` (all of `a` when they do not overlap), in leaf order.
fn difference(a: &Range<u64>, b: &Range<u64>) -> Vec<Range<u64>> {
    if a.is_empty() {
        return Vec::new();
    }
    if b.end <= a.start || b.start >= a.end || b.is_empty() {
        return vec![a.clone()];
    }
    let mut parts = Vec::new();
    if b.start > a.start {
        parts.push(a.start..b.start);
    }
    if b.end < a.end {
        parts.push(b.end..a.end);
    }
    parts
}

/// The states of `leaves` from the handed-over ranges; a leaf none of them
/// has a state for is fresh, and trailing fresh ones are left out.
fn gather(moving: &[(Range<u64>, LeafStates)], leaves: &Range<u64>) -> LeafStates {
    let mut states: LeafStates = Vec::new();
    for leaf in leaves.clone() {
        let state = moving.iter().find_map(|(range, states)| {
            range
                .contains(&leaf)
                .then(|| states.get((leaf - range.start) as usize))
                .flatten()
        });
        match state {
            Some(s) => {
                states.resize((leaf - leaves.start) as usize, [0; 25]);
                states.push(*s);
            }
            None => continue,
        }
    }
    states
}

/// Pads every engine's leaves and reduces the tree; an engine that owns
/// every leaf finishes it alone.
fn finish(
    params: &TreeParams,
    members: Vec<Member<'_>>,
    reduce: &(dyn Fn(Vec<u8>) -> Vec<u8> + Sync),
    times: &mut Timings,
) -> Result<(Vec<u8>, Vec<EngineShare>), HashError> {
    let mut shares: Vec<(Range<u64>, EngineShare)> = Vec::new();
    let mut owners = Vec::new();
    for m in members {
        let range = m.engine.leaves();
        if m.total.bytes > 0 || !range.is_empty() {
            shares.push((
                range.clone(),
                EngineShare {
                    engine: m.name,
                    bytes: m.total.bytes,
                    busy: m.total.busy,
                },
            ));
        }
        if !range.is_empty() {
            owners.push((range, m.engine));
        }
    }
    shares.sort_by_key(|(r, _)| r.start);
    let shares = shares.into_iter().map(|(_, s)| s).collect();
    owners.sort_by_key(|(r, _)| r.start);
    if owners.len() <= 1 {
        let Some((_, engine)) = owners.pop() else {
            return Err(HashError::Threads(
                "internal error: no engine owns a leaf".into(),
            ));
        };
        return Ok((engine.finish(times)?, shares));
    }
    debug_assert!(
        params.height() > 0,
        "only trees of several leaves are shared"
    );
    let mut parts: Vec<(Result<Vec<u8>, HashError>, Timings)> = Vec::new();
    std::thread::scope(|s| {
        let handles: Vec<_> = owners
            .into_iter()
            .map(|(_, engine)| {
                s.spawn(move || {
                    let mut t = Timings::default();
                    (engine.finish_leaves(&mut t), t)
                })
            })
            .collect();
        for h in handles {
            parts.push(h.join().unwrap_or_else(|_| {
                (
                    Err(HashError::Threads("an engine's thread panicked".into())),
                    Timings::default(),
                )
            }));
        }
    });
    let mut outputs = Vec::new();
    for (part, t) in parts {
        outputs.extend(part?);
        times.copy_busy += t.copy_busy;
        times.kernel_busy += t.kernel_busy;
        times.leaves += t.leaves;
    }
    let digest = timed(&mut times.reduce, || reduce(outputs));
    Ok((digest, shares))
}
