//! Hashing one part: one engine owns the part's leaves from the first
//! byte, and every piece of the file reaches it unread, so that it reads
//! only its own run of each stripe (`Piece::Unread`, `tree::Dealing::owned_runs`).
//! The OS kernel is asked to read those runs a few pieces ahead, and nothing
//! else. Its leaves' outputs are then reduced to the roots of the part's
//! whole subtrees.

use std::fs::File;
use std::io::Read;
use std::ops::Range;
use std::path::Path;

use super::format::key_check;
use super::nodes::Nodes;
use super::plan::{Subtrees, bytes_read, head, leaves_per_node, part_leaves, subtrees};
use super::{Body, Made, Part, PartFile, TreePart};
use crate::engine::LeafEngine;
use crate::error::HashError;
use crate::gpu::CopyMode;
use crate::hasher::{BackendUsed, Hasher};
use crate::input::{InputFile, Source, Stamp};
use crate::message::{self, Piece};
use crate::params::TreeParams;
use crate::progress::Progress;
use crate::timings::{Timings, timed};
use crate::tree::Dealing;

/// Pieces whose runs the OS kernel is asked to read ahead of the engine.
const PIECES_AHEAD: u64 = 2;

/// A part and how it was made.
#[derive(Clone, Debug)]
pub struct PartOutput {
    /// The part, to be written ([`Part::to_bytes`]) and joined.
    pub part: Part,
    /// Bytes of the file it read.
    pub bytes_read: u64,
    /// The backend that hashed it.
    pub backend: BackendUsed,
    /// Where the time went, phase by phase.
    pub timings: Timings,
    /// Set when `auto` redid the part on the CPU because the GPU failed: why.
    pub fallback_note: Option<String>,
}

/// The file a part reads.
pub(super) enum Opened {
    File(InputFile),
    /// A regular file that is empty: nothing to read (the input path takes
    /// such files for sequential inputs, as /proc's report size 0).
    Empty(File),
}

impl Hasher {
    /// The leaves part `part.index` of `part.count` owns, of an LI tree
    /// of `part.file` ([`Hasher::hash_part`]): the outputs of those
    /// leaves, read from the file's runs of them alone, reduced to the
    /// roots of the part's whole subtrees.
    pub(super) fn tree_part(
        &self,
        params: &TreeParams,
        part: PartFile<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Made, HashError> {
        let PartFile {
            file,
            file_len,
            index,
            count,
        } = part;
        let leaves = part_leaves(params.leaf_count(), count, index);
        let message_len = params.prefix().len() as u64 + file_len;
        let holding = Dealing::of(params).leaves_with_blocks(message_len);
        let read_len = bytes_read(params, &leaves, file_len);
        progress.start(Some(read_len));
        let own_holding = holding.clamp(leaves.start, leaves.end) > leaves.start;
        let whole = leaves == (0..params.leaf_count());
        let (mut made, mut note, mut backend) =
            (Leaves::Outputs(Vec::new()), None, BackendUsed::Cpu);
        if own_holding || whole {
            let on_gpu = self.li_part_on_gpu(read_len, params.height() > 0);
            let gpu =
                |p: &dyn Progress, t: &mut Timings| self.part_on_gpu(params, file, &leaves, p, t);
            let cpu =
                |p: &dyn Progress, t: &mut Timings| self.part_on_cpu(params, file, &leaves, p, t);
            (made, note) = self.part_on_engines(on_gpu, progress, timings, gpu, cpu)?;
            if on_gpu && note.is_none() {
                backend = BackendUsed::Gpu;
            }
        }
        let cpu = self.cpu();
        let values = timed(&mut timings.reduce, || {
            // From a thread that is no rayon worker, as every wait on the pool.
            cpu.run_pieces(|| {
                let whole =
                    |children: &[u8], out: &mut [u8]| cpu.whole_nodes(params, children, out);
                let nodes = Nodes::with_whole_nodes(params, &whole);
                let pool = cpu.start_pool()?;
                Ok::<_, HashError>(
                    pool.install(|| part_values(params, &nodes, &leaves, holding, made)),
                )
            })
        })?;
        let tree = TreePart {
            params: without_prefix(params)?,
            key_check: params.has_prefix().then(|| key_check(params.prefix())),
            leaves,
            holding,
            values,
        };
        Ok(Made {
            body: Body::Tree(tree),
            read_len,
            backend,
            note,
        })
    }

    fn part_on_cpu(
        &self,
        params: &TreeParams,
        file: Option<&InputFile>,
        leaves: &Range<u64>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Leaves, HashError> {
        let cpu = self.cpu();
        let engine = if *leaves == (0..params.leaf_count()) {
            cpu.begin(params)
        } else {
            let mut engine = cpu.begin_at(params, 0);
            engine.give_leaves(leaves.clone(), Vec::new())?;
            engine
        };
        run_engine(params, file, engine, leaves, progress, timings)
    }

    /// The part on the first GPU the options name (a host with several
    /// runs one part on each: `--device`).
    fn part_on_gpu(
        &self,
        params: &TreeParams,
        file: Option<&InputFile>,
        leaves: &Range<u64>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Leaves, HashError> {
        let gpu = self.gpu()?;
        timings.gpu_init = gpu.info().init;
        let pool = self.cpu().pool();
        let kernel = self.options().testing.gpu_leaf_kernel;
        let engine = if *leaves == (0..params.leaf_count()) {
            let len = file.map_or(0, InputFile::len);
            gpu.begin(params, Some(len), CopyMode::Staging, kernel, pool, timings)?
        } else {
            // Transfer buffers for the CPU's pieces, as for a GPU joining it.
            let piece_len = self.cpu().piece_len(params);
            let staging = CopyMode::Staging;
            let mut engine = gpu.begin_at(params, 0, piece_len, staging, kernel, pool, timings)?;
            engine.give_leaves(leaves.clone(), Vec::new())?;
            engine
        };
        run_engine(params, file, engine, leaves, progress, timings)
    }
}

/// An engine's result for a part.
enum Leaves {
    /// The outputs of its leaves that hold a block, in order.
    Outputs(Vec<u8>),
    /// The digest: the part owns every leaf.
    Digest(Vec<u8>),
}

/// Feeds the file to `engine`, which owns `leaves`, and finishes it.
fn run_engine<'a>(
    params: &TreeParams,
    file: Option<&InputFile>,
    mut engine: Box<dyn LeafEngine + 'a>,
    leaves: &Range<u64>,
    progress: &dyn Progress,
    timings: &mut Timings,
) -> Result<Leaves, HashError> {
    let whole = *leaves == (0..params.leaf_count());
    timed(&mut timings.leaves, || {
        feed(params, file, engine.as_mut(), leaves, progress)
    })?;
    if whole {
        Ok(Leaves::Digest(engine.finish(timings)?))
    } else {
        Ok(Leaves::Outputs(engine.finish_leaves(timings)?))
    }
}

/// Hands M = P ‖ F to `engine` piece by piece: the head (the blocks that
/// hold prefix bytes), read only where one of its blocks is the part's,
/// then pieces of the file left unread, so that the engine reads its runs.
fn feed(
    params: &TreeParams,
    file: Option<&InputFile>,
    engine: &mut dyn LeafEngine,
    leaves: &Range<u64>,
    progress: &dyn Progress,
) -> Result<(), HashError> {
    let (prefix, dealing) = (params.prefix(), Dealing::of(params));
    let file_len = file.map_or(0, InputFile::len);
    let (head_len, head_from_file) = head(params, file_len);
    let mut message_len = 0u64;
    if head_len > 0 {
        let mut head = vec![0u8; head_len as usize];
        head[..prefix.len()].copy_from_slice(prefix);
        // The engine looks only at its own blocks.
        if let Some(file) = file
            && dealing.packed_len(leaves, head_len) > 0
        {
            file.read_exact_at(&mut head[prefix.len()..], 0)?;
            progress.advance(head_from_file);
        }
        engine.absorb(Piece::Memory(&head))?;
        message_len = head_len;
    }
    let Some(input) = file else {
        return Ok(());
    };
    let piece_len = piece_len(params, leaves, engine.piece_len());
    let runs_of = |offset: u64, len: u64| {
        let at = prefix.len() as u64 + offset;
        dealing.owned_runs(leaves, at, len as usize)
    };
    let mut offset = head_from_file;
    let mut asked = offset;
    while offset < file_len {
        let len = (piece_len as u64).min(file_len - offset);
        let ahead = (offset + (1 + PIECES_AHEAD) * piece_len as u64).min(file_len);
        while asked < ahead {
            let step = (piece_len as u64).min(file_len - asked);
            for run in runs_of(asked, step) {
                input.prefetch(asked + run.start as u64, run.len() as u64);
            }
            asked += step;
        }
        engine.absorb(Piece::Unread {
            input,
            offset,
            len: len as usize,
        })?;
        progress.advance(
            dealing.packed_len(leaves, message_len + len) - dealing.packed_len(leaves, message_len),
        );
        offset += len;
        message_len += len;
    }
    Ok(())
}

/// The piece length for a part: about `engine_piece` of its own bytes per
/// piece, the whole piece at most `message::MAX_PIECE` (the CPU engine
/// reads its runs into a buffer of the piece's length).
fn piece_len(params: &TreeParams, leaves: &Range<u64>, engine_piece: usize) -> usize {
    let owned = (leaves.end - leaves.start).max(1);
    let target = (engine_piece as u64).saturating_mul(params.leaf_count()) / owned;
    message::piece_len(
        params.block_size(),
        target.min(message::MAX_PIECE as u64) as usize,
    )
}

/// The values a part stores: each of its whole subtrees that holds a
/// block, reduced from its leaves' outputs; the digest itself for a part
/// of every leaf.
fn part_values(
    params: &TreeParams,
    nodes: &Nodes<'_>,
    leaves: &Range<u64>,
    holding: u64,
    made: Leaves,
) -> Vec<u8> {
    let outputs = match made {
        Leaves::Digest(digest) => return digest,
        Leaves::Outputs(outputs) => outputs,
    };
    let leaf_len = params.leaf_output_len();
    let mut values = Vec::new();
    for tiles in subtrees(params, leaves.clone()) {
        let Subtrees { level, count, .. } = tiles;
        let span = tiles.leaves(params);
        let from = holding.clamp(leaves.start, span.start) - leaves.start;
        let to = holding.clamp(leaves.start, span.end) - leaves.start;
        let own = outputs[from as usize * leaf_len..to as usize * leaf_len].to_vec();
        let len = count * leaves_per_node(params, level);
        values.extend(nodes.climb(params.height(), len, own, level));
    }
    values
}

impl Opened {
    /// The input's size, and the file's version as it was opened.
    pub(super) fn stamp(&self) -> Result<(u64, Stamp), HashError> {
        Ok(match self {
            Opened::File(file) => (file.len(), *file.stamp()),
            Opened::Empty(file) => (0, Stamp::of(&file.metadata()?)),
        })
    }

    /// The file to read, where it has bytes.
    pub(super) fn input(&self) -> Option<&InputFile> {
        match self {
            Opened::File(file) => Some(file),
            Opened::Empty(_) => None,
        }
    }

    /// An error if the file changed since it was opened (`stamp` being its
    /// version then).
    pub(super) fn check_unchanged(&self, stamp: &Stamp) -> Result<(), HashError> {
        match self {
            Opened::File(file) => file.check_unchanged(),
            Opened::Empty(file) => stamp.check_unchanged(&file.metadata()?),
        }
    }
}

/// Opens the file a part reads: a regular file, read by ranges; an empty
/// one (which has nothing to read); else an error.
pub(super) fn open(path: &Path) -> Result<Opened, HashError> {
    match Source::open(path)? {
        Source::File(file) => Ok(Opened::File(file)),
        Source::Sequential(mut file) => {
            let meta = file.metadata()?;
            // A regular file of size 0 that still yields bytes is one of
            // /proc's: its size says nothing.
            if meta.is_file() && meta.len() == 0 && file.read(&mut [0u8; 1])? == 0 {
                return Ok(Opened::Empty(file));
            }
            Err(HashError::Io(std::io::Error::other(
                "a part is read by ranges, from a regular file of known size \
                 (not a pipe, a device or a file of /proc)",
            )))
        }
    }
}

/// `params` without the prefix, as a part records them.
fn without_prefix(params: &TreeParams) -> Result<TreeParams, crate::params::ParamError> {
    TreeParams::with_options(
        params.algorithm(),
        params.height(),
        params.degree(),
        Some(params.block_size()),
        Vec::new(),
        Some(params.output_len()),
    )
}
