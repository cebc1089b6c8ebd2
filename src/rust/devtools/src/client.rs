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
//! Every stdout line is read once, by the reader the server uses for client
//! messages ([`mcplite_core::json::Doc`]): exact numbers, lone surrogates, NUL flags
//! and [`MAX_TREE_DEPTH`] levels of nesting. An answer to the pending request
//! that cannot be used (not UTF-8, nested deeper than the reader keeps, both
//! `result` and `error`, neither, not JSON-RPC 2.0) ends the wait at once with
//! [`ClientError::Protocol`] instead of being filed as a stray line.
//!
//! Waits are made of short slices: [`Client::begin_request`] (and the other
//! `begin_*`) send, [`Client::step`] waits at most one slice, and
//! [`Client::abandon`] gives up (cancelling the request). A host such as R
//! checks for the user's interrupt between slices; the blocking methods
//! ([`Client::request`], ...) loop over `step` for Rust callers.
//!
//! Memory is bounded in bytes: the read-ahead between the reader thread and
//! the caller ([`READ_AHEAD_BYTES`] plus one line), each queue of kept
//! messages ([`KEEP_BYTES`]), stray lines ([`STRAY_LINE_BYTES`] each), the
//! transcript and stderr.
//!
//! OS-specific code (SIGPIPE in the writer thread, the server's own process
//! group) is in [`crate::platform`].

use crate::conformance::OutputSchemas;
use crate::platform;
use mcplite_core::json::{Doc, ExactNumber, Kind, ParseError, Val, MAX_TREE_DEPTH};
use mcplite_core::transport::LineReader;
use mcplite_core::version::{self, Era, VersionIndex, VERSIONS};
use mcplite_core::wire;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::io::{BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The server's stderr kept in memory: the most recent bytes up to this size.
pub const STDERR_KEEP_BYTES: usize = 1 << 20;
/// Notifications, server requests, unmatched answers and stray lines are each
/// kept up to this many bytes (the oldest dropped; the newest always kept).
pub const KEEP_BYTES: usize = 1 << 20;
/// A stray stdout line is kept up to this many bytes, then marked as cut.
pub const STRAY_LINE_BYTES: usize = 64 << 10;
/// The transcript keeps this many bytes; each line is cut at [`STRAY_LINE_BYTES`].
pub const TRANSCRIPT_KEEP_BYTES: usize = 8 << 20;
/// Bytes of stdout lines the reader thread may read ahead of the caller
/// (it always may hold one line, however long).
const READ_AHEAD_BYTES: usize = 1 << 20;
/// `tools/list` pages followed at most (a server repeating a cursor stops sooner).
const MAX_PAGES: usize = 1000;
/// How long to wait for an exit status and the end of stderr once stdout closed.
const EXIT_SETTLE: Duration = Duration::from_secs(2);
/// How long the server's process group may take to empty once the server
/// has exited (workers that notice its end: mirai's daemons and dispatcher
/// take about a second to see the server gone and exit) before the
/// processes still in it count as left running, and are ended.
const GROUP_SETTLE: Duration = Duration::from_secs(3);
/// Nesting an answer's result may have: the reader keeps [`MAX_TREE_DEPTH`]
/// levels of the line, and the result sits one level below the message.
pub const MAX_RESULT_DEPTH: usize = MAX_TREE_DEPTH - 1;

pub use mcplite_core::wire::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};

/// How to start a server.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// Start from an empty environment, so the child sees exactly `env`.
    /// Otherwise `env` is added to (and overrides) the inherited environment.
    pub clear_env: bool,
    pub env: Vec<(OsString, OsString)>,
    /// Working directory of the child; `None` keeps the caller's.
    pub cwd: Option<PathBuf>,
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
    /// The server broke the protocol (an answer that cannot be read, a
    /// malformed answer to the handshake, ...).
    Protocol(String),
    /// The handshake settled on a version this client does not speak.
    Version { requested: String, answered: String },
    /// The client was closed.
    Closed,
    /// The caller asked for something impossible (unknown version, params that
    /// are not an object, ...).
    Invalid(String),
    /// A `tools/call` result that the official SDK clients reject (see
    /// [`crate::conformance`]).
    Output(String),
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
            ClientError::Invalid(e) | ClientError::Output(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ClientError {}

/// A parsed answer (the whole line); its `result` is [`Answer::result`].
#[derive(Clone)]
pub struct Answer {
    doc: Arc<Doc>,
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Answer({:?})", self.doc)
    }
}

impl Answer {
    /// The `result` member (present by construction).
    pub fn result(&self) -> Val<'_> {
        let root = self.doc.root();
        root.get("result").unwrap_or(root)
    }

    /// The result as a serde value (deep markers become `null`, numbers
    /// serde cannot hold their text), for Rust callers.
    pub fn to_value(&self) -> Value {
        self.result().to_value()
    }

    /// The exact line.
    pub fn line(&self) -> &[u8] {
        self.doc.text()
    }
}

enum Event {
    Line(Instant, Vec<u8>),
    Eof,
}

/// What one wait for the server's next line found ([`Client::next_line`]).
enum Next {
    /// A line, and when it was read.
    Line(Instant, Vec<u8>),
    /// None in time.
    Quiet,
    /// The server's stdout has closed.
    Ended,
}

#[derive(Default)]
struct StderrBuf {
    bytes: VecDeque<u8>,
    dropped: usize,
    done: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Bytes of stdout read ahead of the caller; the reader waits while it is
/// over [`READ_AHEAD_BYTES`].
#[derive(Default)]
struct Budget {
    bytes: usize,
    closed: bool,
}

type SharedBudget = Arc<(Mutex<Budget>, Condvar)>;

/// A line on the server's stdout that is not a JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub struct StrayLine {
    /// Milliseconds since the server was started.
    pub at_ms: f64,
    /// The line, invalid UTF-8 replaced, cut at [`STRAY_LINE_BYTES`] with a
    /// marker saying how many bytes followed.
    pub text: String,
}

/// A queue bounded in bytes: the oldest items go first, the newest stays.
struct Kept<T> {
    items: VecDeque<(T, usize)>,
    bytes: usize,
    cap: usize,
    /// Items ever pushed.
    total: u64,
}

impl<T> Kept<T> {
    fn new(cap: usize) -> Kept<T> {
        Kept { items: VecDeque::new(), bytes: 0, cap, total: 0 }
    }

    fn push(&mut self, item: T, size: usize) {
        self.items.push_back((item, size));
        self.bytes += size;
        self.total += 1;
        while self.bytes > self.cap && self.items.len() > 1 {
            if let Some((_, s)) = self.items.pop_front() {
                self.bytes -= s;
            }
        }
    }

    fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter().map(|(t, _)| t)
    }

    fn drain(&mut self) -> Vec<T> {
        self.bytes = 0;
        self.items.drain(..).map(|(t, _)| t).collect()
    }

    fn clear(&mut self) {
        self.items.clear();
        self.bytes = 0;
    }
}

/// `bytes` as text (invalid UTF-8 replaced), cut at `max` bytes with a marker.
fn cut_text(bytes: &[u8], max: usize) -> String {
    if bytes.len() <= max {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let mut text = String::from_utf8_lossy(&bytes[..max]).into_owned();
    text.push_str(&format!(" [... {} more bytes not kept]", bytes.len() - max));
    text
}

/// A request in flight.
#[derive(Debug)]
struct Pending {
    id: i64,
    method: String,
    timeout: Duration,
    deadline: Instant,
    cancellable: bool,
}

/// What a `begin_*` started and [`Client::step`] finishes.
#[derive(Debug)]
enum Op {
    Request(Pending),
    Open(Pending),
    /// `tools/call` of `tool`, whose result is checked as SDK clients check it.
    CallTool {
        pending: Pending,
        tool: String,
    },
    ListTools {
        pending: Pending,
        pages: Vec<Answer>,
        seen: Vec<String>,
    },
}

impl Op {
    fn pending(&self) -> &Pending {
        match self {
            Op::Request(p) | Op::Open(p) | Op::CallTool { pending: p, .. } | Op::ListTools { pending: p, .. } => p,
        }
    }
}

/// What [`Client::step`] returns once the operation is done.
#[derive(Debug)]
pub enum Outcome {
    /// The answer to a request, or the handshake answer.
    Answer(Answer),
    /// Every page of `tools/list`, in order (each result has a `tools` array).
    Pages(Vec<Answer>),
}

/// How a line that is a JSON-RPC message relates to the pending request.
enum Sorted {
    /// Not the answer waited for (kept or dropped as it should be).
    Other,
    /// The answer waited for.
    Answer(Answer),
    /// The answer waited for, unusable: why.
    Unusable(String),
}

/// A `tools/call` started with [`Client::begin_call_async`]: in flight
/// while other requests are sent and answered, matched to its answer by id.
struct AsyncCall {
    pending: Pending,
    tool: String,
    /// Whether the request carries a progress token (its id).
    progress: bool,
    /// Its progress notifications not yet handed out.
    progress_new: Vec<Arc<Doc>>,
    progress_kept: usize,
    /// Its answer, once read (never [`Sorted::Other`]).
    answer: Option<Sorted>,
}

/// A running (or finished) server and the client's view of it.
pub struct Client {
    child: Child,
    writer: Option<Sender<Vec<u8>>>,
    events: Receiver<Event>,
    budget: SharedBudget,
    stderr: Arc<Mutex<StderrBuf>>,
    started: Instant,
    eof: bool,
    exit: Option<ExitStatus>,
    closed: bool,
    /// Whether a line arrived during the last wait.
    arrived: bool,
    /// Whether members of the server's process group were still running
    /// once the server had exited (checked when closing).
    group_left: Option<bool>,
    next_id: i64,
    /// Ids given up on (timed out, abandoned): their late answers are dropped.
    abandoned: Vec<i64>,
    op: Option<Op>,
    requested: VersionIndex,
    version: VersionIndex,
    client_info: Value,
    opened: Option<Answer>,
    opened_value: Option<Value>,
    notifications: Kept<Arc<Doc>>,
    server_requests: Kept<Arc<Doc>>,
    stray: Kept<StrayLine>,
    unmatched: Kept<Arc<Doc>>,
    first_response: Option<Duration>,
    /// The last answer matched to a request.
    last_response: Option<Arc<Doc>>,
    /// Every line sent (`true`) and received (`false`), when asked for.
    transcript: Option<Kept<(bool, String)>>,
    /// The output schemas of the last `tools/list`, which results of
    /// `tools/call` are checked against, as SDK clients do (when
    /// `check_output` is on).
    output_schemas: OutputSchemas,
    check_output: bool,
    /// The progress token of the last `tools/call` that asked for progress,
    /// and the notifications received for it, in order (each kept as read,
    /// shared with `notifications`).
    progress_token: Option<i64>,
    progress_seen: Vec<Arc<Doc>>,
    /// How many of `progress_seen` [`Client::take_progress`] handed out.
    progress_taken: usize,
    /// Calls in flight started with [`Client::begin_call_async`], by id.
    async_calls: HashMap<i64, AsyncCall>,
    /// Progress of async calls that ended before it was handed out.
    async_progress_left: Vec<(i64, Arc<Doc>)>,
}

/// At most this many progress notifications are kept per call (a server
/// rate-limits them; one that does not cannot fill memory).
pub const MAX_PROGRESS_KEPT: usize = 100_000;

fn spawn_thread<F: FnOnce() + Send + 'static>(name: &str, f: F) -> Result<(), ClientError> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map(|_| ())
        .map_err(|e| ClientError::Spawn(format!("cannot start a thread: {e}")))
}

fn writer_loop(mut stdin: ChildStdin, lines: Receiver<Vec<u8>>) {
    platform::block_sigpipe_in_this_thread();
    for line in lines {
        if stdin.write_all(&line).and_then(|_| stdin.flush()).is_err() {
            break;
        }
    }
    // Dropping stdin closes the pipe: end of input for the server.
}

fn stdout_loop<R: Read>(out: R, tx: Sender<Event>, budget: SharedBudget) {
    let mut reader = LineReader::new(BufReader::with_capacity(1 << 16, out));
    let (state, cv) = &*budget;
    while let Ok(Some(line)) = reader.next_line() {
        {
            let mut b = lock(state);
            while b.bytes > READ_AHEAD_BYTES && !b.closed {
                b = cv.wait(b).unwrap_or_else(|poisoned| poisoned.into_inner());
            }
            if b.closed {
                return;
            }
            b.bytes += line.len();
        }
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

/// A parsed line that is a JSON-RPC 2.0 message object.
fn is_jsonrpc(doc: &Doc) -> bool {
    let root = doc.root();
    root.is_object() && root.get("jsonrpc").and_then(|v| v.as_str()) == Some("2.0")
}

/// Whether `id` is the number `want` (compared exactly: `3`, `3.0` and `3e0` are).
fn id_is(id: Option<Val<'_>>, want: i64) -> bool {
    let Some(text) = id.and_then(|v| v.number_text()) else { return false };
    ExactNumber::parse(text).is_some() && ExactNumber::parse(text) == ExactNumber::parse(&want.to_string())
}

/// The integer an id is, when it is one of ours.
fn own_id(id: Option<Val<'_>>, abandoned: &[i64]) -> Option<usize> {
    abandoned.iter().position(|&a| id_is(id, a))
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

fn error_from(err: Val<'_>) -> ClientError {
    let code = err.get("code").and_then(|c| c.number_text()).and_then(|t| t.parse::<i64>().ok());
    let message = err.get("message").and_then(|m| m.as_str());
    match (code, message) {
        (Some(code), Some(message)) => {
            ClientError::Rpc { code, message: message.to_string(), data: err.get("data").map(|d| d.to_value()) }
        }
        _ => ClientError::Protocol(format!("malformed error object: {}", cut_text(err.raw(), 200))),
    }
}

/// The answer to a request the server sent: this client offers nothing.
#[derive(Serialize)]
struct MethodNotFound<'a> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    error: RpcErrorOut,
}

#[derive(Serialize)]
struct RpcErrorOut {
    code: i64,
    message: String,
}

impl Client {
    /// Start the server, in a process group of its own (see
    /// [`platform::own_process_group`]). Nothing is sent yet: call
    /// [`Client::open`] for the handshake of the chosen protocol version.
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
        platform::own_process_group(&mut cmd);
        let mut child =
            cmd.spawn().map_err(|e| ClientError::Spawn(format!("{}: {e}", launch.program.to_string_lossy())))?;
        let started = Instant::now();
        let (stdin, stdout, stderr) = match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
            (Some(i), Some(o), Some(e)) => (i, o, e),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                platform::end_process_group(child.id());
                return Err(ClientError::Spawn("the child's standard streams are not pipes".into()));
            }
        };
        let (line_tx, line_rx) = mpsc::channel::<Vec<u8>>();
        let (event_tx, event_rx) = mpsc::channel::<Event>();
        let budget: SharedBudget = Arc::new((Mutex::new(Budget::default()), Condvar::new()));
        let stderr_buf = Arc::new(Mutex::new(StderrBuf::default()));
        let buf = Arc::clone(&stderr_buf);
        let reader_budget = Arc::clone(&budget);
        let threads = spawn_thread("mcplite-client-stdin", move || writer_loop(stdin, line_rx))
            .and_then(|_| spawn_thread("mcplite-client-stdout", move || stdout_loop(stdout, event_tx, reader_budget)))
            .and_then(|_| spawn_thread("mcplite-client-stderr", move || stderr_loop(stderr, buf)));
        if let Err(e) = threads {
            let _ = child.kill();
            let _ = child.wait();
            platform::end_process_group(child.id());
            return Err(e);
        }
        Ok(Client {
            child,
            writer: Some(line_tx),
            events: event_rx,
            budget,
            stderr: stderr_buf,
            started,
            eof: false,
            exit: None,
            closed: false,
            arrived: false,
            group_left: None,
            next_id: 0,
            abandoned: Vec::new(),
            op: None,
            requested,
            version: requested,
            client_info,
            opened: None,
            opened_value: None,
            notifications: Kept::new(KEEP_BYTES),
            server_requests: Kept::new(KEEP_BYTES),
            stray: Kept::new(KEEP_BYTES),
            unmatched: Kept::new(KEEP_BYTES),
            first_response: None,
            last_response: None,
            transcript: None,
            output_schemas: OutputSchemas::default(),
            check_output: true,
            progress_token: None,
            progress_seen: Vec::new(),
            progress_taken: 0,
            async_calls: HashMap::new(),
            async_progress_left: Vec::new(),
        })
    }

    // ---- Operations in slices -------------------------------------------

    /// Start the opening exchange of the chosen version (finish it with
    /// [`Client::step`]). Legacy: `initialize`, then
    /// `notifications/initialized`; the server may choose another legacy
    /// version, which is then used. Modern: `server/discover`, which must list
    /// the version.
    pub fn begin_open(&mut self, timeout: Duration) -> Result<(), ClientError> {
        self.abandon();
        let legacy = VERSIONS[self.requested].era == Era::Legacy;
        let pending = if legacy {
            let params = json!({
                (wire::PROTOCOL_VERSION): VERSIONS[self.requested].id,
                "capabilities": {},
                (wire::CLIENT_INFO): self.client_info,
            });
            self.send_request("initialize", Some(params), timeout, false)?
        } else {
            self.send_request("server/discover", None, timeout, true)?
        };
        self.op = Some(Op::Open(pending));
        Ok(())
    }

    /// Start any request (for the modern version, the per-request `_meta`
    /// is added to `params`, keeping any member the caller set).
    pub fn begin_request(&mut self, method: &str, params: Option<Value>, timeout: Duration) -> Result<(), ClientError> {
        self.abandon();
        let pending = self.send_request(method, params, timeout, true)?;
        self.op = Some(Op::Request(pending));
        Ok(())
    }

    /// Start `tools/call`. A tool error is a result with `isError: true`.
    pub fn begin_call_tool(&mut self, name: &str, arguments: Value, timeout: Duration) -> Result<(), ClientError> {
        self.begin_call_tool_with(name, arguments, timeout, false)
    }

    /// Start `tools/call`, asking for progress when `progress` holds: the
    /// request carries `_meta.progressToken` (its own id), and the
    /// notifications for it are kept ([`Client::take_progress`]).
    pub fn begin_call_tool_with(
        &mut self,
        name: &str,
        arguments: Value,
        timeout: Duration,
        progress: bool,
    ) -> Result<(), ClientError> {
        if !arguments.is_object() {
            return Err(ClientError::Invalid("tool arguments must be a JSON object".into()));
        }
        self.abandon();
        let mut params = json!({"name": name, "arguments": arguments});
        if progress {
            let token = self.next_id;
            params[wire::META] = json!({ (wire::PROGRESS_TOKEN): token });
            self.progress_token = Some(token);
            self.progress_seen.clear();
            self.progress_taken = 0;
        }
        let pending = self.send_request("tools/call", Some(params), timeout, true)?;
        self.op = Some(Op::CallTool { pending, tool: name.to_string() });
        Ok(())
    }

    /// Start `tools/list`, following `nextCursor` (each page gets `timeout`).
    pub fn begin_list_tools(&mut self, timeout: Duration) -> Result<(), ClientError> {
        self.abandon();
        let pending = self.send_request("tools/list", None, timeout, true)?;
        self.op = Some(Op::ListTools { pending, pages: Vec::new(), seen: Vec::new() });
        Ok(())
    }

    /// Whether an operation is waiting for its answer.
    pub fn is_waiting(&self) -> bool {
        self.op.is_some()
    }

    // ---- Calls in flight at once ----------------------------------------

    /// Send `tools/call` without waiting; returns its id, the handle for
    /// [`Client::step_async`], [`Client::cancel_async`] and (when
    /// `progress` holds, as the request's progress token)
    /// [`Client::take_async_progress`]. Any number of calls may be in
    /// flight, beside the operation of a `begin_*`; their answers are
    /// matched by id whenever lines are read.
    pub fn begin_call_async(
        &mut self,
        name: &str,
        arguments: Value,
        timeout: Duration,
        progress: bool,
    ) -> Result<i64, ClientError> {
        if !arguments.is_object() {
            return Err(ClientError::Invalid("tool arguments must be a JSON object".into()));
        }
        let mut params = json!({"name": name, "arguments": arguments});
        if progress {
            params[wire::META] = json!({ (wire::PROGRESS_TOKEN): self.next_id });
        }
        let pending = self.send_request("tools/call", Some(params), timeout, true)?;
        let id = pending.id;
        let call = AsyncCall {
            pending,
            tool: name.to_string(),
            progress,
            progress_new: Vec::new(),
            progress_kept: 0,
            answer: None,
        };
        self.async_calls.insert(id, call);
        Ok(id)
    }

    /// The id of an async call not yet answered that `id` is.
    fn async_id(&self, id: Option<Val<'_>>) -> Option<i64> {
        self.async_calls.iter().find(|(&k, c)| c.answer.is_none() && id_is(id, k)).map(|(&k, _)| k)
    }

    /// Wait at most `slice` for the answer of the async call `id` (reading
    /// and sorting every line meanwhile). `Ok(None)`: not yet. Done or
    /// failed, the call is over; past its timeout it is cancelled.
    pub fn step_async(&mut self, id: i64, slice: Duration) -> Result<Option<Outcome>, ClientError> {
        if self.op.is_some() {
            return Err(ClientError::Invalid(
                "cannot wait for a call started with call_async() while another request waits for its answer".into(),
            ));
        }
        let Some(deadline) = self.async_calls.get(&id).map(|c| c.pending.deadline) else {
            return Err(if self.closed {
                ClientError::Closed
            } else {
                ClientError::Invalid(format!("no call with id {id} is in flight"))
            });
        };
        let gone = !self.is_alive();
        let waited = self.wait_async(id, deadline_after(slice).min(deadline));
        let answered = self.async_calls.get(&id).is_some_and(|c| c.answer.is_some());
        let over = answered || waited.is_err() || (gone && !self.arrived) || Instant::now() >= deadline;
        if !over {
            return Ok(None);
        }
        let Some(call) = self.async_calls.remove(&id) else { return Err(ClientError::Closed) };
        self.async_progress_left.extend(call.progress_new.into_iter().map(|p| (id, p)));
        if let Some(answer) = call.answer {
            return self.finish_async(&call.tool, answer).map(Some);
        }
        match waited {
            Err(e) => {
                self.abandoned.push(id);
                Err(e)
            }
            Ok(()) if gone && !self.arrived => {
                self.abandoned.push(id);
                Err(self.exited())
            }
            Ok(()) => {
                let p = &call.pending;
                let err = ClientError::Timeout { method: p.method.clone(), seconds: p.timeout.as_secs_f64() };
                self.cancel_pending(p, "The client gave up waiting.");
                Err(err)
            }
        }
    }

    /// Read lines until the async call `id` is answered or `until` passes.
    fn wait_async(&mut self, id: i64, until: Instant) -> Result<(), ClientError> {
        self.arrived = false;
        loop {
            if self.async_calls.get(&id).is_none_or(|c| c.answer.is_some()) {
                return Ok(());
            }
            match self.next_line(until) {
                Next::Line(at, bytes) => {
                    self.take_line(at, bytes, None);
                }
                Next::Quiet => return Ok(()),
                Next::Ended => return Err(self.exited()),
            }
        }
    }

    /// The outcome of an async call's answer, checked as `tools/call`'s is.
    fn finish_async(&mut self, tool: &str, answer: Sorted) -> Result<Outcome, ClientError> {
        let answer = match answer {
            Sorted::Answer(a) => a,
            Sorted::Unusable(why) => return Err(ClientError::Protocol(format!("the answer to tools/call {why}"))),
            Sorted::Other => return Err(ClientError::Protocol("the answer to tools/call was lost".into())),
        };
        self.last_response = Some(Arc::clone(&answer.doc));
        if let Some(err) = answer.doc.root().get("error") {
            return Err(error_from(err));
        }
        if self.check_output && self.output_schemas.declares(tool) {
            self.output_schemas.check(tool, &answer.result().to_value()).map_err(ClientError::Output)?;
        }
        Ok(Outcome::Answer(answer))
    }

    /// Cancel the async call `id` (`notifications/cancelled`); its late
    /// answer is dropped. True when it was still in flight.
    pub fn cancel_async(&mut self, id: i64) -> bool {
        match self.async_calls.remove(&id) {
            Some(call) if call.answer.is_none() => {
                self.cancel_pending(&call.pending, "The client cancelled the request.");
                true
            }
            _ => false,
        }
    }

    /// Tell the server a request is cancelled (unless it cannot hear it) and
    /// drop its late answer.
    fn cancel_pending(&mut self, p: &Pending, reason: &str) {
        if p.cancellable && !self.eof && !self.closed {
            let _ = self.notify("notifications/cancelled", Some(json!({(wire::REQUEST_ID): p.id, "reason": reason})));
        }
        self.abandoned.push(p.id);
    }

    /// The progress notifications of async calls that asked for progress,
    /// received since the last take: `(id, notification)` in order of
    /// arrival for each call. Each has `params` ([`progress_params`]).
    pub fn take_async_progress(&mut self) -> Vec<(i64, Arc<Doc>)> {
        let mut out = std::mem::take(&mut self.async_progress_left);
        let mut ids: Vec<i64> = self.async_calls.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            if let Some(call) = self.async_calls.get_mut(&id) {
                out.extend(call.progress_new.drain(..).map(|p| (id, p)));
            }
        }
        out
    }

    /// Wait at most `slice` for the operation in progress. `Ok(None)`: not
    /// done yet, call again. Done or failed, the operation is over; a timeout
    /// cancels the request.
    pub fn step(&mut self, slice: Duration) -> Result<Option<Outcome>, ClientError> {
        let Some(op) = self.op.take() else {
            return Err(ClientError::Invalid("no request is waiting for an answer".into()));
        };
        let until = deadline_after(slice).min(op.pending().deadline);
        // A server that has exited while processes it started keep its
        // stdout open never shows end of input: once it was gone before a
        // slice in which nothing arrived, it is treated as exited.
        let gone = !self.is_alive();
        match self.wait_answer(op.pending(), until) {
            Ok(None) if gone && !self.arrived => {
                self.abandoned.push(op.pending().id);
                Err(self.exited())
            }
            Ok(None) => {
                if Instant::now() >= op.pending().deadline {
                    let p = op.pending();
                    let err = ClientError::Timeout { method: p.method.clone(), seconds: p.timeout.as_secs_f64() };
                    self.op = Some(op);
                    self.abandon();
                    return Err(err);
                }
                self.op = Some(op);
                Ok(None)
            }
            Err(e) => {
                self.abandoned.push(op.pending().id);
                Err(e)
            }
            Ok(Some(answer)) => self.advance(op, answer),
        }
    }

    /// The operation's answer arrived: finish it, or start its next request.
    fn advance(&mut self, op: Op, answer: Answer) -> Result<Option<Outcome>, ClientError> {
        match op {
            Op::Request(_) => Ok(Some(Outcome::Answer(answer))),
            Op::CallTool { tool, .. } => {
                if self.check_output && self.output_schemas.declares(&tool) {
                    self.output_schemas.check(&tool, &answer.result().to_value()).map_err(ClientError::Output)?;
                }
                Ok(Some(Outcome::Answer(answer)))
            }
            Op::Open(_) => {
                self.settle_version(&answer)?;
                self.opened_value = Some(answer.to_value());
                self.opened = Some(answer.clone());
                Ok(Some(Outcome::Answer(answer)))
            }
            Op::ListTools { pending, mut pages, mut seen } => {
                let result = answer.result();
                if result.get("tools").map(|t| t.kind()) != Some(Kind::Array) {
                    return Err(ClientError::Protocol("the tools/list result has no tools array".into()));
                }
                let next = result.get(wire::NEXT_CURSOR).and_then(|c| c.as_str()).map(str::to_string);
                pages.push(answer);
                let Some(next) = next else {
                    let tools: Vec<Value> = pages.iter().flat_map(|p| page_tools(p).map(|t| t.to_value())).collect();
                    self.output_schemas = OutputSchemas::from_tools(&tools);
                    return Ok(Some(Outcome::Pages(pages)));
                };
                if seen.contains(&next) {
                    return Err(ClientError::Protocol(format!("tools/list repeated the cursor {next:?}")));
                }
                if pages.len() >= MAX_PAGES {
                    return Err(ClientError::Protocol(format!("tools/list returned more than {MAX_PAGES} pages")));
                }
                let params = json!({ "cursor": next });
                seen.push(next);
                let pending = self.send_request("tools/list", Some(params), pending.timeout, true)?;
                self.op = Some(Op::ListTools { pending, pages, seen });
                Ok(None)
            }
        }
    }

    /// Check the handshake answer and settle the version.
    fn settle_version(&mut self, answer: &Answer) -> Result<(), ClientError> {
        let asked = VERSIONS[self.requested].id;
        let result = answer.result();
        if VERSIONS[self.requested].era == Era::Legacy {
            let answered = result
                .get(wire::PROTOCOL_VERSION)
                .and_then(|v| v.as_str())
                .ok_or_else(|| ClientError::Protocol("the initialize result has no protocolVersion".into()))?;
            match version::lookup(answered) {
                Some(i) if VERSIONS[i].era == Era::Legacy => self.version = i,
                _ => return Err(ClientError::Version { requested: asked.into(), answered: answered.into() }),
            }
            self.notify("notifications/initialized", None)
        } else {
            let versions = result.get(wire::SUPPORTED_VERSIONS);
            let listed = versions.is_some_and(|v| v.items().any(|x| x.as_str() == Some(asked)));
            if listed {
                Ok(())
            } else {
                let offered = versions.map(|v| cut_text(v.raw(), 200)).unwrap_or_else(|| "none".into());
                Err(ClientError::Version { requested: asked.into(), answered: offered })
            }
        }
    }

    /// Give up the operation in progress, if any: its request is cancelled
    /// (`notifications/cancelled`, except for `initialize`) and a late answer
    /// dropped. The client can go on.
    pub fn abandon(&mut self) {
        if let Some(op) = self.op.take() {
            self.cancel_pending(op.pending(), "The client gave up waiting.");
        }
    }

    /// Run the operation in progress to its end.
    fn finish(&mut self) -> Result<Outcome, ClientError> {
        loop {
            if let Some(outcome) = self.step(Duration::from_millis(100))? {
                return Ok(outcome);
            }
        }
    }

    // ---- Blocking operations --------------------------------------------

    /// The opening exchange (see [`Client::begin_open`]). Returns the server's answer.
    pub fn open(&mut self, timeout: Duration) -> Result<Value, ClientError> {
        self.begin_open(timeout)?;
        self.finish()?;
        Ok(self.opened_value.clone().unwrap_or(Value::Null))
    }

    /// Send a request and wait for its answer (see [`Client::begin_request`]).
    pub fn request(&mut self, method: &str, params: Option<Value>, timeout: Duration) -> Result<Value, ClientError> {
        self.begin_request(method, params, timeout)?;
        self.finish().map(|o| outcome_value(&o))
    }

    /// All `tools` of `tools/list`, following `nextCursor`.
    pub fn list_tools(&mut self, timeout: Duration) -> Result<Vec<Value>, ClientError> {
        self.begin_list_tools(timeout)?;
        match self.finish()? {
            Outcome::Pages(pages) => Ok(pages.iter().flat_map(|p| page_tools(p).map(|t| t.to_value())).collect()),
            Outcome::Answer(a) => Ok(vec![a.to_value()]),
        }
    }

    /// `tools/call`. A tool error is a result with `isError: true`.
    pub fn call_tool(&mut self, name: &str, arguments: Value, timeout: Duration) -> Result<Value, ClientError> {
        self.begin_call_tool(name, arguments, timeout)?;
        self.finish().map(|o| outcome_value(&o))
    }

    // ---- Sending and sorting lines --------------------------------------

    fn with_meta(&self, params: Option<Value>) -> Result<Option<Value>, ClientError> {
        let modern = VERSIONS[self.version].era == Era::Modern;
        let mut map = match params {
            None if !modern => return Ok(None),
            None => Map::new(),
            Some(Value::Object(m)) => m,
            Some(other) => return Err(ClientError::Invalid(format!("params must be a JSON object, not {other}"))),
        };
        if modern {
            let meta = map.entry(wire::META).or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(meta) = meta else {
                return Err(ClientError::Invalid("params._meta must be a JSON object".into()));
            };
            meta.entry(META_PROTOCOL_VERSION).or_insert_with(|| Value::from(VERSIONS[self.version].id));
            meta.entry(META_CLIENT_CAPABILITIES).or_insert_with(|| Value::Object(Map::new()));
            meta.entry(META_CLIENT_INFO).or_insert_with(|| self.client_info.clone());
        }
        Ok(Some(Value::Object(map)))
    }

    fn send_request(
        &mut self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
        cancellable: bool,
    ) -> Result<Pending, ClientError> {
        let params = self.with_meta(params)?;
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg)?;
        Ok(Pending { id, method: method.to_string(), timeout, deadline: deadline_after(timeout), cancellable })
    }

    /// Read lines until the answer to `p` arrives or `until` passes (`None`).
    fn wait_answer(&mut self, p: &Pending, until: Instant) -> Result<Option<Answer>, ClientError> {
        self.arrived = false;
        loop {
            match self.next_line(until) {
                Next::Line(at, bytes) => match self.take_line(at, bytes, Some(p)) {
                    Sorted::Other => {}
                    Sorted::Unusable(why) => {
                        return Err(ClientError::Protocol(format!("the answer to {} {why}", p.method)))
                    }
                    Sorted::Answer(answer) => {
                        let root = answer.doc.root();
                        if let Some(err) = root.get("error") {
                            return Err(error_from(err));
                        }
                        return Ok(Some(answer));
                    }
                },
                Next::Quiet => return Ok(None),
                Next::Ended => return Err(self.exited()),
            }
        }
    }

    /// The next line from the server, waiting until `until` at most (once
    /// it has passed, only a line already read): `Quiet` when none came in
    /// time, `Ended` once the server's stdout has closed. A line taken is
    /// off the read-ahead and marks the wait as one in which a line arrived.
    fn next_line(&mut self, until: Instant) -> Next {
        if self.eof {
            return Next::Ended;
        }
        let now = Instant::now();
        let event = if now >= until {
            match self.events.try_recv() {
                Ok(e) => Ok(e),
                Err(TryRecvError::Empty) => Err(RecvTimeoutError::Timeout),
                Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
            }
        } else {
            self.events.recv_timeout(until - now)
        };
        match event {
            Ok(Event::Line(at, bytes)) => {
                self.released(bytes.len());
                self.arrived = true;
                Next::Line(at, bytes)
            }
            Ok(Event::Eof) | Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                Next::Ended
            }
            Err(RecvTimeoutError::Timeout) => Next::Quiet,
        }
    }

    /// The caller took `n` bytes off the read-ahead.
    fn released(&self, n: usize) {
        let (state, cv) = &*self.budget;
        let mut b = lock(state);
        b.bytes = b.bytes.saturating_sub(n);
        cv.notify_all();
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
        if self.write_line(msg.to_string()) {
            Ok(())
        } else {
            Err(self.exited())
        }
    }

    fn record(&mut self, sent: bool, line: &[u8]) {
        if let Some(t) = &mut self.transcript {
            let text = cut_text(line, STRAY_LINE_BYTES);
            let size = text.len();
            t.push((sent, text), size);
        }
    }

    fn keep_stray(&mut self, at_ms: f64, bytes: &[u8]) {
        let text = cut_text(bytes, STRAY_LINE_BYTES);
        let size = text.len();
        self.stray.push(StrayLine { at_ms, text }, size);
    }

    /// Sort one stdout line, read once. Returns what it is to `want`.
    fn take_line(&mut self, at: Instant, mut bytes: Vec<u8>, want: Option<&Pending>) -> Sorted {
        let elapsed = at.saturating_duration_since(self.started);
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        if self.transcript.is_some() {
            self.record(false, &bytes);
        }
        let at_ms = elapsed.as_secs_f64() * 1000.0;
        let (doc, not_utf8) = match Doc::try_parse(bytes) {
            Ok(doc) => (doc, None),
            Err((ParseError::NotUtf8 { at }, bytes)) => {
                // Read the replaced text to see what the line was meant to be.
                match Doc::try_parse(String::from_utf8_lossy(&bytes).into_owned().into_bytes()) {
                    Ok(doc) => (doc, Some(at)),
                    Err((_, _)) => {
                        self.keep_stray(at_ms, &bytes);
                        return Sorted::Other;
                    }
                }
            }
            Err((_, bytes)) => {
                // Text printed without a newline runs into the next message:
                // keep the text as stray and still read the message behind it.
                let glued = match bytes.iter().position(|&b| b == b'{').filter(|&i| i > 0) {
                    Some(i) => match Doc::parse(bytes[i..].to_vec()) {
                        Ok(doc) if is_jsonrpc(&doc) => Some((i, doc)),
                        _ => None,
                    },
                    None => None,
                };
                match glued {
                    Some((i, doc)) => {
                        self.keep_stray(at_ms, &bytes[..i]);
                        (doc, None)
                    }
                    None => {
                        self.keep_stray(at_ms, &bytes);
                        return Sorted::Other;
                    }
                }
            }
        };
        self.sort_message(doc, not_utf8, at_ms, elapsed, want)
    }

    fn sort_message(
        &mut self,
        doc: Doc,
        not_utf8: Option<usize>,
        at_ms: f64,
        elapsed: Duration,
        want: Option<&Pending>,
    ) -> Sorted {
        let root = doc.root();
        let wanted = want.filter(|p| root.is_object() && id_is(root.get("id"), p.id));
        let async_id = if root.is_object() { self.async_id(root.get("id")) } else { None };
        let has_result = root.is_object() && root.get("result").is_some();
        let has_error = root.is_object() && root.get("error").is_some();
        // The answer waited for: a JSON-RPC message with its id, or any
        // object with its id and a result or an error (a JSON record that
        // merely has an "id" is stray output).
        let answer_like = is_jsonrpc(&doc) || has_result || has_error;
        if (wanted.is_some() || async_id.is_some()) && answer_like && root.get("method").is_none() {
            let why = if let Some(at) = not_utf8 {
                Some(format!("is not valid UTF-8 (byte {at})"))
            } else if !is_jsonrpc(&doc) {
                Some("is not a JSON-RPC 2.0 message (it lacks \"jsonrpc\": \"2.0\")".to_string())
            } else if has_result && has_error {
                Some("has both a result and an error".to_string())
            } else if !has_result && !has_error {
                Some("has neither a result nor an error".to_string())
            } else if root.contains_deep() {
                Some(format!("is nested deeper than {MAX_RESULT_DEPTH} levels, more than this client reads"))
            } else {
                None
            };
            if self.first_response.is_none() {
                self.first_response = Some(elapsed);
            }
            let sorted = match why {
                Some(why) => Sorted::Unusable(why),
                None => Sorted::Answer(Answer { doc: Arc::new(doc) }),
            };
            if let Some(call) = async_id.and_then(|id| self.async_calls.get_mut(&id)) {
                call.answer = Some(sorted);
                return Sorted::Other;
            }
            if let Sorted::Answer(a) = &sorted {
                self.last_response = Some(Arc::clone(&a.doc));
            }
            return sorted;
        }
        if !is_jsonrpc(&doc) {
            self.keep_stray(at_ms, doc.text());
            return Sorted::Other;
        }
        let size = doc.heap_size();
        let id = root.get("id");
        if root.get("method").is_some_and(|m| m.is_string()) {
            match id {
                Some(id) => {
                    // A request from the server: this client offers nothing.
                    let method = root.get("method").and_then(|m| m.as_str()).unwrap_or_default();
                    if let Ok(raw) = RawValue::from_string(id.raw_str().to_string()) {
                        let answer = MethodNotFound {
                            jsonrpc: "2.0",
                            id: &raw,
                            error: RpcErrorOut { code: -32601, message: format!("Method not found: {method}") },
                        };
                        // A writer that is gone shows as end of input on the next read.
                        if let Ok(text) = serde_json::to_string(&answer) {
                            self.write_line(text);
                        }
                    }
                    self.server_requests.push(Arc::new(doc), size);
                }
                None => {
                    let doc = Arc::new(doc);
                    self.note_progress(&doc);
                    self.notifications.push(doc, size)
                }
            }
            return Sorted::Other;
        }
        if has_result || has_error {
            if self.first_response.is_none() {
                self.first_response = Some(elapsed);
            }
            if let Some(pos) = own_id(id, &self.abandoned) {
                self.abandoned.swap_remove(pos);
                return Sorted::Other;
            }
            self.unmatched.push(Arc::new(doc), size);
            return Sorted::Other;
        }
        self.keep_stray(at_ms, doc.text());
        Sorted::Other
    }

    /// Keep a progress notification for the call that asked for progress:
    /// the notification as read (no copy of its `params` is made).
    fn note_progress(&mut self, doc: &Arc<Doc>) {
        let root = doc.root();
        if root.get("method").and_then(|m| m.as_str()) != Some("notifications/progress") {
            return;
        }
        let Some(params) = root.get("params") else { return };
        let Some(token) = params.get(wire::PROGRESS_TOKEN).and_then(|t| t.raw_str().parse::<i64>().ok()) else {
            return;
        };
        if self.progress_token == Some(token) {
            if self.progress_seen.len() < MAX_PROGRESS_KEPT {
                self.progress_seen.push(Arc::clone(doc));
            }
        } else if let Some(call) = self.async_calls.get_mut(&token).filter(|c| c.progress && c.answer.is_none()) {
            if call.progress_kept < MAX_PROGRESS_KEPT {
                call.progress_kept += 1;
                call.progress_new.push(Arc::clone(doc));
            }
        }
    }

    /// The progress notifications received for the last call that asked
    /// for progress: all of them, or (`new_only`) those not handed out
    /// before. Each has `params` ([`progress_params`]).
    pub fn take_progress(&mut self, new_only: bool) -> Vec<Arc<Doc>> {
        let from = if new_only { self.progress_taken } else { 0 };
        self.progress_taken = self.progress_seen.len();
        self.progress_seen[from.min(self.progress_seen.len())..].to_vec()
    }

    /// Record `text` and hand it to the writer thread as one line; false when
    /// the writer is gone.
    fn write_line(&mut self, text: String) -> bool {
        self.record(true, text.as_bytes());
        let mut line = text.into_bytes();
        line.push(b'\n');
        matches!(&self.writer, Some(w) if w.send(line).is_ok())
    }

    /// Read whatever the server has written so far, without waiting. While
    /// an operation waits, lines stay queued for [`Client::step`].
    pub fn poll(&mut self) {
        if self.op.is_some() {
            return;
        }
        while let Next::Line(at, bytes) = self.next_line(Instant::now()) {
            self.take_line(at, bytes, None);
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

    /// Whether `tools/call` results are checked against the output schemas
    /// of the last `tools/list` (on by default).
    pub fn set_check_output(&mut self, on: bool) {
        self.check_output = on;
    }

    // ---- What was kept --------------------------------------------------

    /// Notifications received so far (logging, progress, ...), the most
    /// recent [`KEEP_BYTES`]; `clear` forgets them.
    pub fn notification_docs(&mut self, clear: bool) -> Vec<Arc<Doc>> {
        self.poll();
        let out: Vec<Arc<Doc>> = self.notifications.iter().cloned().collect();
        if clear {
            self.notifications.clear();
        }
        out
    }

    /// [`Client::notification_docs`] as serde values.
    pub fn notifications(&mut self, clear: bool) -> Vec<Value> {
        self.notification_docs(clear).iter().map(|d| d.root().to_value()).collect()
    }

    /// Requests the server sent (each answered with -32601).
    pub fn server_request_docs(&mut self) -> Vec<Arc<Doc>> {
        self.poll();
        self.server_requests.iter().cloned().collect()
    }

    pub fn server_requests(&mut self) -> Vec<Value> {
        self.server_request_docs().iter().map(|d| d.root().to_value()).collect()
    }

    /// Responses whose id matched no pending request.
    pub fn unmatched_docs(&mut self) -> Vec<Arc<Doc>> {
        self.poll();
        self.unmatched.iter().cloned().collect()
    }

    pub fn unmatched(&mut self) -> Vec<Value> {
        self.unmatched_docs().iter().map(|d| d.root().to_value()).collect()
    }

    /// Lines on stdout that were not JSON-RPC messages (the most recent
    /// [`KEEP_BYTES`]).
    pub fn stray_lines(&mut self) -> Vec<StrayLine> {
        self.poll();
        self.stray.iter().cloned().collect()
    }

    /// How many stray lines arrived in all, the ones no longer kept included.
    pub fn stray_count(&mut self) -> u64 {
        self.poll();
        self.stray.total
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
        self.opened_value.as_ref()
    }

    /// The handshake answer as read.
    pub fn opened_answer(&self) -> Option<&Answer> {
        self.opened.as_ref()
    }

    /// How the server names itself: `serverInfo` in an `initialize` result,
    /// or in the `_meta` of a `server/discover` result.
    pub fn server_info(&self) -> Option<Val<'_>> {
        let result = self.opened.as_ref()?.result();
        result.get(wire::SERVER_INFO).or_else(|| result.get(wire::META)?.get(wire::META_SERVER_INFO))
    }

    /// The exact line of the last answer to one of this client's requests.
    pub fn last_response(&self) -> Option<&str> {
        self.last_response.as_ref().and_then(|d| std::str::from_utf8(d.text()).ok())
    }

    /// The last answer to one of this client's requests, as read.
    pub fn last_response_doc(&self) -> Option<&Doc> {
        self.last_response.as_deref()
    }

    /// Start (or stop) keeping every line sent and received.
    pub fn set_transcript(&mut self, on: bool) {
        self.transcript =
            if on { Some(self.transcript.take().unwrap_or_else(|| Kept::new(TRANSCRIPT_KEEP_BYTES))) } else { None };
    }

    /// The lines sent (`true`) and received (`false`) since the last call,
    /// in order; empty unless [`Client::set_transcript`] turned it on.
    pub fn take_transcript(&mut self) -> Vec<(bool, String)> {
        self.poll();
        match &mut self.transcript {
            Some(t) => t.drain(),
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

    /// Whether processes of the server's group were still running after the
    /// server itself had exited (known once closed; they were ended then).
    pub fn group_left_running(&self) -> Option<bool> {
        self.group_left
    }

    // ---- Closing --------------------------------------------------------

    /// Begin closing: abandon any operation and close the server's stdin
    /// (the graceful end of a stdio session). Idempotent.
    pub fn begin_close(&mut self) {
        if !self.closed {
            self.abandon();
            self.closed = true;
            // Calls not answered end; an answer still on its way is dropped.
            let unanswered: Vec<i64> =
                self.async_calls.iter().filter(|(_, c)| c.answer.is_none()).map(|(&id, _)| id).collect();
            for id in unanswered {
                self.async_calls.remove(&id);
                self.abandoned.push(id);
            }
            self.poll();
            self.writer = None;
        }
    }

    /// Wait at most `slice` for the server to exit after [`Client::begin_close`];
    /// true once it has (its group is then ended).
    pub fn close_step(&mut self, slice: Duration) -> bool {
        let until = deadline_after(slice);
        loop {
            if self.exit.is_some() {
                self.end_group();
                return true;
            }
            match self.child.try_wait() {
                Ok(Some(status)) => self.exit = Some(status),
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
                Ok(None) => return false,
                Err(_) => {
                    self.kill();
                    return true;
                }
            }
        }
    }

    /// Kill the server and its process group now, and reap it.
    pub fn kill(&mut self) {
        self.begin_close();
        if self.exit.is_none() {
            let _ = self.child.kill();
            self.exit = self.child.wait().ok();
        }
        self.end_group();
    }

    /// Note whether the server's group outlived it, then end the group and
    /// let the reader thread go.
    fn end_group(&mut self) {
        if self.group_left.is_none() {
            let leader = self.child.id();
            let until = Instant::now() + GROUP_SETTLE;
            let mut alive = platform::process_group_alive(leader);
            while alive && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
                alive = platform::process_group_alive(leader);
            }
            self.group_left = Some(alive);
            if alive {
                platform::end_process_group(leader);
            }
        }
        let (state, cv) = &*self.budget;
        lock(state).closed = true;
        cv.notify_all();
    }

    /// Close the server's stdin, wait up to `grace` for it to exit, then kill
    /// it; always reap it and end its process group. Idempotent. Returns the
    /// exit status.
    pub fn close(&mut self, grace: Duration) -> Option<(Option<i32>, String)> {
        self.begin_close();
        if !self.close_step(grace) {
            self.kill();
        }
        self.exit.map(|s| (s.code(), s.to_string()))
    }
}

fn outcome_value(o: &Outcome) -> Value {
    match o {
        Outcome::Answer(a) => a.to_value(),
        Outcome::Pages(pages) => Value::Array(pages.iter().map(Answer::to_value).collect()),
    }
}

/// The `params` of a progress notification [`Client::take_progress`] or
/// [`Client::take_async_progress`] handed out (present by construction).
pub fn progress_params(notification: &Doc) -> Val<'_> {
    let root = notification.root();
    root.get("params").unwrap_or(root)
}

/// The tools of one `tools/list` page.
pub fn page_tools(page: &Answer) -> impl Iterator<Item = Val<'_>> {
    page.result().get("tools").into_iter().flat_map(|t| t.items())
}

impl Drop for Client {
    fn drop(&mut self) {
        self.close(Duration::from_millis(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_queues_are_bounded_in_bytes_and_keep_the_newest() {
        let mut q: Kept<u32> = Kept::new(10);
        for i in 0..5 {
            q.push(i, 4);
        }
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), vec![3, 4]);
        assert_eq!(q.total, 5);
        q.push(9, 100);
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), vec![9], "one item over the cap is still kept");
        assert_eq!(q.drain(), vec![9]);
        assert_eq!(q.bytes, 0);
    }

    #[test]
    fn long_lines_are_cut_with_a_marker() {
        assert_eq!(cut_text(b"abc", 3), "abc");
        assert_eq!(cut_text(b"abcdef", 3), "abc [... 3 more bytes not kept]");
        assert_eq!(cut_text(b"a\xffb", 10), "a\u{FFFD}b");
    }

    #[test]
    fn ids_compare_exactly() {
        let doc = |s: &str| Doc::parse(s.as_bytes().to_vec()).expect("json");
        for (text, want) in [("3", true), ("3.0", true), ("30e-1", true), ("\"3\"", false), ("4", false)] {
            let d = doc(&format!(r#"{{"id":{text}}}"#));
            assert_eq!(id_is(d.root().get("id"), 3), want, "{text}");
        }
        let big = doc(r#"{"id":9223372036854775808}"#);
        assert!(!id_is(big.root().get("id"), i64::MAX));
        assert!(!id_is(None, 3));
    }
}
