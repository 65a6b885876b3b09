//! The join's cost for many parts and values: every part of a split of a
//! file that fills every leaf of H = 8, D = 4 (65,536 leaves), N up to one
//! leaf per part, made in this process; the join of the parts' bytes timed.
//! Run: cp docs/runs/2026-11-23-issue25-parts/join_many.rs examples/ &&
//!      cargo run --release --example join_many -- FILE
use std::time::Instant;

use treehash::parts::join_bytes;
use treehash::{Algorithm, BackendChoice, Hasher, HasherOptions, NoProgress, TreeParams};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).expect("a file of at least one stripe");
    let params = TreeParams::new(Algorithm::Sha3_256, 8, 4)?;
    let hasher = Hasher::new(HasherOptions {
        backend: BackendChoice::Cpu,
        ..Default::default()
    })?;
    let want = hasher.hash_path(&params, path.as_ref(), &NoProgress)?.digest;
    println!("N\tvalues\tpart bytes (all)\tparts s\tjoin ms (best of 5)");
    for count in [16u64, 1000, 4096, 16384, 65536] {
        let start = Instant::now();
        let parts: Vec<Vec<u8>> = (0..count)
            .map(|i| hasher.hash_part(&params, path.as_ref(), i, count, &NoProgress))
            .map(|p| p.map(|p| p.part.to_bytes()))
            .collect::<Result<_, _>>()?;
        let made = start.elapsed();
        let values: u64 = parts
            .iter()
            .map(|p| treehash::Part::from_bytes(p).unwrap().value_count())
            .sum();
        let bytes: usize = parts.iter().map(Vec::len).sum();
        let mut best = f64::MAX;
        for _ in 0..5 {
            let start = Instant::now();
            let joined = join_bytes(&parts)?;
            best = best.min(start.elapsed().as_secs_f64());
            assert_eq!(joined.digest, want);
        }
        println!(
            "{count}\t{values}\t{bytes}\t{:.2}\t{:.1}",
            made.as_secs_f64(),
            best * 1e3
        );
    }
    Ok(())
}
