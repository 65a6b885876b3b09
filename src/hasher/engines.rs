//! Where one input runs: on the CPU's pool, inline on one thread, on the
//! GPUs, or on the CPU with the GPUs joining it; and the digest it comes to.

use std::sync::atomic::Ordering;
use std::time::Instant;

use super::auto::{GpuJoiners, Resumed};
use super::{BackendChoice, BackendUsed, HashOutput, Hasher, Placement};
use crate::error::HashError;
use crate::message::{self, Input};
use crate::params::TreeParams;
use crate::progress::{EngineShare, Progress};
use crate::schedule::{self, Balance, Hashed, Joiners, Member, NoJoiners};
use crate::standard::{self, StandardParams};
use crate::timings::{Timings, timed};

impl Hasher {
    /// The digest of one input with a standard function, on the CPU.
    pub(super) fn hash_standard(
        &self,
        params: &StandardParams,
        mut input: Input<'_>,
        progress: &dyn Progress,
        placement: Placement,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut timings = Timings::default();
        let piece_target = self.cpu.standard_piece_target();
        let len = input.known_len();
        let work = || {
            timed(&mut timings.leaves, || {
                standard::run::hash(params, &mut input, &self.cpu, piece_target, progress)
            })
        };
        let (digest, bytes) = match (placement, len) {
            (Placement::Alone, _) => self.cpu.run_alone(work),
            (_, Some(len)) if len <= piece_target as u64 => self.cpu.run_one_piece(len, work),
            _ => self.cpu.run_pieces(work),
        }?;
        timings.total = start.elapsed();
        let share = EngineShare {
            engine: "cpu".into(),
            bytes,
            busy: timings.leaves,
        };
        Ok(HashOutput {
            digest,
            bytes,
            backend: BackendUsed::Cpu,
            timings,
            shares: vec![share],
            fallback_note: None,
        })
    }

    /// The digest of one input where `placement` says. Under `Auto`, if a
    /// GPU fails, an input that can be read again is redone on the CPU, and
    /// `Auto` leaves the GPUs alone for later inputs.
    pub(super) fn hash_input(
        &self,
        params: &TreeParams,
        mut input: Input<'_>,
        progress: &dyn Progress,
        placement: Placement,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut timings = Timings::default();
        let len = input.known_len();
        let first_try = Resumed::new(progress, 0);
        let backend = self.options.backend;
        // For `-v`: an input a GPU could have shared was met, wherever it
        // ran (one of a list's, hashed alone, too).
        if backend == BackendChoice::Auto && params.leaf_count() > 1 {
            self.shareable_input.store(true, Ordering::Relaxed);
        }
        let on_engines = || match (placement, backend) {
            (Placement::Engines, BackendChoice::Gpu) => {
                self.on_gpus(params, &mut input, progress, &mut timings)
            }
            (Placement::Engines, BackendChoice::Auto) => {
                self.on_all(params, &mut input, &first_try, &mut timings)
            }
            (Placement::Gpu(ordinal), _) => {
                self.on_gpu(ordinal, params, &mut input, &first_try, &mut timings)
            }
            _ => self.on_cpu(params, &mut input, progress, &mut timings),
        };
        // An input of one piece is hashed by the CPU in one call
        // (`CpuBackend::run_one_piece`: inline when small). Larger inputs
        // are driven from a thread that is no rayon worker, which would
        // otherwise hold a worker (or steal its own pool's jobs) while it
        // waits for windows and GPUs.
        let one_piece = |len: u64| len <= self.cpu.piece_len(params) as u64;
        let result = match (placement, len) {
            (Placement::Alone, _) => self.cpu.run_alone(on_engines),
            (Placement::Engines, Some(len)) if backend != BackendChoice::Gpu && one_piece(len) => {
                self.cpu.run_one_piece(len, on_engines)
            }
            (Placement::Cpu, Some(len)) if one_piece(len) => {
                self.cpu.run_one_piece(len, on_engines)
            }
            _ => self.cpu.run_pieces(on_engines),
        };
        let (hashed, note) = match result {
            Ok(hashed) => (hashed, None),
            Err(HashError::Gpu(e)) if backend == BackendChoice::Auto && input.can_reread() => {
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
            _ if backend == BackendChoice::Gpu => BackendUsed::Gpu,
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

    /// The input on the GPU of ordinal `ordinal` alone, which is ready for
    /// its algorithm (a list's input under `Auto`, beside the CPU's).
    fn on_gpu(
        &self,
        ordinal: usize,
        params: &TreeParams,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let gpu = self
            .gpus
            .ready(params.algorithm())
            .into_iter()
            .find_map(|(o, gpu)| (o == ordinal).then_some(gpu))
            .ok_or_else(|| {
                HashError::Internal(format!(
                    "GPU {ordinal} is not ready for {}",
                    params.algorithm()
                ))
            })?;
        self.charge_startup(gpu, timings);
        let engine = gpu.begin(
            params,
            input.known_len(),
            self.options.copy_mode,
            self.options.gpu_leaf_kernel,
            self.cpu.pool(),
            timings,
        )?;
        let members = vec![Member::new(gpu.info().engine_name(), engine)];
        self.run_without_joiners(params, input, members, progress, timings)
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
}
