//! Threads started where the system may refuse them: a limit on processes
//! (`ulimit -u`, a container's pids limit) makes `std::thread::spawn` fail,
//! and a refused thread is an error of the input being hashed
//! ([`HashError::Threads`]), never a panic.

use std::io;
use std::thread::{Builder, Scope, ScopedJoinHandle};

use crate::error::HashError;

/// The error of a thread the system refused.
pub(crate) fn refused(e: &io::Error) -> HashError {
    HashError::Threads(format!(
        "cannot start a thread: {}; {LIMIT}",
        crate::error::io_reason(e)
    ))
}

/// What a refused thread most likely means.
const LIMIT: &str = "a limit on processes (ulimit -u, a container's pids limit) may be reached";

/// Starts `work` on a new thread of `scope`, or the error of its refusal.
pub(crate) fn spawn_scoped<'scope, T: Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    work: impl FnOnce() -> T + Send + 'scope,
) -> Result<ScopedJoinHandle<'scope, T>, HashError> {
    Builder::new()
        .spawn_scoped(scope, work)
        .map_err(|e| refused(&e))
}

/// A pool of `threads` workers named `treehash-<i>`, or of fewer where the
/// system refuses that many: half as many each time, down to one. The
/// threads of a pool that could not be built whole are joined before the
/// next try, so that they no longer count against the limit that refused
/// the last of them. An error only where not one thread can start.
pub(crate) fn start_pool(threads: usize) -> Result<rayon::ThreadPool, HashError> {
    let mut want = threads.max(1);
    loop {
        let mut started = Vec::new();
        let built = rayon::ThreadPoolBuilder::new()
            .num_threads(want)
            .spawn_handler(|thread| {
                let name = format!("treehash-{}", thread.index());
                started.push(Builder::new().name(name).spawn(move || thread.run())?);
                Ok(())
            })
            .build();
        match built {
            Ok(pool) => return Ok(pool),
            Err(e) => {
                // rayon has told the threads it started to stop.
                for thread in started {
                    let _ = thread.join();
                }
                if want == 1 {
                    return Err(HashError::Threads(format!(
                        "cannot start a worker thread: {e}; {LIMIT}"
                    )));
                }
                want /= 2;
            }
        }
    }
}
