//! Helpers of the tool's tests (cli/tests/*.rs): running the binary and
//! reading what it printed in cli.rs; the spec's test input, the reference
//! digest and the part helpers are the library's tests' own, included from
//! tests/common/ so that each helper has one home.
#![allow(dead_code)]

pub mod cli;
#[path = "../../../tests/common/inputs.rs"]
mod inputs;
#[path = "../../../tests/common/parts.rs"]
pub mod parts;

// Not every test binary uses every one.
#[allow(unused_imports)]
pub use inputs::{random_bytes, reference_digest, reference_node, reference_tree, spec_input};
