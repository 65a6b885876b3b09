//! GPUs begun side by side on a file, each walking the file at its own
//! pace. Their split is fixed (even, from the first piece: no latecomer, no
//! search) and each reads its own runs of the file, so no piece need wait
//! for every engine: in [`super::run`]'s lockstep each piece waits for the
//! slower engine's share of it before the next one starts
//! (docs/decisions/0041-gpus-walk-apart.md).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{Hashed, Member, finish};
use crate::error::HashError;
use crate::input::InputFile;
use crate::message::{self, Access};
use crate::params::TreeParams;
use crate::progress::{EngineShare, Progress};
use crate::timings::{Timings, timed};
use crate::trace;

/// Whether `members` can each walk a file apart: more than one, and each
/// reads the file itself (nothing is mapped for it).
pub(crate) fn can_walk_apart(members: &[Member<'_>]) -> bool {
    members.len() > 1 && members.iter().all(|m| m.engine.access() == Access::Read)
}

/// Sets its flag when dropped by a panic: a walk that panics stops the
/// others, as one that fails does.
struct StopOnPanic<'f>(&'f AtomicBool);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// Hashes `file` on `members` (GPUs begun side by side: together they own
/// every leaf, a split that stays), each walking every piece of the file
/// on a thread of its own, then finishes the tree as [`super::run`] does.
/// The first walks on this thread and tells `progress` its pieces and,
/// after each, every engine's share so far: the bytes told follow the
/// first engine, which the others may trail. An engine that fails (or
/// panics) stops the others at their next piece, and its error is the
/// result. A thread the system refuses leaves its engine's walk to this
/// thread, after the first's.
pub(crate) fn run_apart<'a>(
    params: &TreeParams,
    file: &InputFile,
    mut members: Vec<Member<'a>>,
    reduce: &(dyn Fn(Vec<u8>) -> Vec<u8> + Sync),
    progress: &dyn Progress,
    times: &mut Timings,
) -> Result<Hashed, HashError> {
    // Callers check `can_walk_apart`; the tests drive CPU engines here,
    // which read the pieces that come unread as a GPU does.
    debug_assert!(members.len() > 1);
    let failed = AtomicBool::new(false);
    // Each engine's bytes and busy nanoseconds so far, for the shares that
    // the first walk tells.
    let tallies: Vec<(AtomicU64, AtomicU64)> = members
        .iter()
        .map(|_| (AtomicU64::new(0), AtomicU64::new(0)))
        .collect();
    let ids: Vec<_> = members.iter().map(|m| m.id).collect();
    let shares = || -> Vec<EngineShare> {
        ids.iter()
            .zip(&tallies)
            .map(|(&engine, (bytes, busy))| EngineShare {
                engine,
                bytes: bytes.load(Ordering::Relaxed),
                busy: Duration::from_nanos(busy.load(Ordering::Relaxed)),
            })
            .collect()
    };
    let walk = |k: usize, m: &mut Member<'a>| -> Result<(), HashError> {
        let _stop_on_panic = StopOnPanic(&failed);
        let leaves = m.engine.leaves();
        let began = Instant::now();
        let unmapped = AtomicBool::new(true);
        let mut message_len = 0u64;
        // Set when this walk stops because another failed: not an error of its own.
        let mut stopped = false;
        let told: &dyn Progress = if k == 0 { progress } else { &() };
        let walked = message::for_each_piece_of_file(
            params,
            file,
            m.engine.piece_len(),
            Access::Read,
            &unmapped,
            told,
            |piece| {
                if failed.load(Ordering::Relaxed) {
                    stopped = true;
                    return Err(HashError::Internal("stopped".into()));
                }
                let len = piece.len() as u64;
                let start = Instant::now();
                m.engine.absorb(piece)?;
                m.count(params, &leaves, message_len, len, start.elapsed());
                message_len += len;
                tallies[k].0.store(m.total.bytes, Ordering::Relaxed);
                tallies[k]
                    .1
                    .store(m.total.busy.as_nanos() as u64, Ordering::Relaxed);
                if k == 0 {
                    progress.engines(&shares());
                }
                Ok(())
            },
        );
        trace::trace(|| {
            format!(
                "{} walked the file apart: {} B of its leaves, busy {:.3} ms, in {:.3} ms",
                m.id,
                m.total.bytes,
                m.total.busy.as_secs_f64() * 1e3,
                began.elapsed().as_secs_f64() * 1e3
            )
        });
        if stopped {
            return Ok(());
        }
        if walked.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        walked
    };
    let walked = timed(&mut times.leaves, || {
        let walks = crate::threads::on_each_at_once(
            members.iter_mut().collect(),
            "treehash-walk",
            walk,
            || Err(HashError::Internal("an engine's walk panicked".into())),
        );
        walks.into_iter().collect::<Result<(), HashError>>()
    });
    walked?;
    progress.engines(&members.iter().map(Member::share).collect::<Vec<_>>());
    finish(params, members, reduce, times).map(|(digest, shares)| Hashed {
        digest,
        bytes: file.len(),
        shares,
    })
}
