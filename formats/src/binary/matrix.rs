//! Mapping between the format types and `.spb` sections.

use std::io::Write;

use crate::binary::header::DType;
use crate::binary::write::{write_sections, HeaderFields, SectionData};
use crate::binary::{SpbError, SpbErrorKind as K, SpbFile};
use crate::buffer::Buffer;
use crate::mm::Warning;
use crate::pattern::{check_offsets, check_rows};
use crate::values::ValueCheck;
use crate::{AnyMatrix, Coo, Csc, Csr, Ell, FormatKind, Hyb, Index, Jds, MatrixRef, Scalar, Sell};

fn ix<'a, I: Index>(name: &'static str, a: &'a [I]) -> SectionData<'a> {
    let dtype = DType::of_index(I::NAME).unwrap_or(DType::I64);
    SectionData {
        name,
        dtype,
        bytes: bytemuck::cast_slice(a),
    }
}

fn val<'a, T: Scalar>(name: &'static str, a: &'a [T]) -> SectionData<'a> {
    let dtype = DType::of_value(T::NAME).unwrap_or(DType::F64);
    SectionData {
        name,
        dtype,
        bytes: bytemuck::cast_slice(a),
    }
}

/// Writes a matrix as a `.spb` stream.
///
/// # Errors
/// I/O errors.
pub fn write_spb<W: Write, T: Scalar, I: Index>(
    w: W,
    m: MatrixRef<'_, T, I>,
) -> Result<(), SpbError> {
    let value_dtype = DType::of_value(T::NAME)
        .ok_or_else(|| SpbError::new(K::Types("unsupported value type".into())))?;
    let index_dtype = DType::of_index(I::NAME)
        .ok_or_else(|| SpbError::new(K::Types("unsupported index type".into())))?;
    // Each format's parameters (see `Header::param0`/`param1`) and its
    // sections, in file order.
    let (param0, param1, sections) = match m {
        MatrixRef::Coo(a) => (
            0,
            0,
            vec![
                ix("rows", a.rows()),
                ix("cols", a.cols()),
                val("values", a.values()),
            ],
        ),
        MatrixRef::Csr(a) => (
            0,
            0,
            vec![
                ix("row_ptr", a.row_ptr()),
                ix("col_idx", a.col_idx()),
                val("values", a.values()),
            ],
        ),
        MatrixRef::Csc(a) => (
            0,
            0,
            vec![
                ix("col_ptr", a.col_ptr()),
                ix("row_idx", a.row_idx()),
                val("values", a.values()),
            ],
        ),
        MatrixRef::Ell(a) => (
            a.width(),
            0,
            vec![
                ix("row_nnz", a.row_nnz()),
                ix("col_idx", a.col_idx()),
                val("values", a.values()),
            ],
        ),
        MatrixRef::Hyb(a) => {
            let (e, c) = (a.ell(), a.coo());
            let sections = vec![
                ix("ell_row_nnz", e.row_nnz()),
                ix("ell_col_idx", e.col_idx()),
                val("ell_values", e.values()),
                ix("coo_rows", c.rows()),
                ix("coo_cols", c.cols()),
                val("coo_values", c.values()),
            ];
            (e.width(), c.nnz(), sections)
        }
        MatrixRef::Jds(a) => (
            a.num_diagonals(),
            0,
            vec![
                ix("perm", a.perm()),
                ix("jd_ptr", a.jd_ptr()),
                ix("col_idx", a.col_idx()),
                val("values", a.values()),
            ],
        ),
        MatrixRef::Sell(a) => (
            a.slice_height(),
            a.sigma(),
            vec![
                ix("perm", a.perm()),
                ix("slice_ptr", a.slice_ptr()),
                ix("slice_width", a.slice_width()),
                ix("col_idx", a.col_idx()),
                val("values", a.values()),
            ],
        ),
    };
    let fields = HeaderFields {
        format: m.kind(),
        value_dtype,
        index_dtype,
        nrows: m.nrows() as u64,
        ncols: m.ncols() as u64,
        nnz: m.nnz() as u64,
        param0: param0 as u64,
        param1: param1 as u64,
    };
    write_sections(w, &fields, &sections)
}

/// A validated, zero-copy view of a CSR `.spb` file.
#[derive(Debug, Clone, Copy)]
pub struct CsrView<'a, T, I> {
    /// Rows.
    pub nrows: usize,
    /// Columns.
    pub ncols: usize,
    /// Row offsets (`nrows + 1`).
    pub row_ptr: &'a [I],
    /// Column indices (`nnz`).
    pub col_idx: &'a [I],
    /// Values (`nnz`).
    pub values: &'a [T],
}

impl<'a, T: Scalar, I: Index> CsrView<'a, T, I> {
    /// Entries of row `i`.
    #[must_use]
    pub fn row_len(&self, i: usize) -> usize {
        self.row_ptr[i + 1].to_usize() - self.row_ptr[i].to_usize()
    }

    /// Columns and values of row `i`.
    #[must_use]
    pub fn row(&self, i: usize) -> (&'a [I], &'a [T]) {
        let (s, e) = (self.row_ptr[i].to_usize(), self.row_ptr[i + 1].to_usize());
        (&self.col_idx[s..e], &self.values[s..e])
    }

    /// Stored entries.
    #[must_use]
    pub fn nnz(&self) -> usize {
        self.col_idx.len()
    }
}

impl SpbFile {
    fn dims(&self) -> Result<(usize, usize, usize, usize, usize), SpbError> {
        let h = self.header();
        let conv = |v: u64, what: &str| {
            usize::try_from(v)
                .ok()
                .filter(|&x| x < usize::MAX / 2)
                .ok_or_else(|| {
                    SpbError::at(32, K::Mismatch(format!("{what} = {v} is too large")))
                        .named(self.name())
                })
        };
        Ok((
            conv(h.nrows, "nrows")?,
            conv(h.ncols, "ncols")?,
            conv(h.nnz, "nnz")?,
            conv(h.param0, "param0")?,
            conv(h.param1, "param1")?,
        ))
    }

    fn expect_format(&self, k: FormatKind) -> Result<(), SpbError> {
        if self.header().format != k {
            return Err(SpbError::at(
                20,
                K::Types(format!("file holds {}, not {k}", self.header().format)),
            )
            .named(self.name()));
        }
        Ok(())
    }

    /// Checks the value and index dtypes against `T` and `I`.
    fn expect_types<T: Scalar, I: Index>(&self) -> Result<(), SpbError> {
        let h = self.header();
        if DType::of_value(T::NAME) != Some(h.value_dtype)
            || DType::of_index(I::NAME) != Some(h.index_dtype)
        {
            return Err(SpbError::at(
                24,
                K::Types(format!(
                    "file holds {} values with {} indices, asked for {} / {}",
                    h.value_dtype.name(),
                    h.index_dtype.name(),
                    T::NAME,
                    I::NAME
                )),
            )
            .named(self.name()));
        }
        Ok(())
    }

    /// Validates a CSR file's structure without copying (parallel) and
    /// returns slices of the mapping. The values are scanned too: NaN and
    /// infinities are refused, as [`SpbFile::to_matrix`] refuses them.
    ///
    /// # Errors
    /// Wrong format or dtypes, any CSR invariant broken, or a non-finite
    /// value.
    pub fn csr_view<T: Scalar, I: Index>(&self) -> Result<CsrView<'_, T, I>, SpbError> {
        self.expect_format(FormatKind::Csr)?;
        self.expect_types::<T, I>()?;
        let (nrows, ncols, nnz, _, _) = self.dims()?;
        crate::coo::check_dims::<I>(nrows, ncols, nnz)
            .map_err(|e| SpbError::from(e).named(self.name()))?;
        let row_ptr = self.indices::<I>("row_ptr")?;
        let col_idx = self.indices::<I>("col_idx")?;
        let values = self.values::<T>("values")?;
        let named = |e: crate::FormatError| SpbError::from(e).named(self.name());
        self.check_entry_lens(col_idx.len(), values.len(), nnz)?;
        if !self.csr_structure_checked() {
            check_offsets("row_ptr", row_ptr, nrows + 1, nnz).map_err(named)?;
            check_rows(row_ptr, col_idx, ncols).map_err(named)?;
        }
        ValueCheck::new(false).check_all(values).map_err(|bad| {
            SpbError::new(K::BadValue {
                section: "values".to_string(),
                bad,
            })
            .named(self.name())
        })?;
        Ok(CsrView {
            nrows,
            ncols,
            row_ptr,
            col_idx,
            values,
        })
    }

    /// A value section copied out as `T`, converting from the stored dtype
    /// (f32 <-> f64, complex widths; complex into a real type is refused),
    /// every value checked by `check` (the rule of [`crate::values`]).
    fn values_as<T: Scalar>(&self, name: &str, check: &mut ValueCheck) -> Result<Vec<T>, SpbError> {
        let bad = |bad| {
            SpbError::new(K::BadValue {
                section: name.to_string(),
                bad,
            })
            .named(self.name())
        };
        let same = DType::of_value(T::NAME) == Some(self.header().value_dtype);
        if same {
            let v = self.values::<T>(name)?.to_vec();
            check.check_all(&v).map_err(bad)?;
            return Ok(v);
        }
        Ok(match self.header().value_dtype {
            DType::F32 => check
                .convert_all(self.values::<f32>(name)?, |&v| (f64::from(v), 0.0))
                .map_err(bad)?,
            DType::F64 => check
                .convert_all(self.values::<f64>(name)?, |&v| (v, 0.0))
                .map_err(bad)?,
            dt @ (DType::C64 | DType::C128) if !T::IS_COMPLEX => {
                return Err(SpbError::at(
                    24,
                    K::Types(format!(
                        "file holds {} values; read it with a complex type",
                        dt.name()
                    )),
                )
                .named(self.name()))
            }
            DType::C64 => check
                .convert_all(self.values::<crate::Complex32>(name)?, |v| {
                    (f64::from(v.re), f64::from(v.im))
                })
                .map_err(bad)?,
            DType::C128 => check
                .convert_all(self.values::<crate::Complex64>(name)?, |v| (v.re, v.im))
                .map_err(bad)?,
            dt => {
                return Err(
                    SpbError::at(24, K::Header(format!("bad value dtype {}", dt.name())))
                        .named(self.name()),
                )
            }
        })
    }

    /// An index section copied out as `I`, converting from the stored dtype;
    /// `-1` stays the padding sentinel, other negatives and values that do not
    /// fit are refused.
    /// `col_idx` and `values` of a CSR file hold the header's `nnz` entries.
    fn check_entry_lens(&self, cols: usize, vals: usize, nnz: usize) -> Result<(), SpbError> {
        if cols == nnz && vals == nnz {
            return Ok(());
        }
        Err(SpbError::new(K::Mismatch(format!(
            "col_idx/values hold {cols}/{vals} entries, header says nnz = {nnz}"
        )))
        .named(self.name()))
    }

    /// An index section as `I`: the mapped section itself when the file
    /// stores `I` (no copy), else converted.
    fn index_buffer<I: Index>(&self, name: &str) -> Result<Buffer<I>, SpbError> {
        match DType::of_index(I::NAME) {
            Some(dt) if dt == self.header().index_dtype => self.shared::<I>(name, dt),
            _ => self.indices_as::<I>(name).map(Buffer::from),
        }
    }

    /// A value section as `T`, checked by `check`: the mapped section itself
    /// when the file stores `T` (no copy), else converted.
    fn value_buffer<T: Scalar>(
        &self,
        name: &str,
        check: &mut ValueCheck,
    ) -> Result<Buffer<T>, SpbError> {
        match DType::of_value(T::NAME) {
            Some(dt) if dt == self.header().value_dtype => {
                let b = self.shared::<T>(name, dt)?;
                check.check_all(&b).map_err(|bad| {
                    SpbError::new(K::BadValue {
                        section: name.to_string(),
                        bad,
                    })
                    .named(self.name())
                })?;
                Ok(b)
            }
            _ => self.values_as::<T>(name, check).map(Buffer::from),
        }
    }

    fn indices_as<I: Index>(&self, name: &str) -> Result<Vec<I>, SpbError> {
        let wide: Vec<i64> = match self.header().index_dtype {
            DType::I32 if I::NAME == "i32" => return Ok(self.indices::<I>(name)?.to_vec()),
            DType::I64 if I::NAME == "i64" => return Ok(self.indices::<I>(name)?.to_vec()),
            DType::I32 => self
                .indices::<i32>(name)?
                .iter()
                .map(|&v| i64::from(v))
                .collect(),
            _ => self.indices::<i64>(name)?.to_vec(),
        };
        wide.into_iter()
            .map(|v| {
                if v == -1 {
                    Ok(I::PADDING)
                } else {
                    usize::try_from(v)
                        .ok()
                        .and_then(I::from_usize)
                        .ok_or_else(|| {
                            SpbError::new(K::Types(format!(
                                "section `{name}`: index {v} does not fit {}",
                                I::NAME
                            )))
                            .named(self.name())
                        })
                }
            })
            .collect()
    }

    /// Builds the typed matrix through its `try_from_buffers` (every
    /// invariant checked), then checks the header's counts and parameters
    /// against it. With the file's own value and index types, every format
    /// reads its sections in place from the mapping, without a copy
    /// ([`AnyMatrix::is_mapped`]); other types are converted into owned
    /// arrays (f32 <-> f64, i32 <-> i64).
    ///
    /// # Errors
    /// Complex values asked for as real, indices that do not fit `I`,
    /// missing sections, any broken invariant, or a header disagreeing with
    /// the arrays.
    ///
    /// Values are checked by the rule of [`crate::values`]: NaN and
    /// infinities are refused (see [`SpbFile::to_matrix_with`] for lenient
    /// mode), and so is a finite value that overflows `T`.
    pub fn to_matrix<T: Scalar, I: Index>(&self) -> Result<AnyMatrix<T, I>, SpbError> {
        Ok(self.to_matrix_with(false)?.0)
    }

    /// [`SpbFile::to_matrix`], in lenient mode if `lenient`: NaN and
    /// infinite values are accepted, with one warning per value section
    /// holding them (returned with the matrix).
    ///
    /// # Errors
    /// As [`SpbFile::to_matrix`].
    pub fn to_matrix_with<T: Scalar, I: Index>(
        &self,
        lenient: bool,
    ) -> Result<(AnyMatrix<T, I>, Vec<Warning>), SpbError> {
        let warnings = std::cell::RefCell::new(Vec::new());
        let m = self.build::<T, I>(&|n: &str| {
            let mut check = ValueCheck::new(lenient);
            let v = self.value_buffer::<T>(n, &mut check)?;
            if let Some(pos) = check.first_non_finite() {
                warnings.borrow_mut().push(Warning {
                    line: None,
                    message: format!(
                        "section `{n}`: NaN or infinite values accepted (first at position {pos})"
                    ),
                });
            }
            Ok(v)
        })?;
        Ok((m, warnings.into_inner()))
    }

    /// Builds the matrix, reading value sections through `v`.
    fn build<T: Scalar, I: Index>(
        &self,
        vb: &dyn Fn(&str) -> Result<Buffer<T>, SpbError>,
    ) -> Result<AnyMatrix<T, I>, SpbError> {
        let (nrows, ncols, nnz, p0, p1) = self.dims()?;
        let named = |e: crate::FormatError| SpbError::from(e).named(self.name());
        // Every format keeps the mapped sections (read in place) when the
        // file's types are the caller's.
        let ib = |n: &str| self.index_buffer::<I>(n);
        let m = match self.header().format {
            FormatKind::Coo => AnyMatrix::Coo(
                Coo::try_from_buffers(nrows, ncols, ib("rows")?, ib("cols")?, vb("values")?)
                    .map_err(named)?,
            ),
            FormatKind::Csr if self.csr_structure_checked() => {
                let (rp, ci, vals) = (ib("row_ptr")?, ib("col_idx")?, vb("values")?);
                self.check_entry_lens(ci.len(), vals.len(), nnz)?;
                // SAFETY: the row pointers and rows were validated while the
                // checksums were verified (csr_structure_checked), the lengths
                // just above.
                AnyMatrix::Csr(unsafe { Csr::from_buffers_unchecked(nrows, ncols, rp, ci, vals) })
            }
            FormatKind::Csr => AnyMatrix::Csr(
                Csr::try_from_buffers(nrows, ncols, ib("row_ptr")?, ib("col_idx")?, vb("values")?)
                    .map_err(named)?,
            ),
            FormatKind::Csc => AnyMatrix::Csc(
                Csc::try_from_buffers(nrows, ncols, ib("col_ptr")?, ib("row_idx")?, vb("values")?)
                    .map_err(named)?,
            ),
            FormatKind::Ell => AnyMatrix::Ell(
                Ell::try_from_buffers(
                    nrows,
                    ncols,
                    p0,
                    ib("row_nnz")?,
                    ib("col_idx")?,
                    vb("values")?,
                )
                .map_err(named)?,
            ),
            FormatKind::Hyb => {
                let ell = Ell::try_from_buffers(
                    nrows,
                    ncols,
                    p0,
                    ib("ell_row_nnz")?,
                    ib("ell_col_idx")?,
                    vb("ell_values")?,
                )
                .map_err(named)?;
                let coo = Coo::try_from_buffers(
                    nrows,
                    ncols,
                    ib("coo_rows")?,
                    ib("coo_cols")?,
                    vb("coo_values")?,
                )
                .map_err(named)?;
                if coo.nnz() != p1 {
                    return Err(SpbError::at(
                        64,
                        K::Mismatch(format!(
                            "header says {p1} tail entries, file holds {}",
                            coo.nnz()
                        )),
                    )
                    .named(self.name()));
                }
                AnyMatrix::Hyb(Hyb::try_from_parts(ell, coo).map_err(named)?)
            }
            FormatKind::Jds => AnyMatrix::Jds(
                Jds::try_from_buffers(
                    nrows,
                    ncols,
                    ib("perm")?,
                    ib("jd_ptr")?,
                    ib("col_idx")?,
                    vb("values")?,
                )
                .map_err(named)?,
            ),
            FormatKind::Sell => AnyMatrix::Sell(
                Sell::try_from_buffers(
                    nrows,
                    ncols,
                    p0,
                    p1,
                    [
                        ib("perm")?,
                        ib("slice_ptr")?,
                        ib("slice_width")?,
                        ib("col_idx")?,
                    ],
                    vb("values")?,
                )
                .map_err(named)?,
            ),
        };
        let actual = m.nnz();
        if actual != nnz {
            return Err(SpbError::at(
                48,
                K::Mismatch(format!("header says nnz = {nnz}, the arrays hold {actual}")),
            )
            .named(self.name()));
        }
        if let AnyMatrix::Jds(a) = &m {
            if a.num_diagonals() != p0 {
                return Err(SpbError::at(
                    56,
                    K::Mismatch(format!(
                        "header says {p0} jagged diagonals, file holds {}",
                        a.num_diagonals()
                    )),
                )
                .named(self.name()));
            }
        }
        Ok(m)
    }
}
