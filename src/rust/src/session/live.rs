//! The session side (`mcp_session()`): a listener thread in the user's
//! interactive R session; calls run on R's main thread through later's
//! event loop, only at the console's top level (R/session.R,
//! `session_dispatch()`).

use super::run::{LineSink, LinkedCall};
use super::{Message, Op, Registration, MAX_LINE, MAX_REGISTRATION, TOKEN_WAIT};
use crate::ffi;
use crate::host::{Invoke, RFun, RHost};
use crate::platform::{self, SessionListener, SessionStream};
use crate::sexp::Sx;
use extendr_api::prelude::*;
use mcplite_core::dispatch::CallContext;
use mcplite_core::version::VERSIONS;
use mcplite_core::Server;
use serde_json::value::RawValue;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::ffi::{c_char, c_int, c_void, CString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

/// later's `execLaterNative2(func, data, secs, loop_id)`: callable from any
/// thread once taken on the main thread.
type ExecLater = unsafe extern "C" fn(Option<unsafe extern "C" fn(*mut c_void)>, *mut c_void, f64, c_int);
/// The oldest API version of later that has `execLaterNative2`.
const LATER_API_MIN: c_int = 2;
/// How long a call that found the console busy (not at top level: inside
/// `later::run_now()`, as Shiny runs it) waits before it looks again.
const RESCHEDULE_DELAY: f64 = 0.05;
/// At most this many connections wait to send the token at once.
const MAX_UNCHECKED: usize = 16;
/// How long a write to a server may take (it reads on a thread of its own).
const WRITE_WAIT: Duration = Duration::from_secs(5);

// Global because later's C function is looked up once per process.
static EXEC_LATER: OnceLock<ExecLater> = OnceLock::new();

extern "C" {
    fn R_GetCCallable(package: *const c_char, name: *const c_char) -> Option<unsafe extern "C" fn()>;
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Take later's entry points (on the main thread: `R_GetCCallable` is not
/// thread-safe) and check its API version.
fn take_later() -> Result<ExecLater, String> {
    if let Some(f) = EXEC_LATER.get() {
        return Ok(*f);
    }
    let get = |name: &str| -> Option<unsafe extern "C" fn()> {
        let package = CString::new("later").ok()?;
        let name = CString::new(name).ok()?;
        // SAFETY: both are NUL-terminated strings alive for the call;
        // R_GetCCallable signals an R error for a missing entry, which
        // `protected` catches on the main thread.
        ffi::protected(|| unsafe { R_GetCCallable(package.as_ptr(), name.as_ptr()) }).flatten()
    };
    let version = get("apiVersion").ok_or("the later package has no apiVersion entry point; update later")?;
    // SAFETY: later registers apiVersion as `int (*)(void)`.
    let version: unsafe extern "C" fn() -> c_int = unsafe { std::mem::transmute(version) };
    // SAFETY: a plain function of later's with no arguments.
    let api = unsafe { version() };
    if api < LATER_API_MIN {
        return Err(format!(
            "the later package's API version is {api}; mcp_session() needs {LATER_API_MIN} or later (update later)"
        ));
    }
    let exec = get("execLaterNative2").ok_or("the later package has no execLaterNative2 entry point; update later")?;
    // SAFETY: later registers execLaterNative2 with exactly this signature
    // (later_api.h, API version 2 and later, checked above).
    let exec: ExecLater = unsafe { std::mem::transmute(exec) };
    Ok(*EXEC_LATER.get_or_init(|| exec))
}

/// Ask later to run [`on_later`] on the main thread after `delay` seconds.
fn schedule(delay: f64) {
    if let Some(exec) = EXEC_LATER.get() {
        // SAFETY: execLaterNative2 may be called from any thread; the
        // callback takes no data.
        unsafe { exec(Some(on_later), std::ptr::null_mut(), delay, 0) };
    }
}

/// later's callback, on R's main thread: hand over to `session_dispatch()`,
/// which runs a queued call only at top level.
unsafe extern "C" fn on_later(_: *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        // Busy while a session call runs (its tool ran later's loop): later.
        let dispatch = MAIN.with(|m| m.try_borrow().ok().map(|m| m.as_ref().map(|m| m.dispatch.clone())));
        match dispatch {
            // R errors stay inside (ffi::call runs under R_ToplevelExec).
            Some(Some(dispatch)) => drop(ffi::call(&dispatch, &[])),
            Some(None) => {}
            None => schedule(RESCHEDULE_DELAY),
        }
    });
}

/// A server's connection: where its answers are written.
struct Conn {
    writer: Mutex<SessionStream>,
}

impl LineSink for Conn {
    fn send(&self, line: &[u8]) -> bool {
        Conn::send(self, line)
    }
}

impl Conn {
    fn send(&self, line: &[u8]) -> bool {
        let mut w = lock(&self.writer);
        let _ = w.set_write_timeout(Some(WRITE_WAIT));
        w.write_all(line).is_ok()
    }
}

/// A call waiting for the main thread.
struct Queued {
    conn: u64,
    call: u64,
    version: String,
    tool: String,
    arguments: Option<Box<RawValue>>,
    progress: bool,
    client: Option<String>,
}

#[derive(Default)]
struct State {
    conns: HashMap<u64, Arc<Conn>>,
    next_conn: u64,
    unchecked: usize,
    queue: VecDeque<Queued>,
    /// The call running on the main thread (connection, call).
    running: Option<(u64, u64)>,
    /// The `list` answer, written when the tools were given, and their names.
    list_line: Vec<u8>,
    names: Vec<String>,
    revision: u64,
    stopping: bool,
    /// What the registration file says (its `cwd` follows the console's).
    registration: Option<Registration>,
}

/// What the listener's threads share with the main thread.
struct Shared {
    state: Mutex<State>,
    token: String,
    /// The thread a cancellation interrupts (the one that started the session).
    r_thread: platform::RThread,
}

/// The session being served, for the listener threads and `mcp_session_info()`.
struct Live {
    shared: Arc<Shared>,
    socket: PathBuf,
    registration: PathBuf,
    name: String,
    accepting: Option<std::thread::JoinHandle<()>>,
}

// Global because the live session outlives every `.Call`: `mcp_session()`,
// `mcp_session_stop()`, the console's task callback and later's callback
// (which carries no data) reach it from R, the connection threads from Rust.
static LIVE: Mutex<Option<Live>> = Mutex::new(None);

/// Main-thread state: R objects.
struct Main {
    server: Server<RFun>,
    invoker: std::rc::Rc<crate::ffi::Kept>,
    dispatch: Robj,
}

thread_local! {
    // Global because later's callback (`on_later`) and the `.Call`s of
    // `session_dispatch()` carry no data; R objects, so main thread only.
    static MAIN: RefCell<Option<Main>> = const { RefCell::new(None) };
}

/// What `rust_session_start()` is given (R/session.R): `list(specs, name,
/// invoke, dispatch, info, json_opts)`.
pub fn start(settings: &Robj) -> Result<Robj, String> {
    let sx = Sx::borrowed(settings);
    let item = |name: &str| -> Result<Robj, String> {
        mcplite_core::r::field(&sx, name)
            .map(|v| v.robj())
            .ok_or_else(|| format!("the session settings have no `{name}`"))
    };
    crate::sexp::set_helpers(&item("helpers")?)?;
    let specs = item("specs")?;
    let name = mcplite_core::r::string1(&Sx::borrowed(&item("name")?)).ok_or("`name` must be a string")?;
    let info = crate::serve::server_info(&item("info")?);
    let opts = mcplite_core::r::options::read(&Sx::borrowed(&item("json_opts")?))
        .map_err(|p| format!("payload options: {}", p.text()))?;
    let server = Server::new(crate::serve::tools(&specs)?, None, info, opts)?;
    take_later()?;
    let list = list_message(&server);
    let names = list.names.clone().unwrap_or_default();
    let list_line = list.line();
    MAIN.with(|m| {
        let mut m = m.try_borrow_mut().map_err(|_| "mcp_session() cannot be called by a tool the session runs")?;
        let invoker = crate::ffi::keep(&item("invoke")?).map_err(|e| e.to_string())?;
        *m = Some(Main { server, invoker: std::rc::Rc::new(invoker), dispatch: item("dispatch")? });
        Ok::<(), String>(())
    })?;
    let mut live = lock(&LIVE);
    if let Some(live) = live.as_ref() {
        // Again: new tools, same socket; servers attached ask for them.
        let conns: Vec<Arc<Conn>> = {
            let mut state = lock(&live.shared.state);
            state.list_line = list_line;
            state.names = names;
            state.revision += 1;
            state.conns.values().cloned().collect()
        };
        let mut changed = Message::new(Op::Changed);
        changed.revision = Some(lock(&live.shared.state).revision);
        for conn in conns {
            conn.send(&changed.line());
        }
        return Ok(info_list(live));
    }
    let dir = platform::session_dir().map_err(|e| format!("cannot use the session directory: {e}"))?;
    let pid = std::process::id();
    let socket = platform::session_socket(&dir, pid);
    if socket.as_os_str().len() > platform::SOCKET_PATH_MAX {
        return Err(format!(
            "the socket path {} is longer than a Unix socket address allows ({} bytes); set MCPLITE_SESSION_DIR to a shorter directory",
            socket.display(),
            platform::SOCKET_PATH_MAX
        ));
    }
    // A socket left by an earlier process with this pid.
    let _ = std::fs::remove_file(&socket);
    let listener =
        SessionListener::bind_at(&socket).map_err(|e| format!("cannot listen on {}: {e}", socket.display()))?;
    remove_stale(&dir, pid);
    let token = platform::random_token();
    let cwd = std::env::current_dir().map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
    let registration = dir.join(format!("{pid}.json"));
    let reg = Registration { name: name.clone(), pid, cwd, socket: socket.to_string_lossy().into_owned(), token };
    if let Err(e) = write_registration(&registration, &reg) {
        let _ = std::fs::remove_file(&socket);
        return Err(format!("cannot write the registration {}: {e}", registration.display()));
    }
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            list_line,
            names,
            revision: 1,
            registration: Some(reg.clone()),
            ..Default::default()
        }),
        token: reg.token,
        r_thread: platform::RThread::current(),
    });
    let accepting = {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("mcplite-session".into())
            .spawn(move || accept_all(&listener, &shared))
            .map_err(|e| e.to_string())?
    };
    *live = Some(Live { shared, socket, registration, name, accepting: Some(accepting) });
    Ok(info_list(live.as_ref().ok_or("no session")?))
}

fn write_registration(path: &Path, reg: &Registration) -> Result<(), String> {
    let bytes = serde_json::to_vec(reg).map_err(|e| e.to_string())?;
    platform::write_private_file(path, &bytes).map_err(|e| e.to_string())
}

/// Remove the registrations (and sockets) of sessions that are gone (a
/// crash, a kill): nothing listens on their socket any more (the kernel
/// closed it with the process), so servers would try them in vain.
fn remove_stale(dir: &Path, me: u32) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for path in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let Ok(reg) = read_registration(&path) else { continue };
        if reg.pid == me {
            continue;
        }
        let Some(socket) = platform::registered_socket(dir, reg.pid, &reg.socket) else { continue };
        let gone = match platform::connect_at(&socket, b"") {
            Ok(_) => false,
            Err(e) => matches!(e.kind(), std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound),
        };
        if gone {
            let _ = std::fs::remove_file(&socket);
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// `rust_session_cwd()`: after each top-level command (a task callback),
/// the console's working directory, so the registration names the current
/// one (servers choose the session whose directory is theirs).
pub fn cwd_changed() {
    let live = lock(&LIVE);
    let Some(live) = live.as_ref() else { return };
    let Ok(cwd) = std::env::current_dir() else { return };
    let cwd = cwd.to_string_lossy().into_owned();
    let mut state = lock(&live.shared.state);
    let Some(reg) = state.registration.as_mut() else { return };
    if reg.cwd == cwd {
        return;
    }
    reg.cwd = cwd;
    let reg = reg.clone();
    drop(state);
    let _ = write_registration(&live.registration, &reg);
}

fn list_message(server: &Server<RFun>) -> Message {
    let mut list = Message::new(Op::List);
    let mut names = server.tool_names();
    names.sort();
    list.names = Some(names);
    list.lists = Some(server.tool_lists().into_iter().map(|(v, t)| (v.to_string(), t.to_owned())).collect());
    list
}

fn info_list(live: &Live) -> Robj {
    let state = lock(&live.shared.state);
    list!(
        name = live.name.as_str(),
        socket = live.socket.to_string_lossy().into_owned(),
        registration = live.registration.to_string_lossy().into_owned(),
        tools = state.names.clone(),
        servers = state.conns.len() as i32,
        waiting = state.queue.len() as i32,
        revision = state.revision as f64
    )
    .into()
}

/// `mcp_session_info()`: `NULL` when no session is served.
pub fn info() -> Robj {
    match lock(&LIVE).as_ref() {
        Some(live) => info_list(live),
        None => ().into(),
    }
}

/// `mcp_session_stop()`: stop serving; whether a session was served.
pub fn stop() -> bool {
    let Some(mut live) = lock(&LIVE).take() else { return false };
    let conns = {
        let mut state = lock(&live.shared.state);
        state.stopping = true;
        state.queue.clear();
        std::mem::take(&mut state.conns)
    };
    for conn in conns.values() {
        let _ = lock(&conn.writer).shutdown(std::net::Shutdown::Both);
    }
    // The accepting thread waits in accept(): a connection wakes it.
    if let Some(accepting) = live.accepting.take() {
        if platform::connect_at(&live.socket, b"").is_ok() {
            let _ = accepting.join();
        }
    }
    let _ = std::fs::remove_file(&live.registration);
    let _ = std::fs::remove_file(&live.socket);
    // From a tool the session runs, the tools stay until the call ends (unused).
    MAIN.with(|m| {
        if let Ok(mut m) = m.try_borrow_mut() {
            *m = None;
        }
    });
    true
}

fn accept_all(listener: &SessionListener, shared: &Arc<Shared>) {
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
                let reader_shared = shared.clone();
                let spawned = std::thread::Builder::new()
                    .name("mcplite-session-link".into())
                    .spawn(move || serve_connection(stream, &reader_shared));
                if spawned.is_err() {
                    lock(&shared.state).unchecked -= 1;
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// One server's connection: the token, then its lines until it closes.
fn serve_connection(stream: SessionStream, shared: &Shared) {
    let checked = platform::has_token(&stream, shared.token.as_bytes(), TOKEN_WAIT);
    let (id, conn) = {
        let mut state = lock(&shared.state);
        state.unchecked -= 1;
        if !checked || state.stopping {
            return;
        }
        let Ok(writer) = stream.try_clone() else { return };
        state.next_conn += 1;
        let id = state.next_conn;
        let conn = Arc::new(Conn { writer: Mutex::new(writer) });
        state.conns.insert(id, conn.clone());
        (id, conn)
    };
    crate::lines::read_lines(&stream, MAX_LINE, |line| {
        if let Ok(msg) = serde_json::from_slice::<Message>(line) {
            handle_message(msg, id, &conn, shared);
        }
        true
    });
    // The server is gone: its waiting calls never run.
    let mut state = lock(&shared.state);
    state.conns.remove(&id);
    state.queue.retain(|q| q.conn != id);
}

/// One message of a server on the link (`id`, answered on `conn`).
fn handle_message(msg: Message, id: u64, conn: &Conn, shared: &Shared) {
    match msg.op {
        Op::Hello => {
            let mut hello = Message::new(Op::Hello);
            {
                let state = lock(&shared.state);
                hello.revision = Some(state.revision);
                if let Some(reg) = &state.registration {
                    hello.name = Some(reg.name.clone());
                    hello.pid = Some(reg.pid);
                    hello.cwd = Some(reg.cwd.clone());
                }
            }
            conn.send(&hello.line());
        }
        Op::List => {
            let list = lock(&shared.state).list_line.clone();
            conn.send(&list);
        }
        Op::Call => {
            let (Some(call), Some(version), Some(tool)) = (msg.call, msg.version, msg.tool) else { return };
            let queued = Queued {
                conn: id,
                call,
                version,
                tool,
                arguments: msg.arguments,
                progress: msg.progress == Some(true),
                client: msg.client,
            };
            lock(&shared.state).queue.push_back(queued);
            schedule(0.0);
        }
        Op::Cancel => {
            let Some(call) = msg.call else { return };
            let mut state = lock(&shared.state);
            let before = state.queue.len();
            state.queue.retain(|q| !(q.conn == id && q.call == call));
            if state.queue.len() == before && state.running == Some((id, call)) {
                super::run::cancel_running(&shared.r_thread);
            }
        }
        _ => {}
    }
}

/// `rust_session_next()`: take the next waiting call and mark it running:
/// `list(tool, client)` for the console line, or `NULL`.
pub fn next() -> Robj {
    // A call taken and never run (the console line failed): answer it now.
    if CURRENT.with(|c| c.borrow().is_some()) {
        run();
    }
    let live = lock(&LIVE);
    let Some(live) = live.as_ref() else { return ().into() };
    let mut state = lock(&live.shared.state);
    let Some(q) = state.queue.pop_front() else { return ().into() };
    state.running = Some((q.conn, q.call));
    let conn = state.conns.get(&q.conn).cloned();
    let more = !state.queue.is_empty();
    drop(state);
    let tool = q.tool.clone();
    let client = q.client.clone().unwrap_or_else(|| "an MCP client".into());
    if let Some(conn) = &conn {
        let mut started = Message::new(Op::Started);
        started.call = Some(q.call);
        conn.send(&started.line());
    }
    CURRENT.with(|c| *c.borrow_mut() = Some((q, conn)));
    if more {
        schedule(0.0);
    }
    list!(tool = tool, client = client).into()
}

thread_local! {
    /// The call `next()` took, for `run()`.
    // Global because `rust_session_next()` and `rust_session_run()` are
    // separate `.Call`s from `session_dispatch()`.
    static CURRENT: RefCell<Option<(Queued, Option<Arc<Conn>>)>> = const { RefCell::new(None) };
}

/// `rust_session_run()`: run the call `next()` took, through the core, and
/// send its answer.
pub fn run() {
    let Some((q, conn)) = CURRENT.with(|c| c.borrow_mut().take()) else { return };
    let answer = run_call(&q, conn.clone());
    if let Some(live) = lock(&LIVE).as_ref() {
        lock(&live.shared.state).running = None;
    }
    if let Some(conn) = conn {
        conn.send(&answer.line());
    }
}

fn run_call(q: &Queued, conn: Option<Arc<Conn>>) -> Message {
    let version = VERSIONS.iter().position(|v| v.id == q.version).unwrap_or(0);
    let progress = if q.progress { conn.map(|c| c as Arc<dyn LineSink>) } else { None };
    let linked = LinkedCall { call: q.call, version, tool: &q.tool, arguments: q.arguments.as_deref(), progress };
    super::run::run(
        linked,
        || format!("This R session has no tool {} (any more).", q.tool),
        |arguments, id| {
            MAIN.with(|m| {
                let mut m = m.borrow_mut();
                let m = m.as_mut()?;
                let mut host = RHost { invoke: Invoke::Outcome(m.invoker.clone()), owed: m.server.owed() };
                let cx = CallContext { traceparent: None, id, progress: None, version, client: q.client.clone() };
                m.server.call_here(&q.tool, arguments, &mut host, cx)
            })
        },
    )
}

/// `rust_session_reschedule()`: the console was not at top level; look again soon.
pub fn reschedule() {
    schedule(RESCHEDULE_DELAY);
}

/// Whether a registration file may be trusted: used by tests through R.
pub fn read_registration(path: &std::path::Path) -> Result<Registration, String> {
    let bytes = platform::read_private_file(path, MAX_REGISTRATION).map_err(|e| e.to_string())?;
    serde_json::from_slice(&bytes).map_err(|e| e.to_string())
}
