#![no_main]
//! Fuzz target: the Matrix Market reader (see `sparsetool_fuzz::fuzz_mm`).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sparsetool_fuzz::fuzz_mm(data);
});
