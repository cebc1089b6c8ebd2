//! The service layer: reads messages, hands requests to the dispatcher, writes
//! answers, and records what happened (telemetry, diagnostics). It owns the
//! rules every answer obeys: exactly one answer per request with an id, none
//! for notifications, none for a request the client cancelled, one line each.
//!
//! A reader thread reads and parses lines ahead of the handler (at most
//! [`READ_AHEAD`] of them), so that a `notifications/cancelled` sent while a
//! tool runs is seen before that tool's answer is written, and so parsing
//! overlaps with running tools. Requests are handled in order on the calling
//! thread (the R thread); a host that runs tools elsewhere (workers) answers
//! them as they finish.

use crate::dispatch::{
    stopped_message, Answer, Canceller, Facts, Finished, InputWaker, LoopWaker, Pending, Reply, Server, StopRequests,
    StopSource, Stopped, ToolHost,
};
use crate::dispatch::{Owed, TaskId};
use crate::envelope::{self, IdKey, Incoming, Message, RequestId};
use crate::progress::{lock_output, Output, Progress};
use crate::telemetry::{diag, Span, Telemetry};
use crate::transport::LineReader;
use std::collections::{HashMap, HashSet};
use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How many lines the reader thread may read ahead of the handler.
pub const READ_AHEAD: usize = 1024;

/// How often serving looks at the stop requests and the host while it waits
/// on something that cannot wake it: a call running on a host that waits
/// in its own poll, or a stop source that cannot wake it (see
/// [`StopSource::watch`]). Otherwise an idle server waits with no timeout.
const IDLE_TICK: Duration = Duration::from_millis(50);

/// How long serving may take to wind down (at end of input or when asked to
/// stop): calls still running may finish, queued ones run, within this.
pub const END_GRACE: Duration = Duration::from_secs(10);

/// While calls run on workers, the server waits for input between looks at
/// the host; the wait starts at `WORKER_LOOK_MIN` and doubles while nothing
/// happens, up to `WORKER_LOOK_MAX`. A short call is answered soon after it
/// finishes, and a long one costs little CPU to watch (input always wakes the
/// server at once).
pub const WORKER_LOOK_MIN: Duration = Duration::from_micros(50);
pub const WORKER_LOOK_MAX: Duration = Duration::from_millis(2);

/// Why serving ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The client closed our standard input.
    EndOfInput,
    /// The client closed our standard output.
    OutputClosed,
    /// The server was asked to stop (a signal: SIGINT, SIGTERM, SIGHUP, or a
    /// console event on Windows).
    Stopped,
}

/// Request ids the client cancelled: added by the reader as soon as it reads
/// the cancellation, removed when the handler reaches it in order.
type Cancelled = Arc<Mutex<HashSet<IdKey>>>;

fn lock(set: &Cancelled) -> std::sync::MutexGuard<'_, HashSet<IdKey>> {
    // A poisoned set is still a set.
    set.lock().unwrap_or_else(|e| e.into_inner())
}

/// The `requestId` key of a `notifications/cancelled` message.
fn cancellation_of(msg: &Message) -> Option<IdKey> {
    if msg.method != "notifications/cancelled" {
        return None;
    }
    msg.param(crate::wire::REQUEST_ID).and_then(IdKey::of)
}

/// How long the handler spins on the queue for the client's next line after
/// serving one, before it sleeps: a client that sends its next request as
/// soon as it has read an answer (one call at a time) finds the handler
/// awake, and the request reaches it without a wake-up of R's thread (a
/// futex wake, and on a busy machine a wait for a core: bench/README.md,
/// "Throughput"). It spins by yielding its core, so the reader thread, woken
/// by the request, runs at once even where R's thread spins (a busy spin
/// kept it waiting, doubling the slowest round trips on 2 cores). Only right
/// after a line was served, once: an idle server sleeps as before (no CPU,
/// no context switches).
pub const HANDLER_SPIN: Duration = Duration::from_micros(60);

/// How long an answer may be held back at most. An answer made while more
/// lines wait in the queue is not written at once but held, so that the
/// answers to lines read together go out in one write (a `select()` and a
/// `write()` per answer were nearly all the system calls of a call:
/// bench/README.md, "Throughput"). The handler writes what is held as soon
/// as no line waits, or [`HOLD_BYTES`] are held; and since the next line's
/// tool may run for any time, the flusher thread ([`run_flusher`]) writes
/// what has been held for this long.
pub const HOLD_MAX: Duration = Duration::from_micros(500);

/// Held answers are written once they reach this many bytes.
const HOLD_BYTES: usize = 64 << 10;

/// Wakes the flusher thread when answers start being held, and tells it to
/// stop.
#[derive(Default)]
struct Flusher {
    state: Mutex<FlushState>,
    wake: std::sync::Condvar,
}

#[derive(Default)]
struct FlushState {
    /// Since when answers have been held (`None`: the flusher has nothing
    /// to wait for).
    since: Option<Instant>,
    stopping: bool,
}

impl Flusher {
    fn lock(&self) -> std::sync::MutexGuard<'_, FlushState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Answers are held from now on (none were).
    fn started(&self) {
        self.lock().since = Some(Instant::now());
        self.wake.notify_one();
    }

    fn stop(&self) {
        self.lock().stopping = true;
        self.wake.notify_one();
    }
}

/// The flusher thread: writes the held answers ([`Owed::hold`]) once they
/// have been held for [`HOLD_MAX`], whatever R's thread is doing (running
/// the next tool, for any time); and what is still held when serving ends.
fn run_flusher<W: Write>(flusher: &Flusher, out: &Mutex<Output<W>>, owed: &Owed) {
    loop {
        let stopping = {
            let mut state = flusher.lock();
            loop {
                if state.stopping {
                    break true;
                }
                match state.since {
                    None => state = flusher.wake.wait(state).unwrap_or_else(|e| e.into_inner()),
                    Some(since) => {
                        let now = Instant::now();
                        let due = since + HOLD_MAX;
                        if now >= due {
                            state.since = None;
                            break false;
                        }
                        state = flusher.wake.wait_timeout(state, due - now).unwrap_or_else(|e| e.into_inner()).0;
                    }
                }
            }
        };
        let mut out = lock_output(out);
        owed.write_held(|lines| {
            out.write_lines(lines);
        });
        if stopping {
            return;
        }
    }
}

/// How many bytes of lines the reader thread may hold ahead of the handler
/// (besides [`READ_AHEAD`] lines): a line longer than this is still read,
/// alone.
pub const READ_AHEAD_BYTES: usize = 16 << 20;

/// The lines read ahead and not yet taken, between the reader thread and
/// the handler. Each side wakes the other only when it waits: under load,
/// lines pass without a system call each (a channel woke the handler, and a
/// full one the reader, once per line). The reader waits while [`READ_AHEAD`]
/// lines or [`READ_AHEAD_BYTES`] are held, and is woken once half are taken.
#[derive(Default)]
struct Queue {
    state: Mutex<Held>,
    to_handler: std::sync::Condvar,
    to_reader: std::sync::Condvar,
    /// Counts what the handler may act on (lines, the end, wake-ups), bumped
    /// under the lock: a handler spinning before it waits ([`HANDLER_SPIN`])
    /// watches it without the lock.
    news: AtomicU64,
}

#[derive(Default)]
struct Held {
    items: std::collections::VecDeque<(usize, io::Result<Incoming>)>,
    bytes: usize,
    /// The reader has stopped: nothing more comes once `items` are taken.
    ended: bool,
    /// A [`LoopWaker`] rang since the handler last looked.
    woken: bool,
    handler_gone: bool,
    handler_waiting: bool,
    reader_waiting: bool,
}

impl Held {
    fn full_for(&self, n: usize) -> bool {
        !self.items.is_empty() && (self.items.len() >= READ_AHEAD || self.bytes + n > READ_AHEAD_BYTES)
    }

    /// Room enough that a waiting reader should go on.
    fn drained(&self) -> bool {
        self.items.is_empty() || (self.items.len() <= READ_AHEAD / 2 && self.bytes <= READ_AHEAD_BYTES / 2)
    }
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reader: hand over a line of `n` bytes (waiting for room); false once
    /// the handler is gone.
    fn push(&self, n: usize, item: io::Result<Incoming>) -> bool {
        let mut g = self.lock();
        while !g.handler_gone && g.full_for(n) {
            g.reader_waiting = true;
            g = self.to_reader.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        g.reader_waiting = false;
        if g.handler_gone {
            return false;
        }
        g.items.push_back((n, item));
        g.bytes += n;
        self.news.fetch_add(1, Ordering::Release);
        if g.handler_waiting {
            self.to_handler.notify_one();
        }
        true
    }

    /// Reader: nothing more comes.
    fn end(&self) {
        let mut g = self.lock();
        g.ended = true;
        self.news.fetch_add(1, Ordering::Release);
        if g.handler_waiting {
            self.to_handler.notify_one();
        }
    }

    fn pop(&self, g: &mut Held) -> Option<io::Result<Incoming>> {
        let (n, item) = g.items.pop_front()?;
        g.bytes = g.bytes.saturating_sub(n);
        if g.reader_waiting && g.drained() {
            self.to_reader.notify_one();
        }
        Some(item)
    }
}

/// What the handler takes from the queue.
enum Next {
    Line(io::Result<Incoming>),
    /// Input ended and every line was taken.
    End,
    /// Something else may have news (a [`LoopWaker`] rang): look at the stop
    /// requests and the host.
    Wake,
}

/// The handler's end of the reader thread's queue. Wake-ups from the host
/// and the stop source ([`LoopWaker`]) arrive here too, so that an idle loop
/// waits in [`Lines::recv`] with no timeout.
struct Lines {
    queue: Arc<Queue>,
}

impl Lines {
    /// The next thing the handler should act on, if any: a line first, then
    /// a wake-up, then the end of input.
    fn take(&self, g: &mut Held) -> Option<Next> {
        if let Some(item) = self.queue.pop(g) {
            return Some(Next::Line(item));
        }
        if std::mem::take(&mut g.woken) {
            return Some(Next::Wake);
        }
        g.ended.then_some(Next::End)
    }

    fn try_recv(&self) -> Result<Next, TryRecvError> {
        let mut g = self.queue.lock();
        self.take(&mut g).ok_or(TryRecvError::Empty)
    }

    /// Wait for the next item, at most `wait` (`None`: as long as it takes),
    /// spinning for at most `spin` of that before sleeping (see
    /// [`HANDLER_SPIN`]).
    fn recv(&self, wait: Option<Duration>, spin: Duration) -> Result<Next, RecvTimeoutError> {
        let start = Instant::now();
        let deadline = wait.map(|w| start + w);
        let mut spin_until = (!spin.is_zero()).then(|| start + wait.map_or(spin, |w| w.min(spin)));
        let mut g = self.queue.lock();
        loop {
            if let Some(next) = self.take(&mut g) {
                return Ok(next);
            }
            if let Some(until) = spin_until.take() {
                // News is bumped under the lock: none can slip in between
                // this look and the spin.
                let seen = self.queue.news.load(Ordering::Acquire);
                drop(g);
                while self.queue.news.load(Ordering::Acquire) == seen && Instant::now() < until {
                    std::thread::yield_now();
                }
                g = self.queue.lock();
                continue;
            }
            g.handler_waiting = true;
            g = match deadline {
                None => self.queue.to_handler.wait(g).unwrap_or_else(|e| e.into_inner()),
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        g.handler_waiting = false;
                        return Err(RecvTimeoutError::Timeout);
                    }
                    self.queue.to_handler.wait_timeout(g, deadline - now).unwrap_or_else(|e| e.into_inner()).0
                }
            };
            g.handler_waiting = false;
        }
    }

    /// Something that wakes the loop waiting in [`Lines::recv`]; it never
    /// blocks for longer than the queue's lock.
    fn waker(&self) -> LoopWaker {
        let queue = Arc::clone(&self.queue);
        Arc::new(move || {
            let mut g = queue.lock();
            g.woken = true;
            queue.news.fetch_add(1, Ordering::Release);
            if g.handler_waiting {
                queue.to_handler.notify_one();
            }
        })
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        self.queue.lock().handler_gone = true;
        self.queue.to_reader.notify_all();
    }
}

/// The tool call the handler is serving in this process now (from before
/// its tool runs until its answer is made), for the reader to cancel.
type Current = Arc<Mutex<Option<IdKey>>>;

fn lock_current(c: &Current) -> std::sync::MutexGuard<'_, Option<IdKey>> {
    c.lock().unwrap_or_else(|e| e.into_inner())
}

/// The reader read a cancellation of the call being served in this process:
/// interrupt its tool function, or say why nothing is interrupted.
fn cancel_current(current: &Current, key: &IdKey, canceller: Option<&Canceller>) {
    let Some(cancel) = canceller else { return };
    let serving = lock_current(current);
    if serving.as_ref() != Some(key) {
        return;
    }
    // Under the lock: the handler cannot move on to another call meanwhile.
    if !cancel() {
        diag(
            "mcplite: a tool call was cancelled while the server ran its own R code for it (not the tool's function), or where the function cannot be interrupted; that goes on, and the answer is dropped.",
        );
    }
}

fn spawn_reader<R: BufRead + Send + 'static>(
    input: R,
    cancelled: Cancelled,
    progress: Progress,
    waker: Option<InputWaker>,
    current: Current,
    canceller: Option<Canceller>,
) -> io::Result<Lines> {
    let queue = Arc::new(Queue::default());
    let reader_queue = Arc::clone(&queue);
    std::thread::Builder::new().name("mcplite-stdin".into()).spawn(move || {
        let wake = || {
            if let Some(w) = &waker {
                w()
            }
        };
        let mut reader = LineReader::new(input);
        loop {
            let (n, item) = match reader.next_line() {
                Ok(Some(line)) => (line.len(), Ok(envelope::classify(line.to_vec()))),
                Ok(None) => break,
                Err(e) => (0, Err(e)),
            };
            if let Ok(Incoming::Notification(msg)) = &item {
                if let Some(key) = cancellation_of(msg) {
                    // Nothing more is sent for it from now on, progress included.
                    progress.board().drop_call(&key);
                    lock(&cancelled).insert(key.clone());
                    cancel_current(&current, &key, canceller.as_ref());
                }
            }
            let stop = item.is_err();
            let sent = reader_queue.push(n, item);
            wake();
            if !sent || stop {
                break;
            }
        }
        // The end of input is news too.
        reader_queue.end();
        wake();
    })?;
    Ok(Lines { queue })
}

/// The notification a server whose tools changed sends (no params).
const TOOLS_CHANGED_LINE: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}";

/// A call running on a worker, with its open span.
struct Running {
    pending: Pending,
    span: Span,
}

/// One serving session: everything handling a message touches.
pub struct Session<'a, W: Write, H: ToolHost> {
    /// Shared with the progress thread (see [`crate::progress`]).
    out: &'a Mutex<Output<W>>,
    progress: Progress,
    server: &'a mut Server<H::Fun>,
    host: &'a mut H,
    telemetry: &'a mut Telemetry,
    cancelled: Cancelled,
    /// Calls running (or queued) on workers, by task, and the task of each
    /// request id: each message costs the same however many there are.
    running: HashMap<TaskId, Running>,
    task_of: HashMap<IdKey, TaskId>,
    /// Winding down was cut short: tool calls are answered without running.
    refuse_calls: bool,
    current: Current,
    /// The server's owed calls, where held answers wait ([`HOLD_MAX`]).
    owed: Owed,
    /// Holding answers back: the reader's queue (do more lines wait?) and
    /// the flusher; `None` (as for [`handle_line`]): every answer is
    /// written at once.
    hold: Option<(Arc<Queue>, &'a Flusher)>,
}

impl<'a, W: Write, H: ToolHost> Session<'a, W, H> {
    pub fn new(
        out: &'a Mutex<Output<W>>,
        progress: Progress,
        server: &'a mut Server<H::Fun>,
        host: &'a mut H,
        telemetry: &'a mut Telemetry,
    ) -> Self {
        let owed = server.owed();
        Session {
            out,
            progress,
            server,
            host,
            telemetry,
            cancelled: Arc::new(Mutex::new(HashSet::new())),
            running: HashMap::new(),
            task_of: HashMap::new(),
            refuse_calls: false,
            current: Arc::new(Mutex::new(None)),
            owed,
            hold: None,
        }
    }

    /// More lines wait in the reader's queue: an answer made now may be
    /// held back ([`HOLD_MAX`]).
    fn lines_waiting(&self) -> bool {
        self.hold.as_ref().is_some_and(|(queue, _)| !queue.lock().items.is_empty())
    }

    /// Write the held answers, unless more lines wait (their answers join
    /// them): before the loop waits for anything.
    fn release_held(&mut self) {
        if self.hold.is_none() || self.lines_waiting() || !self.owed.holds() {
            return;
        }
        let mut out = lock_output(self.out);
        self.owed.write_held(|lines| {
            out.write_lines(lines);
        });
    }

    fn output_closed(&self) -> bool {
        lock_output(self.out).closed
    }

    fn write(&mut self, line: Vec<u8>) {
        self.write_answer(None, line);
    }

    /// Write an answer line; for a call (`key`), first the progress value it
    /// still held back, then close it, under the output lock, so nothing for
    /// it follows the answer.
    fn write_answer(&mut self, key: Option<&IdKey>, mut line: Vec<u8>) {
        let waiting = self.lines_waiting();
        let mut out = lock_output(self.out);
        if let Some(mut last_progress) = key.and_then(|k| self.progress.board().close(k)) {
            out.write_line(&mut last_progress);
        }
        if line.is_empty() {
            return;
        }
        if waiting || self.owed.holds() {
            // Held back, or written with the answers held before it.
            let (held, started) = self.owed.hold(&line);
            if waiting && held < HOLD_BYTES {
                if started {
                    if let Some((_, flusher)) = &self.hold {
                        flusher.started();
                    }
                }
            } else {
                self.owed.write_held(|lines| {
                    out.write_lines(lines);
                });
            }
        } else {
            out.write_line(&mut line);
        }
        drop(out);
        self.server.recycle_line(line);
    }

    /// Put a new tool set from the host in the server, and tell the client
    /// (see [`ToolHost::tool_update`]).
    fn update_tools(&mut self, request: bool) {
        let Some(set) = self.host.tool_update(request) else { return };
        match self.server.replace_tools(set) {
            Ok(()) if self.server.announces_tool_changes() => {
                self.write(TOOLS_CHANGED_LINE.to_vec());
            }
            Ok(()) => {}
            Err(e) => diag(&format!("mcplite: the new tool set was not taken: {e}")),
        }
    }

    /// Handle one classified line.
    pub fn process(&mut self, incoming: Incoming) {
        match incoming {
            Incoming::Ignore | Incoming::BadNotification => {}
            Incoming::Reject(id, err) => self.write(envelope::error_line(id.as_ref(), &err)),
            Incoming::Notification(msg) => {
                let span = self.telemetry.begin(&msg);
                if let Some(key) = cancellation_of(&msg) {
                    // In order now: an earlier request with this id was
                    // answered, dropped, or is running on a worker.
                    lock(&self.cancelled).remove(&key);
                    self.progress.board().drop_call(&key);
                    self.cancel_running(&key);
                }
                let facts = Facts { version: self.server.version_hint(&msg), ..Default::default() };
                self.telemetry.end(span, &facts);
            }
            Incoming::Request(msg) => {
                self.update_tools(true);
                let call_key = msg.id.as_ref().filter(|_| msg.method == "tools/call").map(|id| id.key().clone());
                if call_key.as_ref().is_some_and(|k| lock(&self.cancelled).contains(k)) {
                    // Cancelled before it started (the cancellation is
                    // later in the input, already read): it never runs and
                    // gets no answer.
                    let span = self.telemetry.begin(&msg);
                    let facts = Facts { version: self.server.version_hint(&msg), ..Default::default() };
                    self.telemetry.end(span, &facts);
                    return;
                }
                *lock_current(&self.current) = call_key;
                let span = self.telemetry.begin(&msg);
                let traceparent = self.telemetry.traceparent(&span);
                let reply = {
                    let _current = self.telemetry.enter(&span);
                    if self.refuse_calls {
                        handle_guarded(self.server, &msg, &mut Stopped(&mut *self.host), traceparent, &self.progress)
                    } else {
                        handle_guarded(self.server, &msg, self.host, traceparent, &self.progress)
                    }
                };
                *lock_current(&self.current) = None;
                match reply {
                    Reply::Answer(answer) => self.deliver(span, msg.id.as_ref(), answer),
                    Reply::Pending(pending) => {
                        let task = pending.task;
                        self.task_of.insert(pending.id.key().clone(), task);
                        self.running.insert(task, Running { pending, span });
                    }
                }
            }
        }
    }

    /// Stop the running call with this request id, if there is one: nothing
    /// is answered for it.
    fn cancel_running(&mut self, key: &IdKey) {
        self.progress.board().drop_call(key);
        let Some(task) = self.task_of.remove(key) else { return };
        if let Some(r) = self.running.remove(&task) {
            self.host.cancel(task);
            self.telemetry.end(r.span, &Facts { version: Some(r.pending.version), ..Default::default() });
        }
    }

    /// While input waits (the host's queue is full), cancellations the
    /// reader has already seen stop their calls now rather than when they
    /// are reached in order: a client can still free the workers.
    fn cancel_early(&mut self) {
        let keys: Vec<IdKey> = {
            let set = lock(&self.cancelled);
            if set.is_empty() {
                return;
            }
            set.iter().filter(|k| self.task_of.contains_key(*k)).cloned().collect()
        };
        for key in keys {
            self.cancel_running(&key);
        }
    }

    fn take_running(&mut self, task: TaskId) -> Option<Running> {
        let r = self.running.remove(&task)?;
        if self.task_of.get(r.pending.id.key()) == Some(&task) {
            self.task_of.remove(r.pending.id.key());
        }
        Some(r)
    }

    /// Answer a call that finished on a worker, if one has.
    fn poll(&mut self, wait: Duration) -> bool {
        let Some((task, finished)) = self.host.poll(wait) else { return false };
        if let Some(r) = self.take_running(task) {
            let answer = self.server.finish(&r.pending.id, r.pending.version, &r.pending.tool, finished);
            self.deliver(r.span, Some(&r.pending.id), answer);
        }
        true
    }

    /// Record what happened and write the answer, unless the client cancelled
    /// the request meanwhile. A failed tool also gets one line on stderr for
    /// the author (which never fails the answer).
    fn deliver(&mut self, span: Span, id: Option<&RequestId>, answer: Answer) {
        let cancelled = id.is_some_and(|id| lock(&self.cancelled).contains(id.key()));
        // A cancelled call's failure is (most likely) the interrupt the
        // cancellation caused: nothing to tell the author.
        let failure = answer.facts.failure.as_ref().filter(|_| !cancelled);
        if let (Some(tool), Some(message)) = (&answer.facts.tool, failure) {
            let mut lines = message.lines();
            let first = lines.next().unwrap_or("");
            let more = if lines.next().is_some() { " ..." } else { "" };
            diag(&format!("mcplite: tool {tool} failed: {first}{more}"));
        }
        if let (Some(tool), true) = (&answer.facts.tool, answer.facts.zeroed_number) {
            if let Some(line) = self.server.zeroed_note(tool) {
                diag(&line);
            }
        }
        self.telemetry.end(span, &answer.facts);
        let owed = self.server.owed();
        let settle = |id: Option<&RequestId>| {
            if let (Some(id), Some(_)) = (id, &answer.facts.tool) {
                owed.settle(id);
            }
        };
        if let Some(id) = id.filter(|_| cancelled) {
            self.progress.board().drop_call(id.key());
            settle(Some(id));
            return;
        }
        settle(id);
        self.write_answer(id.map(RequestId::key), answer.line);
    }

    /// Stop waiting for calls still running (winding down took too long or
    /// was cut short): each gets the tool error saying the server stopped.
    fn abandon_running(&mut self) {
        self.task_of.clear();
        for (_, r) in std::mem::take(&mut self.running) {
            self.host.cancel(r.pending.task);
            let failed = Finished::<H::Value>::Failed(stopped_message(&r.pending.tool, true));
            let answer = self.server.finish(&r.pending.id, r.pending.version, &r.pending.tool, failed);
            self.deliver(r.span, Some(&r.pending.id), answer);
        }
    }
}

/// Where serving is: reading, or winding down (no more input is read) since
/// `since` for `why`, cut short by a request to terminate beyond the
/// `terminate` requests there were when it began.
#[derive(Clone, Copy)]
enum Phase {
    Reading,
    WindingDown { why: Ending, since: Instant, terminate: u32, announced: bool },
}

impl Phase {
    fn winding_down(why: Ending, requests: StopRequests) -> Phase {
        Phase::WindingDown { why, since: Instant::now(), terminate: requests.terminate, announced: false }
    }
}

/// Said once when serving ends with calls still running: why the process
/// has not exited yet, in the client's log.
fn waiting_line(running: usize) -> String {
    let calls = if running == 1 { "call" } else { "calls" };
    format!(
        "mcplite: stopping; waiting up to {} s for {running} running tool {calls} to finish (a request to terminate, such as SIGTERM, ends the wait).",
        END_GRACE.as_secs()
    )
}

/// Serve until end of input (or until the output closes or the host stops).
/// `stops` counts the requests to stop since serving began (a plain
/// `Fn() -> StopRequests` will do; one that can wake serving lets an idle
/// server wait with no timeout).
pub fn serve<R, W, H>(
    input: R,
    output: &mut W,
    server: &mut Server<H::Fun>,
    host: &mut H,
    stops: &dyn StopSource,
    telemetry: &mut Telemetry,
) -> io::Result<Ending>
where
    R: BufRead + Send + 'static,
    W: Write + Send,
    H: ToolHost,
{
    let out = Mutex::new(Output { writer: output, closed: false });
    let progress = Progress::default();
    let flusher = Flusher::default();
    let owed = server.owed();
    std::thread::scope(|scope| {
        let sender = std::thread::Builder::new()
            .name("mcplite-progress".into())
            .spawn_scoped(scope, || crate::progress::run_sender(&progress, &out))?;
        let flushing = std::thread::Builder::new()
            .name("mcplite-flush".into())
            .spawn_scoped(scope, || run_flusher(&flusher, &out, &owed));
        let flushing = match flushing {
            Ok(thread) => thread,
            Err(e) => {
                progress.stop();
                let _ = sender.join();
                return Err(e);
            }
        };
        let session = Session::new(&out, progress.clone(), server, host, telemetry);
        let ending = serve_session(input, &flusher, session, stops);
        // What is still held is written before serving returns.
        flusher.stop();
        let _ = flushing.join();
        progress.stop();
        let _ = sender.join();
        ending
    })
}

fn serve_session<'a, R, W, H>(
    input: R,
    flusher: &'a Flusher,
    mut s: Session<'a, W, H>,
    stops: &dyn StopSource,
) -> io::Result<Ending>
where
    R: BufRead + Send + 'static,
    W: Write,
    H: ToolHost,
{
    let waker = s.host.input_waker();
    let canceller = s.host.canceller();
    let rx = spawn_reader(input, s.cancelled.clone(), s.progress.clone(), waker, s.current.clone(), canceller)?;
    s.hold = Some((Arc::clone(&rx.queue), flusher));
    // Waiting with no timeout needs every input to wake the loop: lines
    // (the reader), the host's news (it calls the waker if it has any from
    // elsewhere) and stop requests (the watch, kept while serving).
    s.host.loop_waker(rx.waker());
    let watch = stops.watch(rx.waker());
    let idle_wait = if watch.is_some() { None } else { Some(IDLE_TICK) };
    let stop_requests = || stops.requests();
    let mut phase = Phase::Reading;
    let mut look = WORKER_LOOK_MIN;
    // The last turn of the loop served a line from the idle wait.
    let mut served_line = false;
    loop {
        // Nothing the loop waits for below holds an answer back.
        s.release_held();
        if s.output_closed() {
            return Ok(Ending::OutputClosed);
        }
        s.update_tools(false);
        let requests = stop_requests();
        if let Phase::WindingDown { why, since, terminate, announced } = phase {
            // Calls still running finish and are answered, within a bound.
            if s.running.is_empty() {
                return Ok(why);
            }
            if requests.terminate > terminate || since.elapsed() > END_GRACE {
                s.abandon_running();
                return Ok(why);
            }
            if !announced {
                diag(&waiting_line(s.running.len()));
                phase = Phase::WindingDown { why, since, terminate, announced: true };
            }
            s.poll(Duration::from_millis(20));
            continue;
        }
        if requests.any > 0 {
            // Asked to stop: read no more, but answer every line the reader
            // has already queued as at end of input (in order; tool calls
            // run while the grace lasts and no request to terminate came).
            phase = Phase::winding_down(Ending::Stopped, requests);
            let Phase::WindingDown { since, .. } = phase else { continue };
            while let Ok(next) = rx.try_recv() {
                let item = match next {
                    Next::Line(Ok(item)) => item,
                    Next::Wake => continue,
                    Next::Line(Err(_)) | Next::End => break,
                };
                s.refuse_calls = stop_requests().terminate > requests.terminate || since.elapsed() > END_GRACE;
                s.process(item);
            }
            continue;
        }
        // Work on workers to watch: calls running or queued there, or the
        // host's own timers (a cancelled call's grace).
        let watching = !s.running.is_empty() || s.host.has_timers();
        if !s.host.accepts_calls() {
            // The host's queue is full: read nothing more until a call ends
            // (the reader thread stops once its channel is full, then the
            // client's pipe fills). Cancellations already read still count.
            s.cancel_early();
            let wait = if s.host.wakes_on_input() { IDLE_TICK } else { look };
            if s.poll(wait) {
                look = WORKER_LOOK_MIN;
            } else {
                look = (look * 2).min(WORKER_LOOK_MAX);
            }
            continue;
        }
        if watching && s.host.wakes_on_input() {
            // The host's wait ends when a call finishes or the reader has
            // news, so serving waits there (bounded, to look at stop
            // requests) rather than here.
            match rx.try_recv() {
                Ok(Next::Line(item)) => {
                    s.process(item?);
                    // One answer that is ready per line read, so a flood of
                    // input cannot hold answers back.
                    s.poll(Duration::ZERO);
                }
                Ok(Next::Wake) => {}
                Err(TryRecvError::Empty) => {
                    s.poll(IDLE_TICK);
                }
                Ok(Next::End) | Err(TryRecvError::Disconnected) => {
                    phase = Phase::winding_down(Ending::EndOfInput, requests)
                }
            }
            continue;
        }
        // Answers that are ready go first.
        if watching && s.poll(Duration::ZERO) {
            look = WORKER_LOOK_MIN;
            continue;
        }
        // Idle: wait for the next line or wake-up, with no timeout when
        // every input can wake the loop; right after serving a line (calls
        // here, none watched), first spin a little for the next one.
        let wait = if watching { Some(look) } else { idle_wait };
        let spin = if served_line && !watching { HANDLER_SPIN } else { Duration::ZERO };
        served_line = false;
        match rx.recv(wait, spin) {
            Ok(Next::Line(item)) => {
                s.process(item?);
                look = WORKER_LOOK_MIN;
                served_line = true;
            }
            Ok(Next::Wake) => {}
            Err(RecvTimeoutError::Timeout) => {
                if watching {
                    look = (look * 2).min(WORKER_LOOK_MAX);
                }
            }
            Ok(Next::End) | Err(RecvTimeoutError::Disconnected) => {
                phase = Phase::winding_down(Ending::EndOfInput, requests)
            }
        }
    }
}

/// Handle one line as the service would and return what it wrote (for
/// tests and fuzzing: no reader thread, no workers).
pub fn handle_line<H: ToolHost>(
    server: &mut Server<H::Fun>,
    host: &mut H,
    telemetry: &mut Telemetry,
    line: &[u8],
) -> Vec<u8> {
    let out = Mutex::new(Output { writer: Vec::new(), closed: false });
    let mut s = Session::new(&out, Progress::default(), server, host, telemetry);
    s.process(envelope::classify(line.to_vec()));
    drop(s);
    out.into_inner().unwrap_or_else(|e| e.into_inner()).writer
}

/// Handle one request; a bug that panics still gives the request its one
/// answer (-32603) and leaves the server running. A tool call the panic
/// left owed an answer (dispatch owes it before the tool runs) is settled:
/// the -32603 is its answer, so an exit hook must not write another.
fn handle_guarded<H: ToolHost>(
    server: &mut Server<H::Fun>,
    msg: &Message,
    host: &mut H,
    traceparent: Option<String>,
    progress: &Progress,
) -> Reply {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    let owed = server.owed();
    let owed_before = msg.id.as_ref().map_or(0, |id| owed.count(id));
    match catch_unwind(AssertUnwindSafe(|| server.handle(msg, host, traceparent, progress))) {
        Ok(reply) => reply,
        Err(_) => match &msg.id {
            Some(id) => {
                if owed.count(id) > owed_before {
                    owed.settle(id);
                }
                Reply::Answer(Server::<H::Fun>::internal_error(id))
            }
            None => Reply::Answer(Answer::default()),
        },
    }
}
