//! Every function treehash computes under one name and one set of
//! parameters: the LI trees of the six FIPS 202 functions
//! ([`TreeParams`]) and the standard functions ([`StandardParams`]).

use std::fmt;
use std::str::FromStr;

use crate::params::{Algorithm, ParamError, TreeLabel, TreeParams};
use crate::standard::{Standard, StandardLabel, StandardParams};

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

/// The parameters of one digest.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Params {
    Tree(TreeParams),
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

    /// The parameters as a reference to their kind.
    pub fn as_ref(&self) -> ParamsRef<'_> {
        match self {
            Params::Tree(p) => ParamsRef::Tree(p),
            Params::Standard(p) => ParamsRef::Standard(p),
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

/// Borrowed parameters of either kind: what the hasher's entry points take
/// (through [`AsParams`]) and dispatch on.
#[derive(Clone, Copy, Debug)]
pub enum ParamsRef<'a> {
    Tree(&'a TreeParams),
    Standard(&'a StandardParams),
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::params::TreeParams {}
    impl Sealed for crate::standard::StandardParams {}
    impl Sealed for super::Params {}
}

/// Parameters a [`Hasher`](crate::Hasher) hashes with: [`TreeParams`],
/// [`StandardParams`] or [`Params`].
pub trait AsParams: sealed::Sealed + Sync {
    fn as_params(&self) -> ParamsRef<'_>;
}

impl AsParams for TreeParams {
    fn as_params(&self) -> ParamsRef<'_> {
        ParamsRef::Tree(self)
    }
}

impl AsParams for StandardParams {
    fn as_params(&self) -> ParamsRef<'_> {
        ParamsRef::Standard(self)
    }
}

impl AsParams for Params {
    fn as_params(&self) -> ParamsRef<'_> {
        self.as_ref()
    }
}

/// A label read from a tagged line: an LI tree's or a standard function's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Label {
    Tree(TreeLabel),
    Standard(StandardLabel),
}

impl Label {
    /// Whether the label says a prefix (key) was hashed (`,P`).
    pub fn keyed(&self) -> bool {
        matches!(self, Label::Tree(l) if l.keyed)
    }

    /// The parameters the label describes, with `prefix` (only for a keyed
    /// tree label) and `output_len`.
    pub fn to_params(&self, prefix: Vec<u8>, output_len: usize) -> Result<Params, ParamError> {
        Ok(match self {
            Label::Tree(l) => Params::Tree(l.to_params(prefix, output_len)?),
            Label::Standard(l) => Params::Standard(l.to_params(output_len)?),
        })
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Tree(l) => l.fmt(f),
            Label::Standard(l) => l.fmt(f),
        }
    }
}

/// A label that could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unrecognised label '{0}'")]
pub struct LabelError(pub String);

impl FromStr for Label {
    type Err = LabelError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Ok(label) = s.parse() {
            return Ok(Label::Standard(label));
        }
        s.parse()
            .map(Label::Tree)
            .map_err(|_| LabelError(s.to_string()))
    }
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

    #[test]
    fn labels_of_both_kinds_are_read() {
        for text in [
            "SHA3-256",
            "SHA3-256-LI(H=8,D=4,B=136)",
            "KT128",
            "TurboSHAKE256(D=1F)",
        ] {
            assert_eq!(text.parse::<Label>().unwrap().to_string(), text);
        }
        assert!("MD5".parse::<Label>().is_err());
    }
}
