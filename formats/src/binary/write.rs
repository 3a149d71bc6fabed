//! Writing `.spb` files: checksums first (in parallel, one pass over each
//! array), then header, table and sections in one sequential stream straight
//! from the arrays' memory — no second copy of the data is ever made.

use std::io::Write;

use crate::binary::header::{
    align_up, section_checksum, DType, Header, Section, ALIGN, CHECKSUM_BLOCK, ENTRY_SIZE,
    HEADER_SIZE,
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

/// One section of a [`Layout`]: name, element type and element count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectionSpec {
    /// Section name.
    pub name: &'static str,
    /// Element type.
    pub dtype: DType,
    /// Number of elements.
    pub count: u64,
}

/// Where every section of a `.spb` file goes, computed from the sizes of
/// its sections alone: a writer that produces the data piece by piece
/// (out of core) writes each section at its offset, hashes it with
/// [`SectionHasher`] and ends with [`Layout::head`] at offset 0.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The section table (checksums still zero).
    pub table: Vec<Section>,
    /// Total size of the file.
    pub file_size: u64,
}

fn overflow() -> SpbError {
    SpbError::new(K::Unsupported("size overflow".into()))
}

impl Layout {
    /// The layout of sections of these sizes, in this order.
    ///
    /// # Errors
    /// Sizes that overflow `u64`; a machine that is not little-endian.
    pub fn new(specs: &[SectionSpec]) -> Result<Self, SpbError> {
        if !cfg!(target_endian = "little") {
            return Err(SpbError::new(K::Unsupported(
                "writing .spb needs a little-endian machine".into(),
            )));
        }
        let table_end = (HEADER_SIZE + specs.len() * ENTRY_SIZE) as u64;
        let mut offset = align_up(table_end).ok_or_else(overflow)?;
        let mut table = Vec::with_capacity(specs.len());
        for s in specs {
            let byte_len = s
                .count
                .checked_mul(s.dtype.size() as u64)
                .ok_or_else(overflow)?;
            table.push(Section {
                name: s.name.to_string(),
                dtype: s.dtype,
                count: s.count,
                offset,
                byte_len,
                checksum: 0,
            });
            offset = offset
                .checked_add(byte_len)
                .and_then(align_up)
                .ok_or_else(overflow)?;
        }
        // The file ends right after the last section (no trailing padding).
        let file_size = table.last().map_or(table_end, |s| s.offset + s.byte_len);
        Ok(Self { table, file_size })
    }

    /// The fixed header and the section table (the first bytes of the
    /// file), with the sections' `checksums` in table order.
    #[must_use]
    pub fn head(&self, fields: &HeaderFields, checksums: &[u64]) -> Vec<u8> {
        let table: Vec<u8> = self
            .table
            .iter()
            .zip(checksums)
            .flat_map(|(s, &checksum)| {
                Section {
                    checksum,
                    ..s.clone()
                }
                .encode()
            })
            .collect();
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
            nsections: self.table.len() as u32,
            file_size: self.file_size,
            table_checksum: xxhash_rust::xxh3::xxh3_64(&table),
        };
        let mut out = header.encode().to_vec();
        out.extend_from_slice(&table);
        out
    }
}

/// The checksum of a section fed in pieces, in order (any piece sizes):
/// the same value as [`section_checksum`] of the whole.
#[derive(Clone, Default)]
pub struct SectionHasher {
    block: xxhash_rust::xxh3::Xxh3,
    in_block: usize,
    digests: Vec<u8>,
}

impl std::fmt::Debug for SectionHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SectionHasher")
            .field("blocks", &(self.digests.len() / 8))
            .field("in_block", &self.in_block)
            .finish()
    }
}

impl SectionHasher {
    /// Feeds the next bytes of the section.
    pub fn update(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let take = (CHECKSUM_BLOCK - self.in_block).min(bytes.len());
            self.block.update(&bytes[..take]);
            self.in_block += take;
            bytes = &bytes[take..];
            if self.in_block == CHECKSUM_BLOCK {
                self.end_block();
            }
        }
    }

    fn end_block(&mut self) {
        self.digests
            .extend_from_slice(&self.block.digest().to_le_bytes());
        self.block.reset();
        self.in_block = 0;
    }

    /// The checksum of everything fed.
    #[must_use]
    pub fn finish(mut self) -> u64 {
        if self.in_block > 0 {
            self.end_block();
        }
        xxhash_rust::xxh3::xxh3_64(&self.digests)
    }
}

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
    let mut specs = Vec::with_capacity(sections.len());
    for s in sections {
        if s.bytes.len() % s.dtype.size() != 0 {
            return Err(SpbError::new(K::Section(format!(
                "section `{}`: ragged byte length",
                s.name
            ))));
        }
        specs.push(SectionSpec {
            name: s.name,
            dtype: s.dtype,
            count: (s.bytes.len() / s.dtype.size()) as u64,
        });
    }
    let layout = Layout::new(&specs)?;
    let checksums: Vec<u64> = sections.iter().map(|s| section_checksum(s.bytes)).collect();
    let head = layout.head(fields, &checksums);
    w.write_all(&head)?;
    let mut pos = head.len() as u64;
    for (s, t) in sections.iter().zip(&layout.table) {
        let pad = (t.offset - pos) as usize;
        w.write_all(&ZEROS[..pad])?;
        w.write_all(s.bytes)?;
        pos = t.offset + t.byte_len;
    }
    w.flush()?;
    Ok(())
}
