//! A Keccak sponge, described once, and the six FIPS 202 functions of
//! RustCrypto behind one interface.
//!
//! - [`SpongeSpec`]: the permutation's rounds ([`Rounds`]), the rate, the
//!   domain byte and the bytes kept of the output. Every kernel takes its
//!   sponge from one: LI's leaves and nodes from [`Algorithm::sponge_spec`],
//!   the standard functions' chunks from `Standard::chunk_spec`, which
//!   their documents' modules define (`standard::rfc9861`,
//!   `standard::sp800_185`). The CPU's permutations and the GPU kernels'
//!   `-D` defines read their rounds, rate and domain byte from it, and
//!   `SpongeSpec::pad` is the one padding of a state held as words.
//! - [`Sponge`]: RustCrypto's `sha3` (SHA3-*) and `shake` (SHAKE*) types, so
//!   that tree code is written once and monomorphised per function by the
//!   crate-internal `with_sponge!` macro.
//!
//! Pure: no threads, no I/O. The function tables (rate, domain byte,
//! chaining length) stay in `params.rs`; this module builds on them.

use sha3::Digest;
use shake::{ExtendableOutput, XofReader};

use crate::params::Algorithm;

/// Rounds of Keccak-f[1600], the full permutation.
const KECCAK_F_ROUNDS: usize = 24;

/// The largest rate in bytes (SHAKE128's, also TurboSHAKE128's): a buffer
/// of one block of any sponge.
pub(crate) const MAX_RATE: usize = {
    let mut max = 0;
    let mut k = 0;
    while k < Algorithm::ALL.len() {
        if Algorithm::ALL[k].rate() > max {
            max = Algorithm::ALL[k].rate();
        }
        k += 1;
    }
    max
};

/// The rounds a permutation runs: Keccak-p[1600, n_r] is the *last* n_r
/// rounds of Keccak-f\[1600\] (FIPS 202, section 3.3, algorithm 7: round
/// indices 24 − n_r to 23), so it starts at iota's constant `RC[24 − n_r]`.
/// Only the two counts that standard functions use can be named.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounds {
    /// Keccak-f\[1600\]: SHA-3, SHAKE, cSHAKE and ParallelHash (FIPS 202,
    /// SP 800-185).
    Keccak24,
    /// Keccak-p[1600, 12]: TurboSHAKE and KangarooTwelve (RFC 9861).
    Turbo12,
}

impl Rounds {
    /// n_r, the number of rounds.
    pub const fn count(self) -> usize {
        match self {
            Rounds::Keccak24 => KECCAK_F_ROUNDS,
            Rounds::Turbo12 => 12,
        }
    }

    /// The index of the first round run, which is that of its constant in
    /// iota's table (`RC` of the CPU's permutation, `KECCAK_RC` of the kernels').
    pub const fn first(self) -> usize {
        KECCAK_F_ROUNDS - self.count()
    }
}

/// One Keccak sponge: Keccak-p[1600, `rounds`] with a `rate`-byte rate,
/// padded with `domain` then pad10*1, of which `output_len` bytes (one
/// output block at most) are kept. LI's leaves and nodes, and the standard
/// functions' chunks, each go through one; the CPU's kernels and the GPU's
/// take every one of these four facts from here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SpongeSpec {
    rounds: Rounds,
    rate: usize,
    domain: u8,
    output_len: usize,
}

impl SpongeSpec {
    /// A sponge of Keccak-p[1600, `rounds`] with `rate` (one of the FIPS 202
    /// rates, which the lane kernels are built for) and `domain` (the bits
    /// appended to a message before pad10*1, with the padding's first bit:
    /// 0x01 to 0x7F) that keeps `output_len` bytes (1 to `rate`: one output
    /// block). Panics (at compile time for a constant) on anything else.
    pub const fn new(rounds: Rounds, rate: usize, domain: u8, output_len: usize) -> SpongeSpec {
        let mut known = false;
        let mut k = 0;
        while k < Algorithm::ALL.len() {
            known |= Algorithm::ALL[k].rate() == rate;
            k += 1;
        }
        assert!(known, "the rate must be a FIPS 202 rate");
        assert!(
            domain >= 0x01 && domain <= 0x7F,
            "the domain byte is 0x01 to 0x7F"
        );
        assert!(
            output_len >= 1 && output_len <= rate,
            "1 to `rate` output bytes"
        );
        SpongeSpec {
            rounds,
            rate,
            domain,
            output_len,
        }
    }

    /// This sponge, keeping `output_len` bytes instead.
    pub const fn keeping(self, output_len: usize) -> SpongeSpec {
        SpongeSpec::new(self.rounds, self.rate, self.domain, output_len)
    }

    /// The permutation's rounds.
    pub const fn rounds(&self) -> Rounds {
        self.rounds
    }

    /// The rate in bytes.
    pub const fn rate(&self) -> usize {
        self.rate
    }

    /// The domain byte.
    pub const fn domain(&self) -> u8 {
        self.domain
    }

    /// The bytes kept of the output: a chaining value's length.
    pub const fn output_len(&self) -> usize {
        self.output_len
    }

    /// Pads a Keccak state whose next free byte of the rate is `pos` (<
    /// rate): the domain byte there, pad10*1's last bit at the rate's last
    /// byte. The permutation that follows gives the first output block.
    pub(crate) fn pad(&self, state: &mut [u64; 25], pos: usize) {
        for (word, bits) in self.padding(pos) {
            state[word] ^= bits;
        }
    }

    /// The padding of a state whose next free byte of the rate is `pos`, as
    /// [`pad`](Self::pad) XORs it in: the two (word, bits) pairs, for states
    /// held other than as 25 words (lane-major groups of several).
    pub(crate) fn padding(&self, pos: usize) -> [(usize, u64); 2] {
        [
            (pos / 8, u64::from(self.domain) << (8 * (pos % 8))),
            (self.rate / 8 - 1, 1 << 63),
        ]
    }
}

impl Algorithm {
    /// The sponge of this function's LI leaves and nodes: Keccak-f\[1600\]
    /// (every FIPS 202 function's permutation), its rate and domain byte
    /// (`params.rs`'s tables), c bytes kept. Defined here, beside
    /// [`SpongeSpec`], not in `params.rs`: this module uses `params.rs`,
    /// which must not use it back (no module cycles).
    pub const fn sponge_spec(self) -> SpongeSpec {
        SpongeSpec::new(
            Rounds::Keccak24,
            self.rate(),
            self.domain_byte(),
            self.chaining_len(),
        )
    }
}

// Every function's sponge passes `SpongeSpec::new`'s checks, so
// `Algorithm::sponge_spec` never panics.
const _: () = {
    let mut k = 0;
    while k < Algorithm::ALL.len() {
        Algorithm::ALL[k].sponge_spec();
        k += 1;
    }
};

/// An incremental hash whose state is small enough to keep one per leaf
/// (RustCrypto keeps the 200-byte Keccak state and a cursor, nothing more).
pub trait Sponge: Clone + Default + Send + Sync {
    const ALGORITHM: Algorithm;

    /// Absorbs the next bytes.
    fn absorb(&mut self, data: &[u8]);

    /// Pads and writes `out.len()` bytes of output. For SHA3-* the length
    /// must be the digest size (parameters are validated before this is reached).
    fn squeeze_into(self, out: &mut [u8]);

    /// The hash of `data`, `out.len()` bytes long.
    fn hash_into(data: &[u8], out: &mut [u8]) {
        let mut sponge = Self::default();
        sponge.absorb(data);
        sponge.squeeze_into(out);
    }
}

macro_rules! fixed_sponge {
    ($ty:ty, $alg:expr) => {
        impl Sponge for $ty {
            const ALGORITHM: Algorithm = $alg;
            #[inline]
            fn absorb(&mut self, data: &[u8]) {
                Digest::update(self, data);
            }
            fn squeeze_into(self, out: &mut [u8]) {
                out.copy_from_slice(&self.finalize());
            }
        }
    };
}

macro_rules! xof_sponge {
    ($ty:ty, $alg:expr) => {
        impl Sponge for $ty {
            const ALGORITHM: Algorithm = $alg;
            #[inline]
            fn absorb(&mut self, data: &[u8]) {
                shake::Update::update(self, data);
            }
            fn squeeze_into(self, out: &mut [u8]) {
                self.finalize_xof().read(out);
            }
        }
    };
}

fixed_sponge!(sha3::Sha3_224, Algorithm::Sha3_224);
fixed_sponge!(sha3::Sha3_256, Algorithm::Sha3_256);
fixed_sponge!(sha3::Sha3_384, Algorithm::Sha3_384);
fixed_sponge!(sha3::Sha3_512, Algorithm::Sha3_512);
xof_sponge!(shake::Shake128, Algorithm::Shake128);
xof_sponge!(shake::Shake256, Algorithm::Shake256);

/// Runs `$body` with the type alias `$S` bound to the [`Sponge`] of `$alg`.
macro_rules! with_sponge {
    ($alg:expr, $S:ident => $body:expr) => {
        match $alg {
            $crate::params::Algorithm::Sha3_224 => {
                type $S = ::sha3::Sha3_224;
                $body
            }
            $crate::params::Algorithm::Sha3_256 => {
                type $S = ::sha3::Sha3_256;
                $body
            }
            $crate::params::Algorithm::Sha3_384 => {
                type $S = ::sha3::Sha3_384;
                $body
            }
            $crate::params::Algorithm::Sha3_512 => {
                type $S = ::sha3::Sha3_512;
                $body
            }
            $crate::params::Algorithm::Shake128 => {
                type $S = ::shake::Shake128;
                $body
            }
            $crate::params::Algorithm::Shake256 => {
                type $S = ::shake::Shake256;
                $body
            }
        }
    };
}

pub(crate) use with_sponge;

/// The plain FIPS 202 function: `out.len()` bytes of A(data).
pub fn plain_hash(algorithm: Algorithm, data: &[u8], out_len: usize) -> Vec<u8> {
    let mut out = vec![0; out_len];
    with_sponge!(algorithm, S => S::hash_into(data, &mut out));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// LI's sponges are FIPS 202's: Keccak-f, the rate, `01` or `1111`
    /// then pad10*1, c bytes.
    #[test]
    fn fips202_specs_are_what_fips202_says() {
        let spec = |a: Algorithm| {
            let s = a.sponge_spec();
            (s.rounds().count(), s.rate(), s.domain(), s.output_len())
        };
        assert_eq!(spec(Algorithm::Sha3_224), (24, 144, 0x06, 28));
        assert_eq!(spec(Algorithm::Sha3_256), (24, 136, 0x06, 32));
        assert_eq!(spec(Algorithm::Sha3_384), (24, 104, 0x06, 48));
        assert_eq!(spec(Algorithm::Sha3_512), (24, 72, 0x06, 64));
        assert_eq!(spec(Algorithm::Shake128), (24, 168, 0x1F, 32));
        assert_eq!(spec(Algorithm::Shake256), (24, 136, 0x1F, 64));
        assert_eq!(MAX_RATE, 168);
    }

    #[test]
    fn known_answers_for_abc() {
        let hex = |a, n| hex::encode(plain_hash(a, b"abc", n));
        assert_eq!(
            hex(Algorithm::Sha3_256, 32),
            "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"
        );
        assert_eq!(hex(Algorithm::Shake128, 10), "5881092dd818bf5cf8a3");
    }

    /// `pad` then one permutation is RustCrypto's answer, for every function
    /// and every padding position.
    #[test]
    fn padding_matches_rustcrypto() {
        for algorithm in Algorithm::ALL {
            let rate = algorithm.rate();
            // Under Miri, where a permutation takes a good part of a
            // second, the first and last padding positions only.
            let lens = if cfg!(miri) {
                vec![0, rate - 1]
            } else {
                vec![0, 1, 7, 8, 9, rate - 1]
            };
            for len in lens {
                let data: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x5a).collect();
                let mut state = [0u64; 25];
                for (k, byte) in data.iter().enumerate() {
                    state[k / 8] ^= u64::from(*byte) << (8 * (k % 8));
                }
                algorithm.sponge_spec().pad(&mut state, len);
                keccak::Keccak::new().with_f1600(|f| f(&mut state));
                let n = algorithm.chaining_len();
                let ours: Vec<u8> = (0..n)
                    .map(|k| (state[k / 8] >> (8 * (k % 8))) as u8)
                    .collect();
                assert_eq!(
                    ours,
                    plain_hash(algorithm, &data, n),
                    "{algorithm}, {len} bytes"
                );
            }
        }
    }
}
