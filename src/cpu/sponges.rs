//! The portable kernel: one scalar sponge ([`Fast`]) per leaf, any B, any CPU.

use std::marker::PhantomData;

use super::fast_sponge::Fast;
use super::units::FreshIsZero;
use super::walk::Absorb;
use crate::sponge::Sponge;

/// The kernel of one sponge per leaf, for `S`'s function.
pub(super) struct Sponges<S>(PhantomData<fn() -> S>);

// Not derived: that would ask for `S: Clone`.
impl<S> Clone for Sponges<S> {
    fn clone(&self) -> Self {
        Sponges(PhantomData)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sponge::with_sponge;

    /// All zero bytes are the sponge that has absorbed nothing, as
    /// `FreshIsZero` promises: it absorbs and squeezes as `Fast::default`,
    /// from position 0 and mid-rate alike.
    #[test]
    fn a_zeroed_sponge_is_a_fresh_one() {
        for algorithm in crate::params::Algorithm::ALL {
            with_sponge!(algorithm, R => {
                for len in [0, 1, algorithm.rate() - 1, algorithm.rate(), 1000] {
                    let data: Vec<u8> = (0..len).map(|k| (k * 31 + 7) as u8).collect();
                    let (mut zeroed, mut fresh) = (Fast::<R>::fresh(), Fast::<R>::default());
                    assert_eq!(zeroed.state(), [0; 25]);
                    zeroed.absorb(&data);
                    fresh.absorb(&data);
                    let (mut a, mut b) = ([0u8; 64], [0u8; 64]);
                    zeroed.squeeze_into(&mut a);
                    fresh.squeeze_into(&mut b);
                    assert_eq!(a, b, "{algorithm:?}, {len} bytes");
                }
            });
        }
    }
}
