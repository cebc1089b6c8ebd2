//! `rust_serve()`: read the tool specs R built, take over standard input and
//! output, and serve until the client closes standard input.

use crate::ffi::{self, Kept};
use crate::host::{self, Invoke, RFun, RHost};
use crate::platform::{stoppable_input, Abandoned, ProtocolOutput, StdioGuard, StopSignals};
use crate::sexp::Sx;
use crate::workers::WorkerHost;
use extendr_api::prelude::*;
use mcplite_core::r::{field, string1, Formals};
use mcplite_core::serve::END_GRACE;
use mcplite_core::telemetry::{diag, Telemetry};
use mcplite_core::{serve, Ending, Server, ServerInfo, Tool};
use std::cell::Cell;
use std::io::BufReader;
use std::time::Duration;

thread_local! {
    /// Set while a server runs: a second one (a tool calling mcp_server())
    /// would wait for input the first one owns.
    // Global because a nested `rust_serve()` (a tool calling mcp_server())
    // comes through R, with no handle to the server that runs.
    static SERVING: Cell<bool> = const { Cell::new(false) };
}

/// Clears the flag however serving ends.
struct Serving;

impl Serving {
    fn start() -> std::result::Result<Serving, String> {
        if SERVING.with(Cell::get) {
            return Err("mcp_server() cannot start while a server is already running in this R process".into());
        }
        SERVING.with(|s| s.set(true));
        Ok(Serving)
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        SERVING.with(|s| s.set(false));
    }
}

/// Telemetry while serving and what points at it (otel's tracer, the exit
/// hook's output): released however serving ends, early errors included,
/// before the stdio guard (declared earlier, dropped later).
struct Traced {
    telemetry: Telemetry,
}

impl Drop for Traced {
    fn drop(&mut self) {
        host::set_exit_hook(None);
        crate::otel::set_tracer(None);
        self.telemetry.shutdown();
    }
}

/// The stop requests the signal handlers count, as the service layer reads
/// them (an input of `serve()` of its own, whichever host runs the tools),
/// waking it when one arrives (so an idle server needs no timer).
struct SignalStops;

impl mcplite_core::dispatch::StopSource for SignalStops {
    fn requests(&self) -> mcplite_core::dispatch::StopRequests {
        let (any, terminate) = crate::platform::stop_requests();
        mcplite_core::dispatch::StopRequests { any, terminate }
    }

    fn watch(&self, wake: mcplite_core::dispatch::LoopWaker) -> Option<Box<dyn std::any::Any>> {
        let watch = crate::platform::watch_stop_requests(Box::new(move || wake())).ok()?;
        Some(Box::new(watch))
    }
}

/// The formal argument names R put in the spec (`formals`: a character
/// vector, `NULL` for a primitive, whose arguments cannot be checked). R
/// reads them with `formals()`, so the glue needs no access to closures.
fn formals(spec: &Sx) -> Formals {
    match field(spec, "formals").and_then(|f| mcplite_core::r::strings(&f)) {
        Some(names) => Formals::new(&names),
        None => Formals::unknown(),
    }
}

pub(crate) fn tools(specs: &Robj) -> std::result::Result<Vec<Tool<RFun>>, String> {
    let list = Sx::borrowed(specs);
    let mut out = Vec::with_capacity(list_len(&list));
    for i in 0..list_len(&list) {
        let spec = mcplite_core::r::RValue::list_elt(&list, i);
        let def = mcplite_core::r::spec::read_tool(&spec)?;
        let fun = field(&spec, "fun").filter(|f| f.as_robj().is_function());
        let fun = fun.ok_or_else(|| format!("tool {}: `fun` must be a function", def.name))?;
        let fun = fun.keep().map_err(|e| format!("tool {}: {e}", def.name))?;
        out.push(Tool { formals: formals(&spec), def, fun: RFun(fun) });
    }
    Ok(out)
}

fn list_len(x: &Sx) -> usize {
    use mcplite_core::r::{RType, RValue};
    if x.rtype() == RType::List {
        x.len()
    } else {
        0
    }
}

/// The server's name and version from `list(name, version)`.
pub(crate) fn server_info(info: &Robj) -> ServerInfo {
    let info_sx = Sx::borrowed(info);
    let text =
        |name: &str, default: &str| field(&info_sx, name).and_then(|v| string1(&v)).unwrap_or_else(|| default.into());
    ServerInfo { name: text("name", "mcplite"), version: text("version", "0.0.0") }
}

/// How long `run` waits for the input reader thread to end once serving has.
const READER_STOP_WAIT: Duration = Duration::from_secs(2);

/// Said once when a write waits for a client that does not read while
/// serving stops: why the process has not exited yet, in the client's log.
fn say_waiting_for_reader() {
    diag(&format!(
        "mcplite: stopping; waiting up to {} s for the client to read standard output (a request to terminate, such as SIGTERM, ends the wait).",
        END_GRACE.as_secs()
    ));
}

/// What `rust_serve()` is given: one named list from `serve_specs()`
/// (R/invoke.R), read by name.
pub struct Settings {
    /// The tool specs (`list(name, description, input_schema, ..., fun)`).
    specs: Kept,
    /// The server's instructions, a string or `NULL`.
    instructions: Kept,
    /// The payload options (`payload_option_values()`).
    json_opts: Kept,
    /// `serve_tool()`, which runs a tool's call and catches what it signals.
    invoker: Kept,
    /// `tool_run()`, which marks the run of a tool's own function.
    runner: Kept,
    /// `list(name, version)` announced to clients.
    info: Kept,
    /// A function called with whether tracing is on, once the streams are
    /// guarded, or `NULL`.
    on_start: Kept,
    /// `NULL` (calls run in this process) or the workers' settings and
    /// functions (see workers.rs).
    workers: Kept,
    /// `NULL`, or the live-session server's settings (`list(name,
    /// busy_wait)`, see session/forward.rs): calls go to an R session.
    session: Kept,
}

impl Settings {
    /// Reads the list and remembers the serializer's helpers (`helpers`).
    pub fn read(list: &Robj) -> std::result::Result<Settings, String> {
        let sx = Sx::borrowed(list);
        // Every name must be there (`NULL` where there is nothing), so a
        // misspelt one is an error rather than a silent default.
        // Kept, not `Robj`s: see `ffi::Kept`.
        let item = |name: &str| -> std::result::Result<Kept, String> {
            let v = field(&sx, name).ok_or_else(|| format!("the server settings have no `{name}`"))?;
            v.keep().map_err(|e| e.to_string())
        };
        crate::sexp::set_helpers(&*item("helpers")?)?;
        Ok(Settings {
            specs: item("specs")?,
            instructions: item("instructions")?,
            json_opts: item("json_opts")?,
            invoker: item("invoke")?,
            runner: item("run")?,
            info: item("info")?,
            on_start: item("on_start")?,
            workers: item("workers")?,
            session: item("session")?,
        })
    }
}

/// Serve; returns how serving ended ("end of input", "output closed",
/// "stopped", "output not read").
pub fn run(settings: Settings) -> std::result::Result<&'static str, String> {
    let Settings { specs, instructions, json_opts, invoker, runner, info, on_start, workers, session } = settings;
    let _serving = Serving::start()?;
    let tools = tools(&specs)?;
    let instructions = string1(&Sx::borrowed(&instructions));
    let info = server_info(&info);
    let opts = mcplite_core::r::options::read(&Sx::borrowed(&json_opts))
        .map_err(|p| format!("payload options: {}", p.text()))?;
    let mut server = Server::new(tools, instructions, info, opts)?;
    let mut session_host = if session.is_null() {
        None
    } else {
        server.set_live_tools();
        Some(crate::session::forward::SessionHost::new(&session)?)
    };
    // The guard comes first: nothing that follows (an exporter opening
    // /dev/stdout, the start hook's R code) can reach the protocol output.
    let mut guard = StdioGuard::install().map_err(|e| format!("cannot take over standard input and output: {e}"))?;
    let mut traced = Traced { telemetry: Telemetry::from_env_opening(&crate::platform::open_append_nonblocking) };
    if on_start.is_function() {
        let enabled = ffi::flag(traced.telemetry.is_enabled()).map_err(|e| format!("the start hook failed: {e}"))?;
        ffi::call(&on_start, &[&enabled]).map_err(|e| format!("the start hook failed: {e}"))?;
    }
    crate::otel::set_tracer(traced.telemetry.tracer().cloned());
    let input = guard.take_input().ok_or("standard input is already taken")?;
    // Signals are stop requests from here on (see platform::StopSignals);
    // before the banner that says Ctrl-C stops the server, so a Ctrl-C typed
    // as soon as it shows is not lost to R's own handler.
    let signals = StopSignals::install().map_err(|e| format!("cannot catch stop signals: {e}"))?;
    if guard.input_is_terminal() {
        diag("mcplite: waiting for an MCP client to talk JSON-RPC on standard input (this script is an MCP server); press Ctrl-C to stop it.");
    }
    // The reader thread must not outlive serving: blocked on a terminal, it
    // would swallow what is typed at the R console afterwards.
    let (input, input_stopper) = stoppable_input(input).map_err(|e| format!("cannot read standard input: {e}"))?;
    // Writes wait while the client does not read, until serving stops (see
    // platform::ProtocolOutput); the exit hook writes the same way.
    let input_ended = input_stopper.input_ended();
    let mut protocol_output = || {
        let file = guard.output().try_clone()?;
        Ok::<_, std::io::Error>(ProtocolOutput::new(file, input_ended.clone(), END_GRACE, say_waiting_for_reader))
    };
    host::set_exit_hook(protocol_output().ok().map(|output| host::ExitHook { output, owed: server.owed() }));
    let mut output = protocol_output().map_err(|e| format!("cannot write standard output: {e}"))?;
    let input = BufReader::with_capacity(1 << 16, input);
    let ending = if let Some(host) = session_host.as_mut() {
        serve(input, &mut output, &mut server, host, &SignalStops, &mut traced.telemetry)
    } else if workers.is_null() {
        let invoke = Invoke::Call { serve: std::rc::Rc::new(invoker), run: std::rc::Rc::new(runner) };
        let mut host = RHost { invoke, owed: server.owed() };
        serve(input, &mut output, &mut server, &mut host, &SignalStops, &mut traced.telemetry)
    } else {
        // Daemons start only now, with the guard in place: they inherit a
        // null standard input and standard error as their standard output,
        // and never the protocol pipes (close-on-exec).
        let starting = traced.telemetry.begin_workers_start();
        match WorkerHost::start(&workers) {
            Ok(mut host) => {
                traced.telemetry.end_workers_start(starting, None);
                let ending = serve(input, &mut output, &mut server, &mut host, &SignalStops, &mut traced.telemetry);
                host.stop();
                ending
            }
            Err(e) => {
                traced.telemetry.end_workers_start(starting, Some(&e));
                // `traced` (its spans exported), `signals` and `guard` are
                // released on the way out.
                return Err(e);
            }
        }
    };
    // The reader goes before the guard puts descriptors 0 and 1 back.
    if !input_stopper.stop(READER_STOP_WAIT) && guard.input_is_terminal() {
        diag("mcplite: the standard input reader did not stop; the console may lose input until R exits.");
    }
    drop(traced);
    drop(signals);
    drop(guard);
    // A line cut short is the last thing on standard output (the service
    // layer writes nothing once a write failed).
    let abandoned = if ending.is_ok() { output.abandoned() } else { None };
    match abandoned {
        Some(Abandoned::Terminate) => {
            diag("mcplite: asked to stop (a signal) while the client was not reading standard output; the server stopped without writing the rest of its answers.");
            return Ok("stopped");
        }
        Some(Abandoned::NotRead) => {
            diag(&format!(
                "mcplite: stopping, and the client read nothing from standard output for {} s; the server stopped without writing the rest of its answers.",
                END_GRACE.as_secs()
            ));
            return Ok("output not read");
        }
        None => {}
    }
    match ending {
        Ok(Ending::EndOfInput) => Ok("end of input"),
        Ok(Ending::OutputClosed) => Ok("output closed"),
        Ok(Ending::Stopped) => {
            diag("mcplite: asked to stop (a signal); the server stopped.");
            Ok("stopped")
        }
        Err(e) => Err(format!("reading standard input failed: {e}")),
    }
}
