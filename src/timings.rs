//! Where the time of one digest went, phase by phase (`--timings`).

use std::fmt;
use std::time::{Duration, Instant};

/// Wall-clock time per phase of one digest. Phases a backend does not have
/// stay zero; the one-time GPU start-up is charged to the first input only.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Timings {
    /// Opening and mapping the input.
    pub open: Duration,
    /// Driver initialisation, context creation and pinned/device buffer
    /// allocation (GPU, once per process, or when an input needs larger buffers).
    pub gpu_init: Duration,
    /// Kernel compilation and module load (GPU, once per process).
    pub compile: Duration,
    /// Leaf hashing: absorbing every block (reading a sequential input and,
    /// on the GPU, copying to the device included).
    pub leaves: Duration,
    /// GPU: time the copy engine spent on host-to-device copies (overlaps
    /// the kernels; part of `leaves`).
    pub copy_busy: Duration,
    /// GPU: time the leaf kernels ran (overlaps the copies; part of `leaves`).
    pub kernel_busy: Duration,
    /// Parent levels and root.
    pub reduce: Duration,
    /// From opening the input to the digest.
    pub total: Duration,
}

/// Runs `f` and adds its wall-clock time to `slot`.
pub(crate) fn timed<T>(slot: &mut Duration, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    *slot += start.elapsed();
    out
}

impl fmt::Display for Timings {
    /// One line per phase that took any time, in milliseconds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let phases = [
            ("open/map", self.open),
            ("GPU init, buffers", self.gpu_init),
            ("compile/load", self.compile),
            ("leaf hashing", self.leaves),
            ("  of which copies (GPU)", self.copy_busy),
            ("  of which kernels (GPU)", self.kernel_busy),
            ("tree reduction", self.reduce),
        ];
        for (name, d) in phases {
            if !d.is_zero() || matches!(name, "leaf hashing" | "tree reduction") {
                writeln!(f, "  {name:<24} {:>10.3} ms", ms(d))?;
            }
        }
        write!(f, "  {:<24} {:>10.3} ms", "total", ms(self.total))
    }
}

/// A duration in milliseconds, as a float.
pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
