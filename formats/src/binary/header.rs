//! The fixed header and the section table of a `.spb` file
//! (`docs/binary-layout.md` is the normative description).

use crate::binary::{SpbError, SpbErrorKind as K};
use crate::FormatKind;

/// File magic: `SPBMTX` followed by CR LF, so that a text-mode transfer that
/// rewrites line endings is detected at once (the trick PNG uses).
pub const MAGIC: [u8; 8] = *b"SPBMTX\r\n";
/// Major version this code writes and reads. A reader refuses other majors.
pub const VERSION_MAJOR: u16 = 1;
/// Minor version this code writes. Readers accept any minor of their major:
/// minors only add optional sections and give meaning to reserved fields.
pub const VERSION_MINOR: u16 = 0;
/// Endianness marker, stored little-endian (bytes `04 03 02 01`).
pub const ENDIAN_MARKER: u32 = 0x0102_0304;
/// Size of the fixed header in bytes.
pub const HEADER_SIZE: usize = 128;
/// Size of one section-table entry in bytes.
pub const ENTRY_SIZE: usize = 64;
/// Alignment of every section's offset.
pub const ALIGN: usize = 64;
/// The most sections a file may declare (the six formats need at most 7).
pub const MAX_SECTIONS: usize = 64;

/// Element type of a section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 64-bit float.
    F64,
    /// Complex of two 32-bit floats (real first).
    C64,
    /// Complex of two 64-bit floats (real first).
    C128,
    /// 32-bit signed integer.
    I32,
    /// 64-bit signed integer.
    I64,
}

impl DType {
    /// Code stored in the file.
    #[must_use]
    pub fn code(self) -> u8 {
        match self {
            DType::F32 => 1,
            DType::F64 => 2,
            DType::C64 => 3,
            DType::C128 => 4,
            DType::I32 => 5,
            DType::I64 => 6,
        }
    }
    /// Decodes a stored code.
    #[must_use]
    pub fn from_code(c: u8) -> Option<Self> {
        Some(match c {
            1 => DType::F32,
            2 => DType::F64,
            3 => DType::C64,
            4 => DType::C128,
            5 => DType::I32,
            6 => DType::I64,
            _ => return None,
        })
    }
    /// Bytes per element.
    #[must_use]
    pub fn size(self) -> usize {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::F64 | DType::I64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }
    /// NumPy-style name (`float32`, `int64`, ...).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
            DType::I32 => "int32",
            DType::I64 => "int64",
        }
    }
    /// The dtype of a [`crate::Scalar`] by its short name.
    #[must_use]
    pub fn of_value(name: &str) -> Option<Self> {
        Some(match name {
            "f32" => DType::F32,
            "f64" => DType::F64,
            "c64" => DType::C64,
            "c128" => DType::C128,
            _ => return None,
        })
    }
    /// The dtype of an [`crate::Index`] by its short name.
    #[must_use]
    pub fn of_index(name: &str) -> Option<Self> {
        Some(match name {
            "i32" => DType::I32,
            "i64" => DType::I64,
            _ => return None,
        })
    }
}

/// Numeric tag of a format in the header.
#[must_use]
pub fn format_code(k: FormatKind) -> u32 {
    match k {
        FormatKind::Coo => 0,
        FormatKind::Csr => 1,
        FormatKind::Ell => 2,
        FormatKind::Hyb => 3,
        FormatKind::Jds => 4,
        FormatKind::Sell => 5,
        FormatKind::Csc => 6,
    }
}

fn format_from_code(c: u32) -> Option<FormatKind> {
    FormatKind::ALL.into_iter().find(|k| format_code(*k) == c)
}

/// The decoded fixed header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Major version.
    pub major: u16,
    /// Minor version.
    pub minor: u16,
    /// Storage format.
    pub format: FormatKind,
    /// Value dtype of the `values` sections.
    pub value_dtype: DType,
    /// Index dtype of every index section.
    pub index_dtype: DType,
    /// Rows.
    pub nrows: u64,
    /// Columns.
    pub ncols: u64,
    /// Stored entries (without padding).
    pub nnz: u64,
    /// First format parameter: ELL width, HYB ELL width, SELL slice height
    /// C, JDS number of jagged diagonals; 0 for COO/CSR/CSC.
    pub param0: u64,
    /// Second format parameter: SELL sigma, HYB COO-tail entries; else 0.
    pub param1: u64,
    /// Number of sections in the table.
    pub nsections: u32,
    /// Total file size in bytes (detects truncation and appended data).
    pub file_size: u64,
    /// xxh3-64 of the section table.
    pub table_checksum: u64,
}

fn rd_u16(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn rd_u32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
pub(crate) fn rd_u64(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_le_bytes(a)
}

impl Header {
    /// The format parameters `param0`/`param1` hold, by name (what
    /// `sparsetool info` prints): ELL `ell_width`; HYB `hyb_width` and
    /// `coo_entries`; JDS `diagonals`; SELL `slice` and `sigma`; none for
    /// COO, CSR and CSC.
    #[must_use]
    pub fn params(&self) -> Vec<(&'static str, u64)> {
        let (p0, p1) = (self.param0, self.param1);
        match self.format {
            FormatKind::Ell => vec![("ell_width", p0)],
            FormatKind::Hyb => vec![("hyb_width", p0), ("coo_entries", p1)],
            FormatKind::Jds => vec![("diagonals", p0)],
            FormatKind::Sell => vec![("slice", p0), ("sigma", p1)],
            FormatKind::Coo | FormatKind::Csr | FormatKind::Csc => Vec::new(),
        }
    }

    /// Encodes the header (128 bytes, checksum included).
    #[must_use]
    pub fn encode(&self) -> [u8; HEADER_SIZE] {
        let mut b = [0u8; HEADER_SIZE];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..10].copy_from_slice(&self.major.to_le_bytes());
        b[10..12].copy_from_slice(&self.minor.to_le_bytes());
        b[12..16].copy_from_slice(&ENDIAN_MARKER.to_le_bytes());
        b[16..20].copy_from_slice(&(HEADER_SIZE as u32).to_le_bytes());
        b[20..24].copy_from_slice(&format_code(self.format).to_le_bytes());
        b[24] = self.value_dtype.code();
        b[25] = self.index_dtype.code();
        b[28..32].copy_from_slice(&self.nsections.to_le_bytes());
        b[32..40].copy_from_slice(&self.nrows.to_le_bytes());
        b[40..48].copy_from_slice(&self.ncols.to_le_bytes());
        b[48..56].copy_from_slice(&self.nnz.to_le_bytes());
        b[56..64].copy_from_slice(&self.param0.to_le_bytes());
        b[64..72].copy_from_slice(&self.param1.to_le_bytes());
        b[80..88].copy_from_slice(&(HEADER_SIZE as u64).to_le_bytes());
        b[88..96].copy_from_slice(&self.file_size.to_le_bytes());
        b[96..104].copy_from_slice(&self.table_checksum.to_le_bytes());
        let h = xxhash_rust::xxh3::xxh3_64(&b[..120]);
        b[120..128].copy_from_slice(&h.to_le_bytes());
        b
    }

    /// Decodes and checks the fixed header from the start of a file.
    ///
    /// # Errors
    /// [`SpbError`] naming the byte offset of the first bad field.
    pub fn decode(b: &[u8]) -> Result<Self, SpbError> {
        if b.len() < 8 || b[0..6] != MAGIC[0..6] {
            return Err(SpbError::at(
                0,
                K::NotSpb("not a sparsetool binary file (magic `SPBMTX` missing)".into()),
            ));
        }
        if b[6..8] != MAGIC[6..8] {
            return Err(SpbError::at(
                6,
                K::NotSpb(
                    "magic bytes 6-7 are not CR LF: the file went through a text-mode transfer"
                        .into(),
                ),
            ));
        }
        if b.len() < HEADER_SIZE {
            return Err(SpbError::at(
                b.len() as u64,
                K::Truncated(format!(
                    "truncated header: {} of {HEADER_SIZE} bytes",
                    b.len()
                )),
            ));
        }
        let stored = rd_u64(b, 120);
        if xxhash_rust::xxh3::xxh3_64(&b[..120]) != stored {
            return Err(SpbError::at(
                120,
                K::Checksum("header checksum mismatch (the header is corrupt)".into()),
            ));
        }
        let major = rd_u16(b, 8);
        let minor = rd_u16(b, 10);
        if major != VERSION_MAJOR {
            return Err(SpbError::at(
                8,
                K::Header(format!(
                    "unsupported major version {major} (this reader reads {VERSION_MAJOR}.x)"
                )),
            ));
        }
        let marker = rd_u32(b, 12);
        if marker != ENDIAN_MARKER {
            return Err(SpbError::at(
                12,
                K::Header(format!(
                    "endianness marker {marker:#010x}: only little-endian files exist"
                )),
            ));
        }
        let hs = rd_u32(b, 16) as usize;
        if hs != HEADER_SIZE {
            return Err(SpbError::at(
                16,
                K::Header(format!("header size {hs}, expected {HEADER_SIZE}")),
            ));
        }
        let fc = rd_u32(b, 20);
        let format = format_from_code(fc)
            .ok_or_else(|| SpbError::at(20, K::Header(format!("unknown format tag {fc}"))))?;
        let value_dtype = DType::from_code(b[24])
            .filter(|d| matches!(d, DType::F32 | DType::F64 | DType::C64 | DType::C128))
            .ok_or_else(|| {
                SpbError::at(24, K::Header(format!("bad value dtype code {}", b[24])))
            })?;
        let index_dtype = DType::from_code(b[25])
            .filter(|d| matches!(d, DType::I32 | DType::I64))
            .ok_or_else(|| {
                SpbError::at(25, K::Header(format!("bad index dtype code {}", b[25])))
            })?;
        let nsections = rd_u32(b, 28);
        if nsections as usize > MAX_SECTIONS {
            return Err(SpbError::at(
                28,
                K::Header(format!(
                    "{nsections} sections declared (at most {MAX_SECTIONS})"
                )),
            ));
        }
        let table_off = rd_u64(b, 80);
        if table_off != HEADER_SIZE as u64 {
            return Err(SpbError::at(
                80,
                K::Header(format!(
                    "section table at {table_off}, expected {HEADER_SIZE}"
                )),
            ));
        }
        Ok(Header {
            major,
            minor,
            format,
            value_dtype,
            index_dtype,
            nrows: rd_u64(b, 32),
            ncols: rd_u64(b, 40),
            nnz: rd_u64(b, 48),
            param0: rd_u64(b, 56),
            param1: rd_u64(b, 64),
            nsections,
            file_size: rd_u64(b, 88),
            table_checksum: rd_u64(b, 96),
        })
    }
}

/// One entry of the section table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Name (ASCII, at most 16 bytes), e.g. `row_ptr`.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Number of elements.
    pub count: u64,
    /// Byte offset from the start of the file (a multiple of 64).
    pub offset: u64,
    /// Length in bytes (`count * dtype.size()`).
    pub byte_len: u64,
    /// xxh3-64 of the section's bytes.
    pub checksum: u64,
}

impl Section {
    /// Encodes the entry (64 bytes).
    #[must_use]
    pub fn encode(&self) -> [u8; ENTRY_SIZE] {
        let mut b = [0u8; ENTRY_SIZE];
        let n = self.name.as_bytes();
        b[..n.len().min(16)].copy_from_slice(&n[..n.len().min(16)]);
        b[16] = self.dtype.code();
        b[24..32].copy_from_slice(&self.count.to_le_bytes());
        b[32..40].copy_from_slice(&self.offset.to_le_bytes());
        b[40..48].copy_from_slice(&self.byte_len.to_le_bytes());
        b[48..56].copy_from_slice(&self.checksum.to_le_bytes());
        b
    }

    /// Decodes the entry at file offset `at` (for messages).
    ///
    /// # Errors
    /// [`SpbError`] for a bad name or dtype.
    pub fn decode(b: &[u8], at: u64) -> Result<Self, SpbError> {
        let raw = &b[..16];
        let end = raw.iter().position(|&c| c == 0).unwrap_or(16);
        if end == 0
            || !raw[..end].iter().all(|c| c.is_ascii_graphic())
            || raw[end..].iter().any(|&c| c != 0)
        {
            return Err(SpbError::at(
                at,
                K::Section("section name is not NUL-padded printable ASCII".into()),
            ));
        }
        let name = String::from_utf8_lossy(&raw[..end]).into_owned();
        let dtype = DType::from_code(b[16]).ok_or_else(|| {
            SpbError::at(
                at + 16,
                K::Section(format!("section `{name}`: bad dtype code {}", b[16])),
            )
        })?;
        Ok(Section {
            name,
            dtype,
            count: rd_u64(b, 24),
            offset: rd_u64(b, 32),
            byte_len: rd_u64(b, 40),
            checksum: rd_u64(b, 48),
        })
    }
}

/// Bytes per checksum block (1 MiB).
pub const CHECKSUM_BLOCK: usize = 1 << 20;

/// The checksum of a section: xxh3-64 (seed 0) of the concatenated
/// little-endian xxh3-64 digests of its 1 MiB blocks (the last one shorter;
/// an empty section has no block). Blocks are hashed in parallel, so checking
/// a large array uses every core.
#[must_use]
pub fn section_checksum(bytes: &[u8]) -> u64 {
    use rayon::prelude::*;
    let digests: Vec<u8> = bytes
        .par_chunks(CHECKSUM_BLOCK)
        .flat_map_iter(|b| xxhash_rust::xxh3::xxh3_64(b).to_le_bytes())
        .collect();
    xxhash_rust::xxh3::xxh3_64(&digests)
}

/// Rounds `x` up to a multiple of [`ALIGN`].
#[must_use]
pub fn align_up(x: u64) -> Option<u64> {
    x.checked_add(ALIGN as u64 - 1)
        .map(|v| v / ALIGN as u64 * ALIGN as u64)
}
