//! The daemon side of a worker link (`mcp_server(workers = n)`): each daemon
//! mcplite starts runs one long mirai task, `worker_link()` (R/workers.R),
//! which evaluates the script and then stays here: connected to the
//! server's link socket in its private directory (`platform::local_connect`,
//! the token first), it says `hello` (pid and start time, so the server can
//! kill exactly this process; or why the script failed), then runs the
//! `call`s the server sends, one at a time on R's main thread, through the
//! core as the live session does (`Server::call_here`), and sends each
//! `answer` (the result object the core wrote for the version the server
//! named). `mcp_progress()` in a call writes relay lines on the same link,
//! before the answer. A reader thread takes the server's lines: calls wait
//! in a channel; a `cancel` interrupts the running call's closure
//! (`platform::cancel_closure`) or drops a waiting one. The task ends when
//! the server closes the link. Lines are `session::Message` JSON: nothing
//! read from the server is unserialized as R objects.

use crate::ffi;
use crate::host::{Invoke, RFun, RHost};
use crate::platform::{self, LocalStream};
use crate::session::run::{LineSink, LinkedCall};
use crate::session::{Message, Op, MAX_LINE};
use crate::sexp::Sx;
use extendr_api::prelude::*;
use mcplite_core::dispatch::CallContext;
use mcplite_core::r::{field, string1};
use mcplite_core::version::VERSIONS;
use mcplite_core::Server;
use serde_json::value::RawValue;
use std::collections::HashSet;
use std::io::Write;
use std::rc::Rc;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// How long a write to the server may take (it reads on a thread of its own).
const WRITE_WAIT: Duration = Duration::from_secs(5);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The link's write end, shared by the answers and `mcp_progress()`.
struct Writer(Mutex<LocalStream>);

impl LineSink for Writer {
    fn send(&self, line: &[u8]) -> bool {
        Writer::send(self, line)
    }
}

impl Writer {
    fn send(&self, line: &[u8]) -> bool {
        let w = lock(&self.0);
        let _ = w.set_write_timeout(Some(WRITE_WAIT));
        (&*w).write_all(line).is_ok()
    }
}

/// What the reader thread and the main thread share.
#[derive(Default)]
struct Calls {
    /// The call running now.
    running: Option<u64>,
    /// Calls received that have not started.
    pending: HashSet<u64>,
    /// Calls withdrawn or cancelled before they started: never run.
    withdrawn: HashSet<u64>,
}

/// A call as the reader thread hands it over.
struct Call {
    call: u64,
    version: usize,
    tool: String,
    arguments: Option<Box<RawValue>>,
    progress: bool,
    traceparent: Option<String>,
}

/// `rust_worker_link(settings)`: `settings` is `list(url, token, error,
/// specs, info, json_opts, helpers, serve, run, traced)` from `worker_link()`.
/// Returns when the server closes the link; an error message if it could
/// not be served.
pub fn serve(settings: &Robj) -> Result<(), String> {
    let sx = Sx::borrowed(settings);
    let item = |name: &str| -> Result<Robj, String> {
        field(&sx, name).map(|v| v.robj()).ok_or_else(|| format!("the link settings have no `{name}`"))
    };
    let text = |name: &str| -> Result<String, String> {
        string1(&Sx::borrowed(&item(name)?)).ok_or_else(|| format!("`{name}` must be a string"))
    };
    let stream = platform::local_connect(&text("url")?, text("token")?.as_bytes())
        .map_err(|e| format!("cannot reach the server: {e}"))?;
    let writer = Arc::new(Writer(Mutex::new(stream.try_clone().map_err(|e| e.to_string())?)));
    let mut hello = Message::new(Op::Hello);
    let pid = std::process::id();
    hello.pid = Some(pid);
    hello.start = platform::process_start(pid);
    hello.tmp = field(&sx, "tmp").and_then(|t| string1(&t));
    if let Some(error) = field(&sx, "error").and_then(|e| string1(&e)) {
        hello.error = Some(error);
        writer.send(&hello.line());
        return Ok(());
    }
    let server = (|| {
        crate::sexp::set_helpers(&item("helpers")?)?;
        let info = crate::serve::server_info(&item("info")?);
        let opts = mcplite_core::r::options::read(&Sx::borrowed(&item("json_opts")?))
            .map_err(|p| format!("payload options: {}", p.text()))?;
        Server::new(crate::serve::tools(&item("specs")?)?, None, info, opts)
    })();
    let mut server = match server {
        Ok(server) => server,
        Err(e) => {
            hello.error = Some(format!("The worker could not serve the tools: {e}"));
            writer.send(&hello.line());
            return Ok(());
        }
    };
    // Kept outside extendr's table (see `ffi::Kept`), as in the server.
    let keep = |name: &str| item(name).and_then(|r| ffi::keep(&r).map(Rc::new).map_err(|e| e.to_string()));
    let serve = keep("serve")?;
    let run = keep("run")?;
    let traced = item("traced")?;
    if !writer.send(&hello.line()) {
        return Err("the server closed the link".into());
    }
    let calls = Arc::new(Mutex::new(Calls::default()));
    let (tx, rx) = mpsc::channel::<Call>();
    let r_thread = platform::RThread::current();
    {
        let (calls, writer) = (calls.clone(), writer.clone());
        std::thread::Builder::new()
            .name("mcplite-worker-link".into())
            .spawn(move || read_server(stream, &tx, &calls, &r_thread, &writer))
            .map_err(|e| e.to_string())?;
    }
    // Ends when the reader drops its sender: the server closed the link.
    while let Ok(call) = rx.recv() {
        {
            let mut c = lock(&calls);
            if c.withdrawn.remove(&call.call) {
                continue;
            }
            c.pending.remove(&call.call);
            c.running = Some(call.call);
        }
        let answer = run_call(&mut server, (&serve, &run), &traced, &call, &writer);
        lock(&calls).running = None;
        if !writer.send(&answer.line()) {
            break;
        }
    }
    Ok(())
}

/// The server's lines until it closes the link.
fn read_server(
    stream: LocalStream,
    tx: &mpsc::Sender<Call>,
    calls: &Mutex<Calls>,
    r_thread: &platform::RThread,
    writer: &Writer,
) {
    // A call that has not started never runs: the server hears so.
    let withdraw = |call: u64| {
        let mut c = lock(calls);
        if !c.pending.remove(&call) {
            return false;
        }
        c.withdrawn.insert(call);
        drop(c);
        let mut withdrawn = Message::new(Op::Withdrawn);
        withdrawn.call = Some(call);
        writer.send(&withdrawn.line());
        true
    };
    crate::lines::read_lines(&stream, MAX_LINE, |line| {
        let Ok(msg) = serde_json::from_slice::<Message>(line) else { return true };
        match msg.op {
            Op::Call => {
                let (Some(call), Some(version), Some(tool)) = (msg.call, msg.version, msg.tool) else { return true };
                let version = VERSIONS.iter().position(|v| v.id == version).unwrap_or(0);
                let call = Call {
                    call,
                    version,
                    tool,
                    arguments: msg.arguments,
                    progress: msg.progress == Some(true),
                    traceparent: msg.traceparent,
                };
                lock(calls).pending.insert(call.call);
                tx.send(call).is_ok()
            }
            Op::Withdraw => {
                if let Some(call) = msg.call {
                    withdraw(call);
                }
                true
            }
            Op::Cancel => {
                let Some(call) = msg.call else { return true };
                if withdraw(call) {
                    return true;
                }
                let c = lock(calls);
                if c.running == Some(call) {
                    crate::session::run::cancel_running(r_thread);
                }
                true
            }
            _ => true,
        }
    });
}

/// Run one call through the core and make its answer.
fn run_call(
    server: &mut Server<RFun>,
    (serve, run): (&Rc<ffi::Kept>, &Rc<ffi::Kept>),
    traced: &Robj,
    q: &Call,
    writer: &Arc<Writer>,
) -> Message {
    // A call runs as in the server (`serve_tool()`); a traced one through an
    // invoker that opens the worker's span under the server's
    // (`worker_traced_invoker()`).
    let invoke = match q.traceparent.as_deref().map(ffi::string) {
        Some(Ok(tp)) => match ffi::call(traced, &[&tp]) {
            Ok(invoker) => Invoke::Outcome(Rc::new(invoker)),
            Err(_) => Invoke::Call { serve: serve.clone(), run: run.clone() },
        },
        _ => Invoke::Call { serve: serve.clone(), run: run.clone() },
    };
    let progress = q.progress.then(|| writer.clone() as Arc<dyn LineSink>);
    let linked =
        LinkedCall { call: q.call, version: q.version, tool: &q.tool, arguments: q.arguments.as_deref(), progress };
    crate::session::run::run(
        linked,
        || format!("Tool {} is not defined on the worker.", q.tool),
        |arguments, id| {
            let mut host = RHost { invoke, owed: server.owed() };
            let cx = CallContext { traceparent: None, id, progress: None, version: q.version, client: None };
            server.call_here(&q.tool, arguments, &mut host, cx)
        },
    )
}
