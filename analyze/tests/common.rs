//! Shared helpers: random matrices.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sparsetool_formats::Csr;

/// A random `nrows x ncols` CSR matrix with irregular rows: mostly short,
/// some empty, a few long.
pub fn random_csr(seed: u64, nrows: usize, ncols: usize) -> Csr<f64, i32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut ptr = vec![0i32];
    let mut col = Vec::new();
    for _ in 0..nrows {
        let kind = rng.random_range(0..100);
        let len = match kind {
            0..=9 => 0,
            10..=94 => rng.random_range(1..=8usize),
            _ => rng.random_range(20..=ncols.max(20)),
        }
        .min(ncols);
        let mut cols: Vec<i32> = (0..len)
            .map(|_| rng.random_range(0..ncols) as i32)
            .collect();
        cols.sort_unstable();
        cols.dedup();
        col.extend(cols);
        ptr.push(col.len() as i32);
    }
    let vals = vec![1.0; col.len()];
    Csr::try_from_parts(nrows, ncols, ptr, col, vals).expect("valid random CSR")
}
