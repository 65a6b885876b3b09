//! Threads started where the system may refuse them: a limit on processes
//! (`ulimit -u`, a container's pids limit) makes `std::thread::spawn` fail.
//! A refused thread is never a panic: it is an error of the input being
//! hashed ([`HashError::Threads`]), or, where the work can run on the
//! calling thread instead ([`on_each_at_once`]), later work there.

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
/// leaves its item's work to this thread, after the first's (so that a
/// limit on threads costs time, not the work); a work that panics, here or
/// on its thread, gives `panicked()`. Every thread is joined before this
/// returns. The results in the items' order.
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
    // The lock is held only to take the item out: nothing panics under it.
    let take = |k: usize| cells.get(k)?.lock().ok()?.take();
    let here = |k: usize, item: I| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(k, item)))
            .unwrap_or_else(|_| panicked())
    };
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
            results.push(here(0, first));
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
                None => take(k).map_or_else(&panicked, |item| here(k, item)),
            });
        }
        results
    })
}

#[cfg(test)]
mod tests {
    use super::on_each_at_once;

    #[test]
    fn work_on_each_at_once_comes_back_in_order_and_panics_give_the_fallback() {
        let items: Vec<u64> = (0..6).collect();
        let doubled = on_each_at_once(items, "test", |k, i| (k as u64, 2 * i), || (99, 99));
        assert_eq!(doubled, (0..6).map(|i| (i, 2 * i)).collect::<Vec<_>>());
        for panicking in [0, 3] {
            let got = on_each_at_once(
                (0..5).collect::<Vec<u64>>(),
                "test",
                |k, i| {
                    assert!(k != panicking, "scripted panic");
                    i
                },
                || 99,
            );
            let mut want: Vec<u64> = (0..5).collect();
            want[panicking] = 99;
            assert_eq!(got, want, "item {panicking} panicked");
        }
        let none: Vec<u8> = on_each_at_once(Vec::<u8>::new(), "test", |_, i| i, || 0);
        assert!(none.is_empty());
    }
}
