//! The R side of `ToolHost`: runs a tool closure through the R-level invoker
//! (`invoke_tool()` in R/invoke.R) in this R process.

use crate::build;
use crate::ffi::{self, RFailure};
use crate::platform;
use crate::platform::ProtocolOutput;
use crate::sexp::Sx;
use extendr_api::prelude::*;
use mcplite_core::dispatch::{CallContext, Finished, Owed, Started};
use mcplite_core::json::Val;
use mcplite_core::r::{field, flag1, string1};
use mcplite_core::telemetry::diag;
use mcplite_core::{Tool, ToolHost};
use std::io::Write;
use std::rc::Rc;
use std::sync::Mutex;

/// A tool's R function (kept outside extendr's table, see `ffi::Kept`).
pub struct RFun(pub ffi::Kept);

/// Runs tools in this R process, one at a time.
pub struct RHost {
    pub invoke: Invoke,
    /// The server's calls owed an answer: the host marks the one whose tool
    /// runs, for the exit hook.
    pub owed: Owed,
}

/// A call ready to run, as [`Invoke`] says.
enum Prepared<'a> {
    Call(ffi::Kept),
    /// The invoker, the argument list, the tool's name.
    Outcome(&'a Robj, ffi::Kept, ffi::Kept),
}

/// How [`RHost`] runs a tool in R.
pub enum Invoke {
    /// The server's own tools (`serve::run`): one call Rust builds with the
    /// arguments in it, `serve_tool(tool_run(fun(..)), name)` (R/invoke.R,
    /// [`build::tool_call`]), whose value is the tool's value; a failure
    /// hands its message over through `rust_tool_failed()` ([`FAILED`]).
    Call {
        /// `serve_tool(expr, name)`: sets the condition handlers, then
        /// evaluates the tool's call it is given unevaluated.
        serve: Rc<ffi::Kept>,
        /// `tool_run(expr)`: evaluates the tool's own call as the run a
        /// cancellation interrupts ([`closure_scope`]).
        run: Rc<ffi::Kept>,
    },
    /// A function of `(fun, args, name)` that returns `list(ok = TRUE,
    /// value)` or `list(ok = FALSE, message)` ([`read_outcome`]): the live
    /// session's `session_call()`, which guards the console around
    /// `invoke_tool()`, and a traced call's on a worker
    /// (`worker_traced_invoker()`). Kept outside extendr's table (see
    /// `ffi::Kept`), as the other R objects a call reaches.
    Outcome(Rc<ffi::Kept>),
}

/// Where the tool running in this process now reports progress, and its
/// name: set while a call whose request carried a progress token runs.
/// Global because `mcp_progress()` reaches it from the tool's R code through
/// `.Call` (`rust_progress()`), which carries no handle, and the exit hook
/// closes its calls.
static PROGRESS: Mutex<Option<(mcplite_core::progress::Reporter, String)>> = Mutex::new(None);

/// `mcp_progress()`'s report, for the call running in this process now if
/// it takes progress; the report back otherwise (the caller, `rust_progress()`,
/// tries a live session's call and a worker's relay next).
pub fn report_progress(report: mcplite_core::progress::Report) -> Option<mcplite_core::progress::Report> {
    let current = lock(&PROGRESS);
    let Some((reporter, tool)) = current.as_ref() else { return Some(report) };
    let said = crate::progress::offer(reporter, tool, report);
    drop(current);
    if let Some(said) = said {
        diag(&said);
    }
    None
}

/// What the exit hook needs while serving: where it writes, and the
/// server's calls owed an answer.
pub struct ExitHook {
    pub output: ProtocolOutput,
    pub owed: Owed,
}

/// The exit hook's handle while serving (armed by `serve::run`).
/// Global because R runs the hook from an exit finalizer (`rust_on_exit()`),
/// which carries no data, when a tool's `quit()` ends the process under the
/// serve loop.
static EXIT_HOOK: Mutex<Option<ExitHook>> = Mutex::new(None);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Arm the exit hook (a duplicate of the protocol output, the server's owed
/// calls); `None` disarms it.
pub fn set_exit_hook(hook: Option<ExitHook>) {
    *lock(&EXIT_HOOK) = hook;
}

/// Called by R when the process ends (an exit finalizer): if a tool ended R
/// (`quit()`), its request still gets its one answer.
pub fn on_r_exit() {
    // No progress is written any more: the answers below are the last lines.
    if let Some((reporter, _)) = lock(&PROGRESS).take() {
        reporter.close_all();
    }
    let mut hook = lock(&EXIT_HOOK);
    let Some(ExitHook { output, owed }) = hook.as_mut() else { return };
    // The call whose tool ended R says so; every other call still owed an
    // answer (a result being converted, calls on workers) gets one too.
    for mut line in owed.take_answers::<Sx>() {
        line.push(b'\n');
        let _ = output.write_all(&line);
    }
    let _ = output.flush();
}

/// How a call ended, from what `invoke_tool()` returned (here or on a
/// worker): `list(ok = TRUE, value)` or `list(ok = FALSE, message)`.
pub fn read_outcome(outcome: Sx, name: &str) -> Finished<Sx> {
    // A worker's serializer (a tool_result() built there) wrote a number as 0.
    if field(&outcome, "zeroed").and_then(|z| flag1(&z)) == Some(true) {
        mcplite_core::rjson::note_zeroed();
    }
    let ok = field(&outcome, "ok").and_then(|o| flag1(&o)).unwrap_or(false);
    if ok {
        Finished::Returned(field(&outcome, "value").unwrap_or_else(Sx::null))
    } else {
        let message = field(&outcome, "message").and_then(|m| string1(&m));
        Finished::Failed(message.unwrap_or_else(|| format!("Tool {name} failed.")))
    }
}

/// The message of the tool call in this process that failed, from
/// `serve_tool()` (R/invoke.R), which then ends the call through R's
/// top-level restart: `R_tryEval` fails, and this is the answer's message.
/// Global because it comes through `.Call` (`rust_tool_failed()`).
static FAILED: Mutex<Option<String>> = Mutex::new(None);

/// `rust_tool_failed()`: see [`FAILED`].
pub fn tool_failed(message: &Robj) {
    let message = string1(&Sx::borrowed(message));
    *lock(&FAILED) = Some(message.unwrap_or_default());
}

/// A call's arguments as the R list a worker's tool function is called with;
/// a tool error when R cannot hold them.
pub(crate) fn call_arguments(name: &str, arguments: Option<Val<'_>>) -> Result<ffi::Kept, Finished<Sx>> {
    build::arguments(arguments)
        .map_err(|e| Finished::Failed(format!("Tool {name} received arguments too large for R to hold ({e}).")))
}

/// `tool_closure()` (R/invoke.R) around the tool's own function: a
/// cancellation of the call interrupts that, and only that. Leaving, R drops
/// an interrupt it was handed and has not acted on yet.
pub fn closure_scope(enter: bool) {
    if enter {
        platform::closure_enter();
    } else if platform::closure_leave() {
        ffi::drop_pending_interrupt();
    }
}

impl ToolHost for RHost {
    type Fun = RFun;
    type Value = Sx;

    fn canceller(&mut self) -> Option<mcplite_core::dispatch::Canceller> {
        // Taken on R's thread when serving starts; called from the reader's.
        let r_thread = platform::RThread::current();
        Some(Box::new(move || platform::cancel_closure(&r_thread)))
    }

    fn call(&mut self, tool: &Tool<RFun>, arguments: Option<Val<'_>>, cx: CallContext) -> Started<Sx> {
        let name = tool.def.name.as_str();
        let too_large = |e: RFailure| {
            Started::Done(Finished::Failed(format!("Tool {name} received arguments too large for R to hold ({e}).")))
        };
        // The server's own: one R call with the arguments in it (no list for
        // `do.call()`, no outcome list to read back: bench/README.md,
        // "Throughput").
        let prepared = match &self.invoke {
            Invoke::Call { serve, run } => match build::tool_call(serve, run, &tool.fun.0, name, arguments) {
                Ok(call) => Prepared::Call(call),
                Err(e) => return too_large(e),
            },
            Invoke::Outcome(invoker) => {
                let args = match build::arguments(arguments) {
                    Ok(args) => args,
                    Err(e) => return too_large(e),
                };
                let name_r = match ffi::string(name) {
                    Ok(n) => n,
                    Err(e) => return Started::Done(Finished::Failed(format!("Tool {name} could not be called: {e}"))),
                };
                Prepared::Outcome(invoker, args, name_r)
            }
        };
        self.owed.mark_running(Some(&cx.id));
        *lock(&PROGRESS) = cx.progress.map(|r| (r, name.to_string()));
        lock(&FAILED).take();
        let outcome = match &prepared {
            Prepared::Call(call) => {
                let value = ffi::eval_for_tool(call);
                // `tool_run()` leaves the run as the tool returns; an error
                // or an interrupt jumped over that.
                closure_scope(false);
                value
            }
            Prepared::Outcome(invoker, args, name_r) => ffi::call_for_tool(invoker, &[&tool.fun.0, args, name_r]),
        };
        drop(prepared);
        // A nested server's calls took their own message before returning.
        let failed = lock(&FAILED).take();
        *lock(&PROGRESS) = None;
        self.owed.mark_running(None);
        platform::flush_c_streams();
        Started::Done(match (outcome, failed) {
            (Ok(value), _) if matches!(self.invoke, Invoke::Call { .. }) => Finished::Returned(Sx::kept(value)),
            (Ok(outcome), _) => read_outcome(Sx::kept(outcome), name),
            (Err(RFailure::Interrupted), _) => Finished::Failed(format!("Tool {name} was interrupted.")),
            (Err(RFailure::Error(_)), Some(message)) => Finished::Failed(message),
            (Err(RFailure::Error(e)), None) => Finished::Failed(format!("Tool {name} failed: {e}")),
        })
    }
}
