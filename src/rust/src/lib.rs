//! extendr glue: the R-facing entry points of mcplite, a thin adapter over the
//! core crate (see ARCHITECTURE.md). Every entry point that can fail returns
//! `list(value, error)` so that R raises the classed condition.

use extendr_api::prelude::*;

mod build;
mod client;
mod config_file;
mod entry;
mod ffi;
mod host;
mod lines;
mod otel;
mod platform;
mod progress;
mod relay;
mod rstring;
mod script;
mod serve;
mod session;
mod sexp;
mod worker_link;
mod workers;

use sexp::Sx;

fn outcome(r: std::result::Result<Robj, String>) -> Robj {
    match r {
        Ok(value) => list!(value = value, error = ()).into(),
        Err(e) => list!(value = (), error = e).into(),
    }
}

/// Parse JSON text into shape-preserving R lists.
/// @noRd
#[extendr]
fn rust_json_parse(text: Robj) -> Robj {
    outcome((|| {
        let text = rstring::text(&text, "text")?;
        let doc = mcplite_core::json::Doc::parse(text.into_bytes()).map_err(|e| e.to_string())?;
        mcplite_core::r::args::check_json(doc.root())?;
        build::value(doc.root()).map(Robj::from).map_err(|e| format!("the value is too large for R to hold ({e})"))
    })())
}

/// A string as protocol text: UTF-8, as every entry point that sends text
/// reads it (`rstring::text`); the error says why it cannot be.
/// @noRd
#[extendr]
fn rust_protocol_text(x: Robj, what: Robj) -> Robj {
    let what = rstring::text(&what, "what").unwrap_or_else(|_| "x".to_string());
    outcome(rstring::text(&x, &what).map(Robj::from))
}

/// What a value is, for R's messages (`core::r::describe_for_r`), with
/// `{scalar}` where R writes a single value as R prints it. Never fails.
/// @noRd
#[extendr]
fn rust_describe(x: Robj) -> Robj {
    Robj::from(mcplite_core::r::describe_for_r(&Sx::for_description(&x)))
}

/// `` `a` ``, `` `a` and `b` ``, `` `a`, `b` and `c` `` (`core::r::quote_names`).
/// @noRd
#[extendr]
fn rust_quote_names(x: Robj) -> Robj {
    // Lossy: a message never fails over a name it quotes.
    let names = mcplite_core::r::strings(&Sx::borrowed(&x)).unwrap_or_default();
    Robj::from(mcplite_core::r::quote_names(&names))
}

/// `NULL` if a result's structured JSON is still its `structured_content`'s
/// (or not the serializer's), else the positions (from 1) of the text blocks
/// generated from that JSON: `core::r::result::structured_edit`. Never fails.
/// @noRd
#[extendr]
fn rust_structured_edit(x: Robj) -> Robj {
    match mcplite_core::r::result::structured_edit(&Sx::borrowed(&x)) {
        None => Robj::from(()),
        Some(at) => Robj::from(at.iter().map(|&i| i as i32 + 1).collect::<Vec<i32>>()),
    }
}

/// The length in bytes of the payload JSON of `x`, without making an R
/// string of it: the serializer alone, for bench/json.
/// @noRd
#[extendr]
fn rust_json_size(x: Robj, opts: Robj, helpers: Robj) -> Robj {
    outcome((|| {
        sexp::set_helpers(&helpers)?;
        let o = mcplite_core::r::options::read(&Sx::borrowed(&opts)).map_err(|p| p.text())?;
        mcplite_core::rjson::with_json(&Sx::borrowed(&x), &o, |bytes| Robj::from(bytes.len() as f64))
    })())
}

/// On a worker, a call that reports progress starts: `progress` is
/// `c(url, token, task)` from the server (see `relay`). Whether the
/// server's relay is reached.
/// @noRd
#[extendr]
fn rust_worker_progress_begin(progress: Robj) -> bool {
    let items = progress.as_str_vector().unwrap_or_default();
    match (items.first(), items.get(1), items.get(2).and_then(|t| t.parse().ok())) {
        (Some(url), Some(token), Some(task)) if items.len() == 3 => relay::worker_begin(url, token, task),
        _ => false,
    }
}

/// On a worker, the call ends: what it reported is written to the server;
/// how many lines it sent.
/// @noRd
#[extendr]
fn rust_worker_progress_end() -> f64 {
    relay::worker_end() as f64
}

/// On a daemon of ours: serve the server's calls on its link until it
/// closes (`list(value, error)`; see worker_link.rs).
/// @noRd
#[extendr]
fn rust_worker_link(settings: Robj) -> Robj {
    outcome(worker_link::serve(&settings).map(|()| Robj::from(())))
}

/// `mcp_session()`: serve tools from this interactive session
/// (`list(value = info, error)`).
/// @noRd
#[extendr]
fn rust_session_start(settings: Robj) -> Robj {
    outcome(session::live::start(&settings))
}

/// The next call waiting for the main thread, marked running: `list(tool,
/// client)` or `NULL`.
/// @noRd
#[extendr]
fn rust_session_next() -> Robj {
    session::live::next()
}

/// Run the call `rust_session_next()` took and send its answer.
/// @noRd
#[extendr]
fn rust_session_run() {
    session::live::run()
}

/// The console was not at top level: look again a little later.
/// @noRd
#[extendr]
fn rust_session_reschedule() {
    session::live::reschedule()
}

/// After each top-level command: keep the registration's working directory current.
/// @noRd
#[extendr]
fn rust_session_cwd() {
    session::live::cwd_changed()
}

/// `mcp_session_stop()`: whether a session was served.
/// @noRd
#[extendr]
fn rust_session_stop() -> bool {
    session::live::stop()
}

/// `mcp_session_info()`.
/// @noRd
#[extendr]
fn rust_session_info() -> Robj {
    session::live::info()
}

/// A registration file read as the server reads it (refused if it is a
/// link, another user's, or open to others): `list(value, error)`.
/// @noRd
#[extendr]
fn rust_session_registration(path: Robj) -> Robj {
    outcome((|| {
        let path = rstring::path(&path, "path")?;
        let r = session::live::read_registration(&path)?;
        Ok(list!(name = r.name, pid = r.pid as f64, cwd = r.cwd, socket = r.socket).into())
    })())
}

/// What a client of the preferred protocol version receives for one tool in
/// `tools/list` (the tool's print method): `list(version, json)`, the JSON
/// indented. `spec` is one of the specs `server_specs()` makes.
/// @noRd
#[extendr]
fn rust_tool_listing(spec: Robj) -> Robj {
    outcome((|| {
        let def = mcplite_core::r::spec::read_tool(&Sx::borrowed(&spec))?;
        let version = &mcplite_core::version::VERSIONS[0];
        let listed = mcplite_core::projection::project_tool(&def, version);
        let json = serde_json::to_string_pretty(&listed).map_err(|e| e.to_string())?;
        let text = |s: &str| ffi::string(s).map_err(|e| e.to_string());
        Ok(list!(version = text(version.id)?, json = text(&json)?).into())
    })())
}

/// On a worker: point stdout at stderr and stdin at the null device, so that
/// protocol streams inherited from a server are neither written nor held.
/// @noRd
#[extendr]
fn rust_worker_detach_stdio() -> Robj {
    outcome(platform::detach_stdio().map(|_| Robj::from(true)).map_err(|e| e.to_string()))
}

/// A new directory only this user can enter (mode 0700), under the
/// temporary directory (or /tmp when that is too long for Unix socket paths
/// inside it): list(value = path) or list(error = message). The caller
/// removes it.
/// @noRd
#[extendr]
fn rust_private_dir(prefix: &str) -> Robj {
    outcome(
        platform::PrivateDir::create(prefix)
            .map(|d| Robj::from(d.keep().to_string_lossy().into_owned()))
            .map_err(|e| e.to_string()),
    )
}

/// This process's identity for [`rust_kill_process`]: its start time as a
/// string (exact, whatever the OS's unit), or NA where it cannot be read.
/// @noRd
#[extendr]
fn rust_process_start(pid: i32) -> Robj {
    let start = u32::try_from(pid).ok().and_then(platform::process_start);
    match start {
        Some(s) => Robj::from(s.to_string()),
        None => Robj::from(Rstr::na()),
    }
}

/// Kill process `pid` if it is still the one that started at `start` (from
/// [`rust_process_start`]; NA: whichever has the pid; anything else that
/// is not a start time: none). list(value = TRUE
/// when killed, FALSE when gone or another process) or list(error).
/// @noRd
#[extendr]
fn rust_kill_process(pid: i32, start: Robj) -> Robj {
    outcome((|| {
        let pid = u32::try_from(pid).map_err(|_| format!("no process {pid}"))?;
        let start = match start.as_str() {
            None => None,
            Some(s) => match s.parse::<u64>() {
                Ok(s) => Some(s),
                // Not a start time this OS gave: not the process recorded.
                Err(_) => return Ok(Robj::from(false)),
            },
        };
        platform::kill_process(pid, start).map(Robj::from).map_err(|e| e.to_string())
    })())
}

/// The console guard of a call in the user's live session
/// (R/console-guard.R): `enter` makes reads from R's console fail (see
/// src/console.c) and points descriptor 0 at the null device; `!enter`
/// undoes both. list(value = c(<console changed>, <stdin changed>),
/// refused = <console reads refused since entering>) or list(error).
/// @noRd
#[extendr]
fn rust_console_guard(enter: bool) -> Robj {
    // SAFETY: both only read and write src/console.c's statics and R's
    // ReadConsole pointer; called on R's main thread (the only one that
    // reads the console), between R evaluations; neither can fail.
    let (console, refused) =
        unsafe { (ffi::mcplite_console_reads_fail(i32::from(enter)) == 1, ffi::mcplite_console_reads_refused()) };
    match platform::console_stdin_guard(enter) {
        Ok(stdin) => list!(value = vec![console, stdin], refused = refused).into(),
        Err(e) => {
            if enter && console {
                // SAFETY: as above; puts the front end's reader back.
                unsafe { ffi::mcplite_console_reads_fail(0) };
            }
            outcome(Err(e.to_string()))
        }
    }
}

extendr_module! {
    mod mcplite;
    fn rust_console_guard;
    fn rust_private_dir;
    fn rust_process_start;
    fn rust_kill_process;
    fn rust_worker_detach_stdio;
    fn rust_json_parse;
    fn rust_protocol_text;
    fn rust_describe;
    fn rust_quote_names;
    fn rust_structured_edit;
    fn rust_tool_listing;
    fn rust_json_size;
    fn rust_worker_progress_begin;
    fn rust_worker_progress_end;
    fn rust_worker_link;
    fn rust_session_start;
    fn rust_session_next;
    fn rust_session_run;
    fn rust_session_reschedule;
    fn rust_session_cwd;
    fn rust_session_stop;
    fn rust_session_info;
    fn rust_session_registration;
    use client;
    use config_file;
    use otel;
    use script;
}
