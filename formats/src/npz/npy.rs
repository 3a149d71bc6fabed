//! `.npy` headers: writing (v1.0, padded like NumPy) and parsing (v1, v2, v3).
//!
//! A `.npy` file is the magic `\x93NUMPY`, a major and minor version byte,
//! a little-endian header length (`u16` in v1, `u32` in v2/v3), then a
//! Python dict literal such as
//! `{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }`, padded with
//! spaces and ended by `\n` so that the data starts at a multiple of 64 bytes.

use crate::{Complex32, Complex64};

use super::error::NpzErrorKind;

/// The `.npy` magic string.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Alignment of the data start, as NumPy (>= 1.14) writes it.
pub const ALIGN: usize = 64;

/// An element type that can be written to (and read verbatim from) a
/// `.npy` array.
pub trait NpyElement: bytemuck::Pod {
    /// NumPy type descriptor, e.g. `<f8`.
    const DESCR: &'static str;
}

macro_rules! npy_element {
    ($($t:ty => $d:expr),* $(,)?) => {
        $(impl NpyElement for $t {
            const DESCR: &'static str = $d;
        })*
    };
}
npy_element!(
    i32 => "<i4", i64 => "<i8", f32 => "<f4", f64 => "<f8",
    Complex32 => "<c8", Complex64 => "<c16", u8 => "|u1",
);

/// Builds a complete v1.0 header (magic to final `\n`) whose length is a
/// multiple of [`ALIGN`].
///
/// # Errors
/// [`NpzErrorKind::InvalidArgument`] if the header would not fit in v1.0's
/// 16-bit length (needs a shape with thousands of dimensions).
pub fn header_bytes(
    descr: &str,
    fortran_order: bool,
    shape: &[usize],
) -> Result<Vec<u8>, NpzErrorKind> {
    let shape_repr = match shape {
        [] => "()".to_string(),
        [n] => format!("({n},)"),
        dims => {
            let parts: Vec<String> = dims.iter().map(usize::to_string).collect();
            format!("({})", parts.join(", "))
        }
    };
    let fo = if fortran_order { "True" } else { "False" };
    let mut dict =
        format!("{{'descr': '{descr}', 'fortran_order': {fo}, 'shape': {shape_repr}, }}");
    // magic (6) + version (2) + length (2) + dict + padding + '\n'
    let unpadded = 10 + dict.len() + 1;
    let pad = (ALIGN - unpadded % ALIGN) % ALIGN;
    dict.extend(std::iter::repeat_n(' ', pad));
    dict.push('\n');
    let len = u16::try_from(dict.len()).map_err(|_| {
        NpzErrorKind::InvalidArgument(format!("npy header of {} bytes is too long", dict.len()))
    })?;
    let mut out = Vec::with_capacity(10 + dict.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    Ok(out)
}

/// Element kind of a parsed dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DKind {
    /// Boolean (`b1`).
    Bool,
    /// Signed integer.
    Int,
    /// Unsigned integer.
    UInt,
    /// IEEE float.
    Float,
    /// Complex (two floats).
    Complex,
    /// Byte string (`S`), item size = length.
    Bytes,
    /// Unicode string (`U`), UCS-4, item size = 4 * length.
    Unicode,
}

/// A parsed simple dtype.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dtype {
    /// The descriptor as written in the file.
    pub descr: String,
    /// Element kind.
    pub kind: DKind,
    /// Bytes per element.
    pub size: usize,
}

/// A parsed `.npy` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Element type.
    pub dtype: Dtype,
    /// Whether the data is column-major.
    pub fortran_order: bool,
    /// Array shape (empty for a 0-d array).
    pub shape: Vec<usize>,
    /// Total header length in bytes, magic included (the data offset).
    pub len: usize,
}

impl Header {
    /// Number of elements (1 for a 0-d array), `None` on overflow.
    #[must_use]
    pub fn count(&self) -> Option<usize> {
        self.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
    }

    /// Number of data bytes, `None` on overflow.
    #[must_use]
    pub fn data_bytes(&self) -> Option<u64> {
        let n = self.count()?;
        (n as u64).checked_mul(self.dtype.size as u64)
    }
}

/// Parses a dtype descriptor such as `<f8`, `|u1`, `|S3`, `<U3`.
///
/// # Errors
/// [`NpzErrorKind::BigEndian`] for `>` descriptors of multi-byte types,
/// [`NpzErrorKind::WrongDtype`] for anything unknown.
pub fn parse_descr(descr: &str) -> Result<Dtype, NpzErrorKind> {
    let unknown = || NpzErrorKind::WrongDtype {
        found: descr.to_string(),
        expected: "a simple numeric or string dtype".to_string(),
    };
    let b = descr.as_bytes();
    let (order, rest) = match b.first() {
        Some(c @ (b'<' | b'>' | b'|' | b'=')) => (*c, &descr[1..]),
        _ => (b'=', descr),
    };
    let mut chars = rest.chars();
    let code = chars.next().ok_or_else(unknown)?;
    let num: usize = chars.as_str().parse().map_err(|_| unknown())?;
    let (kind, size) = match code {
        'b' if num == 1 => (DKind::Bool, 1),
        '?' => (DKind::Bool, 1),
        'i' if matches!(num, 1 | 2 | 4 | 8) => (DKind::Int, num),
        'u' if matches!(num, 1 | 2 | 4 | 8) => (DKind::UInt, num),
        'f' if matches!(num, 4 | 8) => (DKind::Float, num),
        'c' if matches!(num, 8 | 16) => (DKind::Complex, num),
        'S' | 'a' => (DKind::Bytes, num),
        'U' => (DKind::Unicode, num.checked_mul(4).ok_or_else(unknown)?),
        _ => return Err(unknown()),
    };
    let multibyte = match kind {
        DKind::Bool | DKind::Bytes => false,
        DKind::Unicode => true,
        _ => size > 1,
    };
    if order == b'>' && multibyte {
        return Err(NpzErrorKind::BigEndian(descr.to_string()));
    }
    Ok(Dtype {
        descr: descr.to_string(),
        kind,
        size,
    })
}

/// Reads the fixed preamble (magic, version, length) and returns the
/// length of the dict part and the preamble length.
///
/// # Errors
/// [`NpzErrorKind::BadHeader`] if the magic or version is wrong.
pub fn parse_preamble(pre: &[u8]) -> Result<(usize, usize), NpzErrorKind> {
    if pre.len() < 10 || &pre[..6] != MAGIC {
        return Err(NpzErrorKind::BadHeader(
            "missing the \\x93NUMPY magic".to_string(),
        ));
    }
    match pre[6] {
        1 => Ok((usize::from(u16::from_le_bytes([pre[8], pre[9]])), 10)),
        2 | 3 => {
            if pre.len() < 12 {
                return Err(NpzErrorKind::BadHeader("header is cut short".to_string()));
            }
            let n = u32::from_le_bytes([pre[8], pre[9], pre[10], pre[11]]);
            let n = usize::try_from(n)
                .map_err(|_| NpzErrorKind::BadHeader("header length overflows".to_string()))?;
            Ok((n, 12))
        }
        v => Err(NpzErrorKind::BadHeader(format!(
            "unsupported .npy version {v}.{}",
            pre[7]
        ))),
    }
}

/// Largest dict length accepted (NumPy itself refuses headers over 10 kB
/// unless told otherwise).
pub const MAX_DICT_LEN: usize = 1 << 16;

/// Parses the dict part of a header (`{'descr': ..., ...}`).
///
/// # Errors
/// [`NpzErrorKind::BadHeader`] naming the problem; dtype errors from
/// [`parse_descr`].
pub fn parse_dict(dict: &[u8], total_len: usize) -> Result<Header, NpzErrorKind> {
    let text = std::str::from_utf8(dict)
        .map_err(|_| NpzErrorKind::BadHeader("header is not valid text".to_string()))?;
    let mut p = Parser {
        s: text.as_bytes(),
        pos: 0,
    };
    let value = p.value(0)?;
    p.ws();
    if p.pos != p.s.len() {
        return Err(bad(format!(
            "unexpected text after the dict at byte {}",
            p.pos
        )));
    }
    let Value::Dict(entries) = value else {
        return Err(bad("header is not a dict".to_string()));
    };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (k, v) in entries {
        match (k.as_str(), v) {
            ("descr", Value::Str(s)) => descr = Some(s),
            ("descr", Value::List) => {
                return Err(NpzErrorKind::WrongDtype {
                    found: "a structured dtype".to_string(),
                    expected: "a simple numeric or string dtype".to_string(),
                })
            }
            ("fortran_order", Value::Bool(b)) => fortran = Some(b),
            ("shape", Value::Tuple(items)) => {
                let dims = items
                    .into_iter()
                    .map(|d| match d {
                        Value::Int(n) => usize::try_from(n)
                            .map_err(|_| bad(format!("negative dimension {n} in shape"))),
                        _ => Err(bad("shape holds a non-integer".to_string())),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                shape = Some(dims);
            }
            (k @ ("descr" | "fortran_order" | "shape"), _) => {
                return Err(bad(format!("key '{k}' has a value of the wrong type")))
            }
            _ => {}
        }
    }
    let descr = descr.ok_or_else(|| bad("key 'descr' is missing".to_string()))?;
    let fortran_order = fortran.ok_or_else(|| bad("key 'fortran_order' is missing".to_string()))?;
    let shape = shape.ok_or_else(|| bad("key 'shape' is missing".to_string()))?;
    let dtype = parse_descr(&descr)?;
    let header = Header {
        dtype,
        fortran_order,
        shape,
        len: total_len,
    };
    if header.data_bytes().is_none() {
        return Err(bad("shape overflows".to_string()));
    }
    Ok(header)
}

fn bad(s: String) -> NpzErrorKind {
    NpzErrorKind::BadHeader(s)
}

/// A Python literal, as far as `.npy` headers use them.
#[derive(Debug)]
enum Value {
    Str(String),
    Int(i128),
    Bool(bool),
    None,
    Tuple(Vec<Value>),
    List,
    Dict(Vec<(String, Value)>),
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

const MAX_DEPTH: usize = 16;

impl Parser<'_> {
    fn ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.pos).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), NpzErrorKind> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(bad(format!(
                "expected '{}' at byte {}",
                c as char, self.pos
            )))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, NpzErrorKind> {
        if depth > MAX_DEPTH {
            return Err(bad("nested too deeply".to_string()));
        }
        match self.peek() {
            Some(b'{') => {
                self.pos += 1;
                let mut entries = Vec::new();
                loop {
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        break;
                    }
                    let Value::Str(key) = self.value(depth + 1)? else {
                        return Err(bad("dict key is not a string".to_string()));
                    };
                    self.expect(b':')?;
                    let v = self.value(depth + 1)?;
                    entries.push((key, v));
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {}
                        _ => return Err(bad(format!("expected ',' or '}}' at byte {}", self.pos))),
                    }
                }
                Ok(Value::Dict(entries))
            }
            Some(open @ (b'(' | b'[')) => {
                self.pos += 1;
                let close = if open == b'(' { b')' } else { b']' };
                let mut items = Vec::new();
                loop {
                    if self.peek() == Some(close) {
                        self.pos += 1;
                        break;
                    }
                    items.push(self.value(depth + 1)?);
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(c) if c == close => {}
                        _ => return Err(bad(format!("expected ',' at byte {}", self.pos))),
                    }
                }
                Ok(if open == b'(' {
                    Value::Tuple(items)
                } else {
                    Value::List
                })
            }
            Some(q @ (b'\'' | b'"')) => {
                self.pos += 1;
                let start = self.pos;
                while self.pos < self.s.len() && self.s[self.pos] != q {
                    if self.s[self.pos] == b'\\' {
                        return Err(bad("escapes in strings are not supported".to_string()));
                    }
                    self.pos += 1;
                }
                if self.pos >= self.s.len() {
                    return Err(bad("unterminated string".to_string()));
                }
                let s = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
                self.pos += 1;
                Ok(Value::Str(s))
            }
            Some(c) if c.is_ascii_digit() || c == b'-' || c == b'+' => {
                let start = self.pos;
                self.pos += 1;
                while self.pos < self.s.len() && self.s[self.pos].is_ascii_digit() {
                    self.pos += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
                let n: i128 = text
                    .parse()
                    .map_err(|_| bad(format!("bad integer `{text}` in header")))?;
                // Python 2 wrote long integers with an `L` suffix.
                if matches!(self.s.get(self.pos), Some(b'L' | b'l')) {
                    self.pos += 1;
                }
                Ok(Value::Int(n))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.pos;
                while self.pos < self.s.len() && self.s[self.pos].is_ascii_alphanumeric() {
                    self.pos += 1;
                }
                match &self.s[start..self.pos] {
                    b"True" => Ok(Value::Bool(true)),
                    b"False" => Ok(Value::Bool(false)),
                    b"None" => Ok(Value::None),
                    w => Err(bad(format!(
                        "unexpected word `{}`",
                        String::from_utf8_lossy(w)
                    ))),
                }
            }
            Some(c) => Err(bad(format!(
                "unexpected character '{}' at byte {}",
                c as char, self.pos
            ))),
            None => Err(bad("header ends early".to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(descr: &str, fo: bool, shape: &[usize]) -> Header {
        let h = header_bytes(descr, fo, shape).unwrap();
        assert_eq!(h.len() % ALIGN, 0, "header not aligned: {}", h.len());
        assert_eq!(h.last(), Some(&b'\n'));
        let (n, pre) = parse_preamble(&h).unwrap();
        assert_eq!(pre + n, h.len());
        parse_dict(&h[pre..], h.len()).unwrap()
    }

    #[test]
    fn header_roundtrip_and_alignment() {
        let h = roundtrip("<f8", false, &[3]);
        assert_eq!(h.shape, vec![3]);
        assert_eq!(h.dtype.kind, DKind::Float);
        assert_eq!(h.dtype.size, 8);
        assert_eq!(h.len, 128);
        let h = roundtrip("<i4", false, &[]);
        assert!(h.shape.is_empty());
        assert_eq!(h.count(), Some(1));
        let h = roundtrip("|S3", false, &[]);
        assert_eq!(h.dtype.kind, DKind::Bytes);
        assert_eq!(h.dtype.size, 3);
        let h = roundtrip("<c16", true, &[2, 3, 4]);
        assert_eq!(h.shape, vec![2, 3, 4]);
        assert!(h.fortran_order);
        let h = roundtrip("<i8", false, &[usize::MAX / 16]);
        assert_eq!(h.shape, vec![usize::MAX / 16]);
        assert!(h.len % 64 == 0);
    }

    #[test]
    fn header_text_matches_numpy() {
        let h = header_bytes("<f8", false, &[3]).unwrap();
        let text = std::str::from_utf8(&h[10..]).unwrap();
        assert!(text.starts_with("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"));
        let h = header_bytes("<i8", false, &[2, 5]).unwrap();
        assert!(std::str::from_utf8(&h[10..])
            .unwrap()
            .contains("'shape': (2, 5), }"));
        let h = header_bytes("<i8", false, &[]).unwrap();
        assert!(std::str::from_utf8(&h[10..])
            .unwrap()
            .contains("'shape': (), }"));
    }

    #[test]
    fn parses_variants() {
        let d = br#"{"shape": (4L, 2), "fortran_order": False, "descr": "<u2", "extra": None}"#;
        let h = parse_dict(d, 99).unwrap();
        assert_eq!(h.shape, vec![4, 2]);
        assert_eq!(h.dtype.kind, DKind::UInt);
        assert_eq!(h.dtype.size, 2);
        assert!(parse_dict(b"{'descr': '|b1', 'fortran_order': False, 'shape': ()}", 1).is_ok());
    }

    #[test]
    fn rejects_bad_headers() {
        let cases: &[&[u8]] = &[
            b"",
            b"{",
            b"{'descr': '<f8', 'fortran_order': False}",
            b"{'descr': '<f8', 'fortran_order': 0, 'shape': (1,)}",
            b"{'descr': '<f8', 'fortran_order': False, 'shape': (-1,)}",
            b"{'descr': '<x8', 'fortran_order': False, 'shape': (1,)}",
            b"{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,)}",
            b"{'descr': '<f8', 'fortran_order': False, 'shape': (1,)} junk",
            b"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999)}",
            b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
            b"\xff\xfe",
        ];
        for c in cases {
            assert!(
                parse_dict(c, 0).is_err(),
                "accepted {:?}",
                String::from_utf8_lossy(c)
            );
        }
        assert!(matches!(
            parse_dict(
                b"{'descr': '>f8', 'fortran_order': False, 'shape': (1,)}",
                0
            ),
            Err(NpzErrorKind::BigEndian(_))
        ));
        assert!(parse_dict(
            b"{'descr': '>u1', 'fortran_order': False, 'shape': (1,)}",
            0
        )
        .is_ok());
        assert!(parse_preamble(b"\x93NUMPX\x01\x00\x10\x00").is_err());
        assert!(parse_preamble(b"\x93NUMPY\x09\x00\x10\x00").is_err());
        assert!(parse_preamble(b"\x93NUMPY").is_err());
    }
}
