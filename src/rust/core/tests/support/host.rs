//! A tool host for the core's tests: R values are modelled with
//! `rjson::testvalue`, tools are named by what they do, and tools whose name
//! starts with `later` run "on a worker": they finish after a number of polls.
#![allow(dead_code)]

use mcplite_core::dispatch::{CallContext, Finished, Started, StopRequests, TaskId};
use mcplite_core::json::Val;
use mcplite_core::r::Formals;
use mcplite_core::result::ToolDef;
use mcplite_core::rjson::testvalue::*;
use mcplite_core::{Tool, ToolHost};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub fn block(kind: &str, fields: Vec<(&str, TV)>) -> TV {
    let mut all = vec![(Some("type"), s(kind))];
    all.extend(fields.into_iter().map(|(k, v)| (Some(k), v)));
    named(all).class(&[&format!("mcplite_content_{kind}"), "mcplite_content"])
}

pub fn tool_result(fields: Vec<(&str, TV)>) -> TV {
    named(fields.into_iter().map(|(k, v)| (Some(k), v)).collect()).class(&["mcplite_tool_result"])
}

/// What each test tool returns.
pub fn returns(kind: &str, args: Option<Val<'_>>) -> Finished<TV> {
    let raw = args.map(|a| a.raw_str().to_string()).unwrap_or_else(|| "{}".into());
    Finished::Returned(match kind {
        "echo" | "text" => s(&raw),
        "fail" | "error" => return Finished::Failed("boom".into()),
        "speak" | "audio" => tool_result(vec![(
            "content",
            list(vec![block("audio", vec![("data", s("AA==")), ("mime_type", s("audio/wav"))])]),
        )]),
        "link" => tool_result(vec![
            (
                "content",
                list(vec![block(
                    "resource_link",
                    vec![
                        ("uri", s("file:///x")),
                        ("name", s("x")),
                        ("meta", named(vec![(Some("a"), int(&[1]))])),
                        (
                            "annotations",
                            named(vec![
                                (Some("audience"), s("user")),
                                (Some("last_modified"), s("2025-01-01T00:00:00Z")),
                            ]),
                        ),
                    ],
                )]),
            ),
            ("meta", named(vec![(Some("k"), s("v"))])),
        ]),
        "rows" => tool_result(vec![
            ("content", list(vec![block("text", vec![("text", s("[{\"a\":1}]"))])])),
            ("structured_json", s("[{\"a\":1}]")),
        ]),
        "bare_rows" => tool_result(vec![("content", list(vec![])), ("structured_json", s("[{\"a\":1},{\"a\":null}]"))]),
        "object" => tool_result(vec![
            ("content", list(vec![block("text", vec![("text", s("{\"ok\":true}"))])])),
            ("structured_json", s("{\"ok\":true}")),
        ]),
        "tampered" => tool_result(vec![("structured_json", s("1}\n{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}"))]),
        "frame" => df(vec![("x", int(&[1, 2])), ("y", chr(&[Some("a"), None]))], 2),
        _ => tool_result(vec![(
            "content",
            list(vec![block(
                "resource",
                vec![
                    ("uri", s("u")),
                    ("text", s("t")),
                    ("meta", named(vec![(Some("b"), int(&[2]))])),
                    (
                        "annotations",
                        named(vec![
                            (Some("priority"), dbl(&[0.5])),
                            (Some("last_modified"), s("2025-01-01T00:00:00Z")),
                        ]),
                    ),
                ],
            )]),
        )]),
    })
}

#[derive(Default)]
pub struct TestHost {
    pub calls: usize,
    /// Calls running "on workers": (task, polls still needed, result).
    pub running: Vec<(TaskId, usize, Finished<TV>)>,
    pub cancelled: Vec<TaskId>,
    pub traceparents: Vec<Option<String>>,
    /// How many times `poll` was called.
    pub polls: usize,
    /// Calls that finish at a point in time instead: (task, when, result).
    pub timed: Vec<(TaskId, std::time::Instant, Finished<TV>)>,
    /// Stop requests made by calls of the tool `stop` (a SIGINT arriving
    /// while a tool runs) and `terminate` (a SIGTERM), and once the server
    /// has waited on the host a given number of times ([`Signals::after_waits`]);
    /// serving reads them through [`Signals::requests`].
    pub signals: Signals,
    /// How many of the polls had a non-zero wait (with this host, only while
    /// serving winds down).
    pub waits: usize,
    /// Raised by [`Watched`] input once it has been read to its end.
    pub input_drained: Option<Arc<AtomicBool>>,
    /// Told the task of each call that finishes (a barrier for tests).
    pub finished: Option<std::sync::mpsc::Sender<TaskId>>,
    /// How many times serving looked at the host for news while it had
    /// nothing to do for it (`tool_update(false)`), shared with tests that
    /// watch an idle server.
    pub idle_looks: Arc<std::sync::atomic::AtomicUsize>,
    next: TaskId,
}

/// Stop requests, shared by the test host (which makes some) and serving
/// (which reads them, as its input of their own).
#[derive(Clone, Default)]
pub struct Signals(Arc<Mutex<SignalState>>);

#[derive(Default)]
struct SignalState {
    /// Made by calls.
    made: StopRequests,
    /// Made once the server has waited on the host this many times.
    after_waits: Vec<(usize, bool)>,
    /// How many times it has (kept by the host's `poll`).
    waits: usize,
}

impl Signals {
    /// Signals once the server has waited on the host (a `poll` with a
    /// non-zero wait) this many times (`true`: a request to terminate). A
    /// count of waits, not a moment: the order is the same on a busy machine.
    pub fn after_waits(&self, signals: Vec<(usize, bool)>) {
        self.0.lock().unwrap().after_waits = signals;
    }

    fn waited(&self) {
        self.0.lock().unwrap().waits += 1;
    }

    fn request(&self, terminate: bool) {
        let made = &mut self.0.lock().unwrap().made;
        made.any += 1;
        made.terminate += u32::from(terminate);
    }

    /// The requests made so far.
    pub fn requests(&self) -> StopRequests {
        let state = self.0.lock().unwrap();
        let mut requests = state.made;
        for (_, terminate) in state.after_waits.iter().filter(|(after, _)| *after <= state.waits) {
            requests.any += 1;
            requests.terminate += u32::from(*terminate);
        }
        requests
    }
}

/// Input that raises a flag once it has been read to its end: by then the
/// server's reader has taken every line out of it (cancellations included).
pub struct Watched<R> {
    inner: R,
    drained: Arc<AtomicBool>,
}

impl<R> Watched<R> {
    /// `inner`, watched for `host` (its calls with `"await_input"` wait for it).
    pub fn new(inner: R, host: &mut TestHost) -> Self {
        let drained = Arc::new(AtomicBool::new(false));
        host.input_drained = Some(drained.clone());
        Watched { inner, drained }
    }
}

impl<R: std::io::Read> std::io::Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() {
            self.drained.store(true, Ordering::SeqCst);
        }
        Ok(n)
    }
}

impl TestHost {
    /// Wait until the watched input has been read to its end.
    fn await_input(&self) {
        let drained = self.input_drained.as_ref().expect("a call with await_input needs Watched input");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !drained.load(Ordering::SeqCst) {
            assert!(std::time::Instant::now() < deadline, "the server's reader never reached the end of the input");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl ToolHost for TestHost {
    type Fun = &'static str;
    type Value = TV;

    fn call(&mut self, tool: &Tool<&'static str>, args: Option<Val<'_>>, cx: CallContext) -> Started<TV> {
        self.calls += 1;
        self.traceparents.push(cx.traceparent);
        if args.and_then(|a| a.get("await_input")).is_some() {
            // The call runs until the reader has taken all input: what
            // follows it (a cancellation, a stop, more calls) arrived while
            // it ran.
            self.await_input();
        }
        if let (Some(values), Some(reporter)) = (args.and_then(|a| a.get("progress")), &cx.progress) {
            // The tool reports these values (mcp_progress()), as it runs.
            for v in values.items() {
                let progress = v.raw_str().parse().unwrap_or(0.0);
                let message = Some(format!("at {progress}"));
                reporter.report(mcplite_core::progress::Report { progress, total: Some(10.0), message });
            }
        }
        if tool.fun == "stop" || tool.fun == "terminate" {
            self.signals.request(tool.fun == "terminate");
        }
        if let Some(kind) = tool.fun.strip_prefix("never_") {
            // A call on a worker that does not finish (a tool that hangs).
            self.next += 1;
            self.running.push((self.next, usize::MAX, returns(kind, args)));
            return Started::Running(self.next);
        }
        if tool.fun == "panics" {
            panic!("a bug in a tool host");
        }
        if let Some(kind) = tool.fun.strip_prefix("timed_") {
            let ms = args.and_then(|a| a.get("ms")).and_then(|v| v.raw_str().parse().ok()).unwrap_or(0);
            self.next += 1;
            let when = std::time::Instant::now() + Duration::from_millis(ms);
            self.timed.push((self.next, when, returns(kind, args)));
            return Started::Running(self.next);
        }
        if let Some(kind) = tool.fun.strip_prefix("later_") {
            let polls = args.and_then(|a| a.get("polls")).and_then(|v| v.raw_str().parse().ok()).unwrap_or(1);
            self.next += 1;
            self.running.push((self.next, polls, returns(kind, args)));
            return Started::Running(self.next);
        }
        Started::Done(returns(tool.fun, args))
    }

    fn poll(&mut self, wait: Duration) -> Option<(TaskId, Finished<TV>)> {
        self.polls += 1;
        if !wait.is_zero() {
            self.waits += 1;
            self.signals.waited();
        }
        let now = std::time::Instant::now();
        if let Some(pos) = self.timed.iter().position(|t| t.1 <= now) {
            let (task, _, finished) = self.timed.remove(pos);
            if let Some(tx) = &self.finished {
                let _ = tx.send(task);
            }
            return Some((task, finished));
        }
        for r in self.running.iter_mut() {
            r.1 = r.1.saturating_sub(1);
        }
        let pos = self.running.iter().position(|r| r.1 == 0)?;
        let (task, _, finished) = self.running.remove(pos);
        Some((task, finished))
    }

    fn tool_update(&mut self, request: bool) -> Option<mcplite_core::dispatch::ToolSet<&'static str>> {
        if !request {
            self.idle_looks.fetch_add(1, Ordering::SeqCst);
        }
        None
    }

    fn cancel(&mut self, task: TaskId) {
        self.running.retain(|r| r.0 != task);
        self.timed.retain(|r| r.0 != task);
        self.cancelled.push(task);
    }
}

pub fn def(name: &str) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: Some(format!("{name} tool")),
        title: None,
        input_schema: json!({"type":"object","properties":{}}).as_object().cloned().unwrap_or_default(),
        output_schema: None,
        annotations: None,
        meta: None,
    }
}

pub fn tool(name: &'static str) -> Tool<&'static str> {
    Tool { def: def(name), formals: Formals::unknown(), fun: name }
}
