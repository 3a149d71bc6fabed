#![no_main]
//! Fuzz target: `.npz` shapes, dtypes and values, strict and lenient (see `sparsetool_fuzz::fuzz_npz_values`).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sparsetool_fuzz::fuzz_npz_values(data);
});
