//! One module per subcommand.

pub mod bench;
pub mod convert;
pub mod gen;
pub mod info;
pub mod spmv;
