//! The GPU layouts (ELL, HYB, JDS, SELL) out of core. They need the row
//! lengths before anything is placed (the ELL width, HYB's split, the
//! sort by length of JDS and SELL), and the lengths are known only once
//! duplicates are summed, so they are built from the CSR that the bucket
//! pass writes into the scratch directory: mapped read-only (its pages are
//! the page cache's, not the budget's), read in row blocks (ELL, HYB) or
//! in sorted order (JDS, SELL: the permutation-aware pass), and written
//! to the output in bounded pieces.
//!
//! The rules are the in-memory conversions' own (`imp.rs`): the same
//! widths, the same stable sort by descending length, the same padding,
//! so the file is byte-identical to the in-memory one.

use std::cmp::Reverse;
use std::path::Path;

use sparsetool_formats::binary::{CsrView, Layout, SectionSpec};
use sparsetool_formats::{FormatError, FormatKind, Index, Scalar};

use super::out::{fields, SpbOut};
use super::{OocError, Plan};
use crate::imp::longest_row;
use crate::params::{check_sell, check_width, slots, ELL_FILL_MIN_SLOTS, MAX_ELL_FILL};
use crate::util::{ix, longer_than, offsets, Par};
use crate::{hyb_auto_width, ConvertError, ConvertParams, HybWidth};

/// The mapped scratch CSR file.
pub(super) struct MappedCsr {
    map: memmap2::Mmap,
    layout: Layout,
}

impl MappedCsr {
    /// Maps `path`, a CSR `.spb` with `nrows + 1` offsets and `nnz`
    /// entries just written by the bucket pass.
    pub(super) fn open<T: Scalar, I: Index>(
        path: &Path,
        nrows: usize,
        nnz: usize,
    ) -> Result<Self, OocError> {
        let specs = super::specs::<T, I>(["row_ptr", "col_idx"], [nrows as u64 + 1, nnz as u64])?;
        let layout = Layout::new(&specs)?;
        let file = std::fs::File::open(path).map_err(|e| OocError::io(path, "cannot open", e))?;
        // SAFETY: the file is this process's own scratch file, in a
        // directory it created; nothing else writes it while it is mapped.
        let map = unsafe { memmap2::Mmap::map(&file) }
            .map_err(|e| OocError::io(path, "cannot map", e))?;
        if (map.len() as u64) < layout.file_size {
            return Err(OocError::Internal(format!(
                "{}: {} bytes, {} expected",
                path.display(),
                map.len(),
                layout.file_size
            )));
        }
        Ok(Self { map, layout })
    }

    fn section<P: bytemuck::Pod>(&self, s: usize) -> Result<&[P], OocError> {
        let sec = &self.layout.table[s];
        let bytes = &self.map[sec.offset as usize..(sec.offset + sec.byte_len) as usize];
        bytemuck::try_cast_slice(bytes)
            .map_err(|e| OocError::Internal(format!("scratch CSR section `{}`: {e}", sec.name)))
    }

    /// The matrix, `nrows x ncols`.
    pub(super) fn view<T: Scalar, I: Index>(
        &self,
        nrows: usize,
        ncols: usize,
    ) -> Result<CsrView<'_, T, I>, OocError> {
        Ok(CsrView {
            nrows,
            ncols,
            row_ptr: self.section(0)?,
            col_idx: self.section(1)?,
            values: self.section(2)?,
        })
    }
}

/// Memory of the layout pass: entries of a block being placed, and
/// positions of a piece of the permutation.
#[derive(Debug, Clone, Copy)]
struct Pieces {
    entries: usize,
    positions: usize,
}

impl Pieces {
    fn new(plan: &Plan) -> Self {
        Self {
            entries: (plan.bucket_entries / 4 * 3).max(1024),
            positions: (plan.bucket_entries / 4).max(1024),
        }
    }
}

/// Writes `target` (ELL, HYB, JDS or SELL) built from `a` with parameters
/// `p` to `out`; returns the bytes written. The output's size is known
/// before anything is written, and checked against the free space.
/// Without `out`, only checks that the parameters fit the matrix (the
/// in-memory conversion's errors) and returns 0.
pub(super) fn write<T: Scalar, I: Index>(
    a: &CsrView<'_, T, I>,
    target: FormatKind,
    p: &ConvertParams,
    plan: &Plan,
    out: Option<&Path>,
) -> Result<u64, OocError> {
    let pieces = Pieces::new(plan);
    match target {
        FormatKind::Ell => write_ell(a, p, pieces, out),
        FormatKind::Hyb => write_hyb(a, p, pieces, out),
        FormatKind::Jds => write_jds(a, pieces, out),
        FormatKind::Sell => write_sell(a, p.slice, p.sigma_or_default(), pieces, out),
        other => Err(OocError::Internal(format!(
            "{other} is not a GPU layout built from CSR"
        ))),
    }
}

/// Ends the output of `kind` built from `a`: its sections hold what
/// `specs` said, the header carries the format's two parameters.
fn finish<T: Scalar, I: Index>(
    o: SpbOut,
    kind: FormatKind,
    a: &CsrView<'_, T, I>,
    params: (u64, u64),
    specs: &[SectionSpec],
) -> Result<u64, OocError> {
    let f = fields::<T, I>(kind, a.nrows, a.ncols, a.nnz() as u64, params)?;
    let counts: Vec<u64> = specs.iter().map(|s| s.count).collect();
    o.finish(&f, &counts)
}

/// Creates the output after checking that its file system holds it.
fn create(out: &Path, specs: &[SectionSpec]) -> Result<SpbOut, OocError> {
    let size = Layout::new(specs)?.file_size;
    let dir = sparsetool_formats::io::parent_dir(out);
    if let Some(available) = super::free_space(&dir) {
        if available < size {
            return Err(OocError::NoSpace {
                path: dir.display().to_string(),
                needed: size,
                available,
                during: false,
            });
        }
    }
    SpbOut::create(out, specs)
}

fn write_ell<T: Scalar, I: Index>(
    a: &CsrView<'_, T, I>,
    p: &ConvertParams,
    pieces: Pieces,
    out: Option<&Path>,
) -> Result<u64, OocError> {
    let (longest, row) = longest_row(Par::Rayon, a.row_ptr);
    let width = match p.ell_width {
        None => longest,
        Some(w) => {
            check_width(FormatKind::Ell, w, a.ncols)?;
            if w < longest {
                return Err(ConvertError::EllWidthTooSmall {
                    width: w,
                    longest,
                    row,
                }
                .into());
            }
            w
        }
    };
    let n_slots = slots::<I>(a.nrows, width)?;
    if !p.allow_fill && n_slots > ELL_FILL_MIN_SLOTS && n_slots > MAX_ELL_FILL * a.nnz() {
        return Err(ConvertError::EllFill {
            slots: n_slots,
            nnz: a.nnz(),
            width,
        }
        .into());
    }
    let specs = super::sections::<T, I>(&[
        ("row_nnz", false, a.nrows as u64),
        ("col_idx", false, n_slots as u64),
        ("values", true, n_slots as u64),
    ])?;
    let Some(out) = out else { return Ok(0) };
    let mut o = create(out, &specs)?;
    ell_part(a, width, &mut o, None, pieces)?;
    finish(o, FormatKind::Ell, a, (width as u64, 0), &specs)
}

fn write_hyb<T: Scalar, I: Index>(
    a: &CsrView<'_, T, I>,
    p: &ConvertParams,
    pieces: Pieces,
    out: Option<&Path>,
) -> Result<u64, OocError> {
    let n = a.nrows;
    let width = match p.hyb_width {
        HybWidth::Fixed(w) => {
            check_width(FormatKind::Hyb, w, a.ncols)?;
            w
        }
        HybWidth::Auto => hyb_auto_width((0..n).map(|i| a.row_len(i)), n),
    };
    let n_slots = slots::<I>(n, width)?;
    let tail: usize = (0..n).map(|i| a.row_len(i).saturating_sub(width)).sum();
    let specs = super::sections::<T, I>(&[
        ("ell_row_nnz", false, n as u64),
        ("ell_col_idx", false, n_slots as u64),
        ("ell_values", true, n_slots as u64),
        ("coo_rows", false, tail as u64),
        ("coo_cols", false, tail as u64),
        ("coo_values", true, tail as u64),
    ])?;
    let Some(out) = out else { return Ok(0) };
    let mut o = create(out, &specs)?;
    ell_part(a, width, &mut o, Some(3), pieces)?;
    finish(o, FormatKind::Hyb, a, (width as u64, tail as u64), &specs)
}

/// The ELL part of width `width` (sections 0-2: row counts, slot-major
/// columns and values), block of rows by block of rows; with `tail`, the
/// entries beyond the width go to the COO sections `tail..tail + 3` in
/// row order (HYB).
fn ell_part<T: Scalar, I: Index>(
    a: &CsrView<'_, T, I>,
    width: usize,
    o: &mut SpbOut,
    tail: Option<usize>,
    pieces: Pieces,
) -> Result<(), OocError> {
    let n = a.nrows;
    let per = (pieces.entries / width.max(1)).clamp(1, n.max(1));
    let (mut c, mut v) = (Vec::<I>::new(), Vec::<T>::new());
    let (mut tr, mut tc, mut tv) = (Vec::<I>::new(), Vec::<I>::new(), Vec::<T>::new());
    let mut r0 = 0;
    sparsetool_formats::progress::CONVERT.start(n.div_ceil(per) as u64);
    while r0 < n {
        let r1 = (r0 + per).min(n);
        let r = r1 - r0;
        let lens: Vec<I> = (r0..r1).map(|i| ix(a.row_len(i).min(width))).collect();
        o.append(0, &lens)?;
        c.clear();
        c.resize(r * width, I::PADDING);
        v.clear();
        v.resize(r * width, T::zero());
        for i in r0..r1 {
            let (cc, vv) = a.row(i);
            let l = cc.len().min(width);
            for s in 0..l {
                c[s * r + i - r0] = cc[s];
                v[s * r + i - r0] = vv[s];
            }
            if let Some(t) = tail.filter(|_| cc.len() > width) {
                tr.extend(std::iter::repeat_n(ix::<I>(i), cc.len() - width));
                tc.extend_from_slice(&cc[width..]);
                tv.extend_from_slice(&vv[width..]);
                if tv.len() >= pieces.entries / 4 {
                    o.append_entries(t, &mut tr, &mut tc, &mut tv)?;
                }
            }
        }
        for s in 0..width {
            o.put(1, s * n + r0, &c[s * r..(s + 1) * r])?;
            o.put(2, s * n + r0, &v[s * r..(s + 1) * r])?;
        }
        sparsetool_formats::progress::CONVERT.add(1);
        r0 = r1;
    }
    if let Some(t) = tail {
        o.append_entries(t, &mut tr, &mut tc, &mut tv)?;
    }
    Ok(())
}

/// Rows `w0..w1` in stable order of descending length when `sort` (else
/// in order), handed to `f` in pieces of at most `cap` positions with the
/// position of the piece's first row. A window of at most `cap` rows is
/// sorted in memory (the in-memory conversion's own stable sort); a
/// larger one by a counting sort on lengths that places one piece of
/// positions per scan of the window's row lengths.
fn sorted_pieces<T: Scalar, I: Index>(
    a: &CsrView<'_, T, I>,
    (w0, w1): (usize, usize),
    sort: bool,
    cap: usize,
    mut f: impl FnMut(usize, &[I]) -> Result<(), OocError>,
) -> Result<(), OocError> {
    let m = w1 - w0;
    if !sort {
        let mut p0 = 0;
        while p0 < m {
            let p1 = (p0 + cap).min(m);
            let piece: Vec<I> = (w0 + p0..w0 + p1).map(ix).collect();
            f(p0, &piece)?;
            p0 = p1;
        }
        return Ok(());
    }
    if m <= cap {
        let mut piece: Vec<I> = (w0..w1).map(ix).collect();
        piece.sort_by_key(|r| Reverse(a.row_len(r.to_usize())));
        return f(0, &piece);
    }
    let above = window_longer_than(a, w0, w1);
    let mut p0 = 0;
    while p0 < m {
        let p1 = (p0 + cap).min(m);
        let mut next = above.clone();
        let mut piece = vec![I::default(); p1 - p0];
        for i in w0..w1 {
            let l = a.row_len(i);
            let at = next[l];
            next[l] += 1;
            if (p0..p1).contains(&at) {
                piece[at - p0] = ix(i);
            }
        }
        f(p0, &piece)?;
        p0 = p1;
    }
    Ok(())
}

/// `above[l]` ([`longer_than`]) over the rows `w0..w1`.
fn window_longer_than<T: Scalar, I: Index>(
    a: &CsrView<'_, T, I>,
    w0: usize,
    w1: usize,
) -> Vec<usize> {
    let longest = (w0..w1).map(|i| a.row_len(i)).max().unwrap_or(0);
    longer_than(longest, (w0..w1).map(|i| a.row_len(i)))
}

/// JDS: the permutation in pieces (a stable sort by descending length),
/// the diagonals placed block of sorted rows by block.
fn write_jds<T: Scalar, I: Index>(
    a: &CsrView<'_, T, I>,
    pieces: Pieces,
    out: Option<&Path>,
) -> Result<u64, OocError> {
    let n = a.nrows;
    let (longest, _) = longest_row(Par::Rayon, a.row_ptr);
    let above = longer_than(longest, (0..n).map(|i| a.row_len(i)));
    // Diagonal d holds the rows longer than d: above[d] of them.
    let jd_ptr: Vec<I> = offsets(above.iter().copied().take(longest), longest);
    let nnz = a.nnz();
    let specs = super::sections::<T, I>(&[
        ("perm", false, n as u64),
        ("jd_ptr", false, (longest + 1) as u64),
        ("col_idx", false, nnz as u64),
        ("values", true, nnz as u64),
    ])?;
    let Some(out) = out else { return Ok(0) };
    let mut o = create(out, &specs)?;
    o.append(1, &jd_ptr)?;
    sparsetool_formats::progress::CONVERT.start(n.div_ceil(pieces.positions) as u64);
    let (mut c, mut v, mut at) = (Vec::<I>::new(), Vec::<T>::new(), Vec::<usize>::new());
    sorted_pieces(a, (0, n), true, pieces.positions, |p0, perm| {
        o.append(0, perm)?;
        let mut q = 0;
        while q < perm.len() {
            // A block of sorted rows holding at most `entries` entries
            // (or one longer row).
            let mut q1 = q;
            let mut ent = 0;
            while q1 < perm.len() {
                let l = a.row_len(perm[q1].to_usize());
                if q1 > q && ent + l > pieces.entries {
                    break;
                }
                ent += l;
                q1 += 1;
            }
            let (s0, s1) = (p0 + q, p0 + q1);
            let first = a.row_len(perm[q].to_usize());
            // at[d]: where diagonal d's part of the block starts in `c`.
            at.clear();
            let mut run = 0;
            for &k in &above[..first] {
                at.push(run);
                run += k.min(s1) - s0;
            }
            at.push(run);
            c.clear();
            c.resize(ent, I::default());
            v.clear();
            v.resize(ent, T::zero());
            for (k, r) in perm[q..q1].iter().enumerate() {
                let (cc, vv) = a.row(r.to_usize());
                for (d, (&col, &val)) in cc.iter().zip(vv).enumerate() {
                    c[at[d] + k] = col;
                    v[at[d] + k] = val;
                }
            }
            for d in 0..first {
                let to = jd_ptr[d].to_usize() + s0;
                o.put(2, to, &c[at[d]..at[d + 1]])?;
                o.put(3, to, &v[at[d]..at[d + 1]])?;
            }
            q = q1;
        }
        sparsetool_formats::progress::CONVERT.add(1);
        Ok(())
    })?;
    finish(o, FormatKind::Jds, a, (longest as u64, 0), &specs)
}

/// The SELL windows: `sigma` rows each (sorted), or the whole matrix
/// unsorted when `sigma` is 1.
fn windows(n: usize, sigma: usize) -> impl Iterator<Item = ((usize, usize), bool)> {
    let (step, sort) = if sigma > 1 { (sigma, true) } else { (n, false) };
    (0..n.div_ceil(step.max(1))).map(move |k| ((k * step, ((k + 1) * step).min(n)), sort))
}

/// SELL-C-σ: two passes over the windows (the slice widths give the
/// number of slots; then every section is appended in order, a slice's
/// slots in bounded pieces).
fn write_sell<T: Scalar, I: Index>(
    a: &CsrView<'_, T, I>,
    c: usize,
    sigma: usize,
    pieces: Pieces,
    out: Option<&Path>,
) -> Result<u64, OocError> {
    check_sell(c, sigma)?;
    let n = a.nrows;
    let nslices = n.div_ceil(c);
    // Pieces of whole slices: windows are multiples of C (or the whole
    // matrix), so no slice straddles two pieces.
    let cap = (pieces.positions / c).max(1).saturating_mul(c);
    let width = |rows: &[I]| {
        rows.iter()
            .map(|r| a.row_len(r.to_usize()))
            .max()
            .unwrap_or(0)
    };
    let mut total = 0usize;
    for (w, sort) in windows(n, sigma) {
        sorted_pieces(a, w, sort, cap, |_, perm| {
            for s in perm.chunks(c) {
                total = total.saturating_add(c.saturating_mul(width(s)));
            }
            Ok(())
        })?;
    }
    if total > I::MAX_USIZE {
        return Err(ConvertError::from(FormatError::IndexOverflow {
            what: "SELL slots",
            value: total,
            index: I::NAME,
        })
        .into());
    }
    let specs = super::sections::<T, I>(&[
        ("perm", false, n as u64),
        ("slice_ptr", false, (nslices + 1) as u64),
        ("slice_width", false, nslices as u64),
        ("col_idx", false, total as u64),
        ("values", true, total as u64),
    ])?;
    let Some(out) = out else { return Ok(0) };
    let mut o = create(out, &specs)?;
    o.append(1, &[I::default()])?;
    sparsetool_formats::progress::CONVERT.start(n.div_ceil(cap) as u64);
    let mut run = 0usize;
    let (mut bc, mut bv) = (Vec::<I>::new(), Vec::<T>::new());
    for (w, sort) in windows(n, sigma) {
        sorted_pieces(a, w, sort, cap, |_, perm| {
            o.append(0, perm)?;
            let mut ptrs = Vec::with_capacity(perm.len() / c + 1);
            let mut widths = Vec::with_capacity(perm.len() / c + 1);
            for rows in perm.chunks(c) {
                let wd = width(rows);
                // Slot-major: slots j0..j1 of the slice are contiguous.
                let step = (pieces.entries / c).max(1);
                let mut j0 = 0;
                while j0 < wd {
                    let j1 = (j0 + step).min(wd);
                    let base = bc.len();
                    bc.resize(base + c * (j1 - j0), I::PADDING);
                    bv.resize(base + c * (j1 - j0), T::zero());
                    for (k, r) in rows.iter().enumerate() {
                        let (cc, vv) = a.row(r.to_usize());
                        for j in j0..j1.min(cc.len()) {
                            bc[base + (j - j0) * c + k] = cc[j];
                            bv[base + (j - j0) * c + k] = vv[j];
                        }
                    }
                    if bc.len() >= pieces.entries {
                        o.append(3, &bc)?;
                        o.append(4, &bv)?;
                        bc.clear();
                        bv.clear();
                    }
                    j0 = j1;
                }
                run += c * wd;
                ptrs.push(ix::<I>(run));
                widths.push(ix::<I>(wd));
            }
            o.append(1, &ptrs)?;
            o.append(2, &widths)?;
            sparsetool_formats::progress::CONVERT.add(1);
            Ok(())
        })?;
    }
    o.append(3, &bc)?;
    o.append(4, &bv)?;
    finish(o, FormatKind::Sell, a, (c as u64, sigma as u64), &specs)
}
