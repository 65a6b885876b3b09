//! The one place that chooses a backend, and the entry points that hash a
//! file, a byte slice or a reader with it.

use std::fmt;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::cpu::{CpuBackend, CpuPath};
use crate::error::HashError;
use crate::gpu::{self, CopyMode, Devices, Fleet, GpuBackend, LeafKernel};
use crate::input::{Source, is_stdin_name};
use crate::message;
use crate::params::TreeParams;
use crate::progress::{NoProgress, Progress};
use crate::schedule::{
    self, Balance, EngineShare, Hashed, Input, Joiners, Member, NoJoiners, Standing,
};
use crate::timings::{Timings, timed};
use crate::trace;

/// Which backend the caller asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendChoice {
    /// The CPU starts at once, and every GPU asked for starts in the
    /// background; each GPU joins when it is ready, taking leaves from the
    /// CPU, and the split follows the measured rates. An input that ends
    /// before a GPU is ready is the CPU's alone. A GPU that fails is left
    /// alone, and the input is redone on the CPU where it can be read again.
    #[default]
    Auto,
    /// The CPU backend.
    Cpu,
    /// The GPUs asked for, sharing the leaves; an error if one is missing or fails.
    Gpu,
}

/// The backend that computed a digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendUsed {
    Cpu,
    Gpu,
    /// The CPU and at least one GPU, each on some of the leaves.
    CpuGpu,
}

impl fmt::Display for BackendUsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendUsed::Cpu => "cpu",
            BackendUsed::Gpu => "gpu",
            BackendUsed::CpuGpu => "cpu+gpu",
        })
    }
}

/// How a [`Hasher`] is set up.
#[derive(Clone, Debug, Default)]
pub struct HasherOptions {
    pub backend: BackendChoice,
    /// CPU worker threads; `None` means one per core.
    pub threads: Option<usize>,
    /// Bytes of input per piece handed to a backend (per chunk copied to the
    /// GPU); `None` for the tuned default. Small values make tests cross
    /// piece boundaries often; values above [`crate::MAX_PIECE_BYTES`] are
    /// taken as that.
    pub piece_bytes: Option<usize>,
    /// The CUDA devices to use.
    pub devices: Devices,
    /// How a mapped file reaches the GPU.
    pub copy_mode: CopyMode,
    /// The GPU leaf kernel; `None` picks it from the leaf count (tests and
    /// benchmarks force one).
    pub gpu_leaf_kernel: Option<LeafKernel>,
    /// Tests and benchmarks: start every GPU before the first piece and let
    /// them all take part from it (instead of joining when they are ready),
    /// under `Auto` and `Gpu` alike.
    #[doc(hidden)]
    pub wait_for_gpus: bool,
    /// Tests only: every GPU digest fails after this many chunks.
    #[doc(hidden)]
    pub gpu_fail_after_chunks: Option<usize>,
    /// The CPU code path: the best this CPU has (`Auto`), or one forced (for
    /// tests and comparisons; the digests are the same). A path the CPU
    /// lacks makes [`Hasher::new`] fail.
    pub cpu_path: CpuPath,
}

/// A digest and how it was made.
#[derive(Clone, Debug)]
pub struct HashOutput {
    /// The digest, `params.output_len()` bytes.
    pub digest: Vec<u8>,
    /// Bytes of input hashed (the prefix not counted).
    pub bytes: u64,
    pub backend: BackendUsed,
    pub timings: Timings,
    /// Each engine's part of the input, in leaf order.
    pub shares: Vec<EngineShare>,
    /// Set when `Auto` redid this input on the CPU because a GPU failed: why.
    pub fallback_note: Option<String>,
}

/// Hashes inputs with the backend the options ask for. Keep one for the
/// whole process: it owns the worker threads and, once started, the GPU.
/// Several threads may hash with it at once, a caller's own rayon
/// `par_iter` included: a small input is hashed on the calling thread, and
/// a worker of another pool never waits on this hasher's pool (where rayon
/// would let it run its own pool's next job meanwhile, and nest).
///
/// ```
/// use treehash::{Algorithm, Hasher, HasherOptions, TreeParams};
/// let hasher = Hasher::new(HasherOptions::default()).unwrap();
/// let params = TreeParams::new(Algorithm::Sha3_256, 0, 4).unwrap();
/// let out = hasher.hash_bytes(&params, b"abc").unwrap();
/// // At height 0 the tree digest is plain SHA3-256.
/// assert_eq!(
///     hex::encode(out.digest),
///     "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"
/// );
/// ```
pub struct Hasher {
    options: HasherOptions,
    cpu: CpuBackend,
    /// Started on first need, once.
    gpus: Fleet,
    /// The GPU's start-up time has been charged to a digest.
    startup_reported: AtomicBool,
    /// The GPU failed on an input: `Auto` does not use it again.
    gpu_failed: AtomicBool,
    /// `Auto` met an input that a GPU could have shared (more than one leaf).
    shareable_input: AtomicBool,
}

impl Hasher {
    pub fn new(options: HasherOptions) -> Result<Hasher, HashError> {
        trace::trace(|| "a hasher is made".into());
        let cpu = CpuBackend::new(options.threads, options.piece_bytes, options.cpu_path)?;
        let start = gpu::Start {
            chunk_bytes: options.piece_bytes,
            fail_after_chunks: options.gpu_fail_after_chunks,
        };
        let gpus = Fleet::new(options.devices.clone(), start);
        Ok(Hasher {
            options,
            cpu,
            gpus,
            startup_reported: AtomicBool::new(false),
            gpu_failed: AtomicBool::new(false),
            shareable_input: AtomicBool::new(false),
        })
    }

    /// The first GPU asked for, started if it was not (the others are
    /// not): its description, or why there is none.
    pub fn gpu(&self) -> Result<&GpuBackend, HashError> {
        Ok(self.gpus.open_first()?)
    }

    /// Every GPU asked for, started if they were not, or why one is missing.
    pub fn gpus(&self) -> Result<Vec<&GpuBackend>, HashError> {
        Ok(self.gpus.open_now()?)
    }

    /// The CPU backend.
    pub(crate) fn cpu(&self) -> &CpuBackend {
        &self.cpu
    }

    /// The options it was made with.
    pub(crate) fn options(&self) -> &HasherOptions {
        &self.options
    }

    /// Whether inputs that would not fill the engines may be hashed on the
    /// CPU alone, side by side ([`Hasher::hash_list`]): not when only GPUs
    /// are asked for.
    pub(crate) fn hashes_alone(&self) -> bool {
        self.options.backend != BackendChoice::Gpu
    }

    /// The digest of a byte slice.
    pub fn hash_bytes(&self, params: &TreeParams, data: &[u8]) -> Result<HashOutput, HashError> {
        self.hash_input(params, Input::Bytes(data), &NoProgress)
    }

    /// The digest of everything `reader` yields, read in pieces (constant
    /// memory) on a helper thread while earlier pieces are hashed.
    pub fn hash_reader(
        &self,
        params: &TreeParams,
        reader: &mut (dyn Read + Send),
    ) -> Result<HashOutput, HashError> {
        self.hash_input(params, Input::Stream(reader), &NoProgress)
    }

    /// The digest of a file (`-` is standard input, from its current
    /// offset), with `progress` told the bytes done as they are hashed. A
    /// file whose size or modification time changes meanwhile gets an
    /// error, not a digest.
    pub fn hash_path(
        &self,
        params: &TreeParams,
        path: &Path,
        progress: &dyn Progress,
    ) -> Result<HashOutput, HashError> {
        self.hash_path_on(params, path, progress, Placement::Engines)
    }

    /// [`Hasher::hash_path`], on every engine or on the calling thread alone.
    pub(crate) fn hash_path_on(
        &self,
        params: &TreeParams,
        path: &Path,
        progress: &dyn Progress,
        placement: Placement,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut open_time = Duration::ZERO;
        let source = timed(&mut open_time, || Source::open(path))?;
        progress.start(source.known_len());
        let hash = |input: Input<'_>| match placement {
            Placement::Engines => self.hash_input(params, input, progress),
            Placement::Alone => self.hash_input_alone(params, input, progress),
        };
        let mut out = match source {
            Source::File(mut file) => {
                let out = hash(Input::File(&file))?;
                file.check_unchanged()?;
                if is_stdin_name(path) {
                    file.seek_past()?;
                }
                out
            }
            Source::Stream(mut file) => hash(Input::Stream(&mut file))?,
        };
        out.timings.open = open_time;
        out.timings.total = start.elapsed();
        Ok(out)
    }

    /// The digest of one input on the engines the options ask for. Under
    /// `Auto`, if a GPU fails, an input that can be read again is redone on
    /// the CPU, and `Auto` leaves the GPUs alone for later inputs.
    fn hash_input(
        &self,
        params: &TreeParams,
        mut input: Input<'_>,
        progress: &dyn Progress,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut timings = Timings::default();
        let len = input.known_len();
        let first_try = Resumed::new(progress, 0);
        let on_engines = || match self.options.backend {
            BackendChoice::Cpu => self.on_cpu(params, &mut input, progress, &mut timings),
            BackendChoice::Gpu => self.on_gpus(params, &mut input, progress, &mut timings),
            BackendChoice::Auto => self.on_all(params, &mut input, &first_try, &mut timings),
        };
        // An input of one piece is hashed by the CPU in one call
        // (`CpuBackend::run_one_piece`: inline when small). Larger inputs
        // are driven from a thread that is no rayon worker, which would
        // otherwise hold a worker (or steal its own pool's jobs) while it
        // waits for windows and GPUs.
        let result = match len {
            Some(len)
                if self.options.backend != BackendChoice::Gpu
                    && len <= self.cpu.piece_len(params) as u64 =>
            {
                self.cpu.run_one_piece(len, on_engines)
            }
            _ => self.cpu.run_pieces(on_engines),
        };
        let (hashed, note) = match result {
            Ok(hashed) => (hashed, None),
            Err(HashError::Gpu(e))
                if self.options.backend == BackendChoice::Auto && input.can_reread() =>
            {
                // Auto does not come back to a GPU that failed.
                self.gpu_failed.store(true, Ordering::Relaxed);
                timings = Timings::default();
                // The bar already shows what the first try got through.
                let redo = Resumed::new(progress, first_try.done());
                let hashed = self.on_cpu(params, &mut input, &redo, &mut timings)?;
                let note = format!("the GPU failed ({e}); hashing on the CPU");
                (hashed, Some(note))
            }
            Err(e) => return Err(e),
        };
        timings.total = start.elapsed();
        let used = |prefix: &str| {
            hashed
                .shares
                .iter()
                .any(|s| s.engine.starts_with(prefix) && s.bytes > 0)
        };
        let backend = match (used("cpu"), used("gpu")) {
            (true, true) => BackendUsed::CpuGpu,
            (false, true) => BackendUsed::Gpu,
            _ if self.options.backend == BackendChoice::Gpu => BackendUsed::Gpu,
            _ => BackendUsed::Cpu,
        };
        Ok(HashOutput {
            digest: hashed.digest,
            bytes: hashed.bytes,
            backend,
            timings,
            shares: hashed.shares,
            fallback_note: note,
        })
    }

    /// The digest of one input on the CPU, on the calling thread alone (one
    /// of many inputs hashed side by side).
    fn hash_input_alone(
        &self,
        params: &TreeParams,
        mut input: Input<'_>,
        progress: &dyn Progress,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut timings = Timings::default();
        let hashed = self
            .cpu
            .run_alone(|| self.on_cpu(params, &mut input, progress, &mut timings))?;
        timings.total = start.elapsed();
        Ok(HashOutput {
            digest: hashed.digest,
            bytes: hashed.bytes,
            backend: BackendUsed::Cpu,
            timings,
            shares: hashed.shares,
            fallback_note: None,
        })
    }

    /// The input on the CPU alone.
    fn on_cpu(
        &self,
        params: &TreeParams,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let members = vec![Member::new("cpu", self.cpu.begin(params))];
        self.run_without_joiners(params, input, members, progress, timings)
    }

    /// The input on the GPUs asked for, which must all start. The first
    /// hashes from the first piece; the others start in the background and
    /// join when they are ready (a context each costs 0.15–0.3 s, which one
    /// after the other held the first piece back on the two-H200 machine),
    /// unless the options ask to wait for them all.
    fn on_gpus(
        &self,
        params: &TreeParams,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let open = || {
            if self.options.wait_for_gpus {
                self.gpus()
            } else {
                self.gpu().map(|gpu| vec![gpu])
            }
        };
        let gpus = match input {
            Input::File(file) => message::reading_ahead_during(file, open),
            _ => open(),
        }?;
        self.charge_startup(gpus[0], timings);
        let pool = self.cpu.pool();
        let kernel = self.options.gpu_leaf_kernel;
        let len = input.known_len();
        let first = gpus[0].begin(params, len, self.options.copy_mode, kernel, pool, timings)?;
        let piece_len = first.piece_len();
        let mut members = vec![Member::new(gpus[0].info().engine_name(), first)];
        for gpu in &gpus[1..] {
            // The others join at once, owning nothing: the plan splits the
            // leaves evenly at the first piece.
            let engine = gpu.begin_at(params, 0, piece_len, kernel, pool, timings)?;
            members.push(Member::new(gpu.info().engine_name(), engine));
        }
        if self.options.wait_for_gpus {
            return self.run_without_joiners(params, input, members, progress, timings);
        }
        self.gpus
            .start_others_in_background(params.algorithm(), piece_len);
        let mut joiners = GpuJoiners {
            hasher: self,
            params,
            started: true,
            baseline: None,
            joined: vec![gpus[0].info().ordinal],
            startup: Timings::default(),
            piece_len,
            required: true,
        };
        // A GPU that joins starts with no leaf, and is given some only
        // where that measures faster (on the two-H200 machine it never did:
        // docs/PERFORMANCE.md).
        let plan = Balance::first_keeps_all();
        let hashed = self.run(
            params,
            input,
            members,
            &mut joiners,
            plan,
            progress,
            timings,
        )?;
        // A device that failed to start after the last piece's look is an
        // error too (one still starting is not waited for).
        joiners.finish(timings)?;
        Ok(hashed)
    }

    /// The input on the CPU from the first byte, and on every GPU that is
    /// ready in time (they start in the background).
    fn on_all(
        &self,
        params: &TreeParams,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        // One leaf (plain SHA-3) cannot be shared.
        if params.leaf_count() < 2 || self.gpu_failed.load(Ordering::Relaxed) {
            return self.on_cpu(params, input, progress, timings);
        }
        self.shareable_input.store(true, Ordering::Relaxed);
        if self.options.wait_for_gpus {
            self.gpus
                .prepare_now(params.algorithm(), self.cpu.piece_len(params));
        }
        let members = vec![Member::new("cpu", self.cpu.begin(params))];
        let mut joiners = GpuJoiners {
            hasher: self,
            params,
            started: false,
            baseline: None,
            joined: Vec::new(),
            startup: Timings::default(),
            piece_len: self.cpu.piece_len(params),
            required: false,
        };
        let hashed = self.run(
            params,
            input,
            members,
            &mut joiners,
            Balance::default(),
            progress,
            timings,
        )?;
        joiners.finish(timings)?;
        Ok(hashed)
    }

    /// Runs the scheduler on `members` alone.
    fn run_without_joiners<'a>(
        &'a self,
        params: &'a TreeParams,
        input: &mut Input<'_>,
        members: Vec<Member<'a>>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let plan = Balance::default();
        self.run(
            params,
            input,
            members,
            &mut NoJoiners,
            plan,
            progress,
            timings,
        )
    }

    /// Runs the scheduler with the balance `plan`, the CPU reducing trees
    /// that engines shared.
    #[allow(clippy::too_many_arguments)]
    fn run<'a>(
        &'a self,
        params: &'a TreeParams,
        input: &mut Input<'_>,
        members: Vec<Member<'a>>,
        joiners: &mut dyn Joiners<'a>,
        mut plan: Balance,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let reduce = |outputs: Vec<u8>| self.cpu.reduce_leaf_outputs(params, outputs);
        schedule::run(
            params, input, members, joiners, &mut plan, &reduce, progress, timings,
        )
    }

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
            "no GPU was started: a tree of one leaf (height 0) is one sponge, \
             which a GPU cannot share"
                .to_string()
        })
    }

    /// Charges the GPU's one-time start-up to the first digest made on it.
    fn charge_startup(&self, gpu: &GpuBackend, timings: &mut Timings) {
        if !self.startup_reported.swap(true, Ordering::Relaxed) {
            timings.gpu_init = gpu.info().init;
        }
    }
}

/// Where one input is hashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// On the engines the options ask for, sharing the leaves.
    Engines,
    /// On the CPU, on the calling thread alone: one of many inputs hashed
    /// side by side, each of which alone would not fill the engines.
    Alone,
}

/// The GPUs that become ready while an input is hashed: under `Auto`, or
/// under `Gpu` after the first.
struct GpuJoiners<'h> {
    hasher: &'h Hasher,
    params: &'h TreeParams,
    /// The GPUs were asked to start.
    started: bool,
    /// Where the CPU's rate is measured from: after its first piece, which
    /// also waits for the first window and wakes the threads.
    baseline: Option<(u64, Duration)>,
    /// Ordinals that joined (or failed to).
    joined: Vec<usize>,
    /// Their start-up, for the timings.
    startup: Timings,
    /// The pieces the first engine cuts.
    piece_len: usize,
    /// Every GPU must take part (`--backend gpu`): one that fails to start
    /// or to begin is an error, not left out.
    required: bool,
}

/// Pieces hashed, after the first, before the CPU's rate is taken as known.
/// The first pieces run slower; a rate from only three of them made auto
/// start GPUs for 8 GiB files that the CPU then finished alone.
const PIECES_MEASURED_BEFORE_GPU_START: u64 = 8;
/// The GPUs are started only for an input whose rest would take the CPU
/// this many times a GPU's expected start-up. A start that comes to nothing
/// costs: the CPU goes slower meanwhile, and the process cannot end while
/// the driver is inside a call (measured: 8 GiB took 0.61 s instead of
/// 0.45 when a GPU started and never joined, H200 machine).
const STARTUP_PAYOFF: f64 = 2.0;

impl GpuJoiners<'_> {
    /// Where every GPU must take part: the first failure to start one, as
    /// an error.
    fn required_failure(&self) -> Result<(), HashError> {
        match self.hasher.gpus.failure() {
            Some(failure) if self.required => Err(HashError::Gpu(failure)),
            _ => Ok(()),
        }
    }

    /// After the input: the joiners' start-up added to `timings`, and a
    /// failure to start a GPU that had to take part as an error.
    fn finish(&self, timings: &mut Timings) -> Result<(), HashError> {
        timings.gpu_init += self.startup.gpu_init;
        timings.compile += self.startup.compile;
        self.required_failure()
    }

    /// Whether starting the GPUs can pay off for the rest of this input,
    /// from the CPU's rate so far and the start-up measured on this machine.
    fn worth_starting(&mut self, now: &Standing) -> bool {
        if self.hasher.options.wait_for_gpus {
            return true;
        }
        if now.message_len == 0 {
            return false;
        }
        let (from_len, from_time) = *self.baseline.get_or_insert((now.message_len, now.elapsed));
        let piece = self.hasher.cpu.piece_len(self.params) as u64;
        let (bytes, time) = (
            now.message_len - from_len,
            now.elapsed.saturating_sub(from_time),
        );
        if bytes < PIECES_MEASURED_BEFORE_GPU_START * piece || time.is_zero() {
            return false;
        }
        let startup = self.hasher.gpus.expected_startup().as_secs_f64();
        match now.remaining {
            Some(left) => {
                let rate = bytes as f64 / time.as_secs_f64();
                left as f64 / rate > STARTUP_PAYOFF * startup
            }
            // A stream of unknown length: once it has lasted that long.
            None => now.elapsed.as_secs_f64() > startup,
        }
    }
}

impl<'h> Joiners<'h> for GpuJoiners<'h> {
    fn poll(&mut self, now: &Standing) -> Result<Vec<Member<'h>>, HashError> {
        let hasher = self.hasher;
        if !self.started {
            // Asked once the input path's own threads exist: loading the
            // driver holds the C library's loader lock, which creating a
            // thread needs too (measured: 70 ms lost on a 64 MiB file).
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
            let kernel = hasher.options.gpu_leaf_kernel;
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
        self.required_failure()?;
        Ok(members)
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
