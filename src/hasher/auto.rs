//! When a GPU is worth starting, and the latecomers (GPUs that join an input
//! under way): the one answer for files, sequential inputs, lists and parts
//! of every function, with every constant of that choice (each with its
//! reason; its measurements are in the decision record it names). Also what
//! `-v` says when no GPU took part, and the progress of an input redone on
//! the CPU after a GPU failed.
//!
//! The rule: a GPU starts once the rest of the work, at the CPU's rate
//! measured so far, would take the CPU longer than [`Payoff`] times the
//! GPU's start-up measured on this machine (`gpu::Fleet` keeps that). Work
//! that can take a GPU late (an input the CPU has started) measures the
//! rate first; work that cannot (an LI part, whose leaves stay where they
//! begin) decides before it starts, from its length alone.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::work::{Work, WorkKind};
use super::{BackendChoice, Hasher};
use crate::error::HashError;
use crate::gpu::{self, GpuBackend};
use crate::progress::{EngineShare, Progress};
use crate::schedule::{Latecomers, Standing};
use crate::timings::Timings;
use crate::trace;

/// Pieces hashed, after the first, before the CPU's rate is taken as known:
/// the first pieces run slower, and a rate from too few of them starts GPUs
/// for inputs that the CPU then finishes alone
/// (docs/decisions/0014-when-gpus-start-for-li.md).
const PIECES_MEASURED_BEFORE_GPU_START: u64 = 8;

/// For an LI tree's leaves, a GPU starts where the rest takes the CPU 4
/// times its start-up: a GPU that joins slows the CPU (its staging threads
/// take cores, leaves move), and at twice the start-up GPUs join inputs that
/// the CPU alone finishes sooner (docs/decisions/0014-when-gpus-start-for-li.md).
const LEAVES_STARTUP_PAYOFF: f64 = 4.0;

/// For a standard function's chunks, twice the start-up: they hold no
/// state to move, and a GPU that joins is tried beside the CPU and alone,
/// the faster kept (`schedule::proportional`'s role trial), so joining costs
/// about its start-up and teardown
/// (docs/decisions/0015-gpu-join-cost-for-standard-functions.md).
const CHUNKS_STARTUP_PAYOFF: f64 = 2.0;

/// What a GPU that joins a standard function's input costs at least,
/// whatever start-up is on record: the record is the fastest start seen,
/// often in an idle process, while a GPU that joins starts under the CPU's
/// load, several times slower, and its teardown adds to the exit
/// (docs/decisions/0015-gpu-join-cost-for-standard-functions.md).
const CHUNKS_JOIN_COST: Duration = Duration::from_millis(500);

/// Under `Auto`, an LI part with at least this many bytes to read is hashed
/// on a GPU from its start: a part cannot hand its leaves to a GPU that
/// joins late, so the rate cannot be measured first, and this many bytes
/// take a 16-core host's CPU more than twice a GPU's start-up
/// (docs/decisions/0019-parts-on-the-gpu-from-16-gib.md).
const LI_PART_GPU_BYTES: u64 = 16 << 30;

/// Under `Gpu`, each GPU that shares an input begun side by side needs this
/// many GPU transfers of it (32 MiB each by default), and one transfer more
/// for the rounding of pieces to blocks and the prefix: an LI tree is split
/// only where four pieces are left (`schedule::Balance`), each piece a
/// transfer per GPU; and beginning an engine on a device costs a thread and
/// the driver's set-up of it, for each short input of a list. A shorter
/// input is shared by fewer GPUs, down to the first alone.
const TRANSFERS_PER_SHARING_GPU: u64 = 4;

/// What a GPU's start must repay: the rest of the work must take the CPU
/// `times` the start-up on record, counted as `floor` at least.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Payoff {
    times: f64,
    floor: Duration,
}

impl Payoff {
    /// An LI tree's leaves.
    const LEAVES: Payoff = Payoff {
        times: LEAVES_STARTUP_PAYOFF,
        floor: Duration::ZERO,
    };
    /// A standard function's chunks.
    const CHUNKS: Payoff = Payoff {
        times: CHUNKS_STARTUP_PAYOFF,
        floor: CHUNKS_JOIN_COST,
    };

    /// What a GPU's start must repay for work of `kind`.
    fn of(kind: WorkKind) -> Payoff {
        match kind {
            WorkKind::Leaves => Payoff::LEAVES,
            WorkKind::Chunks => Payoff::CHUNKS,
        }
    }

    /// Whether `left` bytes at the CPU's `rate` (bytes a second) take longer
    /// than this payoff of the start-up `startup`.
    fn repaid_by(self, left: u64, rate: f64, startup: Duration) -> bool {
        left as f64 / rate > self.times * startup.max(self.floor).as_secs_f64()
    }
}

impl Hasher {
    /// [`Hasher::why_no_gpu`].
    pub(super) fn no_gpu_reason(&self) -> Option<String> {
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

    /// Under `Auto`, whether a list's long inputs that wait for the CPU,
    /// `waiting` bytes of LI trees at the CPU's `rate` on the list so far,
    /// repay the GPUs' start-up (as the rest of one input would).
    pub(super) fn list_repays_gpus(&self, waiting: u64, rate: f64) -> bool {
        Payoff::LEAVES.repaid_by(waiting, rate, self.gpus.expected_startup())
    }

    /// Whether an LI part with `read_len` bytes to read is hashed on a GPU:
    /// under `Gpu` where there is anything to read (not an empty file, nor
    /// only the prefix's blocks); under `Auto` from [`LI_PART_GPU_BYTES`],
    /// where a driver is present, no GPU failed before and the tree is
    /// `shareable` (not one leaf).
    pub(crate) fn li_part_on_gpu(&self, read_len: u64, shareable: bool) -> bool {
        match self.options.backend {
            _ if read_len == 0 => false,
            BackendChoice::Cpu => false,
            BackendChoice::Gpu => true,
            BackendChoice::Auto => {
                shareable
                    && read_len >= LI_PART_GPU_BYTES
                    && !self.gpu_failed.load(Ordering::Relaxed)
                    && gpu::driver_present()
            }
        }
    }

    /// Under `Gpu`, the most GPUs that begin an input of `len` bytes side by
    /// side ([`TRANSFERS_PER_SHARING_GPU`]); `None`, every GPU asked for,
    /// where the length is not known (a sequential input).
    pub(super) fn gpus_sharing(&self, len: Option<u64>) -> Option<usize> {
        let transfer = self
            .options
            .piece_bytes
            .unwrap_or(gpu::DEFAULT_TRANSFER_BYTES) as u64;
        let transfers = len? / transfer.max(1);
        let gpus = transfers.saturating_sub(1) / TRANSFERS_PER_SHARING_GPU;
        Some(gpus.clamp(1, usize::MAX as u64) as usize)
    }

    /// Whether a standard function's part with `read_len` bytes to read is
    /// hashed on a GPU: under `Gpu` where there is anything to read. Under
    /// `Auto` it is the CPU's: a part decides before it starts, and for
    /// chunks a GPU repays its join only where the CPU would take twice
    /// [`CHUNKS_JOIN_COST`] and more ([`Payoff::CHUNKS`]: about 40 GB on a
    /// 16-core host), longer than the parts that hosts hash side by side.
    pub(crate) fn chunk_part_on_gpu(&self, read_len: u64) -> bool {
        self.options.backend == BackendChoice::Gpu && read_len > 0
    }
}

/// The latecomers of an input of `W` hashed under `Auto`: the GPUs that
/// become ready while it is hashed and join it, once the rest of the input
/// repays their start-up. One that fails to start or to begin stays out;
/// the others go on.
pub(super) struct GpuLatecomers<'h, W: Work<'h>> {
    work: W,
    /// The pieces of the input.
    piece_len: usize,
    /// The GPUs were asked to start.
    started: bool,
    /// Where the CPU's rate is measured from: after its first piece, which
    /// also waits for the first window and wakes the threads.
    baseline: Option<(u64, Duration)>,
    /// Ordinals that joined (or failed to).
    joined: Vec<usize>,
    /// Their start-up, for the timings.
    startup: Timings,
    _hasher: std::marker::PhantomData<&'h Hasher>,
}

impl<'h, W: Work<'h>> GpuLatecomers<'h, W> {
    /// The latecomers of `work`, in pieces of `piece_len` bytes.
    pub(super) fn new(work: W, piece_len: usize) -> Self {
        GpuLatecomers {
            work,
            piece_len,
            started: false,
            baseline: None,
            joined: Vec::new(),
            startup: Timings::default(),
            _hasher: std::marker::PhantomData,
        }
    }

    /// After the input: the latecomers' start-up added to `timings`.
    pub(super) fn finish(&self, timings: &mut Timings) {
        timings.gpu_init += self.startup.gpu_init;
        timings.compile += self.startup.compile;
    }

    /// Whether starting the GPUs can pay off for the rest of this input,
    /// from the CPU's rate so far (since the baseline, set at the first
    /// look, after the first piece).
    fn worth_starting(&mut self, now: &Standing) -> bool {
        let hasher = self.work.hasher();
        if hasher.options.testing.wait_for_gpus {
            return true;
        }
        if now.message_len == 0 {
            return false;
        }
        let (from_len, from_time) = *self.baseline.get_or_insert((now.message_len, now.elapsed));
        let (bytes, time) = (
            now.message_len - from_len,
            now.elapsed.saturating_sub(from_time),
        );
        if bytes < PIECES_MEASURED_BEFORE_GPU_START * self.piece_len as u64 || time.is_zero() {
            return false;
        }
        let startup = hasher.gpus.expected_startup();
        let payoff = Payoff::of(W::KIND);
        match now.remaining {
            Some(left) => payoff.repaid_by(left, bytes as f64 / time.as_secs_f64(), startup),
            // A sequential input of unknown length: once it has lasted that
            // long.
            None => now.elapsed > startup.max(payoff.floor),
        }
    }
}

impl<'h, W: Work<'h>> Latecomers<W::Engine> for GpuLatecomers<'h, W> {
    fn poll(&mut self, now: &Standing) -> Result<Vec<W::Engine>, HashError> {
        let hasher = self.work.hasher();
        let Some(kernels) = self.work.kernels() else {
            return Ok(Vec::new());
        };
        if !self.started {
            // Asked once the input path's own threads exist: loading the
            // driver holds the C library's loader lock, which creating a
            // thread needs too
            // (docs/decisions/0014-when-gpus-start-for-li.md).
            if !self.worth_starting(now) {
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
            let engine =
                self.work
                    .begin_latecomer(gpu, now.message_len, self.piece_len, &mut self.startup);
            trace::trace(|| match &engine {
                Ok(_) => format!("GPU {ordinal} joins at {:?}", now.elapsed),
                Err(e) => format!("GPU {ordinal} cannot begin: {e}"),
            });
            if let Ok(engine) = engine {
                engines.push(engine);
            }
        }
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
        let chunks = Payoff::CHUNKS;
        let gib = |n: u64| n << 30;
        assert!(!chunks.repaid_by(gib(16), rate, kept));
        assert!(!chunks.repaid_by(gib(32), rate, kept));
        assert!(chunks.repaid_by(gib(48), rate, kept));
        // A slower start on record counts in full.
        assert!(!chunks.repaid_by(gib(48), rate, Duration::from_secs(1)));
        // LI's rule takes the start-up on record as it is.
        assert!(Payoff::LEAVES.repaid_by(gib(16), rate, kept));
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
