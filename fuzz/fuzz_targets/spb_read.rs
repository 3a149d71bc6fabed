#![no_main]
//! Fuzz target: the .spb reader (see `sparsetool_fuzz::fuzz_spb`).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sparsetool_fuzz::fuzz_spb(data);
});
