//! Output formats, one file each, each returning bytes (hyperfine's export layout).

pub mod fio_json;
pub mod iometer;
pub mod iozone;
pub mod json;
pub mod study_csv;
pub mod table;
