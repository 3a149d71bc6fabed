//! Reading `.spb` files: memory-map, validate header, table, bounds and
//! checksums, then hand out typed slices of the mapping without copying.

use std::fs::File;
use std::path::Path;

use crate::binary::header::{
    section_checksum, DType, Header, Section, ALIGN, CHECKSUM_BLOCK, ENTRY_SIZE, HEADER_SIZE,
};
use crate::binary::{SpbError, SpbErrorKind as K};
use crate::{Index, Scalar};

/// How much to verify when opening.
#[derive(Debug, Clone, Copy)]
pub struct SpbOptions {
    /// Hash every section and compare with the table (default on). Turning
    /// it off (`--no-verify-checksums`) skips only the hashing: sizes,
    /// offsets and every structural check still run.
    pub verify_checksums: bool,
}

impl Default for SpbOptions {
    fn default() -> Self {
        Self {
            verify_checksums: true,
        }
    }
}

#[derive(Debug)]
enum Storage {
    Map(memmap2::Mmap),
    /// Heap copy, kept in `u64`s so every section is at least 8-byte aligned.
    Heap(Vec<u64>, usize),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Map(m) => m,
            Storage::Heap(v, len) => &bytemuck::cast_slice(v)[..*len],
        }
    }
}

impl crate::buffer::SharedBytes for Storage {
    fn bytes(&self) -> &[u8] {
        Storage::bytes(self)
    }
}

/// An opened, validated `.spb` file.
#[derive(Debug)]
pub struct SpbFile {
    name: String,
    /// Shared with the matrices built from it ([`crate::buffer::Buffer`]s
    /// of its sections), so the mapping lives as long as they do.
    storage: std::sync::Arc<Storage>,
    header: Header,
    sections: Vec<Section>,
    /// A CSR file whose `row_ptr` and rows were checked while hashing
    /// (see [`SpbFile::csr_structure_checked`]).
    csr_checked: bool,
}

impl SpbFile {
    /// Memory-maps and validates `path`.
    ///
    /// # Errors
    /// [`SpbError`] with the file name and the byte offset of the problem.
    pub fn open(path: &Path, opts: &SpbOptions) -> Result<Self, SpbError> {
        Self::open_named(path, &path.display().to_string(), opts)
    }

    /// Like [`SpbFile::open`], naming the file `name` in messages (e.g. a
    /// temporary copy of standard input).
    ///
    /// # Errors
    /// As [`SpbFile::open`].
    pub fn open_named(path: &Path, name: &str, opts: &SpbOptions) -> Result<Self, SpbError> {
        let name = name.to_string();
        let file = File::open(path).map_err(|e| SpbError::from(e).named(&name))?;
        // SAFETY: the mapping is read-only; we never hand out references that
        // outlive `self`, and a file truncated by another process under us is
        // outside what any mmap-based reader can defend against.
        // `populate` prefaults the whole mapping in one system call: every byte
        // is read by validation anyway, and one call beats a page fault per 4 KiB.
        let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) }
            .map_err(|e| SpbError::from(e).named(&name))?;
        Self::validate(name.clone(), Storage::Map(map), opts).map_err(|e| e.named(&name))
    }

    /// Validates an in-memory copy (e.g. read from a pipe).
    ///
    /// # Errors
    /// As [`SpbFile::open`].
    pub fn from_bytes(bytes: &[u8], name: &str, opts: &SpbOptions) -> Result<Self, SpbError> {
        let mut v = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut v)[..bytes.len()].copy_from_slice(bytes);
        Self::validate(name.to_string(), Storage::Heap(v, bytes.len()), opts)
            .map_err(|e| e.named(name))
    }

    /// Reads only the fixed header (for `info`: instant on any size).
    ///
    /// # Errors
    /// As [`Header::decode`], plus I/O errors.
    pub fn read_header(path: &Path) -> Result<Header, SpbError> {
        Self::read_header_named(path, &path.display().to_string())
    }

    /// Like [`SpbFile::read_header`], naming the file `name` in messages.
    ///
    /// # Errors
    /// As [`SpbFile::read_header`].
    pub fn read_header_named(path: &Path, name: &str) -> Result<Header, SpbError> {
        use std::io::Read;
        let name = name.to_string();
        let mut f = File::open(path).map_err(|e| SpbError::from(e).named(&name))?;
        let mut buf = Vec::with_capacity(HEADER_SIZE);
        f.by_ref()
            .take(HEADER_SIZE as u64)
            .read_to_end(&mut buf)
            .map_err(|e| SpbError::from(e).named(&name))?;
        Header::decode(&buf).map_err(|e| e.named(&name))
    }

    fn validate(name: String, storage: Storage, opts: &SpbOptions) -> Result<Self, SpbError> {
        let b = storage.bytes();
        let header = Header::decode(b)?;
        let len = b.len() as u64;
        if header.file_size != len {
            return Err(SpbError::at(
                88.min(len),
                K::Truncated(format!(
                    "file is {len} bytes but its header says {} ({})",
                    header.file_size,
                    if len < header.file_size {
                        "truncated"
                    } else {
                        "data appended"
                    }
                )),
            ));
        }
        let n = header.nsections as usize;
        let table_end = HEADER_SIZE + n * ENTRY_SIZE;
        if b.len() < table_end {
            return Err(SpbError::at(
                len,
                K::Truncated("truncated section table".into()),
            ));
        }
        let table = &b[HEADER_SIZE..table_end];
        if xxhash_rust::xxh3::xxh3_64(table) != header.table_checksum {
            return Err(SpbError::at(
                HEADER_SIZE as u64,
                K::Checksum("section table checksum mismatch".into()),
            ));
        }
        let mut sections = Vec::with_capacity(n);
        for i in 0..n {
            let at = (HEADER_SIZE + i * ENTRY_SIZE) as u64;
            let s = Section::decode(&table[i * ENTRY_SIZE..(i + 1) * ENTRY_SIZE], at)?;
            let expect = s.count.checked_mul(s.dtype.size() as u64);
            if expect != Some(s.byte_len) {
                return Err(SpbError::at(
                    at + 40,
                    K::Section(format!(
                        "section `{}`: {} bytes for {} {} elements",
                        s.name,
                        s.byte_len,
                        s.count,
                        s.dtype.name()
                    )),
                ));
            }
            if s.offset % ALIGN as u64 != 0 || s.offset < table_end as u64 {
                return Err(SpbError::at(
                    at + 32,
                    K::Section(format!(
                        "section `{}`: offset {} is not a 64-byte aligned offset after the table",
                        s.name, s.offset
                    )),
                ));
            }
            match s.offset.checked_add(s.byte_len) {
                Some(end) if end <= len => {}
                _ => {
                    return Err(SpbError::at(
                        at + 32,
                        K::Truncated(format!(
                            "section `{}` ({} bytes at offset {}) runs past the end of the file ({len} bytes)",
                            s.name, s.byte_len, s.offset
                        )),
                    ))
                }
            }
            if sections.iter().any(|p: &Section| p.name == s.name) {
                return Err(SpbError::at(
                    at,
                    K::Section(format!("section `{}` appears twice", s.name)),
                ));
            }
            sections.push(s);
        }
        // Sections must not overlap.
        let mut spans: Vec<(u64, u64, &str)> = sections
            .iter()
            .map(|s| (s.offset, s.offset + s.byte_len, s.name.as_str()))
            .collect();
        spans.sort_unstable();
        for w in spans.windows(2) {
            if w[0].1 > w[1].0 {
                return Err(SpbError::at(
                    w[1].0,
                    K::Section(format!("sections `{}` and `{}` overlap", w[0].2, w[1].2)),
                ));
            }
        }
        let mut csr_checked = false;
        if opts.verify_checksums {
            // A CSR file's rows are checked block by block while each block
            // of `col_idx` is hashed and still in cache, so the largest
            // index array is read once for both (see `hash_csr_rows`).
            let rows_ok = match csr_sections(&header, &sections) {
                Some((rp, ci)) => {
                    let rp_bytes = &b[rp.offset as usize..(rp.offset + rp.byte_len) as usize];
                    let ci_bytes = &b[ci.offset as usize..(ci.offset + ci.byte_len) as usize];
                    let ncols = usize::try_from(header.ncols).unwrap_or(usize::MAX);
                    let fused = match header.index_dtype {
                        DType::I32 => hash_csr_rows::<i32>(rp_bytes, ci_bytes, ncols),
                        _ => hash_csr_rows::<i64>(rp_bytes, ci_bytes, ncols),
                    };
                    fused.map(|(hash, ok)| (ci.name.clone(), hash, ok))
                }
                None => None,
            };
            let bad = sections.iter().find(|s| match &rows_ok {
                Some((name, hash, _)) if *name == s.name => *hash != s.checksum,
                _ => {
                    let data = &b[s.offset as usize..(s.offset + s.byte_len) as usize];
                    section_checksum(data) != s.checksum
                }
            });
            if let Some(s) = bad {
                return Err(SpbError::at(
                    s.offset,
                    K::Checksum(format!(
                        "section `{}`: checksum mismatch (the data is corrupt)",
                        s.name
                    )),
                ));
            }
            csr_checked = rows_ok.is_some_and(|r| r.2);
        }
        Ok(SpbFile {
            name,
            storage: std::sync::Arc::new(storage),
            header,
            sections,
            csr_checked,
        })
    }

    /// Whether this is a CSR file whose `row_ptr` (start, monotone, end,
    /// length) and rows (strictly ascending columns below `ncols`) were
    /// already found valid while its checksums were verified, so that
    /// [`SpbFile::csr_view`] need not read them again. False without
    /// checksum verification or when a check failed (the view then
    /// repeats the check and reports the precise error).
    #[must_use]
    pub fn csr_structure_checked(&self) -> bool {
        self.csr_checked
    }

    /// The file name used in messages.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The decoded header.
    #[must_use]
    pub fn header(&self) -> &Header {
        &self.header
    }
    /// The section table.
    #[must_use]
    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    fn raw(&self, name: &str, dtype: DType) -> Result<&[u8], SpbError> {
        let s = self
            .sections
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| {
                SpbError::new(K::Section(format!(
                    "{} file has no `{name}` section",
                    self.header.format
                )))
                .named(&self.name)
            })?;
        if s.dtype != dtype {
            return Err(SpbError::at(
                s.offset,
                K::Section(format!(
                    "section `{name}` holds {}, expected {}",
                    s.dtype.name(),
                    dtype.name()
                )),
            )
            .named(&self.name));
        }
        Ok(&self.storage.bytes()[s.offset as usize..(s.offset + s.byte_len) as usize])
    }

    /// A section as a [`crate::buffer::Buffer`] over the mapping (no copy;
    /// the buffer keeps the mapping alive).
    pub(crate) fn shared<P: bytemuck::Pod>(
        &self,
        name: &str,
        dtype: DType,
    ) -> Result<crate::buffer::Buffer<P>, SpbError> {
        let raw = self.raw(name, dtype)?;
        let offset = raw.as_ptr() as usize - self.storage.bytes().as_ptr() as usize;
        let len = raw.len() / std::mem::size_of::<P>().max(1);
        let bytes: std::sync::Arc<dyn crate::buffer::SharedBytes> = self.storage.clone();
        crate::buffer::Buffer::shared(bytes, offset, len).map_err(|e| {
            SpbError::new(K::Section(format!("section `{name}`: {e}"))).named(&self.name)
        })
    }

    /// A value section as a typed slice of the mapping (no copy).
    ///
    /// # Errors
    /// Missing section, or a dtype other than `T`'s.
    pub fn values<T: Scalar>(&self, name: &str) -> Result<&[T], SpbError> {
        let dt = DType::of_value(T::NAME)
            .ok_or_else(|| SpbError::new(K::Types("unsupported value type".into())))?;
        cast(self.raw(name, dt)?, &self.name)
    }

    /// An index section as a typed slice of the mapping (no copy).
    ///
    /// # Errors
    /// Missing section, or a dtype other than `I`'s.
    pub fn indices<I: Index>(&self, name: &str) -> Result<&[I], SpbError> {
        let dt = DType::of_index(I::NAME)
            .ok_or_else(|| SpbError::new(K::Types("unsupported index type".into())))?;
        cast(self.raw(name, dt)?, &self.name)
    }
}

fn cast<'a, T: bytemuck::Pod>(b: &'a [u8], name: &str) -> Result<&'a [T], SpbError> {
    bytemuck::try_cast_slice(b).map_err(|e| {
        SpbError::new(K::Section(format!(
            "section is not aligned for its type: {e}"
        )))
        .named(name)
    })
}

/// The `row_ptr` and `col_idx` sections of a CSR file, when the header and
/// the table agree on their dtypes and lengths (otherwise the typed view
/// reports the problem later).
fn csr_sections<'a>(h: &Header, sections: &'a [Section]) -> Option<(&'a Section, &'a Section)> {
    if h.format != crate::FormatKind::Csr || !matches!(h.index_dtype, DType::I32 | DType::I64) {
        return None;
    }
    let find = |n: &str| sections.iter().find(|s| s.name == n);
    let (rp, ci) = (find("row_ptr")?, find("col_idx")?);
    let fits = |v: u64| usize::try_from(v).is_ok_and(|v| v < usize::MAX / 2);
    let consistent = rp.dtype == h.index_dtype
        && ci.dtype == h.index_dtype
        && fits(h.nrows)
        && fits(h.ncols)
        && h.nrows.checked_add(1) == Some(rp.count)
        && ci.count == h.nnz;
    consistent.then_some((rp, ci))
}

/// The checksum of the `col_idx` bytes (exactly [`section_checksum`]'s:
/// xxh3 of each [`CHECKSUM_BLOCK`], then of the digests) and whether every
/// row is valid, in one parallel pass: the task that hashes a block also
/// checks its entries (bounds, and ascending inside rows: see
/// `pattern::entries_valid`) right after hashing, while the block is in
/// cache. `row_ptr` is checked first (a small array).
/// `None` if `row_ptr` itself is invalid or the bytes are not aligned.
fn hash_csr_rows<I: Index + bytemuck::Pod>(
    row_ptr: &[u8],
    col_idx: &[u8],
    ncols: usize,
) -> Option<(u64, bool)> {
    use rayon::prelude::*;
    let ptr: &[I] = bytemuck::try_cast_slice(row_ptr).ok()?;
    let col: &[I] = bytemuck::try_cast_slice(col_idx).ok()?;
    let nnz = col.len();
    crate::pattern::check_offsets("row_ptr", ptr, ptr.len(), nnz).ok()?;
    let per_block = CHECKSUM_BLOCK / std::mem::size_of::<I>();
    let (digests, ok): (Vec<[u8; 8]>, Vec<bool>) = col_idx
        .par_chunks(CHECKSUM_BLOCK)
        .enumerate()
        .map(|(b, bytes)| {
            let digest = xxhash_rust::xxh3::xxh3_64(bytes).to_le_bytes();
            let (e0, e1) = (
                b * per_block,
                b * per_block + bytes.len() / std::mem::size_of::<I>(),
            );
            (
                digest,
                crate::pattern::entries_valid(ptr, col, ncols, e0, e1),
            )
        })
        .unzip();
    let flat: Vec<u8> = digests.concat();
    Some((xxhash_rust::xxh3::xxh3_64(&flat), ok.iter().all(|&o| o)))
}
