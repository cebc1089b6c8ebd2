//! The developer tools of mcplite, apart from the server: the stdio MCP
//! client behind `mcp_client()` ([`client`]), the checks of `mcp_check()`
//! ([`check`], [`conformance`]) and the configuration-file writer of
//! `mcp_config()` ([`config_file`]), with their OS-specific parts
//! ([`platform`]). Built on the protocol core (`mcplite_core`: JSON reader,
//! versions, wire names); the core never depends on this crate. See
//! `src/rust/ARCHITECTURE.md`.

pub mod check;
pub mod client;
pub mod config_file;
pub mod conformance;
pub mod platform;
pub(crate) mod schema;
