//! `ToolHost` for mirai workers (`mcp_server(workers = )`): each call is
//! submitted as one mirai task and answered when it finishes, in any order.
//! The R side is a handful of functions in R/workers.R (`workers_start()`,
//! `workers_submit()`, `workers_wait()`, `workers_bell()`,
//! `workers_cancel()`, `workers_stop()`), called through `ffi::call`; none
//! of them signals an error. A worker returns what `invoke_tool()` returns,
//! read exactly as for the in-process host.
//!
//! Waiting: `workers_wait()` blocks in mirai's condition variable, which
//! mirai signals when a task resolves. So that input wakes it too, the input
//! reader rings a doorbell: a connection to a Unix socket in the server's
//! private directory (loopback TCP on Windows) that this side accepts and R
//! dials with nanonext, whose pending receive signals the same condition
//! variable. Without the doorbell (it could not be set up, or broke), the
//! core falls back to waiting on the input and looking every few ms.

use crate::ffi;
use crate::host::{call_arguments, read_outcome, RFun};
use crate::platform::{self, LocalListener, LocalStream, PrivateDir};
use crate::sexp::Sx;
use extendr_api::prelude::*;
use mcplite_core::dispatch::{CallContext, Finished, InputWaker, Started, TaskId};
use mcplite_core::json::Doc;
use mcplite_core::json::Val;
use mcplite_core::r::{field, flag1, number1, string1};
use mcplite_core::telemetry::diag;
use mcplite_core::{Tool, ToolHost};
use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::time::{Duration, Instant};

/// How long R may take to dial the doorbell and prove it is the dialler.
const BELL_SETUP: Duration = Duration::from_secs(2);
/// How long one connection to the doorbell may take to send the token: one
/// that stays silent is dropped then, so it cannot hold set-up up.
const BELL_TOKEN_WAIT: Duration = Duration::from_millis(100);

/// At most this many calls wait for a worker, holding at most
/// [`MAX_QUEUED_BYTES`] of arguments; beyond either, serving reads no more
/// input until calls finish (see `?mcp_server`).
pub const MAX_QUEUED_CALLS: usize = 4096;
pub const MAX_QUEUED_BYTES: usize = 64 << 20;

/// A call waiting for a worker: its arguments as the JSON text the client
/// sent (converted to R only when the call is sent, so a queued call costs
/// the server its bytes and nothing more).
struct Queued {
    name: String,
    arguments: Option<Vec<u8>>,
    traceparent: Option<String>,
    /// Whether the request carried a progress token (the call is open in
    /// the relay).
    progress: bool,
}

impl Queued {
    fn bytes(&self) -> usize {
        self.name.len() + self.arguments.as_ref().map_or(0, Vec::len) + self.traceparent.as_ref().map_or(0, String::len)
    }
}

/// Runs tools on mirai daemons: at most `slots` calls at once are handed to
/// mirai (two per daemon of ours), the rest wait here in arrival order.
pub struct WorkerHost {
    state: Robj,
    submit: Robj,
    wait: Robj,
    cancel: Robj,
    stop: Robj,
    /// Tool name of each task handed to mirai.
    running: HashMap<TaskId, String>,
    /// How many tasks may be handed to mirai at once.
    slots: usize,
    /// Calls waiting for a slot: ids in order (ids of calls cancelled
    /// meanwhile are skipped), the calls by id, and their bytes.
    queue: VecDeque<TaskId>,
    queued: HashMap<TaskId, Queued>,
    queued_bytes: usize,
    /// A call that could not be handed to mirai, to report at the next poll.
    failed: VecDeque<(TaskId, Finished<Sx>)>,
    /// Whether R has cancelled calls whose grace has not run out.
    reaping: bool,
    /// Whether the daemons of ours are still evaluating the script (R says
    /// on stderr when they are done, from a wait: serving keeps waiting).
    starting: bool,
    /// Whether the queue is full (said once on stderr each time it fills).
    full: bool,
    next: TaskId,
    stopped: bool,
    /// The doorbell's write end, until the core takes it as its waker.
    bell: Option<LocalStream>,
    /// Whether R's side of the doorbell still works (from each wait).
    bell_ok: bool,
    /// Where workers send `mcp_progress()` reports (`None`: it could not be
    /// set up, and they are dropped).
    relay: Option<crate::relay::Relay>,
    /// Where the daemons' socket, the doorbell and the daemons' temporary
    /// files are; removed (dropped) after `stop`.
    _dir: PrivateDir,
}

fn function(list: &Robj, name: &str) -> std::result::Result<Robj, String> {
    let f = field(&Sx::borrowed(list), name).map(|f| f.robj()).filter(|f| f.is_function());
    f.ok_or_else(|| format!("workers: `{name}` must be a function"))
}

impl WorkerHost {
    /// Start the workers: `workers` is the list `serve_specs()` makes
    /// (`config` and the R functions). Call only once the stdio guard is in
    /// place: daemons started here inherit the process's standard streams.
    pub fn start(workers: &Robj) -> std::result::Result<WorkerHost, String> {
        let config = field(&Sx::borrowed(workers), "config").map(|c| c.robj()).unwrap_or_else(|| ().into());
        let start = function(workers, "start")?;
        let dir = PrivateDir::create("mcplite-")
            .map_err(|e| format!("cannot start the workers: cannot create a private directory: {e}"))?;
        let dir_r = ffi::string(&dir.path().to_string_lossy()).map_err(|e| e.to_string())?;
        let state = ffi::call(&start, &[&config, &dir_r]).map_err(|e| format!("cannot start the workers: {e}"))?;
        if let Some(message) = string1(&Sx::borrowed(&state)) {
            return Err(format!("cannot start the workers: {message}"));
        }
        let mut host = WorkerHost {
            state: state.clone(),
            submit: function(workers, "submit")?,
            wait: function(workers, "wait")?,
            cancel: function(workers, "cancel")?,
            stop: function(workers, "stop")?,
            running: HashMap::new(),
            slots: slots_of(&state),
            queue: VecDeque::new(),
            queued: HashMap::new(),
            queued_bytes: 0,
            failed: VecDeque::new(),
            reaping: false,
            starting: starting_of(&state),
            full: false,
            next: 0,
            stopped: false,
            bell: None,
            bell_ok: false,
            relay: None,
            _dir: dir,
        };
        match crate::relay::Relay::start(&host._dir) {
            Ok(relay) => host.relay = Some(relay),
            Err(e) => diag(&format!(
                "mcplite: workers: progress from tools on workers cannot reach the server ({e}); mcp_progress() does nothing there."
            )),
        }
        match host.open_bell(&function(workers, "bell")?) {
            Ok(stream) => {
                host.bell = Some(stream);
                host.bell_ok = true;
            }
            Err(e) => diag(&format!(
                "mcplite: workers: input cannot wake the wait for results ({e}); the server looks at its workers every few ms instead."
            )),
        }
        Ok(host)
    }

    /// Sets up the doorbell: listen in the private directory (a loopback
    /// port on Windows), have R dial it and send the token, accept that
    /// connection (only one that sends the token).
    fn open_bell(&self, bell: &Robj) -> std::result::Result<LocalStream, String> {
        let listener = LocalListener::bind(&self._dir, "bell").map_err(|e| format!("cannot listen: {e}"))?;
        let token = platform::random_token();
        let url_r = ffi::string(listener.url()).map_err(|e| e.to_string())?;
        let token_r = ffi::string(&token).map_err(|e| e.to_string())?;
        // The connection and the token wait in the kernel until accepted.
        let dialled = ffi::call(bell, &[&self.state, &url_r, &token_r]).map_err(|e| e.to_string())?;
        if flag1(&Sx::borrowed(&dialled)) != Some(true) {
            return Err(string1(&Sx::borrowed(&dialled)).unwrap_or_else(|| "R could not dial".into()));
        }
        listener
            .accept_token(token.as_bytes(), Instant::now() + BELL_SETUP, BELL_TOKEN_WAIT)
            .map_err(|e| format!("R's connection did not arrive: {e}"))
    }

    /// Stop calls still running and the daemons mcplite started.
    pub fn stop(&mut self) {
        if !self.stopped {
            self.stopped = true;
            self.running.clear();
            self.queue.clear();
            self.queued.clear();
            self.queued_bytes = 0;
            let _ = ffi::call(&self.stop, &[&self.state]);
            if let Some(relay) = self.relay.as_mut() {
                relay.stop();
            }
        }
    }

    /// A task that has finished, waiting up to `wait` for one in R.
    fn finished(&mut self, wait: Duration) -> Option<(TaskId, Finished<Sx>)> {
        let ms = ffi::double(wait.as_secs_f64() * 1000.0).ok()?;
        let out = ffi::call(&self.wait, &[&self.state, &ms]).ok()?;
        let sx = Sx::borrowed(&out);
        if field(&sx, "bell").and_then(|b| flag1(&b)) != Some(true) {
            self.bell_ok = false;
        }
        self.reaping = field(&sx, "reaping").and_then(|b| flag1(&b)) == Some(true);
        self.starting = field(&sx, "starting").and_then(|b| flag1(&b)) == Some(true);
        let id = field(&sx, "id").and_then(|i| string1(&i))?;
        let outcome = field(&sx, "outcome").map(|o| o.robj()).unwrap_or_else(|| ().into());
        let task: TaskId = id.parse().ok()?;
        let name = self.running.remove(&task).unwrap_or_default();
        if let Some(relay) = &self.relay {
            // What the call reported comes before its answer.
            let reports = field(&Sx::borrowed(&outcome), "reports").and_then(|r| number1(&r)).unwrap_or(0.0);
            relay.finish(task, if reports >= 1.0 { reports as u64 } else { 0 });
        }
        Some((task, read_outcome(Sx::owned(outcome), &name)))
    }
}

impl WorkerHost {
    /// Hand one call to mirai.
    fn send(&mut self, task: TaskId, call: Queued) -> std::result::Result<(), Finished<Sx>> {
        let name = call.name.as_str();
        let doc = match call.arguments.map(Doc::parse).transpose() {
            Ok(doc) => doc,
            Err(e) => return Err(Finished::Failed(format!("Tool {name} could not be sent to a worker: {e}"))),
        };
        let args = call_arguments(name, doc.as_ref().map(|d| d.root()))?;
        let sent = (|| {
            let traceparent = match call.traceparent.as_deref() {
                Some(t) => ffi::string(t)?.into(),
                None => Robj::from(()),
            };
            let id = ffi::string(&task.to_string())?;
            let name_r = ffi::string(name)?;
            let progress = match self.relay.as_ref().filter(|_| call.progress) {
                Some(relay) => {
                    let (url, token) = relay.address();
                    ffi::strings(&[url, token, &task.to_string()])?.into()
                }
                None => Robj::from(()),
            };
            ffi::call(&self.submit, &[&self.state, &id, &name_r, &args, &traceparent, &progress])
        })();
        match sent {
            Ok(r) if flag1(&Sx::borrowed(&r)) == Some(true) => {
                self.running.insert(task, call.name);
                Ok(())
            }
            Ok(r) => Err(Finished::Failed(
                string1(&Sx::borrowed(&r)).unwrap_or_else(|| format!("Tool {name} could not be sent to a worker.")),
            )),
            Err(e) => Err(Finished::Failed(format!("Tool {name} could not be sent to a worker: {e}"))),
        }
    }

    /// Nothing more of `task`'s progress is relayed.
    fn close_progress(&self, task: TaskId) {
        if let Some(relay) = &self.relay {
            relay.close(task);
        }
    }

    /// Hand queued calls to mirai while slots are free.
    fn send_queued(&mut self) {
        while self.running.len() < self.slots {
            let Some(task) = self.queue.pop_front() else { return };
            let Some(call) = self.queued.remove(&task) else { continue };
            self.queued_bytes -= call.bytes();
            if let Err(failed) = self.send(task, call) {
                self.close_progress(task);
                self.failed.push_back((task, failed));
            }
            if self.full && self.accepts_calls() {
                self.full = false;
            }
        }
    }
}

/// Whether the state R made says the workers are still starting.
fn starting_of(state: &Robj) -> bool {
    let value = state.as_environment().and_then(|env| env.local(sym!(starting)).ok());
    value.is_some_and(|v| flag1(&Sx::borrowed(&v)) == Some(true))
}

/// How many calls at once the workers take: `slots` of the state R made
/// (the number of daemons of ours, or a bound for the script's own).
fn slots_of(state: &Robj) -> usize {
    let slots = state.as_environment().and_then(|env| env.local(sym!(slots)).ok()).and_then(|s| s.as_real());
    match slots {
        Some(n) if n >= 1.0 => n as usize,
        _ => 1,
    }
}

impl Drop for WorkerHost {
    fn drop(&mut self) {
        self.stop();
    }
}

impl ToolHost for WorkerHost {
    type Fun = RFun;
    type Value = Sx;

    fn call(&mut self, tool: &Tool<RFun>, arguments: Option<Val<'_>>, cx: CallContext) -> Started<Sx> {
        self.next += 1;
        let task = self.next;
        let progress = match (cx.progress, self.relay.as_ref()) {
            (Some(reporter), Some(relay)) => {
                relay.open(task, reporter, &tool.def.name);
                true
            }
            _ => false,
        };
        let call = Queued {
            name: tool.def.name.clone(),
            arguments: arguments.map(|a| a.raw().to_vec()),
            traceparent: cx.traceparent,
            progress,
        };
        if self.queue.is_empty() && self.running.len() < self.slots {
            return match self.send(task, call) {
                Ok(()) => Started::Running(task),
                Err(failed) => {
                    self.close_progress(task);
                    Started::Done(failed)
                }
            };
        }
        self.queued_bytes += call.bytes();
        self.queued.insert(task, call);
        self.queue.push_back(task);
        if !self.accepts_calls() && !self.full {
            self.full = true;
            diag(&format!(
                "mcplite: {} calls ({} MB of arguments) are waiting for a worker; the server reads no more input until calls finish.",
                self.queued.len(),
                self.queued_bytes >> 20
            ));
        }
        Started::Running(task)
    }

    fn poll(&mut self, wait: Duration) -> Option<(TaskId, Finished<Sx>)> {
        self.send_queued();
        if let Some(failed) = self.failed.pop_front() {
            return Some(failed);
        }
        let done = self.finished(wait);
        // A slot is free: the next call goes now, not at the next poll.
        self.send_queued();
        done
    }

    fn accepts_calls(&self) -> bool {
        self.queued.len() < MAX_QUEUED_CALLS && self.queued_bytes < MAX_QUEUED_BYTES
    }

    fn has_timers(&self) -> bool {
        // While the workers start, serving keeps waiting on them, so the line
        // that says they are ready (or failed) comes without a call.
        self.reaping || self.starting
    }

    fn input_waker(&mut self) -> Option<InputWaker> {
        let stream = self.bell.take()?;
        Some(Box::new(move || {
            // Non-blocking: a full buffer means R has a byte to read already.
            // std sends with MSG_NOSIGNAL (SO_NOSIGPIPE on macOS), so a
            // closed peer is an error here, never a SIGPIPE.
            let _ = (&stream).write(&[1]);
        }))
    }

    fn wakes_on_input(&self) -> bool {
        self.bell_ok
    }

    fn cancel(&mut self, task: TaskId) {
        self.close_progress(task);
        if let Some(call) = self.queued.remove(&task) {
            self.queued_bytes -= call.bytes();
            // Its id stays in the queue until reached; drop such ids once
            // they outnumber the calls, so the queue stays bounded.
            if self.queue.len() > 2 * self.queued.len() + 64 {
                let queued = &self.queued;
                self.queue.retain(|t| queued.contains_key(t));
            }
            return;
        }
        if self.running.remove(&task).is_some() {
            if let Ok(id) = ffi::string(&task.to_string()) {
                let _ = ffi::call(&self.cancel, &[&self.state, &id]);
                self.reaping = true;
            }
        }
    }
}
