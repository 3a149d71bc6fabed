//! From parsed entries to the matrix: the 0-based rule, lenient
//! clean-ups, symmetric expansion and the array layout.

use rayon::prelude::*;

use super::chunk::{parse_with, run, skip_data_lines, Plan};
use super::error::{LineError, MmErrorKind};
use super::header::{Header, MmField, MmFormat, MmSymmetry};
use super::parse::{array_chunk, coord_chunk, is_f32, nonreal_diagonal, Cfg, Stats};
use super::{ReadOptions, Warning};
use crate::{Coo, Index, Scalar};

/// Where the data of a read comes from.
pub(crate) enum Source<'a> {
    /// The whole file in memory (mapped or bytes).
    Memory(&'a [u8]),
    /// A stream.
    Stream(super::stream::Data<'a>),
}

/// A buffer of `n` zeros for what the file declares, or the error.
fn zeroed<T: bytemuck::Zeroable + Clone>(n: usize, what: &str) -> Result<Vec<T>, LineError> {
    crate::alloc::try_zeroed(n, what).map_err(|e| (None, MmErrorKind::Alloc(e)))
}

/// Reads the data of a file with header `h` into COO: the data section of
/// the file in memory (everything after the size line) is parsed in
/// parallel chunks; a stream in blocks. Lenient recoveries push warnings.
pub(crate) fn read_data<T: Scalar, I: Index>(
    src: Source<'_>,
    h: &Header,
    opts: &ReadOptions,
    warnings: &mut Vec<Warning>,
) -> Result<Coo<T, I>, LineError> {
    for (what, v) in [("nrows", h.nrows), ("ncols", h.ncols)] {
        if v > I::MAX_USIZE {
            return Err((
                Some(h.data_line.saturating_sub(1)),
                MmErrorKind::IndexOverflow {
                    what,
                    value: v as u128,
                    index: I::NAME,
                },
            ));
        }
    }
    let cfg = Cfg::new(h, opts.lenient, is_f32::<T>());
    match h.format {
        MmFormat::Coordinate => read_coordinate(src, h, &cfg, opts, warnings),
        MmFormat::Array => read_array(src, h, &cfg, opts, warnings),
    }
}

fn index_overflow<I: Index>(line: Option<u64>, what: &'static str, v: usize) -> LineError {
    (
        line,
        MmErrorKind::IndexOverflow {
            what,
            value: v as u128,
            index: I::NAME,
        },
    )
}

/// The data section of a file in memory.
fn data_of<'a>(bytes: &'a [u8], h: &Header) -> &'a [u8] {
    bytes.get(h.data_offset..).unwrap_or_default()
}

fn read_coordinate<T: Scalar, I: Index>(
    src: Source<'_>,
    h: &Header,
    cfg: &Cfg,
    opts: &ReadOptions,
    warnings: &mut Vec<Warning>,
) -> Result<Coo<T, I>, LineError> {
    if h.entries > I::MAX_USIZE {
        return Err(index_overflow::<I>(Some(h.data_line - 1), "nnz", h.entries));
    }
    let (st, mut rows, mut cols, mut vals) = match src {
        Source::Memory(bytes) => {
            let b = data_of(bytes, h);
            let (st, (r, c, v)) = parse_with(b, h, opts.lenient, warnings, |p: &Plan| {
                let n: usize = p.counts.iter().sum();
                let (mut r, mut c, mut v) = (
                    zeroed::<I>(n, "row indices")?,
                    zeroed::<I>(n, "column indices")?,
                    zeroed::<T>(n, "values")?,
                );
                let (st, full) = run(
                    b,
                    p,
                    (&mut r[..], &mut c[..], &mut v[..]),
                    |chunk, l0, out| coord_chunk(chunk, l0, cfg, out),
                )?;
                Ok((st, full, (r, c, v)))
            })?;
            (st, r, c, v)
        }
        Source::Stream(d) => super::stream::coordinate::<T, I>(d, h, cfg, warnings)?,
    };

    let fix = coordinate_checks(&st, h, opts.lenient, warnings)?;
    if fix.shift {
        let shift = |x: &mut I| *x = I::from_usize_unchecked((x.to_i64() + 1) as usize);
        rows.par_iter_mut().for_each(shift);
        cols.par_iter_mut().for_each(shift);
    }
    if let Some(line) = fix.dedup_from {
        dedup_mirrors(
            &mut rows, &mut cols, &mut vals, h.symmetry, st.n_upper, line, warnings,
        );
    }
    if opts.expand_symmetry && h.symmetry != MmSymmetry::General {
        expand(&mut rows, &mut cols, &mut vals, h.symmetry)?;
    }
    debug_assert!(
        Coo::try_from_parts(h.nrows, h.ncols, rows.clone(), cols.clone(), vals.clone()).is_ok()
    );
    // SAFETY: `Coo`'s invariants were established while reading, so a
    // second validation pass over the arrays is skipped:
    // - every index was checked while parsing: `1 <= i <= nrows` and
    //   `1 <= j <= ncols`, stored as `i - 1`, `j - 1`; an index 0 (stored as
    //   -1) is an error unless no index equals its dimension, in which case
    //   every index is shifted by one, landing in `0..dim`;
    // - dropping mirror duplicates only removes entries; mirrors swap row
    //   and column of a square matrix (non-square symmetric files are
    //   rejected with the header);
    // - `nrows`, `ncols` and `nnz` (also after expansion) were checked to
    //   fit `I`, and the three arrays have the same length.
    Ok(unsafe { Coo::from_parts_unchecked(h.nrows, h.ncols, rows, cols, vals) })
}

/// What the entries of a coordinate file still need after
/// [`coordinate_checks`] (lenient mode only).
#[derive(Debug, Default)]
pub(super) struct Fixups {
    /// The indices are 0-based: shift every index by one (index 0 was
    /// stored as -1).
    pub(super) shift: bool,
    /// The symmetric file stores entries above the diagonal, the first on
    /// this line: drop those whose mirror is stored too.
    pub(super) dedup_from: Option<u64>,
}

/// The checks on the entries of a coordinate file as a whole, from the
/// stats of its lines: the 0-based rule and the triangle rule (errors, or
/// fixups in lenient mode), and the warnings of lenient recoveries.
pub(super) fn coordinate_checks(
    st: &Stats,
    h: &Header,
    lenient: bool,
    warnings: &mut Vec<Warning>,
) -> Result<Fixups, LineError> {
    let mut fix = Fixups::default();
    // Index 0: invalid, or a 0-based file.
    if let Some((line, which)) = st.zero {
        if st.at_dim {
            return Err((Some(line), MmErrorKind::ZeroIndex { which }));
        }
        if !lenient {
            return Err((Some(line), MmErrorKind::ZeroBased));
        }
        warnings.push(Warning {
            line: Some(line),
            message: "indices read as 0-based (an index 0 appears and none equals the size)".into(),
        });
        fix.shift = true;
    }
    if let Some(line) = st.extra {
        let what = if h.field == MmField::Pattern {
            "values in a pattern file ignored"
        } else {
            "extra tokens after the values ignored"
        };
        warnings.push(Warning {
            line: Some(line),
            message: format!("{what} (first here)"),
        });
    }
    value_warnings(st, warnings);
    if let Some((line, i, j)) = st.upper {
        if !lenient {
            return Err((
                Some(line),
                MmErrorKind::NotLowerTriangle {
                    row: i,
                    col: j,
                    symmetry: h.symmetry.keyword(),
                },
            ));
        }
        fix.dedup_from = Some(line);
    }
    Ok(fix)
}

/// The first diagonal value of a hermitian array file (column-major lower
/// triangle, `dense`) with a non-zero imaginary part: `(line, row, im)`.
fn first_nonreal_diagonal<T: Scalar>(b: &[u8], h: &Header, dense: &[T]) -> Option<(u64, u64, f64)> {
    // Column j starts at entry j*m - j*(j-1)/2 and holds (j, j) first.
    let m = h.nrows;
    let mut k = 0usize;
    for j in 0..m.min(h.ncols) {
        let v = *dense.get(k)?;
        if v.im() != 0.0 {
            // The line is looked up only in this rare case.
            let (_, line) = skip_data_lines(b, h.data_line, k);
            return Some((line, j as u64 + 1, v.im()));
        }
        k += m - j;
    }
    None
}

/// The checks on the values of an array file as a whole: a non-real
/// diagonal in a hermitian file (an error, or a warning in lenient mode),
/// and the warnings of lenient recoveries.
pub(super) fn array_checks(
    st: &Stats,
    lenient: bool,
    warnings: &mut Vec<Warning>,
) -> Result<(), LineError> {
    if let (Some((line, row, im)), false) = (st.nonreal_diagonal, lenient) {
        return Err((Some(line), nonreal_diagonal(row, im)));
    }
    if let Some(line) = st.extra {
        warnings.push(Warning {
            line: Some(line),
            message: "extra tokens after the values ignored (first here)".into(),
        });
    }
    value_warnings(st, warnings);
    Ok(())
}

/// The warnings of lenient value recoveries (NaN and infinities,
/// non-integers in an integer file).
fn value_warnings(st: &Stats, warnings: &mut Vec<Warning>) {
    if let Some(line) = st.nonfinite {
        warnings.push(Warning {
            line: Some(line),
            message: "NaN or infinite values accepted (first here)".into(),
        });
    }
    if let Some(line) = st.non_integer {
        warnings.push(Warning {
            line: Some(line),
            message: "non-integer values in an integer file read as real (first here)".into(),
        });
    }
    if let Some((line, _, _)) = st.nonreal_diagonal {
        warnings.push(Warning {
            line: Some(line),
            message: "non-real diagonal values in a hermitian file kept as stored (first here)"
                .into(),
        });
    }
}

/// The mirror of a stored value.
#[inline]
pub(super) fn mirror<T: Scalar>(v: T, sym: MmSymmetry) -> T {
    match sym {
        MmSymmetry::SkewSymmetric => -v,
        MmSymmetry::Hermitian => v.conj(),
        _ => v,
    }
}

/// Lenient: a symmetric file stores entries in both triangles. Upper
/// entries whose mirror is stored are dropped (agreeing) or dropped with a
/// conflict warning (disagreeing; the lower value wins). Upper entries
/// without a stored mirror stay (they are expanded like lower ones).
fn dedup_mirrors<T: Scalar, I: Index>(
    rows: &mut Vec<I>,
    cols: &mut Vec<I>,
    vals: &mut Vec<T>,
    sym: MmSymmetry,
    n_upper: usize,
    first_line: u64,
    warnings: &mut Vec<Warning>,
) {
    use std::collections::HashMap;
    let n = vals.len();
    let lower: HashMap<(I, I), usize> = (0..n)
        .filter(|&k| rows[k] >= cols[k])
        .map(|k| ((rows[k], cols[k]), k))
        .collect();
    let mut keep = vec![true; n];
    let (mut agree, mut conflict) = (0usize, 0usize);
    let mut first_conflict = None;
    for k in 0..n {
        if rows[k] < cols[k] {
            if let Some(&m) = lower.get(&(cols[k], rows[k])) {
                keep[k] = false;
                if mirror(vals[m], sym) == vals[k] {
                    agree += 1;
                } else {
                    conflict += 1;
                    first_conflict = first_conflict.or(Some((rows[k], cols[k])));
                }
            }
        }
    }
    let mut w = 0;
    for k in 0..n {
        if keep[k] {
            rows[w] = rows[k];
            cols[w] = cols[k];
            vals[w] = vals[k];
            w += 1;
        }
    }
    rows.truncate(w);
    cols.truncate(w);
    vals.truncate(w);
    warnings.push(Warning {
        line: Some(first_line),
        message: format!(
            "{n_upper} entries above the diagonal in a {sym} file: {agree} duplicate mirrors dropped, {} kept as stored",
            n_upper - agree - conflict
        ),
    });
    if let Some((i, j)) = first_conflict {
        warnings.push(Warning {
            line: None,
            message: format!(
                "{conflict} entries above the diagonal disagree with their mirror (first: ({},{})); kept the lower-triangle values",
                i.to_i64() + 1,
                j.to_i64() + 1
            ),
        });
    }
}

/// Appends the mirror of every off-diagonal entry, in parallel. Errors
/// if the new count does not fit `I` or memory.
fn expand<T: Scalar, I: Index>(
    rows: &mut Vec<I>,
    cols: &mut Vec<I>,
    vals: &mut Vec<T>,
    sym: MmSymmetry,
) -> Result<(), LineError> {
    const BLOCK: usize = 1 << 16;
    let n = vals.len();
    let counts: Vec<usize> = rows
        .par_chunks(BLOCK)
        .zip(cols.par_chunks(BLOCK))
        .map(|(r, c)| r.iter().zip(c).filter(|(a, b)| a != b).count())
        .collect();
    let d: usize = counts.iter().sum();
    let total = n.saturating_add(d);
    if total > I::MAX_USIZE {
        return Err(index_overflow::<I>(
            None,
            "nnz after symmetric expansion",
            total,
        ));
    }
    let what = "the mirrored entries of the symmetric file";
    let alloc = |e| (None, MmErrorKind::Alloc(e));
    crate::alloc::try_grow(rows, d, what).map_err(alloc)?;
    crate::alloc::try_grow(cols, d, what).map_err(alloc)?;
    crate::alloc::try_grow(vals, d, what).map_err(alloc)?;
    let (sr, mut dr) = rows.split_at_mut(n);
    let (sc, mut dc) = cols.split_at_mut(n);
    let (sv, mut dv) = vals.split_at_mut(n);
    let mut parts = Vec::with_capacity(counts.len());
    for (k, &m) in counts.iter().enumerate() {
        let (a, r) = dr.split_at_mut(m);
        let (b, c) = dc.split_at_mut(m);
        let (v, w) = dv.split_at_mut(m);
        parts.push((k, a, b, v));
        (dr, dc, dv) = (r, c, w);
    }
    parts.into_par_iter().for_each(|(k, a, b, v)| {
        let s = k * BLOCK;
        let e = (s + BLOCK).min(n);
        let mut o = 0;
        for t in s..e {
            if sr[t] != sc[t] {
                a[o] = sc[t];
                b[o] = sr[t];
                v[o] = mirror(sv[t], sym);
                o += 1;
            }
        }
    });
    Ok(())
}

fn read_array<T: Scalar, I: Index>(
    src: Source<'_>,
    h: &Header,
    cfg: &Cfg,
    opts: &ReadOptions,
    warnings: &mut Vec<Warning>,
) -> Result<Coo<T, I>, LineError> {
    let (mut st, dense, bytes) = match src {
        Source::Memory(bytes) => {
            let b = data_of(bytes, h);
            let (st, v) = parse_with(b, h, opts.lenient, warnings, |p: &Plan| {
                let n: usize = p.counts.iter().sum();
                let mut v = zeroed::<T>(n, "values")?;
                let (st, full) = run(b, p, &mut v[..], |chunk, l0, out| {
                    array_chunk(chunk, l0, cfg, out)
                })?;
                Ok((st, full, v))
            })?;
            (st, v, Some(b))
        }
        Source::Stream(d) => {
            let (st, v) = super::stream::array::<T>(d, h, cfg, warnings)?;
            (st, v, None)
        }
    };
    // (A stream records it while reading, with its line.)
    if let (MmSymmetry::Hermitian, Some(b)) = (h.symmetry, bytes) {
        st.nonreal_diagonal = first_nonreal_diagonal(b, h, &dense);
    }
    array_checks(&st, opts.lenient, warnings)?;
    let (m, n) = (h.nrows, h.ncols);
    if dense.is_empty() {
        // No values (e.g. `0 N`): N is bounded only by the index type, so
        // walking N empty columns below would spin for minutes (fuzzing).
        return Coo::try_from_parts(m, n, Vec::new(), Vec::new(), Vec::new())
            .map_err(|e| (None, e.into()));
    }
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    let mut k = 0;
    let expand = opts.expand_symmetry;
    for j in 0..n {
        let i0 = match h.symmetry {
            MmSymmetry::General => 0,
            MmSymmetry::Symmetric | MmSymmetry::Hermitian => j,
            MmSymmetry::SkewSymmetric => j + 1,
        };
        for i in i0..m {
            let v = dense[k];
            k += 1;
            if v == T::zero() {
                continue;
            }
            rows.push(I::from_usize_unchecked(i));
            cols.push(I::from_usize_unchecked(j));
            vals.push(v);
            if expand && i != j && h.symmetry != MmSymmetry::General {
                rows.push(I::from_usize_unchecked(j));
                cols.push(I::from_usize_unchecked(i));
                vals.push(mirror(v, h.symmetry));
            }
        }
    }
    if vals.len() > I::MAX_USIZE {
        return Err(index_overflow::<I>(None, "nnz", vals.len()));
    }
    Coo::try_from_parts(m, n, rows, cols, vals).map_err(|e| (None, e.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expand_and_dedup() {
        let (mut r, mut c, mut v) = (vec![0i32, 2, 1], vec![0i32, 0, 1], vec![1.0f64, 2.0, 3.0]);
        expand(&mut r, &mut c, &mut v, MmSymmetry::SkewSymmetric).unwrap();
        assert_eq!(
            (r, c, v),
            (
                vec![0, 2, 1, 0],
                vec![0, 0, 1, 2],
                vec![1.0, 2.0, 3.0, -2.0]
            )
        );
        let (mut r, mut c, mut v) = (vec![1i64, 0, 0], vec![0i64, 1, 2], vec![5.0f64, 5.0, 1.0]);
        let mut w = Vec::new();
        dedup_mirrors(&mut r, &mut c, &mut v, MmSymmetry::Symmetric, 2, 4, &mut w);
        assert_eq!((r, c, v), (vec![1, 0], vec![0, 2], vec![5.0, 1.0]));
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn hermitian_diagonal_must_be_real() {
        use crate::Complex64;
        let strict = ReadOptions::default();
        let lenient = ReadOptions {
            lenient: true,
            ..ReadOptions::default()
        };
        let coord = b"%%MatrixMarket matrix coordinate complex hermitian\n2 2 3\n1 1 1 0\n2 1 1 1\n2 2 3 -0.5\n";
        let e = crate::mm::read_bytes::<Complex64, i32>(coord, "h.mtx", &strict).unwrap_err();
        assert_eq!(e.line(), Some(5), "{e}");
        assert!(e.to_string().contains("hermitian"), "{e}");
        let m = crate::mm::read_bytes::<Complex64, i32>(coord, "h.mtx", &lenient).unwrap();
        assert_eq!(m.warnings.len(), 1);
        assert_eq!(m.warnings[0].line, Some(5));
        assert!(m.coo.values().contains(&Complex64::new(3.0, -0.5)));
        // Array: column-major lower triangle; line 6 is entry (2,2).
        let array = b"%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n% c\n2 1\n3 4\n";
        let e = crate::mm::read_bytes::<Complex64, i32>(array, "h.mtx", &strict).unwrap_err();
        assert_eq!(e.line(), Some(6), "{e}");
        let m = crate::mm::read_bytes::<Complex64, i32>(array, "h.mtx", &lenient).unwrap();
        assert_eq!(m.warnings.first().and_then(|w| w.line), Some(6));
        // A real diagonal is fine.
        let ok = b"%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 1\n3 0\n";
        assert!(crate::mm::read_bytes::<Complex64, i32>(ok, "h.mtx", &strict).is_ok());
    }

    /// Regression (fuzzing): an empty `0 x N` array with a huge `N` walked
    /// `N` empty columns (2^31 for `i32`, forever for `i64`).
    #[test]
    fn empty_array_with_huge_dimension_is_instant() {
        let t = std::time::Instant::now();
        let text = b"%%MatrixMarket matrix array real general\n0 9000000000000000000\n";
        let m = crate::mm::read_bytes::<f64, i64>(text, "a.mtx", &ReadOptions::default()).unwrap();
        assert_eq!(
            (m.coo.nrows(), m.coo.ncols(), m.coo.nnz()),
            (0, 9_000_000_000_000_000_000, 0)
        );
        let text = b"%%MatrixMarket matrix array real general\n0 2000000000\n";
        let m = crate::mm::read_bytes::<f32, i32>(text, "a.mtx", &ReadOptions::default()).unwrap();
        assert_eq!(m.coo.ncols(), 2_000_000_000);
        assert!(t.elapsed().as_secs() < 5);
    }
}
