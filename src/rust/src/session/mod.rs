//! Live sessions: tools served from the user's interactive R session
//! (`mcp_session()`, the `live` side) to the stdio server a client starts
//! (`mcp_session_server()`, the `forward` side, a `ToolHost`).
//!
//! The link: one Unix socket per session in this user's private session
//! directory (`platform::session_dir`; Windows: a named pipe only this user
//! may open, `platform::SessionListener`), next to a registration file (mode
//! 0600) that names the session and holds its socket path (pipe name) and a
//! random token. A connection sends the token first (`platform::has_token`), then
//! JSON lines both ways ([`Message`], serde; never R serialization). The
//! session answers `hello` and `list` on its own threads, from what
//! `mcp_session()` prepared with the core; a `call` waits for R's main
//! thread (later's event loop, at top level only) and runs through the core
//! exactly as in `mcp_server()`; the answer carries the result object the
//! session's core wrote for the version the server named. Progress reports
//! travel as the workers' relay lines (`progress::relay_line`, the call's
//! number as the task).

pub mod forward;
pub mod live;
pub mod run;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::time::Duration;

/// The longest line read on a link (a tool list or an answer included); a
/// longer one closes the link.
pub const MAX_LINE: u64 = 256 << 20;
/// How long a connection may take to send the token.
pub const TOKEN_WAIT: Duration = Duration::from_secs(1);
/// The largest registration file read.
pub const MAX_REGISTRATION: u64 = 64 << 10;

/// What a link line does.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// server -> session: who are you; session -> server: [`Message::name`] etc.
    Hello,
    /// server -> session: the tools; session -> server: [`Message::names`], [`Message::lists`].
    List,
    /// server -> session: run a tool.
    Call,
    /// server -> session: withdraw (waiting) or interrupt (running) a call.
    Cancel,
    /// session -> server: the call left the queue and runs now.
    Started,
    /// session -> server: the call's result.
    Answer,
    /// session -> server: `mcp_session()` was called again (ask for `list`).
    Changed,
    /// server -> worker: take back a call that has not started (another
    /// daemon is free).
    Withdraw,
    /// worker -> server: a call withdrawn (or cancelled) before it started;
    /// it never runs there.
    Withdrawn,
}

/// One link line; which fields it holds depends on [`Op`].
#[derive(Serialize, Deserialize, Debug)]
pub struct Message {
    pub op: Op,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
    /// The protocol version the call is answered in (its id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Box<RawValue>>,
    /// The call's request carried a progress token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names: Option<Vec<String>>,
    /// The `tools` array per version id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lists: Option<Vec<(String, Box<RawValue>)>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Box<RawValue>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Worker links (`worker_link`): the daemon's start time
    /// (`platform::process_start`), its R temporary directory, why it
    /// cannot serve (the script failed there), a call's traceparent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    /// A worker's answer: a number of its result was written as 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zeroed: Option<bool>,
}

impl Message {
    /// An `answer` that is a tool error with `message`, its result written by
    /// the core for the protocol version `version` (an index of `VERSIONS`).
    pub fn tool_error(mut self, version: usize, message: &str) -> Message {
        let result = mcplite_core::result::CallResult::<crate::sexp::Sx>::tool_error(message.to_string());
        let mut out = Vec::new();
        let versions = &mcplite_core::version::VERSIONS;
        if let Some(v) = versions.get(version).or(versions.first()) {
            mcplite_core::projection::write_result(&mut out, &result, v, None);
        }
        self.result = RawValue::from_string(String::from_utf8_lossy(&out).into_owned()).ok();
        self.is_error = Some(true);
        self
    }

    pub fn new(op: Op) -> Message {
        Message {
            op,
            call: None,
            name: None,
            pid: None,
            cwd: None,
            revision: None,
            version: None,
            tool: None,
            arguments: None,
            progress: None,
            client: None,
            names: None,
            lists: None,
            result: None,
            is_error: None,
            start: None,
            tmp: None,
            error: None,
            traceparent: None,
            zeroed: None,
        }
    }

    /// The line to write (with its newline).
    pub fn line(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec(self).unwrap_or_default();
        out.push(b'\n');
        out
    }
}

/// A session's registration file (`<pid>.json` in the session directory).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Registration {
    pub name: String,
    pub pid: u32,
    pub cwd: String,
    pub socket: String,
    pub token: String,
}
