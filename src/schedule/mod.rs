//! One input on several engines at once. The CPU and every GPU each own a
//! contiguous range of the leaves; every piece of M goes to all of them side
//! by side, and each absorbs only its own leaves' blocks (one run of bytes
//! per stripe). An engine that becomes ready late (a GPU's driver, kernels
//! and buffers take a few hundred milliseconds) joins at a piece boundary,
//! and leaves move to it with their states. Where the boundaries go is
//! searched, not computed from each engine's rate (the engines share one
//! machine's cores and memory, so an engine's own rate says little about the
//! best split): at piece boundaries the plan moves them while the input's
//! measured throughput rises. At the end each engine pads its leaves and
//! the host reduces the tree; an engine that owns every leaf finishes the
//! tree itself.
//!
//! An LI tree's leaves are scheduled here; a standard function's chunks,
//! whose values feed a final node in order, in [`chunks`], which splits
//! them by the engines' rates (`proportional`) rather than by a search.
//!
//! - this module: the run over the pieces and what each engine did;
//! - `apart`: GPUs begun side by side on a file, whose split never moves,
//!   each walking the file at its own pace rather than piece by piece
//!   with the others;
//! - `balance`: where the split goes (the plan, `Balance`: where latecomers
//!   start, how the search steps and when it ends);
//! - `migrate`: moving leaves and their states between engines.

mod apart;
mod balance;
pub(crate) mod chunks;
mod migrate;
mod proportional;
#[cfg(test)]
mod tests;

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::engine::LeafEngine;
use crate::error::HashError;
use crate::message::{self, Access, Input, Piece};
use crate::params::TreeParams;
use crate::progress::{EngineId, EngineShare, Progress};
use crate::timings::{Timings, timed};
use crate::trace;
use crate::tree::Dealing;

pub(crate) use apart::{can_walk_apart, run_apart};
use balance::WARM_UP_PIECES;
pub(crate) use balance::{Balance, Moment, Plan};
use migrate::migrate;
pub(crate) use proportional::Split;

/// Bytes and time, counted per engine.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    bytes: u64,
    busy: Duration,
}

/// The pieces since the split last changed.
#[derive(Default)]
struct Span {
    bytes: u64,
    pieces: u32,
    /// When the warm-up pieces were done, and the bytes by then.
    warm: Option<(Instant, u64)>,
}

impl Span {
    /// Counts a piece of `len` bytes just absorbed.
    fn count(&mut self, len: u64) {
        self.bytes += len;
        self.pieces += 1;
        if self.pieces == WARM_UP_PIECES {
            self.warm = Some((Instant::now(), self.bytes));
        }
    }

    /// Bytes of M a second since the warm-up, once a piece after it was absorbed.
    fn rate(&self) -> Option<f64> {
        let (since, before) = self.warm?;
        let (bytes, secs) = (self.bytes - before, since.elapsed().as_secs_f64());
        (bytes > 0 && secs > 0.0).then(|| bytes as f64 / secs)
    }
}

/// An engine taking part in one input.
pub(crate) struct Member<'a> {
    id: EngineId,
    engine: Box<dyn LeafEngine + 'a>,
    total: Tally,
}

impl<'a> Member<'a> {
    pub(crate) fn new(id: EngineId, engine: Box<dyn LeafEngine + 'a>) -> Self {
        Member {
            id,
            engine,
            total: Tally::default(),
        }
    }

    /// Counts a piece of `len` bytes at `message_len` of M, absorbed in
    /// `busy`: the blocks of it that fall in `leaves` (its own), and the time.
    fn count(
        &mut self,
        params: &TreeParams,
        leaves: &Range<u64>,
        message_len: u64,
        len: u64,
        busy: Duration,
    ) {
        let dealing = Dealing::of(params);
        self.total.bytes +=
            dealing.packed_len(leaves, message_len + len) - dealing.packed_len(leaves, message_len);
        self.total.busy += busy;
    }

    /// What it did so far.
    fn share(&self) -> EngineShare {
        EngineShare {
            engine: self.id,
            bytes: self.total.bytes,
            busy: self.total.busy,
        }
    }
}

/// Where an input stands before a piece, for the latecomers.
pub(crate) struct Standing {
    /// Bytes of M absorbed so far, and still to come if known.
    pub message_len: u64,
    pub remaining: Option<u64>,
    /// Time since the first piece.
    pub elapsed: Duration,
}

/// Latecomers: engines that may join an input under way (GPUs starting
/// up), of either kind of work: `E` is a [`Member`] for an LI tree's leaves, a
/// chunk engine for a standard function's chunks.
pub(crate) trait Latecomers<E> {
    /// Engines ready to join now (an LI engine owning no leaf); an error
    /// where one that had to join cannot.
    fn poll(&mut self, now: &Standing) -> Result<Vec<E>, HashError>;
}

/// No latecomer.
pub(crate) struct NoLatecomers;

impl<E> Latecomers<E> for NoLatecomers {
    fn poll(&mut self, _now: &Standing) -> Result<Vec<E>, HashError> {
        Ok(Vec::new())
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
/// engine `latecomers` bring, splitting the leaves as `plan` says. `reduce`
/// turns the leaves' outputs into the digest when more than one engine owns
/// leaves at the end.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<'a>(
    params: &TreeParams,
    input: &mut Input<'_>,
    mut members: Vec<Member<'a>>,
    latecomers: &mut dyn Latecomers<Member<'a>>,
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
    let started = Instant::now();
    let mut since_change = Span::default();
    // Set while every engine that owns leaves reads the file itself (a GPU
    // given them all): mapping windows for them would only cost time.
    let unmapped = AtomicBool::new(false);
    let mut step = |piece: Piece<'_>| -> Result<(), HashError> {
        let remaining = total_len.map(|t| t.saturating_sub(message_len));
        let standing = Standing {
            message_len,
            remaining,
            elapsed: started.elapsed(),
        };
        let joined = latecomers.poll(&standing)?;
        let someone_joined = !joined.is_empty();
        members.extend(joined);
        let now = Moment {
            leaf_count: params.leaf_count(),
            remaining,
            piece_len,
            ranges: members.iter().map(|m| m.engine.leaves()).collect(),
            pieces: since_change.pieces,
            throughput: since_change.rate(),
        };
        // A split that moves nothing (the search clamped at an end) keeps
        // its measurement going.
        let moved = plan.boundaries(&now).filter(|bounds| {
            let ranges = bounds.windows(2).map(|w| w[0]..w[1]);
            !ranges.eq(now.ranges.iter().cloned())
        });
        if let Some(bounds) = moved {
            let moving = Instant::now();
            migrate(&mut members, &bounds)?;
            trace::trace(|| format!("leaves moved to {bounds:?} in {:?}", moving.elapsed()));
            let readers_only = members
                .iter()
                .filter(|m| !m.engine.leaves().is_empty())
                .all(|m| m.engine.access() == Access::Read);
            unmapped.store(readers_only, Ordering::Relaxed);
            since_change = Span::default();
        } else if someone_joined {
            // A latecomer that took no leaf (yet) still changes what the next
            // pieces measure: its start ran beside them.
            since_change = Span::default();
        }
        let busy_before: Option<Vec<Duration>> =
            trace::on().then(|| members.iter().map(|m| m.total.busy).collect());
        absorb_everywhere(params, &mut members, piece, message_len)?;
        if let Some(before) = busy_before {
            trace_piece(message_len, piece.len(), &members, &before);
        }
        since_change.count(piece.len() as u64);
        message_len += piece.len() as u64;
        if members.len() > 1 {
            progress.engines(&members.iter().map(Member::share).collect::<Vec<_>>());
        }
        Ok(())
    };
    let bytes = timed(&mut times.leaves, || match input {
        Input::Bytes(data) => {
            message::for_each_piece_of_slice(params, data, piece_len, progress, &mut step)?;
            Ok(data.len() as u64)
        }
        Input::File(file) => {
            message::for_each_piece_of_file(
                params, file, piece_len, access, &unmapped, progress, &mut step,
            )?;
            Ok(file.len())
        }
        Input::Sequential(reader) => message::for_each_piece_of_sequential::<HashError>(
            params,
            *reader,
            piece_len,
            progress,
            |bytes| step(Piece::Memory(bytes)),
        ),
    })?;
    finish(params, members, reduce, times).map(|(digest, shares)| Hashed {
        digest,
        bytes,
        shares,
    })
}

fn trace_piece(message_len: u64, len: usize, members: &[Member<'_>], busy_before: &[Duration]) {
    trace::trace(|| {
        let mut line = format!("piece of {len} B at {message_len}:");
        for (m, before) in members.iter().zip(busy_before) {
            let leaves = m.engine.leaves();
            let busy = m.total.busy.saturating_sub(*before);
            line += &format!(
                " {} {}..{} {:.3} ms;",
                m.id,
                leaves.start,
                leaves.end,
                busy.as_secs_f64() * 1e3
            );
        }
        line
    });
}

/// Every engine absorbs its blocks of `piece` and counts its bytes and
/// time: those that own leaves each on its own thread (the first, or the
/// only one, on this one), those that own none here, first.
fn absorb_everywhere(
    params: &TreeParams,
    members: &mut [Member<'_>],
    piece: Piece<'_>,
    message_len: u64,
) -> Result<(), HashError> {
    let len = piece.len() as u64;
    let absorb = |m: &mut Member<'_>| -> Result<(), HashError> {
        let leaves = m.engine.leaves();
        let start = Instant::now();
        m.engine.absorb(piece)?;
        if !leaves.is_empty() {
            m.count(params, &leaves, message_len, len, start.elapsed());
        }
        Ok(())
    };
    // Engines that own no leaf only move past the piece: at once, on this
    // thread, so that one engine owning every leaf runs as it does alone.
    let mut working = Vec::with_capacity(members.len());
    for m in members.iter_mut() {
        if m.engine.leaves().is_empty() {
            absorb(m)?;
        } else {
            working.push(m);
        }
    }
    match working.as_mut_slice() {
        [only] => absorb(only),
        // On the global rayon pool's long-lived threads, not new ones per
        // piece: a thread's first CUDA call sets up driver state for it.
        [first, rest @ ..] => {
            let mut results: Vec<Result<(), HashError>> = rest.iter().map(|_| Ok(())).collect();
            let mut result = Ok(());
            rayon::scope(|s| {
                for (m, out) in rest.iter_mut().zip(results.iter_mut()) {
                    s.spawn(|_| *out = absorb(m));
                }
                result = absorb(first);
            });
            results.into_iter().fold(result, Result::and)
        }
        [] => Ok(()),
    }
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
            shares.push((range.clone(), m.share()));
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
            return Err(HashError::Internal("no engine owns a leaf".into()));
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
                crate::threads::spawn_scoped(s, move || {
                    let mut t = Timings::default();
                    (engine.finish_leaves(&mut t), t)
                })
            })
            .collect();
        for h in handles {
            let part = match h.map(|h| h.join()) {
                Ok(Ok(part)) => part,
                Ok(Err(_panicked)) => (
                    Err(HashError::Internal(
                        "an engine's thread panicked while finishing its leaves".into(),
                    )),
                    Timings::default(),
                ),
                Err(refused) => (Err(refused), Timings::default()),
            };
            parts.push(part);
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
