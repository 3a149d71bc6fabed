//! Entry lines: the grammar of one data line, a hot path for well-formed
//! lines and a cold path that names what is wrong (or records a lenient
//! recovery). One chunk of lines is parsed straight into its slice of the
//! output arrays ([`coord_chunk`], [`array_chunk`]); `chunk.rs` drives the
//! chunks in parallel.
//!
//! ```text
//! coord_entry_pattern = SP* uint SP+ uint SP* EOL                 // i j
//! coord_entry_real    = SP* uint SP+ uint SP+ real SP* EOL        // i j v
//! coord_entry_complex = SP* uint SP+ uint SP+ real SP+ real SP* EOL // i j re im
//! array_entry_real    = SP* real SP* EOL                          // v
//! array_entry_complex = SP* real SP+ real SP* EOL                 // re im
//! ```
//!
//! Checks made on every entry: `1 <= i <= nrows`, `1 <= j <= ncols`
//! (index 0 is recorded, see the 0-based rule in the module docs), the
//! number of tokens, number syntax, finiteness, range of the value type, and
//! for symmetric kinds the triangle.

use super::error::{snippet, LineError, MmErrorKind};
use super::header::{Header, MmField, MmFormat, MmSymmetry};
use crate::values::{judge, ValueFault};
use crate::{Index, Scalar};

/// Whether `T`'s components are `f32` (parse them as `f32` directly).
pub(super) fn is_f32<T: Scalar>() -> bool {
    std::mem::size_of::<T>() == if T::IS_COMPLEX { 8 } else { 4 }
}

/// Facts a chunk collects while parsing, merged in chunk order.
#[derive(Debug, Default)]
pub(super) struct Stats {
    /// Data lines written.
    pub(super) written: usize,
    /// First line with an index 0, and which index.
    pub(super) zero: Option<(u64, &'static str)>,
    /// Some row index equals `nrows` or some column index equals `ncols`.
    pub(super) at_dim: bool,
    /// First entry above the diagonal (line, row, col), 1-based as written.
    pub(super) upper: Option<(u64, u64, u64)>,
    /// Number of entries above the diagonal.
    pub(super) n_upper: usize,
    /// First line with extra tokens (lenient).
    pub(super) extra: Option<u64>,
    /// First line with a NaN or infinity (lenient).
    pub(super) nonfinite: Option<u64>,
    /// First line of an integer file holding a non-integer (lenient).
    pub(super) non_integer: Option<u64>,
    /// First diagonal entry of a hermitian file with a non-zero imaginary
    /// part: `(line, row, im)` (coordinate files: lenient mode only, strict
    /// mode stops there; array files: both modes, judged by `array_checks`).
    pub(super) nonreal_diagonal: Option<(u64, u64, f64)>,
}

impl Stats {
    pub(super) fn merge(&mut self, o: Stats) {
        self.written += o.written;
        self.zero = self.zero.or(o.zero);
        self.at_dim |= o.at_dim;
        self.upper = self.upper.or(o.upper);
        self.n_upper += o.n_upper;
        self.extra = self.extra.or(o.extra);
        self.nonfinite = self.nonfinite.or(o.nonfinite);
        self.non_integer = self.non_integer.or(o.non_integer);
        self.nonreal_diagonal = self.nonreal_diagonal.or(o.nonreal_diagonal);
    }
}

/// Per-read constants shared by all chunks.
pub(super) struct Cfg {
    pub(super) nrows: usize,
    pub(super) ncols: usize,
    pub(super) field: MmField,
    pub(super) symmetry: MmSymmetry,
    pub(super) lenient: bool,
    pub(super) f32: bool,
}

impl Cfg {
    /// The constants of a read of a file with header `h` (`f32`: parse
    /// values as `f32`).
    pub(super) fn new(h: &Header, lenient: bool, f32: bool) -> Self {
        Self {
            nrows: h.nrows,
            ncols: h.ncols,
            field: h.field,
            symmetry: h.symmetry,
            lenient,
            f32,
        }
    }

    fn layout(&self, format: MmFormat) -> &'static str {
        match (format, self.field) {
            (MmFormat::Coordinate, MmField::Pattern) => "i j",
            (MmFormat::Coordinate, MmField::Complex) => "i j re im",
            (MmFormat::Coordinate, _) => "i j value",
            (MmFormat::Array, MmField::Complex) => "re im",
            (MmFormat::Array, _) => "value",
        }
    }
}

#[inline]
fn skip_sp(b: &[u8], mut p: usize) -> usize {
    while p < b.len() && (b[p] == b' ' || b[p] == b'\t') {
        p += 1;
    }
    p
}

#[inline]
fn is_sep(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// The token starting at `p`, for messages.
fn token_at(b: &[u8], p: usize) -> String {
    let e = b[p..]
        .iter()
        .position(|&c| is_sep(c))
        .map_or(b.len(), |k| p + k);
    snippet(&b[p..e])
}

/// Position just after the line containing `p`.
#[inline]
pub(super) fn next_line(b: &[u8], p: usize) -> usize {
    memchr::memchr(b'\n', &b[p..]).map_or(b.len(), |k| p + k + 1)
}

/// Whether the line starting at `p` holds data (not blank, not a comment).
/// Returns the first non-blank position if so.
#[inline]
pub(super) fn data_start(b: &[u8], p: usize) -> Option<usize> {
    let q = skip_sp(b, p);
    match b.get(q) {
        None | Some(b'\n' | b'\r' | b'%') => None,
        Some(_) => Some(q),
    }
}

/// After the last token: only blanks up to the end of the line. Returns the
/// start of the next line, or the position of the extra token.
#[inline]
fn end_of_line(b: &[u8], p: usize) -> Result<usize, usize> {
    let mut q = skip_sp(b, p);
    while q < b.len() && b[q] == b'\r' {
        q += 1;
    }
    match b.get(q) {
        None => Ok(q),
        Some(b'\n') => Ok(q + 1),
        Some(_) => Err(skip_sp(b, q)),
    }
}

/// `uint`: an index, then a separator.
#[inline]
fn parse_uint(b: &[u8], p: &mut usize, what: &'static str) -> Result<u64, MmErrorKind> {
    let s = *p;
    let mut v: u64 = 0;
    let mut q = s;
    while q < b.len() && b[q].is_ascii_digit() {
        if q - s >= 19 {
            return Err(MmErrorKind::BadNumber {
                expected: what,
                found: token_at(b, s),
            });
        }
        v = v * 10 + u64::from(b[q] - b'0');
        q += 1;
    }
    if q == s || (q < b.len() && !is_sep(b[q])) {
        return Err(MmErrorKind::BadNumber {
            expected: what,
            found: token_at(b, s),
        });
    }
    *p = q;
    Ok(v)
}

/// An integer value (`integer` field): optional sign and digits.
#[inline]
fn parse_int(b: &[u8], p: usize) -> Option<(i64, usize)> {
    let mut q = p;
    let neg = match b.get(q) {
        Some(b'-') => {
            q += 1;
            true
        }
        Some(b'+') => {
            q += 1;
            false
        }
        _ => false,
    };
    let s = q;
    let mut v: i64 = 0;
    while q < b.len() && b[q].is_ascii_digit() {
        v = v.checked_mul(10)?.checked_add(i64::from(b[q] - b'0'))?;
        q += 1;
    }
    if q == s || (q < b.len() && !is_sep(b[q])) {
        return None;
    }
    Some((if neg { -v } else { v }, q))
}

/// A real value, as `f32` or `f64` per `cfg.f32`, checked for syntax,
/// finiteness and range. Returns the value and the end position.
#[inline]
fn parse_real(
    b: &[u8],
    p: usize,
    cfg: &Cfg,
    line: u64,
    st: &mut Stats,
) -> Result<(f64, usize), MmErrorKind> {
    if cfg.field == MmField::Integer {
        if let Some((v, q)) = parse_int(b, p) {
            return Ok((v as f64, q));
        }
        let tok = token_at(b, p);
        let all_digits = tok
            .trim_start_matches(['-', '+'])
            .bytes()
            .all(|c| c.is_ascii_digit());
        if all_digits && !tok.is_empty() && tok != "-" && tok != "+" {
            return Err(MmErrorKind::ValueOutOfRange {
                found: tok,
                ty: "i64",
            });
        }
        if !cfg.lenient {
            return Err(MmErrorKind::BadNumber {
                expected: "an integer value (the field is `integer`)",
                found: tok,
            });
        }
        st.non_integer = st.non_integer.or(Some(line));
    }
    let r = if cfg.f32 {
        fast_float2::parse_partial::<f32, _>(&b[p..]).map(|(v, n)| (f64::from(v), n))
    } else {
        fast_float2::parse_partial::<f64, _>(&b[p..])
    };
    let bad = || MmErrorKind::BadNumber {
        expected: "a real number",
        found: token_at(b, p),
    };
    let (v, n) = r.map_err(|_| bad())?;
    let q = p + n;
    if q < b.len() && !is_sep(b[q]) {
        return Err(bad());
    }
    if !v.is_finite() {
        // A number too large for the type parses as an infinity too: only
        // a `nan`/`inf` literal is a non-finite value as stored.
        let tok = token_at(b, p);
        let literal = tok.bytes().any(|c| matches!(c, b'i' | b'I' | b'n' | b'N'));
        let ty = if cfg.f32 { "f32" } else { "f64" };
        match judge(!literal, false, ty) {
            Some(ValueFault::OutOfRange { ty }) => {
                return Err(MmErrorKind::ValueOutOfRange { found: tok, ty });
            }
            _ if !cfg.lenient => return Err(MmErrorKind::NonFinite { found: tok }),
            _ => st.nonfinite = st.nonfinite.or(Some(line)),
        }
    }
    Ok((v, q))
}

/// Parses the values of one line starting at `p` (after the indices).
/// Returns `(re, im, next_line_start)`.
#[inline]
fn parse_values(
    b: &[u8],
    mut p: usize,
    cfg: &Cfg,
    format: MmFormat,
    line: u64,
    st: &mut Stats,
) -> Result<(f64, f64, usize), MmErrorKind> {
    let nvals = match cfg.field {
        MmField::Pattern => 0,
        MmField::Complex => 2,
        _ => 1,
    };
    let mut vals = [1.0, 0.0];
    for (k, slot) in vals.iter_mut().enumerate().take(nvals) {
        // The previous token ended at a separator (or the end), so either
        // blanks lead to the next token or the line ends here.
        let q = skip_sp(b, p);
        if q >= b.len() || matches!(b[q], b'\n' | b'\r') {
            return Err(missing(cfg, format, k));
        }
        let (v, e) = parse_real(b, q, cfg, line, st)?;
        *slot = v;
        p = e;
    }
    match end_of_line(b, p) {
        Ok(next) => Ok((vals[0], vals[1], next)),
        Err(extra) => {
            if cfg.lenient {
                st.extra = st.extra.or(Some(line));
                Ok((vals[0], vals[1], next_line(b, extra)))
            } else {
                let hint = if cfg.field == MmField::Pattern {
                    "; use --lenient to ignore values in a pattern file"
                } else {
                    "; use --lenient to ignore extra tokens"
                };
                Err(MmErrorKind::UnexpectedValue {
                    found: token_at(b, extra),
                    field: cfg.field.keyword(),
                    layout: cfg.layout(format),
                    hint,
                })
            }
        }
    }
}

fn missing(cfg: &Cfg, format: MmFormat, k: usize) -> MmErrorKind {
    let expected = match (cfg.field, k) {
        (MmField::Complex, 0) => "real part",
        (MmField::Complex, _) => "imaginary part",
        _ => "value",
    };
    MmErrorKind::MissingValue {
        expected,
        field: cfg.field.keyword(),
        layout: cfg.layout(format),
    }
}

/// Hot path: an unsigned integer followed by a separator or the end.
/// Indices of up to 7 digits (the common case) take the SWAR path.
#[inline(always)]
fn uint_fast(b: &[u8], s: usize) -> Option<(u64, usize)> {
    if let Some(w) = b.get(s..s + 8) {
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        if let Some((v, n)) = swar_digits(u64::from_le_bytes(a)) {
            let q = s + n;
            // q < s + 8 <= b.len(): the byte after the digits exists.
            return is_sep(b[q]).then_some((v, q));
        }
    }
    uint_loop(b, s)
}

/// The value of the leading decimal digits of 8 little-endian bytes, and
/// their count, when there are 1 to 7 of them (`None` for 0 or 8).
#[inline(always)]
fn swar_digits(x: u64) -> Option<(u64, usize)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Bit 7 of a byte of `t` is set iff the byte is not an ASCII digit
    // (borrows and carries only spill into bytes after a non-digit, which
    // are not used).
    let t = x.wrapping_sub(ONES * 0x30) | x.wrapping_add(ONES * 0x46);
    let mask = t & (ONES * 0x80);
    let n = (mask.trailing_zeros() / 8) as usize;
    if n == 0 || n >= 8 {
        return None;
    }
    // Keep the n digits, moved to the top: the bytes below act as leading
    // zeros. Then combine pairs, quads and octets (simdjson's
    // parse_eight_digits_unrolled).
    let v = (x & (ONES * 0x0f)) << (8 * (8 - n));
    let v = (v.wrapping_mul(10) + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_ffff_0000_ffff;
    let v = (v.wrapping_mul(10000) + (v >> 32)) & 0x0000_0000_ffff_ffff;
    Some((v, n))
}

/// Byte-at-a-time version of [`uint_fast`] (long numbers, end of buffer).
#[inline]
fn uint_loop(b: &[u8], s: usize) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    let mut q = s;
    while q < b.len() {
        let d = b[q].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        // Wraps only past 19 digits, which are refused below.
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        q += 1;
    }
    let n = q - s;
    if n == 0 || n > 19 || (q < b.len() && !is_sep(b[q])) {
        return None;
    }
    Some((v, q))
}

/// Hot path: a finite value of the usual syntax followed by a separator or
/// the end. Anything else goes to the slow path, which classifies it.
#[inline(always)]
fn real_fast(b: &[u8], p: usize, integer: bool, f32: bool) -> Option<(f64, usize)> {
    if integer {
        return parse_int(b, p).map(|(v, q)| (v as f64, q));
    }
    let (v, n) = if f32 {
        fast_float2::parse_partial::<f32, _>(&b[p..])
            .ok()
            .map(|(v, n)| (f64::from(v), n))?
    } else {
        fast_float2::parse_partial::<f64, _>(&b[p..]).ok()?
    };
    let q = p + n;
    if (q < b.len() && !is_sep(b[q])) || !v.is_finite() {
        return None;
    }
    Some((v, q))
}

/// Hot path: `nvals` values (the first one after a separator if
/// `sep_first`), then the end of the line. Returns `(re, im, next line)`.
#[inline(always)]
fn values_fast(
    b: &[u8],
    mut p: usize,
    nvals: usize,
    sep_first: bool,
    integer: bool,
    f32: bool,
) -> Option<(f64, f64, usize)> {
    let mut vals = [1.0, 0.0];
    for (k, slot) in vals.iter_mut().enumerate().take(nvals) {
        let q = skip_sp(b, p);
        if (q == p && (k > 0 || sep_first)) || q >= b.len() {
            return None;
        }
        let (v, e) = real_fast(b, q, integer, f32)?;
        *slot = v;
        p = e;
    }
    let next = end_of_line(b, p).ok()?;
    Some((vals[0], vals[1], next))
}

/// Hot path of a coordinate line: `(i, j, re, im, next line)`.
#[inline(always)]
fn coord_fast(b: &[u8], q: usize, nvals: usize, integer: bool, f32: bool) -> Option<Entry> {
    let (i, p) = uint_fast(b, q)?;
    let p2 = skip_sp(b, p);
    if p2 == p {
        return None;
    }
    let (j, p) = uint_fast(b, p2)?;
    let (re, im, next) = values_fast(b, p, nvals, true, integer, f32)?;
    Some((i, j, re, im, next))
}

/// A parsed coordinate line: `(i, j, re, im, next line)`.
type Entry = (u64, u64, f64, f64, usize);

/// Slow path of a coordinate line: the same grammar, with the error (or
/// the lenient recovery) for whatever the hot path refused.
#[cold]
#[inline(never)]
fn coord_slow(
    b: &[u8],
    q: usize,
    cfg: &Cfg,
    line: u64,
    st: &mut Stats,
) -> Result<Entry, MmErrorKind> {
    let mut q = q;
    let i = parse_uint(b, &mut q, "a row index")?;
    let q2 = skip_sp(b, q);
    if q2 == q || q2 >= b.len() || matches!(b[q2], b'\n' | b'\r') {
        return Err(MmErrorKind::MissingValue {
            expected: "column index",
            field: cfg.field.keyword(),
            layout: cfg.layout(MmFormat::Coordinate),
        });
    }
    q = q2;
    let j = parse_uint(b, &mut q, "a column index")?;
    let (re, im, next) = parse_values(b, q, cfg, MmFormat::Coordinate, line, st)?;
    Ok((i, j, re, im, next))
}

/// Where [`coord_lines`] stopped: the position and number of the line
/// after the last entry it read.
#[derive(Debug, Clone, Copy)]
pub(super) struct End {
    pub(super) pos: usize,
    pub(super) line: u64,
}

/// Parses the entry lines of a coordinate file at the start of `b` (first
/// line number `first_line`), at most `limit` of them, checking each, and
/// calls `emit(k, i, j, re, im)` for the `k`-th with its 1-based indices as
/// written (in range; an index 0 is recorded in the stats) and its value.
/// Returns the stats and where it stopped.
#[inline]
pub(super) fn coord_lines(
    b: &[u8],
    first_line: u64,
    cfg: &Cfg,
    limit: usize,
    mut emit: impl FnMut(usize, u64, u64, f64, f64),
) -> Result<(Stats, End), LineError> {
    let mut st = Stats::default();
    let mut p = 0;
    let mut line = first_line;
    let mut k = 0;
    let sym = cfg.symmetry != MmSymmetry::General;
    let skew = cfg.symmetry == MmSymmetry::SkewSymmetric;
    let herm = cfg.symmetry == MmSymmetry::Hermitian;
    let nvals = match cfg.field {
        MmField::Pattern => 0,
        MmField::Complex => 2,
        _ => 1,
    };
    let integer = cfg.field == MmField::Integer;
    let (nrows, ncols) = (cfg.nrows as u64, cfg.ncols as u64);
    while p < b.len() && k < limit {
        let Some(q) = data_start(b, p) else {
            p = next_line(b, p);
            line += 1;
            continue;
        };
        let at = |kind| (Some(line), kind);
        let (i, j, re, im, next) = match coord_fast(b, q, nvals, integer, cfg.f32) {
            Some(e) => e,
            None => coord_slow(b, q, cfg, line, &mut st).map_err(at)?,
        };
        if i > nrows || j > ncols || i == 0 || j == 0 || i == nrows || j == ncols {
            if i > nrows {
                return Err(at(MmErrorKind::IndexOutOfRange {
                    which: "row",
                    index: i,
                    max: cfg.nrows,
                }));
            }
            if j > ncols {
                return Err(at(MmErrorKind::IndexOutOfRange {
                    which: "column",
                    index: j,
                    max: cfg.ncols,
                }));
            }
            if i == 0 || j == 0 {
                st.zero = st
                    .zero
                    .or(Some((line, if i == 0 { "row" } else { "column" })));
            }
            st.at_dim |= i == nrows || j == ncols;
        }
        if sym {
            if i < j {
                st.n_upper += 1;
                st.upper = st.upper.or(Some((line, i, j)));
            } else if skew && i == j {
                return Err(at(MmErrorKind::SkewDiagonal { row: i }));
            } else if herm && i == j && im != 0.0 {
                if !cfg.lenient {
                    return Err(at(nonreal_diagonal(i, im)));
                }
                st.nonreal_diagonal = st.nonreal_diagonal.or(Some((line, i, im)));
            }
        }
        emit(k, i, j, re, im);
        k += 1;
        p = next;
        line += 1;
    }
    st.written = k;
    Ok((st, End { pos: p, line }))
}

/// A diagonal entry `(i, i)` of a hermitian file with imaginary part `im`
/// (not zero) on `line`: an error in strict mode.
pub(super) fn nonreal_diagonal(i: u64, im: f64) -> MmErrorKind {
    MmErrorKind::NonRealDiagonal {
        row: i,
        im: format!("{im}"),
    }
}

/// Parses one chunk of a coordinate file into the given slices; stops when
/// they are full (the caller sized them) or at the end of the chunk.
pub(super) fn coord_chunk<T: Scalar, I: Index>(
    b: &[u8],
    first_line: u64,
    cfg: &Cfg,
    (rows, cols, vals): (&mut [I], &mut [I], &mut [T]),
) -> Result<Stats, LineError> {
    // An index 0 is stored as -1 until the 0-based rule decides.
    let index = |x: u64| {
        if x == 0 {
            I::PADDING
        } else {
            I::from_usize_unchecked(x as usize - 1)
        }
    };
    let limit = vals.len();
    let (st, _) = coord_lines(b, first_line, cfg, limit, |k, i, j, re, im| {
        rows[k] = index(i);
        cols[k] = index(j);
        vals[k] = T::from_parts(re, im);
    })?;
    Ok(st)
}

/// Slow path of an array line.
#[cold]
#[inline(never)]
fn array_slow(
    b: &[u8],
    q: usize,
    cfg: &Cfg,
    line: u64,
    st: &mut Stats,
) -> Result<(f64, f64, usize), MmErrorKind> {
    parse_values(b, q, cfg, MmFormat::Array, line, st)
}

/// Parses the value lines of an array file at the start of `b` (first
/// line number `first_line`), at most `limit` of them, and calls
/// `emit(k, re, im)` for the `k`-th. Returns the stats and where it
/// stopped.
#[inline]
pub(super) fn array_lines(
    b: &[u8],
    first_line: u64,
    cfg: &Cfg,
    limit: usize,
    mut emit: impl FnMut(usize, f64, f64),
) -> Result<(Stats, End), LineError> {
    let mut st = Stats::default();
    let mut p = 0;
    let mut line = first_line;
    let mut k = 0;
    let nvals = if cfg.field == MmField::Complex { 2 } else { 1 };
    let integer = cfg.field == MmField::Integer;
    while p < b.len() && k < limit {
        let Some(q) = data_start(b, p) else {
            p = next_line(b, p);
            line += 1;
            continue;
        };
        let (re, im, next) = match values_fast(b, q, nvals, false, integer, cfg.f32) {
            Some(v) => v,
            None => array_slow(b, q, cfg, line, &mut st).map_err(|kind| (Some(line), kind))?,
        };
        emit(k, re, im);
        k += 1;
        p = next;
        line += 1;
    }
    st.written = k;
    Ok((st, End { pos: p, line }))
}

/// Parses one chunk of an array file into `vals`.
pub(super) fn array_chunk<T: Scalar>(
    b: &[u8],
    first_line: u64,
    cfg: &Cfg,
    vals: &mut [T],
) -> Result<Stats, LineError> {
    let limit = vals.len();
    let (st, _) = array_lines(b, first_line, cfg, limit, |k, re, im| {
        vals[k] = T::from_parts(re, im);
    })?;
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(field: MmField, symmetry: MmSymmetry, lenient: bool) -> Cfg {
        Cfg {
            nrows: 5,
            ncols: 5,
            field,
            symmetry,
            lenient,
            f32: false,
        }
    }

    #[test]
    fn uint_alone() {
        assert_eq!(uint_fast(b"123 4", 0), Some((123, 3)));
        assert_eq!(uint_fast(b"7", 0), Some((7, 1)));
        assert_eq!(uint_fast(b"12x", 0), None);
        assert_eq!(uint_fast(b" 1", 0), None);
        assert_eq!(uint_fast(b"99999999999999999999", 0), None);
        let mut p = 0;
        assert!(matches!(
            parse_uint(b"1.5 2", &mut p, "a row index"),
            Err(MmErrorKind::BadNumber {
                expected: "a row index",
                ..
            })
        ));
    }

    #[test]
    fn swar_matches_loop() {
        let seps = [
            b' ', b'\t', b'\n', b'\r', b'x', b'.', b'/', b':', 0xff, 0x80, b'0',
        ];
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for len in 0..=21usize {
            for &sep in &seps {
                for first in [b'1', b'9', b'0'] {
                    let mut v: Vec<u8> =
                        (0..len).map(|k| b'0' + ((k * 7 + 3) % 10) as u8).collect();
                    if len > 0 {
                        v[0] = first;
                    }
                    v.push(sep);
                    v.extend_from_slice(b"123456789");
                    cases.push(v);
                }
            }
        }
        cases.push(b"12345678 ".to_vec());
        cases.push(b"9999999 12".to_vec());
        cases.push(b"1234567".to_vec());
        for c in &cases {
            for s in 0..c.len().min(3) {
                assert_eq!(
                    uint_fast(c, s),
                    uint_loop(c, s),
                    "{:?} at {s}",
                    String::from_utf8_lossy(c)
                );
            }
        }
        assert_eq!(uint_fast(b"1234567 x", 0), Some((1_234_567, 7)));
        assert_eq!(swar_digits(u64::from_le_bytes(*b"0000001 ")), Some((1, 7)));
        assert_eq!(swar_digits(u64::from_le_bytes(*b"12345678")), None);
    }

    #[test]
    fn real_alone() {
        assert_eq!(real_fast(b".032\n", 0, false, false), Some((0.032, 4)));
        assert_eq!(real_fast(b"-.3e-2 ", 0, false, false), Some((-0.003, 6)));
        assert_eq!(real_fast(b"1e400", 0, false, false), None);
        assert_eq!(real_fast(b"nan", 0, false, false), None);
        assert_eq!(real_fast(b"1.5a", 0, false, false), None);
        assert_eq!(real_fast(b"-42\r\n", 0, true, false), Some((-42.0, 3)));
        assert_eq!(real_fast(b"4.5", 0, true, false), None);
        assert_eq!(
            real_fast(b"0.1", 0, false, true),
            Some((f64::from(0.1f32), 3))
        );
        assert_eq!(real_fast(b"1e39", 0, false, true), None);
    }

    #[test]
    fn coord_entry_alone() {
        // i j v: the remaining input is the next line.
        let b = b"3 2 1.5\r\n4 4 2\n";
        assert_eq!(coord_fast(b, 0, 1, false, false), Some((3, 2, 1.5, 0.0, 9)));
        // i j re im
        assert_eq!(
            coord_fast(b"1 1 2 -3", 0, 2, false, false),
            Some((1, 1, 2.0, -3.0, 8))
        );
        // i j (pattern)
        assert_eq!(
            coord_fast(b"1\t1 \n", 0, 0, false, false),
            Some((1, 1, 1.0, 0.0, 5))
        );
        // Refused by the hot path, classified by the slow one.
        let mut st = Stats::default();
        let c = cfg(MmField::Real, MmSymmetry::General, false);
        assert_eq!(coord_fast(b"1 1\n", 0, 1, false, false), None);
        assert!(matches!(
            coord_slow(b"1 1\n", 0, &c, 9, &mut st),
            Err(MmErrorKind::MissingValue { .. })
        ));
        assert!(matches!(
            coord_slow(b"1 1 1 1\n", 0, &c, 9, &mut st),
            Err(MmErrorKind::UnexpectedValue { .. })
        ));
        assert!(matches!(
            coord_slow(b"1 1 inf\n", 0, &c, 9, &mut st),
            Err(MmErrorKind::NonFinite { .. })
        ));
        let l = cfg(MmField::Pattern, MmSymmetry::General, true);
        assert_eq!(
            coord_slow(b"2 1 7\n3 3\n", 0, &l, 9, &mut st).unwrap(),
            (2, 1, 1.0, 0.0, 6)
        );
        assert_eq!(st.extra, Some(9));
    }
}
