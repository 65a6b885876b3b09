//! A probe with no hashing in it (issue 21, large trees): the memory traffic
//! of LI's leaf states alone, in the order the CPU engine moves them. An
//! 8 GiB message of 136-byte blocks is dealt round-robin onto L leaves; each
//! thread owns a contiguous range of leaves and, stripe after stripe, loads
//! each own leaf's 200-byte state, XORs the leaf's block into it and stores
//! it back: the loads and stores that a Keccak engine does around its
//! permutations when a piece holds less than a stripe (H >= 10), with the
//! permutations left out. The message is one 1 GiB buffer read 8 times (the
//! page cache is not the subject).
//!
//!     rustc -O -C target-cpu=native state_traffic.rs && ./state_traffic [THREADS]
//!
//! Prints, for H = 8 and H = 12 (D = 4), the best of 3 runs.
use std::time::Instant;

const BLOCK: usize = 136;
const STATE: usize = 200;

fn run(leaves: usize, threads: usize, message: &[u8], repeats: usize, states: &mut [u8]) -> f64 {
    let total_blocks = message.len() / BLOCK * repeats;
    let per_thread = leaves.div_ceil(threads);
    let start = Instant::now();
    std::thread::scope(|scope| {
        for (t, own) in states.chunks_mut(per_thread * STATE).enumerate() {
            let first = t * per_thread;
            scope.spawn(move || {
                let mut block_index = first;
                let mut stripe_start = 0;
                while stripe_start < total_blocks {
                    for (k, state) in own.chunks_exact_mut(STATE).enumerate() {
                        let j = stripe_start + first + k;
                        if j >= total_blocks {
                            break;
                        }
                        let at = (j * BLOCK) % (message.len() - BLOCK + 1);
                        let block = &message[at..at + BLOCK];
                        let mut s = [0u8; STATE];
                        s.copy_from_slice(state);
                        for (x, y) in s.iter_mut().zip(block) {
                            *x ^= *y;
                        }
                        state.copy_from_slice(&s);
                    }
                    stripe_start += leaves;
                    block_index += leaves;
                }
                std::hint::black_box(block_index);
            });
        }
    });
    start.elapsed().as_secs_f64()
}

fn main() {
    let threads: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let message: Vec<u8> = (0..1usize << 30).map(|i| (i.wrapping_mul(0x9e37_79b9) >> 11) as u8).collect();
    let repeats = 8;
    let bytes = (message.len() * repeats) as f64;
    println!("state traffic probe: 8 GiB message, {threads} threads, no permutations (best of 3)");
    for height in [8u32, 10, 11, 12] {
        let leaves = 4usize.pow(height);
        let mut states = vec![0u8; leaves * STATE];
        // Touch every state once first, as the engine's store is faulted in.
        states.iter_mut().step_by(4096).for_each(|b| *b = 1);
        let best = (0..3)
            .map(|_| run(leaves, threads, &message, repeats, &mut states))
            .fold(f64::INFINITY, f64::min);
        println!(
            "H = {height:2}: {leaves:>9} leaves, states {:>5} MiB: {best:.3} s ({:.1} GB/s of message)",
            leaves * STATE >> 20,
            bytes / best / 1e9
        );
    }
}
