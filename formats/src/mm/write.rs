//! The writer: `coordinate` files with shortest round-trip values.
//!
//! ```text
//! %%MatrixMarket matrix coordinate <field> <symmetry>
//! %<carried comment>           (WriteOptions::comments, sanitised)
//! % <comment>                  (WriteOptions::comment)
//! ROWS COLS ENTRIES
//! i j [value | re im]          (1-based)
//! ```
//!
//! With [`WriteSymmetry::Auto`] (the default) a square matrix that is
//! exactly symmetric, skew-symmetric or hermitian ([`symmetry_of`]) is
//! written as such: its lower triangle (strictly lower for skew-symmetric),
//! row by row, after canonicalisation (entries sorted, duplicates summed).
//! Everything else is written `general`, every stored entry.
//!
//! Entries are formatted in parallel in blocks (rayon) and written in
//! order; values are checked against the field before anything is
//! written, so a refused matrix leaves no partial output.

use std::io::Write;

use rayon::prelude::*;

use super::error::{MmError, MmErrorKind};
use super::header::{MmField, MmSymmetry};
use crate::{fits_index, Coo, Csr, Index, MatrixRef, Scalar};

/// Which storage the writer declares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WriteSymmetry {
    /// `symmetric`, `skew-symmetric` or `hermitian` (lower triangle only)
    /// when the matrix is square and exactly so ([`symmetry_of`]);
    /// `general` otherwise.
    #[default]
    Auto,
    /// Always `general`: every stored entry, in stored order.
    General,
}

/// Options of the writer.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// Field to write: `Real`, `Integer` (every value must be integral and
    /// real), `Complex` (real types get imaginary part 0) or `Pattern`
    /// (values dropped). `Real` for a complex type requires every imaginary
    /// part to be zero.
    pub field: MmField,
    /// Comment written after the banner and the carried
    /// [`comments`](Self::comments) (one `% ` line per line of text);
    /// `None` writes `% written by sparsetool`.
    pub comment: Option<String>,
    /// Storage to declare (default [`WriteSymmetry::Auto`]).
    pub symmetry: WriteSymmetry,
    /// Comment lines carried over from an input (as the reader keeps them
    /// in [`MmMatrix::comments`](super::MmMatrix::comments): the text after
    /// the `%`), written right after the banner as `%` + text. A line break
    /// inside one starts a new `%` line; other control characters (but
    /// tab) become U+FFFD, so no comment can break the file. Lines that
    /// are a sparsetool writer's own comment (`written by sparsetool...`)
    /// are skipped, so repeated conversions do not pile them up.
    pub comments: Vec<String>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            field: MmField::Real,
            comment: None,
            symmetry: WriteSymmetry::Auto,
            comments: Vec::new(),
        }
    }
}

impl WriteOptions {
    /// Options writing `T` without loss ([`default_field`]).
    #[must_use]
    pub fn for_type<T: Scalar>() -> Self {
        Self {
            field: default_field::<T>(),
            ..Self::default()
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

/// The writer's own comment text, as carried comments start when a file
/// written by sparsetool is read back.
const OWN_COMMENT: &str = "written by sparsetool";

/// One carried comment as `%` lines: a line per line of text, control
/// characters other than tab replaced by U+FFFD.
fn push_comment(s: &mut String, c: &str) {
    if c.is_empty() {
        s.push_str("%\n");
        return;
    }
    for l in c.lines() {
        if l.trim_start().starts_with(OWN_COMMENT) {
            continue;
        }
        push_line(s, "%", l);
    }
}

/// `prefix` and `line` as one line, control characters other than tab
/// replaced by U+FFFD (so that a comment cannot break the file's lines).
fn push_line(s: &mut String, prefix: &str, line: &str) {
    s.push_str(prefix);
    s.extend(line.chars().map(|ch| {
        if ch.is_control() && ch != '\t' {
            '\u{FFFD}'
        } else {
            ch
        }
    }));
    s.push('\n');
}

/// Banner, comments and size line.
fn write_head<W: Write>(
    w: &mut W,
    (nrows, ncols, nnz): (usize, usize, usize),
    symmetry: MmSymmetry,
    opts: &WriteOptions,
) -> Result<(), MmError> {
    let mut s = format!(
        "%%MatrixMarket matrix coordinate {} {}\n",
        opts.field,
        symmetry.keyword()
    );
    for c in &opts.comments {
        push_comment(&mut s, c);
    }
    match &opts.comment {
        None => s.push_str("% written by sparsetool\n"),
        Some(c) if c.is_empty() => s.push_str("%\n"),
        Some(c) => {
            for l in c.lines() {
                push_line(&mut s, "% ", l);
            }
        }
    }
    s.push_str(&format!("{nrows} {ncols} {nnz}\n"));
    w.write_all(s.as_bytes()).map_err(werr)
}

/// The storage a square matrix can be written in without loss, given the
/// field it is written in: `Symmetric` if A = Aᵀ, else `SkewSymmetric` if
/// A = −Aᵀ and no diagonal entry is stored, else `Hermitian` (complex
/// field only) if A = conj(Aᵀ) with a real diagonal, else `General` (also
/// for non-square matrices). Structure counts too: every stored (i, j)
/// needs a stored (j, i), so explicit zeros survive the round trip. A
/// `pattern` field compares the structure only (symmetric or general).
/// NaN equals nothing: a matrix holding a NaN is `General` unless the
/// field is `pattern`.
///
/// O(nnz log(row length)), in parallel over rows: each entry's mirror is
/// found by binary search in its column's row.
///
/// ```
/// use sparsetool_formats::mm::{symmetry_of, MmField, MmSymmetry};
/// use sparsetool_formats::Csr;
/// let a = Csr::<f64, i32>::try_from_parts(2, 2, vec![0, 1, 2], vec![1, 0], vec![3.0, -3.0]).unwrap();
/// assert_eq!(symmetry_of(&a, MmField::Real), MmSymmetry::SkewSymmetric);
/// assert_eq!(symmetry_of(&a, MmField::Pattern), MmSymmetry::Symmetric);
/// ```
#[must_use]
pub fn symmetry_of<T: Scalar, I: Index>(m: &Csr<T, I>, field: MmField) -> MmSymmetry {
    if m.nrows() != m.ncols() {
        return MmSymmetry::General;
    }
    let pattern = field == MmField::Pattern;
    let complex = field == MmField::Complex && T::IS_COMPLEX;
    let and = |a: (bool, bool, bool), b: (bool, bool, bool)| (a.0 && b.0, a.1 && b.1, a.2 && b.2);
    let row_flags = |i: usize| -> Result<(bool, bool, bool), ()> {
        let mut f = (true, !pattern, complex);
        let (cols, vals) = m.row(i);
        for (c, &v) in cols.iter().zip(vals) {
            let j = c.to_usize();
            let (mc, mv) = m.row(j);
            let Ok(k) = mc.binary_search_by(|x| x.to_usize().cmp(&i)) else {
                return Err(());
            };
            if pattern {
                continue;
            }
            let u = mv[k];
            f.0 &= v == u;
            f.1 &= i != j && v == -u;
            f.2 &= v == u.conj() && (i != j || v.im() == 0.0);
            if f == (false, false, false) {
                return Err(());
            }
        }
        Ok(f)
    };
    let flags = (0..m.nrows())
        .into_par_iter()
        .map(row_flags)
        .try_reduce(|| (true, true, true), |a, b| Ok(and(a, b)));
    match flags {
        Ok((true, _, _)) => MmSymmetry::Symmetric,
        Ok((_, true, _)) => MmSymmetry::SkewSymmetric,
        Ok((_, _, true)) => MmSymmetry::Hermitian,
        _ => MmSymmetry::General,
    }
}

/// A COO matrix in canonical CSR form (sorted, duplicates summed in
/// stored order), or `None` if its entry count does not fit `I`.
fn canonical_csr<T: Scalar, I: Index>(m: &Coo<T, I>) -> Option<Csr<T, I>> {
    use rayon::slice::ParallelSliceMut;
    let n = m.nrows();
    if !fits_index::<I>(n, m.ncols(), m.nnz()) {
        return None;
    }
    let (rows, cols, vals) = (m.rows(), m.cols(), m.values());
    let mut order: Vec<usize> = (0..m.nnz()).collect();
    if !m.is_canonical() {
        order.par_sort_by_key(|&k| (rows[k], cols[k]));
    }
    let mut counts = vec![0usize; n + 1];
    let mut col_idx = Vec::with_capacity(m.nnz());
    let mut values: Vec<T> = Vec::with_capacity(m.nnz());
    let mut last = None;
    for k in order {
        let key = (rows[k], cols[k]);
        match values.last_mut() {
            Some(v) if last == Some(key) => *v += vals[k],
            _ => {
                col_idx.push(cols[k]);
                values.push(vals[k]);
                counts[rows[k].to_usize() + 1] += 1;
                last = Some(key);
            }
        }
    }
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut acc = 0usize;
    for c in counts {
        acc += c;
        row_ptr.push(I::from_usize_unchecked(acc));
    }
    // SAFETY: rows are sorted by (row, col) with duplicates merged, so
    // columns ascend strictly within a row; every index comes from a valid
    // COO of the same shape, and the entry count fits `I` (checked above).
    Some(unsafe { Csr::from_parts_unchecked(n, m.ncols(), row_ptr, col_idx, values) })
}

/// Whether a COO matrix cannot be symmetric, from a cheap count: some
/// entries strictly below the diagonal but none above, or the reverse.
fn surely_general<T: Scalar, I: Index>(m: &Coo<T, I>) -> bool {
    let (lower, upper) = m
        .rows()
        .par_iter()
        .zip(m.cols())
        .map(|(r, c)| (usize::from(r > c), usize::from(r < c)))
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    (lower == 0) != (upper == 0)
}

/// Whether [`write_coo`] with [`WriteSymmetry::Auto`] canonicalises `m`
/// to look for a symmetry: it is square, and its entries are not all on
/// one side of the diagonal (a cheap count, without a copy). `false` means
/// it is written `general`, as stored.
#[must_use]
pub fn may_be_symmetric<T: Scalar, I: Index>(m: &Coo<T, I>) -> bool {
    m.nrows() == m.ncols() && !surely_general(m)
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

/// Writes a COO matrix. `general`: entries in stored order, duplicates
/// kept. With [`WriteSymmetry::Auto`], a square matrix is canonicalised
/// (sorted, duplicates summed) and, if [`symmetry_of`] finds it
/// symmetric, skew-symmetric or hermitian, written as such (its lower
/// triangle, row by row).
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
    if opts.symmetry == WriteSymmetry::Auto && may_be_symmetric(m) {
        if let Some(c) = canonical_csr(m) {
            let sym = symmetry_of(&c, opts.field);
            if sym != MmSymmetry::General {
                return write_rows(w, &c, sym, opts);
            }
        }
    }
    write_head(
        &mut w,
        (m.nrows(), m.ncols(), m.nnz()),
        MmSymmetry::General,
        opts,
    )?;
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

/// Writes a CSR matrix (row by row): `general`, or with
/// [`WriteSymmetry::Auto`] the lower triangle of a matrix that
/// [`symmetry_of`] finds symmetric, skew-symmetric or hermitian.
///
/// # Errors
/// As [`write_coo`].
pub fn write_csr<W: Write, T: Scalar, I: Index>(
    w: W,
    m: &Csr<T, I>,
    opts: &WriteOptions,
) -> Result<(), MmError> {
    check_values(m.values(), opts.field)?;
    let sym = match opts.symmetry {
        WriteSymmetry::Auto => symmetry_of(m, opts.field),
        WriteSymmetry::General => MmSymmetry::General,
    };
    write_rows(w, m, sym, opts)
}

/// Writes the rows of a CSR matrix in storage `sym`: every entry
/// (general), the lower triangle (symmetric, hermitian) or the strictly
/// lower one (skew-symmetric). Values are already checked.
fn write_rows<W: Write, T: Scalar, I: Index>(
    mut w: W,
    m: &Csr<T, I>,
    sym: MmSymmetry,
    opts: &WriteOptions,
) -> Result<(), MmError> {
    let nnz = match sym {
        MmSymmetry::General => m.nnz(),
        _ => (0..m.nrows())
            .into_par_iter()
            .map(|r| kept(m, sym, r))
            .sum(),
    };
    write_head(&mut w, (m.nrows(), m.ncols(), nnz), sym, opts)?;
    write_row_entries(&mut w, m, 0, sym, opts)?;
    w.flush().map_err(werr)
}

/// Entries of row `r` of `m` written in storage `sym`: a prefix, as
/// columns ascend.
fn kept<T: Scalar, I: Index>(m: &Csr<T, I>, sym: MmSymmetry, r: usize) -> usize {
    let cols = m.row(r).0;
    match sym {
        MmSymmetry::General => cols.len(),
        MmSymmetry::SkewSymmetric => cols.partition_point(|c| c.to_usize() < r),
        MmSymmetry::Symmetric | MmSymmetry::Hermitian => {
            cols.partition_point(|c| c.to_usize() <= r)
        }
    }
}

/// The entry lines of the rows of `m`, numbered from row `first` (a block
/// of a larger matrix), in blocks formatted in parallel.
fn write_row_entries<W: Write, T: Scalar, I: Index>(
    w: &mut W,
    m: &Csr<T, I>,
    first: usize,
    sym: MmSymmetry,
    opts: &WriteOptions,
) -> Result<(), MmError> {
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
    write_blocks(w, bounds.len() - 1, |b| {
        let (r0, r1) = (bounds[b], bounds[b + 1]);
        let cap = ptr[r1].to_usize() - ptr[r0].to_usize();
        let mut buf = Vec::with_capacity(cap * 48);
        let (mut ib, mut rb) = (itoa::Buffer::new(), ryu::Buffer::new());
        for r in r0..r1 {
            let (cols, vals) = m.row(r);
            let k = kept(m, sym, r);
            for (c, v) in cols[..k].iter().zip(&vals[..k]) {
                push_entry(
                    &mut buf,
                    first + r,
                    c.to_usize(),
                    *v,
                    opts.field,
                    &mut ib,
                    &mut rb,
                );
            }
        }
        buf
    })
}

/// A `general` coordinate file written block of rows by block of rows,
/// for a matrix made as it is written (`sparsetool gen` of a matrix larger
/// than memory): the header (with the final entry count) first, then
/// [`RowBlockWriter::rows`] for each block in order. The lines are those
/// [`write_csr`] writes for the whole matrix with
/// [`WriteSymmetry::General`].
#[derive(Debug)]
pub struct RowBlockWriter<W> {
    w: W,
    opts: WriteOptions,
    next_row: usize,
    nrows: usize,
}

impl<W: Write> RowBlockWriter<W> {
    /// Writes the header of an `nrows` x `ncols` matrix of `nnz` entries.
    ///
    /// # Errors
    /// I/O errors.
    pub fn new(
        mut w: W,
        (nrows, ncols, nnz): (usize, usize, usize),
        opts: &WriteOptions,
    ) -> Result<Self, MmError> {
        write_head(&mut w, (nrows, ncols, nnz), MmSymmetry::General, opts)?;
        Ok(Self {
            w,
            opts: opts.clone(),
            next_row: 0,
            nrows,
        })
    }

    /// Writes the next rows (the rows of `block`).
    ///
    /// # Errors
    /// Values that do not fit the field; I/O errors.
    pub fn rows<T: Scalar, I: Index>(&mut self, block: &Csr<T, I>) -> Result<(), MmError> {
        check_values(block.values(), self.opts.field)?;
        write_row_entries(
            &mut self.w,
            block,
            self.next_row,
            MmSymmetry::General,
            &self.opts,
        )?;
        self.next_row += block.nrows();
        Ok(())
    }

    /// Flushes and returns the writer.
    ///
    /// # Errors
    /// Fewer or more rows written than the header says; I/O errors.
    pub fn finish(mut self) -> Result<W, MmError> {
        if self.next_row != self.nrows {
            return Err(MmError::new(
                "",
                None,
                MmErrorKind::Io(std::io::Error::other(format!(
                    "{} rows written, the header says {}",
                    self.next_row, self.nrows
                ))),
            ));
        }
        self.w.flush().map_err(werr)?;
        Ok(self.w)
    }
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
            ..WriteOptions::default()
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
            ..WriteOptions::default()
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
