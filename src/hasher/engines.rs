//! Where one input runs, for either kind of work (`work`): on the CPU's
//! pool, inline on one thread, on the GPUs, or on the CPU with GPUs as
//! latecomers; the redo on the CPU after a GPU fails; and the backend the
//! digest is reported as.

use std::sync::atomic::Ordering;
use std::time::Instant;

use super::auto::{GpuLatecomers, Resumed};
use super::work::Work;
use super::{BackendChoice, BackendUsed, HashOutput, Hasher, Placement};
use crate::error::HashError;
use crate::gpu::SideBySide;
use crate::message::{self, Input};
use crate::progress::{EngineShare, Progress};
use crate::schedule::Hashed;
use crate::timings::Timings;

impl Hasher {
    /// The digest of one input of `work` where `placement` says. Under
    /// `Auto`, if a GPU fails, an input that can be read again is redone on
    /// the CPU, and `Auto` leaves the GPUs alone for later inputs. Work no
    /// GPU can take (TurboSHAKE) is the CPU's under every backend.
    pub(super) fn hash_work<'h, W: Work<'h>>(
        &'h self,
        work: W,
        mut input: Input<'_>,
        progress: &dyn Progress,
        placement: Placement,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut timings = Timings::default();
        let len = input.known_len();
        let first_try = Resumed::new(progress, 0);
        let backend = self.options.backend;
        let gpu_capable = work.kernels().is_some();
        // For `-v`: an input a GPU could have shared was met, wherever it
        // ran (one of a list's, hashed alone, too).
        if backend == BackendChoice::Auto && work.shareable() {
            self.shareable_input.store(true, Ordering::Relaxed);
        }
        let on_engines = || match (placement, backend) {
            _ if !gpu_capable => self.on_cpu(work, &mut input, progress, &mut timings),
            (Placement::Engines, BackendChoice::Gpu) => {
                self.on_gpus(work, &mut input, progress, &mut timings)
            }
            (Placement::Engines, BackendChoice::Auto) => {
                self.on_all(work, &mut input, &first_try, &mut timings)
            }
            (Placement::Gpu(ordinal), _) => {
                self.on_gpu(ordinal, work, &mut input, &first_try, &mut timings)
            }
            _ => self.on_cpu(work, &mut input, progress, &mut timings),
        };
        let gpus_only = gpu_capable
            && match placement {
                Placement::Gpu(_) => true,
                Placement::Engines => backend == BackendChoice::Gpu,
                _ => false,
            };
        // An input of one piece that the CPU takes is hashed in one call
        // (`CpuBackend::run_one_piece`: inline when small). Larger inputs
        // are driven from a thread that is no rayon worker, which would
        // otherwise hold a worker (or steal its own pool's jobs) while it
        // waits for windows and GPUs.
        let result = match (placement, len) {
            (Placement::Alone, _) => self.cpu.run_alone(on_engines),
            (_, Some(len)) if !gpus_only && len <= work.one_call_len() as u64 => {
                self.cpu.run_one_piece(len, on_engines)
            }
            _ => self.cpu.run_pieces(on_engines),
        };
        let can_reread = input.can_reread();
        let (hashed, note) = self.or_redo_on_cpu(result, can_reread, &first_try, |redo| {
            timings = Timings::default();
            self.on_cpu(work, &mut input, redo, &mut timings)
        })?;
        timings.total = start.elapsed();
        Ok(HashOutput {
            digest: hashed.digest,
            bytes: hashed.bytes,
            backend: backend_used(&hashed.shares, gpus_only, W::ENGINE_FINISHES),
            timings,
            shares: hashed.shares,
            fallback_note: note,
        })
    }

    /// A first try's result, or under `Auto`, where a GPU failed and the
    /// input can be read again, `redo`'s on the CPU (given the progress to
    /// report to, which already shows what the first try got through), with
    /// a note. Auto does not come back to a GPU that failed.
    pub(crate) fn or_redo_on_cpu<T>(
        &self,
        result: Result<T, HashError>,
        can_reread: bool,
        first_try: &Resumed<'_>,
        redo: impl FnOnce(&dyn Progress) -> Result<T, HashError>,
    ) -> Result<(T, Option<String>), HashError> {
        match result {
            Ok(done) => Ok((done, None)),
            Err(HashError::Gpu(e)) if self.options.backend == BackendChoice::Auto && can_reread => {
                self.gpu_failed.store(true, Ordering::Relaxed);
                let done = redo(&first_try.next_try())?;
                Ok((
                    done,
                    Some(format!("the GPU failed ({e}); hashing on the CPU")),
                ))
            }
            Err(e) => Err(e),
        }
    }

    /// The input on the CPU alone.
    fn on_cpu<'h, W: Work<'h>>(
        &'h self,
        work: W,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        work.run(input, true, Vec::new(), None, progress, timings)
    }

    /// The input on the GPUs asked for, which must all exist. Those it is
    /// long enough for (`auto::TRANSFERS_PER_SHARING_GPU`; the first alone for
    /// a short input) start side by side, while a file is read ahead, and
    /// every one takes part from the first piece: one GPU started after
    /// another would join when the first had done most of the input. The
    /// CPU takes what no GPU can: KT's first chunk, the last chunks and the
    /// final node.
    fn on_gpus<'h, W: Work<'h>>(
        &'h self,
        work: W,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let len = input.known_len();
        let started = Instant::now();
        let begin = || {
            self.gpus
                .side_by_side(self.gpus_sharing(len), |index, count, gpu| {
                    let mut own = Timings::default();
                    let place = SideBySide { index, count };
                    let engine = work.begin(gpu, len, place, &mut own)?;
                    Ok((engine, own))
                })
        };
        let begun = match input {
            Input::File(file) => message::reading_ahead_during(file, begin),
            _ => begin(),
        }?;
        // Side by side, the start takes as long as the slowest device's:
        // the process's first takes the whole wait, later ones what their
        // engines' buffers took.
        let first_start = !self.startup_reported.swap(true, Ordering::Relaxed);
        let mut engines = Vec::with_capacity(begun.len());
        for (engine, own) in begun {
            timings.compile = timings.compile.max(own.compile);
            timings.gpu_init = timings.gpu_init.max(own.gpu_init);
            engines.push(engine);
        }
        if first_start {
            timings.gpu_init = started.elapsed().saturating_sub(timings.compile);
        }
        work.run(input, false, engines, None, progress, timings)
    }

    /// The input on the GPU of ordinal `ordinal` alone, which is ready for
    /// it (a list's input under `Auto`, beside the CPU's).
    fn on_gpu<'h, W: Work<'h>>(
        &'h self,
        ordinal: usize,
        work: W,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let not_ready = || HashError::Internal(format!("GPU {ordinal} is not ready for the input"));
        let kernels = work.kernels().ok_or_else(not_ready)?;
        let gpu = self
            .gpus
            .ready(kernels)
            .into_iter()
            .find_map(|(o, gpu)| (o == ordinal).then_some(gpu))
            .ok_or_else(not_ready)?;
        self.charge_startup(gpu, timings);
        let engine = work.begin(gpu, input.known_len(), SideBySide::ALONE, timings)?;
        work.run(input, false, vec![engine], None, progress, timings)
    }

    /// The input on the CPU from the first byte, and on every GPU that is
    /// ready in time (started in the background once the rest of the input
    /// repays their start-up: `auto`).
    fn on_all<'h, W: Work<'h>>(
        &'h self,
        work: W,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let kernels = work.kernels().filter(|_| work.shareable());
        let Some(kernels) = kernels.filter(|_| !self.gpu_failed.load(Ordering::Relaxed)) else {
            return self.on_cpu(work, input, progress, timings);
        };
        if self.options.testing.wait_for_gpus {
            self.gpus.prepare_now(kernels, work.piece_len());
        }
        let mut latecomers = GpuLatecomers::new(work, work.piece_len());
        let hashed = work.run(
            input,
            true,
            Vec::new(),
            Some(&mut latecomers),
            progress,
            timings,
        )?;
        latecomers.finish(timings);
        Ok(hashed)
    }
}

/// The backend a digest is reported as, from the engines' shares: GPUs
/// alone where only GPUs were asked for (`gpus_only`; the CPU's part of a
/// standard function, KT's first chunk and the final node, is then the
/// GPUs' bookkeeping), or where they did all of it; the CPU and GPUs where
/// both hashed. An input no GPU hashed a byte of is the CPU's, unless the
/// GPUs alone were asked and their engine computes the digest
/// (`engine_finishes`: an empty LI input on a GPU).
fn backend_used(shares: &[EngineShare], gpus_only: bool, engine_finishes: bool) -> BackendUsed {
    let used = |gpu: bool| {
        shares
            .iter()
            .any(|s| s.engine.is_gpu() == gpu && s.bytes > 0)
    };
    match (used(true), used(false)) {
        (true, _) if gpus_only => BackendUsed::Gpu,
        (true, true) => BackendUsed::CpuGpu,
        (true, false) => BackendUsed::Gpu,
        (false, _) if gpus_only && engine_finishes => BackendUsed::Gpu,
        (false, _) => BackendUsed::Cpu,
    }
}
