//! Where the split of the leaves goes: a plan sees, before each piece, the
//! engines' ranges and the throughput since the split last changed, and
//! may move the boundaries.

use std::ops::Range;

/// Pieces after a change of split that its throughput leaves out: an
/// engine that just took leaves fills its pipeline first, so its first
/// pieces run slower than the ones after them
/// (docs/decisions/0017-joiners-take-every-leaf.md).
pub(super) const WARM_UP_PIECES: u32 = 3;

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
    /// The split is searched; else the first one is kept.
    searches: bool,
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
            searches: true,
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
/// first one alone keep every leaf, untried: a share for the first one (the
/// CPU) then slows the shared pieces and does not repay the moves, and at
/// H = 4 each engine's time per piece is set by its leaves' chains, so no
/// split beats the GPU alone. The bar is 1 ×, not higher, because a GPU is
/// measured while it ramps up, when it runs about as fast as the CPU did
/// (docs/decisions/0017-joiners-take-every-leaf.md).
const JOINED_KEEP_ALL_AT: f64 = 1.0;
/// The search ends when a step would move fewer leaves than this share.
const SMALLEST_STEP: f64 = 1.0 / 64.0;

impl Balance {
    /// A balance that splits the leaves evenly among the engines there
    /// from the first piece and keeps that split: GPUs alone, begun side by
    /// side. Devices of one kind run at one rate, fed by one host; a search
    /// would move leaves (tens of milliseconds a move) to find the split
    /// they start with.
    pub(crate) fn even() -> Self {
        Balance {
            searches: false,
            ..Balance::default()
        }
    }

    /// Boundaries that give the first engine `share` of the leaves and the
    /// others equal parts of the rest.
    fn split(&self, n: usize, leaf_count: u64) -> Vec<u64> {
        crate::engine::split_leaves(self.share, n, leaf_count)
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
            // even split it rarely climbs all the way, and one GPU alone
            // outruns both sharing (issue 11,
            // docs/decisions/0017-joiners-take-every-leaf.md).
            (self.share, self.step) = if from_the_start {
                (1.0 / n as f64, -0.5 / n as f64)
            } else {
                (0.0, FIRST_STEP_BACK)
            };
            self.alone = (!from_the_start).then_some(now.throughput).flatten();
            self.best = None;
            self.settled = !self.searches;
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
