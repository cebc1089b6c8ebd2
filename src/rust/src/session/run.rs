//! Running a call that came over a link (a live session's connection, a
//! worker's link to its server) on R's main thread: the core's
//! `Server::call_here`, with a cancellation's SIGINT reaching only the
//! tool's closure and `mcp_progress()` going back over the link. One place
//! for both: the live session (`live.rs`) and the worker link
//! (`worker_link.rs`) differ only in how they reach their `Server`.

use super::{Message, Op};
use crate::platform;
use mcplite_core::dispatch::Here;
use mcplite_core::envelope::RequestId;
use mcplite_core::json::{Doc, Val};
use mcplite_core::progress::{relay_line, Report};
use serde_json::value::RawValue;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Where a link's lines go (its connection's writer).
pub trait LineSink: Send + Sync {
    /// Writes one line; whether it was written.
    fn send(&self, line: &[u8]) -> bool;
}

/// The link the running call's `mcp_progress()` reports go over, and the
/// call's number on it.
// Global because `mcp_progress()` reaches it from the tool's R code through
// `.Call` (`rust_progress()`), which carries no handle.
static PROGRESS_TO: Mutex<Option<(Arc<dyn LineSink>, u64)>> = Mutex::new(None);
/// Held while a cancellation signals the main thread, and while the main
/// thread stops catching signals after a call: the signal is sent only
/// while the call's closure can take it.
// Global because it orders a link thread's signal with the main thread's
// signal handlers, which are process-wide.
static SIGNALLING: Mutex<()> = Mutex::new(());
/// A cancellation sent the main thread a SIGINT during the call running now.
// Global for the same reason as `SIGNALLING`.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `mcp_progress()` in a call that came over a link: the report goes back
/// over it as a relay line. Gives the report back when no such call runs.
pub fn report(report: Report) -> Option<Report> {
    let target = lock(&PROGRESS_TO).clone();
    let Some((sink, call)) = target else { return Some(report) };
    sink.send(&relay_line(call, &report));
    None
}

/// A link thread: cancel the call running on R's main thread (the caller
/// has checked it is the one cancelled). Interrupts only its closure.
pub fn cancel_running(r_thread: &platform::RThread) {
    let _signalling = lock(&SIGNALLING);
    if platform::cancel_closure(r_thread) {
        SIGNALLED.store(true, Ordering::SeqCst);
    }
}

/// A call as its link brought it.
pub struct LinkedCall<'a> {
    /// The call's number on the link.
    pub call: u64,
    /// The protocol version it is answered in (an index of `VERSIONS`).
    pub version: usize,
    pub tool: &'a str,
    /// The arguments as the client's JSON text.
    pub arguments: Option<&'a RawValue>,
    /// The link, when the call wants its progress.
    pub progress: Option<Arc<dyn LineSink>>,
}

/// Runs `q` on R's main thread through `call_here` (given the arguments
/// read and the request id; `None` when the tool is not there, answered
/// with `missing`), and makes the `answer` message.
pub fn run(
    q: LinkedCall<'_>,
    missing: impl FnOnce() -> String,
    call_here: impl FnOnce(Option<Val<'_>>, RequestId) -> Option<Here>,
) -> Message {
    let mut answer = Message::new(Op::Answer);
    answer.call = Some(q.call);
    let doc = match q.arguments.map(|a| Doc::parse(a.get().as_bytes().to_vec())).transpose() {
        Ok(doc) => doc,
        Err(e) => {
            return answer.tool_error(q.version, &format!("Tool {} received arguments it cannot read: {e}", q.tool))
        }
    };
    let id = Doc::parse(q.call.to_string().into_bytes()).ok().and_then(|d| RequestId::parse(d.root()));
    let Some(id) = id else { return answer.tool_error(q.version, "bad call number") };
    if let Some(sink) = q.progress {
        *lock(&PROGRESS_TO) = Some((sink, q.call));
    }
    // While the call runs, a cancellation's SIGINT reaches only its closure
    // (and in a live session a Ctrl-C typed meanwhile interrupts the tool).
    let signals = platform::StopSignals::install().ok();
    let done = call_here(doc.as_ref().map(|d| d.root()), id);
    {
        let _signalling = lock(&SIGNALLING);
        drop(signals);
    }
    // A cancellation's SIGINT sent just before the handlers went back may
    // reach R's own handler now: R drops it here (the thread took it at the
    // latest on its way back from restoring them), so it cannot interrupt
    // what R runs next (in a live session, the user's next command).
    if SIGNALLED.swap(false, Ordering::SeqCst) {
        crate::ffi::drop_pending_interrupt();
    }
    *lock(&PROGRESS_TO) = None;
    let Some(here) = done else { return answer.tool_error(q.version, &missing()) };
    answer.result = RawValue::from_string(String::from_utf8_lossy(&here.result).into_owned()).ok();
    answer.is_error = Some(here.is_error);
    answer.error = here.failure;
    answer.zeroed = here.zeroed.then_some(true);
    if answer.result.is_none() {
        return answer.tool_error(q.version, "the result could not be written");
    }
    answer
}
