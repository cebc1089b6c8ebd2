//! Protocol core of mcplite: everything that does not need R.
//!
//! The R side is reached only through [`dispatch::ToolHost`], so every rule here
//! is testable with plain `cargo test`.

pub mod check;
pub mod client;
pub mod dispatch;
pub mod envelope;
pub mod projection;
pub mod result;
pub mod rjson;
pub mod telemetry;
pub mod transport;
pub mod version;

pub use dispatch::{Handled, Observer, Server, ServerInfo, ToolHost};

use std::collections::VecDeque;
use std::io::{self, BufRead, Write};
use std::sync::mpsc;

/// How many lines the reader thread may read ahead of the handler.
const READ_AHEAD_LINES: usize = 1024;

/// Serve until end of input. A reader thread reads lines ahead so that a
/// `notifications/cancelled` sent while a request runs is seen before its
/// answer goes out: the answer of a cancelled request is dropped, as the
/// 2026-07-28 stdio transport requires. Lines are handled one at a time, in
/// order. `observer` brackets every valid message (telemetry). A write failure
/// (the client closed our stdout) ends the loop quietly.
pub fn serve<R: BufRead + Send + 'static, W: Write>(
    input: R,
    output: &mut W,
    server: &mut Server,
    host: &mut dyn ToolHost,
    observer: &mut dyn Observer,
) -> io::Result<()> {
    let (tx, rx) = mpsc::sync_channel::<io::Result<Vec<u8>>>(READ_AHEAD_LINES);
    std::thread::Builder::new().name("mcplite-stdin".into()).spawn(move || {
        let mut reader = transport::LineReader::new(input);
        loop {
            let item = match reader.next_line() {
                Ok(Some(line)) => Ok(line.to_vec()),
                Ok(None) => break,
                Err(e) => Err(e),
            };
            let stop = item.is_err();
            if tx.send(item).is_err() || stop {
                break;
            }
        }
    })?;
    let mut pending: VecDeque<Vec<u8>> = VecDeque::new();
    let mut cancelled: Vec<serde_json::Value> = Vec::new();
    loop {
        let line = match pending.pop_front() {
            Some(line) => line,
            None => match rx.recv() {
                Ok(item) => item?,
                Err(_) => break,
            },
        };
        if let Some(id) = cancellation_of(&line) {
            // Its request was handled before it (answered or dropped): forget it.
            cancelled.retain(|c| *c != id);
        }
        let handled = handle_guarded(server, &line, host, observer);
        let Some(response) = &handled.line else { continue };
        // Look at what has arrived meanwhile for a cancellation of this id.
        // Bounded: lines move from the channel to `pending` only up to the
        // read-ahead limit, so a fast client cannot make the buffer grow.
        while pending.len() < READ_AHEAD_LINES {
            let Ok(item) = rx.try_recv() else { break };
            let next = item?;
            if let Some(id) = cancellation_of(&next) {
                cancelled.push(id);
            }
            pending.push_back(next);
        }
        if let Some(id) = &handled.request_id_json {
            if let Some(pos) = cancelled.iter().position(|c| c == id) {
                cancelled.swap_remove(pos);
                continue;
            }
        }
        if transport::write_line(output, response).is_err() {
            break;
        }
    }
    Ok(())
}

/// Handle one line; a bug that panics still gives the request its one answer
/// (-32603) and leaves the server running.
fn handle_guarded(server: &mut Server, line: &[u8], host: &mut dyn ToolHost, observer: &mut dyn Observer) -> Handled {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    match catch_unwind(AssertUnwindSafe(|| server.handle_line(line, host, observer))) {
        Ok(handled) => handled,
        Err(_) => {
            let id = match catch_unwind(|| envelope::classify(line)) {
                Ok(envelope::Incoming::Request(msg)) => msg.id,
                _ => None,
            };
            let error = envelope::RpcError::new(envelope::ErrorCode::InternalError, "Internal error");
            Handled {
                line: id.as_ref().map(|id| envelope::error_line(Some(id), &error)),
                rpc_error: Some(error.code),
                request_id_json: id.as_ref().and_then(|id| serde_json::from_str(id.raw()).ok()),
                ..Default::default()
            }
        }
    }
}

/// The `requestId` of a `notifications/cancelled` line, if it is one.
fn cancellation_of(line: &[u8]) -> Option<serde_json::Value> {
    if memchr_contains(line, b"notifications/cancelled") {
        if let envelope::Incoming::Notification(msg) = envelope::classify(line) {
            if msg.method == "notifications/cancelled" {
                return msg.params.get("requestId").cloned();
            }
        }
    }
    None
}

fn memchr_contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
