//! Tree parameters: the spec's tables, their validation, and the labels that
//! record them next to a digest.

use std::fmt;
use std::str::FromStr;

/// The node function A: one of the six FIPS 202 functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// SHA3-224: a 28-byte digest.
    Sha3_224,
    /// SHA3-256: a 32-byte digest (the default).
    Sha3_256,
    /// SHA3-384: a 48-byte digest.
    Sha3_384,
    /// SHA3-512: a 64-byte digest.
    Sha3_512,
    /// SHAKE128: an XOF, 32 bytes by default.
    Shake128,
    /// SHAKE256: an XOF, 64 bytes by default.
    Shake256,
}

// `Algorithm::index` is the discriminant: `ALL` lists every variant in
// declaration order.
const _: () = {
    let mut i = 0;
    while i < Algorithm::ALL.len() {
        assert!(Algorithm::ALL[i] as usize == i);
        i += 1;
    }
};

impl Algorithm {
    /// Every algorithm, in the order of the spec's table.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::Sha3_224,
        Algorithm::Sha3_256,
        Algorithm::Sha3_384,
        Algorithm::Sha3_512,
        Algorithm::Shake128,
        Algorithm::Shake256,
    ];

    /// Its place in [`Algorithm::ALL`]: tables with an entry per algorithm
    /// are `[T; Algorithm::ALL.len()]`, indexed by this.
    pub(crate) const fn index(self) -> usize {
        self as usize
    }

    /// The sponge rate r in bytes.
    pub const fn rate(self) -> usize {
        match self {
            Algorithm::Sha3_224 => 144,
            Algorithm::Sha3_256 => 136,
            Algorithm::Sha3_384 => 104,
            Algorithm::Sha3_512 => 72,
            Algorithm::Shake128 => 168,
            Algorithm::Shake256 => 136,
        }
    }

    /// The chaining-value size c in bytes: what every inner node and leaf outputs.
    pub const fn chaining_len(self) -> usize {
        match self {
            Algorithm::Sha3_224 => 28,
            Algorithm::Sha3_256 | Algorithm::Shake128 => 32,
            Algorithm::Sha3_384 => 48,
            Algorithm::Sha3_512 | Algorithm::Shake256 => 64,
        }
    }

    /// The FIPS 202 domain-separation and first padding bits, as the byte
    /// XORed in after the message: `01` then pad10*1 for SHA3-*, `1111` for SHAKE*.
    pub const fn domain_byte(self) -> u8 {
        if self.is_xof() { 0x1f } else { 0x06 }
    }

    /// True for SHAKE128 and SHAKE256, whose output length is free.
    pub const fn is_xof(self) -> bool {
        matches!(self, Algorithm::Shake128 | Algorithm::Shake256)
    }

    /// The output length used when none is given: the digest size, or for
    /// SHAKE the spec's default (32 for SHAKE128, 64 for SHAKE256).
    pub const fn default_output_len(self) -> usize {
        self.chaining_len()
    }

    /// The lower-case name used on the command line: `sha3-256`, `shake128`.
    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::Sha3_224 => "sha3-224",
            Algorithm::Sha3_256 => "sha3-256",
            Algorithm::Sha3_384 => "sha3-384",
            Algorithm::Sha3_512 => "sha3-512",
            Algorithm::Shake128 => "shake128",
            Algorithm::Shake256 => "shake256",
        }
    }

    /// The FIPS 202 name in upper case, the start of every label: `SHA3-256`.
    pub const fn fips_name(self) -> &'static str {
        match self {
            Algorithm::Sha3_224 => "SHA3-224",
            Algorithm::Sha3_256 => "SHA3-256",
            Algorithm::Sha3_384 => "SHA3-384",
            Algorithm::Sha3_512 => "SHA3-512",
            Algorithm::Shake128 => "SHAKE128",
            Algorithm::Shake256 => "SHAKE256",
        }
    }

    /// Looks an algorithm up by its FIPS name, in any case (`SHA3-256`, `shake128`).
    pub fn from_fips_name(name: &str) -> Option<Algorithm> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.fips_name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = ParamError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Algorithm::from_fips_name(s).ok_or_else(|| ParamError::UnknownAlgorithm(s.to_string()))
    }
}

/// A parameter outside its range. Reported before any input is read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamError {
    #[error(
        "unknown algorithm '{0}' (expected sha3-224, sha3-256, sha3-384, sha3-512, shake128, \
         shake256, kt128, kt256, parallelhash128, parallelhash256, turboshake128 or turboshake256)"
    )]
    /// A function name that names none (the name given).
    UnknownAlgorithm(String),
    /// A tree degree D outside 2 to 2^24.
    #[error("degree {0} is out of range (2 to 2^24)")]
    Degree(u64),
    /// D^H over [`TreeParams::MAX_LEAVES`].
    #[error("degree {degree} and height {height} give more than 2^24 leaves")]
    TooManyLeaves {
        /// D.
        degree: u64,
        /// H.
        height: u32,
    },
    /// A leaf block size B that is no multiple of 8 from 8 to 2^24.
    #[error("block size {0} is out of range (a multiple of 8 from 8 to 2^24)")]
    BlockSize(usize),
    /// A prefix longer than [`TreeParams::MAX_PREFIX_LEN`].
    #[error("prefix of {0} bytes is too long (at most 255)")]
    PrefixLen(usize),
    /// An output length the function cannot give.
    #[error("output length {len} is out of range for {algorithm} ({allowed})")]
    OutputLen {
        /// The function.
        algorithm: Algorithm,
        /// The length asked for, in bytes.
        len: usize,
        /// The lengths it gives, in words.
        allowed: String,
    },
    /// A standard function's option that it does not take.
    #[error("{function} takes no {option}")]
    NotFor {
        /// The option, as the message names it.
        option: &'static str,
        /// The function.
        function: &'static str,
    },
    /// A customization string longer than 256 KiB.
    #[error("customization string of {0} bytes is too long (at most 262144)")]
    CustomizationLen(usize),
    /// A ParallelHash block size B outside 1 to 2^24.
    #[error("block size {0} is out of range for ParallelHash (1 to 2^24 bytes)")]
    StandardBlockSize(usize),
    /// A TurboSHAKE domain byte outside 0x01 to 0x7f.
    #[error("domain byte {0:#04x} is out of range for TurboSHAKE (0x01 to 0x7f)")]
    Domain(u8),
    /// Text that is no label (the text given).
    #[error("unrecognised label '{0}'")]
    Label(String),
    /// A prefix (key) given where a label does not say one was hashed, or
    /// missing where it does.
    #[error("{}", if *.keyed {
        format!("label '{label}' says a prefix (key) was hashed: give the prefix")
    } else {
        format!("label '{label}' says no prefix was hashed, but one was given")
    })]
    LabelPrefix {
        /// The label.
        label: String,
        /// Whether the label says a prefix was hashed.
        keyed: bool,
    },
    /// A standard function's output length outside 1 to 65536 bytes.
    #[error("output length {len} is out of range for {function} (1 to 65536 bytes)")]
    StandardOutputLen {
        /// The function.
        function: &'static str,
        /// The length asked for, in bytes.
        len: usize,
    },
}

/// The parameters of one tree digest, validated: building one that is out of
/// range is impossible.
///
/// ```
/// use treehash::{Algorithm, TreeParams};
/// let p = TreeParams::new(Algorithm::Sha3_256, 4, 4).unwrap();
/// assert_eq!(p.leaf_count(), 256);
/// assert_eq!(p.block_size(), 136);
/// assert_eq!(p.label(), "SHA3-256-LI(H=4,D=4,B=136)");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct TreeParams {
    algorithm: Algorithm,
    height: u32,
    degree: u64,
    block_size: usize,
    prefix: Vec<u8>,
    output_len: usize,
    leaf_count: u64,
}

impl fmt::Debug for TreeParams {
    // The prefix may be a key: Debug shows only its length.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TreeParams")
            .field("algorithm", &self.algorithm)
            .field("height", &self.height)
            .field("degree", &self.degree)
            .field("block_size", &self.block_size)
            .field("prefix_len", &self.prefix.len())
            .field("output_len", &self.output_len)
            .finish()
    }
}

impl Default for TreeParams {
    /// The spec's defaults: SHA3-256, H = [`TreeParams::DEFAULT_HEIGHT`],
    /// D = [`TreeParams::DEFAULT_DEGREE`], B = rate, no prefix.
    fn default() -> Self {
        TreeParams::new(
            Algorithm::Sha3_256,
            TreeParams::DEFAULT_HEIGHT,
            TreeParams::DEFAULT_DEGREE,
        )
        .expect("the spec's defaults are valid")
    }
}

impl TreeParams {
    /// The spec's default height H.
    pub const DEFAULT_HEIGHT: u32 = 8;
    /// The spec's default degree D.
    pub const DEFAULT_DEGREE: u64 = 4;
    /// The most leaves a tree may have (2^24).
    pub const MAX_LEAVES: u64 = 1 << 24;
    /// The largest degree (2^24).
    pub const MAX_DEGREE: u64 = 1 << 24;
    /// The largest leaf block size in bytes (2^24).
    pub const MAX_BLOCK_SIZE: usize = 1 << 24;
    /// The longest prefix in bytes.
    pub const MAX_PREFIX_LEN: usize = 255;
    /// The shortest keyed digest (a MAC) that a check accepts, in bytes
    /// (the spec's "Checking keyed lines").
    pub const MIN_KEYED_DIGEST_LEN: usize = 16;
    /// The longest SHAKE output in bytes (2^16).
    pub const MAX_OUTPUT_LEN: usize = 1 << 16;

    /// Parameters with the default block size (the rate), no prefix and the
    /// default output length.
    pub fn new(algorithm: Algorithm, height: u32, degree: u64) -> Result<Self, ParamError> {
        Self::with_options(algorithm, height, degree, None, Vec::new(), None)
    }

    /// Parameters with every option; `None` takes the spec's default.
    pub fn with_options(
        algorithm: Algorithm,
        height: u32,
        degree: u64,
        block_size: Option<usize>,
        prefix: Vec<u8>,
        output_len: Option<usize>,
    ) -> Result<Self, ParamError> {
        if !(2..=TreeParams::MAX_DEGREE).contains(&degree) {
            return Err(ParamError::Degree(degree));
        }
        let leaf_count = degree
            .checked_pow(height)
            .filter(|&l| l <= TreeParams::MAX_LEAVES)
            .ok_or(ParamError::TooManyLeaves { degree, height })?;
        let block_size = block_size.unwrap_or(algorithm.rate());
        if block_size == 0
            || !block_size.is_multiple_of(8)
            || block_size > TreeParams::MAX_BLOCK_SIZE
        {
            return Err(ParamError::BlockSize(block_size));
        }
        if prefix.len() > TreeParams::MAX_PREFIX_LEN {
            return Err(ParamError::PrefixLen(prefix.len()));
        }
        let output_len = output_len.unwrap_or(algorithm.default_output_len());
        check_output_len(algorithm, output_len)?;
        Ok(TreeParams {
            algorithm,
            height,
            degree,
            block_size,
            prefix,
            output_len,
            leaf_count,
        })
    }

    /// The same parameters at another height (the degree, block size, prefix
    /// and output length stay).
    pub fn at_height(&self, height: u32) -> Result<Self, ParamError> {
        Self::with_options(
            self.algorithm,
            height,
            self.degree,
            Some(self.block_size),
            self.prefix.clone(),
            Some(self.output_len),
        )
    }

    /// The same parameters with another output length.
    pub fn with_output_len(&self, output_len: usize) -> Result<Self, ParamError> {
        check_output_len(self.algorithm, output_len)?;
        Ok(TreeParams {
            output_len,
            ..self.clone()
        })
    }

    /// A, the node function.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
    /// H, the tree's height (0: plain SHA-3 / SHAKE).
    pub fn height(&self) -> u32 {
        self.height
    }
    /// D, the tree's degree.
    pub fn degree(&self) -> u64 {
        self.degree
    }
    /// B, the leaf block size in bytes.
    pub fn block_size(&self) -> usize {
        self.block_size
    }
    /// P, the prefix (possibly a key: never print it).
    pub fn prefix(&self) -> &[u8] {
        &self.prefix
    }
    /// Whether there is a prefix (a keyed digest, where it is a key).
    pub fn has_prefix(&self) -> bool {
        !self.prefix.is_empty()
    }
    /// n, the digest length in bytes.
    pub fn output_len(&self) -> usize {
        self.output_len
    }
    /// L = D^H.
    pub fn leaf_count(&self) -> u64 {
        self.leaf_count
    }
    /// One stripe: L·B bytes, one block for every leaf.
    pub fn stripe_len(&self) -> u64 {
        self.leaf_count * self.block_size as u64
    }
    /// The bytes each leaf outputs: n for the single leaf of H = 0, c otherwise.
    pub fn leaf_output_len(&self) -> usize {
        if self.height == 0 {
            self.output_len
        } else {
            self.algorithm.chaining_len()
        }
    }
}

fn check_output_len(algorithm: Algorithm, len: usize) -> Result<(), ParamError> {
    let (ok, allowed) = if algorithm.is_xof() {
        (
            (1..=TreeParams::MAX_OUTPUT_LEN).contains(&len),
            "1 to 65536 bytes".to_string(),
        )
    } else {
        let fixed = algorithm.chaining_len();
        (len == fixed, format!("always {fixed} bytes"))
    };
    if ok {
        Ok(())
    } else {
        Err(ParamError::OutputLen {
            algorithm,
            len,
            allowed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_spec() {
        let p = TreeParams::default();
        assert_eq!(p.algorithm(), Algorithm::Sha3_256);
        assert_eq!((p.height(), p.degree(), p.block_size()), (8, 4, 136));
        assert_eq!(p.output_len(), 32);
        assert_eq!(p.leaf_count(), 65536);
        let shake = TreeParams::new(Algorithm::Shake256, 1, 2).unwrap();
        assert_eq!(shake.output_len(), 64);
        assert_eq!(shake.block_size(), 136);
    }

    #[test]
    fn out_of_range_parameters_are_refused() {
        use Algorithm::*;
        let opts = |h, d, b, p: usize, n| {
            TreeParams::with_options(Sha3_256, h, d, b, vec![0; p], n).map(|_| ())
        };
        assert_eq!(opts(1, 1, None, 0, None), Err(ParamError::Degree(1)));
        assert_eq!(opts(0, 0, None, 0, None), Err(ParamError::Degree(0)));
        assert_eq!(
            opts(13, 4, None, 0, None),
            Err(ParamError::TooManyLeaves {
                degree: 4,
                height: 13
            })
        );
        assert!(opts(12, 4, None, 0, None).is_ok());
        assert!(opts(1, TreeParams::MAX_DEGREE, None, 0, None).is_ok());
        assert!(opts(u32::MAX, 2, None, 0, None).is_err());
        assert!(opts(0, TreeParams::MAX_DEGREE + 1, None, 0, None).is_err());
        assert!(opts(0, 2, Some(12), 0, None).is_err());
        assert!(opts(0, 2, Some(0), 0, None).is_err());
        assert!(opts(0, 2, Some(8), 0, None).is_ok());
        assert!(opts(0, 2, Some(TreeParams::MAX_BLOCK_SIZE + 8), 0, None).is_err());
        assert!(opts(0, 2, None, 255, None).is_ok());
        assert_eq!(opts(0, 2, None, 256, None), Err(ParamError::PrefixLen(256)));
        assert!(opts(0, 2, None, 0, Some(31)).is_err());
        assert!(TreeParams::with_options(Shake128, 0, 2, None, vec![], Some(0)).is_err());
        assert!(TreeParams::with_options(Shake128, 0, 2, None, vec![], Some(65536)).is_ok());
        assert!(TreeParams::with_options(Shake128, 0, 2, None, vec![], Some(65537)).is_err());
    }
}
