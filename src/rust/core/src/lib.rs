//! Protocol core of mcplite: the server, everything of it that does not
//! need R (the developer tools, client and checks, are `mcplite_devtools`).
//!
//! The R side is reached only through [`dispatch::ToolHost`] (running tools),
//! [`r::RValue`] (reading R objects) and [`r::RBuilder`] (making them), so every
//! rule here is testable with plain `cargo test`. See `src/rust/ARCHITECTURE.md`.

pub mod dispatch;
pub mod envelope;
pub mod json;
pub mod progress;
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
