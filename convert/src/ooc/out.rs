//! The `.spb` output written piece by piece: every section at its offset
//! in the file's [`Layout`], appended to in order and hashed as it goes;
//! the header and table last, at offset 0.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use sparsetool_formats::binary::{
    DType, HeaderFields, Layout, SectionHasher, SectionSpec, ALIGN, ENTRY_SIZE, HEADER_SIZE,
};
use sparsetool_formats::{Index, Scalar};

use super::OocError;

/// A `.spb` file being written section by section.
pub(super) struct SpbOut {
    file: File,
    path: PathBuf,
    specs: Vec<SectionSpec>,
    layout: Layout,
    hashers: Vec<SectionHasher>,
    /// Bytes written so far per section.
    written: Vec<u64>,
    /// Sections written out of order ([`SpbOut::put`]): hashed at the
    /// end by reading them back.
    placed: Vec<bool>,
}

impl SpbOut {
    /// Creates `path` with room for sections of these sizes (upper bounds:
    /// [`SpbOut::finish`] takes the real counts).
    pub(super) fn create(path: &Path, specs: &[SectionSpec]) -> Result<Self, OocError> {
        let layout = Layout::new(specs)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| OocError::io(path, "cannot create", e))?;
        let n = specs.len();
        Ok(Self {
            file,
            path: path.to_path_buf(),
            specs: specs.to_vec(),
            layout,
            hashers: vec![SectionHasher::default(); n],
            written: vec![0; n],
            placed: vec![false; n],
        })
    }

    fn write_at(&self, bytes: &[u8], at: u64) -> Result<(), OocError> {
        self.file
            .write_all_at(bytes, at)
            .map_err(|e| OocError::io(&self.path, "cannot write", e))
    }

    /// Appends `items` to section `s`.
    pub(super) fn append<P: bytemuck::Pod>(
        &mut self,
        s: usize,
        items: &[P],
    ) -> Result<(), OocError> {
        let bytes: &[u8] = bytemuck::cast_slice(items);
        let at = self.layout.table[s].offset + self.written[s];
        self.write_at(bytes, at)?;
        self.hashers[s].update(bytes);
        self.written[s] += bytes.len() as u64;
        Ok(())
    }

    /// Appends coordinate entries to sections `t`, `t + 1`, `t + 2` (rows,
    /// columns, values) and empties the buffers.
    pub(super) fn append_entries<T: Scalar, I: Index>(
        &mut self,
        t: usize,
        rows: &mut Vec<I>,
        cols: &mut Vec<I>,
        vals: &mut Vec<T>,
    ) -> Result<(), OocError> {
        self.append(t, rows)?;
        self.append(t + 1, cols)?;
        self.append(t + 2, vals)?;
        rows.clear();
        cols.clear();
        vals.clear();
        Ok(())
    }

    /// Writes `items` at element `at` of section `s`, out of order (the
    /// slot-major GPU layouts). Every element of the section must be put
    /// exactly once; the section is hashed by [`SpbOut::finish`], which
    /// reads it back. Not to be mixed with [`SpbOut::append`].
    pub(super) fn put<P: bytemuck::Pod>(
        &mut self,
        s: usize,
        at: usize,
        items: &[P],
    ) -> Result<(), OocError> {
        let bytes: &[u8] = bytemuck::cast_slice(items);
        let off = self.layout.table[s].offset + (at * std::mem::size_of::<P>()) as u64;
        self.write_at(bytes, off)?;
        self.placed[s] = true;
        self.written[s] += bytes.len() as u64;
        Ok(())
    }

    /// Reads `len` bytes from offset `at` back, `buf` at a time, handing
    /// each piece and its position (from `at`) to `f`.
    fn read_back(
        &self,
        buf: &mut [u8],
        at: u64,
        len: u64,
        mut f: impl FnMut(&Self, &[u8], u64) -> Result<(), OocError>,
    ) -> Result<(), OocError> {
        let mut done = 0;
        while done < len {
            let n = (len - done).min(buf.len() as u64) as usize;
            self.file
                .read_exact_at(&mut buf[..n], at + done)
                .map_err(|e| OocError::io(&self.path, "cannot read back", e))?;
            f(self, &buf[..n], done)?;
            done += n as u64;
        }
        Ok(())
    }

    /// Ends the file: sections hold `counts` elements (at most the sizes
    /// given to [`SpbOut::create`]; fewer when duplicates were summed: the
    /// sections are then moved left to their final offsets), the padding
    /// is zeroed, the header and table go at offset 0. Returns the size.
    pub(super) fn finish(mut self, fields: &HeaderFields, counts: &[u64]) -> Result<u64, OocError> {
        let specs: Vec<SectionSpec> = self
            .specs
            .iter()
            .zip(counts)
            .map(|(s, &count)| SectionSpec { count, ..*s })
            .collect();
        let fin = Layout::new(&specs)?;
        let mut buf = vec![0u8; 4 << 20];
        for ((old, new), &written) in self.layout.table.iter().zip(&fin.table).zip(&self.written) {
            if new.byte_len != written {
                return Err(OocError::Internal(format!(
                    "section `{}`: {written} bytes written, {} expected",
                    new.name, new.byte_len
                )));
            }
            // Moves go left (sections only shrink), front to back: a
            // piece is read before anything is written over it.
            if new.offset != old.offset {
                self.read_back(&mut buf, old.offset, new.byte_len, |o, piece, done| {
                    o.write_at(piece, new.offset + done)
                })?;
            }
        }
        // Zero padding before each section (64-byte alignment).
        let zeros = [0u8; ALIGN];
        let mut prev_end = (HEADER_SIZE + fin.table.len() * ENTRY_SIZE) as u64;
        for s in &fin.table {
            if s.offset > prev_end {
                self.write_at(&zeros[..(s.offset - prev_end) as usize], prev_end)?;
            }
            prev_end = s.offset + s.byte_len;
        }
        self.file
            .set_len(fin.file_size)
            .map_err(|e| OocError::io(&self.path, "cannot write", e))?;
        // Sections put out of order are hashed now, read back in order
        // (they never move: only `append`ed sections shrink).
        for (s, sec) in fin.table.iter().enumerate() {
            if !self.placed[s] {
                continue;
            }
            let mut h = SectionHasher::default();
            self.read_back(&mut buf, sec.offset, sec.byte_len, |_, piece, _| {
                h.update(piece);
                Ok(())
            })?;
            self.hashers[s] = h;
        }
        let checksums: Vec<u64> = std::mem::take(&mut self.hashers)
            .into_iter()
            .map(SectionHasher::finish)
            .collect();
        self.write_at(&fin.head(fields, &checksums), 0)?;
        self.file
            .sync_all()
            .map_err(|e| OocError::io(&self.path, "cannot write", e))?;
        Ok(fin.file_size)
    }
}

/// The header fields of a matrix of types `T`, `I`.
pub(super) fn fields<T: Scalar, I: Index>(
    format: sparsetool_formats::FormatKind,
    nrows: usize,
    ncols: usize,
    nnz: u64,
    params: (u64, u64),
) -> Result<HeaderFields, OocError> {
    let bad = || OocError::Internal("unsupported value or index type".into());
    Ok(HeaderFields {
        format,
        value_dtype: DType::of_value(T::NAME).ok_or_else(bad)?,
        index_dtype: DType::of_index(I::NAME).ok_or_else(bad)?,
        nrows: nrows as u64,
        ncols: ncols as u64,
        nnz,
        param0: params.0,
        param1: params.1,
    })
}
