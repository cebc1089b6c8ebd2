//! A stdio MCP client: starts a server as a child process with piped standard
//! streams, speaks JSON-RPC to it, and always reaps it.
//!
//! Threads: one writes request lines to the child's stdin (so a server that
//! stops reading cannot block the caller past its timeout), one reads its
//! stdout line by line, one collects its stderr. The caller's thread matches
//! responses to requests by id, keeps notifications, answers every request the
//! server sends with -32601 (this client declares no capabilities), and keeps
//! stdout lines that are not JSON-RPC messages so they can be reported.
//!
//! Only `std::process` and `std::thread` are used. The one OS-specific line
//! blocks SIGPIPE in the writer thread on Unix: a host process may turn
//! SIGPIPE into an error that unwinds the wrong thread (R does), and a write
//! to a server that has exited must fail with EPIPE instead.

use crate::transport::LineReader;
use crate::version::{self, Era, VersionIndex, VERSIONS};
use serde_json::{json, Map, Value};
use std::collections::VecDeque;
use std::io::{BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The server's stderr kept in memory: the most recent bytes up to this size.
pub const STDERR_KEEP_BYTES: usize = 1 << 20;
/// Notifications, stray lines and server requests kept, each (oldest dropped).
pub const KEEP_MESSAGES: usize = 10_000;
/// Stdout lines the reader may read ahead of the caller.
const READ_AHEAD_LINES: usize = 1024;
/// `tools/list` pages followed at most (a server repeating a cursor stops sooner).
const MAX_PAGES: usize = 1000;
/// How long to wait for an exit status and the end of stderr once stdout closed.
const EXIT_SETTLE: Duration = Duration::from_secs(2);

pub const META_PROTOCOL_VERSION: &str = crate::dispatch::META_PROTOCOL_VERSION;
pub const META_CLIENT_CAPABILITIES: &str = crate::dispatch::META_CLIENT_CAPABILITIES;
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// How to start a server.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    pub program: String,
    pub args: Vec<String>,
    /// Start from an empty environment, so the child sees exactly `env`.
    /// Otherwise `env` is added to (and overrides) the inherited environment.
    pub clear_env: bool,
    pub env: Vec<(String, String)>,
    /// Working directory of the child; `None` keeps the caller's.
    pub cwd: Option<String>,
}

/// Why a client operation failed.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientError {
    /// The program could not be started.
    Spawn(String),
    /// The server closed its standard output: it exited or crashed.
    /// `status` is the exit code when it exited normally, `how` describes
    /// the exit (status or signal) when it is known.
    Exited { status: Option<i32>, how: Option<String> },
    /// No answer within the time allowed.
    Timeout { method: String, seconds: f64 },
    /// The server answered with a JSON-RPC error.
    Rpc { code: i64, message: String, data: Option<Value> },
    /// The server broke the protocol (a malformed answer to the handshake, ...).
    Protocol(String),
    /// The handshake settled on a version this client does not speak.
    Version { requested: String, answered: String },
    /// The client was closed.
    Closed,
    /// The caller asked for something impossible (unknown version, params that
    /// are not an object, ...).
    Invalid(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Spawn(e) => write!(f, "cannot start the server: {e}"),
            ClientError::Exited { how, .. } => match how {
                Some(h) => write!(f, "the server exited ({h})"),
                None => write!(f, "the server closed its standard output"),
            },
            ClientError::Timeout { method, seconds } => write!(f, "no answer to {method} within {seconds} seconds"),
            ClientError::Rpc { code, message, .. } => write!(f, "{message} (JSON-RPC error {code})"),
            ClientError::Protocol(e) => write!(f, "protocol error: {e}"),
            ClientError::Version { requested, answered } => {
                write!(
                    f,
                    "asked for protocol {requested}, the server chose {answered}, which this client does not speak"
                )
            }
            ClientError::Closed => write!(f, "the client is closed"),
            ClientError::Invalid(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ClientError {}

enum Event {
    Line(Instant, Vec<u8>),
    Eof,
}

#[derive(Default)]
struct StderrBuf {
    bytes: VecDeque<u8>,
    dropped: usize,
    done: bool,
}

fn lock(m: &Mutex<StderrBuf>) -> MutexGuard<'_, StderrBuf> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A line on the server's stdout that is not a JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub struct StrayLine {
    /// Milliseconds since the server was started.
    pub at_ms: f64,
    /// The line, invalid UTF-8 replaced.
    pub text: String,
}

/// A running (or finished) server and the client's view of it.
pub struct Client {
    child: Child,
    writer: Option<Sender<Vec<u8>>>,
    events: Receiver<Event>,
    stderr: Arc<Mutex<StderrBuf>>,
    started: Instant,
    eof: bool,
    exit: Option<ExitStatus>,
    closed: bool,
    next_id: i64,
    /// Ids given up on (timed out): their late answers are dropped.
    abandoned: Vec<Value>,
    requested: VersionIndex,
    version: VersionIndex,
    client_info: Value,
    opened: Option<Value>,
    notifications: VecDeque<Value>,
    server_requests: VecDeque<Value>,
    stray: VecDeque<StrayLine>,
    unmatched: VecDeque<Value>,
    first_response: Option<Duration>,
    /// The exact line of the last answer matched to a request.
    last_response: Option<String>,
    /// Every line sent (`true`) and received (`false`), when asked for.
    transcript: Option<VecDeque<(bool, String)>>,
}

fn push_bounded<T>(q: &mut VecDeque<T>, item: T) {
    if q.len() >= KEEP_MESSAGES {
        q.pop_front();
    }
    q.push_back(item);
}

#[cfg(unix)]
fn block_sigpipe_in_this_thread() {
    // SAFETY: plain libc calls on a local, zero-initialised signal set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

#[cfg(not(unix))]
fn block_sigpipe_in_this_thread() {}

fn spawn_thread<F: FnOnce() + Send + 'static>(name: &str, f: F) -> Result<(), ClientError> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map(|_| ())
        .map_err(|e| ClientError::Spawn(format!("cannot start a thread: {e}")))
}

fn writer_loop(mut stdin: ChildStdin, lines: Receiver<Vec<u8>>) {
    block_sigpipe_in_this_thread();
    for line in lines {
        if stdin.write_all(&line).and_then(|_| stdin.flush()).is_err() {
            break;
        }
    }
    // Dropping stdin closes the pipe: end of input for the server.
}

fn stdout_loop<R: Read>(out: R, tx: SyncSender<Event>) {
    let mut reader = LineReader::new(BufReader::with_capacity(1 << 16, out));
    while let Ok(Some(line)) = reader.next_line() {
        if tx.send(Event::Line(Instant::now(), line.to_vec())).is_err() {
            return;
        }
    }
    let _ = tx.send(Event::Eof);
}

fn stderr_loop<R: Read>(mut err: R, buf: Arc<Mutex<StderrBuf>>) {
    let mut chunk = [0u8; 8192];
    loop {
        match err.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                let mut b = lock(&buf);
                b.bytes.extend(&chunk[..n]);
                let over = b.bytes.len().saturating_sub(STDERR_KEEP_BYTES);
                if over > 0 {
                    b.bytes.drain(..over);
                    b.dropped += over;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    lock(&buf).done = true;
}

/// A line that is one JSON-RPC 2.0 message object.
fn jsonrpc_object(bytes: &[u8]) -> Option<Map<String, Value>> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(m)) if m.get("jsonrpc").and_then(Value::as_str) == Some("2.0") => Some(m),
        _ => None,
    }
}

/// `now + d`, or far in the future when that overflows (an "infinite" timeout).
fn deadline_after(d: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(d).or_else(|| now.checked_add(Duration::from_secs(1 << 30))).unwrap_or(now)
}

/// The index of a protocol version this client speaks.
pub fn version_index(protocol: &str) -> Result<VersionIndex, ClientError> {
    version::lookup(protocol).ok_or_else(|| {
        ClientError::Invalid(format!(
            "unknown protocol version {protocol:?}; use one of {}",
            version::supported_ids().join(", ")
        ))
    })
}

fn error_from(err: &Value) -> ClientError {
    let code = err.get("code").and_then(Value::as_i64);
    let message = err.get("message").and_then(Value::as_str);
    match (code, message) {
        (Some(code), Some(message)) => {
            ClientError::Rpc { code, message: message.to_string(), data: err.get("data").cloned() }
        }
        _ => ClientError::Protocol(format!("malformed error object: {err}")),
    }
}

impl Client {
    /// Start the server. Nothing is sent yet: call [`Client::open`] for the
    /// handshake of the chosen protocol version.
    pub fn spawn(launch: &Launch, protocol: &str, client_info: Value) -> Result<Client, ClientError> {
        let requested = version_index(protocol)?;
        let mut cmd = Command::new(&launch.program);
        cmd.args(&launch.args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        if launch.clear_env {
            cmd.env_clear();
        }
        for (k, v) in &launch.env {
            cmd.env(k, v);
        }
        if let Some(dir) = &launch.cwd {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn().map_err(|e| ClientError::Spawn(format!("{}: {e}", launch.program)))?;
        let started = Instant::now();
        let (stdin, stdout, stderr) = match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
            (Some(i), Some(o), Some(e)) => (i, o, e),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ClientError::Spawn("the child's standard streams are not pipes".into()));
            }
        };
        let (line_tx, line_rx) = mpsc::channel::<Vec<u8>>();
        let (event_tx, event_rx) = mpsc::sync_channel::<Event>(READ_AHEAD_LINES);
        let stderr_buf = Arc::new(Mutex::new(StderrBuf::default()));
        let buf = Arc::clone(&stderr_buf);
        let threads = spawn_thread("mcplite-client-stdin", move || writer_loop(stdin, line_rx))
            .and_then(|_| spawn_thread("mcplite-client-stdout", move || stdout_loop(stdout, event_tx)))
            .and_then(|_| spawn_thread("mcplite-client-stderr", move || stderr_loop(stderr, buf)));
        if let Err(e) = threads {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
        Ok(Client {
            child,
            writer: Some(line_tx),
            events: event_rx,
            stderr: stderr_buf,
            started,
            eof: false,
            exit: None,
            closed: false,
            next_id: 0,
            abandoned: Vec::new(),
            requested,
            version: requested,
            client_info,
            opened: None,
            notifications: VecDeque::new(),
            server_requests: VecDeque::new(),
            stray: VecDeque::new(),
            unmatched: VecDeque::new(),
            first_response: None,
            last_response: None,
            transcript: None,
        })
    }

    /// The opening exchange of the chosen version. Legacy: `initialize`, then
    /// `notifications/initialized`; the server may choose another legacy
    /// version, which is then used. Modern: `server/discover`, which must list
    /// the version. Returns the server's answer.
    pub fn open(&mut self, timeout: Duration) -> Result<Value, ClientError> {
        let asked = VERSIONS[self.requested].id;
        let result = if VERSIONS[self.requested].era == Era::Legacy {
            let params = json!({
                "protocolVersion": asked,
                "capabilities": {},
                "clientInfo": self.client_info,
            });
            let result = self.raw_request("initialize", Some(params), timeout, false)?;
            let answered = result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .ok_or_else(|| ClientError::Protocol("the initialize result has no protocolVersion".into()))?;
            match version::lookup(answered) {
                Some(i) if VERSIONS[i].era == Era::Legacy => self.version = i,
                _ => {
                    return Err(ClientError::Version { requested: asked.into(), answered: answered.into() });
                }
            }
            self.notify("notifications/initialized", None)?;
            result
        } else {
            let result = self.request("server/discover", None, timeout)?;
            let listed = result
                .get("supportedVersions")
                .and_then(Value::as_array)
                .is_some_and(|v| v.iter().any(|x| x.as_str() == Some(asked)));
            if !listed {
                let offered = result.get("supportedVersions").map(Value::to_string).unwrap_or_else(|| "none".into());
                return Err(ClientError::Version { requested: asked.into(), answered: offered });
            }
            result
        };
        self.opened = Some(result.clone());
        Ok(result)
    }

    /// Send a request and wait for its answer. For the modern version, the
    /// per-request `_meta` (version, empty client capabilities, client info)
    /// is added to `params`, keeping any member the caller set.
    pub fn request(&mut self, method: &str, params: Option<Value>, timeout: Duration) -> Result<Value, ClientError> {
        self.raw_request(method, params, timeout, true)
    }

    fn with_meta(&self, params: Option<Value>) -> Result<Option<Value>, ClientError> {
        let modern = VERSIONS[self.version].era == Era::Modern;
        let mut map = match params {
            None if !modern => return Ok(None),
            None => Map::new(),
            Some(Value::Object(m)) => m,
            Some(other) => return Err(ClientError::Invalid(format!("params must be a JSON object, not {other}"))),
        };
        if modern {
            let meta = map.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(meta) = meta else {
                return Err(ClientError::Invalid("params._meta must be a JSON object".into()));
            };
            meta.entry(META_PROTOCOL_VERSION).or_insert_with(|| Value::from(VERSIONS[self.version].id));
            meta.entry(META_CLIENT_CAPABILITIES).or_insert_with(|| Value::Object(Map::new()));
            meta.entry(META_CLIENT_INFO).or_insert_with(|| self.client_info.clone());
        }
        Ok(Some(Value::Object(map)))
    }

    fn raw_request(
        &mut self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
        cancellable: bool,
    ) -> Result<Value, ClientError> {
        let params = self.with_meta(params)?;
        let id = Value::from(self.next_id);
        self.next_id += 1;
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg)?;
        let deadline = deadline_after(timeout);
        loop {
            let now = Instant::now();
            if now >= deadline {
                if cancellable && !self.eof {
                    let _ = self.notify(
                        "notifications/cancelled",
                        Some(json!({"requestId": id, "reason": "The client timed out."})),
                    );
                }
                self.abandoned.push(id);
                return Err(ClientError::Timeout { method: method.into(), seconds: timeout.as_secs_f64() });
            }
            if self.eof {
                return Err(self.exited());
            }
            match self.events.recv_timeout(deadline - now) {
                Ok(Event::Line(at, bytes)) => {
                    if let Some(response) = self.take_line(at, &bytes, Some(&id)) {
                        return match response.get("error") {
                            Some(err) => Err(error_from(err)),
                            None => Ok(response.get("result").cloned().unwrap_or(Value::Null)),
                        };
                    }
                }
                Ok(Event::Eof) | Err(RecvTimeoutError::Disconnected) => self.eof = true,
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// Send a notification (the modern `_meta` is not added: notifications
    /// carry none).
    pub fn notify(&mut self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        match params {
            None => {}
            Some(p @ Value::Object(_)) => msg["params"] = p,
            Some(other) => return Err(ClientError::Invalid(format!("params must be a JSON object, not {other}"))),
        }
        self.send(&msg)
    }

    fn send(&mut self, msg: &Value) -> Result<(), ClientError> {
        if self.closed {
            return Err(ClientError::Closed);
        }
        self.poll();
        if self.eof {
            return Err(self.exited());
        }
        if self.write_line(msg) {
            Ok(())
        } else {
            Err(self.exited())
        }
    }

    fn record(&mut self, sent: bool, line: &str) {
        if let Some(t) = &mut self.transcript {
            push_bounded(t, (sent, line.to_string()));
        }
    }

    /// Sort one stdout line. Returns it when it is the response to `want`.
    fn take_line(&mut self, at: Instant, bytes: &[u8], want: Option<&Value>) -> Option<Value> {
        let elapsed = at.saturating_duration_since(self.started);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if self.transcript.is_some() {
            self.record(false, &String::from_utf8_lossy(bytes));
        }
        let at_ms = elapsed.as_secs_f64() * 1000.0;
        let msg = match jsonrpc_object(bytes) {
            Some(m) => m,
            None => {
                // Text printed without a newline runs into the next message:
                // keep the text as stray and still read the message behind it.
                let glued = bytes
                    .iter()
                    .position(|&b| b == b'{')
                    .filter(|&i| i > 0)
                    .and_then(|i| jsonrpc_object(&bytes[i..]).map(|m| (i, m)));
                let (stray_end, msg) = match glued {
                    Some((i, m)) => (i, Some(m)),
                    None => (bytes.len(), None),
                };
                let text = String::from_utf8_lossy(&bytes[..stray_end]).into_owned();
                push_bounded(&mut self.stray, StrayLine { at_ms, text });
                msg?
            }
        };
        let id = msg.get("id").cloned();
        if msg.get("method").is_some_and(Value::is_string) {
            match id {
                Some(id) => {
                    // A request from the server: this client offers nothing.
                    let method = msg.get("method").and_then(Value::as_str).unwrap_or_default();
                    let answer = json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": {"code": -32601, "message": format!("Method not found: {method}")},
                    });
                    // A writer that is gone shows as end of input on the next read.
                    self.write_line(&answer);
                    push_bounded(&mut self.server_requests, Value::Object(msg));
                }
                None => push_bounded(&mut self.notifications, Value::Object(msg)),
            }
            return None;
        }
        if msg.contains_key("result") != msg.contains_key("error") {
            if self.first_response.is_none() {
                self.first_response = Some(elapsed);
            }
            if let (Some(want), Some(id)) = (want, &id) {
                if want == id {
                    self.last_response = Some(String::from_utf8_lossy(bytes).into_owned());
                    return Some(Value::Object(msg));
                }
            }
            if let Some(id) = &id {
                if let Some(pos) = self.abandoned.iter().position(|a| a == id) {
                    self.abandoned.swap_remove(pos);
                    return None;
                }
            }
            push_bounded(&mut self.unmatched, Value::Object(msg));
            return None;
        }
        let text = String::from_utf8_lossy(bytes).into_owned();
        push_bounded(&mut self.stray, StrayLine { at_ms, text });
        None
    }

    /// Record `msg` and hand it to the writer thread as one line; false when
    /// the writer is gone.
    fn write_line(&mut self, msg: &Value) -> bool {
        let text = msg.to_string();
        self.record(true, &text);
        let mut line = text.into_bytes();
        line.push(b'\n');
        matches!(&self.writer, Some(w) if w.send(line).is_ok())
    }

    /// Read whatever the server has written so far, without waiting.
    pub fn poll(&mut self) {
        loop {
            match self.events.try_recv() {
                Ok(Event::Line(at, bytes)) => {
                    self.take_line(at, &bytes, None);
                }
                Ok(Event::Eof) | Err(TryRecvError::Disconnected) => {
                    self.eof = true;
                    break;
                }
                Err(TryRecvError::Empty) => break,
            }
        }
    }

    /// The error for a server whose stdout has closed, once its exit status
    /// and the rest of its stderr are in (waiting briefly for both).
    fn exited(&mut self) -> ClientError {
        let deadline = Instant::now() + EXIT_SETTLE;
        while self.exit.is_none() && Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(status)) => self.exit = Some(status),
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(_) => break,
            }
        }
        while !lock(&self.stderr).done && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        ClientError::Exited { status: self.exit.and_then(|s| s.code()), how: self.exit.map(|s| s.to_string()) }
    }

    /// All `tools` of `tools/list`, following `nextCursor`.
    pub fn list_tools(&mut self, timeout: Duration) -> Result<Vec<Value>, ClientError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen: Vec<String> = Vec::new();
        for _ in 0..MAX_PAGES {
            let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
            let result = self.request("tools/list", params, timeout)?;
            match result.get("tools") {
                Some(Value::Array(page)) => tools.extend(page.iter().cloned()),
                _ => return Err(ClientError::Protocol("the tools/list result has no tools array".into())),
            }
            match result.get("nextCursor") {
                Some(Value::String(next)) => {
                    if seen.contains(next) {
                        return Err(ClientError::Protocol(format!("tools/list repeated the cursor {next:?}")));
                    }
                    seen.push(next.clone());
                    cursor = Some(next.clone());
                }
                _ => return Ok(tools),
            }
        }
        Err(ClientError::Protocol(format!("tools/list returned more than {MAX_PAGES} pages")))
    }

    /// `tools/call`. A tool error is a result with `isError: true`.
    pub fn call_tool(&mut self, name: &str, arguments: Value, timeout: Duration) -> Result<Value, ClientError> {
        if !arguments.is_object() {
            return Err(ClientError::Invalid("tool arguments must be a JSON object".into()));
        }
        self.request("tools/call", Some(json!({"name": name, "arguments": arguments})), timeout)
    }

    /// Notifications received so far (logging, progress, ...); `clear` forgets them.
    pub fn notifications(&mut self, clear: bool) -> Vec<Value> {
        self.poll();
        let out: Vec<Value> = self.notifications.iter().cloned().collect();
        if clear {
            self.notifications.clear();
        }
        out
    }

    /// Requests the server sent (each answered with -32601).
    pub fn server_requests(&mut self) -> Vec<Value> {
        self.poll();
        self.server_requests.iter().cloned().collect()
    }

    /// Responses whose id matched no pending request.
    pub fn unmatched(&mut self) -> Vec<Value> {
        self.poll();
        self.unmatched.iter().cloned().collect()
    }

    /// Lines on stdout that were not JSON-RPC messages.
    pub fn stray_lines(&mut self) -> Vec<StrayLine> {
        self.poll();
        self.stray.iter().cloned().collect()
    }

    /// What the server wrote on stderr so far (the most recent
    /// [`STDERR_KEEP_BYTES`]), invalid UTF-8 replaced.
    pub fn stderr_text(&self) -> String {
        let b = lock(&self.stderr);
        let (a, c) = b.bytes.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + c.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(c);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if b.dropped > 0 {
            format!("[{} earlier bytes dropped]\n{text}", b.dropped)
        } else {
            text
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The version in force (the one the server chose in a legacy handshake).
    pub fn protocol(&self) -> &'static str {
        VERSIONS[self.version].id
    }

    /// The handshake answer (`InitializeResult` or `DiscoverResult`).
    pub fn opened(&self) -> Option<&Value> {
        self.opened.as_ref()
    }

    /// The exact line of the last answer to one of this client's requests.
    pub fn last_response(&self) -> Option<&str> {
        self.last_response.as_deref()
    }

    /// Start (or stop) keeping every line sent and received.
    pub fn set_transcript(&mut self, on: bool) {
        self.transcript = if on { Some(self.transcript.take().unwrap_or_default()) } else { None };
    }

    /// The lines sent (`true`) and received (`false`) since the last call,
    /// in order; empty unless [`Client::set_transcript`] turned it on.
    pub fn take_transcript(&mut self) -> Vec<(bool, String)> {
        self.poll();
        match &mut self.transcript {
            Some(t) => t.drain(..).collect(),
            None => Vec::new(),
        }
    }

    /// Time from start to the first JSON-RPC response.
    pub fn first_response(&self) -> Option<Duration> {
        self.first_response
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Is the server process still running?
    pub fn is_alive(&mut self) -> bool {
        if self.exit.is_some() {
            return false;
        }
        match self.child.try_wait() {
            Ok(Some(status)) => {
                self.exit = Some(status);
                false
            }
            Ok(None) => true,
            Err(_) => false,
        }
    }

    /// The exit status once the server has exited: `(code, description)`.
    pub fn exit_status(&mut self) -> Option<(Option<i32>, String)> {
        self.is_alive();
        self.exit.map(|s| (s.code(), s.to_string()))
    }

    /// Close the server's stdin (the graceful end of a stdio session), wait
    /// up to `grace` for it to exit, then kill it; always reap it. Idempotent.
    /// Returns the exit status.
    pub fn close(&mut self, grace: Duration) -> Option<(Option<i32>, String)> {
        if !self.closed {
            self.closed = true;
            self.poll();
            self.writer = None;
            let deadline = deadline_after(grace);
            while self.exit.is_none() {
                match self.child.try_wait() {
                    Ok(Some(status)) => self.exit = Some(status),
                    Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                    Ok(None) | Err(_) => {
                        let _ = self.child.kill();
                        self.exit = self.child.wait().ok();
                        break;
                    }
                }
            }
        }
        self.exit.map(|s| (s.code(), s.to_string()))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.close(Duration::from_millis(200));
    }
}
