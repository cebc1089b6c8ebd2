//! `ToolHost` for mirai workers (`mcp_server(workers = )`): each call is
//! submitted as one mirai task and answered when it finishes, in any order.
//! The R side is a handful of functions in R/workers.R (`workers_start()`,
//! `workers_submit()`, `workers_poll()`, `workers_cancel()`,
//! `workers_stop()`), called through `ffi::call`; none of them signals an
//! error. A worker returns what `invoke_tool()` returns, read exactly as for
//! the in-process host.

use crate::ffi;
use crate::host::{call_arguments, read_outcome, RFun};
use crate::sexp::Sx;
use extendr_api::prelude::*;
use mcplite_core::dispatch::{CallContext, Finished, Started, StopRequests, TaskId};
use mcplite_core::json::Val;
use mcplite_core::r::{field, flag1, string1};
use mcplite_core::{Tool, ToolHost};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How often `poll` looks again while it waits (each look is one cheap R
/// call that asks mirai whether any running task has resolved).
const POLL_STEP: Duration = Duration::from_millis(1);

/// Runs tools on mirai daemons.
pub struct WorkerHost {
    state: Robj,
    submit: Robj,
    poll: Robj,
    cancel: Robj,
    stop: Robj,
    /// Tool name of each running task.
    running: HashMap<TaskId, String>,
    next: TaskId,
    stopped: bool,
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
        Ok(WorkerHost {
            state,
            submit: function(workers, "submit")?,
            poll: function(workers, "poll")?,
            cancel: function(workers, "cancel")?,
            stop: function(workers, "stop")?,
            running: HashMap::new(),
            next: 0,
            stopped: false,
        })
    }

    /// Stop calls still running and the daemons mcplite started.
    pub fn stop(&mut self) {
        if !self.stopped {
            self.stopped = true;
            self.running.clear();
            let _ = ffi::call(&self.stop, &[&self.state]);
        }
    }

    /// One look at the running tasks.
    fn finished(&mut self) -> Option<(TaskId, Finished<Sx>)> {
        let out = ffi::call(&self.poll, &[&self.state]).ok()?;
        let sx = Sx::borrowed(&out);
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
        let deadline = Instant::now() + wait;
        loop {
            if let Some(done) = self.finished() {
                return Some(done);
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            std::thread::sleep(POLL_STEP.min(deadline - now));
        }
    }

    fn cancel(&mut self, task: TaskId) {
        if self.running.remove(&task).is_some() {
            if let Ok(id) = ffi::string(&task.to_string()) {
                let _ = ffi::call(&self.cancel, &[&self.state, &id]);
            }
        }
    }

    fn stop_requests(&self) -> StopRequests {
        crate::serve::stop_requests()
    }
}
