//! Data already in GPU memory ([`Hasher::hash_device`]): the GPU that holds
//! it is found, and the function's own device path hashes it there
//! (`gpu::hash_tree` for an LI tree, `gpu::hash_standard` for the standard
//! functions).

use std::time::Instant;

use crate::error::HashError;
use crate::function::Params;
use crate::gpu::{self, DeviceBytes, KeepCurrentContext, guard};
use crate::progress::{EngineId, EngineShare};
use crate::timings::Timings;

use super::{BackendUsed, HashOutput, Hasher};

/// [`Hasher::hash_device`]'s work, under its safety contract.
pub(super) fn hash_device(
    hasher: &Hasher,
    params: &Params,
    bytes: DeviceBytes,
) -> Result<HashOutput, HashError> {
    let start = Instant::now();
    let _kept = KeepCurrentContext::new();
    let first = hasher.gpu()?;
    let gpu = guard("reading a device pointer", || {
        gpu::holder(first, &bytes, |ordinal| hasher.fleet().open_device(ordinal))
    })?;
    let mut timings = Timings::default();
    let (digest, backend) = guard("hashing on the GPU", || -> Result<_, HashError> {
        match params {
            Params::Tree(params) => Ok((
                gpu::hash_tree(gpu, params, &bytes, &mut timings)?,
                BackendUsed::Gpu,
            )),
            Params::Standard(params) => {
                gpu::hash_standard(gpu, hasher.cpu(), params, &bytes, &mut timings)
            }
        }
    })?;
    timings.total = start.elapsed();
    let engine = match backend {
        BackendUsed::Cpu => EngineId::Cpu,
        _ => gpu.info().engine_id(),
    };
    Ok(HashOutput {
        digest,
        bytes: bytes.len as u64,
        backend,
        timings,
        shares: vec![EngineShare {
            engine,
            bytes: bytes.len as u64,
            busy: timings.leaves,
        }],
        fallback_note: None,
    })
}
