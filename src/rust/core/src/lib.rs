//! Protocol core of mcplite: everything that does not need R.

pub mod rjson;
