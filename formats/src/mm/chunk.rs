//! Parallel driver of the data section: chunks, line counts, output
//! offsets, and the fallback to exact counts.
//!
//! How (one pass over the bytes in the common case):
//! 1. the data region is split into newline-aligned chunks of a few MB;
//! 2. newlines are counted per chunk in parallel (`bytecount`) and
//!    prefix-summed: that gives every chunk its first line number and, when
//!    the file has exactly one line per declared entry (no blank or comment
//!    lines in the data), its offset in the output;
//! 3. the output arrays are allocated once, split into disjoint slices, and
//!    each chunk is parsed by one rayon task directly into its slice
//!    (hand-written integer parsing, `fast-float2` for values, no per-line
//!    allocation);
//! 4. if a chunk met a blank or comment line (so the line count overstated
//!    its entries) or the line total differs from the declared count, a
//!    counting pass finds the exact entries per chunk and the parse reruns
//!    with exact offsets. The same pass finds data beyond the declared
//!    entries (an error, or the cut-off point in lenient mode).

use rayon::prelude::*;

use super::error::{snippet, LineError, MmErrorKind};
use super::header::{Header, MmFormat};
use super::parse::{data_start, next_line, Stats};
use super::Warning;

/// Target chunk size in bytes.
const CHUNK: usize = 2 << 20;

/// Newline-aligned chunk boundaries of `b`.
pub(super) fn chunks(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(b.len() / CHUNK + 1);
    let mut s = 0;
    while s < b.len() {
        let t = s + CHUNK;
        let e = if t >= b.len() {
            b.len()
        } else {
            next_line(b, t)
        };
        out.push((s, e));
        s = e;
    }
    out
}

/// Lines in a chunk (a last line without newline counts).
pub(super) fn line_count(c: &[u8]) -> usize {
    let n = bytecount::count(c, b'\n');
    n + usize::from(c.last().is_some_and(|&x| x != b'\n'))
}

/// Skips `n` data lines of `c` (whose first line is number `line`) and
/// the blank and comment lines after them: the position and number of the
/// next data line (or of the end).
pub(super) fn skip_data_lines(c: &[u8], mut line: u64, n: usize) -> (usize, u64) {
    let mut p = 0;
    let mut seen = 0;
    while p < c.len() {
        if data_start(c, p).is_some() {
            if seen == n {
                break;
            }
            seen += 1;
        }
        p = next_line(c, p);
        line += 1;
    }
    (p, line)
}

/// Data lines in a chunk.
pub(super) fn data_line_count(c: &[u8]) -> usize {
    let mut p = 0;
    let mut n = 0;
    while p < c.len() {
        n += usize::from(data_start(c, p).is_some());
        p = next_line(c, p);
    }
    n
}

/// Outputs that can be split into disjoint parts for the chunks.
pub(super) trait SplitOut: Sized + Send {
    fn split(self, at: usize) -> (Self, Self);
}

impl<T: Send> SplitOut for &mut [T] {
    fn split(self, at: usize) -> (Self, Self) {
        self.split_at_mut(at)
    }
}

impl<A: Send, B: Send, C: Send> SplitOut for (&mut [A], &mut [B], &mut [C]) {
    fn split(self, at: usize) -> (Self, Self) {
        let (a0, a1) = self.0.split_at_mut(at);
        let (b0, b1) = self.1.split_at_mut(at);
        let (c0, c1) = self.2.split_at_mut(at);
        ((a0, b0, c0), (a1, b1, c1))
    }
}

/// Runs `f` on every chunk with its slice of the output (sizes `counts`).
/// Returns the merged stats and whether every chunk filled its slice; the
/// first error in file order wins.
pub(super) fn run<O, F>(b: &[u8], plan: &Plan, out: O, f: F) -> Result<(Stats, bool), LineError>
where
    O: SplitOut,
    F: Fn(&[u8], u64, O) -> Result<Stats, LineError> + Sync,
{
    let tasks = plan.ch.len();
    let (st, full, _) = run_tasks(b, plan, out, tasks, || (), |c, l, o, _| f(c, l, o))?;
    Ok((st, full))
}

/// Like [`run`], in at most `tasks` parallel tasks, each running a stretch
/// of consecutive chunks in order with its own state from `init`. Returns
/// the states too, in file order.
pub(super) fn run_tasks<O, S, F>(
    b: &[u8],
    plan: &Plan,
    out: O,
    tasks: usize,
    init: impl Fn() -> S + Sync,
    f: F,
) -> Result<(Stats, bool, Vec<S>), LineError>
where
    O: SplitOut,
    S: Send,
    F: Fn(&[u8], u64, O, &mut S) -> Result<Stats, LineError> + Sync,
{
    let Plan { ch, line0, counts } = plan;
    let mut parts = Vec::with_capacity(ch.len());
    let mut rest = out;
    for (k, &n) in counts.iter().enumerate() {
        let (a, r) = rest.split(n);
        parts.push((k, a));
        rest = r;
    }
    let per_task = ch.len().div_ceil(tasks.max(1)).max(1);
    let mut groups = Vec::with_capacity(tasks);
    let mut parts = parts.into_iter();
    loop {
        let g: Vec<(usize, O)> = parts.by_ref().take(per_task).collect();
        if g.is_empty() {
            break;
        }
        groups.push(g);
    }
    let results: Vec<(Vec<Result<Stats, LineError>>, S)> = groups
        .into_par_iter()
        .map(|g| {
            let mut state = init();
            let mut rs = Vec::with_capacity(g.len());
            for (k, o) in g {
                let (s, e) = ch[k];
                let r = f(&b[s..e], line0[k], o, &mut state);
                crate::progress::READ.add((e - s) as u64);
                let stop = r.is_err();
                rs.push(r);
                if stop {
                    // The later chunks of this stretch do not matter.
                    break;
                }
            }
            (rs, state)
        })
        .collect();
    let mut total = Stats::default();
    let mut full = true;
    let mut states = Vec::with_capacity(results.len());
    let mut k = 0;
    for (rs, state) in results {
        for r in rs {
            let s = r?;
            full &= s.written == counts[k];
            total.merge(s);
            k += 1;
        }
        states.push(state);
    }
    Ok((total, full, states))
}

/// The most chunks a data region of `len` bytes is cut into.
pub(super) fn max_chunks(len: usize) -> usize {
    len / CHUNK + 1
}

/// Minimum bytes per entry line (without the last newline).
fn min_line_bytes(h: &Header) -> usize {
    let idx = if h.format == MmFormat::Coordinate {
        4
    } else {
        0
    };
    idx + 2 * h.values_per_line()
}

/// Refuses a declared entry count that `len` bytes of data cannot hold
/// (each entry needs a few bytes), before allocating or counting further.
pub(super) fn declared_fits(h: &Header, len: usize) -> Result<(), LineError> {
    let min = min_line_bytes(h).max(1);
    let max = (len + 1) / min;
    if h.entries > max {
        return Err((
            Some(h.data_line.saturating_sub(1)),
            MmErrorKind::DeclaredTooLarge {
                what: "entries",
                declared: h.entries as u128,
                available: len,
                max,
            },
        ));
    }
    Ok(())
}

/// The data ends (before line `line`) after `found` of the declared
/// entries.
pub(super) fn too_few(h: &Header, line: u64, found: usize) -> LineError {
    (
        Some(line),
        MmErrorKind::TooFewEntries {
            declared: h.entries,
            found,
        },
    )
}

/// A data line (`text`, line `line`) after the declared entries: an error,
/// or in lenient mode a warning (reading stops before it).
pub(super) fn beyond_declared(
    h: &Header,
    lenient: bool,
    line: u64,
    text: &[u8],
    warnings: &mut Vec<Warning>,
) -> Result<(), LineError> {
    let found = snippet(text);
    if !lenient {
        return Err((
            Some(line),
            MmErrorKind::TooManyEntries {
                declared: h.entries,
                found,
            },
        ));
    }
    warnings.push(Warning {
        line: Some(line),
        message: format!(
            "ignored everything from this line on (`{found}`): the {} declared entries end before it",
            h.entries
        ),
    });
    Ok(())
}

/// Where the data of a file is and how it is laid out in chunks.
pub(super) struct Plan {
    pub(super) ch: Vec<(usize, usize)>,
    pub(super) line0: Vec<u64>,
    pub(super) counts: Vec<usize>,
}

/// Exact plan: counts data lines, handles data beyond the declared entries
/// (error, or cut in lenient mode) and too few entries.
fn exact_plan(
    b: &[u8],
    h: &Header,
    lenient: bool,
    ch: Vec<(usize, usize)>,
    lines: &[usize],
    warnings: &mut Vec<Warning>,
) -> Result<Plan, LineError> {
    let data: Vec<usize> = ch
        .par_iter()
        .map(|&(s, e)| data_line_count(&b[s..e]))
        .collect();
    let total: usize = data.iter().sum();
    let mut line0 = Vec::with_capacity(ch.len());
    let mut l = h.data_line;
    for &n in lines {
        line0.push(l);
        l += n as u64;
    }
    if total < h.entries {
        return Err(too_few(h, l, total));
    }
    let mut ch = ch;
    let mut counts = data;
    if total > h.entries {
        // Find the first data line beyond the declared entries.
        let mut before = 0;
        let mut k = 0;
        while before + counts[k] <= h.entries {
            before += counts[k];
            k += 1;
        }
        let (s, e) = ch[k];
        let c = &b[s..e];
        let (p, line) = skip_data_lines(c, line0[k], h.entries - before);
        beyond_declared(h, lenient, line, &c[p..next_line(c, p)], warnings)?;
        ch.truncate(k + 1);
        ch[k].1 = s + p;
        counts.truncate(k + 1);
        counts[k] = h.entries - before;
        line0.truncate(k + 1);
    }
    Ok(Plan { ch, line0, counts })
}

/// Counts lines per chunk and decides the layout. Returns the plan and
/// whether it is exact (counted data lines) or optimistic (one entry per
/// line, to be verified).
fn plan(
    b: &[u8],
    h: &Header,
    lenient: bool,
    warnings: &mut Vec<Warning>,
) -> Result<(Plan, bool), LineError> {
    let ch = chunks(b);
    let lines: Vec<usize> = ch.par_iter().map(|&(s, e)| line_count(&b[s..e])).collect();
    let total: usize = lines.iter().sum();
    if total < h.entries {
        declared_fits(h, b.len())?;
    }
    if total == h.entries {
        let mut line0 = Vec::with_capacity(ch.len());
        let mut l = h.data_line;
        for &n in &lines {
            line0.push(l);
            l += n as u64;
        }
        return Ok((
            Plan {
                ch,
                line0,
                counts: lines,
            },
            false,
        ));
    }
    Ok((exact_plan(b, h, lenient, ch, &lines, warnings)?, true))
}

/// Runs `attempt` over the plan, falling back to an exact plan if the
/// optimistic one met blank or comment lines.
pub(super) fn parse_with<R>(
    b: &[u8],
    h: &Header,
    lenient: bool,
    warnings: &mut Vec<Warning>,
    mut attempt: impl FnMut(&Plan) -> Result<(Stats, bool, R), LineError>,
) -> Result<(Stats, R), LineError> {
    let (p, exact) = plan(b, h, lenient, warnings)?;
    let (st, full, r) = attempt(&p)?;
    if full || exact {
        return Ok((st, r));
    }
    // The optimistic plan had one entry per line and a chunk met a blank
    // or comment line: the file holds fewer data lines than declared
    // entries, so the exact plan below fails (`TooFewEntries`) and
    // `attempt` never runs twice on a file that reads (the structure scan
    // relies on this: its visits are not undone).
    drop(r);
    let lines: Vec<usize> =
        p.ch.par_iter()
            .map(|&(s, e)| line_count(&b[s..e]))
            .collect();
    let p = exact_plan(b, h, lenient, p.ch, &lines, warnings)?;
    let (st, _, r) = attempt(&p)?;
    Ok((st, r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunking_and_counts() {
        assert_eq!(line_count(b"a\nb\nc"), 3);
        assert_eq!(line_count(b"a\nb\n"), 2);
        assert_eq!(data_line_count(b"1 1\n% c\n\n  \r\n2 2"), 2);
        let big: Vec<u8> = b"12345 67890 1.25\n".repeat(300_000);
        let ch = chunks(&big);
        assert!(ch.len() > 1);
        assert_eq!(ch[0].0, 0);
        assert_eq!(ch.last().map(|c| c.1), Some(big.len()));
        for w in ch.windows(2) {
            assert_eq!(w[0].1, w[1].0);
            assert_eq!(big[w[0].1 - 1], b'\n');
        }
    }
}
