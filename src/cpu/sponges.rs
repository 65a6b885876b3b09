//! The portable leaf engine: one scalar sponge per leaf, any B, any CPU (the
//! backend gives it `fast_sponge::Fast`).

use std::marker::PhantomData;

use super::walk::Absorb;
use crate::sponge::Sponge;

/// The engine of one sponge `S` per leaf.
pub struct Sponges<S>(PhantomData<fn() -> S>);

impl<S> Default for Sponges<S> {
    fn default() -> Self {
        Sponges(PhantomData)
    }
}

impl<S: Sponge> Absorb for Sponges<S> {
    const WIDTH: usize = 1;
    type Unit = S;

    fn new_unit(&self) -> S {
        S::default()
    }

    fn absorb_blocks(&self, unit: &mut S, blocks: &[u8]) {
        unit.absorb(blocks);
    }

    fn absorb_leaf(&self, unit: &mut S, _lane: usize, bytes: &[u8]) {
        unit.absorb(bytes);
    }

    fn finish_unit(&self, unit: &S, _leaf_lens: &[u64], out: &mut [u8]) {
        unit.clone().squeeze_into(out);
    }
}
