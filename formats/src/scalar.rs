//! Value types a matrix can hold ([`Scalar`]) and index types ([`Index`]).
//!
//! Real values are `f32`/`f64`. Complex values use [`num_complex::Complex`]
//! (`#[repr(C)]`, real part first), i.e. the same memory layout as NumPy's
//! `complex64`/`complex128` and CUDA's `cuFloatComplex`/`cuDoubleComplex`.
//! Integer Matrix Market files are read into real types; pattern files get the
//! value one for every stored entry.
//!
//! Indices are signed (`i32`, `i64`) because every consumer we target
//! (SciPy, NumPy, cuSPARSE, Ginkgo) uses signed indices and because the
//! padding sentinel of ELL/SELL layouts is `-1` ([`Index::PADDING`]).

use std::fmt::Debug;
use std::ops::{Add, AddAssign, Mul, Neg};

pub use num_complex::{Complex, Complex32, Complex64};

/// A value type stored in a sparse matrix.
pub trait Scalar:
    Copy
    + Send
    + Sync
    + Debug
    + Default
    + PartialEq
    + bytemuck::Pod
    + crate::npz::NpyElement
    + Add<Output = Self>
    + AddAssign
    + Mul<Output = Self>
    + Neg<Output = Self>
    + 'static
{
    /// Short type name used in reports: `f32`, `f64`, `c64`, `c128`.
    const NAME: &'static str;
    /// NumPy `.npy` type descriptor (little-endian), e.g. `<f8`.
    const NPY_DESCR: &'static str;
    /// Whether this is a complex type.
    const IS_COMPLEX: bool;
    /// Additive identity.
    fn zero() -> Self;
    /// Multiplicative identity.
    fn one() -> Self;
    /// Builds a value from a real and an imaginary part (the imaginary part
    /// is dropped for real types; callers check [`Scalar::IS_COMPLEX`] first).
    fn from_parts(re: f64, im: f64) -> Self;
    /// Real part as `f64`.
    fn re(self) -> f64;
    /// Imaginary part as `f64` (zero for real types).
    fn im(self) -> f64;
    /// Complex conjugate (identity for real types).
    fn conj(self) -> Self;
    /// Whether every component is finite (not NaN, not infinite).
    fn is_finite(self) -> bool;
    /// Squared modulus as `f64`, used for error norms.
    fn abs2(self) -> f64 {
        self.re() * self.re() + self.im() * self.im()
    }
}

macro_rules! real_scalar {
    ($t:ty, $name:expr, $descr:expr) => {
        impl Scalar for $t {
            const NAME: &'static str = $name;
            const NPY_DESCR: &'static str = $descr;
            const IS_COMPLEX: bool = false;
            #[inline]
            fn zero() -> Self {
                0.0
            }
            #[inline]
            fn one() -> Self {
                1.0
            }
            #[inline]
            fn from_parts(re: f64, _im: f64) -> Self {
                re as $t
            }
            #[inline]
            fn re(self) -> f64 {
                self as f64
            }
            #[inline]
            fn im(self) -> f64 {
                0.0
            }
            #[inline]
            fn conj(self) -> Self {
                self
            }
            #[inline]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
        }
    };
}
real_scalar!(f32, "f32", "<f4");
real_scalar!(f64, "f64", "<f8");

macro_rules! complex_scalar {
    ($t:ty, $name:expr, $descr:expr) => {
        impl Scalar for Complex<$t> {
            const NAME: &'static str = $name;
            const NPY_DESCR: &'static str = $descr;
            const IS_COMPLEX: bool = true;
            #[inline]
            fn zero() -> Self {
                Complex::new(0.0, 0.0)
            }
            #[inline]
            fn one() -> Self {
                Complex::new(1.0, 0.0)
            }
            #[inline]
            fn from_parts(re: f64, im: f64) -> Self {
                Complex::new(re as $t, im as $t)
            }
            #[inline]
            fn re(self) -> f64 {
                self.re as f64
            }
            #[inline]
            fn im(self) -> f64 {
                self.im as f64
            }
            #[inline]
            fn conj(self) -> Self {
                Complex::new(self.re, -self.im)
            }
            #[inline]
            fn is_finite(self) -> bool {
                self.re.is_finite() && self.im.is_finite()
            }
        }
    };
}
complex_scalar!(f32, "c64", "<c8");
complex_scalar!(f64, "c128", "<c16");

/// An index type: `i32` or `i64`.
///
/// Valid indices are non-negative; [`Index::PADDING`] (`-1`) marks padding
/// slots in ELL, HYB and SELL layouts.
pub trait Index:
    Copy
    + Send
    + Sync
    + Debug
    + Default
    + Ord
    + std::hash::Hash
    + bytemuck::Pod
    + crate::npz::NpyElement
    + 'static
{
    /// Short type name: `i32` or `i64`.
    const NAME: &'static str;
    /// NumPy `.npy` type descriptor (little-endian), e.g. `<i4`.
    const NPY_DESCR: &'static str;
    /// The padding sentinel, `-1`.
    const PADDING: Self;
    /// The largest value representable, as `usize`.
    const MAX_USIZE: usize;
    /// Converts from `usize`, `None` if it does not fit.
    fn from_usize(v: usize) -> Option<Self>;
    /// Converts from `usize` without checking (the caller knows it fits).
    fn from_usize_unchecked(v: usize) -> Self;
    /// Converts to `usize`. Negative values (the padding sentinel) map to
    /// `usize::MAX`, so a bounds check `idx < n` rejects them.
    fn to_usize(self) -> usize;
    /// Converts to `i64`.
    fn to_i64(self) -> i64;
}

macro_rules! index_impl {
    ($t:ty, $name:expr, $descr:expr) => {
        impl Index for $t {
            const NAME: &'static str = $name;
            const NPY_DESCR: &'static str = $descr;
            const PADDING: Self = -1;
            const MAX_USIZE: usize = <$t>::MAX as usize;
            #[inline]
            fn from_usize(v: usize) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
            #[inline]
            fn from_usize_unchecked(v: usize) -> Self {
                v as $t
            }
            #[inline]
            fn to_usize(self) -> usize {
                if self < 0 {
                    usize::MAX
                } else {
                    self as usize
                }
            }
            #[inline]
            fn to_i64(self) -> i64 {
                self as i64
            }
        }
    };
}
index_impl!(i32, "i32", "<i4");
index_impl!(i64, "i64", "<i8");

/// Whether every index and count of a matrix with these dimensions fits in
/// `I` (the rule SciPy uses to choose int32 over int64).
#[must_use]
pub fn fits_index<I: Index>(nrows: usize, ncols: usize, nnz: usize) -> bool {
    nrows.max(ncols).max(nnz) <= I::MAX_USIZE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_maps_out_of_range() {
        assert_eq!(<i32 as Index>::PADDING.to_usize(), usize::MAX);
        assert_eq!(5i64.to_usize(), 5);
        assert_eq!(<i32 as Index>::from_usize(1 << 31), None);
        assert!(fits_index::<i32>(10, 10, 100));
        assert!(!fits_index::<i32>(10, 10, 1 << 31));
    }

    #[test]
    fn complex_conj() {
        let z = Complex64::new(1.0, 2.0);
        assert_eq!(Scalar::conj(z), Complex64::new(1.0, -2.0));
        assert_eq!(Scalar::conj(3.0f32), 3.0);
    }
}
