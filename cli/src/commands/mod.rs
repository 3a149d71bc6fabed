//! One module per subcommand.

pub mod analyze;
pub mod bench;
pub mod calibrate;
pub mod convert;
pub mod dist;
pub mod extra;
pub mod gen;
pub mod info;
pub mod ooc;
pub mod spmv;
