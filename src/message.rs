//! Cutting the message M = P ‖ F into pieces that every backend absorbs in
//! order. Every piece starts on a block boundary of M, and every piece but the
//! last is a whole number of blocks, so a backend never sees half a block.

use std::io::{self, Read};

use crate::params::TreeParams;
use crate::progress::Progress;

/// A piece length near `target` bytes that is a whole number of blocks and
/// longer than any prefix (so a stream's first piece holds the whole prefix).
pub fn piece_len(block_size: usize, target: usize) -> usize {
    target
        .max(block_size)
        .max(crate::params::MAX_PREFIX_LEN + 1)
        .next_multiple_of(block_size)
}

/// Calls `absorb` with consecutive pieces of M = P ‖ `file`, each
/// `piece_len` bytes (a multiple of B) except perhaps the first and
/// the last. Only the blocks that hold prefix bytes are copied; the rest of
/// the file is passed as borrowed slices of `file`. `progress` is told the
/// file bytes of each piece once it is absorbed.
pub fn for_each_piece_of_slice<'f, E>(
    params: &TreeParams,
    file: &'f [u8],
    piece_len: usize,
    progress: &dyn Progress,
    mut absorb: impl FnMut(Piece<'_, 'f>) -> Result<(), E>,
) -> Result<(), E> {
    let (prefix, block_size) = (params.prefix(), params.block_size());
    debug_assert!(piece_len >= block_size && piece_len.is_multiple_of(block_size));
    let mut rest = file;
    if !prefix.is_empty() {
        // The head: every block that holds a prefix byte, completed from the file.
        let head_len = prefix.len().next_multiple_of(block_size);
        let from_file = (head_len - prefix.len()).min(file.len());
        let mut head = Vec::with_capacity(head_len);
        head.extend_from_slice(prefix);
        head.extend_from_slice(&file[..from_file]);
        absorb(Piece::Copied(&head))?;
        progress.advance(from_file as u64);
        rest = &file[from_file..];
    }
    for piece in rest.chunks(piece_len) {
        absorb(Piece::Borrowed(piece))?;
        progress.advance(piece.len() as u64);
    }
    Ok(())
}

/// A piece of M: either borrowed from the input for as long as it lives, or a
/// copy that lives only during the call.
#[derive(Clone, Copy, Debug)]
pub enum Piece<'a, 'f> {
    Borrowed(&'f [u8]),
    Copied(&'a [u8]),
}

impl<'a, 'f: 'a> Piece<'a, 'f> {
    pub fn bytes(self) -> &'a [u8] {
        match self {
            Piece::Borrowed(b) => b,
            Piece::Copied(b) => b,
        }
    }
}

/// Reads M = P ‖ (all of `reader`) and calls `absorb` with pieces of
/// `piece_len` bytes (a multiple of the block size), the last one shorter.
/// Memory use is one piece, whatever the stream's length. `progress` is told
/// the stream bytes of each piece once it is absorbed. Returns the number of
/// bytes read from `reader` (the prefix not counted).
pub fn for_each_piece_of_stream<E: From<io::Error>>(
    params: &TreeParams,
    reader: &mut dyn Read,
    piece_len: usize,
    progress: &dyn Progress,
    mut absorb: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<u64, E> {
    let prefix = params.prefix();
    let mut buf = vec![0u8; piece_len];
    buf[..prefix.len()].copy_from_slice(prefix);
    let mut filled = prefix.len();
    let mut prefix_left = prefix.len();
    let mut total = 0u64;
    loop {
        let n = match reader.read(&mut buf[filled..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        filled += n;
        total += n as u64;
        if n == 0 || filled == piece_len {
            if filled > 0 {
                absorb(&buf[..filled])?;
                progress.advance((filled - std::mem::take(&mut prefix_left)) as u64);
            }
            if n == 0 {
                return Ok(total);
            }
            filled = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    /// Parameters whose prefix and block size are the ones given.
    fn params(prefix: &[u8], block_size: usize) -> TreeParams {
        let (a, p) = (crate::params::Algorithm::Sha3_256, prefix.to_vec());
        TreeParams::with_options(a, 1, 2, Some(block_size), p, None).unwrap()
    }

    fn slice_pieces(prefix: &[u8], file: &[u8], b: usize, piece: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for_each_piece_of_slice::<()>(&params(prefix, b), file, piece, &NoProgress, |p| {
            out.push(p.bytes().to_vec());
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn slice_pieces_are_block_aligned_and_cover_m() {
        let file: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        for prefix_len in [0usize, 1, 7, 8, 9, 40] {
            let prefix = vec![0xAA; prefix_len];
            let pieces = slice_pieces(&prefix, &file, 8, 64);
            let m: Vec<u8> = pieces.concat();
            assert_eq!(m, [prefix.clone(), file.clone()].concat());
            for p in &pieces[..pieces.len() - 1] {
                assert_eq!(p.len() % 8, 0, "prefix {prefix_len}");
            }
        }
    }

    #[test]
    fn empty_message_has_no_pieces() {
        assert!(slice_pieces(&[], &[], 8, 8).is_empty());
    }

    #[test]
    fn stream_pieces_are_full_until_the_last() {
        let data: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        let mut pieces = Vec::new();
        let read = for_each_piece_of_stream::<io::Error>(
            &params(&[9, 9, 9], 8),
            &mut &data[..],
            64,
            &NoProgress,
            |p| {
                pieces.push(p.to_vec());
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(read, 300);
        assert!(pieces[..pieces.len() - 1].iter().all(|p| p.len() == 64));
        assert_eq!(pieces.concat(), [vec![9, 9, 9], data].concat());
    }

    /// Counts the bytes it is told about.
    #[derive(Default)]
    struct Count(std::sync::atomic::AtomicU64);

    impl Progress for Count {
        fn advance(&self, bytes: u64) {
            self.0
                .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
        }
    }

    #[test]
    fn progress_counts_every_file_byte_and_no_prefix_byte() {
        let file: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        for prefix_len in [0usize, 3, 255] {
            let prefix = vec![1u8; prefix_len];
            let count = Count::default();
            let p = params(&prefix, 8);
            for_each_piece_of_slice::<()>(&p, &file, 512, &count, |_| Ok(())).unwrap();
            assert_eq!(count.0.into_inner(), 5000);
            let count = Count::default();
            for_each_piece_of_stream::<io::Error>(&p, &mut &file[..], 512, &count, |_| Ok(()))
                .unwrap();
            assert_eq!(count.0.into_inner(), 5000);
        }
    }
}
