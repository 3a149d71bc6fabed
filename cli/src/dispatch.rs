//! Choosing concrete value and index types at run time.
//!
//! Every command is written once, generic over the value type `T` and index
//! type `I`; [`with_types!`] picks the instantiation from the input (complex
//! or real values, whether 32-bit indices suffice) and `--dtype`.

use sparsetool_formats::npz::NpyElement;
use sparsetool_formats::{Index, Scalar};

/// A value type the CLI can read and write.
pub trait Val: Scalar + NpyElement {}
impl<T: Scalar + NpyElement> Val for T {}

/// An index type the CLI can read and write.
pub trait Idx: Index + NpyElement {}
impl<I: Index + NpyElement> Idx for I {}

/// What the input needs: complex values, 64-bit indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypePlan {
    /// Values are complex.
    pub complex: bool,
    /// Indices or counts exceed `i32`.
    pub wide: bool,
}

/// Calls `f::<T, I>(args...)` for the types a [`TypePlan`] and a `DType` ask for.
macro_rules! with_types {
    ($plan:expr, $dtype:expr, $f:ident ( $($arg:expr),* $(,)? )) => {{
        use sparsetool_formats::{Complex32, Complex64};
        use $crate::args::DType;
        let plan: $crate::dispatch::TypePlan = $plan;
        match (plan.complex, $dtype, plan.wide) {
            (false, DType::F64, false) => $f::<f64, i32>($($arg),*),
            (false, DType::F64, true) => $f::<f64, i64>($($arg),*),
            (false, DType::F32, false) => $f::<f32, i32>($($arg),*),
            (false, DType::F32, true) => $f::<f32, i64>($($arg),*),
            (true, DType::F64, false) => $f::<Complex64, i32>($($arg),*),
            (true, DType::F64, true) => $f::<Complex64, i64>($($arg),*),
            (true, DType::F32, false) => $f::<Complex32, i32>($($arg),*),
            (true, DType::F32, true) => $f::<Complex32, i64>($($arg),*),
        }
    }};
}
pub(crate) use with_types;
