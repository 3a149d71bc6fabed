//! The entries of a coordinate file streamed block by block, values
//! included, for a caller that cannot hold the matrix (out-of-core
//! conversion): the reader of [`super::read_reader`] (blocks of whole
//! lines read by a second thread, each parsed by the parallel chunk
//! parser), handing each block's entries to the caller instead of
//! growing arrays.

use std::io::Read;

use super::assemble::{coordinate_checks, mirror};
use super::error::{LineError, MmErrorKind};
use super::header::{Header, MmFormat, MmSymmetry};
use super::parse::{coord_chunk, is_f32, Cfg};
use super::stream::{read_blocks, Data};
use super::{read_header_from, stream_input, MmError, ReadOptions, Warning};
use crate::alloc::try_grow;
use crate::{Index, Scalar};

/// The entries of one block, 0-based, in file order: `stored` are the
/// lines of the block; `mirrored` (symmetric, skew-symmetric and
/// hermitian files with [`ReadOptions::expand_symmetry`]) the mirrors
/// `(j, i)` of its off-diagonal entries, in the same order. The full
/// reader appends all mirrors after all stored entries, so a caller that
/// needs the reader's order keeps the two apart.
#[derive(Debug)]
pub struct EntryBlock<'a, T, I> {
    /// Rows, columns and values of the stored entries.
    pub stored: (&'a [I], &'a [I], &'a [T]),
    /// Rows, columns and values of their mirrors (empty for general files).
    pub mirrored: (&'a [I], &'a [I], &'a [T]),
}

/// A coordinate Matrix Market file opened for [`EntryStream::for_each_block`]:
/// its header is read; its data is read once, in blocks.
pub struct EntryStream<'r> {
    name: String,
    opts: ReadOptions,
    /// The header, and the warnings of reading it.
    head: (Header, Vec<Warning>),
    /// The comment lines of the header ([`super::MmMatrix::comments`]).
    comments: Vec<String>,
    data: Data<'r>,
}

impl std::fmt::Debug for EntryStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EntryStream({}, {:?})", self.name, self.head.0)
    }
}

impl<'r> EntryStream<'r> {
    /// Reads the header from `reader` (gzip content is detected by its
    /// magic bytes and decompressed); `name` is used in messages.
    ///
    /// # Errors
    /// I/O, gzip and header errors, as [`super::read_reader`] reports them.
    pub fn open(
        reader: impl Read + Send + 'r,
        name: &str,
        opts: &ReadOptions,
    ) -> Result<Self, MmError> {
        let (mut reader, gz) = stream_input(reader, name)?;
        let (header, warnings, head) = read_header_from(&mut reader, gz, name, opts)?;
        let comments = super::header::comment_lines(&head[..header.data_offset.min(head.len())]);
        Ok(Self {
            name: name.to_string(),
            opts: opts.clone(),
            head: (header, warnings),
            comments,
            data: Data {
                head,
                rest: reader,
                gz,
            },
        })
    }

    /// The header (for lenient reads, as recovered).
    #[must_use]
    pub fn header(&self) -> &Header {
        &self.head.0
    }

    /// The comment lines between the banner and the size line, as
    /// [`super::MmMatrix::comments`] keeps them.
    #[must_use]
    pub fn comments(&self) -> &[String] {
        &self.comments
    }

    /// Reads the data in blocks of whole lines of about `block` bytes and
    /// hands each block's entries to `sink`, in file order; a `false` from
    /// `sink` stops the read (the caller keeps its own error). Memory: a
    /// few blocks and their entries. Returns the warnings of lenient
    /// recoveries (header ones included).
    ///
    /// # Errors
    /// What [`super::read_reader`] reports for the same file; index sizes
    /// that do not fit `I`; [`MmErrorKind::ScanUnsupported`] for array
    /// files and for the lenient recoveries that need every entry at once
    /// (0-based indices, symmetric files storing both triangles). An
    /// error may come after some blocks were handed over.
    pub fn for_each_block<T: Scalar, I: Index>(
        self,
        block: usize,
        mut sink: impl FnMut(EntryBlock<'_, T, I>) -> bool,
    ) -> Result<Vec<Warning>, MmError> {
        let Self {
            name,
            opts,
            head: (h, mut warnings),
            data,
            ..
        } = self;
        let at = |(line, kind): LineError| MmError::new(&name, line, kind);
        super::value_type_fits::<T>(&h, &name)?;
        if h.format == MmFormat::Array {
            return Err(at((
                None,
                MmErrorKind::ScanUnsupported {
                    reason: "an array (dense) file",
                },
            )));
        }
        for (what, v) in [("nrows", h.nrows), ("ncols", h.ncols)] {
            if v > I::MAX_USIZE {
                let kind = MmErrorKind::IndexOverflow {
                    what,
                    value: v as u128,
                    index: I::NAME,
                };
                return Err(at((Some(h.data_line.saturating_sub(1)), kind)));
            }
        }
        let cfg = Cfg::new(&h, opts.lenient, is_f32::<T>());
        let expand = opts.expand_symmetry && h.symmetry != MmSymmetry::General;
        let (mut rows, mut cols, mut vals) = (Vec::<I>::new(), Vec::<I>::new(), Vec::<T>::new());
        let (mut mr, mut mc, mut mv) = (Vec::<I>::new(), Vec::<I>::new(), Vec::<T>::new());
        let stopped = || {
            (
                None,
                MmErrorKind::Io(std::io::Error::other("stopped by the caller")),
            )
        };
        let st = read_blocks(
            data,
            block,
            &h,
            cfg.lenient,
            &mut warnings,
            |b, _, plan, n| {
                let alloc = |e| (None, MmErrorKind::Alloc(e));
                for v in [&mut rows, &mut cols] {
                    v.clear();
                    try_grow(v, n, "row and column indices").map_err(alloc)?;
                }
                vals.clear();
                try_grow(&mut vals, n, "values").map_err(alloc)?;
                let out = (&mut rows[..], &mut cols[..], &mut vals[..]);
                let st = super::chunk::run(b, plan, out, |c, l0, o| coord_chunk(c, l0, &cfg, o))?.0;
                mr.clear();
                mc.clear();
                mv.clear();
                if expand {
                    for ((&i, &j), &v) in rows.iter().zip(&cols).zip(&vals) {
                        if i != j {
                            mr.push(j);
                            mc.push(i);
                            mv.push(mirror(v, h.symmetry));
                        }
                    }
                }
                // An index 0 (stored as -1) is judged after the read (the
                // 0-based rule); such entries are not handed over.
                let valid = st.zero.is_none();
                let block = EntryBlock {
                    stored: (&rows[..], &cols[..], &vals[..]),
                    mirrored: (&mr[..], &mc[..], &mv[..]),
                };
                if valid && !sink(block) {
                    return Err(stopped());
                }
                Ok(st)
            },
        )
        .map_err(at)?;
        let fix = coordinate_checks(&st, &h, opts.lenient, &mut warnings).map_err(at)?;
        let unsupported = |reason| at((None, MmErrorKind::ScanUnsupported { reason }));
        if fix.shift {
            return Err(unsupported("0-based indices (--lenient shifts them)"));
        }
        if fix.dedup_from.is_some() {
            return Err(unsupported(
                "a symmetric file storing both triangles (--lenient drops duplicate mirrors)",
            ));
        }
        Ok(warnings)
    }
}
