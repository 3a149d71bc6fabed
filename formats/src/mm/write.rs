//! The writer: `coordinate general` files with shortest round-trip values.
//!
//! ```text
//! %%MatrixMarket matrix coordinate <field> general
//! % <comment>
//! ROWS COLS ENTRIES
//! i j [value | re im]          (1-based)
//! ```
//!
//! Entries are formatted in parallel in blocks (rayon) and written in
//! order; values are checked against the field before anything is
//! written, so a refused matrix leaves no partial output.

use std::io::Write;

use rayon::prelude::*;

use super::error::{MmError, MmErrorKind};
use super::header::MmField;
use crate::{Coo, Csr, Index, MatrixRef, Scalar};

/// Options of the writer.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// Field to write: `Real`, `Integer` (every value must be integral and
    /// real), `Complex` (real types get imaginary part 0) or `Pattern`
    /// (values dropped). `Real` for a complex type requires every imaginary
    /// part to be zero.
    pub field: MmField,
    /// Comment written after the banner (one `%` line per line of text);
    /// `None` writes `% written by sparsetool`.
    pub comment: Option<String>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            field: MmField::Real,
            comment: None,
        }
    }
}

impl WriteOptions {
    /// Options writing `T` without loss ([`default_field`]).
    #[must_use]
    pub fn for_type<T: Scalar>() -> Self {
        Self {
            field: default_field::<T>(),
            comment: None,
        }
    }
}

/// The field that stores `T` without loss: `Complex` for complex types,
/// else `Real`.
#[must_use]
pub fn default_field<T: Scalar>() -> MmField {
    if T::IS_COMPLEX {
        MmField::Complex
    } else {
        MmField::Real
    }
}

/// Entries per formatting block.
const BLOCK: usize = 1 << 15;

fn is_f32<T: Scalar>() -> bool {
    std::mem::size_of::<T>() == if T::IS_COMPLEX { 8 } else { 4 }
}

fn werr(e: std::io::Error) -> MmError {
    MmError::new("", None, MmErrorKind::Io(e))
}

/// Checks that every value can be written in `field`.
fn check_values<T: Scalar>(vals: &[T], field: MmField) -> Result<(), MmError> {
    let bad = |v: &T| match field {
        MmField::Real => v.im() != 0.0,
        MmField::Integer => {
            let r = v.re();
            v.im() != 0.0 || !r.is_finite() || r.fract() != 0.0 || r.abs() >= 9.2e18
        }
        MmField::Complex | MmField::Pattern => false,
    };
    if let Some(v) = vals.par_iter().find_first(|v| bad(v)) {
        let detail = match field {
            MmField::Real => format!(
                "the complex value {} + {}i as `real` (write it as `complex`)",
                v.re(),
                v.im()
            ),
            _ => format!(
                "the value {}{} as `integer` (it is not an integer; write it as `real`)",
                v.re(),
                if v.im() != 0.0 {
                    format!(" + {}i", v.im())
                } else {
                    String::new()
                }
            ),
        };
        return Err(MmError::new(
            "",
            None,
            MmErrorKind::NotRepresentable { detail },
        ));
    }
    Ok(())
}

#[inline]
fn push_float(buf: &mut Vec<u8>, x: f64, f32: bool, r: &mut ryu::Buffer) {
    if f32 {
        buf.extend_from_slice(r.format(x as f32).as_bytes());
    } else {
        buf.extend_from_slice(r.format(x).as_bytes());
    }
}

/// Appends one entry line.
#[inline]
fn push_entry<T: Scalar>(
    buf: &mut Vec<u8>,
    i: usize,
    j: usize,
    v: T,
    field: MmField,
    ib: &mut itoa::Buffer,
    rb: &mut ryu::Buffer,
) {
    buf.extend_from_slice(ib.format(i + 1).as_bytes());
    buf.push(b' ');
    buf.extend_from_slice(ib.format(j + 1).as_bytes());
    let f32 = is_f32::<T>();
    match field {
        MmField::Pattern => {}
        MmField::Integer => {
            buf.push(b' ');
            buf.extend_from_slice(ib.format(v.re() as i64).as_bytes());
        }
        MmField::Real => {
            buf.push(b' ');
            push_float(buf, v.re(), f32, rb);
        }
        MmField::Complex => {
            buf.push(b' ');
            push_float(buf, v.re(), f32, rb);
            buf.push(b' ');
            push_float(buf, v.im(), f32, rb);
        }
    }
    buf.push(b'\n');
}

fn write_head<W: Write>(
    w: &mut W,
    nrows: usize,
    ncols: usize,
    nnz: usize,
    opts: &WriteOptions,
) -> Result<(), MmError> {
    let mut s = format!("%%MatrixMarket matrix coordinate {} general\n", opts.field);
    match &opts.comment {
        None => s.push_str("% written by sparsetool\n"),
        Some(c) if c.is_empty() => s.push_str("%\n"),
        Some(c) => {
            for l in c.lines() {
                s.push_str("% ");
                s.push_str(l);
                s.push('\n');
            }
        }
    }
    s.push_str(&format!("{nrows} {ncols} {nnz}\n"));
    w.write_all(s.as_bytes()).map_err(werr)
}

/// Formats `blocks` in parallel (a batch at a time, bounding memory) and
/// writes them in order.
fn write_blocks<W, F>(w: &mut W, nblocks: usize, f: F) -> Result<(), MmError>
where
    W: Write,
    F: Fn(usize) -> Vec<u8> + Sync,
{
    let batch = rayon::current_num_threads().max(1) * 4;
    let mut b = 0;
    while b < nblocks {
        let e = (b + batch).min(nblocks);
        let bufs: Vec<Vec<u8>> = (b..e).into_par_iter().map(&f).collect();
        for buf in bufs {
            w.write_all(&buf).map_err(werr)?;
        }
        b = e;
    }
    Ok(())
}

/// Writes a COO matrix (entries in stored order, duplicates kept).
///
/// # Errors
/// [`MmErrorKind::NotRepresentable`] if a value does not fit
/// `opts.field` (checked before anything is written); I/O errors. The
/// error's path is empty: callers add it with [`MmError::with_path`].
pub fn write_coo<W: Write, T: Scalar, I: Index>(
    mut w: W,
    m: &Coo<T, I>,
    opts: &WriteOptions,
) -> Result<(), MmError> {
    check_values(m.values(), opts.field)?;
    write_head(&mut w, m.nrows(), m.ncols(), m.nnz(), opts)?;
    let (rows, cols, vals) = (m.rows(), m.cols(), m.values());
    let n = m.nnz();
    write_blocks(&mut w, n.div_ceil(BLOCK), |b| {
        let (s, e) = (b * BLOCK, ((b + 1) * BLOCK).min(n));
        let mut buf = Vec::with_capacity((e - s) * 48);
        let (mut ib, mut rb) = (itoa::Buffer::new(), ryu::Buffer::new());
        for k in s..e {
            push_entry(
                &mut buf,
                rows[k].to_usize(),
                cols[k].to_usize(),
                vals[k],
                opts.field,
                &mut ib,
                &mut rb,
            );
        }
        buf
    })?;
    w.flush().map_err(werr)
}

/// Writes a CSR matrix (row by row).
///
/// # Errors
/// As [`write_coo`].
pub fn write_csr<W: Write, T: Scalar, I: Index>(
    mut w: W,
    m: &Csr<T, I>,
    opts: &WriteOptions,
) -> Result<(), MmError> {
    check_values(m.values(), opts.field)?;
    write_head(&mut w, m.nrows(), m.ncols(), m.nnz(), opts)?;
    // Row ranges holding about BLOCK entries each.
    let ptr = m.row_ptr();
    let mut bounds = vec![0usize];
    let mut start = 0usize;
    for r in 0..m.nrows() {
        let end = ptr[r + 1].to_usize();
        if end - start >= BLOCK {
            bounds.push(r + 1);
            start = end;
        }
    }
    if *bounds.last().unwrap_or(&0) != m.nrows() {
        bounds.push(m.nrows());
    }
    write_blocks(&mut w, bounds.len() - 1, |b| {
        let (r0, r1) = (bounds[b], bounds[b + 1]);
        let cap = ptr[r1].to_usize() - ptr[r0].to_usize();
        let mut buf = Vec::with_capacity(cap * 48);
        let (mut ib, mut rb) = (itoa::Buffer::new(), ryu::Buffer::new());
        for r in r0..r1 {
            let (cols, vals) = m.row(r);
            for (c, v) in cols.iter().zip(vals) {
                push_entry(&mut buf, r, c.to_usize(), *v, opts.field, &mut ib, &mut rb);
            }
        }
        buf
    })?;
    w.flush().map_err(werr)
}

/// Writes any matrix: COO in stored order, every other format row by row
/// with ascending columns (the GPU layouts through
/// [`MatrixRef::to_sorted_coo`]).
///
/// # Errors
/// As [`write_coo`].
pub fn write_matrix<W: Write, T: Scalar, I: Index>(
    w: W,
    m: MatrixRef<'_, T, I>,
    opts: &WriteOptions,
) -> Result<(), MmError> {
    match m {
        MatrixRef::Coo(a) => write_coo(w, a, opts),
        MatrixRef::Csr(a) => write_csr(w, a, opts),
        other => write_coo(w, &other.to_sorted_coo(), opts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Complex64;

    #[test]
    fn banner_and_values() {
        let m =
            Coo::<f64, i32>::try_from_parts(2, 3, vec![0, 1], vec![2, 0], vec![0.1, -3.0]).unwrap();
        let mut out = Vec::new();
        write_coo(&mut out, &m, &WriteOptions::default()).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert_eq!(
            s,
            "%%MatrixMarket matrix coordinate real general\n% written by sparsetool\n2 3 2\n1 3 0.1\n2 1 -3.0\n"
        );
        let o = WriteOptions {
            field: MmField::Integer,
            comment: Some("a\nb".into()),
        };
        let mut out = Vec::new();
        let e = write_coo(&mut out, &m, &o).unwrap_err();
        assert!(matches!(e.kind(), MmErrorKind::NotRepresentable { .. }));
        assert!(out.is_empty());
        let m =
            Coo::<f64, i32>::try_from_parts(2, 3, vec![0, 1], vec![2, 0], vec![7.0, -3.0]).unwrap();
        let mut out = Vec::new();
        write_coo(&mut out, &m, &o).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with("%%MatrixMarket matrix coordinate integer general\n"));
        assert!(s.ends_with("% a\n% b\n2 3 2\n1 3 7\n2 1 -3\n"));
    }

    #[test]
    fn complex_and_pattern() {
        let m = Coo::<Complex64, i64>::try_from_parts(
            1,
            1,
            vec![0],
            vec![0],
            vec![Complex64::new(1.5, -2.0)],
        )
        .unwrap();
        let mut out = Vec::new();
        write_coo(&mut out, &m, &WriteOptions::for_type::<Complex64>()).unwrap();
        assert!(String::from_utf8(out)
            .unwrap()
            .ends_with("1 1 1\n1 1 1.5 -2.0\n"));
        assert!(write_coo(Vec::new(), &m, &WriteOptions::default()).is_err());
        let o = WriteOptions {
            field: MmField::Pattern,
            comment: Some(String::new()),
        };
        let mut out = Vec::new();
        write_coo(&mut out, &m, &o).unwrap();
        assert!(String::from_utf8(out).unwrap().ends_with("%\n1 1 1\n1 1\n"));
    }

    #[test]
    fn f32_shortest() {
        let m = Coo::<f32, i32>::try_from_parts(1, 1, vec![0], vec![0], vec![0.1f32]).unwrap();
        let mut out = Vec::new();
        write_coo(&mut out, &m, &WriteOptions::default()).unwrap();
        assert!(String::from_utf8(out).unwrap().ends_with("1 1 0.1\n"));
    }
}
