//! What a caller chooses about the GPUs, and the defaults: which devices,
//! how a file's bytes reach them, which leaf kernel, how long a transfer;
//! and how a producer describes bytes already on a device ([`DeviceBytes`]).
//! Nothing here calls CUDA.

use std::fmt;
use std::str::FromStr;

/// Bytes per transfer by default: what goes to the device at once through
/// one slot of the ring, to be hashed there while the next one copies.
pub const DEFAULT_TRANSFER_BYTES: usize = 32 << 20;

/// Bytes in device memory, as a producer describes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceBytes {
    /// The address of the first byte (a `CUdeviceptr`).
    pub ptr: u64,
    /// Their number.
    pub len: usize,
    /// The CUDA stream (a `CUstream`) whose work so far must end before
    /// they are read: the producer's. `None` when they are ready. As in
    /// `__cuda_array_interface__` v3, 1 is the legacy default CUDA stream
    /// and 2 the calling thread's per-thread default CUDA stream (the
    /// driver's `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD`); 0 is the
    /// default CUDA stream too.
    pub stream: Option<u64>,
}

/// How a file's bytes reach the device. Bytes in memory (a slice, a
/// [`Stream`](crate::Stream)'s updates, a sequential input's pieces) are
/// always staged, and so are parts: the mode is for a file's digest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CopyMode {
    /// CPU threads copy each transfer into pinned buffers, which the GPU reads.
    #[default]
    Staging,
    /// The file is mapped a window at a time, each window is pinned
    /// (cuMemHostRegister, read-only) and the GPU reads it directly, where
    /// one GPU owns every leaf of an LI tree; otherwise it is staged.
    Register,
    /// CPU threads read a file's runs into small pinned buffers of their
    /// own, each copied to the device at once on the thread's own CUDA
    /// stream; bytes in memory are staged.
    Readers,
}

/// Which CUDA devices to use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Devices {
    /// Every visible device.
    #[default]
    All,
    /// These ordinals, in this order.
    List(Vec<usize>),
}

impl fmt::Display for Devices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Devices::All => f.write_str("all"),
            Devices::List(list) => {
                let names: Vec<String> = list.iter().map(usize::to_string).collect();
                f.write_str(&names.join(","))
            }
        }
    }
}

impl FromStr for Devices {
    type Err = String;

    /// `all`, or ordinals separated by commas (`0`, `0,1`), each once.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("all") {
            return Ok(Devices::All);
        }
        let mut list = Vec::new();
        for part in s.split(',') {
            let ordinal: usize = part.trim().parse().map_err(|_| {
                format!("'{part}' is not a device number (expected all, or numbers like 0,1)")
            })?;
            if list.contains(&ordinal) {
                return Err(format!("device {ordinal} is listed twice"));
            }
            list.push(ordinal);
        }
        Ok(Devices::List(list))
    }
}

/// Trees with at most this many leaves absorb one warp per leaf; larger
/// ones one thread per leaf, which then fills the GPU and outruns the warps
/// (docs/decisions/0013-warp-per-leaf-up-to-2048.md; docs/PERFORMANCE.md,
/// "GPU").
pub const WARP_PER_LEAF_MAX_LEAVES: u64 = 2048;

/// How the leaves of a tree are spread over the GPU's threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafKernel {
    /// One thread holds one leaf's whole state (`absorb_leaves`): best when
    /// there are enough leaves to fill the GPU.
    ThreadPerLeaf,
    /// One warp shares one leaf's state, a lane of it per thread
    /// (`absorb_leaves_warp`, kernels/few_leaves.cu): best for few leaves.
    WarpPerLeaf,
}

impl LeafKernel {
    /// The faster kernel for a tree of `leaves` leaves.
    pub fn for_leaves(leaves: u64) -> LeafKernel {
        if leaves <= WARP_PER_LEAF_MAX_LEAVES {
            LeafKernel::WarpPerLeaf
        } else {
            LeafKernel::ThreadPerLeaf
        }
    }
}

/// How each device is started.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Start {
    /// Bytes per transfer (`None`: the default).
    pub(crate) transfer_bytes: Option<usize>,
    /// Tests only: every message fails after this many transfers.
    pub(crate) fail_after_transfers: Option<usize>,
}

/// Where a GPU stands among the `count` that begin one message side by
/// side: the `index`-th.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SideBySide {
    pub(crate) index: usize,
    pub(crate) count: usize,
}

impl SideBySide {
    /// A GPU that takes an input alone.
    pub(crate) const ALONE: SideBySide = SideBySide { index: 0, count: 1 };
}
