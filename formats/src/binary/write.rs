//! Writing `.spb` files: checksums first (in parallel, one pass over each
//! array), then header, table and sections in one sequential stream straight
//! from the arrays' memory — no second copy of the data is ever made.

use std::io::Write;

use crate::binary::header::{
    align_up, section_checksum, DType, Header, Section, ALIGN, ENTRY_SIZE, HEADER_SIZE,
};
use crate::binary::{SpbError, SpbErrorKind as K};
use crate::FormatKind;

/// One array to store: name, element type and its bytes.
#[derive(Debug, Clone, Copy)]
pub struct SectionData<'a> {
    /// Section name.
    pub name: &'static str,
    /// Element type.
    pub dtype: DType,
    /// The array's bytes (little-endian machine order).
    pub bytes: &'a [u8],
}

/// What goes into the fixed header besides the section table.
#[derive(Debug, Clone, Copy)]
pub struct HeaderFields {
    /// Storage format.
    pub format: FormatKind,
    /// Value dtype.
    pub value_dtype: DType,
    /// Index dtype.
    pub index_dtype: DType,
    /// Rows.
    pub nrows: u64,
    /// Columns.
    pub ncols: u64,
    /// Stored entries.
    pub nnz: u64,
    /// Format parameter 0 (see [`Header::param0`]).
    pub param0: u64,
    /// Format parameter 1 (see [`Header::param1`]).
    pub param1: u64,
}

const ZEROS: [u8; ALIGN] = [0; ALIGN];

/// Writes a complete `.spb` stream.
///
/// # Errors
/// I/O errors, or a section whose byte length is not a multiple of its
/// element size.
pub fn write_sections<W: Write>(
    mut w: W,
    fields: &HeaderFields,
    sections: &[SectionData<'_>],
) -> Result<(), SpbError> {
    if !cfg!(target_endian = "little") {
        return Err(SpbError::new(K::Unsupported(
            "writing .spb needs a little-endian machine".into(),
        )));
    }
    let table_end = (HEADER_SIZE + sections.len() * ENTRY_SIZE) as u64;
    let mut offset =
        align_up(table_end).ok_or_else(|| SpbError::new(K::Unsupported("size overflow".into())))?;
    let checksums: Vec<u64> = sections.iter().map(|s| section_checksum(s.bytes)).collect();
    let mut table = Vec::with_capacity(sections.len());
    for (s, &checksum) in sections.iter().zip(&checksums) {
        if s.bytes.len() % s.dtype.size() != 0 {
            return Err(SpbError::new(K::Section(format!(
                "section `{}`: ragged byte length",
                s.name
            ))));
        }
        let byte_len = s.bytes.len() as u64;
        table.push(Section {
            name: s.name.to_string(),
            dtype: s.dtype,
            count: byte_len / s.dtype.size() as u64,
            offset,
            byte_len,
            checksum,
        });
        offset = offset
            .checked_add(byte_len)
            .and_then(align_up)
            .ok_or_else(|| SpbError::new(K::Unsupported("size overflow".into())))?;
    }
    // The file ends right after the last section (no trailing padding).
    let file_size = table.last().map_or(table_end, |s| s.offset + s.byte_len);
    let table_bytes: Vec<u8> = table.iter().flat_map(|s| s.encode()).collect();
    let header = Header {
        major: crate::binary::header::VERSION_MAJOR,
        minor: crate::binary::header::VERSION_MINOR,
        format: fields.format,
        value_dtype: fields.value_dtype,
        index_dtype: fields.index_dtype,
        nrows: fields.nrows,
        ncols: fields.ncols,
        nnz: fields.nnz,
        param0: fields.param0,
        param1: fields.param1,
        nsections: sections.len() as u32,
        file_size,
        table_checksum: xxhash_rust::xxh3::xxh3_64(&table_bytes),
    };
    w.write_all(&header.encode())?;
    w.write_all(&table_bytes)?;
    let mut pos = table_end;
    for (s, t) in sections.iter().zip(&table) {
        let pad = (t.offset - pos) as usize;
        w.write_all(&ZEROS[..pad])?;
        w.write_all(s.bytes)?;
        pos = t.offset + t.byte_len;
    }
    w.flush()?;
    Ok(())
}
