//! `.npz` archives of the GPU formats (ELL, HYB, JDS, SELL), with the
//! array names of the `.npz` schema in `docs/cli.md`. Every reader goes back
//! through the format's `try_from_parts`, so a corrupt archive becomes an
//! error naming the file and the array, never a bad matrix.
//!
//! | format | arrays |
//! |---|---|
//! | `ell` | `width` (int64 scalar), `row_nnz`, `data`, `indices` (slot-major) |
//! | `hyb` | `ell_width`, `ell_row_nnz`, `ell_data`, `ell_indices`, `coo_row`, `coo_col`, `coo_data` |
//! | `jds` | `perm`, `jd_ptr`, `data`, `indices` |
//! | `sell` | `slice_height`, `sigma` (int64 scalars), `perm`, `slice_ptr`, `slice_width`, `data`, `indices` |
//!
//! Every archive also holds `format` (e.g. `b'ell'`) and `shape`
//! (`int64[2]`).

use std::io::{Seek, Write};

use super::{NpyElement, NpzArchive, NpzError, NpzErrorKind, NpzWriter};
use crate::{Coo, Ell, FormatError, Hyb, Index, Jds, Scalar, Sell};

/// Writes the ELL arrays under `prefix` (`""` or `"ell_"`).
fn add_ell<W, T, I>(z: &mut NpzWriter<W>, prefix: &str, m: &Ell<T, I>) -> Result<(), NpzError>
where
    W: Write + Seek,
    T: Scalar + NpyElement,
    I: Index + NpyElement,
{
    let width = i64::try_from(m.width()).map_err(|_| {
        NpzError::new(
            None,
            Some("width"),
            NpzErrorKind::OutOfRange(m.width().to_string()),
        )
    })?;
    z.add_i64_scalar(&format!("{prefix}width"), width)?;
    z.add_array(&format!("{prefix}row_nnz"), &[m.nrows()], m.row_nnz())?;
    z.add_array(&format!("{prefix}data"), &[m.slots()], m.values())?;
    z.add_array(&format!("{prefix}indices"), &[m.slots()], m.col_idx())?;
    Ok(())
}

/// Writes one archive: the arrays `add` puts in, then `format` (`tag`) and
/// `shape` (`nrows`, `ncols`), the order every GPU-format archive uses.
fn write_archive<W: Write + Seek>(
    w: W,
    tag: &str,
    (nrows, ncols): (usize, usize),
    add: impl FnOnce(&mut NpzWriter<W>) -> Result<(), NpzError>,
) -> Result<(), NpzError> {
    let mut z = NpzWriter::new(w);
    add(&mut z)?;
    z.add_format_tag(tag)?;
    z.add_shape(nrows, ncols)?;
    z.finish()?;
    Ok(())
}

/// Converts a stored non-negative scalar to `usize`.
fn scalar(a: &mut NpzArchive, name: &str) -> Result<usize, NpzError> {
    let v = a.i64_scalar(name)?;
    usize::try_from(v).map_err(|_| {
        NpzError::new(
            Some(a.file_name()),
            Some(name),
            NpzErrorKind::OutOfRange(format!("{v} is negative")),
        )
    })
}

/// Checks the `format` tag and reads the shape.
fn open_as(a: &mut NpzArchive, tag: &str) -> Result<(usize, usize), NpzError> {
    let found = a.format_tag()?;
    if found != tag {
        return Err(NpzError::new(
            Some(a.file_name()),
            Some("format"),
            NpzErrorKind::InvalidArgument(format!(
                "the archive holds a `{found}` matrix, not `{tag}`"
            )),
        ));
    }
    a.shape()
}

/// Attaches the file name and the array at fault to a format error (see
/// [`array_at_fault`] for `rows`, `cols` and `prefix`).
fn named(
    a: &NpzArchive,
    rows: &'static str,
    cols: &'static str,
    prefix: &'static str,
) -> impl Fn(FormatError) -> NpzError {
    let file = a.file_name().to_string();
    move |e| {
        let array = array_at_fault(&e, rows, cols, prefix);
        NpzError::from(e).with_file(&file).with_array(&array)
    }
}

/// The archive's name of a format's own array (`col_idx` → `indices`, ...),
/// under `prefix` (`ell_` for HYB's ELL part, `coo_` for its tail).
fn npz_name(internal: &str, prefix: &str) -> String {
    let base = match internal {
        "row_ptr" => return "indptr".to_string(),
        "col_idx" => "indices",
        "values" => "data",
        "rows" => "row",
        "cols" => "col",
        other => other,
    };
    format!("{prefix}{base}")
}

/// The `.npz` array a broken invariant is about, so that a message names
/// the array actually at fault: `rows` and `cols` are the arrays holding
/// the row and column indices of the entries in this read (e.g. `indptr`
/// and `indices` for CSR), `prefix` the prefix of the part's arrays.
pub(super) fn array_at_fault(
    e: &FormatError,
    rows: &'static str,
    cols: &'static str,
    prefix: &'static str,
) -> String {
    use FormatError as E;
    match e {
        E::Length { array, .. }
        | E::PointerStart { array, .. }
        | E::PointerNotMonotone { array, .. }
        | E::PointerEnd { array, .. }
        | E::Permutation { array, .. } => npz_name(array, prefix),
        E::RowOutOfBounds { .. } | E::RowIndexOutOfBounds { .. } | E::UnsortedColumn { .. } => {
            rows.to_string()
        }
        E::ColumnOutOfBounds { .. } | E::UnsortedRow { .. } | E::DuplicateEntry { .. } => {
            cols.to_string()
        }
        E::IndexOverflow { .. } | E::ShapeMismatch { .. } => "shape".to_string(),
        E::Parameter(msg) if msg.contains("sigma") => "sigma".to_string(),
        E::Parameter(msg) if msg.contains("slice height") => "slice_height".to_string(),
        E::Parameter(_) => format!("{prefix}width"),
        E::Padding { detail, .. } if detail.contains("value") => format!("{prefix}data"),
        E::Padding { .. } => cols.to_string(),
        E::NonFinite { .. } => format!("{prefix}data"),
        E::RowNnzOutOfRange { .. } => format!("{prefix}row_nnz"),
        E::SliceSize { .. } => "slice_ptr".to_string(),
        E::SliceWidth { .. } => "slice_width".to_string(),
        E::RowOrder { .. } | E::PermutationWindow { .. } | E::RowOrderTie { .. } => {
            "perm".to_string()
        }
        E::DiagonalGrowth { .. } | E::DiagonalTooLong { .. } | E::EmptyDiagonal { .. } => {
            "jd_ptr".to_string()
        }
        E::TailOrder { .. } | E::TailRowNotFull { .. } => "coo_row".to_string(),
        E::TailBeforeEll { .. } => "coo_col".to_string(),
    }
}

/// Reads the ELL arrays under `prefix`.
fn get_ell<T: Scalar, I: Index>(
    a: &mut NpzArchive,
    prefix: &str,
    nrows: usize,
    ncols: usize,
) -> Result<Ell<T, I>, NpzError> {
    let width = scalar(a, &format!("{prefix}width"))?;
    let row_nnz = a.index_array(&format!("{prefix}row_nnz"))?;
    let values = a.value_array(&format!("{prefix}data"))?;
    let col_idx = a.index_array(&format!("{prefix}indices"))?;
    let cols = if prefix.is_empty() {
        "indices"
    } else {
        "ell_indices"
    };
    let prefix = if prefix.is_empty() { "" } else { "ell_" };
    Ell::try_from_parts(nrows, ncols, width, row_nnz, col_idx, values)
        .map_err(named(a, "row_nnz", cols, prefix))
}

/// Writes an ELL matrix: `width`, `row_nnz`, `data`, `indices`, `format`
/// (`b'ell'`), `shape`.
///
/// # Errors
/// An I/O error.
pub fn write_ell<W, T, I>(w: W, m: &Ell<T, I>) -> Result<(), NpzError>
where
    W: Write + Seek,
    T: Scalar + NpyElement,
    I: Index + NpyElement,
{
    write_archive(w, "ell", (m.nrows(), m.ncols()), |z| add_ell(z, "", m))
}

/// Reads an ELL archive.
///
/// # Errors
/// A wrong `format` tag, a missing or mistyped array, or a broken ELL
/// invariant ([`NpzErrorKind::Format`]).
pub fn read_ell<T: Scalar, I: Index>(a: &mut NpzArchive) -> Result<Ell<T, I>, NpzError> {
    let (nrows, ncols) = open_as(a, "ell")?;
    get_ell(a, "", nrows, ncols)
}

/// Writes a HYB matrix: `ell_width`, `ell_row_nnz`, `ell_data`,
/// `ell_indices`, `coo_row`, `coo_col`, `coo_data`, `format` (`b'hyb'`),
/// `shape`.
///
/// # Errors
/// An I/O error.
pub fn write_hyb<W, T, I>(w: W, m: &Hyb<T, I>) -> Result<(), NpzError>
where
    W: Write + Seek,
    T: Scalar + NpyElement,
    I: Index + NpyElement,
{
    write_archive(w, "hyb", (m.nrows(), m.ncols()), |z| {
        add_ell(z, "ell_", m.ell())?;
        let t = m.coo();
        z.add_array("coo_row", &[t.nnz()], t.rows())?;
        z.add_array("coo_col", &[t.nnz()], t.cols())?;
        z.add_array("coo_data", &[t.nnz()], t.values())
    })
}

/// Reads a HYB archive.
///
/// # Errors
/// As [`read_ell`], for either part or the invariants that tie them.
pub fn read_hyb<T: Scalar, I: Index>(a: &mut NpzArchive) -> Result<Hyb<T, I>, NpzError> {
    let (nrows, ncols) = open_as(a, "hyb")?;
    let ell = get_ell(a, "ell_", nrows, ncols)?;
    let rows = a.index_array("coo_row")?;
    let cols = a.index_array("coo_col")?;
    let vals = a.value_array("coo_data")?;
    let coo = Coo::try_from_parts(nrows, ncols, rows, cols, vals)
        .map_err(named(a, "coo_row", "coo_col", "coo_"))?;
    Hyb::try_from_parts(ell, coo).map_err(named(a, "coo_row", "coo_col", "coo_"))
}

/// Writes a JDS matrix: `perm`, `jd_ptr`, `data`, `indices`, `format`
/// (`b'jds'`), `shape`.
///
/// # Errors
/// An I/O error.
pub fn write_jds<W, T, I>(w: W, m: &Jds<T, I>) -> Result<(), NpzError>
where
    W: Write + Seek,
    T: Scalar + NpyElement,
    I: Index + NpyElement,
{
    write_archive(w, "jds", (m.nrows(), m.ncols()), |z| {
        z.add_array("perm", &[m.nrows()], m.perm())?;
        z.add_array("jd_ptr", &[m.jd_ptr().len()], m.jd_ptr())?;
        z.add_array("data", &[m.nnz()], m.values())?;
        z.add_array("indices", &[m.nnz()], m.col_idx())
    })
}

/// Reads a JDS archive.
///
/// # Errors
/// As [`read_ell`], with the JDS invariants.
pub fn read_jds<T: Scalar, I: Index>(a: &mut NpzArchive) -> Result<Jds<T, I>, NpzError> {
    let (nrows, ncols) = open_as(a, "jds")?;
    let perm = a.index_array("perm")?;
    let jd_ptr = a.index_array("jd_ptr")?;
    let values = a.value_array("data")?;
    let col_idx = a.index_array("indices")?;
    Jds::try_from_parts(nrows, ncols, perm, jd_ptr, col_idx, values)
        .map_err(named(a, "perm", "indices", ""))
}

/// Writes a SELL-C-σ matrix: `slice_height`, `sigma`, `perm`, `slice_ptr`,
/// `slice_width`, `data`, `indices`, `format` (`b'sell'`), `shape`.
///
/// # Errors
/// An I/O error.
pub fn write_sell<W, T, I>(w: W, m: &Sell<T, I>) -> Result<(), NpzError>
where
    W: Write + Seek,
    T: Scalar + NpyElement,
    I: Index + NpyElement,
{
    let conv = |name: &str, v: usize| {
        i64::try_from(v)
            .map_err(|_| NpzError::new(None, Some(name), NpzErrorKind::OutOfRange(v.to_string())))
    };
    write_archive(w, "sell", (m.nrows(), m.ncols()), |z| {
        z.add_i64_scalar("slice_height", conv("slice_height", m.slice_height())?)?;
        z.add_i64_scalar("sigma", conv("sigma", m.sigma())?)?;
        z.add_array("perm", &[m.nrows()], m.perm())?;
        z.add_array("slice_ptr", &[m.slice_ptr().len()], m.slice_ptr())?;
        z.add_array("slice_width", &[m.num_slices()], m.slice_width())?;
        z.add_array("data", &[m.slots()], m.values())?;
        z.add_array("indices", &[m.slots()], m.col_idx())
    })
}

/// Reads a SELL-C-σ archive.
///
/// # Errors
/// As [`read_ell`], with the SELL invariants (including the parameter
/// rule: σ is 1 or a multiple of the slice height).
pub fn read_sell<T: Scalar, I: Index>(a: &mut NpzArchive) -> Result<Sell<T, I>, NpzError> {
    let (nrows, ncols) = open_as(a, "sell")?;
    let c = scalar(a, "slice_height")?;
    let sigma = scalar(a, "sigma")?;
    let perm = a.index_array("perm")?;
    let slice_ptr = a.index_array("slice_ptr")?;
    let slice_width = a.index_array("slice_width")?;
    let values = a.value_array("data")?;
    let col_idx = a.index_array("indices")?;
    Sell::try_from_parts(
        nrows,
        ncols,
        c,
        sigma,
        perm,
        slice_ptr,
        slice_width,
        col_idx,
        values,
    )
    .map_err(named(a, "perm", "indices", ""))
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::FormatError;

    fn archive(bytes: Vec<u8>) -> NpzArchive {
        NpzArchive::from_bytes(bytes, "t.npz").unwrap()
    }

    // Seed C (4x5).
    fn ell() -> Ell<f64, i32> {
        Ell::try_from_parts(
            4,
            5,
            3,
            vec![3, 2, 1, 3],
            vec![0, 1, 0, 1, 2, 3, -1, 2, 4, -1, -1, 4],
            vec![1., 4., 6., 7., 2., 5., 0., 8., 3., 0., 0., 9.],
        )
        .unwrap()
    }

    /// The archive of [`ell`] with its indices and values changed by
    /// `damage`, read back.
    fn ell_with(
        damage: impl FnOnce(&mut Vec<i32>, &mut Vec<f64>),
    ) -> Result<Ell<f64, i32>, NpzError> {
        let (nr, nc, w, rn, mut ci, mut v) = ell().into_parts();
        damage(&mut ci, &mut v);
        let mut z = NpzWriter::new(Cursor::new(Vec::new()));
        z.add_i64_scalar("width", w as i64).unwrap();
        z.add_array("row_nnz", &[nr], &rn).unwrap();
        z.add_array("data", &[v.len()], &v).unwrap();
        z.add_array("indices", &[ci.len()], &ci).unwrap();
        z.add_format_tag("ell").unwrap();
        z.add_shape(nr, nc).unwrap();
        let bytes = z.finish().unwrap().into_inner();
        read_ell::<f64, i32>(&mut archive(bytes))
    }

    #[test]
    fn ell_round_trip_and_names() {
        let m = ell();
        let mut buf = Cursor::new(Vec::new());
        write_ell(&mut buf, &m).unwrap();
        let mut a = archive(buf.into_inner());
        let mut names = a.names();
        names.sort();
        assert_eq!(
            names,
            ["data", "format", "indices", "row_nnz", "shape", "width"]
        );
        assert_eq!(a.i64_scalar("width").unwrap(), 3);
        assert_eq!(read_ell::<f64, i32>(&mut a).unwrap(), m);
        // Read with other index/value types.
        let b: Ell<f32, i64> = read_ell(&mut a).unwrap();
        assert_eq!(b.col_idx()[6], -1);
        assert!(matches!(read_jds::<f64, i32>(&mut a), Err(e) if e.array() == Some("format")));
    }

    #[test]
    fn hyb_jds_sell_round_trips() {
        let e = Ell::try_from_parts(
            4,
            5,
            2,
            vec![2, 2, 1, 2],
            vec![0, 1, 0, 1, 2, 3, -1, 2],
            vec![1., 4., 6., 7., 2., 5., 0., 8.],
        )
        .unwrap();
        let t = Coo::try_from_parts(4, 5, vec![0, 3], vec![4, 4], vec![3., 9.]).unwrap();
        let h = Hyb::try_from_parts(e, t).unwrap();
        let mut buf = Cursor::new(Vec::new());
        write_hyb(&mut buf, &h).unwrap();
        let mut a = archive(buf.into_inner());
        let mut names = a.names();
        names.sort();
        assert_eq!(
            names,
            [
                "coo_col",
                "coo_data",
                "coo_row",
                "ell_data",
                "ell_indices",
                "ell_row_nnz",
                "ell_width",
                "format",
                "shape"
            ]
        );
        assert_eq!(read_hyb::<f64, i32>(&mut a).unwrap(), h);

        let j = Jds::<f64, i32>::try_from_parts(
            4,
            5,
            vec![0, 3, 1, 2],
            vec![0, 4, 7, 9],
            vec![0, 1, 1, 0, 2, 2, 3, 4, 4],
            vec![1., 7., 4., 6., 2., 8., 5., 3., 9.],
        )
        .unwrap();
        let mut buf = Cursor::new(Vec::new());
        write_jds(&mut buf, &j).unwrap();
        assert_eq!(
            read_jds::<f64, i32>(&mut archive(buf.into_inner())).unwrap(),
            j
        );

        let s = Sell::<f64, i32>::try_from_parts(
            4,
            5,
            2,
            4,
            vec![0, 3, 1, 2],
            vec![0, 6, 10],
            vec![3, 2],
            vec![0, 1, 2, 2, 4, 4, 1, 0, 3, -1],
            vec![1., 7., 2., 8., 3., 9., 4., 6., 5., 0.],
        )
        .unwrap();
        let mut buf = Cursor::new(Vec::new());
        write_sell(&mut buf, &s).unwrap();
        let mut a = archive(buf.into_inner());
        assert_eq!(
            (
                a.i64_scalar("slice_height").unwrap(),
                a.i64_scalar("sigma").unwrap()
            ),
            (2, 4)
        );
        assert_eq!(read_sell::<f64, i32>(&mut a).unwrap(), s);
    }

    #[test]
    fn corrupt_archives_are_errors() {
        // Padding index replaced by a column: a FormatError naming the file.
        let err = ell_with(|ci, _| ci[6] = 2).unwrap_err();
        assert!(matches!(
            err.kind(),
            NpzErrorKind::Format(FormatError::Padding { row: 2, .. })
        ));
        assert_eq!(err.file(), Some("t.npz"));
        // Negative width.
        let mut z = NpzWriter::new(Cursor::new(Vec::new()));
        z.add_i64_scalar("width", -1).unwrap();
        z.add_format_tag("ell").unwrap();
        z.add_shape(0, 0).unwrap();
        let bytes = z.finish().unwrap().into_inner();
        let err = read_ell::<f64, i32>(&mut archive(bytes)).unwrap_err();
        assert!(matches!(err.kind(), NpzErrorKind::OutOfRange(_)), "{err}");
        // Bad sigma.
        let mut z = NpzWriter::new(Cursor::new(Vec::new()));
        z.add_i64_scalar("slice_height", 2).unwrap();
        z.add_i64_scalar("sigma", 3).unwrap();
        for name in ["perm", "slice_width", "indices"] {
            z.add_array::<i32>(name, &[0], &[]).unwrap();
        }
        z.add_array::<i32>("slice_ptr", &[1], &[0]).unwrap();
        z.add_array::<f64>("data", &[0], &[]).unwrap();
        z.add_format_tag("sell").unwrap();
        z.add_shape(0, 0).unwrap();
        let bytes = z.finish().unwrap().into_inner();
        let err = read_sell::<f64, i32>(&mut archive(bytes)).unwrap_err();
        assert!(
            matches!(err.kind(), NpzErrorKind::Format(FormatError::Parameter(_))),
            "{err}"
        );
        assert_eq!(err.array(), Some("sigma"), "{err}");
    }

    #[test]
    fn errors_name_the_array_at_fault() {
        use FormatError as E;
        let at = |e: E| array_at_fault(&e, "row", "col", "");
        assert_eq!(
            at(E::Parameter("SELL slice height must be at least 1".into())),
            "slice_height"
        );
        assert_eq!(
            at(E::SliceWidth {
                slice: 0,
                width: 1,
                longest: 2
            }),
            "slice_width"
        );
        assert_eq!(
            at(E::RowOutOfBounds {
                row: 9,
                nrows: 2,
                pos: 0
            }),
            "row"
        );
        assert_eq!(
            at(E::Length {
                array: "col_idx",
                expected: 1,
                actual: 2
            }),
            "indices"
        );
        assert_eq!(
            array_at_fault(
                &E::RowNnzOutOfRange {
                    row: 0,
                    row_nnz: 9,
                    width: 1
                },
                "",
                "",
                "ell_"
            ),
            "ell_row_nnz"
        );
        assert_eq!(
            array_at_fault(
                &E::Length {
                    array: "values",
                    expected: 1,
                    actual: 2
                },
                "",
                "",
                "coo_"
            ),
            "coo_data"
        );
        // Padding: the index or the value.
        let err = ell_with(|_, v| v[6] = 5.0).unwrap_err();
        assert_eq!(err.array(), Some("data"), "{err}");
    }
}
