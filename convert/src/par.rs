//! Parallel conversions on the current rayon pool (also re-exported at the crate root). Same kernels, same output as [`crate::serial`], for any thread count.

use sparsetool_formats::{Coo, Csc, Csr, Ell, Hyb, Index, Jds, Scalar, Sell};

use crate::imp;
use crate::util::Par;
use crate::{ConvertError, HybWidth};

conversions!(Par::Rayon);
