//! Progress from workers: `mcp_progress()` in a tool running on a mirai
//! daemon reaches the client through the server.
//!
//! The daemon writes each report as one JSON line
//! (`mcplite_core::progress::relay_line`) to the server's `progress`
//! listener: a Unix socket in the workers' private directory (loopback TCP
//! on Windows), which a connection must prove it may use by sending the
//! token first, as for the doorbell. Never R serialization: the server reads
//! the lines with the core's JSON reader, on a thread per connection, and
//! offers each report to the call's `Reporter`, so the rules of in-process
//! progress (increasing values, the rate limit and the server's own progress
//! thread, coalescing, nothing after the answer or for a cancelled call)
//! live in one place, `mcplite_core::progress`, for workers too.
//!
//! Order: the daemon writes what its call reported before the call returns,
//! and the call's outcome says how many lines that was; the server answers
//! only once the relay has read that many (or after [`ANSWER_WAIT`]).
//!
//! The daemon's writes never wait for the server while the tool runs: a
//! report that cannot be written at once waits, and a later one replaces it
//! (only the latest matters); the rest is written when the call ends.

use crate::platform::{self, LocalListener, LocalStream, PrivateDir};
use crate::progress::offer_progress;
use mcplite_core::dispatch::TaskId;
use mcplite_core::progress::{read_relay_line, relay_line, Report, Reporter};
use mcplite_core::telemetry::diag;
use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a connection may take to send the token; one that stays silent
/// is closed then.
const TOKEN_WAIT: Duration = Duration::from_secs(1);
/// How long the server waits, before answering a call, for the reports its
/// worker says it sent (they are normally there already).
const ANSWER_WAIT: Duration = Duration::from_secs(5);
/// How long a daemon may take, at the end of a call, to write what its call
/// reported; a server that does not read by then loses the connection.
const FLUSH_WAIT: Duration = Duration::from_secs(5);
/// At most this many connections wait to send the token at once; more are
/// closed at once (on Windows every local user can connect).
const MAX_UNCHECKED: usize = 16;
/// The longest relayed line read (a report's message included); a longer one
/// closes the connection.
const MAX_LINE: u64 = 64 << 20;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

// ---- the server side ----------------------------------------------------------

/// A call on a worker whose request carried a progress token.
struct Open {
    reporter: Reporter,
    tool: String,
    /// Lines read for it so far.
    received: u64,
}

#[derive(Default)]
struct State {
    calls: HashMap<TaskId, Open>,
    stopping: bool,
    /// The connections being read (clones, to shut them down at the end).
    connections: HashMap<u64, LocalStream>,
    next_connection: u64,
    /// Connections accepted whose token is not checked yet.
    unchecked: usize,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    arrived: Condvar,
}

/// The server's end: the listener, its thread, and the calls open for progress.
pub struct Relay {
    shared: Arc<Shared>,
    url: String,
    token: String,
    accepting: Option<std::thread::JoinHandle<()>>,
}

impl Relay {
    /// Listen in `dir` (the workers' private directory) and accept on a
    /// thread of its own.
    pub fn start(dir: &PrivateDir) -> io::Result<Relay> {
        let listener = LocalListener::bind(dir, "progress")?;
        let url = listener.url().to_string();
        let token = platform::random_token();
        let shared = Arc::new(Shared::default());
        let accepting = {
            let (shared, token) = (shared.clone(), token.clone());
            std::thread::Builder::new()
                .name("mcplite-progress-relay".into())
                .spawn(move || accept_all(&listener, &shared, &token))?
        };
        Ok(Relay { shared, url, token, accepting: Some(accepting) })
    }

    /// What a worker needs to send progress: the address and the token.
    pub fn address(&self) -> (&str, &str) {
        (&self.url, &self.token)
    }

    /// A call is handed to a worker: lines for `task` go to `reporter`.
    pub fn open(&self, task: TaskId, reporter: Reporter, tool: &str) {
        let open = Open { reporter, tool: tool.to_string(), received: 0 };
        lock(&self.shared.state).calls.insert(task, open);
    }

    /// The call finished and its worker sent `reports` lines: wait until the
    /// relay has read them all (at most [`ANSWER_WAIT`]), then close it, so
    /// the answer comes after everything it reported.
    pub fn finish(&self, task: TaskId, reports: u64) {
        let deadline = Instant::now() + ANSWER_WAIT;
        let mut state = lock(&self.shared.state);
        loop {
            let Some(open) = state.calls.get(&task) else { return };
            let now = Instant::now();
            if open.received >= reports || now >= deadline {
                break;
            }
            state = self.shared.arrived.wait_timeout(state, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
        if let Some(open) = state.calls.remove(&task) {
            if open.received < reports {
                diag(&format!(
                    "mcplite: tool {}: {} of the {reports} progress reports its worker sent had not arrived when it was answered; they were dropped.",
                    open.tool,
                    reports - open.received
                ));
            }
        }
    }

    /// The call was cancelled (or never ran): nothing more goes to it.
    pub fn close(&self, task: TaskId) {
        lock(&self.shared.state).calls.remove(&task);
    }

    /// Stop accepting and reading (the workers are stopped).
    pub fn stop(&mut self) {
        let Some(accepting) = self.accepting.take() else { return };
        let connections = {
            let mut state = lock(&self.shared.state);
            state.stopping = true;
            state.calls.clear();
            std::mem::take(&mut state.connections)
        };
        for stream in connections.values() {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
        // The accepting thread waits in accept(): a connection wakes it, and
        // it sees `stopping`. If none can be made, it is left waiting.
        if platform::local_connect(&self.url, b"").is_ok() {
            let _ = accepting.join();
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_all(listener: &LocalListener, shared: &Arc<Shared>, token: &str) {
    loop {
        let accepted = listener.accept_next();
        if lock(&shared.state).stopping {
            return;
        }
        match accepted {
            Ok(stream) => {
                {
                    let mut state = lock(&shared.state);
                    if state.unchecked >= MAX_UNCHECKED {
                        continue;
                    }
                    state.unchecked += 1;
                }
                let (reader_shared, token) = (shared.clone(), token.to_string());
                let spawned = std::thread::Builder::new()
                    .name("mcplite-progress-reader".into())
                    .spawn(move || read_connection(stream, &reader_shared, &token));
                if spawned.is_err() {
                    lock(&shared.state).unchecked -= 1;
                }
            }
            // Out of descriptors, say: try again a little later.
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Read one worker's lines until it closes, once it has sent the token.
fn read_connection(stream: LocalStream, shared: &Shared, token: &str) {
    let checked = platform::has_token(&stream, token.as_bytes(), TOKEN_WAIT);
    let id = {
        let mut state = lock(&shared.state);
        state.unchecked -= 1;
        if !checked || state.stopping {
            return;
        }
        state.next_connection += 1;
        let id = state.next_connection;
        if let Ok(clone) = stream.try_clone() {
            state.connections.insert(id, clone);
        }
        id
    };
    crate::lines::read_lines(&stream, MAX_LINE, |line| {
        let Some((task, report)) = read_relay_line(line) else { return true };
        let target = lock(&shared.state).calls.get(&task).map(|o| (o.reporter.clone(), o.tool.clone()));
        if let (Some((reporter, tool)), Some(report)) = (target, report) {
            offer_progress(&reporter, &tool, report);
        }
        // Counted once offered: the answer waits for this count.
        if let Some(open) = lock(&shared.state).calls.get_mut(&task) {
            open.received += 1;
            shared.arrived.notify_all();
        }
        true
    });
    lock(&shared.state).connections.remove(&id);
}

// ---- the worker side ------------------------------------------------------------

/// A connection to the server's relay, kept for the calls that follow.
struct Connection {
    url: String,
    token: String,
    stream: LocalStream,
}

/// The call running on this worker that reports progress.
struct Call {
    task: TaskId,
    /// The line being written and how much of it is.
    unsent: Vec<u8>,
    written: usize,
    /// The latest report not yet started.
    latest: Option<Report>,
    /// Lines written whole.
    lines: u64,
}

#[derive(Default)]
struct Worker {
    connection: Option<Connection>,
    call: Option<Call>,
}

// Global because a worker daemon's connection is kept across calls, and
// `mcp_progress()` and `rust_worker_progress_begin()`/`_end()` reach it
// through `.Call`s from R, which carry no handle.
static WORKER: Mutex<Worker> = Mutex::new(Worker { connection: None, call: None });

/// On a worker, a call whose request carried a progress token starts: its
/// reports go to the relay at `url` (connected now if not already) as
/// `task`. False when the relay cannot be reached (a daemon on another
/// machine): the call's reports are then dropped.
pub fn worker_begin(url: &str, token: &str, task: TaskId) -> bool {
    let mut w = lock(&WORKER);
    finish_call(&mut w);
    let same = w.connection.as_ref().is_some_and(|c| c.url == url && c.token == token);
    if !same {
        w.connection = platform::local_connect(url, token.as_bytes())
            .and_then(|stream| stream.set_nonblocking(true).map(|_| stream))
            .ok()
            .map(|stream| Connection { url: url.to_string(), token: token.to_string(), stream });
    }
    if w.connection.is_none() {
        return false;
    }
    w.call = Some(Call { task, unsent: Vec::new(), written: 0, latest: None, lines: 0 });
    true
}

/// `mcp_progress()` on a worker: never waits for the server.
pub fn worker_report(report: Report) {
    let mut w = lock(&WORKER);
    let Worker { connection, call } = &mut *w;
    let Some(call) = call.as_mut() else { return };
    call.latest = Some(report);
    let Some(c) = connection.as_ref() else { return };
    if pump(&c.stream, call, false).is_err() {
        *connection = None;
    }
}

/// The call ends: write what it reported and has not been written yet
/// (waiting at most [`FLUSH_WAIT`]); how many lines it sent in all.
pub fn worker_end() -> u64 {
    finish_call(&mut lock(&WORKER))
}

fn finish_call(w: &mut Worker) -> u64 {
    let Some(mut call) = w.call.take() else { return 0 };
    if let Some(c) = w.connection.as_ref() {
        let flushed = c
            .stream
            .set_nonblocking(false)
            .and_then(|_| c.stream.set_write_timeout(Some(FLUSH_WAIT)))
            .and_then(|_| pump(&c.stream, &mut call, true))
            .and_then(|_| c.stream.set_write_timeout(None))
            .and_then(|_| c.stream.set_nonblocking(true));
        // A line left half-written would garble the next: start afresh.
        if flushed.is_err() {
            w.connection = None;
        }
    }
    call.lines
}

/// Write what the call holds: whole lines, the latest report last. Without
/// `blocking`, stop where the socket's buffer is full.
fn pump(stream: &LocalStream, call: &mut Call, blocking: bool) -> io::Result<()> {
    let mut stream = stream;
    loop {
        if call.written < call.unsent.len() {
            match stream.write(&call.unsent[call.written..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    call.written += n;
                    if call.written == call.unsent.len() {
                        call.lines += 1;
                        call.unsent.clear();
                        call.written = 0;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && !blocking => return Ok(()),
                Err(e) => return Err(e),
            }
        } else if let Some(report) = call.latest.take() {
            call.unsent = relay_line(call.task, &report);
        } else {
            return Ok(());
        }
    }
}
