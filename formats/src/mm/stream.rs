//! The full reader over a stream (gzip content, stdin, a pipe): the data
//! is read in blocks of whole lines by a second thread while this one
//! parses each block with the in-memory reader's parallel chunk parser.
//! The output arrays grow with the entries actually found (fallibly), so
//! memory follows the content, not the declared size: a few blocks plus
//! the matrix.

use std::io::Read;

use rayon::prelude::*;

use super::chunk::{chunks, data_line_count, line_count, run, skip_data_lines, Plan};
use super::error::{LineError, MmErrorKind};
use super::header::{Header, MmSymmetry};
use super::parse::{array_chunk, coord_chunk, Cfg, End, Stats};
use super::scan::stream_blocks;
use super::Warning;
use crate::alloc::{try_grow, AllocError};
use crate::{Index, Scalar};

/// The data of a stream: the head read with the header (the data starts
/// at the header's `data_offset` in it), then the rest; `gz`: decompressed
/// gzip content (for messages).
pub(crate) struct Data<'r> {
    pub(crate) head: Vec<u8>,
    pub(crate) rest: Box<dyn Read + Send + 'r>,
    pub(crate) gz: bool,
}

/// Bytes per block: enough for every core to parse a few 2 MB chunks of
/// it in parallel.
pub(super) const BLOCK: usize = 16 << 20;

/// The chunk plan of one block of whole lines whose first line is number
/// `line`, holding at most `limit` entries: chunks, their first lines and
/// exact entry counts (blank and comment lines skipped); where the
/// `limit`-th entry ends when the block holds more.
fn block_plan(b: &[u8], line: u64, limit: usize) -> (Plan, End) {
    let mut ch = chunks(b);
    let per: Vec<(usize, usize)> = ch
        .par_iter()
        .map(|&(s, e)| (line_count(&b[s..e]), data_line_count(&b[s..e])))
        .collect();
    let mut line0 = Vec::with_capacity(ch.len());
    let mut counts = Vec::with_capacity(ch.len());
    let (mut l, mut before) = (line, 0usize);
    for (k, &(lines, data)) in per.iter().enumerate() {
        line0.push(l);
        if before + data >= limit {
            let (s, e) = ch[k];
            let (p, end_line) = skip_data_lines(&b[s..e], l, limit - before);
            counts.push(limit - before);
            ch.truncate(k + 1);
            ch[k].1 = s + p;
            let end = End {
                pos: s + p,
                line: end_line,
            };
            return (Plan { ch, line0, counts }, end);
        }
        counts.push(data);
        before += data;
        l += lines as u64;
    }
    (
        Plan { ch, line0, counts },
        End {
            pos: b.len(),
            line: l,
        },
    )
}

/// Reads the entries of a stream: each block is planned, then
/// `parse_block(block, plan, n)` makes room for its `n` entries and parses
/// the plan's chunks into them (in parallel, with [`run`]).
pub(super) fn read_blocks<'r>(
    data: Data<'r>,
    block: usize,
    h: &Header,
    lenient: bool,
    warnings: &mut Vec<Warning>,
    mut parse_block: impl FnMut(&[u8], u64, &Plan, usize) -> Result<Stats, LineError>,
) -> Result<Stats, LineError> {
    let parse = |b: &[u8], line, limit, _first| {
        let (plan, end) = block_plan(b, line, limit);
        let n = plan.counts.iter().sum();
        Ok((parse_block(b, line, &plan, n)?, end))
    };
    let Data { head, rest, gz } = data;
    stream_blocks(head, rest, gz, h, lenient, block, warnings, parse)
}

fn alloc_err(e: AllocError) -> LineError {
    (None, MmErrorKind::Alloc(e))
}

/// Rows, columns and values (indices as written, 1-based minus one; an
/// index 0 stored as padding) of a coordinate stream, with the stats of
/// its lines.
pub(super) type Entries<T, I> = (Stats, Vec<I>, Vec<I>, Vec<T>);

/// The entries of a coordinate file's data streamed from `rest`.
pub(super) fn coordinate<'r, T: Scalar, I: Index>(
    data: Data<'r>,
    h: &Header,
    cfg: &Cfg,
    warnings: &mut Vec<Warning>,
) -> Result<Entries<T, I>, LineError> {
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    let st = read_blocks(data, BLOCK, h, cfg.lenient, warnings, |b, _, plan, n| {
        let at = vals.len();
        try_grow(&mut rows, n, "row indices").map_err(alloc_err)?;
        try_grow(&mut cols, n, "column indices").map_err(alloc_err)?;
        try_grow(&mut vals, n, "values").map_err(alloc_err)?;
        let out = (&mut rows[at..], &mut cols[at..], &mut vals[at..]);
        Ok(run(b, plan, out, |c, l0, o| coord_chunk(c, l0, cfg, o))?.0)
    })?;
    Ok((st, rows, cols, vals))
}

/// The values of an array file's data streamed from `rest`. In a
/// hermitian file, the first diagonal value that is not real is recorded
/// with its line (`Stats::nonreal_diagonal`), as the in-memory reader
/// records it.
pub(super) fn array<'r, T: Scalar>(
    data: Data<'r>,
    h: &Header,
    cfg: &Cfg,
    warnings: &mut Vec<Warning>,
) -> Result<(Stats, Vec<T>), LineError> {
    let mut vals: Vec<T> = Vec::new();
    let herm = h.symmetry == MmSymmetry::Hermitian;
    // The next diagonal entry's position among the values, and its column:
    // column j of the stored lower triangle starts with (j, j) and holds
    // nrows - j values.
    let (mut diag, mut col) = (0usize, 0usize);
    let mut found = None;
    let st = read_blocks(data, BLOCK, h, cfg.lenient, warnings, |b, line, plan, n| {
        let at = vals.len();
        try_grow(&mut vals, n, "values").map_err(alloc_err)?;
        let mut st = run(b, plan, &mut vals[at..], |c, l0, o| {
            array_chunk(c, l0, cfg, o)
        })?
        .0;
        while herm && found.is_none() && diag < at + n && col < h.ncols.min(h.nrows) {
            let im = vals[diag].im();
            if im != 0.0 {
                let (_, l) = skip_data_lines(b, line, diag - at);
                found = Some((l, col as u64 + 1, im));
                st.nonreal_diagonal = found;
            }
            diag += h.nrows - col;
            col += 1;
        }
        Ok(st)
    })?;
    Ok((st, vals))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_stop_at_the_limit() {
        let b = b"1 1\n% c\n\n2 2\n3 3\n";
        let (p, end) = block_plan(b, 5, 2);
        assert_eq!(p.counts, [2]);
        assert_eq!((end.pos, end.line), (13, 9));
        let (p, end) = block_plan(b, 5, 10);
        assert_eq!(p.counts, [3]);
        assert_eq!((end.pos, end.line), (b.len(), 10));
    }
}
