//! Shared checks for compressed structures: offset (pointer) arrays and
//! permutations. CSR, JDS and SELL validate their pointer arrays with
//! [`check_offsets`]; JDS and SELL check their row permutations with
//! [`check_permutation`]. The array-length and per-row column checks that
//! every format's `try_from_parts` runs live here too, as do the macros
//! that write the formats' field accessors and checked constructors.

use rayon::prelude::*;

use crate::{FormatError, Index};

/// Entries above which checks run in parallel.
pub(crate) const PAR_THRESHOLD: usize = 1 << 16;

/// Checks that `ptr` has `len` elements, starts at 0, never decreases and
/// ends at `total`.
///
/// # Errors
/// The first broken invariant, as a [`FormatError`].
pub fn check_offsets<I: Index>(
    array: &'static str,
    ptr: &[I],
    len: usize,
    total: usize,
) -> Result<(), FormatError> {
    check_len(array, len, ptr.len())?;
    if len == 0 {
        return Ok(());
    }
    if ptr[0].to_i64() != 0 {
        return Err(FormatError::PointerStart {
            array,
            found: ptr[0].to_i64(),
        });
    }
    let bad = |w: &[I]| w[0] > w[1];
    // Branch-free test per chunk (vectorises); the position is searched
    // only when a chunk fails. Chunks overlap by one element.
    let monotone = |c: &[I]| c.windows(2).fold(true, |ok, w| ok & (w[0] <= w[1]));
    let ok = if ptr.len() > PAR_THRESHOLD {
        (0..ptr.len().div_ceil(ENTRY_BLOCK))
            .into_par_iter()
            .all(|b| monotone(&ptr[b * ENTRY_BLOCK..((b + 1) * ENTRY_BLOCK + 1).min(ptr.len())]))
    } else {
        monotone(ptr)
    };
    let pos = if ok {
        None
    } else {
        ptr.windows(2).position(bad)
    };
    if let Some(pos) = pos {
        return Err(FormatError::PointerNotMonotone {
            array,
            pos: pos + 1,
            prev: ptr[pos].to_i64(),
            next: ptr[pos + 1].to_i64(),
        });
    }
    let last = ptr[len - 1].to_i64();
    if last < 0 || last as u64 != total as u64 {
        return Err(FormatError::PointerEnd {
            array,
            expected: total,
            found: last,
        });
    }
    Ok(())
}

/// The first index of `0..len` where `bad` holds: blocks of [`SCAN_BLOCK`]
/// tested whole by `block_bad` (written branch-free, so that it
/// vectorises; in parallel above [`PAR_THRESHOLD`]), then only the first
/// failing block searched with `bad`. A per-element `position_first` does
/// not vectorise: 50 ms on 10M values where this takes 5.
pub(crate) fn first_bad(
    len: usize,
    block_bad: impl Fn(std::ops::Range<usize>) -> bool + Sync,
    bad: impl Fn(usize) -> bool,
) -> Option<usize> {
    let range = |b: usize| b * SCAN_BLOCK..((b + 1) * SCAN_BLOCK).min(len);
    let blocks = len.div_ceil(SCAN_BLOCK);
    let block = if len > PAR_THRESHOLD {
        (0..blocks)
            .into_par_iter()
            .position_first(|b| block_bad(range(b)))
    } else {
        (0..blocks).position(|b| block_bad(range(b)))
    }?;
    range(block).find(|&i| bad(i))
}

/// Elements per block of [`first_bad`].
const SCAN_BLOCK: usize = 1 << 14;

/// Writes the field accessors of a format type: `nrows()` and `ncols()`,
/// then one method per listed item, in order:
/// - `name: usize;` returns the field by value;
/// - `name: [E];` borrows the `Vec<E>` field `name` as `&[E]`;
/// - `name = field.len();` returns the length of the `Vec` field `field`;
/// - `name = &mut field: [E];` borrows the `Vec<E>` field `field` mutably;
/// - `into_parts(a: A, b: B, ...);` hands the listed fields back as a tuple;
/// - `unsafe from_parts_unchecked(a: A, b: B, ...);` the `#[must_use]`
///   unchecked constructor taking every field (its `# Safety` docs come
///   from the caller, like every other item's docs).
///
/// Doc comments and attributes written before an item go on its method.
///
/// A macro rather than a trait or a generic: the five format types are
/// distinct structs whose getters differ only in field names, types and
/// docs, and their callers want inherent methods (no trait import) with the
/// field's own documentation; a macro writes exactly those methods once.
macro_rules! accessors {
    (@fields) => {};
    (@fields $(#[$attr:meta])* unsafe from_parts_unchecked($($part:ident: $ty:ty),* $(,)?); $($rest:tt)*) => {
        $(#[$attr])*
        #[must_use]
        pub unsafe fn from_parts_unchecked($($part: $ty),*) -> Self {
            Self { $($part: $part.into()),* }
        }
        $crate::pattern::accessors!(@fields $($rest)*);
    };
    (@fields $(#[$attr:meta])* $name:ident: usize; $($rest:tt)*) => {
        $(#[$attr])*
        #[inline]
        #[must_use]
        pub fn $name(&self) -> usize {
            self.$name
        }
        $crate::pattern::accessors!(@fields $($rest)*);
    };
    (@fields $(#[$attr:meta])* $name:ident: [$elem:ty]; $($rest:tt)*) => {
        $(#[$attr])*
        #[inline]
        #[must_use]
        pub fn $name(&self) -> &[$elem] {
            &self.$name
        }
        $crate::pattern::accessors!(@fields $($rest)*);
    };
    (@fields $(#[$attr:meta])* $name:ident = $field:ident.len(); $($rest:tt)*) => {
        $(#[$attr])*
        #[inline]
        #[must_use]
        pub fn $name(&self) -> usize {
            self.$field.len()
        }
        $crate::pattern::accessors!(@fields $($rest)*);
    };
    (@fields $(#[$attr:meta])* $name:ident = &mut $field:ident: [$elem:ty]; $($rest:tt)*) => {
        $(#[$attr])*
        #[inline]
        pub fn $name(&mut self) -> &mut [$elem] {
            self.$field.make_mut()
        }
        $crate::pattern::accessors!(@fields $($rest)*);
    };
    (@fields is_mapped; $($rest:tt)*) => {
        /// Whether the arrays are read in place from a memory-mapped `.spb`
        /// file (opened with the file's own index and value types) rather
        /// than owned.
        #[must_use]
        pub fn is_mapped(&self) -> bool {
            self.values.is_shared()
        }
        $crate::pattern::accessors!(@fields $($rest)*);
    };
    (@fields $(#[$attr:meta])* into_parts($($part:ident: $ty:ty),*); $($rest:tt)*) => {
        $(#[$attr])*
        #[must_use]
        pub fn into_parts(self) -> ($($ty),*) {
            ($(self.$part.into()),*)
        }
        $crate::pattern::accessors!(@fields $($rest)*);
    };
    ($($body:tt)*) => {
        /// Number of rows.
        #[inline]
        #[must_use]
        pub fn nrows(&self) -> usize {
            self.nrows
        }
        /// Number of columns.
        #[inline]
        #[must_use]
        pub fn ncols(&self) -> usize {
            self.ncols
        }
        $crate::pattern::accessors!(@fields $($body)*);
    };
}
pub(crate) use accessors;

/// Writes the checked constructors of a format type from its dimensions
/// (`usize`) and arrays (element types), in field order:
/// - `try_from_parts`, with the doc comments and attributes written before
///   the item, takes the dimensions and the arrays as `Vec`s and hands
///   them to `try_from_buffers` as [`Buffer`](crate::buffer::Buffer)s;
/// - with `=> check`, `try_from_buffers` too: it builds the value from
///   exactly those fields (plus any `field = value` listed after `check`,
///   set before `check` runs) and returns `check(value)`, the method that
///   checks every invariant and returns the value (or the first broken
///   invariant). A format whose `try_from_buffers` is not built like this
///   (CSC wraps a CSR; SELL takes its index arrays as one array) writes its
///   own.
///
/// A macro for the reason given on `accessors!`: the format types share
/// the shape of these constructors, not a type, and their callers want
/// inherent methods.
macro_rules! checked_constructors {
    (
        $(#[$attr:meta])*
        try_from_parts($($dim:ident),*; $($arr:ident: $elem:ty),* $(,)?);
    ) => {
        $(#[$attr])*
        pub fn try_from_parts(
            $($dim: usize,)*
            $($arr: Vec<$elem>,)*
        ) -> Result<Self, $crate::FormatError> {
            Self::try_from_buffers($($dim,)* $($arr.into(),)*)
        }
    };
    (
        $(#[$attr:meta])*
        try_from_parts($($dim:ident),*; $($arr:ident: $elem:ty),* $(,)?)
            => $check:ident $(($($field:ident = $init:expr),*))?;
    ) => {
        $crate::pattern::checked_constructors! {
            $(#[$attr])*
            try_from_parts($($dim),*; $($arr: $elem),*);
        }

        /// As [`try_from_parts`](Self::try_from_parts), from
        /// [`Buffer`](crate::buffer::Buffer)s: owned arrays, or sections of
        /// a mapped `.spb` file used in place.
        ///
        /// # Errors
        /// As [`try_from_parts`](Self::try_from_parts).
        pub fn try_from_buffers(
            $($dim: usize,)*
            $($arr: $crate::buffer::Buffer<$elem>,)*
        ) -> Result<Self, $crate::FormatError> {
            Self::$check(Self {
                $($dim,)*
                $($arr,)*
                $($($field: $init,)*)?
            })
        }
    };
}
pub(crate) use checked_constructors;

/// Panics unless `x` has `ncols` entries and `y` has `nrows`: the
/// precondition of every format's `spmv`.
#[track_caller]
pub(crate) fn assert_spmv_lens<T>(x: &[T], y: &[T], nrows: usize, ncols: usize) {
    assert_eq!(x.len(), ncols, "x has the wrong length");
    assert_eq!(y.len(), nrows, "y has the wrong length");
}

/// Runs `check(i)` for `i in 0..n` (in parallel above `PAR_THRESHOLD`
/// work units) and returns the error of the smallest failing `i`, so the
/// report does not depend on the thread count.
pub(crate) fn first_error<F>(n: usize, work: usize, check: F) -> Result<(), FormatError>
where
    F: Fn(usize) -> Result<(), FormatError> + Sync,
{
    if work > PAR_THRESHOLD {
        let first = (0..n)
            .into_par_iter()
            .with_min_len(256)
            .filter_map(|i| check(i).err().map(|e| (i, e)))
            .min_by_key(|(i, _)| *i);
        match first {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    } else {
        (0..n).try_for_each(check)
    }
}

/// The first checks of a format whose `col_idx` runs parallel to `values`:
/// the dimensions and `values.len()` fit `I` (see
/// [`check_dims`](crate::coo::check_dims)), then `col_idx` has as many
/// entries as `values`. Returns `values.len()`.
pub(crate) fn check_entry_arrays<I: Index>(
    nrows: usize,
    ncols: usize,
    col_idx: &[I],
    nvalues: usize,
) -> Result<usize, FormatError> {
    crate::coo::check_dims::<I>(nrows, ncols, nvalues)?;
    check_len("col_idx", nvalues, col_idx.len())?;
    Ok(nvalues)
}

/// Checks that `array` holds `expected` elements.
///
/// # Errors
/// [`FormatError::Length`] naming `array`.
pub(crate) fn check_len(
    array: &'static str,
    expected: usize,
    actual: usize,
) -> Result<(), FormatError> {
    if actual == expected {
        Ok(())
    } else {
        Err(FormatError::Length {
            array,
            expected,
            actual,
        })
    }
}

/// Checks the columns of one row (reported as `row`), in storage order:
/// each below `ncols` ([`FormatError::ColumnOutOfBounds`]) and strictly
/// ascending ([`FormatError::DuplicateEntry`], [`FormatError::UnsortedRow`]).
pub(crate) fn check_row_cols<I: Index>(
    row: usize,
    cols: impl IntoIterator<Item = I>,
    ncols: usize,
) -> Result<(), FormatError> {
    let mut prev: Option<usize> = None;
    for c in cols {
        let cu = c.to_usize();
        if cu >= ncols {
            return Err(FormatError::ColumnOutOfBounds {
                row,
                col: c.to_i64(),
                ncols,
            });
        }
        match prev {
            Some(p) if cu == p => return Err(FormatError::DuplicateEntry { row, col: cu }),
            Some(p) if cu < p => return Err(FormatError::UnsortedRow { row }),
            _ => {}
        }
        prev = Some(cu);
    }
    Ok(())
}

/// Checks that `perm` is a permutation of `0..perm.len()`.
///
/// # Errors
/// [`FormatError::Permutation`] naming the first offending position.
pub fn check_permutation<I: Index>(array: &'static str, perm: &[I]) -> Result<(), FormatError> {
    let n = perm.len();
    let mut seen = vec![false; n];
    for (pos, &p) in perm.iter().enumerate() {
        let v = p.to_usize();
        if v >= n {
            return Err(FormatError::Permutation {
                array,
                n,
                detail: format!("value {} at position {pos} is out of range", p.to_i64()),
            });
        }
        if std::mem::replace(&mut seen[v], true) {
            return Err(FormatError::Permutation {
                array,
                n,
                detail: format!("value {v} appears twice (again at position {pos})"),
            });
        }
    }
    Ok(())
}

/// Whether one row's columns are strictly ascending and below `ncols`:
/// strictly ascending columns lie in bounds when the first is >= 0 and the
/// last < ncols, and the pairwise test has no early exit, so it vectorises.
#[inline]
pub(crate) fn row_is_valid<I: Index>(cols: &[I], ncols: usize) -> bool {
    let ascending = cols.windows(2).fold(true, |ok, w| ok & (w[0] < w[1]));
    ascending
        && cols.first().is_none_or(|f| f.to_i64() >= 0)
        && cols.last().is_none_or(|l| l.to_usize() < ncols)
}

/// Whether the entries `[e0, e1)` of a compressed structure with a valid
/// `ptr` lie in `0..ncols` and ascend strictly inside their rows, without
/// walking rows: a "descent" `col[j] <= col[j - 1]` is allowed only where a
/// row starts at `j`, so the rows are sorted exactly when the descents
/// counted over the range equal the descents found at the row starts inside
/// it. Both counts and the min/max are branch-free loops that vectorise;
/// rows enter only through their start offsets. Pairs straddling `e0` are
/// counted by the range that holds their right element, so ranges that
/// tile `0..nnz` check every pair once.
pub(crate) fn entries_valid<I: Index>(
    ptr: &[I],
    col: &[I],
    ncols: usize,
    e0: usize,
    e1: usize,
) -> bool {
    if e0 >= e1 {
        return true;
    }
    debug_assert!(e1 - e0 <= u32::MAX as usize);
    // One pass (the scan is memory-bound): min, max and descents together.
    let j0 = e0.max(1);
    let (lo, hi, descents) = if j0 < e1 {
        scan(&col[j0 - 1..e1 - 1], &col[j0..e1], col[e0])
    } else {
        (col[e0], col[e0], 0)
    };
    if lo.to_i64() < 0 || hi.to_usize() >= ncols {
        return false;
    }
    let descents = descents as usize;
    if descents == 0 {
        return true;
    }
    let nrows = ptr.len().saturating_sub(1);
    let first = ptr[..nrows].partition_point(|p| p.to_usize() < j0);
    let last = ptr[..nrows].partition_point(|p| p.to_usize() < e1);
    let mut at_starts = 0usize;
    let mut prev = usize::MAX;
    for p in &ptr[first..last] {
        let j = p.to_usize();
        if j != prev {
            at_starts += usize::from(col[j] <= col[j - 1]);
            prev = j;
        }
    }
    descents == at_starts
}

/// [`scan_lanes`], compiled for AVX2 when the CPU has it (detected at run
/// time, cached by std): the baseline x86-64 target (SSE2) has no packed
/// 32-bit min/max, which makes the scan compute-bound.
fn scan<I: Index>(a: &[I], b: &[I], init: I) -> (I, I, u32) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { scan_avx2(a, b, init) };
        }
    }
    scan_lanes(a, b, init)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_avx2<I: Index>(a: &[I], b: &[I], init: I) -> (I, I, u32) {
    scan_lanes(a, b, init)
}

/// Min and max of `b`, and the count of `b[k] <= a[k]`, in one pass of
/// eight independent lanes (a shape the compiler vectorises).
#[inline(always)]
fn scan_lanes<I: Index>(a: &[I], b: &[I], init: I) -> (I, I, u32) {
    const L: usize = 8;
    let (mut lo, mut hi, mut n) = ([init; L], [init; L], [0u32; L]);
    let (ac, bc) = (a.chunks_exact(L), b.chunks_exact(L));
    let (ar, br) = (ac.remainder(), bc.remainder());
    for (x, y) in ac.zip(bc) {
        for k in 0..L {
            lo[k] = lo[k].min(y[k]);
            hi[k] = hi[k].max(y[k]);
            n[k] += u32::from(y[k] <= x[k]);
        }
    }
    for (x, &y) in ar.iter().zip(br) {
        lo[0] = lo[0].min(y);
        hi[0] = hi[0].max(y);
        n[0] += u32::from(y <= *x);
    }
    let lo = lo.into_iter().fold(init, Ord::min);
    let hi = hi.into_iter().fold(init, Ord::max);
    (lo, hi, n.iter().sum())
}

/// Entries per task of the range check in [`check_rows`].
const ENTRY_BLOCK: usize = 1 << 16;

/// Checks that every row of a compressed structure holds strictly ascending
/// column indices below `ncols`. `ptr` must already be valid.
pub(crate) fn check_rows<I: Index>(ptr: &[I], col: &[I], ncols: usize) -> Result<(), FormatError> {
    let check_row = |row: usize| -> Result<(), FormatError> {
        let (s, e) = (ptr[row].to_usize(), ptr[row + 1].to_usize());
        let cols = &col[s..e];
        // Fast path; only a failing row takes the precise scan below.
        if row_is_valid(cols, ncols) {
            return Ok(());
        }
        check_row_cols(row, cols.iter().copied(), ncols)
    };
    let nrows = ptr.len().saturating_sub(1);
    // Fast path over entries (see `entries_valid`); only a failing matrix
    // walks its rows to name the first bad one.
    let nnz = col.len();
    let fast_ok = if nnz > PAR_THRESHOLD {
        (0..nnz.div_ceil(ENTRY_BLOCK)).into_par_iter().all(|b| {
            let e0 = b * ENTRY_BLOCK;
            entries_valid(ptr, col, ncols, e0, (e0 + ENTRY_BLOCK).min(nnz))
        })
    } else {
        entries_valid(ptr, col, ncols, 0, nnz)
    };
    if fast_ok {
        return Ok(());
    }
    // Report the first bad row deterministically.
    first_error(nrows, col.len(), check_row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets() {
        assert!(check_offsets::<i32>("p", &[0, 2, 2, 5], 4, 5).is_ok());
        assert!(matches!(
            check_offsets::<i32>("p", &[1, 2], 2, 2),
            Err(FormatError::PointerStart { .. })
        ));
        assert!(matches!(
            check_offsets::<i32>("p", &[0, 3, 2], 3, 2),
            Err(FormatError::PointerNotMonotone { pos: 2, .. })
        ));
        assert!(matches!(
            check_offsets::<i32>("p", &[0, 3], 2, 4),
            Err(FormatError::PointerEnd { .. })
        ));
        assert!(matches!(
            check_offsets::<i32>("p", &[0], 2, 0),
            Err(FormatError::Length { .. })
        ));
    }

    /// The range check agrees with a per-row scan on every tiling.
    #[test]
    fn entries_valid_matches_rows() {
        let ptr = [0i32, 2, 2, 5, 6, 6, 9];
        let good = [0i32, 3, 1, 2, 4, 0, 0, 1, 4];
        let cases: [(&[i32], bool); 5] = [
            (&good, true),
            (&[0, 3, 1, 2, 2, 0, 0, 1, 4], false), // duplicate in row 2
            (&[3, 0, 1, 2, 4, 0, 0, 1, 4], false), // unsorted row 0
            (&[0, 3, 1, 2, 5, 0, 0, 1, 4], false), // out of bounds
            (&[0, 3, 1, 2, 4, 0, -1, 1, 4], false), // negative
        ];
        for (col, want) in cases {
            assert_eq!(check_rows(&ptr, col, 5).is_ok(), want, "{col:?}");
            for step in 1..=col.len() {
                let all = (0..col.len())
                    .step_by(step)
                    .all(|e0| entries_valid(&ptr, col, 5, e0, (e0 + step).min(col.len())));
                assert_eq!(all, want, "{col:?} step {step}");
            }
        }
        assert!(entries_valid::<i32>(&[0, 0], &[], 3, 0, 0));
    }

    /// Large random structures (parallel path) with one corrupted entry:
    /// the fast check and a naive per-row scan agree.
    #[test]
    fn check_rows_agrees_with_naive_scan() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = |n: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) % n
        };
        let ncols = 1000usize;
        for case in 0..40 {
            let (mut ptr, mut col) = (vec![0i64], Vec::new());
            while col.len() < 3 * PAR_THRESHOLD {
                let len = rnd(30) as usize;
                let mut row: Vec<i64> = (0..len).map(|_| rnd(ncols as u64) as i64).collect();
                row.sort_unstable();
                row.dedup();
                col.extend(row);
                ptr.push(col.len() as i64);
            }
            if case % 4 != 0 {
                let at = rnd(col.len() as u64) as usize;
                col[at] = match case % 3 {
                    0 => col[at] + 1,
                    1 => -1 - (case as i64 % 2) * 5,
                    _ => rnd(ncols as u64 + 2) as i64,
                };
            }
            let naive = ptr.windows(2).all(|w| {
                let r = &col[w[0] as usize..w[1] as usize];
                r.iter().all(|&c| c >= 0 && (c as usize) < ncols)
                    && r.windows(2).all(|p| p[0] < p[1])
            });
            assert_eq!(check_rows(&ptr, &col, ncols).is_ok(), naive, "case {case}");
        }
    }

    #[test]
    fn permutation() {
        assert!(check_permutation::<i32>("perm", &[2, 0, 1]).is_ok());
        assert!(check_permutation::<i32>("perm", &[2, 0, 2]).is_err());
        assert!(check_permutation::<i64>("perm", &[-1, 0]).is_err());
    }
}
