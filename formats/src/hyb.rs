//! hyb format (being written).
