//! `.npz` I/O (being written).
