#![no_main]
//! Fuzz target: the .npz reader (see `sparsetool_fuzz::fuzz_npz`).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sparsetool_fuzz::fuzz_npz(data);
});
