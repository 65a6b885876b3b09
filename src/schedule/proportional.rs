//! The split of a piece's chunks in proportion to each engine's measured
//! rate ([`Split`]), and under auto the trial of whether the CPU hashes
//! beside the GPUs ([`RoleTrial`]): the policy of the chunks' scheduling,
//! beside the leaves' climb (`balance`).

use std::time::Duration;

use crate::trace;

/// Pieces an engine hashes before its rate is taken as measured: its first
/// is slower (threads woken, a GPU's buffers for chaining values made).
pub(super) const PIECES_BEFORE_RATE: u32 = 1;
/// The weight of a piece's rate in an engine's smoothed rate.
pub(super) const RATE_WEIGHT: f64 = 0.5;

/// An engine's rate: bytes a second, smoothed over its recent pieces.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Rate {
    pieces: u32,
    bytes_per_second: Option<f64>,
}

impl Rate {
    pub(crate) fn record(&mut self, bytes: usize, time: Duration) {
        if bytes == 0 || time.is_zero() {
            return;
        }
        self.pieces += 1;
        if self.pieces <= PIECES_BEFORE_RATE {
            return;
        }
        let rate = bytes as f64 / time.as_secs_f64();
        self.bytes_per_second = Some(match self.bytes_per_second {
            Some(before) => RATE_WEIGHT * rate + (1.0 - RATE_WEIGHT) * before,
            None => rate,
        });
    }
}

/// How each piece's chunks are shared between the CPU and the GPUs: in
/// proportion to each engine's measured rate (bytes a second over its recent
/// pieces, each measured while the others ran beside it), so that all
/// finish a piece together. The CPU, and the GPUs whose staging it does,
/// share the host's cores and memory, so the rates move with the split; a
/// piece later they are measured again. An engine not measured yet is taken
/// to run as fast as the mean of those that are (at first an even share).
/// Under `--backend gpu` the CPU takes no chunk and the GPUs share each
/// wave evenly; under auto, whether the CPU takes chunks once GPUs take
/// part is tried ([`RoleTrial`]), and while it takes none the GPUs share
/// evenly too.
pub(crate) struct Split {
    cpu_takes_chunks: bool,
    /// The CPU's, then each GPU's.
    rates: Vec<Rate>,
    trial: RoleTrial,
    /// Tests: each piece's weights, by the engines' count.
    #[cfg(test)]
    pub(crate) script: Option<Box<dyn FnMut(usize) -> Vec<f64> + Send>>,
}

impl Split {
    /// A split where the CPU takes chunks or not (it takes them all while
    /// no GPU does).
    pub(crate) fn new(cpu_takes_chunks: bool) -> Split {
        Split {
            cpu_takes_chunks,
            rates: vec![Rate::default()],
            trial: RoleTrial::default(),
            #[cfg(test)]
            script: None,
        }
    }

    /// Whether the CPU takes chunks when GPUs take part.
    pub(crate) fn cpu_takes_chunks(&self) -> bool {
        self.cpu_takes_chunks
    }

    /// Each engine's weight for the next piece (the CPU first): with the
    /// CPU taking chunks, each engine's rate, or the mean of the measured
    /// rates for one not measured yet; with the GPUs alone, 0 for the CPU
    /// and 1 for each GPU.
    pub(crate) fn weights(&mut self, gpus: usize) -> Vec<f64> {
        self.rates.resize(1 + gpus, Rate::default());
        #[cfg(test)]
        if let Some(script) = &mut self.script {
            return script(1 + gpus);
        }
        let measured: Vec<f64> = self
            .rates
            .iter()
            .filter_map(|r| r.bytes_per_second)
            .collect();
        let guess = if measured.is_empty() {
            1.0
        } else {
            measured.iter().sum::<f64>() / measured.len() as f64
        };
        let mut weights: Vec<f64> = self
            .rates
            .iter()
            .map(|r| r.bytes_per_second.unwrap_or(guess))
            .collect();
        if gpus > 0 && (!self.cpu_takes_chunks || self.trial.role() == CpuRole::Stages) {
            // GPUs alone share evenly, as LI's begun side by side do
            // (docs/decisions/0042-gpus-alone-share-chunks-evenly.md): a
            // GPU's rate here is the time its staging took, which follows
            // the host's memory, shared by all of them, more than the GPU,
            // and a split that follows it drifts from wave to wave.
            weights.fill(1.0);
            weights[0] = 0.0;
        }
        weights
    }

    /// How many of `count` chunks each engine takes: the CPU first, then
    /// each of `gpus` GPUs.
    pub(crate) fn counts(&mut self, count: usize, gpus: usize) -> Vec<usize> {
        let weights = self.weights(gpus);
        let total: f64 = weights.iter().sum();
        if gpus == 0 || total <= 0.0 || !total.is_finite() {
            let mut counts = vec![0; 1 + gpus];
            counts[0] = count;
            return counts;
        }
        let mut counts = Vec::with_capacity(weights.len());
        let (mut sum, mut given) = (0.0, 0);
        for w in &weights {
            sum += w.max(0.0);
            let upto = ((count as f64 * sum / total).round() as usize).min(count);
            counts.push(upto - given);
            given = upto;
        }
        *counts.last_mut().expect("one engine at least") += count - given;
        counts
    }

    /// Notes a wave shared with GPUs: `bytes` of M in `wall` from its start
    /// to its end.
    pub(crate) fn record_wave(&mut self, bytes: usize, wall: Duration) {
        if self.cpu_takes_chunks {
            self.trial.record(bytes as u64, wall);
        }
    }

    /// Notes what each engine (the CPU first) hashed in the last piece and
    /// the time it took.
    pub(crate) fn record(&mut self, bytes: &[usize], times: &[Duration]) {
        if self.rates.len() < bytes.len() {
            self.rates.resize(bytes.len(), Rate::default());
        }
        for ((rate, &b), &t) in self.rates.iter_mut().zip(bytes).zip(times) {
            rate.record(b, t);
        }
    }
}

/// What the CPU does while GPUs take part in an input under auto.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CpuRole {
    /// It hashes a share of each wave's chunks, by the rates.
    Shares,
    /// It leaves every chunk to the GPUs, its cores to their staging.
    Stages,
}

/// Bytes of M each role is tried over, in whole waves, once GPUs take
/// part.
pub(super) const TRIAL_BYTES: u64 = 1 << 30;
/// Waves a role runs before its trial is measured: the rates of a split
/// just changed take a wave or two to settle.
pub(super) const SETTLE_WAVES: u32 = 2;

/// Which of the two roles moves more bytes a second, tried in turn once GPUs
/// take part: each over [`TRIAL_BYTES`] of whole waves (after
/// [`SETTLE_WAVES`]), then the faster kept for the rest of the input. Shares measured
/// by rate are not enough: with the CPU hashing, a split can run below both
/// the GPU alone and the CPU alone, because the GPU's staging and the CPU's
/// hashing take the same vCPUs and memory
/// (docs/decisions/0016-cpu-role-trial.md). Where the CPU is the stronger
/// engine, sharing wins and is kept.
#[derive(Debug, Default)]
pub(super) struct RoleTrial {
    step: TrialStep,
    /// Waves the current step has run to settle, up to [`SETTLE_WAVES`].
    settled: u32,
    bytes: u64,
    wall: Duration,
}

/// Where a [`RoleTrial`] stands.
#[derive(Clone, Copy, Debug, Default)]
pub(super) enum TrialStep {
    /// Sharing is tried first.
    #[default]
    Shares,
    /// Staging only is tried, sharing having moved `shares` bytes a second.
    Stages { shares: f64 },
    /// Both were tried: this role is kept.
    Kept(CpuRole),
}

impl RoleTrial {
    /// What the CPU does now.
    pub(crate) fn role(&self) -> CpuRole {
        match self.step {
            TrialStep::Shares => CpuRole::Shares,
            TrialStep::Stages { .. } => CpuRole::Stages,
            TrialStep::Kept(role) => role,
        }
    }

    /// Notes a wave of `bytes` that took `wall`, and moves the trial on.
    pub(crate) fn record(&mut self, bytes: u64, wall: Duration) {
        if let TrialStep::Kept(_) = self.step {
            return;
        }
        if self.settled < SETTLE_WAVES {
            self.settled += 1;
            return;
        }
        self.bytes += bytes;
        self.wall += wall;
        if self.bytes < TRIAL_BYTES || self.wall.is_zero() {
            return;
        }
        let rate = self.bytes as f64 / self.wall.as_secs_f64();
        (self.bytes, self.wall, self.settled) = (0, Duration::ZERO, 0);
        self.step = match self.step {
            TrialStep::Shares => TrialStep::Stages { shares: rate },
            TrialStep::Stages { shares } => {
                let kept = if shares >= rate {
                    CpuRole::Shares
                } else {
                    CpuRole::Stages
                };
                trace::trace(|| {
                    format!(
                        "CPU role: {kept:?} (sharing {:.1} GB/s, staging only {:.1} GB/s)",
                        shares / 1e9,
                        rate / 1e9
                    )
                });
                TrialStep::Kept(kept)
            }
            kept @ TrialStep::Kept(_) => kept,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_follow_the_rates_and_cover_every_chunk() {
        let mut split = Split::new(true);
        // Nothing measured: even shares.
        assert_eq!(split.counts(10, 1), vec![5, 5]);
        assert_eq!(split.counts(7, 0), vec![7]);
        // The CPU measured at 1 GB/s (its first piece left out), a GPU at 3.
        let ms = Duration::from_millis;
        split.record(&[1_000_000, 0], &[ms(1), ms(0)]);
        split.record(&[1_000_000, 3_000_000], &[ms(1), ms(1)]);
        // The GPU's first piece is left out: it runs at the CPU's rate.
        assert_eq!(split.counts(100, 1), vec![50, 50]);
        split.record(&[1_000_000, 3_000_000], &[ms(1), ms(1)]);
        assert_eq!(split.counts(100, 1), vec![25, 75]);
        // A second GPU not measured yet runs at the mean (2 GB/s).
        assert_eq!(split.counts(60, 2), vec![10, 30, 20]);
        for count in 0..50 {
            let counts = split.counts(count, 2);
            assert_eq!(counts.iter().sum::<usize>(), count);
        }
        let mut gpu_only = Split::new(false);
        assert_eq!(gpu_only.counts(9, 2), vec![0, 5, 4]);
        assert_eq!(gpu_only.counts(9, 0), vec![9]);
    }

    /// Runs waves of half a trial each, `wall` apiece, through the
    /// settling waves and one whole trial of the current role.
    fn one_trial(split: &mut Split, wall: Duration) {
        let half = (TRIAL_BYTES / 2) as usize;
        for _ in 0..SETTLE_WAVES + 2 {
            split.record_wave(half, wall);
        }
    }

    #[test]
    fn the_cpu_leaves_its_chunks_to_the_gpus_where_that_is_faster() {
        let ms = Duration::from_millis;
        let mut split = Split::new(true);
        assert_eq!(split.counts(10, 1), vec![5, 5]);
        // Sharing measured at 1 GiB in 40 ms: staging only is tried next.
        one_trial(&mut split, ms(20));
        assert_eq!(split.counts(10, 1), vec![0, 10]);
        // Staging only, 1 GiB in 30 ms, is faster: it is kept for good.
        one_trial(&mut split, ms(15));
        assert_eq!(split.counts(10, 1), vec![0, 10]);
        one_trial(&mut split, ms(100));
        one_trial(&mut split, ms(100));
        assert_eq!(split.counts(10, 1), vec![0, 10]);
        // With no GPU the CPU takes every chunk.
        assert_eq!(split.counts(10, 0), vec![10]);
    }

    #[test]
    fn the_cpu_keeps_its_share_where_sharing_is_faster() {
        let ms = Duration::from_millis;
        let mut split = Split::new(true);
        one_trial(&mut split, ms(15));
        assert_eq!(split.counts(10, 1), vec![0, 10]);
        // Staging only is slower: sharing again, for good.
        one_trial(&mut split, ms(20));
        assert_eq!(split.counts(10, 1), vec![5, 5]);
        one_trial(&mut split, ms(1));
        one_trial(&mut split, ms(1));
        assert_eq!(split.counts(10, 1), vec![5, 5]);
        // Under `--backend gpu` nothing is tried: the CPU never shares.
        let mut gpu_only = Split::new(false);
        one_trial(&mut gpu_only, ms(20));
        one_trial(&mut gpu_only, ms(1));
        assert_eq!(gpu_only.counts(10, 1), vec![0, 10]);
    }
}
