//! Integration tests of sparsetool-convert (one test binary).

mod common;
mod errors;
mod props;
mod real;
mod seeds;
