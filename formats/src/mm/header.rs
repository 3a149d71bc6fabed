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

/// Why the head parse stopped before the header was complete.
enum Stop {
    /// The buffer ends before the header does; read more.
    NeedMore,
    /// The header is invalid.
    Bad(LineError),
}

/// The result of one step of the head parse.
type Step<T> = Result<T, Stop>;

/// Stops the head parse with an error.
fn bad<T>(line: Option<u64>, kind: MmErrorKind) -> Step<T> {
    Err(Stop::Bad((line, kind)))
}

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

/// The comment lines of a file's head (its bytes up to the first data
/// line): every line after the banner whose first non-blank character is
/// `%`, without that `%` and a trailing CR, as UTF-8 (lossy). Blank lines
/// before the banner are skipped; a file without a banner (lenient) has
/// only its size line in the head, so no comments.
pub(crate) fn comment_lines(head: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen_first = false;
    for line in head.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let t = trim(line);
        if !seen_first {
            seen_first = !t.is_empty();
            continue;
        }
        let s = line
            .iter()
            .position(|c| !matches!(c, b' ' | b'\t'))
            .unwrap_or(line.len());
        if let Some(text) = line[s..].strip_prefix(b"%") {
            out.push(String::from_utf8_lossy(text).into_owned());
        }
    }
    out
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
    if let Err(k) = sniff(bytes) {
        return Err((None, k));
    }
    let mut p = HeadParser {
        bytes,
        pos: 0,
        no: 0,
        complete,
        lenient,
        warnings: Vec::new(),
    };
    match p.parse() {
        Ok(h) => Ok(Head::Done(h, p.warnings)),
        Err(Stop::NeedMore) => Ok(Head::Incomplete),
        Err(Stop::Bad(e)) => Err(e),
    }
}

/// What the banner and size line declare, before the dimensions are
/// checked.
struct Declared {
    format: MmFormat,
    field: MmField,
    symmetry: MmSymmetry,
    /// The integers of the size line.
    size: Vec<u64>,
    /// Byte offset of the first data line.
    data_start: usize,
}

/// What the first line of a file is.
enum FirstLine {
    /// The four words of a banner.
    Banner([String; 4]),
    /// No banner: the size line (three integers).
    SizeLine(Vec<u64>),
}

/// The head parse: walks the lines of the buffer, one step per part of the
/// header, collecting the warnings of lenient recoveries.
struct HeadParser<'a> {
    bytes: &'a [u8],
    /// Start of the next line.
    pos: usize,
    /// Number of the last line returned.
    no: u64,
    /// Whether `bytes` is the whole file.
    complete: bool,
    lenient: bool,
    warnings: Vec<Warning>,
}

impl<'a> HeadParser<'a> {
    /// The next line; `None` at the end of a complete buffer.
    fn next_line(&mut self) -> Step<Option<Line>> {
        if self.pos >= self.bytes.len() {
            return if self.complete {
                Ok(None)
            } else {
                Err(Stop::NeedMore)
            };
        }
        let start = self.pos;
        let (end, next) = match memchr::memchr(b'\n', &self.bytes[start..]) {
            Some(k) => (start + k, start + k + 1),
            None if self.complete => (self.bytes.len(), self.bytes.len()),
            None => return Err(Stop::NeedMore),
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

    fn text(&self, l: Line) -> &'a [u8] {
        &self.bytes[l.start..l.end]
    }

    fn warn(&mut self, line: u64, message: String) {
        self.warnings.push(Warning {
            line: Some(line),
            message,
        });
    }

    /// The whole header.
    fn parse(&mut self) -> Step<Header> {
        let first = self.first_line()?;
        let declared = match self.banner(first)? {
            FirstLine::Banner(words) => self.size_after_banner(first, &words)?,
            FirstLine::SizeLine(size) => self.guess_without_banner(first, size)?,
        };
        dimensions(declared, self.no)
    }

    /// The first line: the banner (blank lines before it only when
    /// lenient).
    fn first_line(&mut self) -> Step<Line> {
        loop {
            let Some(l) = self.next_line()? else {
                return bad(None, MmErrorKind::Empty);
            };
            if !trim(self.text(l)).is_empty() {
                return Ok(l);
            }
            if !self.lenient {
                let found = "(a blank line)".into();
                return bad(Some(l.no), MmErrorKind::InvalidBanner { found });
            }
            self.warn(l.no, "blank line before the banner ignored".into());
        }
    }

    /// The four banner words of the first line (after a byte-order mark or
    /// with a single `%` when lenient), or the size line of a file without
    /// a banner (lenient).
    fn banner(&mut self, first: Line) -> Step<FirstLine> {
        let mut text = trim(self.text(first));
        if let Some(rest) = text.strip_prefix(b"\xEF\xBB\xBF") {
            if !self.lenient {
                return bad(Some(first.no), MmErrorKind::ByteOrderMark);
            }
            let m = "UTF-8 byte-order mark before the banner ignored";
            self.warn(first.no, m.into());
            text = rest;
        }
        let found = snippet(text);
        let invalid = || {
            bad(
                Some(first.no),
                MmErrorKind::InvalidBanner {
                    found: found.clone(),
                },
            )
        };
        let parsed = |s: &str| banner(s).ok().map(|(_, w)| w.map(str::to_string));
        if text.starts_with(b"%%") {
            return match std::str::from_utf8(text).ok().and_then(parsed) {
                Some(words) => Ok(FirstLine::Banner(words)),
                None => invalid(),
            };
        }
        if text.len() >= 13 && text[1..13].eq_ignore_ascii_case(b"MatrixMarket") {
            if !self.lenient {
                let kind = MmErrorKind::SinglePercentBanner { found };
                return bad(Some(first.no), kind);
            }
            let Some(words) = parsed(&format!("%{}", String::from_utf8_lossy(text))) else {
                return invalid();
            };
            self.warn(first.no, "banner with a single `%` accepted".into());
            return Ok(FirstLine::Banner(words));
        }
        if let Some(size) = size_numbers(text).filter(|v| v.len() == 3) {
            if !self.lenient {
                return bad(Some(first.no), MmErrorKind::MissingBanner { found });
            }
            return Ok(FirstLine::SizeLine(size));
        }
        invalid()
    }

    /// After a banner: comments, then the size line (or, lenient, a size
    /// line commented out).
    fn size_after_banner(&mut self, first: Line, words: &[String; 4]) -> Step<Declared> {
        let w = [
            words[0].as_str(),
            words[1].as_str(),
            words[2].as_str(),
            words[3].as_str(),
        ];
        let (format, field, symmetry) =
            typed_banner(w).map_err(|k| Stop::Bad((Some(first.no), k)))?;
        let mut last_comment: Option<Line> = None;
        let size_l = loop {
            let Some(l) = self.next_line()? else {
                let kind = MmErrorKind::SizeLine {
                    expected: size_expected(format),
                    found: "end of file".into(),
                };
                return bad(Some(self.no + 1), kind);
            };
            let t = self.text(l);
            if !is_comment_or_blank(t) {
                break l;
            }
            if !trim(t).is_empty() {
                last_comment = Some(l);
            }
        };
        let want = if format == MmFormat::Coordinate { 3 } else { 2 };
        let t = self.text(size_l);
        let numbers = size_numbers(t);
        let declared = |size, data_start| Declared {
            format,
            field,
            symmetry,
            size,
            data_start,
        };
        match numbers {
            Some(v) if v.len() == want => return Ok(declared(v, size_l.next)),
            Some(_) | None => {}
        }
        // A commented-out size line: `% M N NNZ` as the last comment.
        let commented = last_comment.and_then(|c| {
            let v = size_numbers(&trim(self.text(c))[1..])?;
            (v.len() == want && format == MmFormat::Coordinate).then_some((c, v))
        });
        let Some((c, v)) = commented else {
            let kind = MmErrorKind::SizeLine {
                expected: size_expected(format),
                found: snippet(t),
            };
            return bad(Some(size_l.no), kind);
        };
        let comment = snippet(self.text(c));
        if !self.lenient {
            let kind = MmErrorKind::CommentedSizeLine {
                comment,
                found: snippet(t),
            };
            return bad(Some(size_l.no), kind);
        }
        let m = format!(
            "size line taken from the comment `{comment}`; line {} is read as the first entry",
            size_l.no
        );
        self.warn(c.no, m);
        self.no = size_l.no - 1;
        Ok(declared(v, size_l.start))
    }

    /// No banner (lenient): the first line is the size line; the field is
    /// guessed from the token count of the first entry.
    fn guess_without_banner(&mut self, first: Line, size: Vec<u64>) -> Step<Declared> {
        let mut field = MmField::Real;
        while let Some(l) = self.next_line()? {
            let t = self.text(l);
            if is_comment_or_blank(t) {
                continue;
            }
            field = match tokens(t).count() {
                2 => MmField::Pattern,
                4 => MmField::Complex,
                _ => MmField::Real,
            };
            break;
        }
        self.no = first.no;
        let m = format!("no banner; guessed `%%MatrixMarket matrix coordinate {field} general`");
        self.warn(first.no, m);
        Ok(Declared {
            format: MmFormat::Coordinate,
            field,
            symmetry: MmSymmetry::General,
            size,
            data_start: first.next,
        })
    }
}

/// The header from what the size line (line `size_no`) declares: the
/// dimensions as `usize`, square for symmetric kinds, and the entry count.
fn dimensions(d: Declared, size_no: u64) -> Step<Header> {
    let overflow = |what, value| {
        let kind = MmErrorKind::IndexOverflow {
            what,
            value,
            index: "usize",
        };
        Stop::Bad((Some(size_no), kind))
    };
    let to_usize =
        |v: u64, what: &'static str| usize::try_from(v).map_err(|_| overflow(what, u128::from(v)));
    let nrows = to_usize(d.size[0], "nrows")?;
    let ncols = to_usize(d.size[1], "ncols")?;
    if d.symmetry != MmSymmetry::General && nrows != ncols {
        let kind = MmErrorKind::NonSquare {
            symmetry: d.symmetry.keyword(),
            nrows,
            ncols,
        };
        return bad(Some(size_no), kind);
    }
    let entries: u128 = match d.format {
        MmFormat::Coordinate => u128::from(d.size[2]),
        MmFormat::Array => {
            let (m, n) = (nrows as u128, ncols as u128);
            match d.symmetry {
                MmSymmetry::General => m * n,
                MmSymmetry::Symmetric | MmSymmetry::Hermitian => n * (n + 1) / 2,
                MmSymmetry::SkewSymmetric => n * n.saturating_sub(1) / 2,
            }
        }
    };
    let entries = usize::try_from(entries).map_err(|_| overflow("entries", entries))?;
    Ok(Header {
        format: d.format,
        field: d.field,
        symmetry: d.symmetry,
        nrows,
        ncols,
        entries,
        data_offset: d.data_start,
        data_line: size_no + 1,
    })
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
