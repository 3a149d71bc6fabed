//! Writing `.npz` archives (stored, uncompressed entries, as `numpy.savez`).

use std::borrow::Cow;
use std::io::{Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

use super::error::{NpzError, NpzErrorKind};
use super::npy::{header_bytes, NpyElement};
use crate::{Coo, Csc, Csr, Index, Scalar};

/// Writes named arrays into an `.npz` archive (one stored `NAME.npy` entry
/// per array, like `numpy.savez`). Entries are written in the order added;
/// the timestamps are fixed, so the same arrays give the same bytes.
///
/// After an I/O error every later call fails, and a writer dropped without
/// [`NpzWriter::finish`] (after an error, or abandoned) writes nothing
/// more: the archive is left incomplete and nothing is printed (the zip
/// writer would otherwise try to finish it on drop and print its error).
pub struct NpzWriter<W: Write + Seek> {
    /// `None` only while `finish` takes it.
    zip: Option<ZipWriter<Guarded<W>>>,
    names: Vec<String>,
    /// Set by the first failed write, or when the writer is dropped
    /// unfinished: from then on [`Guarded`] discards everything.
    stop: Arc<AtomicBool>,
}

/// The output of an [`NpzWriter`]: passes writes and seeks through until
/// one fails or `stop` is set, then accepts and discards everything (keeping
/// a consistent position, which the zip writer does arithmetic on), so that
/// the zip writer's drop (which finishes the archive) has nothing to fail
/// on.
struct Guarded<W> {
    inner: W,
    stop: Arc<AtomicBool>,
    /// The stream position, as far as it is known (the inner writer's
    /// until `stop`, then a virtual one).
    pos: u64,
    /// The largest position written to.
    end: u64,
}

impl<W> Guarded<W> {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Runs `f` on the inner writer; an error stops the guard.
    fn pass<R>(&mut self, f: impl FnOnce(&mut W) -> std::io::Result<R>) -> std::io::Result<R> {
        let r = f(&mut self.inner);
        if r.is_err() {
            self.stop.store(true, Ordering::Relaxed);
        }
        r
    }

    fn moved_to(&mut self, pos: u64) {
        self.pos = pos;
        self.end = self.end.max(pos);
    }
}

impl<W: Write> Write for Guarded<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = if self.stopped() {
            buf.len()
        } else {
            self.pass(|w| w.write(buf))?
        };
        self.moved_to(self.pos.saturating_add(n as u64));
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.stopped() {
            return Ok(());
        }
        self.pass(Write::flush)
    }
}

impl<W: Seek> Seek for Guarded<W> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        let to = if self.stopped() {
            match pos {
                SeekFrom::Start(p) => p,
                SeekFrom::Current(d) => self.pos.saturating_add_signed(d),
                SeekFrom::End(d) => self.end.saturating_add_signed(d),
            }
        } else {
            self.pass(|w| w.seek(pos))?
        };
        self.moved_to(to);
        Ok(to)
    }
}

impl<W: Write + Seek> Drop for NpzWriter<W> {
    fn drop(&mut self) {
        // Unfinished: discard what the zip writer's own drop writes.
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl<W: Write + Seek> std::fmt::Debug for NpzWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzWriter")
            .field("names", &self.names)
            .finish_non_exhaustive()
    }
}

/// The little-endian bytes of `data`, as `.npy` stores them: borrowed on a
/// little-endian target, byte-swapped per element (per part, for complex
/// values) on a big-endian one.
fn le_bytes<T: NpyElement>(data: &[T]) -> Cow<'_, [u8]> {
    #[cfg(target_endian = "little")]
    {
        Cow::Borrowed(bytemuck::cast_slice(data))
    }
    #[cfg(target_endian = "big")]
    {
        let size = std::mem::size_of::<T>();
        let elem = if T::DESCR.contains('c') {
            size / 2
        } else {
            size
        };
        let mut bytes = bytemuck::cast_slice::<T, u8>(data).to_vec();
        bytes.chunks_mut(elem).for_each(<[u8]>::reverse);
        Cow::Owned(bytes)
    }
}

fn arg_err(name: &str, msg: String) -> NpzError {
    NpzError::new(None, Some(name), NpzErrorKind::InvalidArgument(msg))
}

impl<W: Write + Seek> NpzWriter<W> {
    /// Starts an archive on `w`.
    pub fn new(w: W) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        Self {
            zip: Some(ZipWriter::new(Guarded {
                inner: w,
                stop: Arc::clone(&stop),
                pos: 0,
                end: 0,
            })),
            names: Vec::new(),
            stop,
        }
    }

    /// The zip writer, unless an earlier write failed.
    fn zip(&mut self, name: &str) -> Result<&mut ZipWriter<Guarded<W>>, NpzError> {
        match &mut self.zip {
            Some(z) if !self.stop.load(Ordering::Relaxed) => Ok(z),
            _ => Err(earlier_failure().with_array(name)),
        }
    }

    fn start(&mut self, name: &str, total_bytes: u64) -> Result<(), NpzError> {
        if name.is_empty() || name.contains(['/', '\\', '\0']) {
            return Err(arg_err(name, format!("`{name}` is not a valid array name")));
        }
        if self.names.iter().any(|n| n == name) {
            return Err(arg_err(name, format!("array `{name}` was already added")));
        }
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .last_modified_time(DateTime::DEFAULT)
            .unix_permissions(0o644)
            .large_file(total_bytes >= u64::from(u32::MAX));
        self.zip(name)?
            .start_file(format!("{name}.npy"), options)
            .map_err(|e| NpzError::from(e).with_array(name))?;
        self.names.push(name.to_string());
        Ok(())
    }

    fn write_raw(
        &mut self,
        name: &str,
        descr: &str,
        shape: &[usize],
        data: &[u8],
    ) -> Result<(), NpzError> {
        let header =
            header_bytes(descr, false, shape).map_err(|k| NpzError::new(None, Some(name), k))?;
        self.start(name, header.len() as u64 + data.len() as u64)?;
        let io = |e: std::io::Error| NpzError::from(e).with_array(name);
        let zip = self.zip(name)?;
        zip.write_all(&header).map_err(io)?;
        zip.write_all(data).map_err(io)?;
        Ok(())
    }

    /// Adds array `name` (without `.npy`) of the given shape (C order).
    /// The data is streamed into the archive without a copy.
    ///
    /// # Errors
    /// An invalid or repeated name, a shape whose product differs from
    /// `data.len()`, or an I/O error.
    pub fn add_array<T: NpyElement>(
        &mut self,
        name: &str,
        shape: &[usize],
        data: &[T],
    ) -> Result<(), NpzError> {
        let count = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        if count != Some(data.len()) {
            return Err(arg_err(
                name,
                format!(
                    "shape {shape:?} does not match the {} elements given",
                    data.len()
                ),
            ));
        }
        self.write_raw(name, T::DESCR, shape, &le_bytes(data))
    }

    /// Adds a 0-d `int64` array.
    ///
    /// # Errors
    /// As [`NpzWriter::add_array`].
    pub fn add_i64_scalar(&mut self, name: &str, v: i64) -> Result<(), NpzError> {
        self.write_raw(name, "<i8", &[], &v.to_le_bytes())
    }

    /// Adds `format`: a 0-d NumPy bytes scalar of dtype `|S{len}`, as
    /// `scipy.sparse.save_npz` writes it (e.g. `b'csr'`).
    ///
    /// # Errors
    /// A tag that is empty or not ASCII, or an I/O error.
    pub fn add_format_tag(&mut self, tag: &str) -> Result<(), NpzError> {
        if tag.is_empty() || !tag.is_ascii() || tag.contains('\0') {
            return Err(arg_err(
                "format",
                format!("format tag `{tag}` must be non-empty ascii"),
            ));
        }
        self.write_raw("format", &format!("|S{}", tag.len()), &[], tag.as_bytes())
    }

    /// Adds `shape`: `int64[2]` holding `[nrows, ncols]`.
    ///
    /// # Errors
    /// A dimension over `i64::MAX`, or an I/O error.
    pub fn add_shape(&mut self, nrows: usize, ncols: usize) -> Result<(), NpzError> {
        let conv = |v: usize| {
            i64::try_from(v)
                .map_err(|_| arg_err("shape", format!("dimension {v} does not fit int64")))
        };
        let shape = [conv(nrows)?, conv(ncols)?];
        self.add_array("shape", &[2], &shape)
    }

    /// Writes the central directory and returns the underlying writer.
    ///
    /// # Errors
    /// An I/O error.
    pub fn finish(mut self) -> Result<W, NpzError> {
        self.zip("")?;
        let zip = self.zip.take().ok_or_else(earlier_failure)?;
        let guarded = zip.finish().map_err(NpzError::from)?;
        if guarded.stopped() {
            return Err(earlier_failure());
        }
        // Finished: `drop(self)` no longer has a zip writer to silence.
        Ok(guarded.inner)
    }
}

/// The error of a call after a write failed (the first error was returned
/// by the call that failed).
fn earlier_failure() -> NpzError {
    NpzError::from(std::io::Error::other(
        "an earlier write to this archive failed",
    ))
}

/// Writes a standalone 1-d `.npy` file (v1.0, like `numpy.save`), e.g. the
/// result vector of SpMV.
///
/// # Errors
/// An I/O error.
pub fn write_npy<W: Write, T: NpyElement>(mut w: W, data: &[T]) -> Result<(), NpzError> {
    let header =
        header_bytes(T::DESCR, false, &[data.len()]).map_err(|k| NpzError::new(None, None, k))?;
    w.write_all(&header)?;
    w.write_all(&le_bytes(data))?;
    w.flush()?;
    Ok(())
}

/// Writes the layout of `scipy.sparse.save_npz` for CSR, CSC and COO: the two
/// 1-d index arrays, `format` (`tag`), `shape`, then `data`.
fn write_scipy<W, T, I>(
    w: W,
    tag: &str,
    (nrows, ncols): (usize, usize),
    index: [(&str, &[I]); 2],
    data: &[T],
) -> Result<(), NpzError>
where
    W: Write + Seek,
    T: NpyElement,
    I: NpyElement,
{
    let mut z = NpzWriter::new(w);
    for (name, a) in index {
        z.add_array(name, &[a.len()], a)?;
    }
    z.add_format_tag(tag)?;
    z.add_shape(nrows, ncols)?;
    z.add_array("data", &[data.len()], data)?;
    z.finish()?;
    Ok(())
}

/// Writes a CSR matrix with exactly the layout of `scipy.sparse.save_npz`:
/// entries `indices`, `indptr`, `format` (`b'csr'`), `shape`, `data`.
///
/// # Errors
/// An I/O error.
pub fn write_csr<W, T, I>(w: W, m: &Csr<T, I>) -> Result<(), NpzError>
where
    W: Write + Seek,
    T: Scalar + NpyElement,
    I: Index + NpyElement,
{
    let index = [("indices", m.col_idx()), ("indptr", m.row_ptr())];
    write_scipy(w, "csr", (m.nrows(), m.ncols()), index, m.values())
}

/// Writes a CSC matrix with exactly the layout of `scipy.sparse.save_npz`
/// for a `csc_matrix`: entries `indices` (row indices), `indptr` (column
/// offsets), `format` (`b'csc'`), `shape`, `data`.
///
/// ```
/// use std::io::Cursor;
/// use sparsetool_formats::npz::{read_npz_bytes, write_csc};
/// use sparsetool_formats::{AnyMatrix, Csc};
/// let a = Csc::<f64, i32>::try_from_parts(3, 2, vec![0, 2, 3], vec![0, 2, 1], vec![1.0, 2.0, 3.0])?;
/// let mut buf = Cursor::new(Vec::new());
/// write_csc(&mut buf, &a)?;
/// assert_eq!(read_npz_bytes::<f64, i32>(buf.into_inner(), "a.npz")?, AnyMatrix::Csc(a));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// An I/O error.
pub fn write_csc<W, T, I>(w: W, m: &Csc<T, I>) -> Result<(), NpzError>
where
    W: Write + Seek,
    T: Scalar + NpyElement,
    I: Index + NpyElement,
{
    let index = [("indices", m.row_idx()), ("indptr", m.col_ptr())];
    write_scipy(w, "csc", (m.nrows(), m.ncols()), index, m.values())
}

/// Writes a COO matrix with exactly the layout of `scipy.sparse.save_npz`
/// for 2-d COO: entries `row`, `col`, `format` (`b'coo'`), `shape`, `data`.
///
/// # Errors
/// An I/O error.
pub fn write_coo<W, T, I>(w: W, m: &Coo<T, I>) -> Result<(), NpzError>
where
    W: Write + Seek,
    T: Scalar + NpyElement,
    I: Index + NpyElement,
{
    let index = [("row", m.rows()), ("col", m.cols())];
    write_scipy(w, "coo", (m.nrows(), m.ncols()), index, m.values())
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Seek, SeekFrom, Write};

    use super::*;

    /// A writer that fails with "No space left on device" once `limit`
    /// bytes were written.
    struct Full {
        inner: Cursor<Vec<u8>>,
        limit: u64,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.inner.position() + buf.len() as u64 > self.limit {
                return Err(std::io::Error::from_raw_os_error(28));
            }
            self.inner.write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Seek for Full {
        fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
            self.inner.seek(pos)
        }
    }

    fn csr() -> Csr<f64, i32> {
        let n = 2000;
        let ptr: Vec<i32> = (0..=n).collect();
        let idx: Vec<i32> = (0..n).collect();
        Csr::try_from_parts(n as usize, n as usize, ptr, idx, vec![1.5; n as usize]).unwrap()
    }

    #[test]
    fn full_disk_is_one_clean_error_at_every_point() {
        // Fail at many points: inside an entry, between entries, in the
        // central directory (the last bytes).
        let total = {
            let mut c = Cursor::new(Vec::new());
            write_csr(&mut c, &csr()).unwrap();
            c.into_inner().len() as u64
        };
        for limit in (0..total).step_by(997).chain([total - 1, total - 30]) {
            let w = Full {
                inner: Cursor::new(Vec::new()),
                limit,
            };
            let err = write_csr(w, &csr()).unwrap_err();
            let text = err.to_string();
            assert!(matches!(err.kind(), NpzErrorKind::Io(_)), "{limit}: {text}");
            assert!(text.contains("No space left on device"), "{limit}: {text}");
            assert!(!text.contains("ZipWriter"), "{limit}: {text}");
            assert_eq!(text.lines().count(), 1, "{limit}: {text}");
        }
    }

    #[test]
    fn calls_after_a_failure_fail_and_drop_writes_nothing() {
        let mut z = NpzWriter::new(Full {
            inner: Cursor::new(Vec::new()),
            limit: 100,
        });
        assert!(z.add_array("a", &[100], &[0u8; 100]).is_err());
        assert!(z.add_array("b", &[1], &[0u8]).is_err());
        assert!(z.finish().is_err());
        // Abandoned without an error: the zip writer's drop writes nothing.
        let mut buf = Vec::new();
        {
            let mut z = NpzWriter::new(Cursor::new(&mut buf));
            z.add_array("a", &[3], &[1u8, 2, 3]).unwrap();
        }
        assert!(!buf.windows(4).any(|w| w == b"PK\x05\x06"), "no end record");
    }
}
