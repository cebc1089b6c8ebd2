//! Routing: one validated request in, what happened out. Handlers return
//! values ([`Reply`]); the service layer (`serve`) writes answers and records
//! what happened for telemetry.
//!
//! Era rules (each request judged on its own):
//! - a request whose `params._meta` carries any of the modern request keys
//!   (protocol version, client capabilities, client info, log level) is served
//!   statelessly in the version it names, after its `_meta` is validated;
//! - otherwise `tools/list` and `tools/call` use the version negotiated by the
//!   latest legacy `initialize`; before any `initialize` they get -32600
//!   "server not initialized" (what CRAN mcplite answers; the spec leaves it open);
//! - `initialize` may be repeated and re-negotiates; it never affects modern
//!   requests.

use crate::envelope::{self, ErrorCode, Message, RequestId, RpcError};
use crate::json::Val;
use crate::projection::{project_tool, write_result};
use crate::r::{self, Formals, RValue};
use crate::requests::{self, Shape};
use crate::result::{CallResult, ToolDef};
use crate::rjson;
use crate::version::{self, VersionIndex, VERSIONS};
use crate::wire;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::time::Duration;

pub use crate::wire::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION, META_SERVER_INFO,
};

/// Request metadata nested deeper than this is refused (-32602): nothing
/// legitimate comes near it, and it is never passed on.
pub const MAX_META_DEPTH: usize = 512;

/// The request `_meta` keys that only modern (2026-07-28) requests carry.
const MODERN_KEYS: [&str; 4] = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL];

/// A tool: its metadata, its argument names and the host's function, in one value.
pub struct Tool<F> {
    pub def: ToolDef,
    pub formals: Formals,
    pub fun: F,
}

/// Identifies a tool call running on a worker.
pub type TaskId = u64;

/// How a tool call ended.
#[derive(Debug)]
pub enum Finished<V> {
    /// The tool function returned this value.
    Returned(V),
    /// It did not return: an R error, an interrupt, a crashed worker, ... The
    /// message goes to the client as the tool error.
    Failed(String),
    /// A result the host made itself (no R value to read).
    Made(Box<CallResult<V>>),
    /// A result object already written for the call's version by the core of
    /// another process (a live R session, see [`Server::call_here`]): sent
    /// as it is, with what that core found for the author: the tool's
    /// failure and whether a number was written as 0 (see [`Here`]).
    Forwarded { result: Vec<u8>, is_error: bool, failure: Option<String>, zeroed: bool },
}

/// A call [`Server::call_here`] ran: the result object, whether it is a
/// tool error, why the tool failed (for the author's line on stderr) and
/// whether a finite non-zero number was written as 0.
pub struct Here {
    pub result: Vec<u8>,
    pub is_error: bool,
    pub failure: Option<String>,
    pub zeroed: bool,
}

/// What [`ToolHost::call`] did.
pub enum Started<V> {
    Done(Finished<V>),
    /// Running elsewhere; [`ToolHost::poll`] reports it.
    Running(TaskId),
}

/// What a call needs to know about the request it serves.
pub struct CallContext {
    /// W3C traceparent of the request's span, when tracing.
    pub traceparent: Option<String>,
    /// The request's id: the host marks the call running while its tool
    /// runs, so its exit hook can tell that call's owed answer from the rest
    /// (see [`Owed::mark_running`]).
    pub id: RequestId,
    /// Where the tool reports progress: `Some` when the request carried a
    /// progress token (see [`crate::progress`]).
    pub progress: Option<crate::progress::Reporter>,
    /// The version the call is answered in.
    pub version: VersionIndex,
    /// The client's name (its `clientInfo`), when it gave one.
    pub client: Option<String>,
}

/// What to answer if the process ends before a call is answered: R will not
/// come back to the core, so the host's exit hook writes [`Ended::line`] (the
/// call whose tool ended R) or [`Ended::unanswered_line`] (every other call).
#[derive(Clone, Debug)]
pub struct Ended {
    id: RequestId,
    version: VersionIndex,
    tool: String,
    server_info: std::sync::Arc<Value>,
}

impl Ended {
    /// The answer line: a tool error saying the tool ended R.
    pub fn line<V: RValue>(&self) -> Vec<u8> {
        let message = format!("Tool {} ended the R process (it called quit()); the server has stopped.", self.tool);
        answer_line::<V>(&self.id, self.version, &CallResult::tool_error(message), &self.server_info)
    }

    /// The answer line for a call that was not the one running when the
    /// process ended (another call's result was being converted, or this
    /// one ran on a worker).
    pub fn unanswered_line<V: RValue>(&self) -> Vec<u8> {
        let message = format!(
            "The server's R process ended (R code called quit()) before tool {} was answered; the server has stopped.",
            self.tool
        );
        answer_line::<V>(&self.id, self.version, &CallResult::tool_error(message), &self.server_info)
    }
}

/// Every tool call read and not yet answered, for a host whose process can
/// end under the core (R's `quit()`, in a tool or in R code the serializer
/// calls while converting a result): its exit hook writes their answers, so
/// each request still gets exactly one. The server owns the list
/// ([`Server::owed`] hands out a handle to it); the service layer owes a call
/// when dispatch starts it and settles it when the answer is written or
/// dropped. A host whose process can end marks the call whose tool runs in
/// it now ([`Owed::mark_running`]), so that call's answer says its tool
/// ended the process.
#[derive(Clone, Default)]
pub struct Owed(std::sync::Arc<std::sync::Mutex<OwedCalls>>);

#[derive(Default)]
struct OwedCalls {
    calls: Vec<Ended>,
    running: Option<crate::envelope::IdKey>,
    /// Answer lines (each with its newline) made and not yet written: the
    /// service layer holds them back to share one write with the next
    /// answers (see `serve`'s [`HOLD_MAX`](crate::serve::HOLD_MAX)). Kept
    /// here so that the exit hook writes them too.
    held: Vec<u8>,
}

/// The held answers' buffer keeps its memory up to this for the next ones.
const HELD_KEEP_BYTES: usize = 1 << 20;

impl Owed {
    fn calls(&self) -> std::sync::MutexGuard<'_, OwedCalls> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn owe(&self, ended: Ended) {
        self.calls().calls.push(ended);
    }

    /// The call with this id has its answer (written, or not wanted).
    pub fn settle(&self, id: &RequestId) {
        let mut owed = self.calls();
        if owed.calls.is_empty() {
            return;
        }
        if let Some(pos) = owed.calls.iter().position(|e| e.id.key() == id.key()) {
            owed.calls.swap_remove(pos);
        }
    }

    /// How many calls with this id are owed an answer.
    pub fn count(&self, id: &RequestId) -> usize {
        self.calls().calls.iter().filter(|e| e.id.key() == id.key()).count()
    }

    /// The tool of the call with this id runs in this process now (`Some`),
    /// or no tool does (`None`).
    pub fn mark_running(&self, id: Option<&RequestId>) {
        self.calls().running = id.map(|id| id.key().clone());
    }

    /// Takes every call still owed an answer and gives the answer lines the
    /// exit hook writes (each without its newline): the held answers first
    /// ([`Owed::hold`], as they are), then [`Ended::line`] for the call whose
    /// tool was running, [`Ended::unanswered_line`] for the rest.
    pub fn take_answers<V: RValue>(&self) -> Vec<Vec<u8>> {
        let (calls, running, mut held) = {
            let mut owed = self.calls();
            (std::mem::take(&mut owed.calls), owed.running.take(), std::mem::take(&mut owed.held))
        };
        let mut lines = Vec::with_capacity(calls.len() + 1);
        if held.pop().is_some() {
            lines.push(held);
        }
        lines.extend(calls.iter().map(|e| {
            if running.as_ref() == Some(e.id.key()) {
                e.line::<V>()
            } else {
                e.unanswered_line::<V>()
            }
        }));
        lines
    }

    /// Hold an answer line back (a newline is added); returns how many bytes
    /// are held now, and whether none were before.
    pub fn hold(&self, line: &[u8]) -> (usize, bool) {
        let mut owed = self.calls();
        let was_empty = owed.held.is_empty();
        owed.held.extend_from_slice(line);
        owed.held.push(b'\n');
        (owed.held.len(), was_empty)
    }

    /// Whether answers are held.
    pub fn holds(&self) -> bool {
        !self.calls().held.is_empty()
    }

    /// Hands the held answers to `write` (one call for all of them), under
    /// this list's lock: an exit hook that runs meanwhile waits, then finds
    /// them written, so none is written twice or lost.
    pub fn write_held(&self, write: impl FnOnce(&[u8])) {
        let mut owed = self.calls();
        if owed.held.is_empty() {
            return;
        }
        write(&owed.held);
        owed.held.clear();
        if owed.held.capacity() > HELD_KEEP_BYTES {
            owed.held = Vec::new();
        }
    }
}

/// A whole answer line for a tool result, written into a buffer of the
/// serializer's pool (see [`Server::recycle_line`]).
fn answer_line<V: RValue>(id: &RequestId, v: VersionIndex, result: &CallResult<V>, server_info: &Value) -> Vec<u8> {
    let version = &VERSIONS[v];
    let server_meta = version.modern_result.then_some((META_SERVER_INFO, server_info));
    let mut line = crate::rjson::take_buffer();
    line.reserve(256);
    envelope::begin_result(&mut line, id);
    write_result(&mut line, result, version, server_meta);
    envelope::end_line(&mut line);
    line
}

/// Runs tools: the only way the core reaches R.
pub trait ToolHost {
    /// What runs a tool (an R function).
    type Fun;
    /// What a tool returns (an R value), read by the core.
    type Value: RValue;
    /// Run the tool with these arguments (already checked with
    /// [`r::args::check`]), or start it on a worker.
    fn call(&mut self, tool: &Tool<Self::Fun>, arguments: Option<Val<'_>>, cx: CallContext) -> Started<Self::Value>;
    /// A call started earlier that has finished, waiting at most `wait`.
    fn poll(&mut self, _wait: Duration) -> Option<(TaskId, Finished<Self::Value>)> {
        None
    }
    /// Stop a running call; nothing is answered for it.
    fn cancel(&mut self, _task: TaskId) {}
    /// What the input reader calls after each line it reads (and when input
    /// ends), so a host that waits in [`ToolHost::poll`] on something of
    /// its own (workers' completion) also wakes for input. Taken once, when
    /// serving starts.
    fn input_waker(&mut self) -> Option<InputWaker> {
        None
    }
    /// What the input reader calls when it reads a cancellation of the call
    /// this host is running in this process now (see [`Canceller`]). Taken
    /// once, when serving starts.
    fn canceller(&mut self) -> Option<Canceller> {
        None
    }
    /// Whether [`ToolHost::poll`] ends as soon as the input waker is called,
    /// so serving may wait there instead of on the input.
    fn wakes_on_input(&self) -> bool {
        false
    }
    /// Whether the host can take more calls now. While it cannot (its queue
    /// is full), serving reads no more input (the reader thread then stops
    /// and the client's pipe fills) and waits in [`ToolHost::poll`].
    fn accepts_calls(&self) -> bool {
        true
    }
    /// Whether [`ToolHost::poll`] has something to do at a time of its own
    /// even with no call running (a cancelled call's grace period to act
    /// on): serving then keeps polling while idle.
    fn has_timers(&self) -> bool {
        false
    }
    /// Serving gives the host a [`LoopWaker`] when it starts: a host whose
    /// news (a tool-set change, a finished call) comes from another thread
    /// calls it then, so that serving, which waits on its inputs with no
    /// timeout while idle, looks at once. The default keeps nothing.
    fn loop_waker(&mut self, _waker: LoopWaker) {}
    /// A new set of tools, for a host whose tools change while serving (the
    /// live-session server): serving puts it in the server and tells the
    /// client (`notifications/tools/list_changed`). `request`: a request is
    /// about to be handled (the host may look for changes then), else an
    /// idle look.
    fn tool_update(&mut self, _request: bool) -> Option<ToolSet<Self::Fun>> {
        None
    }
}

/// A whole tool set: the tools, and optionally their `tools` arrays already
/// written per version (in [`VERSIONS`] order) by another process's core;
/// `fallback` is called for any other tool name (it answers with a tool
/// error) instead of the "unknown tool" error.
pub struct ToolSet<F> {
    pub tools: Vec<Tool<F>>,
    pub lists: Option<Vec<Box<RawValue>>>,
    pub fallback: Option<Tool<F>>,
}

/// See [`ToolHost::input_waker`]: called from the input reader's thread.
pub type InputWaker = Box<dyn Fn() + Send>;

/// Wakes a waiting serve loop (see [`ToolHost::loop_waker`] and
/// [`StopSource::watch`]): cheap, never blocks, callable from any thread
/// (not from a signal handler).
pub type LoopWaker = std::sync::Arc<dyn Fn() + Send + Sync>;

/// Where serving reads its requests to stop ([`StopRequests`]).
pub trait StopSource {
    /// The requests made since serving began.
    fn requests(&self) -> StopRequests;
    /// Call `wake` whenever a request arrives, until the returned guard is
    /// dropped; `None` when this source cannot (serving then looks at
    /// [`StopSource::requests`] every few tens of milliseconds while idle).
    fn watch(&self, _wake: LoopWaker) -> Option<Box<dyn std::any::Any>> {
        None
    }
}

/// A plain function of the requests: looked at, never woken by.
impl<F: Fn() -> StopRequests> StopSource for F {
    fn requests(&self) -> StopRequests {
        self()
    }
}

/// See [`ToolHost::canceller`]: called from the input reader's thread while
/// the call it cancels is being served on the host's thread (from before
/// its tool runs until its answer is made). Interrupts the tool's own
/// function if it is running; returns whether it did.
pub type Canceller = Box<dyn Fn() -> bool + Send>;

/// Requests to stop serving since it began (signals, console events): an
/// input of the serve loop of its own ([`crate::serve::serve`]'s
/// `stop_requests`), looked at between messages. The first request of any kind
/// winds serving down as end of input does; a request to terminate that
/// arrives while it winds down ends that at once (the usual SIGTERM after a
/// SIGINT or an end of input, or a second SIGTERM). More interrupts change
/// nothing, so a burst of SIGINTs stops the server once, cleanly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StopRequests {
    /// Every request: SIGINT, SIGTERM, SIGHUP (console events on Windows).
    pub any: u32,
    /// Those that ask to terminate: SIGTERM, SIGHUP (close, logoff, shutdown).
    pub terminate: u32,
}

/// A host that runs nothing: every call is answered with a tool error saying
/// the server stopped. Serves what is left once winding down is cut short.
pub struct Stopped<'a, H>(pub &'a mut H);

/// The tool error for a call the server did not run or did not wait for.
pub fn stopped_message(tool: &str, started: bool) -> String {
    if started {
        format!("The server stopped before tool {tool} finished.")
    } else {
        format!("The server stopped before tool {tool} could run.")
    }
}

impl<H: ToolHost> ToolHost for Stopped<'_, H> {
    type Fun = H::Fun;
    type Value = H::Value;

    fn call(&mut self, tool: &Tool<H::Fun>, _: Option<Val<'_>>, _: CallContext) -> Started<H::Value> {
        Started::Done(Finished::Failed(stopped_message(&tool.def.name, false)))
    }
}

/// The server's name and version, as announced to clients.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
}

/// What happened to one message, for telemetry and diagnostics.
#[derive(Debug, Default, Clone)]
pub struct Facts {
    pub version: Option<VersionIndex>,
    pub rpc_error: Option<ErrorCode>,
    /// A tool call answered with `isError: true`.
    pub tool_error: bool,
    /// Why a tool call failed (did not return, or returned something that
    /// cannot be sent), for the author's one line on stderr.
    pub failure: Option<String>,
    /// The tool called.
    pub tool: Option<String>,
    /// The result holds a finite non-zero number written as 0 (too few
    /// decimal places in the payload options), for a line to the author.
    pub zeroed_number: bool,
}

/// An answer line and what happened.
#[derive(Debug, Default)]
pub struct Answer {
    pub line: Vec<u8>,
    pub facts: Facts,
}

/// A tool call whose answer comes later.
#[derive(Debug)]
pub struct Pending {
    pub task: TaskId,
    pub id: RequestId,
    pub version: VersionIndex,
    pub tool: String,
}

pub enum Reply {
    Answer(Answer),
    Pending(Pending),
}

pub struct Server<F> {
    tools: HashMap<String, Tool<F>>,
    instructions: Option<String>,
    /// Version negotiated by the latest legacy `initialize`.
    legacy: Option<VersionIndex>,
    /// `tools` arrays pre-serialized per version: byte-identical every time.
    tools_json: Vec<Box<RawValue>>,
    /// Payload options for ordinary return values, read when serving started.
    json_options: rjson::Options,
    /// `{"name":...,"version":...}`, for modern results' `_meta`.
    server_info: std::sync::Arc<Value>,
    /// Tools whose author was told that a number was sent as 0 (once each).
    zero_noted: std::collections::HashSet<String>,
    /// The tools may change while serving (see [`Server::set_live_tools`]).
    live_tools: bool,
    /// Called for tool names not in `tools` (see [`ToolSet`]).
    fallback: Option<Tool<F>>,
    /// The client's name from the latest legacy `initialize`.
    legacy_client: Option<String>,
    /// The tool calls read and not yet answered (see [`Owed`]).
    owed: Owed,
}

/// A `tools/list` result: the tool array written once when serving began
/// (raw), between the members that come before it and after it.
#[derive(serde::Serialize)]
struct ToolsListResult<'a> {
    #[serde(flatten)]
    head: Map<String, Value>,
    tools: &'a RawValue,
    #[serde(flatten)]
    tail: Map<String, Value>,
}

fn error_answer(id: &RequestId, version: Option<VersionIndex>, err: RpcError) -> Answer {
    Answer {
        line: envelope::error_line(Some(id), &err),
        facts: Facts { version, rpc_error: Some(err.code), ..Default::default() },
    }
}

impl<F> Server<F> {
    pub fn new(
        tools: Vec<Tool<F>>,
        instructions: Option<String>,
        info: ServerInfo,
        json_options: rjson::Options,
    ) -> Result<Self, String> {
        let (by_name, tools_json) = index_tools(tools, None)?;
        let server_info = std::sync::Arc::new(json!({"name": info.name, "version": info.version}));
        Ok(Server {
            tools: by_name,
            instructions,
            legacy: None,
            tools_json,
            json_options,
            server_info,
            zero_noted: Default::default(),
            live_tools: false,
            fallback: None,
            legacy_client: None,
            owed: Owed::default(),
        })
    }

    /// A handle to the calls this server owes an answer, for the host's exit
    /// hook and for the service layer that settles them.
    pub fn owed(&self) -> Owed {
        self.owed.clone()
    }

    /// Hands a written answer line back: the next answer reuses its memory
    /// (`rjson::take_buffer`, the pool it shares with the serializer), so a
    /// server sending large results does not map and fault in fresh pages
    /// for each one. The pool's rule (`rjson::keeps`) says which are kept.
    pub fn recycle_line(&self, line: Vec<u8>) {
        crate::rjson::give_back(line);
    }

    /// This server's tools may change while it serves (the live-session
    /// server): it declares `listChanged: true` and its modern `tools/list`
    /// may not be cached (`ttlMs: 0`, `cacheScope: "private"`).
    pub fn set_live_tools(&mut self) {
        self.live_tools = true;
    }

    /// Replace the tools (see [`ToolHost::tool_update`]).
    pub fn replace_tools(&mut self, set: ToolSet<F>) -> Result<(), String> {
        let (by_name, tools_json) = index_tools(set.tools, set.lists)?;
        self.tools = by_name;
        self.tools_json = tools_json;
        self.fallback = set.fallback;
        Ok(())
    }

    /// The `tools` array each version lists (in [`VERSIONS`] order): what a
    /// live session hands the server that forwards to it.
    pub fn tool_lists(&self) -> Vec<(&'static str, &RawValue)> {
        VERSIONS.iter().zip(&self.tools_json).map(|(v, t)| (v.id, &**t)).collect()
    }

    /// Whether a change of tools is announced to the client: a live server
    /// to a client that initialized (legacy; modern clients would need
    /// `subscriptions/listen`, which mcplite does not implement).
    pub fn announces_tool_changes(&self) -> bool {
        self.live_tools && self.legacy.is_some()
    }

    /// The names of the tools served.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// Run one call that another process's server received (a live
    /// session's link): the arguments checked and the tool run exactly as
    /// for `tools/call`; the result object written for version `v` (no
    /// envelope: the other server answers its client), and whether it is a
    /// tool error. `None` for a tool this server does not have.
    pub fn call_here<H: ToolHost<Fun = F>>(
        &mut self,
        name: &str,
        arguments: Option<Val<'_>>,
        host: &mut H,
        cx: CallContext,
    ) -> Option<Here> {
        let tool = self.tools.get(name)?;
        let v = cx.version;
        let finished = match r::args::check(arguments, &tool.formals, name) {
            Err(message) => Finished::Failed(message),
            Ok(()) => {
                rjson::take_zeroed();
                match host.call(tool, arguments, cx) {
                    Started::Done(f) => f,
                    Started::Running(_) => Finished::Failed(format!("Tool {name} could not run here.")),
                }
            }
        };
        let (result, failure) = self.call_result(finished, name);
        let version = &VERSIONS[v];
        let server_meta = version.modern_result.then_some((META_SERVER_INFO, &*self.server_info));
        let mut out = Vec::with_capacity(256);
        write_result(&mut out, &result, version, server_meta);
        Some(Here { result: out, is_error: result.is_error, failure, zeroed: rjson::take_zeroed() })
    }

    /// The line for the author, the first time a result of `tool` held a
    /// finite non-zero number written as 0: jsonlite's `digits` keeps that
    /// many decimal places, and the option to set. (`mcp_check()` reports
    /// the line; R/check.R matches "was sent as 0".)
    pub fn zeroed_note(&mut self, tool: &str) -> Option<String> {
        if !self.zero_noted.insert(tool.to_string()) {
            return None;
        }
        let kept = match self.json_options.digits {
            rjson::Digits::Decimal(p) => format!("numbers keep {p} decimal places"),
            _ => "numbers keep too few digits".to_string(),
        };
        Some(format!(
            "mcplite: tool {tool}: a non-zero number was sent as 0 ({kept}, options(mcplite.json.digits)); \
             set options(mcplite.json.digits = NA) for every digit, or I(n) for n significant digits, at the top of the script"
        ))
    }

    fn server_info_value(&self) -> Value {
        (*self.server_info).clone()
    }

    /// The version a message would be served in, for telemetry of
    /// notifications (requests report theirs in [`Facts`]).
    pub fn version_hint(&self, msg: &Message) -> Option<VersionIndex> {
        if is_modern(msg) {
            msg.meta_field(META_PROTOCOL_VERSION).and_then(|v| v.as_str()).and_then(version::lookup)
        } else {
            self.legacy
        }
    }

    /// Handle one request (a message with an id).
    pub fn handle<H: ToolHost<Fun = F>>(
        &mut self,
        msg: &Message,
        host: &mut H,
        traceparent: Option<String>,
        progress: &crate::progress::Progress,
    ) -> Reply {
        let Some(id) = msg.id.clone() else { return Reply::Answer(Answer::default()) };
        if msg.meta().is_some_and(|m| m.nests_deeper_than(MAX_META_DEPTH)) {
            let err = RpcError::invalid_params(format!("_meta is nested deeper than {MAX_META_DEPTH} levels"));
            return Reply::Answer(error_answer(&id, None, err));
        }
        let modern = is_modern(msg);
        let result = match msg.method.as_str() {
            "initialize" => self.initialize(msg).map(|(v, text)| (Some(v), text)),
            "ping" if !modern => Ok((self.legacy, "{}".to_string())),
            "server/discover" => self.modern_version(msg).map(|v| (Some(v), self.discover())),
            "tools/list" | "tools/call" => {
                let v = if modern {
                    self.modern_version(msg)
                } else {
                    self.legacy.ok_or_else(|| {
                        RpcError::new(
                            ErrorCode::InvalidRequest,
                            "Invalid Request: server not initialized; send initialize first, or give the protocol \
                             version and client capabilities in params._meta",
                        )
                    })
                };
                match v {
                    Err(e) => Err(e),
                    Ok(v) if msg.method == "tools/list" => self.list_tools(msg, v).map(|text| (Some(v), text)),
                    Ok(v) => return self.call_tool(msg, id, v, host, traceparent, progress),
                }
            }
            "notifications/initialized" | "notifications/cancelled" => Err(RpcError::new(
                ErrorCode::InvalidRequest,
                format!("Invalid Request: {} is a notification; send it without an id", msg.method),
            )),
            other => Err(RpcError::new(ErrorCode::MethodNotFound, format!("Method not found: {other}"))),
        };
        Reply::Answer(match result {
            Ok((version, text)) => {
                Answer { line: envelope::result_line(&id, &text), facts: Facts { version, ..Default::default() } }
            }
            Err(err) => error_answer(&id, None, err),
        })
    }

    fn initialize(&mut self, msg: &Message) -> Result<(VersionIndex, String), RpcError> {
        let requested = match msg.param(wire::PROTOCOL_VERSION) {
            Some(v) if v.is_string() => v.as_str().unwrap_or(""),
            Some(_) => return Err(RpcError::invalid_params("protocolVersion must be a string")),
            None => return Err(RpcError::invalid_params("protocolVersion is required")),
        };
        let v = version::negotiate_legacy(requested);
        let want = &VERSIONS[v];
        for (name, shape) in [("capabilities", want.client_capabilities), (wire::CLIENT_INFO, want.client_info)] {
            match msg.param(name) {
                Some(x) => requests::check(x, shape, name).map_err(RpcError::invalid_params)?,
                None => return Err(RpcError::invalid_params(format!("{name} is required"))),
            }
        }
        self.legacy = Some(v);
        self.legacy_client =
            msg.param(wire::CLIENT_INFO).and_then(|c| c.get("name")).and_then(|n| n.as_str()).map(str::to_string);
        let mut result = Map::new();
        result.insert(wire::PROTOCOL_VERSION.into(), Value::from(want.id));
        result.insert("capabilities".into(), version::server_capabilities_for(self.live_tools));
        result.insert(wire::SERVER_INFO.into(), self.server_info_value());
        if let Some(text) = self.instructions.as_ref().filter(|_| want.initialize_instructions) {
            result.insert("instructions".into(), Value::from(text.clone()));
        }
        Ok((v, Value::Object(result).to_string()))
    }

    /// Validate the per-request metadata of a modern request.
    fn modern_version(&self, msg: &Message) -> Result<VersionIndex, RpcError> {
        let field = |name: &str| format!("_meta[\"{name}\"]");
        let missing = |name: &str| RpcError::invalid_params(format!("missing required {}", field(name)));
        let meta = msg.meta().ok_or_else(|| missing(META_PROTOCOL_VERSION))?;
        let requested = match meta.get(META_PROTOCOL_VERSION) {
            None => return Err(missing(META_PROTOCOL_VERSION)),
            Some(v) => v.as_str().ok_or_else(|| {
                RpcError::invalid_params(format!("{} must be a string", field(META_PROTOCOL_VERSION)))
            })?,
        };
        let v = version::lookup(requested).ok_or_else(|| {
            RpcError::new(ErrorCode::UnsupportedProtocolVersion, "Unsupported protocol version")
                .with_data(json!({"supported": version::supported_ids(), "requested": requested}))
        })?;
        let want = &VERSIONS[v];
        let caps = meta.get(META_CLIENT_CAPABILITIES).ok_or_else(|| missing(META_CLIENT_CAPABILITIES))?;
        let checks: [(&str, &Shape); 3] = [
            (META_CLIENT_CAPABILITIES, want.client_capabilities),
            (META_CLIENT_INFO, want.client_info),
            (META_LOG_LEVEL, &Shape::Enum(requests::LOGGING_LEVELS)),
        ];
        for (name, shape) in checks {
            let value = if name == META_CLIENT_CAPABILITIES { Some(caps) } else { meta.get(name) };
            if let Some(x) = value {
                requests::check(x, shape, &field(name)).map_err(RpcError::invalid_params)?;
            }
        }
        if let Some(token) = meta.get(wire::PROGRESS_TOKEN) {
            requests::check(token, &Shape::StringOrInteger, "_meta.progressToken").map_err(RpcError::invalid_params)?;
        }
        Ok(v)
    }

    /// What every modern result ends with: cache hints (for results a
    /// client may keep) and the server's identity in `_meta`.
    fn modern_tail(&self, result: &mut Map<String, Value>, cacheable: bool) {
        if cacheable {
            result.insert(wire::TTL_MS.into(), Value::from(version::CACHE_TTL_MS));
            result.insert(wire::CACHE_SCOPE.into(), Value::from("public"));
        }
        result.insert(wire::META.into(), json!({ META_SERVER_INFO: self.server_info_value() }));
    }

    fn discover(&self) -> String {
        let mut result = Map::new();
        result.insert(wire::RESULT_TYPE.into(), Value::from("complete"));
        result.insert(wire::SUPPORTED_VERSIONS.into(), Value::from(version::supported_ids()));
        result.insert("capabilities".into(), version::server_capabilities_for(self.live_tools));
        if let Some(text) = &self.instructions {
            result.insert("instructions".into(), Value::from(text.clone()));
        }
        self.modern_tail(&mut result, true);
        Value::Object(result).to_string()
    }

    fn list_tools(&self, msg: &Message, v: VersionIndex) -> Result<String, RpcError> {
        match msg.param("cursor") {
            None => {}
            // mcplite lists every tool on one page and never hands out cursors.
            Some(c) if c.is_string() => return Err(RpcError::invalid_params("unknown cursor")),
            Some(_) => return Err(RpcError::invalid_params("cursor must be a string")),
        }
        let (mut head, mut tail) = (Map::new(), Map::new());
        if VERSIONS[v].modern_result {
            head.insert(wire::RESULT_TYPE.into(), Value::from("complete"));
            if self.live_tools {
                tail.insert(wire::TTL_MS.into(), Value::from(version::LIVE_CACHE_TTL_MS));
                tail.insert(wire::CACHE_SCOPE.into(), Value::from("private"));
                self.modern_tail(&mut tail, false);
            } else {
                self.modern_tail(&mut tail, true);
            }
        }
        let listed = ToolsListResult { head, tools: &self.tools_json[v], tail };
        serde_json::to_string(&listed).map_err(|e| RpcError::new(ErrorCode::InternalError, e.to_string()))
    }

    fn call_tool<H: ToolHost<Fun = F>>(
        &mut self,
        msg: &Message,
        id: RequestId,
        v: VersionIndex,
        host: &mut H,
        traceparent: Option<String>,
        progress: &crate::progress::Progress,
    ) -> Reply {
        let name = match msg.param("name") {
            Some(n) if n.is_string() => n.as_str().unwrap_or(""),
            _ => {
                return Reply::Answer(error_answer(
                    &id,
                    Some(v),
                    RpcError::invalid_params("tools/call needs a string name"),
                ))
            }
        };
        let arguments = match msg.param("arguments") {
            None => None,
            Some(a) if a.is_object() => Some(a),
            Some(_) => {
                return Reply::Answer(error_answer(
                    &id,
                    Some(v),
                    RpcError::invalid_params("arguments must be an object"),
                ))
            }
        };
        let Some(tool) = self.tools.get(name).or(self.fallback.as_ref()) else {
            return Reply::Answer(error_answer(&id, Some(v), RpcError::invalid_params(format!("unknown tool {name}"))));
        };
        let finished = match r::args::check(arguments, &tool.formals, name) {
            Err(message) => Finished::Failed(message),
            Ok(()) => {
                let ended =
                    Ended { id: id.clone(), version: v, tool: name.to_string(), server_info: self.server_info.clone() };
                self.owed.owe(ended);
                // What the tool itself serializes (tool_result()) counts for it.
                rjson::take_zeroed();
                let progress = progress_token(msg)
                    .map(|token| progress.open(id.key().clone(), token.to_string(), VERSIONS[v].progress_message));
                let client = if is_modern(msg) {
                    msg.meta_field(META_CLIENT_INFO)
                        .and_then(|c| c.get("name"))
                        .and_then(|n| n.as_str())
                        .map(str::to_string)
                } else {
                    self.legacy_client.clone()
                };
                let cx = CallContext { traceparent, id: id.clone(), progress, version: v, client };
                match host.call(tool, arguments, cx) {
                    Started::Done(f) => f,
                    Started::Running(task) => {
                        return Reply::Pending(Pending { task, id, version: v, tool: name.to_string() })
                    }
                }
            }
        };
        Reply::Answer(self.finish(&id, v, name, finished))
    }

    /// The answer to a finished call.
    pub fn finish<V: RValue>(&self, id: &RequestId, v: VersionIndex, tool: &str, finished: Finished<V>) -> Answer {
        let (line, is_error, failure, zeroed) = match finished {
            Finished::Forwarded { result, is_error, failure, zeroed } => {
                let mut line = Vec::with_capacity(result.len() + 64);
                envelope::begin_result(&mut line, id);
                line.extend_from_slice(&result);
                envelope::end_line(&mut line);
                (line, is_error, failure, zeroed)
            }
            finished => {
                let (result, failure) = self.call_result(finished, tool);
                let zeroed = rjson::take_zeroed();
                (answer_line(id, v, &result, &self.server_info), result.is_error, failure, zeroed)
            }
        };
        Answer {
            line,
            facts: Facts {
                version: Some(v),
                rpc_error: None,
                tool_error: is_error,
                failure,
                tool: Some(tool.to_string()),
                zeroed_number: zeroed,
            },
        }
    }

    /// A finished call's result, and why it failed (for the author's line).
    fn call_result<V: RValue>(&self, finished: Finished<V>, tool: &str) -> (CallResult<V>, Option<String>) {
        let read = match finished {
            Finished::Returned(value) => r::result::read_return(value, &self.json_options, tool),
            Finished::Failed(message) => Err(message),
            Finished::Made(result) => Ok(*result),
            // Written already; only `finish` sends it (a host of `call_here` never makes one).
            Finished::Forwarded { .. } => Err(format!("Tool {tool} returned a result written for another server.")),
        };
        match read {
            Ok(result) => (result, None),
            Err(message) => (CallResult::tool_error(message.clone()), Some(message)),
        }
    }

    /// The answer when a call fails in the service itself (a bug): -32603.
    pub fn internal_error(id: &RequestId) -> Answer {
        error_answer(id, None, RpcError::new(ErrorCode::InternalError, "Internal error"))
    }
}

/// Tools by name and their `tools` arrays per version: `lists` when another
/// process's core wrote them, else projected here.
#[allow(clippy::type_complexity)]
fn index_tools<F>(
    tools: Vec<Tool<F>>,
    lists: Option<Vec<Box<RawValue>>>,
) -> Result<(HashMap<String, Tool<F>>, Vec<Box<RawValue>>), String> {
    let tools_json = match lists {
        Some(lists) if lists.len() == VERSIONS.len() => lists,
        Some(_) => return Err("the tool lists do not match the served versions".into()),
        None => VERSIONS
            .iter()
            .map(|v| {
                serde_json::value::to_raw_value(&tools.iter().map(|t| project_tool(&t.def, v)).collect::<Vec<_>>())
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("cannot write the tool list: {e}"))?,
    };
    let names: Vec<String> = tools.iter().map(|t| t.def.name.clone()).collect();
    if let Some(message) = r::spec::repeated_names(&names) {
        return Err(message);
    }
    Ok((names.into_iter().zip(tools).collect(), tools_json))
}

/// The request's progress token as the client wrote it (its JSON text), if
/// it carries one of the kinds MCP allows (a string or an integer; modern
/// requests with another kind were refused already).
fn progress_token(msg: &Message) -> Option<&str> {
    let token = msg.meta_field(wire::PROGRESS_TOKEN)?;
    requests::check(token, &Shape::StringOrInteger, wire::PROGRESS_TOKEN).ok()?;
    Some(token.raw_str())
}

/// Whether a message carries any modern request `_meta` key.
fn is_modern(msg: &Message) -> bool {
    msg.meta().is_some_and(|m| MODERN_KEYS.iter().any(|k| m.get(k).is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Doc;
    use crate::rjson::testvalue::TV;

    fn id(text: &str) -> RequestId {
        let d = Doc::parse(text.as_bytes().to_vec()).unwrap();
        RequestId::parse(d.root()).unwrap()
    }

    fn ended(text: &str, tool: &str) -> Ended {
        let server_info = std::sync::Arc::new(json!({"name": "s", "version": "1"}));
        Ended { id: id(text), version: VERSIONS.len() - 1, tool: tool.into(), server_info }
    }

    fn texts(lines: Vec<Vec<u8>>) -> Vec<String> {
        lines.into_iter().map(|l| String::from_utf8(l).unwrap()).collect()
    }

    /// The exit hook's answers: one per call still owed, the running call's
    /// saying its tool ended R; settled calls get none; the list is taken.
    #[test]
    fn owed_calls_are_answered_once_by_the_exit_hook() {
        let owed = Owed::default();
        let handle = owed.clone();
        owed.owe(ended("1", "first"));
        owed.owe(ended("\"two\"", "second"));
        owed.owe(ended("3", "third"));
        assert_eq!(handle.count(&id("1.0")), 1, "ids match as numbers");
        owed.settle(&id("3"));
        assert_eq!(owed.count(&id("3")), 0);
        handle.mark_running(Some(&id("\"two\"")));
        let lines = texts(handle.take_answers::<TV>());
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with(r#"{"jsonrpc":"2.0","id":1,"#), "{}", lines[0]);
        assert!(lines[0].contains("before tool first was answered"), "{}", lines[0]);
        assert!(lines[1].starts_with(r#"{"jsonrpc":"2.0","id":"two","#), "{}", lines[1]);
        assert!(lines[1].contains("Tool second ended the R process"), "{}", lines[1]);
        assert!(owed.take_answers::<TV>().is_empty(), "taken once");
        // No call marked running: every answer says the call was not answered.
        owed.owe(ended("4", "fourth"));
        owed.mark_running(Some(&id("4")));
        owed.mark_running(None);
        let lines = texts(owed.take_answers::<TV>());
        assert!(lines.len() == 1 && lines[0].contains("before tool fourth was answered"), "{lines:?}");
    }

    /// Held answers go out once: in one write when released, or first among
    /// the exit hook's answers, never both.
    #[test]
    fn held_answers_are_written_once() {
        let owed = Owed::default();
        assert_eq!(owed.hold(b"{\"id\":1}"), (9, true));
        assert_eq!(owed.hold(b"{\"id\":2}"), (18, false));
        let mut written = Vec::new();
        owed.write_held(|lines| written.extend_from_slice(lines));
        assert_eq!(written, b"{\"id\":1}\n{\"id\":2}\n");
        assert!(!owed.holds());
        owed.write_held(|_| panic!("nothing is held"));
        // Held when the process ends: the exit hook writes them, then the
        // calls still owed.
        owed.hold(b"{\"id\":3}");
        owed.hold(b"{\"id\":4}");
        owed.owe(ended("5", "fifth"));
        let lines = texts(owed.take_answers::<TV>());
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0], "{\"id\":3}\n{\"id\":4}");
        assert!(lines[1].contains("before tool fifth was answered"), "{}", lines[1]);
        assert!(!owed.holds());
        assert!(owed.take_answers::<TV>().is_empty(), "taken once");
    }

    /// Each server owns its list: a second server's calls are not the first's.
    #[test]
    fn each_server_owes_its_own_calls() {
        let a = Owed::default();
        let b = Owed::default();
        a.owe(ended("1", "t"));
        assert_eq!(b.count(&id("1")), 0);
        assert!(b.take_answers::<TV>().is_empty());
        assert_eq!(a.take_answers::<TV>().len(), 1);
    }
}
