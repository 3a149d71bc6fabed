//! Conversion parameters and the rules that pick defaults.

use sparsetool_formats::{FormatKind, Index, Layout, Sell};

use crate::ConvertError;

/// How the ELL width of a HYB matrix is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HybWidth {
    /// This width (at least 1, at most `ncols`).
    Fixed(usize),
    /// CUSP's rule ([`hyb_auto_width`]).
    #[default]
    Auto,
}

/// Parameters of [`convert`](crate::convert); each applies to one target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertParams {
    /// ELL width; `None` means the longest row.
    pub ell_width: Option<usize>,
    /// HYB ELL width.
    pub hyb_width: HybWidth,
    /// SELL slice height C (default 32, one warp).
    pub slice: usize,
    /// SELL sorting window σ; `None` means `32 * slice`
    /// ([`Sell::default_sigma`]).
    pub sigma: Option<usize>,
    /// Accept ELL padding beyond the fill guard ([`MAX_ELL_FILL`]).
    pub allow_fill: bool,
}

impl Default for ConvertParams {
    fn default() -> Self {
        Self {
            ell_width: None,
            hyb_width: HybWidth::Auto,
            slice: Sell::<f64, i32>::DEFAULT_SLICE_HEIGHT,
            sigma: None,
            allow_fill: false,
        }
    }
}

impl ConvertParams {
    /// σ to use: the given one or the default for the slice height.
    #[must_use]
    pub fn sigma_or_default(&self) -> usize {
        self.sigma
            .unwrap_or_else(|| Sell::<f64, i32>::default_sigma(self.slice))
    }

    /// The parameters that build `layout` (its widths, C and σ; the ELL fill
    /// guard off, since the layout names its width on purpose).
    ///
    /// ```
    /// use sparsetool_convert::{ConvertParams, HybWidth};
    /// use sparsetool_formats::Layout;
    /// let p = ConvertParams::for_layout(&Layout::Hyb { width: 6 });
    /// assert_eq!(p.hyb_width, HybWidth::Fixed(6));
    /// ```
    #[must_use]
    pub fn for_layout(layout: &Layout) -> Self {
        let d = Self {
            allow_fill: true,
            ..Self::default()
        };
        match *layout {
            Layout::Csr | Layout::Coo | Layout::Jds => d,
            Layout::Ell { width } => Self {
                ell_width: Some(width as usize),
                ..d
            },
            Layout::Hyb { width } => Self {
                hyb_width: HybWidth::Fixed(width as usize),
                ..d
            },
            Layout::Sell { slice, sigma } => Self {
                slice: slice as usize,
                sigma: Some(sigma as usize),
                ..d
            },
        }
    }
}

/// ELL is refused when its slots exceed this many times the entries...
pub const MAX_ELL_FILL: usize = 3;
/// ...and there are more than this many slots (small matrices always pass).
pub const ELL_FILL_MIN_SLOTS: usize = 1 << 20;

/// CUSP's HYB width rule (`compute_optimal_entries_per_row`, relative speed
/// 3, break-even 4096): the smallest `k` such that fewer than
/// `max(4096, nrows / 3)` rows are longer than `k` — i.e. the ELL part is
/// as wide as the number of rows that would fill it justifies, and the
/// rest goes to the COO tail. Small matrices (under 4096 rows) get width 0
/// (all COO). The `analyze` crate is meant to replace this rule with one
/// driven by the measured row-length histogram.
#[must_use]
pub fn hyb_auto_width(row_lengths: impl Iterator<Item = usize>, nrows: usize) -> usize {
    // A histogram of the lengths (its size is the longest row's, not the
    // row count's: the out-of-core path calls this on mapped rows).
    let mut hist = Vec::<usize>::new();
    for l in row_lengths {
        if l >= hist.len() {
            hist.resize(l + 1, 0);
        }
        hist[l] += 1;
    }
    let max = hist.len().saturating_sub(1);
    let mut rows = nrows;
    for (i, h) in hist.iter().enumerate().take(max) {
        rows -= h;
        if 3 * rows < nrows || rows < 4096 {
            return i;
        }
    }
    max
}

/// Checks SELL parameters.
pub(crate) fn check_sell(slice: usize, sigma: usize) -> Result<(), ConvertError> {
    if slice == 0 {
        return Err(ConvertError::ZeroSlice);
    }
    if sigma == 0 || (sigma != 1 && sigma % slice != 0) {
        return Err(ConvertError::BadSigma { sigma, slice });
    }
    Ok(())
}

/// Checks an explicit width for `format`.
pub(crate) fn check_width(
    format: FormatKind,
    width: usize,
    ncols: usize,
) -> Result<(), ConvertError> {
    if width == 0 {
        return Err(ConvertError::ZeroWidth { format });
    }
    if width > ncols {
        return Err(ConvertError::WidthAboveNcols {
            format,
            width,
            ncols,
        });
    }
    Ok(())
}

/// `nrows * width` slots, or an overflow error for index type `I`.
pub(crate) fn slots<I: Index>(nrows: usize, width: usize) -> Result<usize, ConvertError> {
    match nrows.checked_mul(width) {
        Some(v) if v <= I::MAX_USIZE => Ok(v),
        v => Err(sparsetool_formats::FormatError::IndexOverflow {
            what: "nrows * width",
            value: v.unwrap_or(usize::MAX),
            index: I::NAME,
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cusp_rule() {
        // Small matrices: all COO.
        assert_eq!(hyb_auto_width([3, 3, 3].into_iter(), 3), 0);
        // 10000 rows of 5 and 100 rows of 50: width 5.
        let lens = std::iter::repeat_n(5, 10_000).chain(std::iter::repeat_n(50, 100));
        assert_eq!(hyb_auto_width(lens, 10_100), 5);
        assert_eq!(hyb_auto_width(std::iter::empty(), 0), 0);
    }
}
