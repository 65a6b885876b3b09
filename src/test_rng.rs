//! The unit tests' seeded generator (splitmix64), so that a failure can be
//! replayed from its seed.

pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0 ..= most`.
    pub(crate) fn up_to(&mut self, most: u64) -> u64 {
        self.next() % (most + 1)
    }

    /// A length in `0 ..= most`.
    pub(crate) fn up_to_len(&mut self, most: usize) -> usize {
        self.up_to(most as u64) as usize
    }

    pub(crate) fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

/// `len` bytes of the generator seeded with `seed`.
pub(crate) fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed);
    (0..len).map(|_| rng.next() as u8).collect()
}
