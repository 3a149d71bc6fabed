//! Floating-point precision of values.

use crate::Scalar;

/// The precision of a matrix's values: what `--dtype` asks for, what a GPU
/// kernel is compiled for, and what a byte model assumes. Complex values
/// have two parts of this precision (`F32`: complex64, `F64`: complex128).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Precision {
    /// 32-bit floats (complex: complex64).
    F32,
    /// 64-bit floats (complex: complex128).
    #[default]
    F64,
}

impl Precision {
    /// Both precisions.
    pub const ALL: [Precision; 2] = [Precision::F32, Precision::F64];

    /// `f32` or `f64`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }

    /// Bytes of one real value (4 or 8).
    #[must_use]
    pub fn size(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }

    /// The precision of `T`'s parts (`Complex32` is `F32`).
    #[must_use]
    pub fn of<T: Scalar>() -> Self {
        let part = std::mem::size_of::<T>() / if T::IS_COMPLEX { 2 } else { 1 };
        if part == 4 {
            Precision::F32
        } else {
            Precision::F64
        }
    }
}

crate::kind::named!(Precision, UnknownPrecision);

/// Error for an unknown precision name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown precision `{0}` (expected f32 or f64)")]
pub struct UnknownPrecision(pub String);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Complex32, Complex64};

    #[test]
    fn of_names_and_parse() {
        assert_eq!(Precision::of::<f32>(), Precision::F32);
        assert_eq!(Precision::of::<Complex32>(), Precision::F32);
        assert_eq!(Precision::of::<f64>(), Precision::F64);
        assert_eq!(Precision::of::<Complex64>(), Precision::F64);
        for p in Precision::ALL {
            assert_eq!(p.name().parse::<Precision>(), Ok(p));
            assert_eq!(p.to_string(), p.name());
        }
        assert_eq!("F32".parse::<Precision>(), Ok(Precision::F32));
        assert!("f16".parse::<Precision>().is_err());
        assert_eq!(Precision::F32.size(), 4);
    }
}
