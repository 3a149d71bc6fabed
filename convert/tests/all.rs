//! Integration tests of sparsetool-convert (one test binary).

mod common;
mod errors;
mod ooc;
mod props;
mod real;
mod seeds;
