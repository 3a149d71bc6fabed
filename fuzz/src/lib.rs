//! The fuzz harness. The checks live in the formats crate's tests, so the
//! fuzz targets, `formats/tests/fuzz_regressions.rs` and
//! `formats/tests/fuzz_props.rs` run exactly the same code.

#[path = "../../formats/tests/fuzz_common/mod.rs"]
mod common;

pub use common::*;
