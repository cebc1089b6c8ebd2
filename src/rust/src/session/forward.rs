//! The server side (`mcp_session_server()`): a `ToolHost` whose calls run in
//! a live R session over its link, like `WorkerHost` for workers. Which
//! session: the one named (argument or `MCPLITE_SESSION`), else the one
//! whose working directory is the server's, else the only one. Without one
//! it serves tools of its own that say how to attach or choose.

use super::{Message, Op, Registration, MAX_LINE, MAX_REGISTRATION};
use crate::host::RFun;
use crate::platform::{self, SessionStream};
use crate::progress::offer_progress;
use crate::sexp::Sx;
use extendr_api::prelude::*;
use mcplite_core::dispatch::{CallContext, Finished, InputWaker, LoopWaker, Started, TaskId, ToolSet};
use mcplite_core::json::Val;
use mcplite_core::progress::{read_relay_line, Report, Reporter};
use mcplite_core::r::{field, number1, string1, Formals};
use mcplite_core::result::{CallResult, Text, ToolDef};
use mcplite_core::version::VERSIONS;
use mcplite_core::{Tool, ToolHost};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a call waits for a busy session (its console runs the user's
/// own command) before it gets a tool error, unless the user sets
/// `MCPLITE_SESSION_BUSY_WAIT` or `options(mcplite.session.busy_wait)`.
pub const DEFAULT_BUSY_WAIT_SECS: f64 = 120.0;
/// How often a waiting call with a progress token hears that it waits.
const WAIT_REPORT_EVERY: Duration = Duration::from_secs(1);
/// How long attaching may take (hello and list answered).
const ATTACH_WAIT: Duration = Duration::from_secs(5);

/// The server's own tools.
const STATUS_TOOL: &str = "session_status";
const LIST_TOOL: &str = "session_list";
const CHOOSE_TOOL: &str = "session_choose";
/// Called for any other name while no session is attached (never listed).
const FALLBACK_TOOL: &str = "session_unattached";

/// The R command that makes a session reachable.
const ATTACH_HINT: &str =
    "In the R console, run mcplite::mcp_session(tools) with the tools to serve (see ?mcplite::mcp_session).";

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// News from a link's reader thread, or input (to end a wait).
enum Event {
    Message(u64, Box<Message>),
    Closed(u64),
    Wake,
}

/// The session this server forwards to.
struct Link {
    generation: u64,
    writer: SessionStream,
    name: String,
    pid: u32,
}

/// A call sent to the session.
struct Sent {
    tool: String,
    since: Instant,
    started: bool,
    reporter: Option<Reporter>,
    last_report: Instant,
}

/// What the server serves when no session is attached.
#[derive(Clone, Debug, PartialEq)]
enum Unattached {
    /// None found (or none with the pinned name).
    NoSession,
    /// Several, and nothing chose one.
    Several(Vec<Registration>),
}

pub struct SessionHost {
    dir: Result<PathBuf, String>,
    pinned: Option<String>,
    busy_wait: Duration,
    link: Option<Link>,
    generation: u64,
    unattached: Option<Unattached>,
    tx: Sender<Event>,
    rx: Receiver<Event>,
    /// Progress reporters by call, shared with the reader threads.
    reporters: Arc<Mutex<HashMap<TaskId, (Reporter, String)>>>,
    sent: HashMap<TaskId, Sent>,
    done: VecDeque<(TaskId, Finished<Sx>)>,
    next: TaskId,
    /// A tool set for serving to take (see `ToolHost::tool_update`).
    update: Option<ToolSet<RFun>>,
    /// Wakes serving when the link has news (see `ToolHost::loop_waker`):
    /// an idle server waits with no timeout, and the session's tool changes
    /// and its end must still reach the client at once.
    loop_waker: Option<LoopWaker>,
}

impl SessionHost {
    /// `settings`: `list(name, busy_wait)` from R/session.R.
    pub fn new(settings: &Robj) -> Result<SessionHost, String> {
        let sx = Sx::borrowed(settings);
        let pinned = field(&sx, "name").and_then(|n| string1(&n)).filter(|n| !n.is_empty());
        let busy = field(&sx, "busy_wait").and_then(|b| number1(&b)).unwrap_or(DEFAULT_BUSY_WAIT_SECS);
        let busy_wait = Duration::try_from_secs_f64(busy.max(0.0)).unwrap_or(Duration::from_secs(120));
        let (tx, rx) = mpsc::channel();
        Ok(SessionHost {
            dir: platform::session_dir().map_err(|e| e.to_string()),
            pinned,
            busy_wait,
            link: None,
            generation: 0,
            unattached: None,
            tx,
            rx,
            reporters: Arc::new(Mutex::new(HashMap::new())),
            sent: HashMap::new(),
            done: VecDeque::new(),
            next: 0,
            update: None,
            loop_waker: None,
        })
    }

    /// This user's sessions that registered, newest first.
    fn registrations(&self) -> Vec<Registration> {
        let Ok(dir) = &self.dir else { return Vec::new() };
        let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
        let mut out: Vec<Registration> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .filter_map(|p| {
                let bytes = platform::read_private_file(&p, MAX_REGISTRATION).ok()?;
                serde_json::from_slice::<Registration>(&bytes).ok()
            })
            .collect();
        out.sort_by_key(|r| std::cmp::Reverse(r.pid));
        out
    }

    /// Look for a session to attach to (on a request, while none is).
    fn attach(&mut self) {
        let all = self.registrations();
        let cwd = std::env::current_dir().ok().map(|d| canonical(&d));
        let candidates: Vec<Registration> = match &self.pinned {
            Some(name) => all.iter().filter(|r| &r.name == name).cloned().collect(),
            None => {
                let here: Vec<Registration> =
                    all.iter().filter(|r| cwd.as_ref() == Some(&canonical(Path::new(&r.cwd)))).cloned().collect();
                if here.is_empty() {
                    all.clone()
                } else {
                    here
                }
            }
        };
        let several_choice = self.pinned.is_none() && candidates.len() > 1;
        let mut reachable = Vec::new();
        for r in candidates {
            if several_choice {
                // Only those that answer count.
                if self.connect(&r).is_ok() {
                    reachable.push(r);
                }
                continue;
            }
            if let Ok((link, tools)) = self.connect(&r) {
                self.adopt(link, tools);
                return;
            }
        }
        if reachable.len() == 1 {
            if let Ok((link, tools)) = self.connect(&reachable[0]) {
                self.adopt(link, tools);
                return;
            }
        }
        let state = if reachable.len() > 1 { Unattached::Several(reachable) } else { Unattached::NoSession };
        if self.unattached.as_ref() != Some(&state) {
            self.update = Some(own_tools(&state));
            self.unattached = Some(state);
        }
    }

    /// Connect, say hello, get the tools.
    fn connect(&mut self, r: &Registration) -> Result<(Link, ToolSet<RFun>), String> {
        let stream = platform::connect_at(Path::new(&r.socket), r.token.as_bytes()).map_err(|e| e.to_string())?;
        stream.set_read_timeout(Some(ATTACH_WAIT)).map_err(|e| e.to_string())?;
        let mut w = &stream;
        w.write_all(&Message::new(Op::Hello).line()).map_err(|e| e.to_string())?;
        w.write_all(&Message::new(Op::List).line()).map_err(|e| e.to_string())?;
        let mut reader = BufReader::new(&stream);
        let hello = read_message(&mut reader).ok_or("the session did not answer")?;
        let list = read_message(&mut reader).ok_or("the session did not list its tools")?;
        drop(reader);
        if hello.op != Op::Hello || list.op != Op::List {
            return Err("the session answered out of order".into());
        }
        stream.set_read_timeout(None).map_err(|e| e.to_string())?;
        let tools = session_tools(&list)?;
        self.generation += 1;
        let link = Link {
            generation: self.generation,
            writer: stream,
            name: hello.name.unwrap_or_else(|| r.name.clone()),
            pid: hello.pid.unwrap_or(r.pid),
        };
        Ok((link, tools))
    }

    fn adopt(&mut self, link: Link, tools: ToolSet<RFun>) {
        let Ok(reading) = link.writer.try_clone() else { return };
        let (tx, generation, reporters) = (self.tx.clone(), link.generation, self.reporters.clone());
        let wake = self.loop_waker.clone();
        let spawned = std::thread::Builder::new()
            .name("mcplite-session-reader".into())
            .spawn(move || read_link(reading, generation, &tx, &reporters, wake.as_deref()));
        if spawned.is_err() {
            return;
        }
        self.link = Some(link);
        self.unattached = None;
        self.update = Some(tools);
    }

    fn send(&self, msg: &Message) -> bool {
        match &self.link {
            Some(link) => (&link.writer).write_all(&msg.line()).is_ok(),
            None => false,
        }
    }

    /// Handle news from the link.
    fn on_event(&mut self, event: Event) {
        match event {
            Event::Wake => {}
            Event::Closed(generation) => {
                if self.link.as_ref().map(|l| l.generation) != Some(generation) {
                    return;
                }
                let name = self.link.take().map(|l| l.name).unwrap_or_default();
                for (task, sent) in std::mem::take(&mut self.sent) {
                    lock(&self.reporters).remove(&task);
                    let message = format!(
                        "The R session \"{name}\" ended (or stopped serving) before tool {} finished. {ATTACH_HINT}",
                        sent.tool
                    );
                    self.done.push_back((task, Finished::Failed(message)));
                }
                let state = Unattached::NoSession;
                self.update = Some(own_tools(&state));
                self.unattached = Some(state);
            }
            Event::Message(generation, msg) => {
                if self.link.as_ref().map(|l| l.generation) != Some(generation) {
                    return;
                }
                match msg.op {
                    Op::Started => {
                        if let Some(sent) = msg.call.and_then(|c| self.sent.get_mut(&c)) {
                            sent.started = true;
                        }
                    }
                    Op::Answer => {
                        let Some(call) = msg.call else { return };
                        if self.sent.remove(&call).is_some() {
                            lock(&self.reporters).remove(&call);
                            let finished = match msg.result {
                                Some(result) => Finished::Forwarded {
                                    result: result.get().as_bytes().to_vec(),
                                    is_error: msg.is_error == Some(true),
                                    failure: None,
                                    zeroed: false,
                                },
                                None => Finished::Failed("The R session sent an answer without a result.".into()),
                            };
                            self.done.push_back((call, finished));
                        }
                    }
                    Op::Changed => {
                        self.send(&Message::new(Op::List));
                    }
                    Op::List => {
                        if let Ok(tools) = session_tools(&msg) {
                            self.update = Some(tools);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// Calls waiting too long for a busy session get the busy error; those
    /// with a progress token hear that they wait.
    fn watch_waiting(&mut self) {
        let now = Instant::now();
        let mut expired = Vec::new();
        for (task, sent) in self.sent.iter_mut().filter(|(_, s)| !s.started) {
            let waited = now.duration_since(sent.since);
            if waited >= self.busy_wait {
                expired.push(*task);
            } else if now.duration_since(sent.last_report) >= WAIT_REPORT_EVERY {
                sent.last_report = now;
                if let Some(reporter) = &sent.reporter {
                    let report = Report {
                        progress: waited.as_secs_f64().floor().max(1.0),
                        total: Some(self.busy_wait.as_secs_f64().ceil()),
                        message: Some("Waiting for the R session: its console is busy.".into()),
                    };
                    offer_progress(reporter, &sent.tool, report);
                }
            }
        }
        for task in expired {
            let Some(sent) = self.sent.remove(&task) else { continue };
            lock(&self.reporters).remove(&task);
            let mut cancel = Message::new(Op::Cancel);
            cancel.call = Some(task);
            self.send(&cancel);
            let name = self.link.as_ref().map(|l| l.name.clone()).unwrap_or_default();
            let message = format!(
                "The R session \"{name}\" is busy: its console ran other code for {} s, so tool {} did not run. Try again when the console is idle (the wait is set by MCPLITE_SESSION_BUSY_WAIT or options(mcplite.session.busy_wait)).",
                self.busy_wait.as_secs_f64(),
                sent.tool
            );
            self.done.push_back((task, Finished::Failed(message)));
        }
    }

    /// The server's own tools: what they answer.
    fn own_call(&mut self, name: &str, arguments: Option<Val<'_>>) -> Finished<Sx> {
        let text = |s: String| Finished::Made(Box::new(CallResult::text(Text::Owned(s))));
        match name {
            STATUS_TOOL => text(match &self.link {
                Some(l) => format!("Attached to the R session \"{}\" (process {}).", l.name, l.pid),
                None => format!("No live R session is reachable. {ATTACH_HINT}"),
            }),
            LIST_TOOL => {
                let all = self.registrations();
                if all.is_empty() {
                    return text(format!("No live R session is registered. {ATTACH_HINT}"));
                }
                let lines: Vec<String> = all
                    .iter()
                    .map(|r| format!("- {} (process {}, working directory {})", r.name, r.pid, r.cwd))
                    .collect();
                text(format!("Live R sessions:\n{}\nChoose one with {CHOOSE_TOOL}.", lines.join("\n")))
            }
            CHOOSE_TOOL => {
                let chosen = arguments.and_then(|a| a.get("name")).and_then(|n| n.as_str().map(str::to_string));
                let Some(chosen) = chosen else {
                    return Finished::Failed(format!("{CHOOSE_TOOL} needs the session's name (see {LIST_TOOL})."));
                };
                self.pinned = Some(chosen.clone());
                self.link = None;
                self.attach();
                match &self.link {
                    Some(l) => text(format!("Attached to the R session \"{}\"; its tools are listed now.", l.name)),
                    None => {
                        Finished::Failed(format!("No reachable R session is named \"{chosen}\" (see {LIST_TOOL})."))
                    }
                }
            }
            _ => Finished::Failed(self.unattached_message()),
        }
    }

    fn unattached_message(&self) -> String {
        match (&self.unattached, &self.pinned) {
            (Some(Unattached::Several(_)), _) => format!(
                "Several live R sessions are reachable; choose one with {CHOOSE_TOOL} (see {LIST_TOOL}), or pin one with MCPLITE_SESSION=<name> in the server's environment."
            ),
            (_, Some(name)) => format!("No live R session named \"{name}\" is reachable. {ATTACH_HINT}"),
            _ => format!("No live R session is reachable. {ATTACH_HINT}"),
        }
    }
}

impl ToolHost for SessionHost {
    type Fun = RFun;
    type Value = Sx;

    fn call(&mut self, tool: &Tool<RFun>, arguments: Option<Val<'_>>, cx: CallContext) -> Started<Sx> {
        let name = tool.def.name.as_str();
        if self.link.is_none() {
            return Started::Done(self.own_call(name, arguments));
        }
        self.next += 1;
        let task = self.next;
        let mut call = Message::new(Op::Call);
        call.call = Some(task);
        call.version = Some(VERSIONS[cx.version].id.to_string());
        call.tool = Some(name.to_string());
        call.arguments =
            arguments.and_then(|a| RawValue::from_string(String::from_utf8_lossy(a.raw()).into_owned()).ok());
        call.progress = Some(cx.progress.is_some());
        call.client = cx.client;
        if let Some(reporter) = &cx.progress {
            lock(&self.reporters).insert(task, (reporter.clone(), name.to_string()));
        }
        if !self.send(&call) {
            lock(&self.reporters).remove(&task);
            let name_s = self.link.as_ref().map(|l| l.name.clone()).unwrap_or_default();
            return Started::Done(Finished::Failed(format!(
                "The R session \"{name_s}\" cannot be reached any more. {ATTACH_HINT}"
            )));
        }
        let now = Instant::now();
        self.sent.insert(
            task,
            Sent { tool: name.to_string(), since: now, started: false, reporter: cx.progress, last_report: now },
        );
        Started::Running(task)
    }

    fn poll(&mut self, wait: Duration) -> Option<(TaskId, Finished<Sx>)> {
        while let Ok(event) = self.rx.try_recv() {
            self.on_event(event);
        }
        self.watch_waiting();
        if let Some(done) = self.done.pop_front() {
            return Some(done);
        }
        let wait = wait.min(WAIT_REPORT_EVERY);
        match self.rx.recv_timeout(wait) {
            Ok(event) => self.on_event(event),
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {}
        }
        self.watch_waiting();
        self.done.pop_front()
    }

    fn cancel(&mut self, task: TaskId) {
        lock(&self.reporters).remove(&task);
        if self.sent.remove(&task).is_some() {
            let mut cancel = Message::new(Op::Cancel);
            cancel.call = Some(task);
            self.send(&cancel);
        }
    }

    fn input_waker(&mut self) -> Option<InputWaker> {
        let tx = Mutex::new(self.tx.clone());
        Some(Box::new(move || {
            let _ = lock(&tx).send(Event::Wake);
        }))
    }

    fn wakes_on_input(&self) -> bool {
        true
    }

    fn loop_waker(&mut self, waker: LoopWaker) {
        self.loop_waker = Some(waker);
    }

    fn has_timers(&self) -> bool {
        !self.sent.is_empty() || !self.done.is_empty()
    }

    fn tool_update(&mut self, request: bool) -> Option<ToolSet<RFun>> {
        while let Ok(event) = self.rx.try_recv() {
            self.on_event(event);
        }
        if request && self.link.is_none() {
            self.attach();
        }
        self.update.take()
    }
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn read_message<R: BufRead>(reader: &mut R) -> Option<Message> {
    let mut line = Vec::new();
    reader.take(MAX_LINE + 1).read_until(b'\n', &mut line).ok()?;
    if line.pop() != Some(b'\n') {
        return None;
    }
    serde_json::from_slice(&line).ok()
}

/// Read a session's lines until it closes: progress goes to the call's
/// reporter at once (before its answer, which follows on the same stream),
/// the rest to the serving thread.
fn read_link(
    stream: SessionStream,
    generation: u64,
    tx: &Sender<Event>,
    reporters: &Mutex<HashMap<TaskId, (Reporter, String)>>,
    wake: Option<&(dyn Fn() + Send + Sync)>,
) {
    // Serving looks at the link's news when woken (it waits with no
    // timeout while idle).
    let wake = || {
        if let Some(wake) = wake {
            wake();
        }
    };
    // The serving thread gone (it stopped): nothing to tell.
    let mut serving = true;
    crate::lines::read_lines(&stream, MAX_LINE, |line| {
        if let Ok(msg) = serde_json::from_slice::<Message>(line) {
            serving = tx.send(Event::Message(generation, Box::new(msg))).is_ok();
            wake();
            return serving;
        }
        if let Some((task, Some(report))) = read_relay_line(line) {
            let target = lock(reporters).get(&task).cloned();
            if let Some((reporter, tool)) = target {
                offer_progress(&reporter, &tool, report);
            }
        }
        true
    });
    if serving {
        let _ = tx.send(Event::Closed(generation));
        wake();
    }
}

fn placeholder(name: &str) -> Tool<RFun> {
    let def = ToolDef {
        name: name.to_string(),
        description: None,
        title: None,
        input_schema: Map::new(),
        output_schema: None,
        annotations: None,
        meta: None,
    };
    Tool { def, formals: Formals::unknown(), fun: RFun(crate::ffi::Kept::null()) }
}

/// The session's tools, as its `list` answer wrote them.
fn session_tools(list: &Message) -> Result<ToolSet<RFun>, String> {
    let names = list.names.clone().unwrap_or_default();
    let given = list.lists.as_ref().ok_or("the session listed no tools")?;
    let mut lists = Vec::with_capacity(VERSIONS.len());
    for v in VERSIONS.iter() {
        let raw = given.iter().find(|(id, _)| id == v.id).map(|(_, t)| t.clone());
        lists.push(match raw {
            Some(t) => t,
            None => RawValue::from_string("[]".into()).map_err(|e| e.to_string())?,
        });
    }
    Ok(ToolSet { tools: names.iter().map(|n| placeholder(n)).collect(), lists: Some(lists), fallback: None })
}

fn own_tool(name: &str, description: &str, properties: Value, required: &[&str]) -> Tool<RFun> {
    let mut tool = placeholder(name);
    tool.def.description = Some(description.to_string());
    let schema = json!({"type": "object", "properties": properties, "required": required});
    if let Value::Object(map) = schema {
        tool.def.input_schema = map;
    }
    tool
}

/// The server's own tools while no session is attached.
fn own_tools(state: &Unattached) -> ToolSet<RFun> {
    let status = || {
        own_tool(
            STATUS_TOOL,
            "Say whether a live R session is attached, and how to make one reachable (run mcplite::mcp_session(tools) in R).",
            json!({}),
            &[],
        )
    };
    let tools = match state {
        Unattached::NoSession => vec![status()],
        Unattached::Several(_) => vec![
            own_tool(
                LIST_TOOL,
                "List the live R sessions this server can reach (name, process, working directory).",
                json!({}),
                &[],
            ),
            own_tool(
                CHOOSE_TOOL,
                "Attach to the live R session with this name; its tools are listed then.",
                json!({"name": {"type": "string", "description": "The session's name, as session_list shows it."}}),
                &["name"],
            ),
        ],
    };
    ToolSet { tools, lists: None, fallback: Some(placeholder(FALLBACK_TOOL)) }
}
