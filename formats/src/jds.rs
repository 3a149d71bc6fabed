//! jds format (being written).
