//! Choosing concrete value and index types at run time.
//!
//! Every command is written once, generic over the value type `T` and index
//! type `I`; [`with_types!`] picks the instantiation from the input (complex
//! or real values, whether 32-bit indices suffice) and `--dtype`.

/// Calls `f::<T, I>(args...)` for the types a
/// [`Probe`](sparsetool_formats::io::Probe) and a [`Precision`](sparsetool_formats::Precision) ask for.
macro_rules! with_types {
    ($plan:expr, $dtype:expr, $f:ident ( $($arg:expr),* $(,)? )) => {{
        use sparsetool_formats::{Complex32, Complex64};
        use sparsetool_formats::Precision as P;
        let plan: sparsetool_formats::io::Probe = $plan;
        match (plan.complex, $dtype, plan.needs_i64) {
            (false, P::F64, false) => $f::<f64, i32>($($arg),*),
            (false, P::F64, true) => $f::<f64, i64>($($arg),*),
            (false, P::F32, false) => $f::<f32, i32>($($arg),*),
            (false, P::F32, true) => $f::<f32, i64>($($arg),*),
            (true, P::F64, false) => $f::<Complex64, i32>($($arg),*),
            (true, P::F64, true) => $f::<Complex64, i64>($($arg),*),
            (true, P::F32, false) => $f::<Complex32, i32>($($arg),*),
            (true, P::F32, true) => $f::<Complex32, i64>($($arg),*),
        }
    }};
}
pub(crate) use with_types;
