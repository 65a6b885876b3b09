//! The end of a tree on the device: pad the leaves, hash each parent level
//! (one launch per level, one thread per node), hash the root, and copy back
//! only the digest.

use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};

use crate::params::TreeParams;
use crate::tree::Dealing;

use super::kernels::{TreeKernels, address, launch_config};
use super::{Context, GpuBackend, GpuError};

/// The digest of a tree whose leaves have absorbed `message_len` bytes of M.
pub(super) fn finish_tree(
    gpu: &GpuBackend,
    kernels: &TreeKernels,
    params: &TreeParams,
    states: &CudaSlice<u64>,
    message_len: u64,
) -> Result<Vec<u8>, GpuError> {
    let leaf_count = params.leaf_count();
    let mut level = finalize(gpu, kernels, params, states, leaf_count, message_len)?;
    if params.height() > 0 {
        let c = params.algorithm().chaining_len() as u32;
        let degree = params.degree();
        let mut nodes = leaf_count;
        while nodes > degree {
            nodes /= degree;
            let parents = alloc(gpu, nodes * u64::from(c))?;
            hash_nodes(gpu, &kernels.hash_nodes, &level, nodes, degree, &parents, c)?;
            level = parents;
        }
        let root = alloc(gpu, params.output_len() as u64)?;
        let n = params.output_len() as u32;
        hash_nodes(gpu, &kernels.hash_nodes, &level, 1, degree, &root, n)?;
        level = root;
    }
    copy_back(gpu, &level, params.output_len(), "the digest")
}

/// The outputs of the first `count` leaves of a tree of `leaf_count`
/// leaves that absorbed `message_len` bytes, copied back (the host reduces
/// a tree shared between engines).
pub(super) fn leaf_outputs(
    gpu: &GpuBackend,
    kernels: &TreeKernels,
    params: &TreeParams,
    states: &CudaSlice<u64>,
    leaf_count: u64,
    message_len: u64,
    count: u64,
) -> Result<Vec<u8>, GpuError> {
    let level = finalize(gpu, kernels, params, states, leaf_count, message_len)?;
    let len = count as usize * params.leaf_output_len();
    copy_back(gpu, &level, len, "the leaf outputs")
}

/// The first `len` bytes of `buffer`, once the compute stream got there.
fn copy_back(
    gpu: &GpuBackend,
    buffer: &CudaSlice<u8>,
    len: usize,
    what: &str,
) -> Result<Vec<u8>, GpuError> {
    let mut host = vec![0u8; len];
    let stream = &gpu.compute;
    stream
        .memcpy_dtoh(&buffer.slice(..len), &mut host)
        .and_then(|()| stream.synchronize())
        .context(&format!("copying {what} back"))?;
    Ok(host)
}

/// Pads the `leaf_count` leaves whose states are `states`: their outputs.
fn finalize(
    gpu: &GpuBackend,
    kernels: &TreeKernels,
    params: &TreeParams,
    states: &CudaSlice<u64>,
    leaf_count: u64,
    message_len: u64,
) -> Result<CudaSlice<u8>, GpuError> {
    let stream = &gpu.compute;
    let leaf_out = params.leaf_output_len() as u32;
    let level = alloc(gpu, leaf_count * u64::from(leaf_out))?;
    let (states, out) = (address(states, stream), address(&level, stream));
    let dealing = Dealing::new(params.block_size() as u64, leaf_count);
    let lengths = dealing.leaf_lengths(message_len);
    let mut launch = stream.launch_builder(&kernels.finalize_leaves);
    launch
        .arg(&states)
        .arg(&leaf_count)
        .arg(&lengths)
        .arg(&out)
        .arg(&leaf_out);
    // SAFETY: arguments match finalize_leaves; the states hold 25 words for
    // each of the `leaf_count` leaves, `level` their outputs.
    unsafe { launch.launch(launch_config(leaf_count)) }.context("launching finalize_leaves")?;
    Ok(level)
}

fn alloc(gpu: &GpuBackend, bytes: u64) -> Result<CudaSlice<u8>, GpuError> {
    gpu.compute
        .alloc_zeros::<u8>(bytes as usize)
        .map_err(|e| GpuError::driver(&format!("allocating {bytes} bytes on the device"), e))
}

/// One level: `nodes` nodes, each hashing `degree` consecutive chaining
/// values of `children` into `out_len` bytes of `out`.
fn hash_nodes(
    gpu: &GpuBackend,
    kernel: &CudaFunction,
    children: &CudaSlice<u8>,
    nodes: u64,
    degree: u64,
    out: &CudaSlice<u8>,
    out_len: u32,
) -> Result<(), GpuError> {
    let stream = &gpu.compute;
    let (children, out) = (address(children, stream), address(out, stream));
    let mut launch = stream.launch_builder(kernel);
    launch
        .arg(&children)
        .arg(&nodes)
        .arg(&degree)
        .arg(&out)
        .arg(&out_len);
    // SAFETY: arguments match hash_nodes; `children` holds nodes·D chaining
    // values and `out` nodes outputs of out_len bytes.
    unsafe { launch.launch(launch_config(nodes)) }.context("launching hash_nodes")?;
    Ok(())
}
