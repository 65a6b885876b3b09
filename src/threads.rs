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

/// Runs `work` on every item at once: the first on this thread, each other
/// on a scoped thread of its own named `name`. A thread the system refuses
/// leaves its item's work to this thread, after the first's; one that
/// panics gives `panicked()`. Every thread is joined before this returns.
/// The results in the items' order.
pub(crate) fn on_each_at_once<I: Send, T: Send>(
    items: Vec<I>,
    name: &str,
    work: impl Fn(usize, I) -> T + Sync,
    panicked: impl Fn() -> T,
) -> Vec<T> {
    let cells: Vec<std::sync::Mutex<Option<I>>> = items
        .into_iter()
        .map(|i| std::sync::Mutex::new(Some(i)))
        .collect();
    let take = |k: usize| cells[k].lock().ok().and_then(|mut cell| cell.take());
    let (take, work) = (&take, &work);
    std::thread::scope(|s| {
        let threads: Vec<_> = (1..cells.len())
            .map(|k| {
                Builder::new()
                    .name(name.to_string())
                    .spawn_scoped(s, move || take(k).map(|item| work(k, item)))
                    .ok()
            })
            .collect();
        let mut results = Vec::with_capacity(cells.len());
        if let Some(first) = take(0) {
            results.push(work(0, first));
        }
        for (k, thread) in (1..).zip(threads) {
            let done = match thread.map(|handle| handle.join()) {
                Some(Ok(done)) => done,
                Some(Err(_)) => Some(panicked()),
                // Refused: its item is still in its cell.
                None => None,
            };
            results.push(match done {
                Some(result) => result,
                None => take(k).map_or_else(&panicked, |item| work(k, item)),
            });
        }
        results
    })
}
