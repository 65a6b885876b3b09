//! The developer's trace: with `TREEHASH_TRACE` set in the environment, the
//! scheduler and the GPU start-up write a line each on standard error for
//! what they do, stamped with the time since the trace's first line
//! (docs/ARCHITECTURE.md).

use std::sync::LazyLock;
use std::time::Instant;

static ON: LazyLock<bool> = LazyLock::new(|| std::env::var_os("TREEHASH_TRACE").is_some());
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

/// Whether the trace is on (work done only for it can then be skipped).
pub(crate) fn on() -> bool {
    *ON
}

/// A line of the trace, when it is on.
pub(crate) fn trace(what: impl FnOnce() -> String) {
    if on() {
        let at = EPOCH.elapsed().as_secs_f64() * 1e3;
        eprintln!("treehash trace: {at:9.3} ms: {}", what());
    }
}
