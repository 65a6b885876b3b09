//! GPUs begun side by side on a file of a function with chunks, each
//! hashing one contiguous range of the chunks at its own pace, as a part
//! of the file is hashed ([`hash_part_chunks`]); the last node then takes
//! KT's first chunk and every range's chaining values, in order. Walked
//! together ([`hash`]), every wave of a piece waits for the slower GPU's
//! share of it (docs/decisions/0041-gpus-walk-apart.md).

use super::*;
use crate::threads::on_each_at_once;

/// Passes the bytes hashed on, from every range at once; each range's
/// engine shares, which would interleave, are told once at the end.
struct Advance<'p>(&'p dyn Progress);

impl Progress for Advance<'_> {
    fn advance(&self, bytes: u64) {
        self.0.advance(bytes);
    }
}

/// The digest of `file` (not empty), its chunks split evenly between
/// `gpus` (two or more), each GPU's range walked on a thread of its own
/// (the first on this one) in pieces of `piece_len` bytes, the ones its
/// engine was begun for; the CPU takes what it takes of a part (KT's
/// first chunk, the last chunk short of whole) and the last node. Every
/// range is walked to its end before an error is returned.
pub(crate) fn hash_apart<'a>(
    params: &StandardParams,
    file: &InputFile,
    cpu: &CpuBackend,
    gpus: Vec<Box<dyn ChunkEngine + 'a>>,
    piece_len: usize,
    progress: &dyn Progress,
) -> Result<Walked, HashError> {
    let chunk_count = (file.len() + suffix(params).len() as u64).div_ceil(chunk_len(params) as u64);
    let count = gpus.len() as u64;
    let ranges = gpus
        .into_iter()
        .zip(0..)
        .map(|(gpu, k)| (gpu, chunk_count * k / count..chunk_count * (k + 1) / count));
    let told = Advance(progress);
    let walked = on_each_at_once(
        ranges.collect(),
        "treehash-walk",
        |_, (gpu, chunks)| {
            let mut none = NoLatecomers;
            let engines = Engines {
                gpus: vec![gpu],
                latecomers: &mut none,
                split: Split::new(false),
            };
            hash_part_chunks(params, Some(file), chunks, cpu, engines, piece_len, &told)
        },
        || Err(HashError::Internal("a GPU's walk panicked".into())),
    );
    let cv_len = params.standard().chaining_len();
    let mut node = LastNode::new(params);
    let mut cpu_share = EngineShare {
        engine: EngineId::Cpu,
        bytes: 0,
        busy: Duration::ZERO,
    };
    let (mut gpu_shares, mut copy_busy, mut kernel_busy) =
        (Vec::new(), Duration::ZERO, Duration::ZERO);
    for range in walked {
        let range = range?;
        if !range.sink.first_chunk.is_empty() {
            node.absorb_message(&range.sink.first_chunk);
        }
        let values = &range.sink.values;
        node.absorb_chaining_values(values, (values.len() / cv_len) as u64);
        for share in range.shares {
            if share.engine.is_gpu() {
                gpu_shares.push(share);
            } else {
                cpu_share.bytes += share.bytes;
                cpu_share.busy += share.busy;
            }
        }
        copy_busy += range.copy_busy;
        kernel_busy += range.kernel_busy;
    }
    // A part counts the suffix's bytes, which the message does not hold:
    // taken off the CPU's share (its last chunk), the rest off the last
    // GPU's, so that the shares add up to the file.
    let mut extra = suffix(params).len() as u64;
    for share in std::iter::once(&mut cpu_share).chain(gpu_shares.iter_mut().rev()) {
        let taken = extra.min(share.bytes);
        (share.bytes, extra) = (share.bytes - taken, extra - taken);
    }
    let shares: Vec<EngineShare> = std::iter::once(cpu_share).chain(gpu_shares).collect();
    progress.engines(&shares);
    Ok(Walked {
        digest: node.finish(params),
        bytes: file.len(),
        shares,
        copy_busy,
        kernel_busy,
    })
}
