//! Under `Auto`: whether the GPUs start for an input (from the CPU's rate
//! so far and the start-up measured on this machine), the GPUs that join
//! it when they are ready, what `-v` says when none took part, and the
//! progress of an input redone on the CPU after a GPU failed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::Hasher;
use crate::error::HashError;
use crate::gpu::{self, GpuBackend, KernelSet};
use crate::params::TreeParams;
use crate::progress::{EngineShare, Progress};
use crate::schedule::{Joiners, Member, Standing};
use crate::sponge::SpongeSpec;
use crate::standard::run::{ChunkEngine, ChunkJoiners};
use crate::timings::Timings;
use crate::trace;

impl Hasher {
    /// Under `Auto`, once its inputs are done: why no GPU took part, if none
    /// did: no driver, no device or a start that failed (this waits for the
    /// GPUs' start in the background to end), or why none was started.
    /// `None` when one was started.
    pub fn why_no_gpu(&self) -> Option<String> {
        if let Some(reason) = self.gpus.unavailable() {
            return Some(reason);
        }
        if !gpu::driver_present() {
            return Some(gpu::NO_DRIVER.to_string());
        }
        if self.gpus.asked() {
            return None;
        }
        Some(if self.shareable_input.load(Ordering::Relaxed) {
            format!(
                "no GPU was started: no input was long enough to repay its expected \
                 start-up of {:.2} s",
                self.gpus.expected_startup().as_secs_f64()
            )
        } else {
            "no GPU was started: a tree of one leaf (height 0), like TurboSHAKE, \
             is one sponge, which a GPU cannot share"
                .to_string()
        })
    }

    /// Charges the GPU's one-time start-up to the first digest made on it.
    pub(super) fn charge_startup(&self, gpu: &GpuBackend, timings: &mut Timings) {
        if !self.startup_reported.swap(true, Ordering::Relaxed) {
            timings.gpu_init = gpu.info().init;
        }
    }
}

/// The GPUs that become ready while an input is hashed: under `Auto`, or
/// under `Gpu` after the first.
pub(super) struct GpuJoiners<'h> {
    pub(super) hasher: &'h Hasher,
    pub(super) params: &'h TreeParams,
    /// The GPUs were asked to start.
    pub(super) started: bool,
    /// Where the CPU's rate is measured from: after its first piece, which
    /// also waits for the first window and wakes the threads.
    pub(super) baseline: Option<(u64, Duration)>,
    /// Ordinals that joined (or failed to).
    pub(super) joined: Vec<usize>,
    /// Their start-up, for the timings.
    pub(super) startup: Timings,
    /// The pieces the first engine cuts.
    pub(super) piece_len: usize,
    /// Every GPU must take part (`--backend gpu`): one that fails to start
    /// or to begin is an error, not left out.
    pub(super) required: bool,
}

/// Pieces hashed, after the first, before the CPU's rate is taken as known.
/// The first pieces run slower, and a rate from too few of them starts GPUs
/// for inputs that the CPU then finishes alone
/// (docs/decisions/0014-when-gpus-start-for-li.md).
const PIECES_MEASURED_BEFORE_GPU_START: u64 = 8;
/// The GPUs are started only for an input whose rest would take the CPU
/// this many times a GPU's expected start-up. A start that comes to nothing
/// costs: the CPU goes slower meanwhile, and the process cannot end while
/// the driver is inside a call. A GPU that joins costs too: its staging
/// threads take cores from the CPU's hashing and the leaves move. At twice
/// the start-up GPUs join inputs that the CPU alone finishes sooner; four
/// times keeps them out of such inputs and lets them join the large ones,
/// where they pay (docs/decisions/0014-when-gpus-start-for-li.md).
pub(crate) const STARTUP_PAYOFF: f64 = 4.0;
/// What a GPU that joins a standard function's input costs the process at
/// least, whatever start-up was kept: the start-up kept is the fastest on
/// record, often that of a process that started its GPU at once, while a
/// GPU that joins starts under the CPU's load, several times slower, and
/// its context's teardown adds to the exit. With the kept start-up alone,
/// GPUs join inputs that the CPU finishes sooner by itself
/// (docs/decisions/0015-gpu-join-cost-for-standard-functions.md).
const CHUNKS_JOIN_COST: Duration = Duration::from_millis(500);
/// [`STARTUP_PAYOFF`] for a standard function's chunks, over
/// [`CHUNKS_JOIN_COST`] at least. They hold no state to move, and a GPU that
/// joins is tried beside the CPU and alone, the faster kept
/// (`standard::run`'s role trial), so joining costs about its start-up and
/// teardown. Twice the join cost leaves a GPU out of inputs where it would
/// only break even, and lets it join those where it wins
/// (docs/decisions/0015-gpu-join-cost-for-standard-functions.md).
const CHUNKS_STARTUP_PAYOFF: f64 = 2.0;

impl GpuJoiners<'_> {
    /// After the input: the joiners' start-up added to `timings`, and a
    /// failure to start a GPU that had to take part as an error.
    pub(super) fn finish(&self, timings: &mut Timings) -> Result<(), HashError> {
        finish_joining(self.hasher, self.required, &self.startup, timings)
    }

    /// Whether starting the GPUs can pay off for the rest of this input.
    fn worth_starting(&mut self, now: &Standing) -> bool {
        let piece = self.hasher.cpu.piece_len(self.params) as u64;
        let payoff = (STARTUP_PAYOFF, Duration::ZERO);
        worth_starting(self.hasher, &mut self.baseline, piece, payoff, now)
    }
}

/// Where every GPU must take part (`required`): the first failure to start
/// one, as an error.
fn required_failure(hasher: &Hasher, required: bool) -> Result<(), HashError> {
    match hasher.gpus.failure() {
        Some(failure) if required => Err(HashError::Gpu(failure)),
        _ => Ok(()),
    }
}

/// After an input: the joiners' start-up added to `timings`, and a failure
/// to start a GPU that had to take part as an error.
fn finish_joining(
    hasher: &Hasher,
    required: bool,
    startup: &Timings,
    timings: &mut Timings,
) -> Result<(), HashError> {
    timings.gpu_init += startup.gpu_init;
    timings.compile += startup.compile;
    required_failure(hasher, required)
}

/// Whether starting the GPUs can pay off for the rest of an input, from
/// the CPU's rate so far (since `baseline`, set at the first look, after
/// the first piece) in pieces of `piece` bytes and the start-up measured on
/// this machine (`floor` at least): the rest would take the CPU `times`
/// such start-ups or more, where `(times, floor)` is `payoff`.
fn worth_starting(
    hasher: &Hasher,
    baseline: &mut Option<(u64, Duration)>,
    piece: u64,
    (times, floor): (f64, Duration),
    now: &Standing,
) -> bool {
    if hasher.options.testing.wait_for_gpus {
        return true;
    }
    if now.message_len == 0 {
        return false;
    }
    let (from_len, from_time) = *baseline.get_or_insert((now.message_len, now.elapsed));
    let (bytes, time) = (
        now.message_len - from_len,
        now.elapsed.saturating_sub(from_time),
    );
    if bytes < PIECES_MEASURED_BEFORE_GPU_START * piece || time.is_zero() {
        return false;
    }
    let startup = hasher.gpus.expected_startup();
    match now.remaining {
        Some(left) => repays(
            left,
            bytes as f64 / time.as_secs_f64(),
            startup,
            (times, floor),
        ),
        // A stream of unknown length: once it has lasted that long.
        None => now.elapsed > startup.max(floor),
    }
}

/// Whether `left` bytes at the CPU's `rate` (bytes a second) take longer
/// than `times` the start-up `startup` (`floor` at least).
fn repays(left: u64, rate: f64, startup: Duration, (times, floor): (f64, Duration)) -> bool {
    left as f64 / rate > times * startup.max(floor).as_secs_f64()
}

impl<'h> Joiners<'h> for GpuJoiners<'h> {
    fn poll(&mut self, now: &Standing) -> Result<Vec<Member<'h>>, HashError> {
        let hasher = self.hasher;
        if !self.started {
            // Asked once the input path's own threads exist: loading the
            // driver holds the C library's loader lock, which creating a
            // thread needs too
            // (docs/decisions/0014-when-gpus-start-for-li.md).
            if !self.worth_starting(now) {
                return Ok(Vec::new());
            }
            hasher
                .gpus
                .start_in_background(self.params.algorithm(), self.piece_len);
            trace::trace(|| format!("GPUs asked to start at {:?}", now.elapsed));
            self.started = true;
        }
        let mut members = Vec::new();
        for (ordinal, gpu) in hasher.gpus.ready(self.params.algorithm()) {
            if self.joined.contains(&ordinal) {
                continue;
            }
            self.joined.push(ordinal);
            hasher.charge_startup(gpu, &mut self.startup);
            let kernel = hasher.options.testing.gpu_leaf_kernel;
            let pool = hasher.cpu.pool();
            // Under auto one that cannot begin stays out; the others go on.
            let engine = gpu.begin_at(
                self.params,
                now.message_len,
                self.piece_len,
                kernel,
                pool,
                &mut self.startup,
            );
            trace::trace(|| match &engine {
                Ok(_) => format!("GPU {ordinal} joins at {:?}", now.elapsed),
                Err(e) => format!("GPU {ordinal} cannot begin: {e}"),
            });
            match engine {
                Ok(engine) => members.push(Member::new(gpu.info().engine_name(), engine)),
                Err(e) if self.required => return Err(e),
                Err(_) => {}
            }
        }
        required_failure(hasher, self.required)?;
        Ok(members)
    }
}

/// The GPUs that join a standard function's input to take chunks, as
/// [`GpuJoiners`] join an LI tree's: under `Auto` once the rest of the
/// input repays their start-up, or under `Gpu` after the first.
pub(super) struct ChunkGpuJoiners<'h> {
    hasher: &'h Hasher,
    spec: SpongeSpec,
    chunk_len: usize,
    /// The pieces of the input.
    piece_len: usize,
    /// The GPUs were asked to start.
    started: bool,
    /// Where the CPU's rate is measured from.
    baseline: Option<(u64, Duration)>,
    /// Ordinals that joined (or failed to).
    pub(super) joined: Vec<usize>,
    /// Their start-up, for the timings.
    startup: Timings,
    /// Every GPU must take part (`--backend gpu`); those already asked to
    /// start.
    required: bool,
}

impl<'h> ChunkGpuJoiners<'h> {
    /// Joiners of chunks of `chunk_len` bytes through `spec` in pieces of
    /// `piece_len` bytes; under `Gpu` (`required`) the GPUs were started
    /// already.
    pub(super) fn new(
        hasher: &'h Hasher,
        spec: &SpongeSpec,
        chunk_len: usize,
        piece_len: usize,
        required: bool,
    ) -> Self {
        ChunkGpuJoiners {
            hasher,
            spec: *spec,
            chunk_len,
            piece_len,
            started: required,
            baseline: None,
            joined: Vec::new(),
            startup: Timings::default(),
            required,
        }
    }

    /// After the input: the joiners' start-up added to `timings`, and a
    /// failure to start a GPU that had to take part as an error.
    pub(super) fn finish(&self, timings: &mut Timings) -> Result<(), HashError> {
        finish_joining(self.hasher, self.required, &self.startup, timings)
    }
}

impl<'h> ChunkJoiners<'h> for ChunkGpuJoiners<'h> {
    fn poll(&mut self, now: &Standing) -> Result<Vec<Box<dyn ChunkEngine + 'h>>, HashError> {
        let hasher = self.hasher;
        let kernels = KernelSet::Chunks(self.spec);
        if !self.started {
            // The CPU's rate is that of pieces of whole chunks, as long as
            // LI's pieces.
            let (piece, payoff) = (
                self.piece_len as u64,
                (CHUNKS_STARTUP_PAYOFF, CHUNKS_JOIN_COST),
            );
            if !worth_starting(hasher, &mut self.baseline, piece, payoff, now) {
                return Ok(Vec::new());
            }
            hasher.gpus.start_in_background(kernels, self.piece_len);
            trace::trace(|| format!("GPUs asked to start at {:?}", now.elapsed));
            self.started = true;
        }
        let mut engines = Vec::new();
        for (ordinal, gpu) in hasher.gpus.ready(kernels) {
            if self.joined.contains(&ordinal) {
                continue;
            }
            self.joined.push(ordinal);
            hasher.charge_startup(gpu, &mut self.startup);
            let pool = hasher.cpu.pool();
            let engine = gpu.begin_chunks(
                &self.spec,
                self.chunk_len,
                self.piece_len,
                pool,
                &mut self.startup,
            );
            trace::trace(|| match &engine {
                Ok(_) => format!("GPU {ordinal} joins at {:?}", now.elapsed),
                Err(e) => format!("GPU {ordinal} cannot begin: {e}"),
            });
            match engine {
                Ok(engine) => engines.push(engine),
                // Under auto one that cannot begin stays out.
                Err(e) if self.required => return Err(e),
                Err(_) => {}
            }
        }
        required_failure(hasher, self.required)?;
        Ok(engines)
    }
}

/// Passes progress on, less the first `skip` bytes: a redo after a failed
/// attempt does not count again what the bar already shows.
pub(crate) struct Resumed<'p> {
    inner: &'p dyn Progress,
    skip: u64,
    done: AtomicU64,
}

impl<'p> Resumed<'p> {
    pub(crate) fn new(inner: &'p dyn Progress, skip: u64) -> Self {
        Resumed {
            inner,
            skip,
            done: AtomicU64::new(0),
        }
    }

    /// Bytes reported so far, skipped ones included.
    pub(crate) fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// A try after this one, reported to the same progress: the bytes this
    /// one got through are skipped.
    pub(crate) fn next_try(&self) -> Resumed<'p> {
        Resumed::new(self.inner, self.done())
    }
}

impl Progress for Resumed<'_> {
    fn engines(&self, shares: &[EngineShare]) {
        self.inner.engines(shares);
    }

    fn advance(&self, bytes: u64) {
        let before = self.done.fetch_add(bytes, Ordering::Relaxed);
        let new = (before + bytes).saturating_sub(self.skip.max(before));
        if new > 0 {
            self.inner.advance(new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::progress::CountingProgress as Count;

    #[test]
    fn a_gpu_joins_a_standard_function_only_for_what_repays_its_real_cost() {
        // KT128 on a 16-core CPU at 38 GB/s, a start-up of 0.1 s on record
        // from a process that started its GPU at once
        // (docs/decisions/0015-gpu-join-cost-for-standard-functions.md).
        let (rate, kept) = (38e9, Duration::from_millis(100));
        let chunks = (CHUNKS_STARTUP_PAYOFF, CHUNKS_JOIN_COST);
        let gib = |n: u64| n << 30;
        assert!(!repays(gib(16), rate, kept, chunks));
        assert!(!repays(gib(32), rate, kept, chunks));
        assert!(repays(gib(48), rate, kept, chunks));
        // A slower start on record counts in full.
        assert!(!repays(gib(48), rate, Duration::from_secs(1), chunks));
        // LI's rule takes the start-up on record as it is.
        assert!(repays(
            gib(16),
            rate,
            kept,
            (STARTUP_PAYOFF, Duration::ZERO)
        ));
    }

    #[test]
    fn a_redo_counts_only_what_the_first_try_did_not() {
        let bar = Count::default();
        let first = Resumed::new(&bar, 0);
        first.advance(300);
        first.advance(200);
        let redo = Resumed::new(&bar, first.done());
        for _ in 0..10 {
            redo.advance(100);
        }
        assert_eq!(bar.0.into_inner(), 1000);
    }
}
