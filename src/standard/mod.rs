//! The standard Keccak hashes made for speed (docs/SPEC.md, "Standard
//! functions"): KT128 and KT256 (KangarooTwelve, RFC 9861), which hash
//! 8192-byte chunks side by side with 12-round TurboSHAKE; ParallelHash128
//! and ParallelHash256 (NIST SP 800-185), which hash B-byte blocks side by
//! side with 24-round cSHAKE; and the TurboSHAKE sponges themselves.
//!
//! - this module: the functions, their parameters, and the chunks'
//!   arithmetic common to both documents;
//! - `rfc9861`: KT's and TurboSHAKE's framing (RFC 9861);
//! - `sp800_185`: ParallelHash's framing and encodings (NIST SP 800-185);
//! - `sponge`: a byte sponge of any rate, round count and domain byte;
//! - `node`: each function's final node, fed the chunks' chaining values.
//!
//! The walk over a message, its chunks on every engine, is
//! `schedule::chunks`: this module holds definitions only (no threads, no
//! I/O).

pub(crate) mod node;
mod rfc9861;
mod sp800_185;
pub(crate) mod sponge;

use std::fmt;

use crate::params::{Algorithm, ParamError, TreeParams};
use crate::sponge::{Rounds, SpongeSpec};

pub(crate) use rfc9861::{DEFAULT_TURBOSHAKE_DOMAIN, KT_CHUNK_LEN};

/// The standard functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Standard {
    /// KT128 (KangarooTwelve, RFC 9861).
    Kt128,
    /// KT256 (RFC 9861).
    Kt256,
    /// ParallelHash128 (NIST SP 800-185).
    ParallelHash128,
    /// ParallelHash256 (NIST SP 800-185).
    ParallelHash256,
    /// TurboSHAKE128 (RFC 9861): one sponge, no chunks.
    TurboShake128,
    /// TurboSHAKE256 (RFC 9861): one sponge, no chunks.
    TurboShake256,
}

/// The three kinds of standard function, each with its own parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Family {
    /// KT128, KT256: 8192-byte chunks, a customization string C.
    Kangaroo,
    /// ParallelHash128/256: B-byte blocks, a customization string S.
    ParallelHash,
    /// TurboSHAKE128/256: one sponge, a domain byte D.
    TurboShake,
}

/// One row per standard function, in [`Standard`]'s order: what tells it
/// from the others. The rest follows from its family and its strength: the
/// rounds and framing are its family's (its document's module), the rate,
/// chaining values and default output its FIPS 202 SHAKE's, its chunks'
/// sponge both together, and its code in a part the two again
/// (`parts::format`). A new function is a variant of [`Standard`] and a
/// row here (docs/ARCHITECTURE.md, "To change X, open Y"). No two rows share
/// a family and a SHAKE: that pair is a function's part code, and its chunk
/// sponge.
struct Row {
    standard: Standard,
    /// The lower-case name the command line takes.
    name: &'static str,
    /// The name as the standards write it, the start of its label.
    standard_name: &'static str,
    family: Family,
    /// The SHAKE whose rate, chaining-value size and default output length
    /// it shares: SHAKE128 for the 128-bit functions, SHAKE256 for the
    /// 256-bit ones.
    shake: Algorithm,
}

const ROWS: &[Row] = &[
    Row {
        standard: Standard::Kt128,
        name: "kt128",
        standard_name: "KT128",
        family: Family::Kangaroo,
        shake: Algorithm::Shake128,
    },
    Row {
        standard: Standard::Kt256,
        name: "kt256",
        standard_name: "KT256",
        family: Family::Kangaroo,
        shake: Algorithm::Shake256,
    },
    Row {
        standard: Standard::ParallelHash128,
        name: "parallelhash128",
        standard_name: "ParallelHash128",
        family: Family::ParallelHash,
        shake: Algorithm::Shake128,
    },
    Row {
        standard: Standard::ParallelHash256,
        name: "parallelhash256",
        standard_name: "ParallelHash256",
        family: Family::ParallelHash,
        shake: Algorithm::Shake256,
    },
    Row {
        standard: Standard::TurboShake128,
        name: "turboshake128",
        standard_name: "TurboSHAKE128",
        family: Family::TurboShake,
        shake: Algorithm::Shake128,
    },
    Row {
        standard: Standard::TurboShake256,
        name: "turboshake256",
        standard_name: "TurboSHAKE256",
        family: Family::TurboShake,
        shake: Algorithm::Shake256,
    },
];

// Each row sits at its variant's index, which `Standard::row` reads, and
// names a SHAKE, whose rate, chaining values and strength it takes.
const _: () = {
    let mut i = 0;
    while i < ROWS.len() {
        assert!(
            ROWS[i].standard as usize == i,
            "ROWS is in Standard's order"
        );
        assert!(ROWS[i].shake.is_xof(), "a row names SHAKE128 or SHAKE256");
        i += 1;
    }
};

impl Standard {
    /// Every standard function, in the order of docs/SPEC.md.
    pub const ALL: [Standard; ROWS.len()] = {
        let mut all = [Standard::Kt128; ROWS.len()];
        let mut i = 0;
        while i < ROWS.len() {
            all[i] = ROWS[i].standard;
            i += 1;
        }
        all
    };

    const fn row(self) -> &'static Row {
        &ROWS[self as usize]
    }

    /// Its kind: KT, ParallelHash or TurboSHAKE.
    pub const fn family(self) -> Family {
        self.row().family
    }

    /// The FIPS 202 function whose rate, chaining-value size (the chunks'
    /// outputs) and default output length this one shares: SHAKE128 for the
    /// 128-bit functions, SHAKE256 for the 256-bit ones.
    pub const fn shake(self) -> Algorithm {
        self.row().shake
    }

    /// The sponge rate in bytes.
    pub const fn rate(self) -> usize {
        self.shake().rate()
    }

    /// Rounds of Keccak-p\[1600\]: 12 for TurboSHAKE and KT, 24 for
    /// ParallelHash (cSHAKE is Keccak-f).
    pub const fn rounds(self) -> Rounds {
        match self.family() {
            Family::Kangaroo | Family::TurboShake => Rounds::Turbo12,
            Family::ParallelHash => Rounds::Keccak24,
        }
    }

    /// The sponge each chunk goes through (KT's chunks, which RFC 9861
    /// calls leaves, and ParallelHash's blocks), as its document defines
    /// it; TurboSHAKE has no chunks. Public for the benchmarks and the
    /// tests only.
    #[doc(hidden)]
    pub const fn chunk_spec(self) -> Option<SpongeSpec> {
        match self.family() {
            Family::Kangaroo => Some(rfc9861::chunk_spec(self.shake())),
            Family::ParallelHash => Some(sp800_185::chunk_spec(self.shake())),
            Family::TurboShake => None,
        }
    }

    /// The bytes each chunk's chaining value has: 32 or 64.
    pub const fn chaining_len(self) -> usize {
        self.shake().chaining_len()
    }

    /// The output length when none is given: 32 or 64 bytes.
    pub const fn default_output_len(self) -> usize {
        self.shake().default_output_len()
    }

    /// The lower-case name the command line takes: `kt128`, `parallelhash256`.
    pub const fn name(self) -> &'static str {
        self.row().name
    }

    /// The name as the standards write it, the start of its label: `KT128`,
    /// `ParallelHash256`, `TurboSHAKE128`.
    pub const fn standard_name(self) -> &'static str {
        self.row().standard_name
    }

    /// The document that defines it.
    pub const fn document(self) -> &'static str {
        match self.family() {
            Family::Kangaroo | Family::TurboShake => "RFC 9861",
            Family::ParallelHash => "NIST SP 800-185",
        }
    }

    /// Looks a function up by either of its names, in any case.
    pub fn from_name(name: &str) -> Option<Standard> {
        Standard::ALL.into_iter().find(|s| {
            s.name().eq_ignore_ascii_case(name) || s.standard_name().eq_ignore_ascii_case(name)
        })
    }
}

impl fmt::Display for Standard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The parameters of one standard digest, validated: building one that is
/// out of range is impossible.
///
/// ```
/// use treehash::standard::{Standard, StandardParams};
/// let p = StandardParams::new(Standard::ParallelHash256);
/// assert_eq!(p.label(), "ParallelHash256(B=8192)");
/// let kt = StandardParams::new(Standard::Kt128).with_customization(b"ab".to_vec()).unwrap();
/// assert_eq!(kt.label(), "KT128(C=6162)");
/// ```
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct StandardParams {
    standard: Standard,
    /// KT's C or ParallelHash's S.
    customization: Vec<u8>,
    /// ParallelHash's B; KT's chunk length; unused by TurboSHAKE.
    block_size: usize,
    /// TurboSHAKE's D.
    domain: u8,
    output_len: usize,
}

impl StandardParams {
    /// ParallelHash's default block size B in bytes.
    pub const DEFAULT_BLOCK_SIZE: usize = 8192;
    /// The largest ParallelHash block size B (2^24 bytes, as LI's B).
    pub const MAX_BLOCK_SIZE: usize = 1 << 24;
    /// The longest customization string (KT's C, ParallelHash's S) in bytes:
    /// 256 KiB, whose hex in a tagged line's label still fits the longest line
    /// a check reads (1 MiB). The standards allow any length; RFC 9861's
    /// longest test C is 68,921 bytes.
    pub const MAX_CUSTOMIZATION_LEN: usize = 256 << 10;
    /// KT's chunk length (RFC 9861, §3.2).
    pub const KT_CHUNK_LEN: usize = KT_CHUNK_LEN;
    /// TurboSHAKE's default domain byte D (RFC 9861, §2.1).
    pub const DEFAULT_DOMAIN: u8 = DEFAULT_TURBOSHAKE_DOMAIN;
    /// The longest output in bytes (2^16), as an LI tree's
    /// ([`TreeParams::MAX_OUTPUT_LEN`](crate::TreeParams::MAX_OUTPUT_LEN)).
    pub const MAX_OUTPUT_LEN: usize = TreeParams::MAX_OUTPUT_LEN;

    /// The function with its defaults: no customization, B = 8192, D = 0x1F,
    /// 32 or 64 bytes of output.
    pub fn new(standard: Standard) -> StandardParams {
        let block_size = match standard.family() {
            Family::Kangaroo => KT_CHUNK_LEN,
            Family::ParallelHash | Family::TurboShake => StandardParams::DEFAULT_BLOCK_SIZE,
        };
        StandardParams {
            standard,
            customization: Vec::new(),
            block_size,
            domain: DEFAULT_TURBOSHAKE_DOMAIN,
            output_len: standard.default_output_len(),
        }
    }

    /// With KT's C or ParallelHash's S (at most
    /// [`StandardParams::MAX_CUSTOMIZATION_LEN`] bytes; TurboSHAKE has none).
    pub fn with_customization(self, customization: Vec<u8>) -> Result<Self, ParamError> {
        if !customization.is_empty() && self.standard.family() == Family::TurboShake {
            return Err(ParamError::NotFor {
                option: "customization string",
                function: self.standard.name(),
            });
        }
        if customization.len() > StandardParams::MAX_CUSTOMIZATION_LEN {
            return Err(ParamError::CustomizationLen(customization.len()));
        }
        Ok(StandardParams {
            customization,
            ..self
        })
    }

    /// With ParallelHash's block size B in bytes (1 to 2^24).
    pub fn with_block_size(self, block_size: usize) -> Result<Self, ParamError> {
        if self.standard.family() != Family::ParallelHash {
            return Err(ParamError::NotFor {
                option: "block size",
                function: self.standard.name(),
            });
        }
        if !(1..=StandardParams::MAX_BLOCK_SIZE).contains(&block_size) {
            return Err(ParamError::StandardBlockSize(block_size));
        }
        Ok(StandardParams { block_size, ..self })
    }

    /// With TurboSHAKE's domain byte D (0x01 to 0x7F).
    pub fn with_domain(self, domain: u8) -> Result<Self, ParamError> {
        if self.standard.family() != Family::TurboShake {
            return Err(ParamError::NotFor {
                option: "domain byte",
                function: self.standard.name(),
            });
        }
        if !(0x01..=0x7f).contains(&domain) {
            return Err(ParamError::Domain(domain));
        }
        Ok(StandardParams { domain, ..self })
    }

    /// With an output length of 1 to 65536 bytes.
    pub fn with_output_len(self, output_len: usize) -> Result<Self, ParamError> {
        if !(1..=TreeParams::MAX_OUTPUT_LEN).contains(&output_len) {
            return Err(ParamError::StandardOutputLen {
                function: self.standard.name(),
                len: output_len,
            });
        }
        Ok(StandardParams { output_len, ..self })
    }

    /// The function.
    pub fn standard(&self) -> Standard {
        self.standard
    }
    /// KT's C or ParallelHash's S (empty for TurboSHAKE).
    pub fn customization(&self) -> &[u8] {
        &self.customization
    }
    /// The bytes of the message each chunk holds: KT's 8192 or
    /// ParallelHash's B (TurboSHAKE has no chunks; this is then only the
    /// length of the pieces it is read in).
    pub fn block_size(&self) -> usize {
        self.block_size
    }
    /// TurboSHAKE's D.
    pub fn domain(&self) -> u8 {
        self.domain
    }
    /// The digest length in bytes.
    pub fn output_len(&self) -> usize {
        self.output_len
    }
}

/// The length of the blocks a message is cut into: KT's chunks,
/// ParallelHash's B, or for TurboSHAKE its rate (any whole number of rate
/// blocks would do).
pub(crate) fn chunk_len(params: &StandardParams) -> usize {
    match params.standard().family() {
        Family::TurboShake => params.standard().rate(),
        Family::Kangaroo | Family::ParallelHash => params.block_size(),
    }
}

/// What S adds after M: KT's C ‖ length_encode(|C|) (RFC 9861 §3.2);
/// nothing for ParallelHash and TurboSHAKE.
pub(crate) fn suffix(params: &StandardParams) -> Vec<u8> {
    if params.standard().family() != Family::Kangaroo {
        return Vec::new();
    }
    rfc9861::suffix(params.customization())
}

/// n, the chunks of a message of `message_len` bytes: KT's 8192-byte
/// chunks of S = M ‖ C ‖ length_encode(|C|) (one at least), ParallelHash's
/// B-byte blocks of X (none for an empty X); TurboSHAKE has none.
pub(crate) fn chunk_count(params: &StandardParams, message_len: u64) -> u64 {
    match params.standard().family() {
        Family::TurboShake => 0,
        Family::Kangaroo | Family::ParallelHash => {
            let s_len = message_len + suffix(params).len() as u64;
            s_len.div_ceil(chunk_len(params) as u64)
        }
    }
}

/// Integers the documents' encodings are tested on (`rfc9861`, `sp800_185`):
/// 0, one byte's edges, two bytes', the chunk length's, and the largest.
#[cfg(test)]
const ENCODED_INTEGERS: [u64; 12] = [
    0,
    1,
    12,
    127,
    128,
    255,
    256,
    8191,
    8192,
    65538,
    1 << 40,
    u64::MAX,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows and the documents' modules give what RFC 9861 and SP 800-185
    /// say, written out here apart from both.
    #[test]
    fn each_function_is_what_its_document_says() {
        let spec = |s: SpongeSpec| (s.rounds().count(), s.rate(), s.domain(), s.output_len());
        let chunks = |s: Standard| s.chunk_spec().map(spec);
        assert_eq!(chunks(Standard::Kt128), Some((12, 168, 0x0B, 32)));
        assert_eq!(chunks(Standard::Kt256), Some((12, 136, 0x0B, 64)));
        assert_eq!(chunks(Standard::ParallelHash128), Some((24, 168, 0x1F, 32)));
        assert_eq!(chunks(Standard::ParallelHash256), Some((24, 136, 0x1F, 64)));
        assert_eq!(chunks(Standard::TurboShake128), None);
        assert_eq!(chunks(Standard::TurboShake256), None);
        let facts = |s: Standard| {
            (
                s.name(),
                s.standard_name(),
                s.rounds().count(),
                s.rate(),
                s.chaining_len(),
                s.default_output_len(),
            )
        };
        let want = [
            ("kt128", "KT128", 12, 168, 32, 32),
            ("kt256", "KT256", 12, 136, 64, 64),
            ("parallelhash128", "ParallelHash128", 24, 168, 32, 32),
            ("parallelhash256", "ParallelHash256", 24, 136, 64, 64),
            ("turboshake128", "TurboSHAKE128", 12, 168, 32, 32),
            ("turboshake256", "TurboSHAKE256", 12, 136, 64, 64),
        ];
        assert_eq!(Standard::ALL.map(facts), want);
        for s in Standard::ALL {
            assert_eq!(Standard::from_name(s.name()), Some(s));
            assert_eq!(
                Standard::from_name(&s.standard_name().to_uppercase()),
                Some(s)
            );
        }
    }

    #[test]
    fn out_of_range_parameters_are_refused() {
        let kt = StandardParams::new(Standard::Kt128);
        let longest = vec![0; StandardParams::MAX_CUSTOMIZATION_LEN];
        assert!(kt.clone().with_customization(longest).is_ok());
        let too_long = vec![0; StandardParams::MAX_CUSTOMIZATION_LEN + 1];
        assert!(kt.clone().with_customization(too_long).is_err());
        assert!(kt.clone().with_block_size(8192).is_err());
        assert!(kt.clone().with_domain(0x1f).is_err());
        assert!(kt.clone().with_output_len(0).is_err());
        assert!(kt.with_output_len(65536).is_ok());
        let ts = StandardParams::new(Standard::TurboShake256);
        assert!(ts.clone().with_domain(0).is_err());
        assert!(ts.clone().with_domain(0x80).is_err());
        assert!(ts.clone().with_domain(0x7f).is_ok());
        assert!(ts.with_customization(vec![1]).is_err());
        let ph = StandardParams::new(Standard::ParallelHash256);
        assert!(ph.clone().with_block_size(0).is_err());
        assert!(ph.clone().with_block_size(1).is_ok());
        assert!(
            ph.with_block_size(StandardParams::MAX_BLOCK_SIZE + 1)
                .is_err()
        );
    }
}
