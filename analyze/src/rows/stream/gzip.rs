//! The gzip route of the streaming pass: one thread decompresses blocks
//! while the caller's thread scans the lines of the previous one.

use std::io::Read;

use sparsetool_formats::mm::{Header, MmError, MmErrorKind};

use super::{ctx_of, hits_max, parse_line, snippet, zero_error, Counters, Ctx, Line, Local};
use crate::rows::RowLengths;
use crate::AnalyzeError;

/// Decompressed bytes handed from the decoder thread to the scanner.
const GZ_BLOCK: usize = 1 << 20;

/// Line-by-line state of the serial (gzip) scan.
struct GzScan<'a> {
    ctx: Ctx,
    name: &'a str,
    declared: usize,
    seen: usize,
    line_no: u64,
    first_zero: Option<(u64, &'static str)>,
    saw_max: bool,
    local: Local,
}

impl GzScan<'_> {
    fn err(&self, kind: MmErrorKind) -> AnalyzeError {
        AnalyzeError::Mm(MmError::new(self.name, Some(self.line_no), kind))
    }

    /// One line, without its `\n`.
    fn line(&mut self, body: &[u8]) -> Result<(), AnalyzeError> {
        let parsed = parse_line(body, self.ctx);
        if !matches!(parsed, Ok(Line::Skip)) && self.seen == self.declared {
            let declared = self.declared;
            return Err(self.err(MmErrorKind::TooManyEntries {
                declared,
                found: snippet(body),
            }));
        }
        match parsed {
            Ok(Line::Skip) => {}
            Ok(Line::Zero(which)) => {
                self.seen += 1;
                self.first_zero.get_or_insert((self.line_no, which));
            }
            Ok(Line::Entry(i, j)) => {
                self.seen += 1;
                self.saw_max |= hits_max(self.ctx, i, j);
                self.local.add(self.ctx, i, j);
            }
            Err(kind) => return Err(self.err(kind)),
        }
        self.line_no += 1;
        Ok(())
    }

    /// Every complete line of `bytes` (which ends with `\n`).
    fn lines(&mut self, bytes: &[u8]) -> Result<(), AnalyzeError> {
        let mut pos = 0;
        for nl in memchr::memchr_iter(b'\n', bytes) {
            self.line(&bytes[pos..nl])?;
            pos = nl + 1;
        }
        Ok(())
    }
}

/// Reads `r` to the end in blocks of [`GZ_BLOCK`] bytes, sending each.
fn decode_blocks<R: Read>(mut r: R, tx: &std::sync::mpsc::SyncSender<std::io::Result<Vec<u8>>>) {
    loop {
        let mut buf = vec![0u8; GZ_BLOCK];
        let mut n = 0;
        while n < buf.len() {
            match r.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        buf.truncate(n);
        let last = n < GZ_BLOCK;
        if tx.send(Ok(buf)).is_err() || last {
            return;
        }
    }
}

/// Scans a gzip stream line by line. One thread decompresses while the
/// calling thread scans the previous block, so the pass costs about as
/// much as the decompression alone. The first `header.data_offset`
/// decompressed bytes (the header) are skipped.
pub(super) fn scan_gzip<R: Read + Send>(
    src: R,
    header: &Header,
    name: &str,
) -> Result<RowLengths, AnalyzeError> {
    let gz = |e: std::io::Error| {
        AnalyzeError::Mm(MmError::new(name, None, MmErrorKind::Gzip(e.to_string())))
    };
    let mut st = GzScan {
        ctx: ctx_of(header),
        name,
        declared: header.entries,
        seen: 0,
        line_no: header.data_line,
        first_zero: None,
        saw_max: false,
        local: Local {
            rows: vec![0; header.nrows],
            cols: vec![0; header.ncols],
        },
    };
    let mut skip = header.data_offset;
    let mut carry: Vec<u8> = Vec::new();
    std::thread::scope(|scope| -> Result<(), AnalyzeError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(2);
        scope.spawn(move || decode_blocks(flate2::read::MultiGzDecoder::new(src), &tx));
        for block in rx {
            let block = block.map_err(gz)?;
            let mut b = &block[..];
            if skip > 0 {
                let k = skip.min(b.len());
                skip -= k;
                b = &b[k..];
            }
            let Some(last) = memchr::memrchr(b'\n', b) else {
                carry.extend_from_slice(b);
                continue;
            };
            let mut body = &b[..=last];
            if !carry.is_empty() {
                // Complete the line carried over from the previous block.
                let first = memchr::memchr(b'\n', body).unwrap_or(last);
                carry.extend_from_slice(&body[..first]);
                let line = std::mem::take(&mut carry);
                st.line(&line)?;
                body = &body[first + 1..];
            }
            st.lines(body)?;
            carry.extend_from_slice(&b[last + 1..]);
        }
        Ok(())
    })?;
    if skip > 0 {
        return Err(gz(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the stream ends inside the header",
        )));
    }
    if !carry.is_empty() {
        st.line(&carry)?;
    }
    if let Some((l, which)) = st.first_zero {
        st.line_no = l;
        return Err(st.err(zero_error(st.saw_max, which)));
    }
    if st.seen < st.declared {
        return Err(AnalyzeError::Mm(MmError::new(
            name,
            None,
            MmErrorKind::TooFewEntries {
                declared: st.declared,
                found: st.seen,
            },
        )));
    }
    Ok(RowLengths {
        nrows: header.nrows,
        ncols: header.ncols,
        rows: st.local.rows,
        cols: st.local.cols,
    })
}
