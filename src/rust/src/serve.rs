//! `rust_serve()`: read the tool specs R built, take over standard input and
//! output, and serve until the client closes standard input.

use crate::ffi;
use crate::host::{self, RFun, RHost};
use crate::platform::StdioGuard;
use crate::sexp::Sx;
use crate::workers::WorkerHost;
use extendr_api::prelude::*;
use mcplite_core::r::{field, string1, Formals};
use mcplite_core::telemetry::{diag, Telemetry};
use mcplite_core::{serve, Ending, Server, ServerInfo, Tool};
use std::cell::Cell;
use std::io::BufReader;

thread_local! {
    /// Set while a server runs: a second one (a tool calling mcp_server())
    /// would wait for input the first one owns.
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

fn formals(fun: &Robj) -> Formals {
    let Some(f) = fun.as_function() else { return Formals::unknown() };
    match f.formals() {
        Some(list) => Formals::new(&list.names().map(str::to_string).collect::<Vec<_>>()),
        None => Formals::unknown(),
    }
}

fn tools(specs: &Robj) -> std::result::Result<Vec<Tool<RFun>>, String> {
    let list = Sx::borrowed(specs);
    let mut out = Vec::with_capacity(list_len(&list));
    for i in 0..list_len(&list) {
        let spec = mcplite_core::r::RValue::list_elt(&list, i);
        let def = mcplite_core::r::spec::read_tool(&spec)?;
        let fun = field(&spec, "fun").map(|f| f.robj()).filter(|f| f.is_function());
        let fun = fun.ok_or_else(|| format!("tool {}: `fun` must be a function", def.name))?;
        out.push(Tool { formals: formals(&fun), def, fun: RFun(fun) });
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

/// Serve; returns how serving ended ("end of input", "output closed",
/// "interrupted").
#[allow(clippy::too_many_arguments)]
pub fn run(
    specs: Robj,
    instructions: Robj,
    json_opts: Robj,
    invoker: Robj,
    info: Robj,
    on_start: Robj,
    workers: Robj,
) -> std::result::Result<&'static str, String> {
    let _serving = Serving::start()?;
    let tools = tools(&specs)?;
    let instructions = string1(&Sx::borrowed(&instructions));
    let info_sx = Sx::borrowed(&info);
    let text =
        |name: &str, default: &str| field(&info_sx, name).and_then(|v| string1(&v)).unwrap_or_else(|| default.into());
    let info = ServerInfo { name: text("name", "mcplite"), version: text("version", "0.0.0") };
    let opts =
        mcplite_core::r::options::read(&Sx::borrowed(&json_opts)).map_err(|e| format!("payload options: {e}"))?;
    let mut server = Server::new(tools, instructions, info, opts)?;
    let mut telemetry = Telemetry::from_env();
    if on_start.is_function() {
        ffi::call(&on_start, &[&Robj::from(telemetry.is_enabled())]).ok_or("the start hook failed")?;
    }
    crate::otel::set_tracer(telemetry.tracer().cloned());
    let mut guard = StdioGuard::install().map_err(|e| format!("cannot take over standard input and output: {e}"))?;
    let input = guard.take_input().ok_or("standard input is already taken")?;
    if guard.input_is_terminal() {
        diag("mcplite: waiting for an MCP client to talk JSON-RPC on standard input (this script is an MCP server); press Ctrl-C to stop it.");
    }
    host::set_exit_output(guard.output().try_clone().ok());
    let input = BufReader::with_capacity(1 << 16, input);
    let ending = if workers.is_null() {
        let mut host = RHost { invoker, input_is_terminal: guard.input_is_terminal() };
        serve(input, guard.output(), &mut server, &mut host, &mut telemetry)
    } else {
        // Daemons start only now, with the guard in place: they inherit a
        // null standard input and standard error as their standard output,
        // and never the protocol pipes (close-on-exec).
        match WorkerHost::start(&workers, guard.input_is_terminal()) {
            Ok(mut host) => {
                let ending = serve(input, guard.output(), &mut server, &mut host, &mut telemetry);
                host.stop();
                ending
            }
            Err(e) => {
                host::set_exit_output(None);
                crate::otel::set_tracer(None);
                return Err(e);
            }
        }
    };
    host::set_exit_output(None);
    crate::otel::set_tracer(None);
    telemetry.shutdown();
    drop(guard);
    match ending {
        Ok(Ending::EndOfInput) => Ok("end of input"),
        Ok(Ending::OutputClosed) => Ok("output closed"),
        Ok(Ending::Stopped) => {
            diag("mcplite: interrupted; the server stops.");
            Ok("interrupted")
        }
        Err(e) => Err(format!("reading standard input failed: {e}")),
    }
}
