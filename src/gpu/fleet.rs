//! The GPUs one hasher uses, each started once: in the background while the
//! CPU already hashes (`auto`: starting a GPU never delays a digest), or
//! right away when the GPU is required (`--backend gpu`).
//!
//! Starting is the driver's initialisation, the device count (for
//! [`Devices::All`]), a context per device, the kernels of the function in
//! use (NVRTC or the PTX cache) and pinned transfer buffers: a fraction of a
//! second, which the CPU spends hashing
//! (docs/decisions/0014-when-gpus-start-for-li.md).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cudarc::driver::CudaContext;

use crate::error::HashError;
use crate::trace::trace;

use super::kernel_sets::KernelSet;
use super::options::{Devices, Start};
use super::{Context, GpuBackend, GpuError, driver_present};

/// One device of the fleet.
struct Device {
    ordinal: usize,
    backend: OnceLock<Result<GpuBackend, GpuError>>,
    /// Per set of kernels ([`KernelSet::index`]): they and the transfer
    /// buffers are ready.
    ready: [AtomicBool; KernelSet::COUNT],
    /// Per set of kernels: being prepared by a background thread.
    preparing: [AtomicBool; KernelSet::COUNT],
}

impl Device {
    fn open(&self, start: &Start) -> &Result<GpuBackend, GpuError> {
        self.backend.get_or_init(|| {
            let mut gpu = GpuBackend::open(self.ordinal, start.transfer_bytes)?;
            gpu.fail_after_transfers = start.fail_after_transfers;
            Ok(gpu)
        })
    }

    fn is_ready(&self, kernels: KernelSet) -> bool {
        flag(&self.ready, kernels).is_some_and(|ready| ready.load(Ordering::Acquire))
    }

    /// Whether some set of kernels is ready.
    fn is_ready_for_any(&self) -> bool {
        self.ready.iter().any(|ready| ready.load(Ordering::Acquire))
    }

    /// Whether a background thread prepares (or prepared) `kernels`.
    fn is_preparing(&self, kernels: KernelSet) -> bool {
        flag(&self.preparing, kernels).is_some_and(|p| p.load(Ordering::Relaxed))
    }

    /// Notes that a background thread prepares `kernels`: whether one
    /// already did.
    fn mark_preparing(&self, kernels: KernelSet) -> bool {
        flag(&self.preparing, kernels).is_some_and(|p| p.swap(true, Ordering::Relaxed))
    }

    /// Opens the device and readies `kernels`; an error is kept.
    fn prepare(
        &self,
        start: &Start,
        kernels: KernelSet,
        piece_len: usize,
        failure: &Mutex<Option<String>>,
    ) {
        let result = match self.open(start) {
            Ok(gpu) => {
                let ordinal = self.ordinal;
                trace(|| format!("GPU {ordinal} open ({:?} in the driver)", gpu.info().init));
                gpu.prepare(kernels, piece_len)
            }
            Err(e) => Err(e.clone()),
        };
        match result {
            Ok(()) => {
                trace(|| format!("GPU {} ready for {kernels}", self.ordinal));
                if let Some(ready) = flag(&self.ready, kernels) {
                    ready.store(true, Ordering::Release);
                }
            }
            Err(e) => note_failure(failure, &e),
        }
    }
}

/// The flag of `kernels` in a device's `ready` or `preparing`; none for
/// kernels the GPU does not have: their preparation fails (and is tried
/// again when asked again), and they are never ready.
fn flag(flags: &[AtomicBool; KernelSet::COUNT], kernels: KernelSet) -> Option<&AtomicBool> {
    kernels.index().map(|index| &flags[index])
}

fn note_failure(failure: &Mutex<Option<String>>, e: &GpuError) {
    if let Ok(mut first) = failure.lock() {
        first.get_or_insert_with(|| e.to_string());
    }
}

struct Shared {
    devices: Devices,
    start: Start,
    /// The devices, once the driver has said which there are.
    list: OnceLock<Result<Vec<Device>, GpuError>>,
    /// The first failure met while starting in the background.
    failure: Mutex<Option<String>>,
    /// The background starts, to wait for when asked why no GPU was used.
    starts: Mutex<Vec<std::thread::JoinHandle<()>>>,
    /// The start-up last measured on this machine, read once.
    expected_startup: OnceLock<Duration>,
}

impl Shared {
    fn list(&self) -> &Result<Vec<Device>, GpuError> {
        self.list.get_or_init(|| {
            let ordinals = match &self.devices {
                Devices::List(list) => list.clone(),
                Devices::All => {
                    if !driver_present() {
                        return Err(GpuError::new(super::NO_DRIVER));
                    }
                    let count = CudaContext::device_count().context("looking for CUDA devices")?;
                    (0..count.max(0) as usize).collect()
                }
            };
            if ordinals.is_empty() {
                return Err(GpuError::new("no CUDA device found"));
            }
            Ok(ordinals
                .into_iter()
                .map(|ordinal| Device {
                    ordinal,
                    backend: OnceLock::new(),
                    ready: Default::default(),
                    preparing: Default::default(),
                })
                .collect())
        })
    }
}

/// What a GPU's start is taken to cost before this machine has measured
/// one: the upper end of a start in the background while every core hashes
/// (docs/decisions/0014-when-gpus-start-for-li.md); afterwards the last
/// measured start, kept in the cache directory, is used.
const UNMEASURED_STARTUP: Duration = Duration::from_millis(500);

/// The file in the cache directory that keeps the last measured start.
fn startup_file() -> Option<std::path::PathBuf> {
    super::kernels::cache_dir().map(|d| d.join("gpu-startup-seconds"))
}

/// How long a measured start is kept when later starts are slower.
const STARTUP_KEPT: Duration = Duration::from_secs(24 * 3600);

/// The last start measured, if it was kept in the cache directory.
fn kept_startup() -> Option<(Duration, std::time::SystemTime)> {
    let path = startup_file()?;
    let (bytes, meta) = crate::output_file::read_cache(&path)?;
    let seconds = std::str::from_utf8(&bytes)
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()?;
    let modified = meta.modified().ok()?;
    (seconds.is_finite() && (0.0..60.0).contains(&seconds))
        .then(|| (Duration::from_secs_f64(seconds), modified))
}

/// Keeps `startup` unless a shorter start was kept within [`STARTUP_KEPT`]:
/// the first start of a GPU that sat idle is several times slower than the
/// next ones (docs/decisions/0014-when-gpus-start-for-li.md), and a value
/// that high would stop auto from starting GPUs at all, and so from ever
/// measuring a start again.
fn remember_startup(startup: Duration) {
    let Some(path) = startup_file() else { return };
    let shorter_kept = kept_startup().is_some_and(|(kept, when)| {
        kept <= startup && when.elapsed().is_ok_and(|age| age < STARTUP_KEPT)
    });
    if !shorter_kept {
        let seconds = startup.as_secs_f64();
        super::kernels::store(&path, &format!("{seconds:.3}\n"));
    }
}

/// The GPUs of one hasher.
pub(crate) struct Fleet(Arc<Shared>);

impl Fleet {
    pub(crate) fn new(devices: Devices, start: Start) -> Fleet {
        Fleet(Arc::new(Shared {
            devices,
            start,
            list: OnceLock::new(),
            failure: Mutex::new(None),
            starts: Mutex::new(Vec::new()),
            expected_startup: OnceLock::new(),
        }))
    }

    /// Starts every device and readies `kernels` (an algorithm's, or a
    /// standard function's chunk kernel) for pieces of `piece_len` bytes on
    /// it, on background threads (one per device); returns at once. Asking
    /// again is free.
    pub(crate) fn start_in_background(&self, kernels: impl Into<KernelSet>, piece_len: usize) {
        self.start(kernels.into(), piece_len);
    }

    /// The first device asked for, opened now (the driver started); the
    /// others are not opened yet, but one that does not exist is an error.
    pub(crate) fn open_first(&self) -> Result<&GpuBackend, GpuError> {
        let list = self.0.list().as_ref().map_err(Clone::clone)?;
        let first = list[0].open(&self.0.start).as_ref().map_err(Clone::clone)?;
        for device in &list[1..] {
            super::check_device(device.ordinal)?;
        }
        Ok(first)
    }

    /// Device `ordinal`, opened now if it was not: an error unless it is
    /// one of the devices asked for and it starts.
    pub(crate) fn open_device(&self, ordinal: usize) -> Result<&GpuBackend, GpuError> {
        let list = self.0.list().as_ref().map_err(Clone::clone)?;
        let device = list.iter().find(|d| d.ordinal == ordinal).ok_or_else(|| {
            GpuError::new(format!(
                "GPU {ordinal} is not among the devices asked for ({})",
                self.0.devices
            ))
        })?;
        device.open(&self.0.start).as_ref().map_err(Clone::clone)
    }

    fn start(&self, kernels: KernelSet, piece_len: usize) {
        let nothing_to_do = match self.0.list.get() {
            // No driver or no device.
            Some(Err(_)) => true,
            Some(Ok(list)) => list.iter().all(|d| d.is_preparing(kernels)),
            None => false,
        };
        if nothing_to_do {
            return;
        }
        let shared = Arc::clone(&self.0);
        let spawned = std::thread::Builder::new()
            .name("treehash-gpu-start".into())
            .spawn(move || {
                let began = Instant::now();
                let list = match shared.list() {
                    Ok(list) => list,
                    Err(e) => return note_failure(&shared.failure, e),
                };
                trace(|| format!("CUDA driver started, {} device(s)", list.len()));
                // Only a start that did the work is a measured start: one
                // that found its devices ready (prepared in the foreground)
                // took no time.
                let mut started = false;
                std::thread::scope(|s| {
                    for device in list {
                        let already = device.mark_preparing(kernels);
                        if !already && !device.is_ready(kernels) {
                            started = true;
                            let shared = &shared;
                            let spawned = std::thread::Builder::new().spawn_scoped(s, move || {
                                device.prepare(&shared.start, kernels, piece_len, &shared.failure)
                            });
                            if let Err(e) = spawned {
                                let why = format!("starting a thread: {e}");
                                note_failure(&shared.failure, &GpuError::new(why));
                            }
                        }
                    }
                });
                if started && list.iter().any(|d| d.is_ready(kernels)) {
                    remember_startup(began.elapsed());
                }
            });
        match spawned {
            Ok(handle) => {
                if let Ok(mut starts) = self.0.starts.lock() {
                    starts.push(handle);
                }
            }
            Err(e) => note_failure(
                &self.0.failure,
                &GpuError::new(format!("starting a thread: {e}")),
            ),
        }
    }

    /// Why no GPU could be used, once every start begun in the background
    /// has ended (this waits for them): `None` when one started, or none was
    /// begun.
    pub(crate) fn unavailable(&self) -> Option<String> {
        let starts = self
            .0
            .starts
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default();
        let started_any = !starts.is_empty();
        for handle in starts {
            let _ = handle.join();
        }
        let any_ready = match self.0.list.get() {
            Some(Ok(list)) => list.iter().any(Device::is_ready_for_any),
            _ => false,
        };
        (started_any && !any_ready)
            .then(|| self.failure())
            .flatten()
    }

    /// Whether a GPU was ever asked to start, in the background or now.
    /// Ask after [`unavailable`](Self::unavailable), which waits for the
    /// starts under way.
    pub(crate) fn asked(&self) -> bool {
        self.0.list.get().is_some()
    }

    /// What starting the GPUs is expected to take: the last start measured
    /// on this machine (read once per process), else `UNMEASURED_STARTUP`.
    pub(crate) fn expected_startup(&self) -> Duration {
        *self
            .0
            .expected_startup
            .get_or_init(|| kept_startup().map_or(UNMEASURED_STARTUP, |(kept, _)| kept))
    }

    /// The devices ready for `kernels` now, with their ordinals (never waits).
    pub(crate) fn ready(&self, kernels: impl Into<KernelSet>) -> Vec<(usize, &GpuBackend)> {
        let Some(Ok(list)) = self.0.list.get() else {
            return Vec::new();
        };
        let kernels = kernels.into();
        list.iter()
            .filter(|d| d.is_ready(kernels))
            .filter_map(|d| match d.backend.get() {
                Some(Ok(gpu)) => Some((d.ordinal, gpu)),
                _ => None,
            })
            .collect()
    }

    /// Whether the device of ordinal `ordinal` is ready for `kernels` now
    /// (never waits).
    pub(crate) fn is_ready(&self, ordinal: usize, kernels: impl Into<KernelSet>) -> bool {
        self.ready(kernels).iter().any(|&(o, _)| o == ordinal)
    }

    /// The ordinals of the devices ready for some kernels now (never waits).
    pub(crate) fn ordinals_ready(&self) -> Vec<usize> {
        let Some(Ok(list)) = self.0.list.get() else {
            return Vec::new();
        };
        list.iter()
            .filter(|d| d.is_ready_for_any())
            .map(|d| d.ordinal)
            .collect()
    }

    /// The first failure met in the background, if any.
    pub(crate) fn failure(&self) -> Option<String> {
        self.0.failure.lock().ok().and_then(|f| f.clone())
    }

    /// Every device asked for, each opened and then given to `begin`, all
    /// at once ([`at_once`]). Only the first `most` devices are used (all
    /// where `None`; the others must exist). `begin` gets the device's place
    /// among those used and their count. The results in that order, or the
    /// first error.
    pub(crate) fn side_by_side<'f, T: Send>(
        &'f self,
        most: Option<usize>,
        begin: impl Fn(usize, usize, &'f GpuBackend) -> Result<T, HashError> + Sync,
    ) -> Result<Vec<T>, HashError> {
        let all = self.0.list().as_ref().map_err(Clone::clone)?;
        let used = most.map_or(all.len(), |most| most.clamp(1, all.len()));
        let (list, left_out) = all.split_at(used);
        for device in left_out {
            super::check_device(device.ordinal)?;
        }
        let start = &self.0.start;
        at_once(list, |index, device| {
            let gpu = device.open(start).as_ref().map_err(Clone::clone)?;
            trace(|| format!("GPU {} open ({:?})", device.ordinal, gpu.info().init));
            begin(index, list.len(), gpu)
        })
    }

    /// Every device asked for, started now (waiting for any start already
    /// under way), all at once ([`at_once`]): all of them, or the first
    /// error.
    pub(crate) fn open_now(&self) -> Result<Vec<&GpuBackend>, HashError> {
        let list = self.0.list().as_ref().map_err(Clone::clone)?;
        let start = &self.0.start;
        at_once(list, |_, device| {
            Ok(device.open(start).as_ref().map_err(Clone::clone)?)
        })
    }

    /// Starts every device and readies `kernels` on it now (waiting for
    /// any start already under way); failures are kept as in the background.
    pub(crate) fn prepare_now(&self, kernels: impl Into<KernelSet>, piece_len: usize) {
        let kernels = kernels.into();
        match self.0.list() {
            Ok(list) => list
                .iter()
                .filter(|d| !d.is_ready(kernels))
                .for_each(|d| d.prepare(&self.0.start, kernels, piece_len, &self.0.failure)),
            Err(e) => note_failure(&self.0.failure, e),
        }
    }
}

/// Runs `work` for every device of `list` at once
/// ([`crate::threads::on_each_at_once`]: the first on this thread, the
/// others on scoped threads; a refused thread leaves its device to this
/// one). A device's start (its context, kernels and pinned buffers) is
/// mostly waits in the driver, which for several devices overlap; started
/// in turn, the second device's context would wait for the whole of the
/// first's start, the driver's own included
/// (docs/decisions/0039-gpus-open-together.md). The results in `list`'s
/// order, or the first error.
fn at_once<'d, T: Send>(
    list: &'d [Device],
    work: impl Fn(usize, &'d Device) -> Result<T, HashError> + Sync,
) -> Result<Vec<T>, HashError> {
    crate::threads::on_each_at_once(list.iter().collect(), "treehash-gpu-start", work, || {
        Err(HashError::Internal("a GPU's start panicked".into()))
    })
    .into_iter()
    .collect()
}
