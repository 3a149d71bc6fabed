//! ell format (being written).
