//! Names of the storage formats.

/// One of the storage formats sparsetool knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FormatKind {
    /// Coordinate triplets.
    Coo,
    /// Compressed sparse row.
    Csr,
    /// ELLPACK (fixed width, slot-major).
    Ell,
    /// Hybrid: ELL part plus a COO tail.
    Hyb,
    /// Jagged diagonal storage.
    Jds,
    /// Sliced ELL with sorting windows (SELL-C-sigma).
    Sell,
    /// Compressed sparse column (the arrays of the CSR of the transpose).
    Csc,
}

impl FormatKind {
    /// All formats, in a stable order.
    pub const ALL: [FormatKind; 7] = [
        FormatKind::Coo,
        FormatKind::Csr,
        FormatKind::Ell,
        FormatKind::Hyb,
        FormatKind::Jds,
        FormatKind::Sell,
        FormatKind::Csc,
    ];

    /// Lower-case name as used on the command line and in files.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            FormatKind::Coo => "coo",
            FormatKind::Csr => "csr",
            FormatKind::Ell => "ell",
            FormatKind::Hyb => "hyb",
            FormatKind::Jds => "jds",
            FormatKind::Sell => "sell",
            FormatKind::Csc => "csc",
        }
    }

    /// One line saying what the format is (for help texts).
    #[must_use]
    pub fn description(self) -> &'static str {
        match self {
            FormatKind::Coo => "Coordinate triplets.",
            FormatKind::Csr => "Compressed sparse row.",
            FormatKind::Ell => "ELLPACK: every row padded to one width, slot-major.",
            FormatKind::Hyb => "ELL part plus a COO tail for long rows.",
            FormatKind::Jds => "Jagged diagonals (rows sorted by length).",
            FormatKind::Sell => "Sliced ELL with sorting windows (SELL-C-sigma).",
            FormatKind::Csc => "Compressed sparse column (column scatter; y = A^T x as CSR).",
        }
    }
}

/// `Display` as `name()` and `FromStr` by `name()` (case-insensitive) over
/// `ALL`, for the small name enums of this crate (a macro: the impls differ
/// only in the type and its error).
macro_rules! named {
    ($t:ty, $err:ident) => {
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
        impl std::str::FromStr for $t {
            type Err = $err;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                <$t>::ALL
                    .into_iter()
                    .find(|k| k.name().eq_ignore_ascii_case(s))
                    .ok_or_else(|| $err(s.to_string()))
            }
        }
    };
}
pub(crate) use named;

named!(FormatKind, UnknownFormat);

/// Error for an unknown format name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format `{0}` (expected one of coo, csr, ell, hyb, jds, sell, csc)")]
pub struct UnknownFormat(pub String);
