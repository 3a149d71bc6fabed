//! A storage layout: a format with the parameters that fix its arrays.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::kind::FormatKind;

/// A storage layout: one of the formats with the parameters that decide
/// what it stores (ELL and HYB widths, SELL slice height and sorting
/// window). The candidates of `sparsetool analyze`, the layouts of
/// `sparsetool bench --sweep` and the labels in their JSON are all
/// `Layout`s.
///
/// Its text form (`Display`, `FromStr`, serde) is the label stored in the
/// bench results: `csr`, `coo`, `jds`, `ell-<width>`, `hyb-<width>`,
/// `sell-<C>-<σ>`.
///
/// ```
/// use sparsetool_formats::{FormatKind, Layout};
/// let l: Layout = "sell-32-1024".parse().unwrap();
/// assert_eq!(l, Layout::Sell { slice: 32, sigma: 1024 });
/// assert_eq!(l.kind(), FormatKind::Sell);
/// assert_eq!(l.to_string(), "sell-32-1024");
/// assert!("sell-32".parse::<Layout>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layout {
    /// Compressed sparse row.
    Csr,
    /// Coordinate triplets.
    Coo,
    /// ELLPACK with this many slots per row.
    Ell {
        /// Slots per row.
        width: u64,
    },
    /// HYB: an ELL part of this width, the rest in a COO tail.
    Hyb {
        /// Width of the ELL part.
        width: u64,
    },
    /// Jagged diagonal storage.
    Jds,
    /// SELL-C-σ (σ = 1: unsorted, as cuSPARSE's sliced ELL stores it).
    Sell {
        /// Slice height C.
        slice: u64,
        /// Sorting window σ.
        sigma: u64,
    },
}

impl Layout {
    /// The format of this layout.
    #[must_use]
    pub fn kind(&self) -> FormatKind {
        match self {
            Layout::Csr => FormatKind::Csr,
            Layout::Coo => FormatKind::Coo,
            Layout::Ell { .. } => FormatKind::Ell,
            Layout::Hyb { .. } => FormatKind::Hyb,
            Layout::Jds => FormatKind::Jds,
            Layout::Sell { .. } => FormatKind::Sell,
        }
    }

    /// The parameters by the names the JSON reports use: `ell_width`,
    /// `hyb_width`, `slice` and `sigma` (none for CSR, COO and JDS).
    ///
    /// ```
    /// use sparsetool_formats::Layout;
    /// let p = Layout::Hyb { width: 6 }.params();
    /// assert_eq!(p.into_iter().collect::<Vec<_>>(), [("hyb_width".to_string(), 6)]);
    /// ```
    #[must_use]
    pub fn params(&self) -> BTreeMap<String, u64> {
        let pairs: &[(&str, u64)] = match *self {
            Layout::Csr | Layout::Coo | Layout::Jds => &[],
            Layout::Ell { width } => &[("ell_width", width)],
            Layout::Hyb { width } => &[("hyb_width", width)],
            Layout::Sell { slice, sigma } => &[("slice", slice), ("sigma", sigma)],
        };
        pairs.iter().map(|&(k, v)| (k.to_string(), v)).collect()
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Layout::Ell { width } | Layout::Hyb { width } => write!(f, "{}-{width}", self.kind()),
            Layout::Sell { slice, sigma } => write!(f, "sell-{slice}-{sigma}"),
            Layout::Csr | Layout::Coo | Layout::Jds => f.write_str(self.kind().name()),
        }
    }
}

/// Error for text that is not a layout label.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown layout `{0}` (expected csr, coo, jds, ell-<width>, hyb-<width> or sell-<C>-<sigma>)"
)]
pub struct UnknownLayout(pub String);

impl FromStr for Layout {
    type Err = UnknownLayout;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || UnknownLayout(s.to_string());
        let mut parts = s.split('-');
        let kind: FormatKind = parts.next().unwrap_or("").parse().map_err(|_| bad())?;
        let nums: Vec<u64> = parts
            .map(|p| p.parse().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        Ok(match (kind, nums.as_slice()) {
            (FormatKind::Csr, []) => Layout::Csr,
            (FormatKind::Coo, []) => Layout::Coo,
            (FormatKind::Jds, []) => Layout::Jds,
            (FormatKind::Ell, &[width]) => Layout::Ell { width },
            (FormatKind::Hyb, &[width]) => Layout::Hyb { width },
            (FormatKind::Sell, &[slice, sigma]) => Layout::Sell { slice, sigma },
            _ => return Err(bad()),
        })
    }
}

impl Serialize for Layout {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Layout {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip() {
        let all = [
            Layout::Csr,
            Layout::Coo,
            Layout::Jds,
            Layout::Ell { width: 5 },
            Layout::Hyb { width: 6 },
            Layout::Sell {
                slice: 32,
                sigma: 1,
            },
            Layout::Sell {
                slice: 128,
                sigma: 4096,
            },
        ];
        for l in all {
            let text = l.to_string();
            assert_eq!(text.parse::<Layout>(), Ok(l), "{text}");
            assert!(text.starts_with(l.kind().name()));
        }
        assert_eq!(Layout::Ell { width: 5 }.to_string(), "ell-5");
        for bad in [
            "",
            "csr-1",
            "ell",
            "ell-x",
            "hyb-1-2",
            "sell-32",
            "dia",
            "sell-32-1-",
        ] {
            assert!(bad.parse::<Layout>().is_err(), "{bad}");
        }
    }
}
