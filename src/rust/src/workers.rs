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
//! reader rings a doorbell: a loopback TCP connection this side accepts and
//! R dials with nanonext, whose pending receive signals the same condition
//! variable. Without the doorbell (it could not be set up, or broke), the
//! core falls back to waiting on the input and looking every few ms.

use crate::ffi;
use crate::host::{call_arguments, read_outcome, RFun};
use crate::sexp::Sx;
use extendr_api::prelude::*;
use mcplite_core::dispatch::{CallContext, Finished, InputWaker, Started, TaskId};
use mcplite_core::json::Val;
use mcplite_core::r::{field, flag1, string1};
use mcplite_core::telemetry::diag;
use mcplite_core::{Tool, ToolHost};
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// How long R may take to dial the doorbell and prove it is the dialler.
const BELL_SETUP: Duration = Duration::from_secs(2);

/// Runs tools on mirai daemons.
pub struct WorkerHost {
    state: Robj,
    submit: Robj,
    wait: Robj,
    cancel: Robj,
    stop: Robj,
    /// Tool name of each running task.
    running: HashMap<TaskId, String>,
    next: TaskId,
    stopped: bool,
    /// The doorbell's write end, until the core takes it as its waker.
    bell: Option<TcpStream>,
    /// Whether R's side of the doorbell still works (from each wait).
    bell_ok: bool,
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
        let state = ffi::call(&start, &[&config]).map_err(|e| format!("cannot start the workers: {e}"))?;
        if let Some(message) = string1(&Sx::borrowed(&state)) {
            return Err(format!("cannot start the workers: {message}"));
        }
        let mut host = WorkerHost {
            state,
            submit: function(workers, "submit")?,
            wait: function(workers, "wait")?,
            cancel: function(workers, "cancel")?,
            stop: function(workers, "stop")?,
            running: HashMap::new(),
            next: 0,
            stopped: false,
            bell: None,
            bell_ok: false,
        };
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

    /// Sets up the doorbell: listen on a loopback port, have R dial it and
    /// send the token, accept that connection (only one that sends the
    /// token: another local process that connects first is dropped).
    fn open_bell(&self, bell: &Robj) -> std::result::Result<TcpStream, String> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(|e| format!("cannot listen: {e}"))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let token = bell_token();
        let port_r = ffi::integer(i32::from(port)).map_err(|e| e.to_string())?;
        let token_r = ffi::string(&token).map_err(|e| e.to_string())?;
        // The connection and the token wait in the kernel until accepted.
        let dialled = ffi::call(bell, &[&self.state, &port_r, &token_r]).map_err(|e| e.to_string())?;
        if flag1(&Sx::borrowed(&dialled)) != Some(true) {
            return Err(string1(&Sx::borrowed(&dialled)).unwrap_or_else(|| "R could not dial".into()));
        }
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let deadline = Instant::now() + BELL_SETUP;
        while Instant::now() < deadline {
            match listener.accept() {
                Ok((stream, _)) => {
                    if read_token(&stream, deadline).as_deref() == Some(token.as_bytes()) {
                        stream.set_nonblocking(true).map_err(|e| e.to_string())?;
                        let _ = stream.set_nodelay(true);
                        return Ok(stream);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(1)),
                Err(e) => return Err(format!("cannot accept: {e}")),
            }
        }
        Err("R's connection did not arrive".into())
    }

    /// Stop calls still running and the daemons mcplite started.
    pub fn stop(&mut self) {
        if !self.stopped {
            self.stopped = true;
            self.running.clear();
            let _ = ffi::call(&self.stop, &[&self.state]);
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
        Some((task, read_outcome(outcome, &name)))
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
        let name = tool.def.name.as_str();
        let args = match call_arguments(name, arguments) {
            Ok(args) => args,
            Err(failed) => return Started::Done(failed),
        };
        self.next += 1;
        let task = self.next;
        let sent = (|| {
            let traceparent = match cx.traceparent.as_deref() {
                Some(t) => ffi::string(t)?,
                None => Robj::from(()),
            };
            let id = ffi::string(&task.to_string())?;
            let name_r = ffi::string(name)?;
            ffi::call(&self.submit, &[&self.state, &id, &name_r, &args, &traceparent])
        })();
        match sent {
            Ok(r) if flag1(&Sx::borrowed(&r)) == Some(true) => {
                self.running.insert(task, name.to_string());
                Started::Running(task)
            }
            Ok(r) => Started::Done(Finished::Failed(
                string1(&Sx::borrowed(&r)).unwrap_or_else(|| format!("Tool {name} could not be sent to a worker.")),
            )),
            Err(e) => Started::Done(Finished::Failed(format!("Tool {name} could not be sent to a worker: {e}"))),
        }
    }

    fn poll(&mut self, wait: Duration) -> Option<(TaskId, Finished<Sx>)> {
        self.finished(wait)
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
        if self.running.remove(&task).is_some() {
            if let Ok(id) = ffi::string(&task.to_string()) {
                let _ = ffi::call(&self.cancel, &[&self.state, &id]);
            }
        }
    }
}

/// 32 hex digits no other process can guess: std's per-process random hash
/// keys (no RNG crate, and R's RNG is the user's).
fn bell_token() -> String {
    let mut out = String::new();
    for i in 0..2u8 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u8(i);
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out
}

/// The first 32 bytes a connection sends, read before `deadline`.
fn read_token(stream: &TcpStream, deadline: Instant) -> Option<Vec<u8>> {
    stream.set_nonblocking(false).ok()?;
    let left = deadline.checked_duration_since(Instant::now())?;
    stream.set_read_timeout(Some(left.max(Duration::from_millis(1)))).ok()?;
    let mut buf = vec![0u8; 32];
    (&*stream).read_exact(&mut buf).ok()?;
    stream.set_read_timeout(None).ok()?;
    Some(buf)
}
