//! The application the members run on the records they process.

pub mod join;
pub mod recovery;
pub mod standby;
