//! Matrix Market I/O (being written).
