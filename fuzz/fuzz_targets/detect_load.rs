#![no_main]
//! Fuzz target: container detection and loading as the command line does them (see `sparsetool_fuzz::fuzz_detect_load`).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sparsetool_fuzz::fuzz_detect_load(data);
});
