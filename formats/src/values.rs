//! The validity rule for stored values, the same for every container, and
//! the escaping of input text quoted in messages.
//!
//! # Values
//! Every value a reader hands out passes through this module: the Matrix
//! Market parser judges each token with [`judge`]; the `.npz` and `.spb`
//! readers convert whole arrays with [`ValueCheck`]. The rule:
//!
//! - a value stored as NaN or ±infinity is an error
//!   ([`ValueFault::NonFinite`]); in lenient mode it is accepted and the
//!   first one is reported as a warning;
//! - a finite stored value that does not fit the value type asked for
//!   (e.g. `1e39` read into `f32`) is an error in both modes
//!   ([`ValueFault::OutOfRange`]): it would silently become an infinity.
//!
//! ```
//! use sparsetool_formats::values::{ValueCheck, ValueFault};
//! let mut strict = ValueCheck::new(false);
//! let err = strict.convert_all::<f32, _>(&[1.0, 1e39], |&v| (v, 0.0)).unwrap_err();
//! assert_eq!((err.pos, err.fault), (1, ValueFault::OutOfRange { ty: "f32" }));
//! let mut lenient = ValueCheck::new(true);
//! let v = lenient.convert_all::<f64, _>(&[1.0, f64::NAN], |&v| (v, 0.0)).unwrap();
//! assert!(v[1].is_nan());
//! assert_eq!(lenient.first_non_finite(), Some(1));
//! ```
//!
//! # Messages
//! File names, array names and data quoted in a message go through
//! [`escape`], so a control character in a name (an escape sequence, a
//! newline) cannot rewrite the terminal or split the one-line message.

use std::borrow::Cow;
use std::fmt;

use crate::Scalar;

/// What is wrong with one stored value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueFault {
    /// The value is stored as NaN or an infinity (accepted in lenient mode).
    NonFinite,
    /// A finite stored value overflows the value type (never accepted).
    OutOfRange {
        /// The type it should fit: `f32` (or `f64` for text).
        ty: &'static str,
    },
}

/// Judges one value: `stored_finite` says whether the value as stored is
/// finite, `converted_finite` whether it still is in the type read into
/// (`ty`). `None`: the value is valid.
#[inline]
#[must_use]
pub fn judge(stored_finite: bool, converted_finite: bool, ty: &'static str) -> Option<ValueFault> {
    if !stored_finite {
        Some(ValueFault::NonFinite)
    } else if !converted_finite {
        Some(ValueFault::OutOfRange { ty })
    } else {
        None
    }
}

/// The first invalid value of an array: its position, the value as stored
/// and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct BadValue {
    /// 0-based position in the array (in C order).
    pub pos: usize,
    /// The value as stored, printed (`NaN`, `inf`, `1e39`, `(1+nanj)`).
    pub value: String,
    /// What is wrong.
    pub fault: ValueFault,
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.fault {
            ValueFault::NonFinite => write!(
                f,
                "holds the non-finite value {} at position {}; use --lenient to accept NaN and infinities",
                self.value, self.pos
            ),
            ValueFault::OutOfRange { ty } => write!(
                f,
                "holds the value {} at position {}, which is out of range for {ty}",
                self.value, self.pos
            ),
        }
    }
}

/// Prints a stored value for a message.
fn show(re: f64, im: f64, complex: bool) -> String {
    let one = |x: f64| {
        if x.is_nan() {
            "NaN".to_string()
        } else {
            format!("{x:e}")
        }
    };
    if complex {
        format!("({}, {})", one(re), one(im))
    } else {
        one(re)
    }
}

/// Applies the rule to the arrays of one read (`.npz`, `.spb`): converts
/// values, refuses what the rule refuses, and remembers the first value
/// accepted only because of lenient mode.
#[derive(Debug, Clone, Default)]
pub struct ValueCheck {
    lenient: bool,
    first_non_finite: Option<usize>,
}

impl ValueCheck {
    /// A check in strict (`lenient == false`) or lenient mode.
    #[must_use]
    pub fn new(lenient: bool) -> Self {
        Self {
            lenient,
            first_non_finite: None,
        }
    }

    /// The position of the first NaN or infinity accepted (lenient mode)
    /// by the last array checked, if any.
    #[must_use]
    pub fn first_non_finite(&self) -> Option<usize> {
        self.first_non_finite
    }

    /// Judges the value at `pos`, stored as `(re, im)` and converted to `v`.
    ///
    /// # Errors
    /// The value breaks the rule.
    #[inline]
    pub fn check_one<T: Scalar>(
        &mut self,
        pos: usize,
        re: f64,
        im: f64,
        v: T,
    ) -> Result<(), BadValue> {
        let stored = re.is_finite() && im.is_finite();
        if stored && v.is_finite() {
            return Ok(());
        }
        match judge(stored, v.is_finite(), component_name::<T>()) {
            None => Ok(()),
            Some(ValueFault::NonFinite) if self.lenient => {
                self.first_non_finite = self.first_non_finite.or(Some(pos));
                Ok(())
            }
            Some(fault) => Err(BadValue {
                pos,
                value: show(re, im, T::IS_COMPLEX),
                fault,
            }),
        }
    }

    /// Converts stored values to `T` (`parts` gives the real and imaginary
    /// part of a stored value as `f64`), checking each.
    ///
    /// # Errors
    /// The first value that breaks the rule.
    pub fn convert_all<T: Scalar, S>(
        &mut self,
        src: &[S],
        parts: impl Fn(&S) -> (f64, f64),
    ) -> Result<Vec<T>, BadValue> {
        self.first_non_finite = None;
        let mut out = Vec::with_capacity(src.len());
        for (pos, s) in src.iter().enumerate() {
            let (re, im) = parts(s);
            let v = T::from_parts(re, im);
            self.check_one(pos, re, im, v)?;
            out.push(v);
        }
        Ok(out)
    }

    /// Checks values already in their final type (read verbatim, no
    /// conversion): only NaN and infinities can be wrong. Large arrays are
    /// scanned in parallel.
    ///
    /// # Errors
    /// The first NaN or infinity, in strict mode.
    pub fn check_all<T: Scalar>(&mut self, vals: &[T]) -> Result<(), BadValue> {
        self.first_non_finite = None;
        let first = crate::pattern::first_bad(
            vals.len(),
            |r| !vals[r].iter().fold(true, |ok, v| ok & v.is_finite()),
            |i| !vals[i].is_finite(),
        );
        match first {
            None => Ok(()),
            Some(pos) => {
                let v = vals[pos];
                self.check_one(pos, v.re(), v.im(), v)
            }
        }
    }
}

/// `f32` or `f64`: the component type of `T`.
fn component_name<T: Scalar>() -> &'static str {
    if std::mem::size_of::<T>() == if T::IS_COMPLEX { 8 } else { 4 } {
        "f32"
    } else {
        "f64"
    }
}

/// Escapes control characters for a one-line message: `\n`, `\r`, `\t`,
/// `\0` and `\xNN` / `\u{NNNN}` for the others (escape, DEL, the C1
/// controls). Text without control characters is returned as is.
///
/// ```
/// use sparsetool_formats::values::escape;
/// assert_eq!(escape("a\x1b[31mb\n.mtx"), r"a\x1b[31mb\n.mtx");
/// assert_eq!(escape("plain.mtx"), "plain.mtx");
/// ```
#[must_use]
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`escape`] of a path as displayed (lossy UTF-8).
#[must_use]
pub fn escape_path(p: &std::path::Path) -> String {
    escape(&p.display().to_string()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_in_both_modes() {
        let mut s = ValueCheck::new(false);
        let e = s.check_all(&[1.0f64, f64::INFINITY]).unwrap_err();
        assert_eq!((e.pos, e.fault), (1, ValueFault::NonFinite));
        assert!(e.to_string().contains("--lenient"), "{e}");
        let e = s
            .convert_all::<f32, _>(&[0.5f64, -3e38, -4e38], |&v| (v, 0.0))
            .unwrap_err();
        assert_eq!(e.pos, 2);
        assert!(e.to_string().contains("out of range for f32"), "{e}");
        let mut l = ValueCheck::new(true);
        assert!(l.check_all(&[1.0f32, 2.0, f32::NAN]).is_ok());
        assert_eq!(l.first_non_finite(), Some(2));
        // Lenient mode never accepts an overflow.
        assert!(l.convert_all::<f32, _>(&[1e39f64], |&v| (v, 0.0)).is_err());
        // Complex: either part.
        let z = [crate::Complex64::new(1.0, f64::NAN)];
        let e = s.check_all(&z).unwrap_err();
        assert_eq!(e.value, "(1e0, NaN)");
        assert_eq!(judge(true, true, "f32"), None);
    }

    /// The block scan names the first bad value wherever it lies: in the
    /// first block, a later one, the last element, with a second one after.
    #[test]
    fn check_all_finds_the_first_bad_value_in_large_arrays() {
        let n = 5 * crate::pattern::PAR_THRESHOLD + 7;
        for at in [0, 1, 16_383, 16_384, 3 * 16_384 + 5, n - 1] {
            let mut v = vec![1.5f64; n];
            v[at] = f64::NAN;
            if at + 40_000 < n {
                v[at + 40_000] = f64::INFINITY;
            }
            let e = ValueCheck::new(false).check_all(&v).unwrap_err();
            assert_eq!(e.pos, at);
            let mut l = ValueCheck::new(true);
            assert!(l.check_all(&v).is_ok());
            assert_eq!(l.first_non_finite(), Some(at));
        }
        assert!(ValueCheck::new(false).check_all(&vec![2.0f32; n]).is_ok());
    }

    #[test]
    fn escapes_controls_only() {
        assert_eq!(escape("a\tb\r\0\u{7f}\u{9b}é"), "a\\tb\\r\\0\\x7f\\x9bé");
        assert!(matches!(escape("ok ü"), Cow::Borrowed(_)));
    }
}
