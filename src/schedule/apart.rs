//! GPUs begun side by side on a file, each walking the file at its own
//! pace. Their split is fixed (even, from the first piece: no latecomer, no
//! search) and each reads its own runs of the file, so no piece need wait
//! for every engine: in [`super::run`]'s lockstep each piece waits for the
//! slowest engine's share of it, and for an LI tree of H ≥ 10 most of a
//! piece falls in one engine's leaves while the other waits
//! (docs/decisions/0041-gpus-walk-apart.md).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::{Hashed, Member, finish};
use crate::error::HashError;
use crate::input::InputFile;
use crate::message::{self, Access};
use crate::params::TreeParams;
use crate::progress::Progress;
use crate::timings::{Timings, timed};
use crate::tree::Dealing;

/// Whether `members` can each walk a file apart: more than one, and each
/// reads the file itself (nothing is mapped for it).
pub(crate) fn can_walk_apart(members: &[Member<'_>]) -> bool {
    members.len() > 1 && members.iter().all(|m| m.engine.access() == Access::Read)
}

/// Hashes `file` on `members` (together they own every leaf, a split that
/// stays), each walking every piece of the file on a thread of its own
/// (the first on this one, which tells `progress`), then finishes the tree
/// as [`super::run`] does. An engine that fails stops the others at their
/// next piece. A thread the system refuses leaves its engine's walk to this
/// thread, after the first's.
pub(crate) fn run_apart<'a>(
    params: &TreeParams,
    file: &InputFile,
    mut members: Vec<Member<'a>>,
    reduce: &(dyn Fn(Vec<u8>) -> Vec<u8> + Sync),
    progress: &dyn Progress,
    times: &mut Timings,
) -> Result<Hashed, HashError> {
    let failed = AtomicBool::new(false);
    let walk = |m: &mut Member<'a>, progress: &dyn Progress| -> Result<(), HashError> {
        let (leaves, dealing) = (m.engine.leaves(), Dealing::of(params));
        let unmapped = AtomicBool::new(true);
        let mut message_len = 0u64;
        // Set when this walk stops because another failed: not an error of its own.
        let mut stopped = false;
        let piece_len = m.engine.piece_len();
        let walked = message::for_each_piece_of_file(
            params,
            file,
            piece_len,
            Access::Read,
            &unmapped,
            progress,
            |piece| {
                if failed.load(Ordering::Relaxed) {
                    stopped = true;
                    return Err(HashError::Internal("stopped".into()));
                }
                let len = piece.len() as u64;
                let start = Instant::now();
                m.engine.absorb(piece)?;
                m.total.busy += start.elapsed();
                m.total.bytes += dealing.packed_len(&leaves, message_len + len)
                    - dealing.packed_len(&leaves, message_len);
                message_len += len;
                Ok(())
            },
        );
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
            |k, m: &mut Member<'a>| {
                if k == 0 {
                    walk(m, progress)
                } else {
                    walk(m, &())
                }
            },
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
