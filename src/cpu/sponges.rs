//! The portable engine: one scalar sponge ([`Fast`]) per leaf, any B, any CPU.

use std::marker::PhantomData;

use super::fast_sponge::Fast;
use super::units::FreshIsZero;
use super::walk::Absorb;
use crate::sponge::Sponge;

/// The engine of one sponge per leaf, for `S`'s function.
pub struct Sponges<S>(PhantomData<fn() -> S>);

impl<S> Default for Sponges<S> {
    fn default() -> Self {
        Sponges(PhantomData)
    }
}

// SAFETY: a `Fast` is a Keccak state (25 words), the position in the rate
// (a `usize`) and a `PhantomData`: all zero is a value, the sponge that has
// absorbed nothing (`Fast::default`, checked by a test); no drop glue.
unsafe impl<S: Sponge> FreshIsZero for Fast<S> {}

impl<S: Sponge> Absorb for Sponges<S> {
    const WIDTH: usize = 1;
    type Unit = Fast<S>;

    fn absorb_blocks(&self, unit: &mut Fast<S>, blocks: &[u8]) {
        unit.absorb(blocks);
    }

    fn absorb_leaf(&self, unit: &mut Fast<S>, _lane: usize, bytes: &[u8]) {
        unit.absorb(bytes);
    }

    fn finish_unit(&self, unit: &Fast<S>, _leaf_lens: &[u64], out: &mut [u8]) {
        unit.clone().squeeze_into(out);
    }

    fn leaf_state(&self, unit: &Fast<S>, _lane: usize) -> [u64; 25] {
        unit.state()
    }

    fn set_leaf_state(&self, unit: &mut Fast<S>, _lane: usize, state: [u64; 25], absorbed: u64) {
        *unit = Fast::from_state(state, absorbed);
    }
}
