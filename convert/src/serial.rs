//! Serial conversions: one block on the calling thread. Same kernels, same output as [`crate::par`].

use sparsetool_formats::{Coo, Csc, Csr, Ell, Hyb, Index, Jds, Scalar, Sell};

use crate::imp;
use crate::util::Par;
use crate::{ConvertError, HybWidth};

conversions!(Par::Seq);
