//! `ToolHost` for workers (`mcp_server(workers = )`), answering calls in any
//! order.
//!
//! Daemons of ours (`workers = n`): mirai launches and replaces them, and
//! each runs one long task, `worker_link()`, that dials the link socket in
//! the server's private directory and serves calls sent as JSON lines
//! (`session::Message`; the daemon's end is worker_link.rs). This side
//! (`Links`, at the end of this file) sends each call down a link, reads
//! the answers (result objects written by the daemon's core) on a thread
//! per link that wakes the serve loop, cancels by message and kills a
//! daemon that ignores it by pid and start time: no R runs here per call.
//!
//! The script's own daemons (`workers = "mirai"`, possibly remote): each
//! call is one mirai task, through a handful of functions in R/workers.R
//! (`workers_start()`, `workers_submit()`, `workers_wait()`,
//! `workers_bell()`, `workers_cancel()`, `workers_stop()`), called through
//! `ffi::call`; none of them signals an error. A worker returns what
//! `invoke_tool()` returns, read exactly as for the in-process host.
//! `workers_wait()` blocks in mirai's condition variable, which mirai
//! signals when a task resolves. So that input wakes it too, the input
//! reader rings a doorbell: a connection to a Unix socket in the server's
//! private directory (loopback TCP on Windows) that this side accepts and R
//! dials with nanonext, whose pending receive signals the same condition
//! variable. Without the doorbell (it could not be set up, or broke), the
//! core falls back to waiting on the input and looking every few ms.

use crate::ffi;
use crate::host::{call_arguments, read_outcome, RFun};
use crate::platform::{self, LocalListener, LocalStream, PrivateDir};
use crate::progress::offer_progress;
use crate::session::{Message, Op, MAX_LINE};
use crate::sexp::Sx;
use extendr_api::prelude::*;
use mcplite_core::dispatch::{CallContext, Finished, InputWaker, LoopWaker, Started, TaskId};
use mcplite_core::json::Doc;
use mcplite_core::json::Val;
use mcplite_core::progress::{read_relay_line, Reporter};
use mcplite_core::r::{field, flag1, number1, string1};
use mcplite_core::telemetry::diag;
use mcplite_core::version::VERSIONS;
use mcplite_core::{Tool, ToolHost};
use serde_json::value::RawValue;
use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::net::Shutdown;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
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
    /// the relay, or its reporter is with the links).
    progress: bool,
    /// The protocol version the call is answered in (links).
    version: usize,
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
    /// Daemons of ours (`workers = n`) take calls over links; `None` for
    /// the script's daemons (`workers = "mirai"`: a mirai task per call).
    links: Option<Links>,
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
            full: false,
            next: 0,
            stopped: false,
            bell: None,
            bell_ok: false,
            relay: None,
            links: None,
            _dir: dir,
        };
        let own = field(&Sx::borrowed(&config), "n").and_then(|n| number1(&n)).unwrap_or(0.0);
        if own >= 1.0 {
            let links = Links::start(&host._dir, &host.state, workers, own as usize);
            match links {
                Ok(links) => host.links = Some(links),
                Err(e) => {
                    host.stop();
                    return Err(format!("cannot start the workers: {e}"));
                }
            }
        }
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
            if let Some(links) = self.links.as_mut() {
                links.stop();
            }
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

    /// Send queued calls down links with room.
    fn send_queued_links(&mut self) {
        let Some(links) = self.links.as_mut() else { return };
        if let Some(failure) = links.failure.clone() {
            // The script failed on the workers: every waiting call gets why.
            while let Some(task) = self.queue.pop_front() {
                if let Some(call) = self.queued.remove(&task) {
                    self.queued_bytes -= call.bytes();
                    lock(&links.shared.reporters).remove(&task);
                    self.failed.push_back((task, Finished::Failed(failure.clone())));
                }
            }
        }
        while let Some(link) = links.free_link() {
            let Some(task) = self.queue.pop_front() else {
                links.rebalance();
                break;
            };
            let Some(call) = self.queued.remove(&task) else { continue };
            self.queued_bytes -= call.bytes();
            if let Err(call) = links.send(link, task, call) {
                self.queued_bytes += call.bytes();
                self.queued.insert(task, call);
                self.queue.push_front(task);
                // That link is gone: its reader reports it.
                links.links.remove(&link);
            }
        }
        if self.full && self.accepts_calls() {
            self.full = false;
        }
    }

    /// Take the links' news (without waiting, or up to `wait`).
    fn link_events(&mut self, wait: Duration) {
        let Some(links) = self.links.as_mut() else { return };
        let mut requeue = Vec::new();
        let wait = links.next_deadline().map_or(wait, |d| d.min(wait));
        let first = if wait.is_zero() {
            links.rx.try_recv().ok()
        } else {
            links.shared.polling.store(true, Ordering::SeqCst);
            let got = match links.rx.recv_timeout(wait) {
                Ok(event) => Some(event),
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
            };
            links.shared.polling.store(false, Ordering::SeqCst);
            got
        };
        if let Some(event) = first {
            links.on_event(event, &self.state, &mut requeue);
            while let Ok(event) = links.rx.try_recv() {
                links.on_event(event, &self.state, &mut requeue);
            }
        }
        links.reap();
        // Calls whose daemon died before they started go first.
        for (task, call) in requeue.into_iter().rev() {
            self.queued_bytes += call.bytes();
            self.queued.insert(task, call);
            self.queue.push_front(task);
        }
        self.send_queued_links();
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

impl WorkerHost {
    /// Say once on stderr that the queue is full.
    fn note_full(&mut self) {
        if !self.accepts_calls() && !self.full {
            self.full = true;
            diag(&format!(
                "mcplite: {} calls ({} MB of arguments) are waiting for a worker; the server reads no more input until calls finish.",
                self.queued.len(),
                self.queued_bytes >> 20
            ));
        }
    }
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
        if let Some(failure) = self.links.as_ref().and_then(|l| l.failure.clone()) {
            return Started::Done(Finished::Failed(failure));
        }
        // Progress comes back over the daemon's link (daemons of ours), or
        // through the server's relay (a script's daemons).
        let progress = match (self.links.as_ref(), cx.progress) {
            (Some(links), Some(reporter)) => {
                lock(&links.shared.reporters).insert(task, (reporter, tool.def.name.clone()));
                true
            }
            (None, Some(reporter)) => match self.relay.as_ref() {
                Some(relay) => {
                    relay.open(task, reporter, &tool.def.name);
                    true
                }
                None => false,
            },
            (_, None) => false,
        };
        let call = Queued {
            name: tool.def.name.clone(),
            arguments: arguments.map(|a| a.raw().to_vec()),
            traceparent: cx.traceparent,
            progress,
            version: cx.version,
        };
        // mirai takes a call at once while it has a slot; links take theirs
        // from the queue (`send_queued_links`).
        if self.links.is_none() && self.queue.is_empty() && self.running.len() < self.slots {
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
        if self.links.is_some() {
            self.send_queued_links();
        }
        self.note_full();
        Started::Running(task)
    }

    fn poll(&mut self, wait: Duration) -> Option<(TaskId, Finished<Sx>)> {
        if self.links.is_some() {
            self.link_events(Duration::ZERO);
            if let Some(done) = self.failed.pop_front() {
                return Some(done);
            }
            if let Some(done) = self.links.as_mut().and_then(|l| l.done.pop_front()) {
                return Some(done);
            }
            self.link_events(wait);
            if let Some(done) = self.failed.pop_front() {
                return Some(done);
            }
            return self.links.as_mut().and_then(|l| l.done.pop_front());
        }
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
        // A cancelled call's grace (links: the script's daemons are never
        // killed). The ready line needs none: a daemon's hello wakes the loop.
        self.links.as_ref().is_some_and(|l| !l.cancelled.is_empty() || !l.done.is_empty() || !self.failed.is_empty())
    }

    fn loop_waker(&mut self, waker: LoopWaker) {
        if let Some(links) = &self.links {
            *lock(&links.shared.wake) = Some(waker);
        }
    }

    fn tool_update(&mut self, _request: bool) -> Option<mcplite_core::dispatch::ToolSet<RFun>> {
        // Woken by a link (a daemon said hello, or its link ended): the
        // ready line and replacements need no call.
        if self.links.is_some() {
            self.link_events(Duration::ZERO);
        }
        None
    }

    fn input_waker(&mut self) -> Option<InputWaker> {
        if let Some(links) = &self.links {
            let shared = links.shared.clone();
            return Some(Box::new(move || {
                let _ = lock(&shared.tx).send(Event::Wake);
            }));
        }
        let stream = self.bell.take()?;
        Some(Box::new(move || {
            // Non-blocking: a full buffer means R has a byte to read already.
            // std sends with MSG_NOSIGNAL (SO_NOSIGPIPE on macOS), so a
            // closed peer is an error here, never a SIGPIPE.
            let _ = (&stream).write(&[1]);
        }))
    }

    fn wakes_on_input(&self) -> bool {
        self.links.is_some() || self.bell_ok
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
            if let Some(links) = &self.links {
                lock(&links.shared.reporters).remove(&task);
            }
            return;
        }
        if let Some(links) = self.links.as_mut() {
            links.cancel(task);
            return;
        }
        if self.running.remove(&task).is_some() {
            if let Ok(id) = ffi::string(&task.to_string()) {
                let _ = ffi::call(&self.cancel, &[&self.state, &id]);
            }
        }
    }
}

// ---- links to daemons of ours (workers = n) ---------------------------------------

/// At most this many calls are sent down one link at once: the daemon has
/// the next at hand when it answers one, even while the server is not
/// scheduled. A second call goes to a busy
/// daemon only while none is idle, and is withdrawn (`Op::Withdraw`) if
/// another daemon becomes idle with nothing else to do, so a call never
/// waits behind a long one while a daemon is free.
const PER_LINK: usize = 4;
/// How long a connection to the link socket may take to send the token.
const LINK_TOKEN_WAIT: Duration = Duration::from_secs(1);
/// At most this many connections wait to send the token at once.
const LINK_MAX_UNCHECKED: usize = 16;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// News from a link's reader thread, or input (to end a wait).
enum Event {
    Hello(u64, LocalStream, Box<Message>),
    Message(u64, Box<Message>),
    Closed(u64),
    Wake,
}

/// A daemon's link, once it said hello.
struct Link {
    writer: LocalStream,
    pid: u32,
    start: Option<u64>,
    /// Its R temporary directory, removed when it is killed.
    tmp: Option<PathBuf>,
    /// Calls sent down the link and not answered yet, in the order sent
    /// (the first runs; cancelled ones included until their answer).
    calls: Vec<TaskId>,
}

/// A call sent down a link (kept whole: if its daemon dies before it
/// started, it goes to another).
struct Sent {
    link: u64,
    call: Queued,
}

/// A cancelled call whose daemon has not answered it yet.
struct Cancelled {
    link: u64,
    name: String,
    deadline: Instant,
}

/// What the accepting thread and the link readers share.
struct Shared {
    tx: Mutex<Sender<Event>>,
    token: String,
    /// Progress reporters by call.
    reporters: Mutex<HashMap<TaskId, (Reporter, String)>>,
    /// Wakes serving when a link has news (given by the serve loop).
    wake: Mutex<Option<LoopWaker>>,
    unchecked: Mutex<usize>,
    stopping: AtomicBool,
    /// Serving waits on the channel in `poll` now.
    polling: AtomicBool,
}

impl Shared {
    fn send(&self, event: Event) -> bool {
        let sent = lock(&self.tx).send(event).is_ok();
        // Serving waiting in `poll` takes the event itself; otherwise (idle,
        // or between waits) it is woken, which costs it a loop.
        if !self.polling.load(Ordering::SeqCst) {
            let wake = lock(&self.wake).clone();
            if let Some(wake) = wake {
                wake();
            }
        }
        sent
    }
}

/// The server's end of the links: the link socket in the private directory
/// (`LocalListener`, token first, as the doorbell and the relay), a reader
/// thread per daemon, and the calls on each.
struct Links {
    shared: Arc<Shared>,
    url: String,
    rx: Receiver<Event>,
    accepting: Option<std::thread::JoinHandle<()>>,
    links: HashMap<u64, Link>,
    sent: HashMap<TaskId, Sent>,
    cancelled: HashMap<TaskId, Cancelled>,
    /// Calls asked back from a busy daemon (see `rebalance`).
    withdrawing: std::collections::HashSet<TaskId>,
    done: VecDeque<(TaskId, Finished<Sx>)>,
    /// Daemons to link before the workers are ready.
    expected: usize,
    linked: usize,
    /// Why the daemons cannot serve (the script failed there).
    failure: Option<String>,
    grace: Duration,
    /// The R side: `workers_link`, `workers_relink`, `workers_settled`.
    relink: Robj,
    settled: Robj,
    tmp_root: PathBuf,
}

impl Links {
    /// Listen, then have R submit the `n` link tasks.
    fn start(dir: &PrivateDir, state: &Robj, workers: &Robj, n: usize) -> std::result::Result<Links, String> {
        let listener = LocalListener::bind(dir, "link").map_err(|e| format!("cannot listen for workers: {e}"))?;
        let (tx, rx) = mpsc::channel();
        let shared = Arc::new(Shared {
            tx: Mutex::new(tx),
            token: platform::random_token(),
            reporters: Mutex::new(HashMap::new()),
            wake: Mutex::new(None),
            unchecked: Mutex::new(0),
            stopping: AtomicBool::new(false),
            polling: AtomicBool::new(false),
        });
        let url = listener.url().to_string();
        let accepting = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("mcplite-worker-links".into())
                .spawn(move || accept_links(&listener, &shared))
                .map_err(|e| e.to_string())?
        };
        let grace = state
            .as_environment()
            .and_then(|env| env.local(sym!(grace)).ok())
            .and_then(|g| g.as_real())
            .filter(|g| g.is_finite() && *g >= 0.0)
            .unwrap_or(2.0);
        let mut links = Links {
            shared,
            url,
            rx,
            accepting: Some(accepting),
            links: HashMap::new(),
            sent: HashMap::new(),
            cancelled: HashMap::new(),
            withdrawing: std::collections::HashSet::new(),
            done: VecDeque::new(),
            expected: n,
            linked: 0,
            failure: None,
            grace: Duration::from_secs_f64(grace),
            relink: function(workers, "relink")?,
            settled: function(workers, "settled")?,
            tmp_root: dir.path().join("tmp"),
        };
        let link = function(workers, "link")?;
        let (url_r, token_r) = links.address_r().map_err(|e| e.to_string())?;
        let n_r = ffi::double(n as f64).map_err(|e| e.to_string())?;
        let linked = ffi::call(&link, &[state, &url_r, &token_r, &n_r]).map_err(|e| e.to_string())?;
        if flag1(&Sx::borrowed(&linked)) != Some(true) {
            let why = string1(&Sx::borrowed(&linked)).unwrap_or_else(|| "R could not submit them".into());
            links.stop();
            return Err(format!("cannot link the workers: {why}"));
        }
        Ok(links)
    }

    fn address_r(&self) -> std::result::Result<(Robj, Robj), ffi::RFailure> {
        Ok((ffi::string(&self.url)?.into(), ffi::string(&self.shared.token)?.into()))
    }

    /// The link with room for another call, the least busy first.
    fn free_link(&self) -> Option<u64> {
        self.links
            .iter()
            .filter(|(_, l)| l.calls.len() < PER_LINK)
            .min_by_key(|(_, l)| l.calls.len())
            .map(|(id, _)| *id)
    }

    /// With nothing queued, a daemon that is idle while another holds a call
    /// behind its running one: ask for that call back (it then goes to the
    /// idle one; if it started meanwhile, its answer comes as usual).
    fn rebalance(&mut self) {
        let idle = self.links.values().filter(|l| l.calls.is_empty()).count();
        if idle == 0 {
            return;
        }
        let mut asked = 0;
        for link in self.links.values() {
            if asked == idle {
                break;
            }
            for task in link.calls.iter().skip(1) {
                if asked == idle {
                    break;
                }
                if self.cancelled.contains_key(task) || !self.withdrawing.insert(*task) {
                    continue;
                }
                let mut msg = Message::new(Op::Withdraw);
                msg.call = Some(*task);
                let _ = (&link.writer).write_all(&msg.line());
                asked += 1;
            }
        }
    }

    /// Send one call down `link`; the call back if the link is broken.
    fn send(&mut self, link: u64, task: TaskId, call: Queued) -> std::result::Result<(), Queued> {
        let Some(l) = self.links.get_mut(&link) else { return Err(call) };
        let mut msg = Message::new(Op::Call);
        msg.call = Some(task);
        msg.version = Some(VERSIONS[call.version].id.to_string());
        msg.tool = Some(call.name.clone());
        msg.arguments =
            call.arguments.as_ref().and_then(|a| RawValue::from_string(String::from_utf8_lossy(a).into_owned()).ok());
        msg.progress = Some(call.progress);
        msg.traceparent = call.traceparent.clone();
        if (&l.writer).write_all(&msg.line()).is_err() {
            // Its reader sees the end too and reports it.
            let _ = l.writer.shutdown(Shutdown::Both);
            return Err(call);
        }
        l.calls.push(task);
        self.sent.insert(task, Sent { link, call });
        Ok(())
    }

    /// Handle news from the links; `state` is R's state (for the R side).
    fn on_event(&mut self, event: Event, state: &Robj, requeue: &mut Vec<(TaskId, Queued)>) {
        match event {
            Event::Wake => {}
            Event::Hello(id, writer, msg) => {
                if let Some(error) = msg.error {
                    let _ = writer.shutdown(Shutdown::Both);
                    if self.failure.is_none() {
                        self.failure = Some(error.clone());
                        if self.linked < self.expected {
                            self.expected = 0;
                            self.say_settled(state, Some(&error));
                        }
                    }
                    return;
                }
                let (Some(pid), true) = (msg.pid, !self.shared.stopping.load(Ordering::SeqCst)) else {
                    let _ = writer.shutdown(Shutdown::Both);
                    return;
                };
                let tmp = msg.tmp.map(PathBuf::from);
                self.links.insert(id, Link { writer, pid, start: msg.start, tmp, calls: Vec::new() });
                self.linked += 1;
                if self.expected > 0 && self.linked == self.expected {
                    self.say_settled(state, None);
                }
            }
            Event::Message(id, msg) => {
                if msg.op != Op::Answer && msg.op != Op::Withdrawn {
                    return;
                }
                let Some(task) = msg.call else { return };
                let Some(link) = self.links.get_mut(&id) else { return };
                let Some(at) = link.calls.iter().position(|t| *t == task) else { return };
                link.calls.remove(at);
                self.withdrawing.remove(&task);
                if msg.op == Op::Withdrawn {
                    // It never ran there: it goes first to the next free daemon.
                    self.cancelled.remove(&task);
                    if let Some(sent) = self.sent.remove(&task) {
                        requeue.push((task, sent.call));
                    }
                    return;
                }
                lock(&self.shared.reporters).remove(&task);
                if self.cancelled.remove(&task).is_some() {
                    return;
                }
                if let Some(sent) = self.sent.remove(&task) {
                    let finished = match msg.result {
                        Some(result) => Finished::Forwarded {
                            result: result.get().as_bytes().to_vec(),
                            is_error: msg.is_error == Some(true),
                            failure: msg.error,
                            zeroed: msg.zeroed == Some(true),
                        },
                        None => Finished::Failed(format!(
                            "Tool {} got an answer without a result from its worker.",
                            sent.call.name
                        )),
                    };
                    self.done.push_back((task, finished));
                }
            }
            Event::Closed(id) => {
                let Some(link) = self.links.remove(&id) else { return };
                for (i, task) in link.calls.iter().enumerate() {
                    self.cancelled.remove(task);
                    self.withdrawing.remove(task);
                    let Some(sent) = self.sent.remove(task) else { continue };
                    if i == 0 {
                        lock(&self.shared.reporters).remove(task);
                        self.done.push_back((*task, Finished::Failed(format!(
                            "Tool {} stopped: the worker process running it ended (the tool may have called quit(), or the process crashed).",
                            sent.call.name
                        ))));
                    } else {
                        // It had not started: another daemon runs it.
                        requeue.push((*task, sent.call));
                    }
                }
                self.remove_tmp(&link);
                if !self.shared.stopping.load(Ordering::SeqCst) && self.failure.is_none() {
                    if let Ok((url, token)) = self.address_r() {
                        let _ = ffi::call(&self.relink, &[state, &url, &token]);
                    }
                }
            }
        }
    }

    fn say_settled(&mut self, state: &Robj, failure: Option<&str>) {
        self.expected = 0;
        let failure: Robj = match failure.map(ffi::string) {
            Some(Ok(f)) => f.into(),
            _ => ().into(),
        };
        let _ = ffi::call(&self.settled, &[state, &failure]);
    }

    /// A killed daemon's R temporary directory (only one inside ours).
    fn remove_tmp(&self, link: &Link) {
        if let Some(tmp) = &link.tmp {
            if tmp.starts_with(&self.tmp_root) && tmp != &self.tmp_root {
                let _ = std::fs::remove_dir_all(tmp);
            }
        }
    }

    /// Cancelled calls past their grace, still running: their daemon is
    /// killed (by pid and start time: never another process), its link
    /// then ends and a new daemon takes its place.
    fn reap(&mut self) {
        let now = Instant::now();
        let mut kill = Vec::new();
        for (task, c) in self.cancelled.iter_mut() {
            if now < c.deadline {
                continue;
            }
            match self.links.get(&c.link) {
                // Still waiting behind another call: its grace starts when it runs.
                Some(link) if link.calls.first() != Some(task) => c.deadline = now + self.grace,
                Some(_) => kill.push(*task),
                None => {}
            }
        }
        for task in kill {
            let Some(c) = self.cancelled.remove(&task) else { continue };
            let Some(link) = self.links.get(&c.link) else { continue };
            if platform::kill_process(link.pid, link.start).unwrap_or(false) {
                diag(&format!(
                    "mcplite: tool {} was cancelled and ignored the interrupt for {} s: its worker (process {}) was stopped and a new one started.",
                    c.name,
                    self.grace.as_secs_f64(),
                    link.pid
                ));
                self.remove_tmp(link);
            }
            let _ = link.writer.shutdown(Shutdown::Both);
        }
    }

    /// How long until the next grace ends.
    fn next_deadline(&self) -> Option<Duration> {
        let now = Instant::now();
        self.cancelled.values().map(|c| c.deadline.saturating_duration_since(now)).min()
    }

    fn cancel(&mut self, task: TaskId) {
        lock(&self.shared.reporters).remove(&task);
        let Some(sent) = self.sent.remove(&task) else { return };
        if let Some(link) = self.links.get(&sent.link) {
            let mut msg = Message::new(Op::Cancel);
            msg.call = Some(task);
            let _ = (&link.writer).write_all(&msg.line());
        }
        let deadline = Instant::now() + self.grace;
        self.cancelled.insert(task, Cancelled { link: sent.link, name: sent.call.name, deadline });
    }

    /// End every link: daemons still running a call are killed (mirai's
    /// reset would wait for them), the others end their link task.
    fn stop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        for link in self.links.values() {
            if !link.calls.is_empty() && platform::kill_process(link.pid, link.start).unwrap_or(false) {
                self.remove_tmp(link);
            }
            let _ = link.writer.shutdown(Shutdown::Both);
        }
        self.links.clear();
        self.sent.clear();
        self.cancelled.clear();
        self.withdrawing.clear();
        if let Some(accepting) = self.accepting.take() {
            // Wake the accepting thread, which then sees `stopping`.
            if platform::local_connect(&self.url, b"").is_ok() {
                let _ = accepting.join();
            }
        }
    }
}

fn accept_links(listener: &LocalListener, shared: &Arc<Shared>) {
    let mut next = 0u64;
    loop {
        let accepted = listener.accept_next();
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        match accepted {
            Ok(stream) => {
                {
                    let mut unchecked = lock(&shared.unchecked);
                    if *unchecked >= LINK_MAX_UNCHECKED {
                        continue;
                    }
                    *unchecked += 1;
                }
                next += 1;
                let (id, reader_shared) = (next, shared.clone());
                let spawned = std::thread::Builder::new()
                    .name("mcplite-worker-reader".into())
                    .spawn(move || read_link(stream, id, &reader_shared));
                if spawned.is_err() {
                    *lock(&shared.unchecked) -= 1;
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// One daemon's lines, once it sent the token: `hello` first, then
/// answers; progress lines go to the call's reporter at once (before the
/// answer, which follows on the same stream).
fn read_link(stream: LocalStream, id: u64, shared: &Shared) {
    let checked = platform::has_token(&stream, shared.token.as_bytes(), LINK_TOKEN_WAIT);
    *lock(&shared.unchecked) -= 1;
    if !checked || shared.stopping.load(Ordering::SeqCst) {
        return;
    }
    let mut said_hello = false;
    crate::lines::read_lines(&stream, MAX_LINE, |line| {
        if let Ok(msg) = serde_json::from_slice::<Message>(line) {
            if said_hello {
                return shared.send(Event::Message(id, Box::new(msg)));
            }
            let Ok(writer) = stream.try_clone() else { return false };
            if msg.op != Op::Hello {
                return false;
            }
            said_hello = true;
            return shared.send(Event::Hello(id, writer, Box::new(msg)));
        }
        if let Some((task, Some(report))) = read_relay_line(line) {
            let target = lock(&shared.reporters).get(&task).cloned();
            if let Some((reporter, tool)) = target {
                offer_progress(&reporter, &tool, report);
            }
        }
        true
    });
    if said_hello {
        shared.send(Event::Closed(id));
    }
}
