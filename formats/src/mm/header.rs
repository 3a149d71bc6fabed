//! The header of a Matrix Market file: banner, comments and size line.
//!
//! ```text
//! banner    = "%%MatrixMarket" SP+ object SP+ format SP+ field SP+ symmetry SP* EOL
//! object    = "matrix"
//! format    = "coordinate" | "array"
//! field     = "real" | "double" | "integer" | "complex" | "pattern"
//! symmetry  = "general" | "symmetric" | "skew-symmetric" | "hermitian"
//! comment   = SP* "%" any* EOL | SP* EOL          (anywhere after the banner)
//! size_line = SP* uint (SP+ uint)* SP* EOL        (coordinate: M N NNZ, array: M N)
//! SP        = " " | "\t"        EOL = "\r"? "\n" | end of file
//! ```
//!
//! Keywords are case-insensitive (as in the NIST `mmio.c`, which lower-cases
//! the banner). The grammar pieces ([`banner`], [`size_line`]) are nom
//! parsers; [`parse_head`] walks the lines, applies them, and implements the
//! lenient recoveries of a single-`%` banner, a missing banner and a
//! commented-out size line.

use std::fmt;
use std::str::FromStr;

use nom::bytes::complete::{tag_no_case, take_while1};
use nom::character::complete::{space0, space1, u64 as nom_u64};
use nom::combinator::eof;
use nom::multi::separated_list1;
use nom::sequence::{delimited, terminated, tuple};
use nom::IResult;

use super::error::{snippet, LineError, MmErrorKind};
use super::Warning;

/// Storage layout of a Matrix Market file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmFormat {
    /// `coordinate`: one `i j [value]` line per stored entry.
    Coordinate,
    /// `array`: dense, column-major, one value per line.
    Array,
}

/// Value type of a Matrix Market file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmField {
    /// `real` (also spelled `double`): one floating-point value.
    Real,
    /// `integer`: one integer value (read into real types).
    Integer,
    /// `complex`: real and imaginary parts.
    Complex,
    /// `pattern`: no value; every stored entry is one.
    Pattern,
}

/// Symmetry of a Matrix Market file (which triangle is stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmSymmetry {
    /// Every entry is stored.
    General,
    /// `a(i,j) = a(j,i)`; the lower triangle is stored.
    Symmetric,
    /// `a(i,j) = -a(j,i)`; the strictly lower triangle is stored.
    SkewSymmetric,
    /// `a(i,j) = conj(a(j,i))`; the lower triangle is stored.
    Hermitian,
}

macro_rules! keyword_enum {
    ($t:ty, $what:expr, $expected:expr, [$($v:ident => $s:expr $(, $alias:expr)*;)*]) => {
        impl $t {
            /// The spec keyword, lower case.
            #[must_use]
            pub fn keyword(self) -> &'static str {
                match self { $(Self::$v => $s,)* }
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.keyword())
            }
        }
        impl FromStr for $t {
            type Err = MmErrorKind;
            /// Parses a keyword, ignoring case.
            fn from_str(s: &str) -> Result<Self, MmErrorKind> {
                $(
                    if s.eq_ignore_ascii_case($s) $(|| s.eq_ignore_ascii_case($alias))* {
                        return Ok(Self::$v);
                    }
                )*
                Err(MmErrorKind::UnknownKeyword {
                    what: $what,
                    found: snippet(s.as_bytes()),
                    expected: $expected,
                })
            }
        }
    };
}

keyword_enum!(MmFormat, "format", "coordinate, array", [
    Coordinate => "coordinate";
    Array => "array";
]);
keyword_enum!(MmField, "field", "real, double, integer, complex, pattern", [
    Real => "real", "double";
    Integer => "integer";
    Complex => "complex";
    Pattern => "pattern";
]);
keyword_enum!(MmSymmetry, "symmetry", "general, symmetric, skew-symmetric, hermitian", [
    General => "general";
    Symmetric => "symmetric";
    SkewSymmetric => "skew-symmetric";
    Hermitian => "hermitian";
]);

/// Everything the header says, plus where the data starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Coordinate or array.
    pub format: MmFormat,
    /// Value type.
    pub field: MmField,
    /// Which part of the matrix is stored.
    pub symmetry: MmSymmetry,
    /// Number of rows.
    pub nrows: usize,
    /// Number of columns.
    pub ncols: usize,
    /// Declared stored entries: for coordinate the third number of the size
    /// line; for array the number of values stored (`M*N`, or a triangle for
    /// the symmetric variants).
    pub entries: usize,
    /// Byte offset of the first data line (after the size line); for gzip
    /// input, an offset into the decompressed text.
    pub data_offset: usize,
    /// 1-based line number of the first data line.
    pub data_line: u64,
}

impl Header {
    /// Upper bound on the number of entries after symmetric expansion
    /// (saturating). Coordinate: `entries` (general) or `2 * entries`;
    /// array: `nrows * ncols` (zeros are dropped on read, so usually less).
    #[must_use]
    pub fn nnz_expanded_max(&self) -> usize {
        match (self.format, self.symmetry) {
            (MmFormat::Array, _) => self.nrows.saturating_mul(self.ncols),
            (MmFormat::Coordinate, MmSymmetry::General) => self.entries,
            (MmFormat::Coordinate, _) => self.entries.saturating_mul(2),
        }
    }

    /// Number of values per data line (after the indices, for coordinate).
    pub(crate) fn values_per_line(&self) -> usize {
        match self.field {
            MmField::Pattern => 0,
            MmField::Complex => 2,
            MmField::Real | MmField::Integer => 1,
        }
    }
}

/// Rejects keyword pairs the spec forbids.
///
/// # Errors
/// [`MmErrorKind::IllegalCombination`].
pub fn check_combination(
    format: MmFormat,
    field: MmField,
    symmetry: MmSymmetry,
) -> Result<(), MmErrorKind> {
    let bad = match (field, symmetry) {
        (MmField::Pattern, MmSymmetry::Hermitian | MmSymmetry::SkewSymmetric) => {
            Some("a pattern matrix cannot be skew-symmetric or hermitian (no values to negate or conjugate)")
        }
        (MmField::Real | MmField::Integer, MmSymmetry::Hermitian) => {
            Some("a hermitian matrix must be complex (use `symmetric` for real values)")
        }
        _ if format == MmFormat::Array && field == MmField::Pattern => {
            Some("an array (dense) matrix cannot be pattern")
        }
        _ => None,
    };
    match bad {
        Some(why) => Err(MmErrorKind::IllegalCombination {
            detail: format!("`{format} {field} {symmetry}`: {why}"),
        }),
        None => Ok(()),
    }
}

fn word(input: &str) -> IResult<&str, &str> {
    take_while1(|c: char| !c.is_ascii_whitespace())(input)
}

/// `%%MatrixMarket SP+ object SP+ format SP+ field SP+ symmetry SP* EOL`;
/// returns the four words (unchecked). The input is one line without its
/// line ending.
pub fn banner(input: &str) -> IResult<&str, [&str; 4]> {
    let (rest, (_, _, object, _, format, _, field, _, symmetry)) = terminated(
        tuple((
            tag_no_case("%%MatrixMarket"),
            space1,
            word,
            space1,
            word,
            space1,
            word,
            space1,
            word,
        )),
        tuple((space0, eof)),
    )(input)?;
    Ok((rest, [object, format, field, symmetry]))
}

/// `SP* uint (SP+ uint)* SP* EOL`: the integers of a size line (any count;
/// the caller checks it). The input is one line without its line ending.
pub fn size_line(input: &str) -> IResult<&str, Vec<u64>> {
    terminated(
        delimited(space0, separated_list1(space1, nom_u64), space0),
        eof,
    )(input)
}

/// Parses the four banner words into typed keywords and checks the pair.
fn typed_banner(words: [&str; 4]) -> Result<(MmFormat, MmField, MmSymmetry), MmErrorKind> {
    if !words[0].eq_ignore_ascii_case("matrix") {
        return Err(MmErrorKind::UnknownKeyword {
            what: "object",
            found: snippet(words[0].as_bytes()),
            expected: "matrix",
        });
    }
    let format: MmFormat = words[1].parse()?;
    let field: MmField = words[2].parse()?;
    let symmetry: MmSymmetry = words[3].parse()?;
    check_combination(format, field, symmetry)?;
    Ok((format, field, symmetry))
}

/// One line of the head: number, byte range without the line ending, and
/// where the next line starts.
#[derive(Debug, Clone, Copy)]
struct Line {
    no: u64,
    start: usize,
    end: usize,
    next: usize,
}

/// Walks lines; `None` at the end, `Err(())` when a line is cut off by the
/// end of an incomplete buffer.
struct Lines<'a> {
    bytes: &'a [u8],
    pos: usize,
    no: u64,
    complete: bool,
}

impl Lines<'_> {
    fn next_line(&mut self) -> Result<Option<Line>, Incomplete> {
        if self.pos >= self.bytes.len() {
            return if self.complete {
                Ok(None)
            } else {
                Err(Incomplete)
            };
        }
        let start = self.pos;
        let (end, next) = match memchr::memchr(b'\n', &self.bytes[start..]) {
            Some(k) => (start + k, start + k + 1),
            None if self.complete => (self.bytes.len(), self.bytes.len()),
            None => return Err(Incomplete),
        };
        let end = if end > start && self.bytes[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        self.no += 1;
        self.pos = next;
        Ok(Some(Line {
            no: self.no,
            start,
            end,
            next,
        }))
    }
}

/// The head of the buffer ends before the header does; read more.
#[derive(Debug)]
pub(crate) struct Incomplete;

/// Outcome of [`parse_head`].
pub(crate) enum Head {
    /// The header and the warnings of lenient recoveries.
    Done(Header, Vec<Warning>),
    /// More bytes are needed.
    Incomplete,
}

fn trim(b: &[u8]) -> &[u8] {
    let is_ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\r');
    let s = b.iter().position(|c| !is_ws(c)).unwrap_or(b.len());
    let e = b.iter().rposition(|c| !is_ws(c)).map_or(s, |e| e + 1);
    &b[s..e.max(s)]
}

fn is_comment_or_blank(b: &[u8]) -> bool {
    let t = trim(b);
    t.is_empty() || t[0] == b'%'
}

/// Tokens of a line, split on spaces and tabs.
fn tokens(b: &[u8]) -> impl Iterator<Item = &[u8]> {
    b.split(|c| matches!(c, b' ' | b'\t' | b'\r'))
        .filter(|t| !t.is_empty())
}

/// The integers of a size line, or `None` if it is not one.
fn size_numbers(b: &[u8]) -> Option<Vec<u64>> {
    let s = std::str::from_utf8(b).ok()?;
    size_line(s).ok().map(|(_, v)| v)
}

/// Checks the content is text that could be Matrix Market, naming what it
/// is otherwise (binary, Git-LFS pointer, npz/zip, npy).
pub(crate) fn sniff(bytes: &[u8]) -> Result<(), MmErrorKind> {
    let not = |what: &str| {
        Err(MmErrorKind::NotMatrixMarket {
            what: what.to_string(),
        })
    };
    if bytes.is_empty() {
        return Err(MmErrorKind::Empty);
    }
    if bytes.starts_with(b"version https://git-lfs") {
        return not("this is a Git-LFS pointer file, not the data; run `git lfs pull` to fetch the real file");
    }
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        return not("this is a zip archive (an .npz file?); read it as .npz");
    }
    if bytes.starts_with(b"\x93NUMPY") {
        return not("this is a NumPy .npy array");
    }
    let head = &bytes[..bytes.len().min(4096)];
    if head.contains(&0) {
        return not("the file holds binary data (NUL bytes in the first 4 KiB)");
    }
    Ok(())
}

/// Parses the header from the start of `bytes`. `complete` says whether
/// `bytes` is the whole file; if not, [`Head::Incomplete`] asks for more.
///
/// # Errors
/// Every header problem, with its line number.
pub(crate) fn parse_head(bytes: &[u8], complete: bool, lenient: bool) -> Result<Head, LineError> {
    match parse_head_inner(bytes, complete, lenient) {
        Ok(r) => r,
        Err(Incomplete) => Ok(Head::Incomplete),
    }
}

type HeadResult = Result<Result<Head, LineError>, Incomplete>;

fn parse_head_inner(bytes: &[u8], complete: bool, lenient: bool) -> HeadResult {
    if let Err(k) = sniff(bytes) {
        return Ok(Err((None, k)));
    }
    let mut lines = Lines {
        bytes,
        pos: 0,
        no: 0,
        complete,
    };
    let mut warnings = Vec::new();
    let warn = |w: &mut Vec<Warning>, line: u64, m: String| {
        w.push(Warning {
            line: Some(line),
            message: m,
        });
    };

    // The first line: the banner (blank lines before it only when lenient).
    let first = loop {
        let Some(l) = lines.next_line()? else {
            return Ok(Err((None, MmErrorKind::Empty)));
        };
        let text = &bytes[l.start..l.end];
        if trim(text).is_empty() {
            if lenient {
                warn(
                    &mut warnings,
                    l.no,
                    "blank line before the banner ignored".into(),
                );
                continue;
            }
            return Ok(Err((
                Some(l.no),
                MmErrorKind::InvalidBanner {
                    found: "(a blank line)".into(),
                },
            )));
        }
        break l;
    };
    let mut text = trim(&bytes[first.start..first.end]);
    if let Some(rest) = text.strip_prefix(b"\xEF\xBB\xBF") {
        if !lenient {
            return Ok(Err((Some(first.no), MmErrorKind::ByteOrderMark)));
        }
        warn(
            &mut warnings,
            first.no,
            "UTF-8 byte-order mark before the banner ignored".into(),
        );
        text = rest;
    }
    let found = || snippet(text);
    let keywords = if text.starts_with(b"%%") {
        let Ok(s) = std::str::from_utf8(text) else {
            return Ok(Err((
                Some(first.no),
                MmErrorKind::InvalidBanner { found: found() },
            )));
        };
        match banner(s) {
            Ok((_, words)) => Some(words.map(str::to_string)),
            Err(_) => {
                return Ok(Err((
                    Some(first.no),
                    MmErrorKind::InvalidBanner { found: found() },
                )))
            }
        }
    } else if text.len() >= 13 && text[1..13].eq_ignore_ascii_case(b"MatrixMarket") {
        if !lenient {
            return Ok(Err((
                Some(first.no),
                MmErrorKind::SinglePercentBanner { found: found() },
            )));
        }
        let fixed = format!("%{}", String::from_utf8_lossy(text));
        match banner(&fixed) {
            Ok((_, words)) => {
                warn(
                    &mut warnings,
                    first.no,
                    "banner with a single `%` accepted".into(),
                );
                Some(words.map(str::to_string))
            }
            Err(_) => {
                return Ok(Err((
                    Some(first.no),
                    MmErrorKind::InvalidBanner { found: found() },
                )))
            }
        }
    } else if size_numbers(text).is_some_and(|v| v.len() == 3) {
        if !lenient {
            return Ok(Err((
                Some(first.no),
                MmErrorKind::MissingBanner { found: found() },
            )));
        }
        None
    } else {
        return Ok(Err((
            Some(first.no),
            MmErrorKind::InvalidBanner { found: found() },
        )));
    };

    let (format, field, symmetry, size, data_start) = match keywords {
        Some(words) => {
            let w = [
                words[0].as_str(),
                words[1].as_str(),
                words[2].as_str(),
                words[3].as_str(),
            ];
            let (format, field, symmetry) = match typed_banner(w) {
                Ok(t) => t,
                Err(k) => return Ok(Err((Some(first.no), k))),
            };
            // Comments, then the size line.
            let mut last_comment: Option<Line> = None;
            let size_l = loop {
                let Some(l) = lines.next_line()? else {
                    return Ok(Err((
                        Some(lines.no + 1),
                        MmErrorKind::SizeLine {
                            expected: size_expected(format),
                            found: "end of file".into(),
                        },
                    )));
                };
                let t = &bytes[l.start..l.end];
                if is_comment_or_blank(t) {
                    if !trim(t).is_empty() {
                        last_comment = Some(l);
                    }
                    continue;
                }
                break l;
            };
            let want = if format == MmFormat::Coordinate { 3 } else { 2 };
            let t = &bytes[size_l.start..size_l.end];
            match size_numbers(t) {
                Some(v) if v.len() == want => (format, field, symmetry, v, size_l.next),
                other => {
                    // A commented-out size line: `% M N NNZ` as the last comment.
                    let commented = last_comment.and_then(|c| {
                        let ct = trim(&bytes[c.start..c.end]);
                        let v = size_numbers(&ct[1..])?;
                        (v.len() == want && format == MmFormat::Coordinate).then_some((c, v))
                    });
                    let wrong_count = other.is_none_or(|v| v.len() != want);
                    match commented {
                        Some((c, v)) if wrong_count => {
                            if !lenient {
                                return Ok(Err((
                                    Some(size_l.no),
                                    MmErrorKind::CommentedSizeLine {
                                        comment: snippet(&bytes[c.start..c.end]),
                                        found: snippet(t),
                                    },
                                )));
                            }
                            warn(
                                &mut warnings,
                                c.no,
                                format!(
                                    "size line taken from the comment `{}`; line {} is read as the first entry",
                                    snippet(&bytes[c.start..c.end]),
                                    size_l.no
                                ),
                            );
                            lines.no = size_l.no - 1;
                            (format, field, symmetry, v, size_l.start)
                        }
                        _ => {
                            return Ok(Err((
                                Some(size_l.no),
                                MmErrorKind::SizeLine {
                                    expected: size_expected(format),
                                    found: snippet(t),
                                },
                            )))
                        }
                    }
                }
            }
        }
        None => {
            // No banner: the first line is the size line; guess the field
            // from the token count of the first entry.
            let size = size_numbers(text).unwrap_or_default();
            let mut guess = MmField::Real;
            while let Some(l) = lines.next_line()? {
                let t = &bytes[l.start..l.end];
                if is_comment_or_blank(t) {
                    continue;
                }
                guess = match tokens(t).count() {
                    2 => MmField::Pattern,
                    4 => MmField::Complex,
                    _ => MmField::Real,
                };
                break;
            }
            lines.no = first.no;
            warn(
                &mut warnings,
                first.no,
                format!("no banner; guessed `%%MatrixMarket matrix coordinate {guess} general`"),
            );
            (
                MmFormat::Coordinate,
                guess,
                MmSymmetry::General,
                size,
                first.next,
            )
        }
    };

    let size_no = lines.no;
    let to_usize = |v: u64, what: &'static str| {
        usize::try_from(v).map_err(|_| {
            (
                Some(size_no),
                MmErrorKind::IndexOverflow {
                    what,
                    value: u128::from(v),
                    index: "usize",
                },
            )
        })
    };
    let nrows = match to_usize(size[0], "nrows") {
        Ok(v) => v,
        Err(e) => return Ok(Err(e)),
    };
    let ncols = match to_usize(size[1], "ncols") {
        Ok(v) => v,
        Err(e) => return Ok(Err(e)),
    };
    if symmetry != MmSymmetry::General && nrows != ncols {
        return Ok(Err((
            Some(size_no),
            MmErrorKind::NonSquare {
                symmetry: symmetry.keyword(),
                nrows,
                ncols,
            },
        )));
    }
    let entries: u128 = match format {
        MmFormat::Coordinate => u128::from(size[2]),
        MmFormat::Array => {
            let (m, n) = (nrows as u128, ncols as u128);
            match symmetry {
                MmSymmetry::General => m * n,
                MmSymmetry::Symmetric | MmSymmetry::Hermitian => n * (n + 1) / 2,
                MmSymmetry::SkewSymmetric => n * n.saturating_sub(1) / 2,
            }
        }
    };
    let Ok(entries) = usize::try_from(entries) else {
        return Ok(Err((
            Some(size_no),
            MmErrorKind::IndexOverflow {
                what: "entries",
                value: entries,
                index: "usize",
            },
        )));
    };
    let header = Header {
        format,
        field,
        symmetry,
        nrows,
        ncols,
        entries,
        data_offset: data_start,
        data_line: size_no + 1,
    };
    Ok(Ok(Head::Done(header, warnings)))
}

fn size_expected(format: MmFormat) -> &'static str {
    match format {
        MmFormat::Coordinate => "`ROWS COLS ENTRIES` (three integers)",
        MmFormat::Array => "`ROWS COLS` (two integers)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banner_alone() {
        let (rest, w) = banner("%%MatrixMarket matrix coordinate real general").unwrap();
        assert_eq!(rest, "");
        assert_eq!(w, ["matrix", "coordinate", "real", "general"]);
        let (rest, w) = banner("%%matrixmarket\tMATRIX Array Complex Hermitian  ").unwrap();
        assert_eq!(rest, "");
        assert_eq!(w[3], "Hermitian");
        assert!(banner("%%MatrixMarket matrix coordinate real").is_err());
        assert!(banner("%%MatrixMarket matrix coordinate real general extra").is_err());
        assert!(banner("%MatrixMarket matrix coordinate real general").is_err());
    }

    #[test]
    fn size_line_alone() {
        assert_eq!(size_line("  3 4\t5 ").unwrap(), ("", vec![3, 4, 5]));
        assert_eq!(size_line("3 4").unwrap(), ("", vec![3, 4]));
        assert!(size_line("3 4 x").is_err());
        assert!(size_line("3.0 4 5").is_err());
        assert!(size_line("").is_err());
        assert!(size_line("-3 4 5").is_err());
    }

    #[test]
    fn keywords() {
        assert_eq!("DOUBLE".parse::<MmField>().unwrap(), MmField::Real);
        assert_eq!(
            "Skew-Symmetric".parse::<MmSymmetry>().unwrap(),
            MmSymmetry::SkewSymmetric
        );
        assert_eq!(MmSymmetry::SkewSymmetric.to_string(), "skew-symmetric");
        assert!(matches!(
            "sparse".parse::<MmFormat>(),
            Err(MmErrorKind::UnknownKeyword { what: "format", .. })
        ));
        assert!(check_combination(
            MmFormat::Coordinate,
            MmField::Pattern,
            MmSymmetry::Hermitian
        )
        .is_err());
        assert!(
            check_combination(MmFormat::Coordinate, MmField::Real, MmSymmetry::Hermitian).is_err()
        );
        assert!(check_combination(MmFormat::Array, MmField::Pattern, MmSymmetry::General).is_err());
        assert!(
            check_combination(MmFormat::Array, MmField::Complex, MmSymmetry::Hermitian).is_ok()
        );
    }

    fn head(s: &str, lenient: bool) -> Result<(Header, Vec<Warning>), LineError> {
        match parse_head(s.as_bytes(), true, lenient)? {
            Head::Done(h, w) => Ok((h, w)),
            Head::Incomplete => panic!("incomplete"),
        }
    }

    #[test]
    fn head_offsets() {
        let s =
            "%%MatrixMarket matrix coordinate real general\n%c\n\n%%GraphBLAS x\n2 3 1\n1 1 2\n";
        let (h, w) = head(s, false).unwrap();
        assert!(w.is_empty());
        assert_eq!((h.nrows, h.ncols, h.entries, h.data_line), (2, 3, 1, 6));
        assert_eq!(&s[h.data_offset..], "1 1 2\n");
        let (h, _) = head(
            "%%MatrixMarket matrix array real symmetric\r\n3 3\r\n",
            false,
        )
        .unwrap();
        assert_eq!(h.entries, 6);
        assert_eq!(h.nnz_expanded_max(), 9);
    }

    #[test]
    fn head_incomplete() {
        let s = b"%%MatrixMarket matrix coordinate real general\n% long comm";
        assert!(matches!(parse_head(s, false, false), Ok(Head::Incomplete)));
    }

    #[test]
    fn head_quirks() {
        let s = "%MatrixMarket matrix coordinate pattern symmetric \n3 3 1\n2 1\n";
        assert!(matches!(
            head(s, false),
            Err((Some(1), MmErrorKind::SinglePercentBanner { .. }))
        ));
        let (h, w) = head(s, true).unwrap();
        assert_eq!(
            (h.field, h.symmetry, w.len()),
            (MmField::Pattern, MmSymmetry::Symmetric, 1)
        );

        let s = "%%MatrixMarket matrix coordinate pattern symmetric\n%\n% 6 6 2\n3 1\n4 2\n";
        assert!(matches!(
            head(s, false),
            Err((Some(4), MmErrorKind::CommentedSizeLine { .. }))
        ));
        let (h, w) = head(s, true).unwrap();
        assert_eq!((h.nrows, h.entries, h.data_line, w.len()), (6, 2, 4, 1));
        assert_eq!(&s[h.data_offset..], "3 1\n4 2\n");

        let s = "4 4 2\n1 1 1.5\n2 2 3\n";
        assert!(matches!(
            head(s, false),
            Err((Some(1), MmErrorKind::MissingBanner { .. }))
        ));
        let (h, _) = head(s, true).unwrap();
        assert_eq!((h.field, h.data_line), (MmField::Real, 2));
        let (h, _) = head("4 4 1\n\n1 1\n", true).unwrap();
        assert_eq!(h.field, MmField::Pattern);
    }

    #[test]
    fn head_errors() {
        let e = |s: &str| head(s, false).unwrap_err();
        assert!(matches!(
            e("hello\n"),
            (Some(1), MmErrorKind::InvalidBanner { .. })
        ));
        assert!(matches!(
            e("%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n"),
            (Some(1), MmErrorKind::IllegalCombination { .. })
        ));
        assert!(matches!(
            e("%%MatrixMarket vector coordinate real general\n"),
            (Some(1), MmErrorKind::UnknownKeyword { what: "object", .. })
        ));
        assert!(matches!(
            e("%%MatrixMarket matrix coordinate real general\n% x\n2 2\n"),
            (Some(3), MmErrorKind::SizeLine { .. })
        ));
        assert!(matches!(
            e("%%MatrixMarket matrix coordinate real general\n"),
            (Some(2), MmErrorKind::SizeLine { .. })
        ));
        assert!(matches!(
            e("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n"),
            (Some(2), MmErrorKind::NonSquare { .. })
        ));
        assert!(matches!(e(""), (None, MmErrorKind::Empty)));
        assert!(matches!(
            e("version https://git-lfs.github.com/spec/v1\n"),
            (None, MmErrorKind::NotMatrixMarket { .. })
        ));
        assert!(matches!(
            e("\x00\x01\x02"),
            (None, MmErrorKind::NotMatrixMarket { .. })
        ));
    }
}
