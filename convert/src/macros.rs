//! The public conversion functions, written once: `par` and `serial`
//! instantiate them with their execution policy.

/// Defines every public conversion as a thin wrapper over the shared
/// kernels of `imp`/`coo_csr`, run under the execution policy `$p`.
macro_rules! conversions {
    ($p:expr) => {
        /// COO → CSR: sorts by (row, column) and sums duplicates (left to right,
        /// in input order), the convention of SciPy and Ginkgo.
        #[must_use]
        pub fn coo_to_csr<T: Scalar, I: Index>(coo: &Coo<T, I>) -> Csr<T, I> {
            crate::coo_csr::coo_to_csr($p, coo)
        }

        /// CSR → COO, in row-major order.
        #[must_use]
        pub fn csr_to_coo<T: Scalar, I: Index>(a: &Csr<T, I>) -> Coo<T, I> {
            imp::csr_to_coo($p, a)
        }

        /// CSR → ELL. `width` defaults to the longest row.
        ///
        /// # Errors
        /// [`ConvertError::ZeroWidth`], [`ConvertError::WidthAboveNcols`],
        /// [`ConvertError::EllWidthTooSmall`] (suggests HYB) for a bad width;
        /// [`ConvertError::EllFill`] when padding would exceed
        /// [`MAX_ELL_FILL`](crate::MAX_ELL_FILL) times the entries (and
        /// [`ELL_FILL_MIN_SLOTS`](crate::ELL_FILL_MIN_SLOTS) slots) unless
        /// `allow_fill`; [`ConvertError::Format`] if the slots overflow `I`.
        pub fn csr_to_ell<T: Scalar, I: Index>(
            a: &Csr<T, I>,
            width: Option<usize>,
            allow_fill: bool,
        ) -> Result<Ell<T, I>, ConvertError> {
            imp::csr_to_ell($p, a, width, allow_fill)
        }

        /// CSR → HYB: the first `width` entries of each row in ELL, the rest in a
        /// COO tail ordered by (row, column).
        ///
        /// # Errors
        /// [`ConvertError::ZeroWidth`], [`ConvertError::WidthAboveNcols`] for a
        /// bad fixed width; [`ConvertError::Format`] if the slots overflow `I`.
        pub fn csr_to_hyb<T: Scalar, I: Index>(
            a: &Csr<T, I>,
            width: HybWidth,
        ) -> Result<Hyb<T, I>, ConvertError> {
            imp::csr_to_hyb($p, a, width)
        }

        /// CSR → JDS (rows stably sorted by descending length).
        #[must_use]
        pub fn csr_to_jds<T: Scalar, I: Index>(a: &Csr<T, I>) -> Jds<T, I> {
            imp::csr_to_jds($p, a)
        }

        /// CSR → SELL-C-σ with slice height `slice` (C) and window `sigma`.
        ///
        /// # Errors
        /// [`ConvertError::ZeroSlice`], [`ConvertError::BadSigma`] (σ must be 1 or
        /// a multiple of C); [`ConvertError::Format`] if the slots overflow `I`.
        pub fn csr_to_sell<T: Scalar, I: Index>(
            a: &Csr<T, I>,
            slice: usize,
            sigma: usize,
        ) -> Result<Sell<T, I>, ConvertError> {
            imp::csr_to_sell($p, a, slice, sigma)
        }

        /// CSR → CSC: a stable counting sort by column (rows ascending in
        /// every column). The CSC's arrays are the CSR of the transpose.
        #[must_use]
        pub fn csr_to_csc<T: Scalar, I: Index>(a: &Csr<T, I>) -> Csc<T, I> {
            imp::csr_to_csc($p, a)
        }

        /// `Aᵀ` in CSR (`ncols x nrows`) from `A` in CSR: the kernel of
        /// [`csr_to_csc`] and [`csc_to_csr`].
        #[must_use]
        pub fn transpose<T: Scalar, I: Index>(a: &Csr<T, I>) -> Csr<T, I> {
            imp::transpose($p, a)
        }

        to_csr!($p; csc_to_csr(Csc, "CSC → CSR (the transpose of the CSR its arrays form)."),
            ell_to_csr(Ell, "ELL → CSR."), hyb_to_csr(Hyb, "HYB → CSR."),
            jds_to_csr(Jds, "JDS → CSR."), sell_to_csr(Sell, "SELL → CSR."));
    };
}

/// The infallible `X → CSR` wrappers of `conversions!`, one per
/// `name(Format, "doc")`, each calling `imp::name` under the policy `$p`.
macro_rules! to_csr {
    ($p:expr; $($name:ident($format:ident, $doc:literal)),* $(,)?) => {
        $(
            #[doc = $doc]
            #[must_use]
            pub fn $name<T: Scalar, I: Index>(m: &$format<T, I>) -> Csr<T, I> {
                imp::$name($p, m)
            }
        )*
    };
}
