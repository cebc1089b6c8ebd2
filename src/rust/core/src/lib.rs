//! Protocol core of mcplite: everything that does not need R.
//!
//! The R side is reached only through [`dispatch::ToolHost`] (running tools),
//! [`r::RValue`] (reading R objects) and [`r::RBuilder`] (making them), so every
//! rule here is testable with plain `cargo test`. See `src/rust/ARCHITECTURE.md`.

pub mod check;
pub mod client;
pub mod config_file;
pub mod conformance;
pub mod dispatch;
pub mod envelope;
pub mod json;
pub mod platform;
pub mod projection;
pub mod r;
pub mod requests;
pub mod result;
pub mod rjson;
pub mod serve;
pub mod telemetry;
pub mod transport;
pub mod version;
pub mod wire;

pub use dispatch::{Server, ServerInfo, Tool, ToolHost};
pub use serve::{serve, Ending};
