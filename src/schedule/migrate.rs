//! Moving leaves between engines at a piece boundary: each engine gives up
//! an end of its range with the states, and takes what it gains.

use std::ops::Range;
use std::time::Instant;

use super::Member;
use crate::engine::LeafStates;
use crate::error::HashError;
use crate::trace;

/// Moves leaves so that engine i owns [bounds[i], bounds[i + 1]): every
/// engine first gives up what it loses (an end of its range), then takes
/// what it gains (next to what it kept), with the states handed over.
pub(super) fn migrate(members: &mut [Member<'_>], bounds: &[u64]) -> Result<(), HashError> {
    let old: Vec<Range<u64>> = members.iter().map(|m| m.engine.leaves()).collect();
    let new: Vec<Range<u64>> = bounds.windows(2).map(|w| w[0]..w[1]).collect();
    let mut moving: Vec<(Range<u64>, LeafStates)> = Vec::new();
    for ((m, old), new) in members.iter_mut().zip(&old).zip(&new) {
        for lost in difference(old, new).into_iter().rev() {
            let taking = Instant::now();
            let states = m.engine.take_leaves(lost.clone())?;
            trace::trace(|| format!("{} gave {lost:?} in {:?}", m.id, taking.elapsed()));
            moving.push((lost, states));
        }
    }
    for ((m, old), new) in members.iter_mut().zip(&old).zip(&new) {
        for gained in difference(new, old) {
            let giving = Instant::now();
            let states = gather(&moving, &gained);
            let gathered = giving.elapsed();
            m.engine.give_leaves(gained.clone(), states)?;
            trace::trace(|| {
                let took = giving.elapsed();
                format!(
                    "{} took {gained:?} in {took:?} ({gathered:?} to gather)",
                    m.id
                )
            });
        }
    }
    Ok(())
}

/// The leaves of `a` that are not in `b`, as at most two ranges, each an end
/// of `a` (all of `a` when they do not overlap), in leaf order.
pub(super) fn difference(a: &Range<u64>, b: &Range<u64>) -> Vec<Range<u64>> {
    if a.is_empty() {
        return Vec::new();
    }
    if b.end <= a.start || b.start >= a.end || b.is_empty() {
        return vec![a.clone()];
    }
    let mut parts = Vec::new();
    if b.start > a.start {
        parts.push(a.start..b.start);
    }
    if b.end < a.end {
        parts.push(b.end..a.end);
    }
    parts
}

/// The states of `leaves` from the handed-over ranges; a leaf none of them
/// has a state for is fresh, and trailing fresh ones are left out.
pub(super) fn gather(moving: &[(Range<u64>, LeafStates)], leaves: &Range<u64>) -> LeafStates {
    let mut states: LeafStates = Vec::new();
    for leaf in leaves.clone() {
        let state = moving.iter().find_map(|(range, states)| {
            range
                .contains(&leaf)
                .then(|| states.get((leaf - range.start) as usize))
                .flatten()
        });
        match state {
            Some(s) => {
                states.resize((leaf - leaves.start) as usize, [0; 25]);
                states.push(*s);
            }
            None => continue,
        }
    }
    states
}
