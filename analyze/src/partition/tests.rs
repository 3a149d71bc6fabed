//! The partitioner, the local/ghost split and the exchange plan, checked by
//! simulating the parts on the host: with integer values every product is
//! exact, so the distributed `y` must equal the reference bit for bit.

use proptest::prelude::*;
use sparsetool_formats::Csr;

use super::*;

/// A CSR from rows of column lists; value of `(r, c)` is `1 + (r * 7 + c) % 5`.
fn csr(nrows: usize, ncols: usize, rows: &[Vec<usize>]) -> Csr<f64, i64> {
    let mut ptr = vec![0i64];
    let (mut col, mut val) = (Vec::new(), Vec::new());
    for (r, cs) in rows.iter().enumerate() {
        let mut cs = cs.clone();
        cs.sort_unstable();
        cs.dedup();
        for c in cs {
            col.push(c as i64);
            val.push(1.0 + ((r * 7 + c) % 5) as f64);
        }
        ptr.push(col.len() as i64);
    }
    Csr::try_from_parts(nrows, ncols, ptr, col, val).unwrap()
}

fn partition(a: &Csr<f64, i64>, n: usize) -> Partition {
    Partition::new(
        a.nrows(),
        a.ncols(),
        a.row_ptr(),
        a.col_idx(),
        n,
        &PartitionOptions::default(),
    )
    .unwrap()
}

/// Every invariant of a partition and its plan, and the exact product.
fn check(a: &Csr<f64, i64>, part: &Partition) {
    let n = part.len();
    assert_eq!(part.row_bounds.len(), n + 1);
    assert_eq!(part.row_bounds[0], 0);
    assert_eq!(part.row_bounds[n], a.nrows());
    assert_eq!(part.col_bounds[0], 0);
    assert_eq!(part.col_bounds[n], a.ncols());
    assert!(part.row_bounds.windows(2).all(|w| w[0] <= w[1]));
    assert!(part.col_bounds.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(
        part.parts.iter().map(|p| p.nnz).sum::<u64>(),
        a.nnz() as u64
    );
    // Each part receives exactly its ghost columns, each once, from the owner.
    let plan = &part.plan;
    for (q, ghost) in plan.ghost_cols.iter().enumerate() {
        assert!(ghost.windows(2).all(|w| w[0] < w[1]), "sorted, distinct");
        let mut covered = vec![0u32; ghost.len()];
        for t in plan.transfers.iter().filter(|t| t.dst == q) {
            assert_ne!(t.src, q, "a part never sends to itself");
            assert!(!t.src_idx.is_empty(), "no empty message");
            for (k, &i) in t.src_idx.iter().enumerate() {
                let global = part.col_bounds[t.src] + i;
                assert!(part.cols(t.src).contains(&global), "sent by its owner");
                assert_eq!(ghost[t.dst_offset + k], global);
                covered[t.dst_offset + k] += 1;
            }
        }
        assert!(covered.iter().all(|&c| c == 1), "part {q}: {covered:?}");
        // ... and exactly the columns its rows touch outside its own range.
        let mut needed: Vec<usize> = part
            .rows(q)
            .flat_map(|r| a.row(r).0.iter().map(|&c| c as usize))
            .filter(|c| !part.cols(q).contains(c))
            .collect();
        needed.sort_unstable();
        needed.dedup();
        assert_eq!(&needed, ghost);
        assert_eq!(part.parts[q].ghost_cols, ghost.len() as u64);
        assert_eq!(part.parts[q].recv_bytes, ghost.len() as u64 * 8);
    }
    assert!(plan
        .transfers
        .windows(2)
        .all(|w| (w[0].src, w[0].dst) < (w[1].src, w[1].dst)));
    let sent: u64 = part.parts.iter().map(|p| p.send_bytes).sum();
    let recv: u64 = part.parts.iter().map(|p| p.recv_bytes).sum();
    assert_eq!(sent, recv);
    assert_eq!(sent, part.exchange_bytes);
    // The blocks reproduce A x exactly.
    let blocks = split(a, part).unwrap();
    for (p, b) in blocks.iter().enumerate() {
        assert_eq!(b.local.nnz() as u64, part.parts[p].local_nnz);
        assert_eq!(b.ghost.nnz() as u64, part.parts[p].ghost_nnz);
        assert_eq!(b.ghost.ncols(), plan.ghost_cols[p].len());
    }
    let x: Vec<f64> = (0..a.ncols()).map(|i| (i % 11) as f64 - 5.0).collect();
    let mut want = vec![0.0; a.nrows()];
    a.spmv(&x, &mut want);
    assert_eq!(simulate_spmv(part, &blocks, &x), want);
}

fn laplace1d(n: usize) -> Csr<f64, i64> {
    let rows: Vec<Vec<usize>> = (0..n)
        .map(|r| (r.saturating_sub(1)..(r + 2).min(n)).collect())
        .collect();
    csr(n, n, &rows)
}

#[test]
fn tridiagonal_in_every_part_count() {
    let a = laplace1d(100);
    for n in [1, 2, 3, 4, 8] {
        let p = partition(&a, n);
        check(&a, &p);
        assert_eq!(p.len(), n);
        // Interior parts need one x entry from each neighbour.
        for q in 1..n - 1 {
            assert_eq!(p.parts[q].ghost_cols, 2);
        }
    }
}

/// Parts of many split chunks (`SPLIT_CHUNK` rows each), whose pieces are
/// joined in parallel, with ghost columns reaching across the matrix.
#[test]
fn parts_of_many_chunks_join_exactly() {
    let n = 5 * SPLIT_CHUNK + 123;
    let rows: Vec<Vec<usize>> = (0..n)
        .map(|r| {
            let mut c: Vec<usize> = (r.saturating_sub(1)..(r + 2).min(n)).collect();
            c.push((r * 7919 + 13) % n);
            c.sort_unstable();
            c.dedup();
            c
        })
        .collect();
    let a = csr(n, n, &rows);
    for parts in [1, 3] {
        check(&a, &partition(&a, parts));
    }
}

#[test]
fn more_parts_than_rows_leaves_parts_empty() {
    let a = laplace1d(3);
    let p = partition(&a, 8);
    check(&a, &p);
    assert_eq!(p.parts.iter().filter(|q| q.rows == 0).count(), 5);
    let empty = csr(0, 0, &[]);
    check(&empty, &partition(&empty, 4));
    let no_entries = csr(5, 5, &vec![vec![]; 5]);
    check(&no_entries, &partition(&no_entries, 3));
}

#[test]
fn block_diagonal_parts_have_no_ghosts() {
    // Two 50x50 dense-ish blocks: cut in the middle, nothing to exchange.
    let rows: Vec<Vec<usize>> = (0..100)
        .map(|r| {
            let base = if r < 50 { 0 } else { 50 };
            (base..base + 50).step_by(7).collect()
        })
        .collect();
    let a = csr(100, 100, &rows);
    let p = Partition::with_bounds(
        100,
        100,
        a.row_ptr(),
        a.col_idx(),
        vec![0, 50, 100],
        &PartitionOptions::default(),
    )
    .unwrap();
    check(&a, &p);
    assert!(p.plan.transfers.is_empty());
    assert!(p
        .parts
        .iter()
        .all(|q| q.ghost_cols == 0 && q.ghost_us == 0.0));
}

#[test]
fn a_dense_row_is_balanced_by_predicted_time() {
    // Row 0 holds every column, the other rows 2 entries: an equal-rows cut
    // puts the dense row's time on part 0 alone.
    let n = 20_000;
    let rows: Vec<Vec<usize>> = (0..n)
        .map(|r| {
            if r == 0 {
                (0..n).collect()
            } else {
                vec![r, (r * 31) % n]
            }
        })
        .collect();
    let a = csr(n, n, &rows);
    for k in [2, 3, 4, 8] {
        let p = partition(&a, k);
        check(&a, &p);
        let eq: Vec<usize> = (0..=k).map(|i| i * n / k).collect();
        let q = Partition::with_bounds(
            n,
            n,
            a.row_ptr(),
            a.col_idx(),
            eq,
            &PartitionOptions::default(),
        )
        .unwrap();
        check(&a, &q);
        assert!(
            p.imbalance <= q.imbalance + 1e-9,
            "{k} parts: predicted-time cut {} vs equal rows {}",
            p.imbalance,
            q.imbalance
        );
    }
}

#[test]
fn skewed_rows_move_the_cut_off_equal_rows() {
    // The first quarter of the rows is 40 entries long, the rest 2.
    let n = 40_000;
    let rows: Vec<Vec<usize>> = (0..n)
        .map(|r| {
            let len = if r < n / 4 { 40 } else { 2 };
            (0..len).map(|k| (r + k * 97) % n).collect()
        })
        .collect();
    let a = csr(n, n, &rows);
    let p = partition(&a, 2);
    check(&a, &p);
    assert!(
        p.row_bounds[1] < n / 2,
        "the heavy first rows get a smaller part: {:?}",
        p.row_bounds
    );
    let t: Vec<f64> = p.parts.iter().map(|q| q.predicted_us).collect();
    assert!(p.imbalance < 1.25, "{t:?}");
}

#[test]
fn non_square_matrices_cut_x_proportionally() {
    let wide: Vec<Vec<usize>> = (0..10).map(|r| vec![r, r * 3 + 1, 29]).collect();
    let a = csr(10, 30, &wide);
    for n in [1, 2, 3, 4, 8] {
        let p = partition(&a, n);
        check(&a, &p);
    }
    let tall: Vec<Vec<usize>> = (0..30).map(|r| vec![r % 7, (r * 5) % 7]).collect();
    let a = csr(30, 7, &tall);
    for n in [1, 2, 4, 8] {
        check(&a, &partition(&a, n));
    }
}

#[test]
fn bad_input_is_refused() {
    let a = laplace1d(4);
    let o = PartitionOptions::default();
    assert!(Partition::new(4, 4, a.row_ptr(), a.col_idx(), 0, &o).is_err());
    assert!(Partition::new(4, 3, a.row_ptr(), a.col_idx(), 2, &o).is_err());
    assert!(Partition::new(5, 4, a.row_ptr(), a.col_idx(), 2, &o).is_err());
    for cuts in [vec![0, 3], vec![0, 3, 2, 4], vec![1, 4], vec![0]] {
        assert!(Partition::with_bounds(4, 4, a.row_ptr(), a.col_idx(), cuts, &o).is_err());
    }
    // Bad row offsets: the first one is named (the parallel check finds
    // that one is bad, the serial pass which).
    let ci = a.col_idx();
    for (rp, want) in [
        (vec![1i64, 2, 5, 8, 10], "row_ptr[0] = 1 is out of order"),
        (vec![0i64, 2, 11, 8, 10], "row_ptr[2] = 11 is out of order"),
        (vec![0i64, 2, 1, 0, 10], "row_ptr[2] = 1 is out of order"),
        (vec![0i64, 2, 5, 8, 9], "row_ptr ends at 9"),
    ] {
        let e = Partition::new(4, 4, &rp, ci, 2, &o)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{rp:?}: {e}");
    }
}

#[test]
fn render_lists_every_part() {
    let a = laplace1d(64);
    let p = partition(&a, 4);
    let text = p.render();
    assert_eq!(text.lines().count(), 3 + 4);
    assert!(text.contains("ghost_cols"));
}

fn matrix() -> impl Strategy<Value = Csr<f64, i64>> {
    (0usize..40, 1usize..40).prop_flat_map(|(nrows, ncols)| {
        let row = prop_oneof![
            4 => proptest::collection::vec(0..ncols, 0..6),
            1 => Just((0..ncols).collect::<Vec<usize>>()),
        ];
        proptest::collection::vec(row, nrows).prop_map(move |rows| csr(nrows, ncols, &rows))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn distributed_product_is_exact(a in matrix(), n in prop::sample::select(vec![1usize, 2, 3, 4, 8, 50])) {
        let p = partition(&a, n);
        check(&a, &p);
    }

    #[test]
    fn any_cuts_give_an_exact_product(a in matrix(), cuts in proptest::collection::vec(0usize..64, 0..8)) {
        let mut b: Vec<usize> = cuts.into_iter().map(|c| c.min(a.nrows())).collect();
        b.push(0);
        b.push(a.nrows());
        b.sort_unstable();
        let p = Partition::with_bounds(a.nrows(), a.ncols(), a.row_ptr(), a.col_idx(), b, &PartitionOptions::default()).unwrap();
        check(&a, &p);
    }
}

#[test]
fn a_part_counts_the_far_entries_of_its_local_block() {
    // 1000 rows x 8M columns, two parts of 4M columns each (32 MB of x in
    // f64 apiece): row r's entries at its local diagonal place and 2M
    // columns from it within its own part, and one ghost entry
    let (n, m) = (1000usize, 8_000_000usize);
    let (half_r, half_c) = (n / 2, m / 2);
    let rows: Vec<Vec<usize>> = (0..n)
        .map(|r| {
            let (part, lr) = (r / half_r, r % half_r);
            let base = part * half_c;
            let diag = lr * half_c / half_r;
            let far = (diag + 2_000_000) % half_c;
            let ghost = (base + half_c) % m;
            let mut v = vec![base + diag, base + far, ghost];
            v.sort_unstable();
            v
        })
        .collect();
    let a = csr(n, m, &rows);
    let s = split_lengths(a.row_ptr(), a.col_idx(), 0..half_r, 0..half_c).unwrap();
    assert_eq!(s.local, vec![2; half_r]);
    assert_eq!(s.ghost, vec![1; half_r]);
    // the local block on its own, numbered from 0, counts the same
    let local: Vec<i64> = rows[..half_r]
        .iter()
        .flat_map(|v| v.iter().filter(|&&c| c < half_c).map(|&c| c as i64))
        .collect();
    let ptr: Vec<i64> = (0..=half_r as i64).map(|i| 2 * i).collect();
    let alone = RowLengths::from_row_ptr(half_r, half_c, &ptr, &local).unwrap();
    assert_eq!(s.far, alone.far);
    // 2M columns away is far for 8- and 16-byte values (windows 1.5M and
    // 750k columns), not for 4-byte ones (3M)
    assert_eq!(s.far.0, [0, half_r as u64, half_r as u64]);
}
