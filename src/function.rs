//! Every function treehash computes under one name and one set of
//! parameters: the LI trees of the six FIPS 202 functions
//! ([`TreeParams`]) and the standard functions ([`StandardParams`]); and
//! the parameters built from the options an interface gathers
//! ([`ParamOptions`]), with the same checks and messages everywhere.

use std::fmt;
use std::str::FromStr;

use crate::params::{Algorithm, ParamError, TreeParams};
use crate::standard::{Family, Standard, StandardParams};

/// A function by the name the command line, the labels and the Python
/// package give it: `sha3-256` (an LI tree of SHA3-256, or plain SHA3-256
/// at height 0), `kt128`, `parallelhash256`, …
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Function {
    Tree(Algorithm),
    Standard(Standard),
}

impl Function {
    /// Every function: the LI trees' node functions, then the standard ones.
    pub fn all() -> impl Iterator<Item = Function> {
        let trees = Algorithm::ALL.into_iter().map(Function::Tree);
        trees.chain(Standard::ALL.into_iter().map(Function::Standard))
    }

    /// The lower-case name: `sha3-256`, `kt128`.
    pub fn name(self) -> &'static str {
        match self {
            Function::Tree(a) => a.name(),
            Function::Standard(s) => s.name(),
        }
    }
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Function {
    type Err = ParamError;

    /// Reads a name in any case: `sha3-256`, `SHAKE128`, `kt128`, `KT256`,
    /// `ParallelHash128`, `turboshake256`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(standard) = Standard::from_name(s) {
            return Ok(Function::Standard(standard));
        }
        s.parse().map(Function::Tree)
    }
}

/// The parameters of one digest, of either kind: what every entry point of
/// [`Hasher`](crate::Hasher) takes (as `impl Into<Params>`: a
/// [`TreeParams`], a [`StandardParams`], a `Params` or a reference to one),
/// and what a label reads into (`"KT128".parse()`, [`Params::from_label`]).
///
/// The two kinds are the whole of the design (a new standard function is a
/// new [`Standard`], not a new kind), so a `match` on them needs no
/// wildcard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Params {
    /// An LI tree (plain SHA-3 or SHAKE at height 0).
    Tree(TreeParams),
    /// KT128, KT256, TurboSHAKE or ParallelHash.
    Standard(StandardParams),
}

impl Params {
    pub fn function(&self) -> Function {
        match self {
            Params::Tree(p) => Function::Tree(p.algorithm()),
            Params::Standard(p) => Function::Standard(p.standard()),
        }
    }

    /// n, the digest's length in bytes.
    pub fn output_len(&self) -> usize {
        match self {
            Params::Tree(p) => p.output_len(),
            Params::Standard(p) => p.output_len(),
        }
    }

    /// The label that records these parameters beside a digest.
    pub fn label(&self) -> String {
        match self {
            Params::Tree(p) => p.label(),
            Params::Standard(p) => p.label(),
        }
    }

    /// Whether a key was hashed with the message (an LI prefix): the digest
    /// is then a MAC.
    pub fn keyed(&self) -> bool {
        !self.prefix().is_empty()
    }

    /// The LI prefix P (a key: never print it); empty for a standard function.
    pub fn prefix(&self) -> &[u8] {
        match self {
            Params::Tree(p) => p.prefix(),
            Params::Standard(_) => &[],
        }
    }

    /// The same parameters with another output length, where the function's
    /// output length is free (SHAKE, the standard functions).
    pub fn with_output_len(&self, output_len: usize) -> Result<Params, ParamError> {
        Ok(match self {
            Params::Tree(p) => Params::Tree(p.with_output_len(output_len)?),
            Params::Standard(p) => Params::Standard(p.clone().with_output_len(output_len)?),
        })
    }

    /// Whether the output length may be chosen (read off a check line).
    pub fn free_output_len(&self) -> bool {
        match self {
            Params::Tree(p) => p.algorithm().is_xof(),
            Params::Standard(_) => true,
        }
    }

    /// Why no part can be made under these parameters, if none can:
    /// TurboSHAKE is one sponge, with no tree to split. Every other function
    /// has parts ([`Hasher::hash_part`](crate::Hasher::hash_part)).
    pub fn unsplittable(&self) -> Option<String> {
        match self {
            Params::Standard(p) if p.standard().family() == Family::TurboShake => Some(format!(
                "{} is one sponge, with no tree to split into parts (the LI trees, kt128, kt256, \
                 parallelhash128 and parallelhash256 have parts)",
                p.standard()
            )),
            _ => None,
        }
    }
}

impl From<TreeParams> for Params {
    fn from(p: TreeParams) -> Params {
        Params::Tree(p)
    }
}

impl From<StandardParams> for Params {
    fn from(p: StandardParams) -> Params {
        Params::Standard(p)
    }
}

impl From<&TreeParams> for Params {
    fn from(p: &TreeParams) -> Params {
        Params::Tree(p.clone())
    }
}

impl From<&StandardParams> for Params {
    fn from(p: &StandardParams) -> Params {
        Params::Standard(p.clone())
    }
}

impl From<&Params> for Params {
    fn from(p: &Params) -> Params {
        p.clone()
    }
}

/// How an interface spells each option, for the messages that refuse one:
/// the command line's `-H/--height`, Python's `height`.
#[derive(Clone, Copy, Debug)]
pub struct OptionNames {
    pub height: &'static str,
    pub degree: &'static str,
    pub block_size: &'static str,
    /// As the subject of a sentence: `a prefix (--prefix-hex, --prefix-file)`.
    pub prefix: &'static str,
    pub customization: &'static str,
    pub domain: &'static str,
}

/// An option's bytes, read by the interface only once the function is
/// known to take them (a prefix read from a file or hex, a customization
/// string from hex): a function that refuses the option never reads them.
/// The error is a whole message that names the option.
pub type OptionBytes<'a> = Box<dyn FnOnce() -> Result<Vec<u8>, String> + 'a>;

/// The options of one digest as an interface gathers them, each `None`
/// where it was not given: then the function's default applies (an LI
/// tree's height [`TreeParams::DEFAULT_HEIGHT`] and degree
/// [`TreeParams::DEFAULT_DEGREE`], the rate as B, no prefix; a standard
/// function's as [`StandardParams::new`] has them). An option given to a
/// function that does not take it is an error, whatever its value.
///
/// ```
/// use treehash::function::{OptionNames, ParamOptions};
/// const NAMES: OptionNames = OptionNames {
///     height: "height", degree: "degree", block_size: "block_size",
///     prefix: "prefix", customization: "customization", domain: "domain",
/// };
/// let kt = ParamOptions { length: Some(64), ..Default::default() };
/// assert_eq!(kt.build("kt128".parse()?, &NAMES)?.label(), "KT128");
/// let wrong = ParamOptions { height: Some(2), ..Default::default() };
/// assert_eq!(
///     wrong.build("kt128".parse()?, &NAMES).unwrap_err().to_string(),
///     "height does not apply to kt128: its tree is fixed by RFC 9861"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Default)]
pub struct ParamOptions<'a> {
    pub height: Option<u32>,
    pub degree: Option<u64>,
    /// LI's B, or ParallelHash's B.
    pub block_size: Option<usize>,
    /// The output length in bytes.
    pub length: Option<usize>,
    /// LI's prefix P.
    pub prefix: Option<OptionBytes<'a>>,
    /// KT's C or ParallelHash's S.
    pub customization: Option<OptionBytes<'a>>,
    /// TurboSHAKE's D.
    pub domain: Option<u8>,
}

impl ParamOptions<'_> {
    /// The parameters of `function` with these options.
    pub fn build(self, function: Function, names: &OptionNames) -> Result<Params, OptionError> {
        Ok(match function {
            Function::Tree(algorithm) => Params::Tree(self.build_tree(algorithm, names)?),
            Function::Standard(standard) => Params::Standard(self.build_standard(standard, names)?),
        })
    }

    /// The parameters of an LI tree of `algorithm`: the standard functions'
    /// options are refused.
    pub fn build_tree(
        self,
        algorithm: Algorithm,
        names: &OptionNames,
    ) -> Result<TreeParams, OptionError> {
        let standard_only = [
            (names.customization, self.customization.is_some()),
            (names.domain, self.domain.is_some()),
        ];
        if let Some(&(option, _)) = standard_only.iter().find(|(_, given)| *given) {
            return Err(OptionError::StandardOnly {
                option,
                function: algorithm,
            });
        }
        let prefix = match self.prefix {
            Some(read) => read().map_err(OptionError::Value)?,
            None => Vec::new(),
        };
        Ok(TreeParams::with_options(
            algorithm,
            self.height.unwrap_or(TreeParams::DEFAULT_HEIGHT),
            self.degree.unwrap_or(TreeParams::DEFAULT_DEGREE),
            self.block_size,
            prefix,
            self.length,
        )?)
    }

    /// The parameters of a standard function: its tree is fixed by its
    /// document, so the LI options are refused, each with the reason.
    pub fn build_standard(
        self,
        standard: Standard,
        names: &OptionNames,
    ) -> Result<StandardParams, OptionError> {
        let fixed = |option: String| OptionError::Fixed { option, standard };
        if self.height.is_some() {
            return Err(fixed(names.height.into()));
        }
        if self.degree.is_some() {
            return Err(fixed(names.degree.into()));
        }
        if self.prefix.is_some() {
            return Err(OptionError::Prefix {
                prefix: names.prefix,
                customization: names.customization,
                standard,
            });
        }
        let family = standard.family();
        if self.block_size.is_some() && family != Family::ParallelHash {
            return Err(match family {
                Family::Kangaroo => fixed(format!(
                    "{} (its chunks are {} bytes)",
                    names.block_size,
                    crate::standard::KT_CHUNK_LEN
                )),
                _ => OptionError::OneSponge {
                    option: names.block_size,
                    standard,
                },
            });
        }
        let mut params = StandardParams::new(standard);
        if let Some(read) = self.customization {
            params = params.with_customization(read().map_err(OptionError::Value)?)?;
        }
        if let Some(b) = self.block_size {
            params = params.with_block_size(b)?;
        }
        if let Some(d) = self.domain {
            params = params.with_domain(d)?;
        }
        if let Some(n) = self.length {
            params = params.with_output_len(n)?;
        }
        Ok(params)
    }
}

/// Options that do not make parameters, each with the reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OptionError {
    /// A standard function's option given for an LI tree.
    #[error(
        "{option} is for the standard functions ({}), not {function}",
        standard_names()
    )]
    StandardOnly {
        option: &'static str,
        function: Algorithm,
    },
    /// An LI option given for a standard function.
    #[error("{option} does not apply to {standard}: its tree is fixed by {}", standard.document())]
    Fixed { option: String, standard: Standard },
    /// A prefix given for a standard function.
    #[error(
        "{prefix} does not apply to {standard}: {} fixes its input; use {customization} for a \
         customization string",
        standard.document()
    )]
    Prefix {
        prefix: &'static str,
        customization: &'static str,
        standard: Standard,
    },
    /// A block size given for TurboSHAKE.
    #[error("{option} does not apply to {standard}: it is one sponge")]
    OneSponge {
        option: &'static str,
        standard: Standard,
    },
    /// An option's bytes that could not be read, in the interface's words.
    #[error("{0}")]
    Value(String),
    /// A value out of range.
    #[error(transparent)]
    Params(#[from] ParamError),
}

/// The standard functions' names, for the message that lists them.
fn standard_names() -> String {
    Standard::ALL.map(Standard::name).join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_reads_its_own_name() {
        let names: Vec<&str> = Function::all().map(Function::name).collect();
        assert_eq!(names.len(), 12);
        for f in Function::all() {
            assert_eq!(f.name().parse::<Function>().unwrap(), f);
            assert_eq!(f.name().to_uppercase().parse::<Function>().unwrap(), f);
        }
        assert!("kt129".parse::<Function>().is_err());
    }

    const NAMES: OptionNames = OptionNames {
        height: "height",
        degree: "degree",
        block_size: "block_size",
        prefix: "prefix",
        customization: "customization",
        domain: "domain",
    };

    fn bytes(b: &'static [u8]) -> Option<OptionBytes<'static>> {
        Some(Box::new(move || Ok(b.to_vec())))
    }

    fn build(name: &str, options: ParamOptions<'_>) -> Result<Params, OptionError> {
        options.build(name.parse().unwrap(), &NAMES)
    }

    #[test]
    fn options_not_given_are_the_defaults() {
        let tree = build("sha3-256", ParamOptions::default()).unwrap();
        assert_eq!(tree, Params::Tree(TreeParams::default()));
        for standard in Standard::ALL {
            let params = build(standard.name(), ParamOptions::default()).unwrap();
            assert_eq!(params, Params::Standard(StandardParams::new(standard)));
        }
    }

    #[test]
    fn options_given_are_applied() {
        let tree = ParamOptions {
            height: Some(2),
            degree: Some(3),
            block_size: Some(16),
            length: Some(40),
            prefix: bytes(b"key"),
            ..Default::default()
        };
        let want = TreeParams::with_options(
            Algorithm::Shake128,
            2,
            3,
            Some(16),
            b"key".to_vec(),
            Some(40),
        );
        assert_eq!(
            build("shake128", tree).unwrap(),
            Params::Tree(want.unwrap())
        );
        let ph = ParamOptions {
            block_size: Some(12),
            length: Some(7),
            customization: bytes(b"S"),
            ..Default::default()
        };
        let want = StandardParams::new(Standard::ParallelHash256)
            .with_block_size(12)
            .and_then(|p| p.with_output_len(7))
            .and_then(|p| p.with_customization(b"S".to_vec()))
            .unwrap();
        assert_eq!(
            build("parallelhash256", ph).unwrap(),
            Params::Standard(want)
        );
        let ts = ParamOptions {
            domain: Some(6),
            ..Default::default()
        };
        assert_eq!(
            build("turboshake128", ts).unwrap().label(),
            "TurboSHAKE128(D=06)"
        );
    }

    #[test]
    fn options_a_function_does_not_take_are_refused_unread() {
        let unread = || -> Option<OptionBytes<'static>> {
            Some(Box::new(|| {
                panic!("the bytes of a refused option were read")
            }))
        };
        let cases: Vec<(&str, ParamOptions<'_>, &str)> = vec![
            (
                "sha3-256",
                ParamOptions {
                    customization: unread(),
                    ..Default::default()
                },
                "customization is for the standard functions (kt128, kt256, parallelhash128, \
                 parallelhash256, turboshake128, turboshake256), not sha3-256",
            ),
            (
                "shake256",
                ParamOptions {
                    domain: Some(0x1f),
                    prefix: unread(),
                    ..Default::default()
                },
                "domain is for the standard functions (kt128, kt256, parallelhash128, \
                 parallelhash256, turboshake128, turboshake256), not shake256",
            ),
            (
                "kt128",
                ParamOptions {
                    height: Some(8),
                    ..Default::default()
                },
                "height does not apply to kt128: its tree is fixed by RFC 9861",
            ),
            (
                "parallelhash128",
                ParamOptions {
                    degree: Some(4),
                    customization: unread(),
                    ..Default::default()
                },
                "degree does not apply to parallelhash128: its tree is fixed by NIST SP 800-185",
            ),
            (
                "kt256",
                ParamOptions {
                    prefix: unread(),
                    ..Default::default()
                },
                "prefix does not apply to kt256: RFC 9861 fixes its input; use customization \
                 for a customization string",
            ),
            (
                "kt128",
                ParamOptions {
                    block_size: Some(8192),
                    ..Default::default()
                },
                "block_size (its chunks are 8192 bytes) does not apply to kt128: its tree is \
                 fixed by RFC 9861",
            ),
            (
                "turboshake256",
                ParamOptions {
                    block_size: Some(8),
                    ..Default::default()
                },
                "block_size does not apply to turboshake256: it is one sponge",
            ),
            (
                "kt128",
                ParamOptions {
                    domain: Some(0x1f),
                    ..Default::default()
                },
                "kt128 takes no domain byte",
            ),
            (
                "turboshake128",
                ParamOptions {
                    customization: bytes(b"x"),
                    ..Default::default()
                },
                "turboshake128 takes no customization string",
            ),
            (
                "turboshake128",
                ParamOptions {
                    domain: Some(0x80),
                    ..Default::default()
                },
                "domain byte 0x80 is out of range for TurboSHAKE (0x01 to 0x7f)",
            ),
            (
                "sha3-512",
                ParamOptions {
                    prefix: Some(Box::new(|| Err("prefix: unreadable".into()))),
                    ..Default::default()
                },
                "prefix: unreadable",
            ),
        ];
        for (name, options, message) in cases {
            assert_eq!(build(name, options).unwrap_err().to_string(), message);
        }
    }
}
