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
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::engine::{LeafEngine, LeafStates, packed_len};
use crate::error::HashError;
use crate::input::InputFile;
use crate::message::{self, Access, Piece};
use crate::params::TreeParams;
use crate::progress::Progress;
use crate::timings::{Timings, timed};
use crate::trace;

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
}

/// Pieces after a change of split that its throughput leaves out: an
/// engine that just took leaves fills its pipeline first (a GPU's first
/// three pieces after it joined took 1.9 ms each, the next 1.0–1.1 ms;
/// H200 machine, 32 GiB, docs/PERFORMANCE.md).
const WARM_UP_PIECES: u32 = 3;

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
    name: String,
    engine: Box<dyn LeafEngine + 'a>,
    total: Tally,
}

impl<'a> Member<'a> {
    pub(crate) fn new(name: impl Into<String>, engine: Box<dyn LeafEngine + 'a>) -> Self {
        Member {
            name: name.into(),
            engine,
            total: Tally::default(),
        }
    }

    /// What it did so far.
    fn share(&self) -> EngineShare {
        EngineShare {
            engine: self.name.clone(),
            bytes: self.total.bytes,
            busy: self.total.busy,
        }
    }
}

/// Where an input stands before a piece, for the engines that may join.
pub(crate) struct Standing {
    /// Bytes of M absorbed so far, and still to come if known.
    pub message_len: u64,
    pub remaining: Option<u64>,
    /// Time since the first piece.
    pub elapsed: Duration,
}

/// Engines that may join while an input is hashed (GPUs starting up).
pub(crate) trait Joiners<'a> {
    /// Engines ready to join now, owning no leaf; an error where one that
    /// had to join cannot.
    fn poll(&mut self, now: &Standing) -> Result<Vec<Member<'a>>, HashError>;
}

/// No engine joins.
pub(crate) struct NoJoiners;

impl<'a> Joiners<'a> for NoJoiners {
    fn poll(&mut self, _now: &Standing) -> Result<Vec<Member<'a>>, HashError> {
        Ok(Vec::new())
    }
}

/// What a plan sees before each piece.
pub(crate) struct Moment {
    pub leaf_count: u64,
    /// Bytes of M still to come, if known.
    pub remaining: Option<u64>,
    /// The piece length.
    pub piece_len: usize,
    /// Each engine's leaves, in leaf order.
    pub ranges: Vec<Range<u64>>,
    /// Since the split last changed: pieces, and bytes of M a second
    /// (waits for the input included) after the first `WARM_UP_PIECES`.
    pub pieces: u32,
    pub throughput: Option<f64>,
}

/// Where the split goes.
pub(crate) trait Plan {
    /// The new boundaries b₀ = 0 ≤ b₁ ≤ … ≤ bₙ = L (engine i owns
    /// [bᵢ, bᵢ₊₁)), or `None` to keep the split.
    fn boundaries(&mut self, now: &Moment) -> Option<Vec<u64>>;
}

/// The split that makes the input go fastest, found by measuring: the
/// engines share one machine (a GPU is fed by the same cores and memory
/// that the CPU engine hashes with), so each engine's own rate says little
/// about the best split. Engines there from the first piece start with
/// even shares; engines that join later start with every leaf. Then the
/// first engine's share is moved a step at a time while the input's
/// measured throughput rises, and back with half the step when it falls,
/// until the step is small. The others share the rest evenly.
pub(crate) struct Balance {
    /// Engines that had their first share.
    seen: usize,
    /// The first engine's share of the leaves now.
    share: f64,
    /// The next move of that share (its sign is the direction).
    step: f64,
    /// The best split measured: the share and the throughput it gave.
    best: Option<(f64, f64)>,
    /// The search has ended.
    settled: bool,
    /// The throughput before engines joined, while the first was alone.
    alone: Option<f64>,
    /// Engines that join late take every leaf (a GPU joining the CPU);
    /// else the first keeps them, and the search tries giving some away.
    joiners_take_all: bool,
}

impl Default for Balance {
    fn default() -> Self {
        Balance {
            seen: 0,
            share: 1.0,
            step: 0.0,
            best: None,
            settled: false,
            alone: None,
            joiners_take_all: true,
        }
    }
}

/// Pieces absorbed on a split before its throughput is trusted (the warm-up
/// ones included).
const PIECES_MEASURED: u32 = WARM_UP_PIECES + 6;
/// A throughput this much higher than the best so far counts as better.
const BETTER: f64 = 1.02;
/// The first engine's first share after engines joined it (it had none).
const FIRST_STEP_BACK: f64 = 1.0 / 8.0;
/// Engines that joined and run at least this many times as fast as the
/// first one alone keep every leaf, untried: giving the first one (the CPU)
/// a share then never paid for its moves (traces of 32 GiB files, H200
/// machine: a share of 1/8 or 1/32 made H = 8 pieces take 1.6–3.3 ms
/// against 1.0–2.2 on the GPU alone, and the moves took 14–45 ms each; at
/// H = 4 each engine's time per piece is set by its leaves' chains, so no
/// split beats the GPU alone). A GPU is measured while it ramps up: its
/// pieces took 1.8–2.3 ms just after it joined, about the CPU's 2.0, and
/// 0.8 some 150 pieces later; at 1.5 × and 2 × the search still ran.
const JOINED_KEEP_ALL_AT: f64 = 1.0;
/// The search ends when a step would move fewer leaves than this share.
const SMALLEST_STEP: f64 = 1.0 / 64.0;

impl Balance {
    /// A balance under which engines that join late start with no leaf: a
    /// GPU joining another (`--backend gpu`), where moving every leaf to
    /// the newcomer gains nothing and each move costs 20–40 ms (two-H200
    /// machine, docs/PERFORMANCE.md).
    pub(crate) fn first_keeps_all() -> Self {
        Balance {
            joiners_take_all: false,
            ..Balance::default()
        }
    }

    /// Boundaries that give the first engine `share` of the leaves and the
    /// others equal parts of the rest.
    fn split(&self, n: usize, leaf_count: u64) -> Vec<u64> {
        let first = (self.share * leaf_count as f64).round() as u64;
        let rest = leaf_count - first.min(leaf_count);
        let mut bounds = vec![0, first.min(leaf_count)];
        for k in 1..n {
            bounds.push(first + rest * k as u64 / (n as u64 - 1));
        }
        bounds
    }
}

impl Plan for Balance {
    fn boundaries(&mut self, now: &Moment) -> Option<Vec<u64>> {
        let n = now.ranges.len();
        let from_the_start = self.seen == 0;
        let joined = n > self.seen;
        self.seen = self.seen.max(n);
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
        if joined {
            // The search starts over. Engines there from the first piece
            // split evenly. Engines that join later (GPUs, started because
            // the rest of the input would repay their start-up) take every
            // leaf, and the search moves leaves back from there: from an
            // even split it rarely climbed all the way, while one GPU alone
            // outran both sharing (docs/PERFORMANCE.md, issue 11).
            (self.share, self.step) = if from_the_start {
                (1.0 / n as f64, -0.5 / n as f64)
            } else if self.joiners_take_all {
                (0.0, FIRST_STEP_BACK)
            } else {
                (1.0, -FIRST_STEP_BACK)
            };
            self.alone = (!from_the_start).then_some(now.throughput).flatten();
            self.best = None;
            self.settled = false;
            return Some(self.split(n, now.leaf_count));
        }
        if self.settled || now.pieces < PIECES_MEASURED {
            return None;
        }
        let throughput = now.throughput?;
        // Without a rate of the first engine alone (the split changed just
        // before they joined), the search decides.
        if self.best.is_none()
            && self.share == 0.0
            && self
                .alone
                .is_some_and(|alone| throughput >= JOINED_KEEP_ALL_AT * alone)
        {
            self.settled = true;
            return None;
        }
        match self.best {
            Some((best_share, best)) if throughput <= best * BETTER => {
                // Worse than one engine owning every leaf (at either end):
                // giving leaves away did not pay, and smaller probes would
                // each cost two moves more; it ends there.
                if best_share == 0.0 || best_share == 1.0 {
                    self.settled = true;
                    self.share = best_share;
                    return Some(self.split(n, now.leaf_count));
                }
                // Worse: back past the best, the other way, half as far.
                self.step = -self.step / 2.0;
                self.share = best_share;
            }
            _ => self.best = Some((self.share, throughput)),
        }
        if self.step.abs() < SMALLEST_STEP {
            self.settled = true;
            let (best_share, _) = self.best.unwrap_or((self.share, throughput));
            let changed = best_share != self.share;
            self.share = best_share;
            return changed.then(|| self.split(n, now.leaf_count));
        }
        self.share = (self.share + self.step).clamp(0.0, 1.0);
        Some(self.split(n, now.leaf_count))
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
        let joined = joiners.poll(&standing)?;
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
            // A joiner that took no leaf (yet) still changes what the next
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
        Input::Stream(reader) => message::for_each_piece_of_stream::<HashError>(
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
                m.name,
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
            let busy = start.elapsed();
            let bytes = packed_len(params, &leaves, message_len + len)
                - packed_len(params, &leaves, message_len);
            m.total.bytes += bytes;
            m.total.busy += busy;
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

/// Moves leaves so that engine i owns [bounds[i], bounds[i + 1]): every
/// engine first gives up what it loses (an end of its range), then takes
/// what it gains (next to what it kept), with the states handed over.
fn migrate(members: &mut [Member<'_>], bounds: &[u64]) -> Result<(), HashError> {
    let old: Vec<Range<u64>> = members.iter().map(|m| m.engine.leaves()).collect();
    let new: Vec<Range<u64>> = bounds.windows(2).map(|w| w[0]..w[1]).collect();
    let mut moving: Vec<(Range<u64>, LeafStates)> = Vec::new();
    for ((m, old), new) in members.iter_mut().zip(&old).zip(&new) {
        for lost in difference(old, new).into_iter().rev() {
            let taking = Instant::now();
            let states = m.engine.take_leaves(lost.clone())?;
            trace::trace(|| format!("{} gave {lost:?} in {:?}", m.name, taking.elapsed()));
            moving.push((lost, states));
        }
    }
    for ((m, old), new) in members.iter_mut().zip(&old).zip(&new) {
        for gained in difference(new, old) {
            let giving = Instant::now();
            let states = gather(&moving, &gained);
            let gathered = giving.elapsed();
            m.engine.give_leaves(gained.clone(), states)?;
            trace::trace(|| {
                let took = giving.elapsed();
                format!(
                    "{} took {gained:?} in {took:?} ({gathered:?} to gather)",
                    m.name
                )
            });
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
                s.spawn(move || {
                    let mut t = Timings::default();
                    (engine.finish_leaves(&mut t), t)
                })
            })
            .collect();
        for h in handles {
            parts.push(h.join().unwrap_or_else(|_| {
                (
                    Err(HashError::Internal(
                        "an engine's thread panicked while finishing its leaves".into(),
                    )),
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cpu::{CpuBackend, CpuPath};
    use crate::input::Source;
    use crate::params::Algorithm;
    use crate::progress::{CountingProgress, NoProgress};
    use crate::reference;

    /// A small deterministic generator (xorshift64*), so that a failure
    /// can be replayed from its seed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
    }

    /// Makes an engine that joins `message_len` bytes into M.
    type Begin<'a> = Box<dyn Fn(u64) -> Box<dyn LeafEngine + 'a> + 'a>;

    /// Engines (CPU ones standing in for GPUs, or GPUs) that each join
    /// before a given piece.
    struct Scripted<'a> {
        /// (piece index, name, how it begins), in order of the pieces.
        joins: Vec<(u64, String, Begin<'a>)>,
        piece: u64,
    }

    impl<'a> Joiners<'a> for Scripted<'a> {
        fn poll(&mut self, now: &Standing) -> Result<Vec<Member<'a>>, HashError> {
            let mut ready = Vec::new();
            while self.joins.first().is_some_and(|j| j.0 <= self.piece) {
                let (_, name, begin) = self.joins.remove(0);
                ready.push(Member::new(name, begin(now.message_len)));
            }
            self.piece += 1;
            Ok(ready)
        }
    }

    /// A CPU engine joining as a stand-in.
    fn cpu_joins<'a>(cpu: &'a CpuBackend, params: &'a TreeParams) -> Begin<'a> {
        Box::new(move |at| cpu.begin_at(params, at))
    }

    /// Moves the boundaries to random places before random pieces: leaves
    /// go both ways, engines sometimes own nothing or everything.
    struct RandomPlan {
        rng: Rng,
        moves: u32,
    }

    impl Plan for RandomPlan {
        fn boundaries(&mut self, now: &Moment) -> Option<Vec<u64>> {
            if self.rng.below(3) != 0 {
                return None;
            }
            let l = now.leaf_count;
            let n = now.ranges.len();
            let mut cuts: Vec<u64> = (1..n).map(|_| self.rng.below(l + 1)).collect();
            cuts.sort_unstable();
            let mut bounds = vec![0];
            bounds.extend(cuts);
            bounds.push(l);
            self.moves += 1;
            Some(bounds)
        }
    }

    /// The parameter sets of the tests: every engine path's shapes, B below,
    /// at and off the rate, a prefix, few and many leaves.
    fn cases() -> Vec<TreeParams> {
        let p = |a, h, d, b: Option<usize>, prefix: &[u8]| {
            TreeParams::with_options(a, h, d, b, prefix.to_vec(), None).unwrap()
        };
        vec![
            p(Algorithm::Sha3_256, 1, 2, None, b""),
            p(Algorithm::Sha3_256, 2, 2, None, b""),
            p(Algorithm::Sha3_256, 2, 4, None, b"key"),
            p(Algorithm::Sha3_256, 5, 2, Some(136 * 2), b""),
            p(Algorithm::Sha3_512, 3, 3, Some(48), b""),
            p(Algorithm::Shake128, 4, 4, Some(168), b"prefix bytes"),
            p(Algorithm::Sha3_224, 10, 2, Some(144), b""),
            p(Algorithm::Shake256, 2, 5, Some(8), b"p"),
        ]
    }

    fn data(len: usize, seed: u64) -> Vec<u8> {
        let mut rng = Rng(seed | 1);
        (0..len).map(|_| rng.next() as u8).collect()
    }

    /// The sizes around a case's edges: 0, 1, the rate ± 1, a block, a
    /// stripe ± 1, several stripes and a bit.
    fn sizes(params: &TreeParams) -> Vec<usize> {
        let (r, b) = (params.algorithm().rate(), params.block_size());
        let stripe = params.stripe_len() as usize;
        let mut sizes = vec![0, 1, r - 1, r, r + 1, b, stripe - 1, stripe, stripe + 1];
        sizes.extend([3 * stripe + b / 2 + 5, 20_000]);
        sizes
    }

    fn backends(piece: usize) -> Vec<CpuBackend> {
        let mut paths = vec![CpuPath::Portable, CpuPath::Auto];
        if CpuBackend::new(Some(1), None, CpuPath::Avx2).is_ok() {
            paths.push(CpuPath::Avx2);
        }
        paths
            .into_iter()
            .map(|path| CpuBackend::new(Some(2), Some(piece), path).unwrap())
            .collect()
    }

    /// Runs the scheduler over `input` with a random plan and engines
    /// joining at random pieces: the digest.
    fn shared_digest(
        params: &TreeParams,
        input: &mut Input<'_>,
        cpus: &[CpuBackend],
        seed: u64,
    ) -> (Vec<u8>, u32) {
        let mut rng = Rng(seed);
        let first = &cpus[rng.below(cpus.len() as u64) as usize];
        let members = vec![Member::new("first", first.begin(params))];
        let mut joins: Vec<(u64, String, Begin<'_>)> = (0..1 + rng.below(3))
            .map(|k| {
                let cpu = &cpus[rng.below(cpus.len() as u64) as usize];
                (
                    rng.below(6),
                    format!("stand-in {k}"),
                    cpu_joins(cpu, params),
                )
            })
            .collect();
        joins.sort_by_key(|j| j.0);
        let mut joiners = Scripted { joins, piece: 0 };
        let mut plan = RandomPlan {
            rng: Rng(rng.next() | 1),
            moves: 0,
        };
        let reduce = |outputs: Vec<u8>| first.reduce_leaf_outputs(params, outputs);
        let mut times = Timings::default();
        let hashed = run(
            params,
            input,
            members,
            &mut joiners,
            &mut plan,
            &reduce,
            &NoProgress,
            &mut times,
        )
        .unwrap();
        (hashed.digest, plan.moves)
    }

    #[test]
    fn any_split_and_any_hand_over_give_the_reference_digest() {
        let cpus = backends(300);
        let mut moves = 0;
        for (c, params) in cases().iter().enumerate() {
            for (s, len) in sizes(params).into_iter().enumerate() {
                let file = data(len, (c * 100 + s) as u64);
                let want = reference::tree_hash(params, &file);
                for round in 0..3u64 {
                    let seed = (c as u64) << 32 | (s as u64) << 8 | round | 1;
                    let (got, moved) = shared_digest(params, &mut Input::Bytes(&file), &cpus, seed);
                    moves += moved;
                    assert_eq!(
                        hex::encode(got),
                        hex::encode(&want),
                        "{} {len} bytes, seed {seed:#x}",
                        params.label()
                    );
                }
            }
        }
        // The plans did move leaves (else the test would prove little).
        assert!(moves > 100, "only {moves} migrations");
    }

    #[test]
    fn files_and_streams_are_shared_the_same_way() {
        let cpus = backends(1000);
        let params = &cases()[3];
        let file = data(150_000, 7);
        let want = reference::tree_hash(params, &file);
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut tmp, &file).unwrap();
        for seed in 1..6 {
            let Source::File(input) = Source::open(tmp.path()).unwrap() else {
                panic!("a regular file is not a stream");
            };
            let (got, _) = shared_digest(params, &mut Input::File(&input), &cpus, seed);
            assert_eq!(got, want, "file, seed {seed}");
            let mut reader = std::io::Cursor::new(file.clone());
            let (got, _) = shared_digest(params, &mut Input::Stream(&mut reader), &cpus, seed);
            assert_eq!(got, want, "stream, seed {seed}");
        }
    }

    /// The search on a machine whose throughput peaks when the first
    /// engine has `best` of the leaves: the engine that joins starts with
    /// every leaf, the search finds the peak within a few steps, then keeps
    /// the split. Engines there from the start split evenly.
    #[test]
    #[allow(clippy::single_range_in_vec_init)] // one engine owning every leaf
    fn balance_climbs_to_the_fastest_split() {
        for best in [0.0, 0.1, 0.3, 0.5, 0.8] {
            let leaf_count = 1 << 16;
            let throughput = |share: f64| 50.0 - 40.0 * (share - best).abs();
            let mut plan = Balance::default();
            let mut ranges = vec![0..leaf_count];
            let moment = |ranges: &Vec<Range<u64>>, pieces, t| Moment {
                leaf_count,
                remaining: None,
                piece_len: 1 << 20,
                ranges: ranges.clone(),
                pieces,
                throughput: t,
            };
            // Alone: nothing to split.
            assert_eq!(plan.boundaries(&moment(&ranges, 9, Some(1.0))), None);
            // A second engine joins: it takes every leaf.
            ranges.push(leaf_count..leaf_count);
            let all_to_it = plan.boundaries(&moment(&ranges, 0, None)).unwrap();
            assert_eq!(all_to_it, vec![0, 0, leaf_count]);
            let mut bounds = all_to_it;
            let mut moves = 0;
            for _ in 0..100 {
                ranges = bounds.windows(2).map(|w| w[0]..w[1]).collect();
                let share = bounds[1] as f64 / leaf_count as f64;
                // Too few pieces measured: kept.
                assert_eq!(
                    plan.boundaries(&moment(&ranges, 2, Some(throughput(share)))),
                    None
                );
                match plan.boundaries(&moment(&ranges, 9, Some(throughput(share)))) {
                    Some(next) => {
                        bounds = next;
                        moves += 1;
                    }
                    None => break,
                }
            }
            let share = bounds[1] as f64 / leaf_count as f64;
            // Within a few per cent of the fastest (the search takes only
            // gains of more than BETTER as gains).
            assert!(
                throughput(share) >= 0.97 * throughput(best),
                "best {best}: ended at {share}"
            );
            assert!(moves < 20, "best {best}: {moves} moves");
            // Settled: no more moves.
            assert_eq!(plan.boundaries(&moment(&ranges, 50, Some(1.0))), None);
        }
        // Joiners at least as fast as the first engine alone keep every
        // leaf; slower ones are searched as above.
        for (joined, moves) in [(25.0, false), (10.0, false), (8.0, true)] {
            let mut plan = Balance::default();
            let moment = moment_of_64_leaves;
            assert_eq!(plan.boundaries(&moment(vec![0..64], 9, Some(10.0))), None);
            let all_to_it = plan.boundaries(&moment(vec![0..64, 64..64], 9, Some(10.0)));
            assert_eq!(all_to_it, Some(vec![0, 0, 64]));
            let next = plan.boundaries(&moment(vec![0..0, 0..64], 9, Some(joined)));
            assert_eq!(next.is_some(), moves, "joiners at {joined}");
            if !moves {
                let later = moment(vec![0..0, 0..64], 50, Some(1.0));
                assert_eq!(plan.boundaries(&later), None);
            }
        }
        let mut plan = Balance::default();
        let from_the_start = Moment {
            leaf_count: 90,
            remaining: None,
            piece_len: 1 << 20,
            ranges: vec![0..90, 90..90, 90..90],
            pieces: 0,
            throughput: None,
        };
        assert_eq!(plan.boundaries(&from_the_start), Some(vec![0, 30, 60, 90]));
        // The last pieces are not worth a move.
        let mut plan = Balance::default();
        let last = Moment {
            leaf_count: 100,
            remaining: Some(3 << 20),
            piece_len: 1 << 20,
            ranges: vec![0..100, 100..100],
            pieces: 0,
            throughput: None,
        };
        assert_eq!(plan.boundaries(&last), None);
    }

    /// What a plan sees of a tree of 64 leaves, the input's end not known.
    fn moment_of_64_leaves(
        ranges: Vec<Range<u64>>,
        pieces: u32,
        throughput: Option<f64>,
    ) -> Moment {
        Moment {
            leaf_count: 64,
            remaining: None,
            piece_len: 1 << 20,
            ranges,
            pieces,
            throughput,
        }
    }

    /// Under `first_keeps_all` an engine that joins starts with no leaf;
    /// the search gives it an eighth, takes it back for good if that was
    /// slower, and goes on if it was faster.
    #[test]
    #[allow(clippy::single_range_in_vec_init)] // one engine owning every leaf
    fn joiners_start_empty_where_the_first_keeps_all() {
        let moment = moment_of_64_leaves;
        for (shared, next) in [(8.0, vec![0, 64, 64]), (12.0, vec![0, 48, 64])] {
            let mut plan = Balance::first_keeps_all();
            assert_eq!(plan.boundaries(&moment(vec![0..64], 9, Some(10.0))), None);
            // It joins: the split it names is the one there is (no move).
            let joined = plan.boundaries(&moment(vec![0..64, 64..64], 0, None));
            assert_eq!(joined, Some(vec![0, 64, 64]));
            let probe = plan.boundaries(&moment(vec![0..64, 64..64], 9, Some(10.0)));
            assert_eq!(probe, Some(vec![0, 56, 64]));
            let after = plan.boundaries(&moment(vec![0..56, 56..64], 9, Some(shared)));
            assert_eq!(after, Some(next.clone()), "shared at {shared}");
            if shared < 10.0 {
                let later = moment(vec![0..64, 64..64], 50, Some(1.0));
                assert_eq!(plan.boundaries(&later), None, "settled");
            }
        }
    }

    #[test]
    fn a_splits_throughput_leaves_out_the_warm_up_pieces() {
        let mut span = Span::default();
        for _ in 0..WARM_UP_PIECES {
            assert_eq!(span.rate(), None);
            span.count(1 << 20);
        }
        // Warm: nothing measured yet.
        assert_eq!(span.rate(), None);
        std::thread::sleep(Duration::from_millis(20));
        span.count(1 << 20);
        let rate = span.rate().unwrap();
        // One mebibyte over at least 20 ms: the warm-up's bytes are not counted.
        assert!(rate <= (1 << 20) as f64 / 0.020, "{rate}");
        assert_eq!(span.pieces, WARM_UP_PIECES + 1);
    }

    #[test]
    fn hand_over_ranges_and_states() {
        assert_eq!(difference(&(0..10), &(0..10)), Vec::<Range<u64>>::new());
        assert_eq!(difference(&(0..10), &(3..7)), vec![0..3, 7..10]);
        assert_eq!(difference(&(0..10), &(20..30)), vec![0..10]);
        assert_eq!(difference(&(5..10), &(0..0)), vec![5..10]);
        assert_eq!(difference(&(0..0), &(0..5)), Vec::<Range<u64>>::new());
        let state = |k: u64| [k; 25];
        // Leaves 2..4 from one engine, 4..6 from another (leaf 5 fresh).
        let moving = vec![(2..4, vec![state(2), state(3)]), (4..6, vec![state(4)])];
        assert_eq!(gather(&moving, &(3..6)), vec![state(3), state(4)]);
        assert_eq!(gather(&moving, &(5..6)), Vec::<[u64; 25]>::new());
        let gap = vec![(2..3, vec![]), (3..4, vec![state(3)])];
        assert_eq!(gather(&gap, &(2..4)), vec![[0; 25], state(3)]);
    }

    #[test]
    fn progress_counts_every_byte_once_whatever_the_split() {
        let cpus = backends(256);
        let params = &cases()[1];
        let file = data(10_000, 3);
        let bar = CountingProgress::default();
        let first = &cpus[0];
        let members = vec![Member::new("cpu", first.begin(params))];
        let mut joiners = Scripted {
            joins: vec![(1, "other".into(), cpu_joins(&cpus[1], params))],
            piece: 0,
        };
        let mut plan = RandomPlan {
            rng: Rng(5),
            moves: 0,
        };
        let reduce = |outputs: Vec<u8>| first.reduce_leaf_outputs(params, outputs);
        let hashed = run(
            params,
            &mut Input::Bytes(&file),
            members,
            &mut joiners,
            &mut plan,
            &reduce,
            &bar,
            &mut Timings::default(),
        )
        .unwrap();
        assert_eq!(bar.0.into_inner(), 10_000);
        assert_eq!(hashed.bytes, 10_000);
        assert_eq!(hashed.digest, reference::tree_hash(params, &file));
        // Every byte of M was some engine's.
        let shared: u64 = hashed.shares.iter().map(|s| s.bytes).sum();
        assert_eq!(shared, 10_000);
    }

    /// GPUs and CPUs side by side on the GPU machine: any split, any
    /// hand-over, either kernel, = the reference.
    #[test]
    #[ignore = "needs a CUDA GPU (scripts/gpu-check.sh runs it)"]
    fn gpus_and_cpus_share_leaves_in_any_split() {
        use crate::gpu::{GpuBackend, LeafKernel};
        let gpu = GpuBackend::open(0, Some(4096)).expect("a usable CUDA GPU");
        let cpus = backends(300);
        let pool = cpus[0].pool();
        let mut moves = 0;
        for (c, params) in cases().iter().enumerate() {
            for (s, len) in sizes(params).into_iter().enumerate() {
                let file = data(len, (c * 100 + s) as u64);
                let want = reference::tree_hash(params, &file);
                for round in 0..4u64 {
                    let seed = (c as u64) << 32 | (s as u64) << 8 | round | 1;
                    let mut rng = Rng(seed);
                    let kernel = [
                        None,
                        Some(LeafKernel::ThreadPerLeaf),
                        Some(LeafKernel::WarpPerLeaf),
                    ][rng.below(3) as usize];
                    let gpu_first = rng.below(2) == 0;
                    let mut t = Timings::default();
                    let first: Box<dyn LeafEngine + '_> = if gpu_first {
                        gpu.begin(
                            params,
                            Some(len as u64),
                            Default::default(),
                            kernel,
                            pool,
                            &mut t,
                        )
                        .unwrap()
                    } else {
                        cpus[0].begin(params)
                    };
                    let piece_len = first.piece_len();
                    let gpu_joins: Begin<'_> = Box::new(|at| {
                        gpu.begin_at(params, at, piece_len, kernel, pool, &mut Timings::default())
                            .unwrap()
                    });
                    let other = if gpu_first {
                        cpu_joins(&cpus[1], params)
                    } else {
                        gpu_joins
                    };
                    let mut joiners = Scripted {
                        joins: vec![
                            (rng.below(4), "second".into(), other),
                            (
                                rng.below(8),
                                "third".into(),
                                cpu_joins(&cpus[2 % cpus.len()], params),
                            ),
                        ],
                        piece: 0,
                    };
                    joiners.joins.sort_by_key(|j| j.0);
                    let mut plan = RandomPlan {
                        rng: Rng(rng.next() | 1),
                        moves: 0,
                    };
                    let reduce = |outputs: Vec<u8>| cpus[0].reduce_leaf_outputs(params, outputs);
                    let hashed = run(
                        params,
                        &mut Input::Bytes(&file),
                        vec![Member::new("first", first)],
                        &mut joiners,
                        &mut plan,
                        &reduce,
                        &NoProgress,
                        &mut t,
                    )
                    .unwrap();
                    moves += plan.moves;
                    assert_eq!(
                        hex::encode(hashed.digest),
                        hex::encode(&want),
                        "{} {len} bytes, seed {seed:#x}",
                        params.label()
                    );
                }
            }
        }
        assert!(moves > 100, "only {moves} migrations");
    }

    /// A GPU that fails part-way (an error injected after two chunks) ends
    /// the input in an error: never a digest.
    #[test]
    #[ignore = "needs a CUDA GPU (scripts/gpu-check.sh runs it)"]
    fn a_gpu_failing_midway_is_an_error_not_a_digest() {
        use crate::gpu::GpuBackend;
        let mut gpu = GpuBackend::open(0, Some(4096)).expect("a usable CUDA GPU");
        gpu.fail_after_chunks = Some(2);
        let cpus = backends(4096);
        let params = &cases()[1];
        let file = data(1 << 20, 9);
        let pool = cpus[0].pool();
        let mut joiners = Scripted {
            joins: vec![(
                1,
                "gpu".into(),
                Box::new(|at| {
                    let piece_len = cpus[0].piece_len(params);
                    gpu.begin_at(params, at, piece_len, None, pool, &mut Timings::default())
                        .unwrap()
                }),
            )],
            piece: 0,
        };
        let reduce = |outputs: Vec<u8>| cpus[0].reduce_leaf_outputs(params, outputs);
        let result = run(
            params,
            &mut Input::Bytes(&file),
            vec![Member::new("cpu", cpus[0].begin(params))],
            &mut joiners,
            &mut Balance::default(),
            &reduce,
            &NoProgress,
            &mut Timings::default(),
        );
        match result {
            Err(HashError::Gpu(e)) => assert!(e.contains("injected"), "{e}"),
            Err(e) => panic!("another error: {e}"),
            Ok(_) => panic!("a digest despite the GPU's failure"),
        }
    }
}
