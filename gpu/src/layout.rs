//! Pure host-side layout helpers: narrowing indices to the kernels' 32-bit
//! indices, expanding CSR row pointers to COO rows, and building cuSPARSE's
//! sliced-ELL layout. No device involved; unit-tested on the CPU.

use std::borrow::Cow;

use rayon::prelude::*;
use sparsetool_formats::Index;

use crate::GpuError;

/// Checks that a count fits a 32-bit signed index.
///
/// # Errors
/// [`GpuError::IndexOverflow`] when `value > i32::MAX`.
pub fn check_i32(what: &'static str, value: usize) -> Result<i32, GpuError> {
    i32::try_from(value).map_err(|_| GpuError::IndexOverflow {
        what,
        value: value as u64,
    })
}

/// The kernels' view of an index array: borrowed when `I` is `i32`, otherwise
/// narrowed (every value, padding `-1` included, must fit `i32`).
///
/// # Errors
/// [`GpuError::IndexOverflow`] naming `what` for the first value that does
/// not fit.
pub fn narrow_indices<'a, I: Index>(
    what: &'static str,
    src: &'a [I],
) -> Result<Cow<'a, [i32]>, GpuError> {
    if std::mem::size_of::<I>() == 4 {
        if let Ok(s) = bytemuck::try_cast_slice::<I, i32>(src) {
            return Ok(Cow::Borrowed(s));
        }
    }
    let out: Option<Vec<i32>> = src
        .par_iter()
        .with_min_len(1 << 16)
        .map(|v| i32::try_from(v.to_i64()).ok())
        .collect();
    match out {
        Some(v) => Ok(Cow::Owned(v)),
        None => {
            let bad = src
                .iter()
                .map(|v| v.to_i64())
                .find(|v| i32::try_from(*v).is_err());
            Err(GpuError::IndexOverflow {
                what,
                value: bad.unwrap_or(0).unsigned_abs(),
            })
        }
    }
}

/// Row index of every entry of a CSR matrix (a row-sorted COO `rows` array;
/// rows fit `i32`, the entry count need not).
#[must_use]
pub fn coo_rows_from_row_ptr<I: Index>(row_ptr: &[I]) -> Vec<i32> {
    let nnz = row_ptr.last().map_or(0, |v| v.to_usize());
    let mut rows = vec![0i32; nnz];
    if row_ptr.len() < 2 {
        return rows;
    }
    // split the output at row boundaries: each row fills its own range
    let mut chunks: Vec<(i32, &mut [i32])> = Vec::with_capacity(row_ptr.len() - 1);
    let mut rest: &mut [i32] = &mut rows;
    for (i, w) in row_ptr.windows(2).enumerate() {
        let len = w[1].to_usize().saturating_sub(w[0].to_usize());
        let (head, tail) = rest.split_at_mut(len.min(rest.len()));
        chunks.push((i as i32, head));
        rest = tail;
    }
    chunks
        .into_par_iter()
        .with_min_len(4096)
        .for_each(|(i, c)| c.fill(i));
    rows
}

/// The column indices of a SELL layout as the `sell-u16` kernels read them
/// ([`sell_u16`]): per slice a base column, per slot a 16-bit offset from
/// it, in pairs: slots `2j` and `2j + 1` of local row `r` of slice `k` are
/// the low and high half of the 32-bit word `j * C + r` from `ptr[k]` (in
/// 16-bit units), so one 4-byte load gathers two columns (one 2-byte load a
/// slot ran slower than the 32-bit indices in f64 on the H100).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SellU16 {
    /// Per slice, the smallest column of its entries in the slots the main
    /// kernel walks (0 for a slice without any).
    pub base: Vec<i32>,
    /// `nslices + 1` offsets into `cols`: slice `k` holds `ceil(min(width,
    /// cap) / 2)` words of `C` rows (even, so every word is aligned).
    pub ptr: Vec<i64>,
    /// The offsets: column minus its slice's base, [`SELL_U16_PAD`] for
    /// padding and past an odd width (slots past the cap are not stored: the
    /// tail kernel reads them as 32-bit indices).
    pub cols: Vec<u16>,
    /// Slots the main kernel walks: the slices' widths up to the cap, times
    /// the slice height.
    pub main_slots: u64,
}

impl SellU16 {
    /// Where slot `s` of local row `r` of slice `k` is in [`SellU16::cols`]
    /// (`c` rows per slice).
    #[must_use]
    pub fn at(&self, c: usize, k: usize, s: usize, r: usize) -> usize {
        self.ptr[k] as usize + pair_offset(c, s, r)
    }
}

/// Where slot `s` of local row `r` is from its slice's start in
/// [`SellU16::cols`] (`c` rows per slice): the low or high half of word
/// `s / 2 * c + r`.
fn pair_offset(c: usize, s: usize, r: usize) -> usize {
    (s / 2) * 2 * c + 2 * r + (s & 1)
}

/// The offset of a padding slot in [`SellU16::cols`] (`SELL_U16_PAD` in
/// `sell.cu`); offsets of entries are `0..SELL_U16_PAD`.
pub const SELL_U16_PAD: u16 = u16::MAX;

/// Builds [`SellU16`] from the arrays of a SELL layout (`c` rows per
/// slice, `slice_ptr` with `nslices + 1` offsets, `slice_width`, `col_idx`
/// with -1 for padding), for a main kernel that walks the first `cap` slots
/// of each slice: possible when in every slice the columns of those slots
/// lie at most 65534 apart (the largest offset; 0xFFFF marks padding):
/// stencils and banded matrices of any size, and every matrix of at most
/// 65535 columns. The slots past the cap (the long-row tail) are not
/// stored and may hold any column.
///
/// ```
/// use sparsetool_gpu::layout::{sell_u16, SELL_U16_PAD};
/// // two slices of two rows: [0, 5] [6, -] / [70000, 70001] [-, -]
/// let n = sell_u16(2, 64, &[0i32, 4, 6], &[2i32, 1], &[0i32, 6, 5, -1, 70_000, 70_001]).unwrap();
/// assert_eq!(n.base, vec![0, 70_000]);
/// assert_eq!(n.ptr, vec![0, 4, 8]);
/// // slice 0: row 0 slots 0, 1; row 1 slots 0, 1 (padding)
/// assert_eq!(n.cols[..4], [0, 5, 6, SELL_U16_PAD]);
/// // slice 1: width 1, the high halves past it
/// assert_eq!(n.cols[4..], [0, SELL_U16_PAD, 1, SELL_U16_PAD]);
/// // a slice whose columns span 100k
/// assert!(sell_u16(2, 64, &[0i32, 2], &[1i32], &[0i32, 100_000]).is_err());
/// ```
///
/// # Errors
/// [`GpuError::NotApplicable`] naming the first slice whose columns lie
/// further apart, or where the arrays do not describe a SELL layout.
pub fn sell_u16<P: Index, I: Index>(
    c: usize,
    cap: usize,
    slice_ptr: &[P],
    slice_width: &[I],
    col_idx: &[I],
) -> Result<SellU16, GpuError> {
    let not = |reason: String| GpuError::NotApplicable {
        kernel: "sell-u16",
        reason,
    };
    let nslices = slice_width.len();
    let c = c.max(1);
    // each slice's start in col_idx and its main slots
    let mut slices = Vec::with_capacity(nslices);
    let mut ptr = Vec::with_capacity(nslices + 1);
    ptr.push(0i64);
    for (k, w) in slice_width.iter().enumerate() {
        let start = slice_ptr.get(k).map_or(usize::MAX, |v| v.to_usize());
        let end = slice_ptr.get(k + 1).map_or(usize::MAX, |v| v.to_usize());
        let w = w.to_usize();
        if start > end || end > col_idx.len() || w.saturating_mul(c) != end - start {
            return Err(not(format!("slice {k} is not a SELL slice of {c} rows")));
        }
        let main = w.min(cap);
        slices.push((start, main));
        let words = main.div_ceil(2) * c;
        ptr.push(ptr[k] + 2 * words as i64);
    }
    let spans: Vec<Option<(i64, i64)>> = slices
        .par_iter()
        .with_min_len(256)
        .map(|&(start, main)| {
            column_span(col_idx[start..start + main * c].iter().map(|v| v.to_i64()))
        })
        .collect();
    let max = U16_SPAN;
    if let Some((k, (lo, hi))) = spans
        .iter()
        .enumerate()
        .find_map(|(k, s)| s.filter(|(lo, hi)| hi - lo > max).map(|s| (k, s)))
    {
        return Err(not(format!(
            "slice {k} (sorted rows {}..{}) spans columns {lo}..={hi}, more than the {} a 16-bit offset reaches",
            k * c,
            (k + 1) * c,
            max + 1
        )));
    }
    let base: Vec<i32> = spans
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let lo = s.map_or(0, |(lo, _)| lo);
            i32::try_from(lo).map_err(|_| not(format!("slice {k}: column {lo} beyond 32 bits")))
        })
        .collect::<Result<_, _>>()?;
    let total = ptr.last().map_or(0, |&v| v as usize);
    let mut cols = vec![SELL_U16_PAD; total];
    // each slice's words are a disjoint window of the output
    windows(&mut cols, &ptr)
        .into_par_iter()
        .with_min_len(256)
        .for_each(|(k, window)| {
            let ((start, main), b) = (slices[k], i64::from(base[k]));
            for s in 0..main {
                for r in 0..c {
                    let v = col_idx[start + s * c + r].to_i64();
                    if v >= 0 {
                        window[pair_offset(c, s, r)] = (v - b) as u16;
                    }
                }
            }
        });
    let main_slots = slices.iter().map(|&(_, m)| (m * c) as u64).sum();
    Ok(SellU16 {
        base,
        ptr,
        cols,
        main_slots,
    })
}

/// `out` cut at the offsets `ptr` (ascending, from 0, ending within
/// `out`): window `k` is `ptr[k]..ptr[k + 1]`, numbered, to be filled in
/// parallel.
fn windows<'a, T>(out: &'a mut [T], ptr: &[i64]) -> Vec<(usize, &'a mut [T])> {
    let mut parts = Vec::with_capacity(ptr.len().saturating_sub(1));
    let mut rest = out;
    for (k, w) in ptr.windows(2).enumerate() {
        let (window, tail) = rest.split_at_mut((w[1] - w[0]) as usize);
        parts.push((k, window));
        rest = tail;
    }
    parts
}

/// The widest span of columns a group's 16-bit offsets reach: offsets are
/// `0..SELL_U16_PAD` (the largest value marks padding).
const U16_SPAN: i64 = SELL_U16_PAD as i64 - 1;

/// The smallest and largest of `cols`, padding (negative) left out; `None`
/// without any column.
fn column_span(cols: impl Iterator<Item = i64>) -> Option<(i64, i64)> {
    cols.filter(|&v| v >= 0).fold(None, |acc, v| {
        Some(acc.map_or((v, v), |(lo, hi): (i64, i64)| (lo.min(v), hi.max(v))))
    })
}

/// Rows (of `nrows`) in the groups of 32 whose `base` is a column (not
/// -1): those whose columns `ell-u16` and `jds-u16` read as offsets.
fn rows_with_base(base: &[i32], nrows: usize) -> usize {
    base.iter()
        .enumerate()
        .filter(|&(_, &b)| b >= 0)
        .map(|(g, _)| ELL_U16_GROUP.min(nrows - g * ELL_U16_GROUP))
        .sum()
}

/// Rows of a group of `ell-u16` and `hyb-u16` ([`EllU16`]): one warp of
/// the kernel, one thread per row.
pub const ELL_U16_GROUP: usize = 32;

/// The column indices of an ELL layout (HYB's ELL part too) as the
/// `ell-u16` and `hyb-u16` kernels read them ([`ell_u16`]): per group of
/// [`ELL_U16_GROUP`] rows a base column, per slot a 16-bit offset from it,
/// in pairs: slots `2j` and `2j + 1` of row `r` are the low and high half
/// of word `j * nrows + r` (the slot-major order of the ELL arrays, so a
/// warp's loads stay coalesced). A group whose columns lie further apart
/// than the offsets reach has no base (-1) and its warp reads the 32-bit
/// indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EllU16 {
    /// Per group, the smallest column of its entries (0 for a group without
    /// any), or -1 where its columns span more than 65534.
    pub base: Vec<i32>,
    /// `ceil(width / 2) * nrows` words of two offsets each;
    /// [`SELL_U16_PAD`] for padding, past an odd width and in every word of
    /// a group without a base.
    pub words: Vec<u32>,
    /// Rows in groups with a base: the rows whose columns are read as
    /// 16-bit offsets.
    pub narrow_rows: usize,
}

impl EllU16 {
    /// The column of slot `s` of row `r` (`nrows` rows) as the kernel reads
    /// it from the offsets; `None` for padding or a row of a group without a
    /// base (which the kernel reads from the 32-bit indices).
    #[must_use]
    pub fn column(&self, nrows: usize, s: usize, r: usize) -> Option<usize> {
        let b = self.base[r / ELL_U16_GROUP];
        let w = self.words[(s / 2) * nrows + r];
        let o = if s % 2 == 0 { w & 0xFFFF } else { w >> 16 };
        (b >= 0 && o != u32::from(SELL_U16_PAD)).then(|| b as usize + o as usize)
    }
}

/// Builds [`EllU16`] from the slot-major column indices of an ELL layout
/// of `nrows` rows and `width` slots (-1 for padding): a group of
/// [`ELL_U16_GROUP`] rows gets a base where its columns lie at most 65534
/// apart (every group of a stencil, a banded or FEM matrix, the short rows
/// of a circuit; every group of a matrix of at most 65535 columns), else
/// none.
///
/// ```
/// use sparsetool_gpu::layout::{ell_u16, SELL_U16_PAD};
/// // 33 rows (two groups), width 3: row r holds columns r and r + 1,
/// // except row 32 (the second group), which holds 0 and 100 000
/// let nrows = 33;
/// let mut cols = vec![-1i32; 3 * nrows];
/// for r in 0..32 {
///     cols[r] = r as i32;
///     cols[nrows + r] = r as i32 + 1;
/// }
/// cols[32] = 0;
/// cols[nrows + 32] = 100_000;
/// let n = ell_u16(nrows, 3, &cols).unwrap();
/// assert_eq!(n.base, vec![0, -1]);
/// assert_eq!(n.narrow_rows, 32);
/// // row 5: slots 0 and 1 in word 5, slot 2 (padding) in word nrows + 5
/// assert_eq!(n.words[5], 5 | 6 << 16);
/// assert_eq!(n.words[nrows + 5], u32::from(SELL_U16_PAD) | u32::from(SELL_U16_PAD) << 16);
/// assert_eq!(n.column(nrows, 1, 5), Some(6));
/// assert_eq!(n.column(nrows, 1, 32), None);
/// ```
///
/// # Errors
/// [`GpuError::NotApplicable`] where no group has a base (the offsets would
/// save nothing), or where `col_idx` is not `nrows * width` long.
pub fn ell_u16<I: Index>(nrows: usize, width: usize, col_idx: &[I]) -> Result<EllU16, GpuError> {
    let not = |reason: String| GpuError::NotApplicable {
        kernel: "ell-u16",
        reason,
    };
    if nrows.checked_mul(width) != Some(col_idx.len()) {
        return Err(not(format!(
            "{} column indices are not an ELL layout of {nrows} rows and width {width}",
            col_idx.len()
        )));
    }
    let col = |s: usize, r: usize| col_idx[s * nrows + r].to_i64();
    let groups = nrows.div_ceil(ELL_U16_GROUP);
    let base: Vec<i32> = (0..groups)
        .into_par_iter()
        .with_min_len(256)
        .map(|g| {
            let rows = g * ELL_U16_GROUP..((g + 1) * ELL_U16_GROUP).min(nrows);
            let span = column_span((0..width).flat_map(|s| rows.clone().map(move |r| col(s, r))));
            match span {
                None => 0,
                Some((lo, hi)) if hi - lo <= U16_SPAN => i32::try_from(lo).unwrap_or(-1),
                Some(_) => -1,
            }
        })
        .collect();
    let narrow_rows = rows_with_base(&base, nrows);
    if narrow_rows == 0 && nrows > 0 {
        return Err(not(format!(
            "no group of {ELL_U16_GROUP} rows has its columns within {} of each other",
            U16_SPAN + 1
        )));
    }
    let pad = u32::from(SELL_U16_PAD);
    let mut words = vec![pad | pad << 16; width.div_ceil(2) * nrows];
    if nrows > 0 {
        words
            .par_chunks_mut(nrows)
            .enumerate()
            .for_each(|(j, out)| {
                for (r, w) in out.iter_mut().enumerate() {
                    let b = i64::from(base[r / ELL_U16_GROUP]);
                    if b < 0 {
                        continue;
                    }
                    let enc = |s: usize| match (s < width).then(|| col(s, r)) {
                        Some(c) if c >= 0 => (c - b) as u32,
                        _ => pad,
                    };
                    *w = enc(2 * j) | enc(2 * j + 1) << 16;
                }
            });
    }
    Ok(EllU16 {
        base,
        words,
        narrow_rows,
    })
}

/// Rows of a group of `jds-u16` ([`JdsU16`]): 32 consecutive sorted rows,
/// one base column (as [`ELL_U16_GROUP`]'s rows).
pub const JDS_U16_GROUP: usize = ELL_U16_GROUP;

/// The column indices of a JDS layout as the `jds-u16` kernel's main part
/// reads them ([`jds_u16`]): per group of [`JDS_U16_GROUP`] sorted rows a
/// base column, per entry a 16-bit offset from it, in pairs of diagonals:
/// diagonals `2j` and `2j + 1` of sorted row `p` are the low and high half
/// of word `ptr[j] + p` (pair `j` holds a word for each row of diagonal
/// `2j`, so a warp's loads stay coalesced as the diagonals' are). A group
/// whose columns lie further apart than the offsets reach has no base (-1)
/// and its rows read the 32-bit indices. Only the diagonals the main kernel
/// walks (below the long-row cap) are stored: the tail reads the 32-bit
/// indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JdsU16 {
    /// Per group, the smallest column of its entries in the main diagonals
    /// (0 for a group without any), or -1 where they span more than 65534.
    pub base: Vec<i32>,
    /// `ceil(min(ndiag, cap) / 2) + 1` offsets into `words`: pair `j`
    /// starts at `ptr[j]` and holds the rows of diagonal `2j`.
    pub ptr: Vec<i64>,
    /// The offsets, two a word; [`SELL_U16_PAD`] where diagonal `2j + 1`
    /// is shorter than the row, past the cap, and in every word of a group
    /// without a base.
    pub words: Vec<u32>,
    /// Sorted rows and entries of the main diagonals in groups with a base
    /// (the 32-bit indices the kernel no longer reads).
    pub narrow: (usize, u64),
}

impl JdsU16 {
    /// The column of diagonal `d` of sorted row `p` as the kernel reads it
    /// from the offsets; `None` past the stored diagonals, where the row has
    /// no entry, or for a row of a group without a base.
    #[must_use]
    pub fn column(&self, d: usize, p: usize) -> Option<usize> {
        let b = *self.base.get(p / JDS_U16_GROUP)?;
        let (s, e) = (*self.ptr.get(d / 2)?, *self.ptr.get(d / 2 + 1)?);
        let at = s as usize + p;
        if b < 0 || at >= e as usize {
            return None;
        }
        let w = self.words[at];
        let o = if d % 2 == 0 { w & 0xFFFF } else { w >> 16 };
        (o != u32::from(SELL_U16_PAD)).then(|| b as usize + o as usize)
    }
}

/// Builds [`JdsU16`] from the arrays of a JDS layout of `nrows` sorted rows
/// (`jd_ptr` with `ndiag + 1` offsets, the diagonals' lengths never
/// increasing; `col_idx`) for a main kernel that walks the first `cap`
/// diagonals: a group of [`JDS_U16_GROUP`] sorted rows gets a base where
/// the columns of its entries there lie at most 65534 apart (stencils,
/// banded and FEM matrices, whose rows of one length keep their order; any
/// matrix of at most 65535 columns), else none.
///
/// ```
/// use sparsetool_gpu::layout::jds_u16;
/// // 33 sorted rows (two groups): diagonal 0 holds every row, column
/// // p (row 32: 100 000); diagonal 1 the first 20, column p + 1; diagonal
/// // 2 the first 3, column p + 2
/// let mut jd_ptr = vec![0i64, 33, 53, 56];
/// let mut cols: Vec<i32> = (0..33).collect();
/// cols[32] = 100_000;
/// cols.extend(1..21);
/// cols.extend(2..5);
/// let n = jds_u16(33, 64, &jd_ptr, &cols).unwrap();
/// assert_eq!(n.base, vec![0, 100_000]);
/// assert_eq!(n.ptr, vec![0, 33, 36]);
/// assert_eq!(n.column(1, 5), Some(6));
/// assert_eq!(n.column(1, 25), None);
/// assert_eq!(n.column(2, 2), Some(4));
/// assert_eq!(n.narrow, (33, 56));
/// // a cap of one diagonal: a word a row for one 32-bit index, refused
/// assert!(jds_u16(33, 1, &jd_ptr, &cols).is_err());
/// jd_ptr.pop();
/// assert!(jds_u16(33, 64, &jd_ptr, &cols).is_err());
/// ```
///
/// # Errors
/// [`GpuError::NotApplicable`] where no group has a base, or the bases,
/// starts and words would take as many bytes as the 32-bit indices they
/// replace (rows of one entry, few groups with a base), or where the arrays
/// are not a JDS layout of `nrows` rows.
pub fn jds_u16<P: Index, I: Index>(
    nrows: usize,
    cap: usize,
    jd_ptr: &[P],
    col_idx: &[I],
) -> Result<JdsU16, GpuError> {
    let not = |reason: String| GpuError::NotApplicable {
        kernel: "jds-u16",
        reason,
    };
    let ndiag = jd_ptr.len().saturating_sub(1);
    let main = ndiag.min(cap);
    let len = |d: usize| jd_ptr[d + 1].to_usize().wrapping_sub(jd_ptr[d].to_usize());
    let layout_ok = jd_ptr.first().is_none_or(|v| v.to_usize() == 0)
        && jd_ptr.last().is_none_or(|v| v.to_usize() == col_idx.len())
        && (0..ndiag).all(|d| {
            jd_ptr[d] <= jd_ptr[d + 1] && len(d) <= nrows && (d == 0 || len(d) <= len(d - 1))
        });
    if !layout_ok {
        return Err(not(format!(
            "the arrays are not a JDS layout of {nrows} rows and {} entries",
            col_idx.len()
        )));
    }
    let col = |d: usize, p: usize| col_idx[jd_ptr[d].to_usize() + p].to_i64();
    // the main diagonals holding sorted row p: the first k with len(k) <= p
    let main_lens: Vec<usize> = (0..main).map(len).collect();
    let row_len = |p: usize| main_lens.partition_point(|&l| l > p);
    let groups = nrows.div_ceil(JDS_U16_GROUP);
    let base: Vec<(i32, u64)> = (0..groups)
        .into_par_iter()
        .with_min_len(256)
        .map(|g| {
            let rows = g * JDS_U16_GROUP..((g + 1) * JDS_U16_GROUP).min(nrows);
            let entries: usize = rows.clone().map(row_len).sum();
            let span = column_span(rows.flat_map(|p| (0..row_len(p)).map(move |d| col(d, p))));
            match span {
                None => (0, 0),
                Some((lo, hi)) if hi - lo <= U16_SPAN => {
                    i32::try_from(lo).map_or((-1, 0), |b| (b, entries as u64))
                }
                Some(_) => (-1, 0),
            }
        })
        .collect();
    let narrow_entries: u64 = base.iter().map(|&(_, e)| e).sum();
    let base: Vec<i32> = base.into_iter().map(|(b, _)| b).collect();
    let narrow_rows = rows_with_base(&base, nrows);
    if narrow_rows == 0 && nrows > 0 {
        return Err(not(format!(
            "no group of {JDS_U16_GROUP} sorted rows has its columns within {} of each other",
            U16_SPAN + 1
        )));
    }
    let npairs = main.div_ceil(2);
    let mut ptr = Vec::with_capacity(npairs + 1);
    ptr.push(0i64);
    for j in 0..npairs {
        ptr.push(ptr[j] + len(2 * j) as i64);
    }
    let pad = u32::from(SELL_U16_PAD);
    let total = ptr.last().map_or(0, |&v| v as usize);
    // the bases, starts and words read instead of the narrow entries'
    // 32-bit indices: a matrix of short rows (one entry a word) or few
    // narrow groups would move more
    let stored = 4 * (groups + total) as u64 + 8 * ptr.len() as u64;
    if stored >= 4 * narrow_entries {
        return Err(not(format!(
            "its 16-bit offsets would take {stored} bytes to replace {} of 32-bit indices",
            4 * narrow_entries
        )));
    }
    let mut words = vec![pad | pad << 16; total];
    // each pair's words are a disjoint window of the output
    windows(&mut words, &ptr)
        .into_par_iter()
        .for_each(|(j, window)| {
            let (d0, d1) = (2 * j, 2 * j + 1);
            let len1 = if d1 < main { len(d1) } else { 0 };
            window
                .par_iter_mut()
                .with_min_len(1 << 14)
                .enumerate()
                .for_each(|(p, w)| {
                    let b = i64::from(base[p / JDS_U16_GROUP]);
                    if b >= 0 {
                        let hi = if p < len1 {
                            (col(d1, p) - b) as u32
                        } else {
                            pad
                        };
                        *w = (col(d0, p) - b) as u32 | hi << 16;
                    }
                });
        });
    Ok(JdsU16 {
        base,
        ptr,
        words,
        narrow: (narrow_rows, narrow_entries),
    })
}

/// A sliced-ELL matrix in cuSPARSE's layout (`cusparseCreateSlicedEll`): the
/// rows in their original order cut into slices of `slice_size` rows (the last
/// one padded), each slice as wide as its longest row, values and column
/// indices column-major inside a slice (slot `s` of local row `r` of slice `k`
/// at `slice_ptr[k] + s * slice_size + r`), padding value 0 and index -1.
/// This is SELL-C-sigma with sigma = 1, so `sell.cu` also runs it (no perm).
#[derive(Debug, Clone, PartialEq)]
pub struct SlicedEllHost<T> {
    /// Rows.
    pub nrows: usize,
    /// Rows per slice.
    pub slice_size: usize,
    /// `nslices + 1` offsets into `col_idx` / `values`.
    pub slice_ptr: Vec<i32>,
    /// Width (slots per row) of every slice.
    pub slice_width: Vec<i32>,
    /// Column indices, `-1` for padding.
    pub col_idx: Vec<i32>,
    /// Values, `0` for padding.
    pub values: Vec<T>,
}

/// Builds cuSPARSE's sliced-ELL layout from CSR arrays (32-bit indices).
///
/// # Panics
/// If the arrays are not a valid CSR structure (they come from a validated
/// [`sparsetool_formats::Csr`]).
///
/// # Errors
/// [`GpuError::IndexOverflow`] when the padded size does not fit `i32`.
pub fn sliced_ell_from_csr<T: Copy + Default + Send + Sync>(
    row_ptr: &[i32],
    col_idx: &[i32],
    values: &[T],
    slice_size: usize,
) -> Result<SlicedEllHost<T>, GpuError> {
    let nrows = row_ptr.len().saturating_sub(1);
    let c = slice_size.max(1);
    let nslices = nrows.div_ceil(c);
    let row_len = |i: usize| (row_ptr[i + 1] - row_ptr[i]).max(0) as usize;
    let mut slice_width = Vec::with_capacity(nslices);
    let mut slice_ptr = Vec::with_capacity(nslices + 1);
    slice_ptr.push(0i32);
    let mut total = 0usize;
    for k in 0..nslices {
        let w = (k * c..((k + 1) * c).min(nrows))
            .map(row_len)
            .max()
            .unwrap_or(0);
        total += w * c;
        slice_width.push(check_i32("sliced-ELL width", w)?);
        slice_ptr.push(check_i32("sliced-ELL padded size", total)?);
    }
    let mut out_col = vec![-1i32; total];
    let mut out_val = vec![T::default(); total];
    // fill slice by slice (disjoint output ranges)
    let mut parts: Vec<(usize, &mut [i32], &mut [T])> = Vec::with_capacity(nslices);
    let (mut rc, mut rv): (&mut [i32], &mut [T]) = (&mut out_col, &mut out_val);
    for k in 0..nslices {
        let len = (slice_ptr[k + 1] - slice_ptr[k]) as usize;
        let (hc, tc) = rc.split_at_mut(len);
        let (hv, tv) = rv.split_at_mut(len);
        parts.push((k, hc, hv));
        rc = tc;
        rv = tv;
    }
    parts
        .into_par_iter()
        .with_min_len(256)
        .for_each(|(k, pc, pv)| {
            for r in 0..c {
                let i = k * c + r;
                if i >= nrows {
                    break;
                }
                let start = row_ptr[i].max(0) as usize;
                for s in 0..row_len(i) {
                    pc[s * c + r] = col_idx[start + s];
                    pv[s * c + r] = values[start + s];
                }
            }
        });
    Ok(SlicedEllHost {
        nrows,
        slice_size: c,
        slice_ptr,
        slice_width,
        col_idx: out_col,
        values: out_val,
    })
}

/// One column panel of a CSR matrix: its row pointers (one per row plus
/// one), and the entries of each row that fall in the panel, in their order,
/// with their global column indices.
pub type CsrPanel<R, C, V> = (Vec<R>, Vec<C>, Vec<V>);

/// A CSR matrix's entries split by column panel: panel `p` holds the
/// entries of columns `cuts[p]..cuts[p + 1]` (the panels of
/// [`crate::GpuKernel::CsrPanels`], [`crate::plan::panel_cuts`]). The
/// panels' entries are the matrix's, each once; their row pointers are of
/// the input's type (a panel has no more entries than the matrix).
///
/// ```
/// use sparsetool_gpu::layout::column_panels;
/// // [[1, 2, 0], [0, 0, 3]] cut after column 1
/// let p = column_panels(&[0i32, 2, 3], &[0i32, 1, 2], &[1.0, 2.0, 3.0], &[0, 1, 3]);
/// assert_eq!(p[0], (vec![0, 1, 1], vec![0], vec![1.0]));
/// assert_eq!(p[1], (vec![0, 1, 2], vec![1, 2], vec![2.0, 3.0]));
/// ```
#[must_use]
pub fn column_panels<R: Index, C: Index, V: Copy + Send + Sync>(
    row_ptr: &[R],
    col_idx: &[C],
    vals: &[V],
    cuts: &[usize],
) -> Vec<CsrPanel<R, C, V>> {
    let nrows = row_ptr.len().saturating_sub(1);
    let bounds: Vec<(usize, usize)> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
    bounds
        .into_par_iter()
        .map(|(lo, hi)| {
            let mut rp = Vec::with_capacity(nrows + 1);
            rp.push(R::from_usize_unchecked(0));
            let (mut ci, mut v) = (Vec::new(), Vec::new());
            for r in 0..nrows {
                for k in row_ptr[r].to_usize()..row_ptr[r + 1].to_usize() {
                    if (lo..hi).contains(&col_idx[k].to_usize()) {
                        ci.push(col_idx[k]);
                        v.push(vals[k]);
                    }
                }
                rp.push(R::from_usize_unchecked(ci.len()));
            }
            (rp, ci, v)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sell_u16_spans_bases_tails_and_bad_layouts() {
        // one slice of one row: a span of 65534 fits, 65535 does not
        let one = |cols: &[i32]| {
            sell_u16(
                1,
                64,
                &[0i32, cols.len() as i32],
                &[cols.len() as i32],
                cols,
            )
        };
        let fits = one(&[100_000, 165_534]).unwrap();
        assert_eq!(fits.base, vec![100_000]);
        assert_eq!(fits.cols, vec![0, 65_534]);
        assert_eq!((fits.ptr, fits.main_slots), (vec![0, 2], 2));
        let err = one(&[0, 65_535]).unwrap_err().to_string();
        assert!(err.contains("sell-u16") && err.contains("slice 0"), "{err}");
        // past the cap (1 slot): the far column is the tail's, not counted
        let capped = sell_u16(1, 1, &[0i32, 2], &[2i32], &[5i32, 1_000_000]).unwrap();
        assert_eq!(capped.cols, vec![0, SELL_U16_PAD]);
        assert_eq!(capped.main_slots, 1);
        // three slots of three rows: pairs (0, 1) then (2, pad), row-interleaved
        let ci: Vec<i32> = (0..9).collect(); // slot s of row r: column 3 s + r
        let p = sell_u16(3, 64, &[0i32, 9], &[3i32], &ci).unwrap();
        let pad = SELL_U16_PAD;
        assert_eq!(p.cols, vec![0, 3, 1, 4, 2, 5, 6, pad, 7, pad, 8, pad]);
        for s in 0..3 {
            for r in 0..3 {
                assert_eq!(p.cols[p.at(3, 0, s, r)], (3 * s + r) as u16);
            }
        }
        // a slice of padding only: base 0, every slot padding
        let empty = sell_u16(2, 8, &[0i64, 2], &[1i32], &[-1i32, -1]).unwrap();
        assert_eq!((empty.base, empty.cols), (vec![0], vec![SELL_U16_PAD; 4]));
        // arrays that are no SELL layout: an error, not a panic
        for (ptr, width, cols) in [
            (vec![0i32, 4], vec![1i32], vec![0i32, 1]),
            (vec![0i32], vec![1i32], vec![0i32, 1]),
            (vec![2i32, 0], vec![1i32], vec![0i32, 1]),
        ] {
            let e = sell_u16(2, 8, &ptr, &width, &cols).unwrap_err().to_string();
            assert!(e.contains("not a SELL slice"), "{e}");
        }
    }

    #[test]
    fn narrowing() {
        let a: Vec<i32> = vec![0, -1, 5];
        assert!(matches!(narrow_indices("a", &a).unwrap(), Cow::Borrowed(_)));
        let b: Vec<i64> = vec![0, -1, 5];
        assert_eq!(&*narrow_indices("b", &b).unwrap(), &[0, -1, 5]);
        let c: Vec<i64> = vec![0, 1 << 40];
        assert!(matches!(
            narrow_indices("c", &c),
            Err(GpuError::IndexOverflow { what: "c", value }) if value == 1 << 40
        ));
        assert!(check_i32("n", 1 << 31).is_err());
        assert_eq!(check_i32("n", 7).unwrap(), 7);
    }

    #[test]
    fn coo_rows() {
        assert_eq!(coo_rows_from_row_ptr(&[0i32, 2, 2, 3]), vec![0, 0, 2]);
        assert_eq!(coo_rows_from_row_ptr(&[0i64, 2, 2, 3]), vec![0, 0, 2]);
        assert_eq!(coo_rows_from_row_ptr(&[0i32]), Vec::<i32>::new());
        assert_eq!(coo_rows_from_row_ptr::<i32>(&[]), Vec::<i32>::new());
    }

    #[test]
    fn sliced_ell_layout() {
        // rows: [a b] [] [c] [d e f] [g], slice 2
        let row_ptr = [0, 2, 2, 3, 6, 7];
        let col = [0, 3, 1, 0, 1, 2, 4];
        let val = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        let s = sliced_ell_from_csr(&row_ptr, &col, &val, 2).unwrap();
        assert_eq!(s.slice_width, vec![2, 3, 1]);
        assert_eq!(s.slice_ptr, vec![0, 4, 10, 12]);
        // slice 0: slot0 (row0,row1) slot1 (row0,row1)
        assert_eq!(&s.col_idx[0..4], &[0, -1, 3, -1]);
        // slice 1: rows 2,3: slot0 (1,0) slot1 (-1,1) slot2 (-1,2)
        assert_eq!(&s.col_idx[4..10], &[1, 0, -1, 1, -1, 2]);
        assert_eq!(&s.values[4..10], &[3.0, 4.0, 0.0, 5.0, 0.0, 6.0]);
        // last slice padded to 2 rows
        assert_eq!(&s.col_idx[10..12], &[4, -1]);
        let e = sliced_ell_from_csr::<f64>(&[0], &[], &[], 32).unwrap();
        assert_eq!(e.slice_ptr, vec![0]);
        assert!(e.col_idx.is_empty());
    }
}
