//! The CUDA kernels (kernels/*.cu, joined by build.rs) and how they are
//! launched: compiled by NVRTC for the device's own architecture, one
//! function's kernels at a time and only when first needed, then loaded. The PTX is kept in a disk cache, so later
//! processes skip NVRTC (and the driver's own cache skips the PTX JIT).
//!
//! Two translation units: the LI kernels of each FIPS 202 function
//! (`TreeKernels`), and the chunk kernel of each standard function's
//! chunk sponge (`ChunkKernel`, kernels/chunks.cu).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr,
    LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::{CompileOptions, Ptx};

use crate::params::Algorithm;
use crate::sponge::{SpongeSpec, plain_hash};
use crate::tree::{Dealing, LeafLengths};

// The chunk sponges the GPU runs, for tests/kernels_compile.rs too.
pub use super::kernel_sets::CHUNK_SPECS;
use super::kernel_sets::{KernelSet, chunk_name};
use super::{Context, GpuError, LeafKernel};

/// The kernel source as NVRTC sees it.
pub(crate) const SOURCE: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.cu"));
/// The chunk kernel's source (kernels/keccak.cuh and kernels/chunks.cu).
pub(crate) const CHUNK_SOURCE: &str = include_str!(concat!(env!("OUT_DIR"), "/chunk_kernels.cu"));

/// True when libnvrtc can be loaded (it needs no GPU).
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// Threads per block of every launch; passed to the kernels'
/// `__launch_bounds__` too (the kernels are register-heavy).
pub(crate) const THREADS_PER_BLOCK: u32 = 128;

/// The kernels' entry points, the same for every function.
pub const ENTRY_POINTS: [&str; 4] = [
    "absorb_leaves",
    "absorb_leaves_warp",
    "finalize_leaves",
    "hash_nodes",
];

/// The chunk kernel's entry point.
pub const CHUNK_ENTRY_POINT: &str = "chunk_values";

/// How a leaf kernel is launched.
impl LeafKernel {
    /// The launch that runs this kernel on `leaves` leaves.
    pub(super) fn launch_config(self, leaves: u64) -> LaunchConfig {
        match self {
            LeafKernel::ThreadPerLeaf => launch_config(leaves),
            // One warp per block spreads the leaves over every multiprocessor:
            // warps that share one contend for its shuffle unit.
            LeafKernel::WarpPerLeaf => LaunchConfig {
                grid_dim: (leaves.max(1) as u32, 1, 1),
                block_dim: (32, 1, 1),
                shared_mem_bytes: 0,
            },
        }
    }
}

/// The `-D` defines that tell either translation unit which sponge it
/// runs: `spec`'s rounds, rate, output length and domain byte (an
/// algorithm's [`Algorithm::sponge_spec`] for the LI kernels, a chunk
/// sponge for the chunk kernel), and the launch's block size. The PTX
/// cache's key holds them, so a changed sponge is never loaded stale.
fn defines(spec: &SpongeSpec) -> [String; 5] {
    [
        format!("-DTREEHASH_ROUNDS={}", spec.rounds().count()),
        format!("-DTREEHASH_RATE={}", spec.rate()),
        format!("-DTREEHASH_CV={}", spec.output_len()),
        format!("-DTREEHASH_DS={:#04x}", spec.domain()),
        format!("-DTREEHASH_THREADS_PER_BLOCK={THREADS_PER_BLOCK}"),
    ]
}

/// Compiles `algorithm`'s kernels to PTX for `arch` (for example `sm_90`).
pub fn compile(arch: &str, algorithm: Algorithm) -> Result<Ptx, GpuError> {
    compile_source(
        arch,
        SOURCE,
        "treehash.cu",
        &defines(&algorithm.sponge_spec()),
    )
    .map_err(|e| GpuError::new(format!("compiling the {algorithm} kernels for {arch}: {e}")))
}

/// Compiles the chunk kernel of the sponge `spec` (any [`SpongeSpec`]) to PTX
/// for `arch`.
pub fn compile_chunks(arch: &str, spec: &SpongeSpec) -> Result<Ptx, GpuError> {
    compile_source(arch, CHUNK_SOURCE, "chunks.cu", &defines(spec)).map_err(|e| {
        GpuError::new(format!(
            "compiling the chunk kernel {} for {arch}: {e}",
            chunk_name(spec)
        ))
    })
}

/// NVRTC on `source` with `defines`.
fn compile_source(
    arch: &str,
    source: &str,
    name: &str,
    defines: &[String],
) -> Result<Ptx, GpuError> {
    if !nvrtc_present() {
        return Err(GpuError::new(
            "NVRTC (libnvrtc.so) was not found; it compiles the kernels at run time",
        ));
    }
    let mut options = vec![format!("--gpu-architecture={arch}"), "-std=c++17".into()];
    options.extend_from_slice(defines);
    let options = CompileOptions {
        options,
        name: Some(name.into()),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(source, options).map_err(|e| GpuError::new(e.to_string()))
}

/// A launch of `threads` threads, rounded up to whole blocks.
pub(super) fn launch_config(threads: u64) -> LaunchConfig {
    let blocks = threads.div_ceil(u64::from(THREADS_PER_BLOCK)).max(1);
    LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (THREADS_PER_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The raw device address of a buffer, for kernel arguments.
pub(super) fn address<T>(buffer: &CudaSlice<T>, stream: &CudaStream) -> u64 {
    buffer.device_ptr(stream).0
}

/// The kernels of one algorithm.
pub(crate) struct TreeKernels {
    pub(crate) absorb_leaves: CudaFunction,
    pub(crate) absorb_leaves_warp: CudaFunction,
    pub(crate) finalize_leaves: CudaFunction,
    pub(crate) hash_nodes: CudaFunction,
    _module: Arc<CudaModule>,
}

/// The chunk kernel of one chunk sponge.
pub(crate) struct ChunkKernel {
    pub(crate) function: CudaFunction,
    pub(crate) spec: SpongeSpec,
    _module: Arc<CudaModule>,
}

impl ChunkKernel {
    /// The launch for `count` chunks: a thread each, a warp per 32.
    pub(super) fn launch_config(&self, count: u64) -> LaunchConfig {
        launch_config(count)
    }
}

/// Each algorithm's kernels and each chunk sponge's, compiled and loaded on
/// first use.
pub(crate) struct Kernels {
    ctx: Arc<CudaContext>,
    arch: String,
    /// Indexed by [`Algorithm::index`].
    loaded: [OnceLock<Result<TreeKernels, GpuError>>; Algorithm::ALL.len()],
    chunks: [OnceLock<Result<ChunkKernel, GpuError>>; CHUNK_SPECS.len()],
}

// SAFETY: `LeafLengths` is `#[repr(C)]` and four `u64`s, the layout of
// `struct LeafLengths` (kernels/tree.cuh), which the kernels take by value.
unsafe impl DeviceRepr for LeafLengths {}
const _: () = assert!(size_of::<LeafLengths>() == 32);

impl TreeKernels {
    /// The leaf kernel of the given shape.
    pub(crate) fn absorb(&self, kernel: LeafKernel) -> &CudaFunction {
        match kernel {
            LeafKernel::ThreadPerLeaf => &self.absorb_leaves,
            LeafKernel::WarpPerLeaf => &self.absorb_leaves_warp,
        }
    }

    /// Enqueues the leaf kernel `kernel` on the CUDA stream `stream` over
    /// the span of `len` bytes at device address `span` (a transfer, or
    /// input already on the device): the next bytes of a message that
    /// `dealing` deals to its leaves, `message_len` bytes of which (a whole
    /// number of blocks) the lane-major leaf states at device address
    /// `states` have absorbed.
    ///
    /// # Safety
    /// `span` must hold `len` readable bytes, 8-byte aligned, and `states`
    /// 25 words for each of `dealing`'s leaves, until the launch has run.
    pub(super) unsafe fn absorb_span(
        &self,
        stream: &CudaStream,
        kernel: LeafKernel,
        dealing: Dealing,
        states: u64,
        (span, len): (u64, u64),
        message_len: u64,
    ) -> Result<(), GpuError> {
        let (leaf_count, block_size) = (dealing.leaf_count(), dealing.block_size());
        let first_leaf = dealing.leaf_of_block(dealing.blocks(message_len));
        let absorbed: LeafLengths = dealing.leaf_lengths(message_len);
        let mut launch = stream.launch_builder(self.absorb(kernel));
        launch
            .arg(&states)
            .arg(&leaf_count)
            .arg(&span)
            .arg(&len)
            .arg(&block_size)
            .arg(&first_leaf)
            .arg(&absorbed);
        // The leaves the span's blocks reach: a thread (or warp) each.
        let leaves = dealing.leaves_holding(dealing.blocks(len));
        // SAFETY: the arguments match the kernels' signature
        // (kernels/treehash.cu); the caller vouches for the buffers.
        unsafe { launch.launch(kernel.launch_config(leaves)) }
            .context("launching the leaf kernel")?;
        Ok(())
    }
}

impl Kernels {
    pub(crate) fn new(ctx: Arc<CudaContext>, arch: String) -> Kernels {
        Kernels {
            ctx,
            arch,
            loaded: Default::default(),
            chunks: Default::default(),
        }
    }

    /// Readies `set` (compiled or loaded now unless it was): the time spent,
    /// if any.
    pub(crate) fn ready(&self, set: KernelSet) -> Result<Duration, GpuError> {
        match set {
            KernelSet::Tree(algorithm) => self.get(algorithm).map(|(_, spent)| spent),
            KernelSet::Chunks(spec) => self.chunk_kernel(&spec).map(|(_, spent)| spent),
        }
    }

    /// The chunk kernel of `spec`, and the time spent compiling and loading
    /// it if that happened in this call.
    pub(crate) fn chunk_kernel(
        &self,
        spec: &SpongeSpec,
    ) -> Result<(&ChunkKernel, Duration), GpuError> {
        let Some(index) = CHUNK_SPECS.iter().position(|s| s == spec) else {
            return Err(GpuError::new(format!(
                "the GPU has no chunk kernel for {}",
                chunk_name(spec)
            )));
        };
        let mut spent = Duration::ZERO;
        let kernel = self.chunks[index].get_or_init(|| {
            let start = Instant::now();
            let loaded = self.compile_and_load_chunks(spec);
            spent = start.elapsed();
            loaded
        });
        kernel.as_ref().map(|k| (k, spent)).map_err(Clone::clone)
    }

    fn compile_and_load_chunks(&self, spec: &SpongeSpec) -> Result<ChunkKernel, GpuError> {
        let key = format!("{CHUNK_SOURCE}\n{}\n{:?}", self.arch, defines(spec));
        let cache = cache_path(&chunk_name(spec), &self.arch, &key);
        if let Some(ptx) = cache.as_ref().and_then(|p| cached_text(p))
            && let Ok(kernel) = self.load_chunks(Ptx::from_src(ptx), spec)
        {
            return Ok(kernel);
        }
        let ptx = compile_chunks(&self.arch, spec)?;
        if let Some(path) = &cache {
            store(path, &ptx.to_src());
        }
        self.load_chunks(ptx, spec)
    }

    fn load_chunks(&self, ptx: Ptx, spec: &SpongeSpec) -> Result<ChunkKernel, GpuError> {
        let module = self
            .ctx
            .load_module(ptx)
            .map_err(|e| GpuError::driver("loading the chunk kernel's module", e))?;
        let function = module
            .load_function(CHUNK_ENTRY_POINT)
            .map_err(|e| GpuError::driver(&format!("finding kernel {CHUNK_ENTRY_POINT}"), e))?;
        Ok(ChunkKernel {
            function,
            spec: *spec,
            _module: module,
        })
    }

    /// The kernels of `algorithm`, and the time spent compiling and loading
    /// them if that happened in this call.
    pub(crate) fn get(&self, algorithm: Algorithm) -> Result<(&TreeKernels, Duration), GpuError> {
        let mut spent = Duration::ZERO;
        let kernels = self.loaded[algorithm.index()].get_or_init(|| {
            let start = Instant::now();
            let loaded = self.compile_and_load(algorithm);
            spent = start.elapsed();
            loaded
        });
        kernels.as_ref().map(|k| (k, spent)).map_err(Clone::clone)
    }

    fn compile_and_load(&self, algorithm: Algorithm) -> Result<TreeKernels, GpuError> {
        let key = format!(
            "{SOURCE}\n{}\n{:?}",
            self.arch,
            defines(&algorithm.sponge_spec())
        );
        let cache = cache_path(&format!("kernels-{algorithm}"), &self.arch, &key);
        if let Some(ptx) = cache.as_ref().and_then(|p| cached_text(p))
            && let Ok(kernels) = self.load(Ptx::from_src(ptx))
        {
            return Ok(kernels);
        }
        let ptx = compile(&self.arch, algorithm)?;
        if let Some(path) = &cache {
            store(path, &ptx.to_src());
        }
        self.load(ptx)
    }

    fn load(&self, ptx: Ptx) -> Result<TreeKernels, GpuError> {
        let module = self
            .ctx
            .load_module(ptx)
            .map_err(|e| GpuError::driver("loading the kernel module", e))?;
        let [absorb, absorb_warp, finalize, nodes] = ENTRY_POINTS.map(|name| {
            module
                .load_function(name)
                .map_err(|e| GpuError::driver(&format!("finding kernel {name}"), e))
        });
        Ok(TreeKernels {
            absorb_leaves: absorb?,
            absorb_leaves_warp: absorb_warp?,
            finalize_leaves: finalize?,
            hash_nodes: nodes?,
            _module: module,
        })
    }
}

/// Where compiled PTX is cached, in [`cache_dir`]: `name`, the
/// architecture and a hash of `key` (the source, the architecture and the
/// defines), so that a changed kernel is never loaded from a stale file.
fn cache_path(name: &str, arch: &str, key: &str) -> Option<PathBuf> {
    let dir = cache_dir()?;
    let id = hex::encode(&plain_hash(Algorithm::Sha3_256, key.as_bytes(), 32)[..12]);
    Some(dir.join(format!("{name}-{arch}-{id}.ptx")))
}

/// A cache file's text, where this user made it (`output_file::read_cache`).
fn cached_text(path: &std::path::Path) -> Option<String> {
    let (bytes, _) = crate::output_file::read_cache(path)?;
    String::from_utf8(bytes).ok()
}

/// treehash's cache directory: `$TREEHASH_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/treehash`, else `~/.cache/treehash`.
pub(crate) fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("TREEHASH_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("treehash")))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/treehash")))
}

/// Writes a cache file ([`crate::output_file::write_cache`]: whole or not
/// at all, never through a link planted at its name); a cache that cannot
/// be written is skipped.
pub(crate) fn store(path: &Path, text: &str) {
    let _ = crate::output_file::write_cache(path, text.as_bytes());
}
