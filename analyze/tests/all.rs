//! Integration tests of sparsetool-analyze (one test binary).

mod calibration;
mod common;
mod plot;
mod recommend;
mod sell;
mod snapshots;
mod stats;
mod stream;
