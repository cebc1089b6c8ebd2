//! R entry points of the MCP client (`mcp_client()`, `mcp_check()`), the
//! listing checks, pretty JSON for `mcp_config()` and base64 for
//! `plot_image()`. The protocol logic lives in `mcplite_devtools::client` and
//! `mcplite_devtools::check`; this file only converts between R and JSON.
//!
//! Every entry point returns `list(value, error)`. A client error is a list
//! with `kind` (spawn, exited, timeout, rpc, protocol, version, closed,
//! invalid), `message`, and when they apply `code`, `data`, `status`,
//! `seconds` (timeouts) and the server's `stderr`. `invalid` is the caller's
//! mistake; every other kind is the server's doing (a value R cannot hold
//! is `protocol`).
//!
//! Waiting is done in slices so that R can check for interrupts between
//! them (R/client.R loops): `rust_client_begin_*` sends, `rust_client_step`
//! waits at most one slice and returns `pending = TRUE` until the answer is
//! in, `rust_client_abandon` gives up. Closing works the same way.
//!
//! Answers and notifications (progress too) are read once, by the core's
//! reader (`mcplite_core::json::Doc`); R values are built from that tree.
//! JSON this package makes (findings) is built from its serde value by the
//! same mapping; no JSON text is written to be read back.

use extendr_api::prelude::*;
use mcplite_core::json::{Doc, Val};
use mcplite_devtools::check::{check_listings, frame_columns, Finding, FIELDS};
use mcplite_devtools::client::{page_tools, progress_params, Client, ClientError, Launch, Outcome};
use serde_json::{Map, Value};
use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

/// A value the server sent -> R, with the mapping tool arguments get
/// (`r::args`); what R cannot hold (NUL in a string) is an error naming the
/// place, starting from `root`.
fn server_r(v: Val<'_>, root: &str) -> std::result::Result<Robj, String> {
    mcplite_core::r::args::check_json_within(v, usize::MAX, root)
        .map_err(|e| format!("it holds a value R cannot hold: {e}"))?;
    crate::build::value(v).map(Robj::from).map_err(|e| format!("it holds a value too large for R ({e})"))
}

/// JSON this package made -> R (findings of the listing checks), as its
/// text read back would be, without writing the text.
fn own_r(v: &Value) -> Robj {
    crate::build::value(v).map(Robj::from).unwrap_or_else(|_| ().into())
}

/// Kept messages as an R list; one R cannot hold is left out.
fn docs_r(docs: &[Arc<Doc>]) -> Robj {
    let items: Vec<Robj> = docs.iter().filter_map(|d| server_r(d.root(), "x").ok()).collect();
    List::from_values(items).into()
}

/// R -> JSON with the protocol's fixed encoding (the one place this file does it).
fn from_r(x: &Robj) -> std::result::Result<Value, String> {
    mcplite_core::r::fixed::encode(&crate::sexp::Sx::borrowed(x), "x").map_err(|e| e.message("x"))
}

fn ok(value: Robj) -> Robj {
    list!(value = value, error = ()).into()
}

fn fail_message(message: &str, kind: &str) -> Robj {
    list!(value = (), error = list!(kind = kind, message = message)).into()
}

fn nullable<T: Into<Robj>>(x: Option<T>) -> Robj {
    match x {
        Some(v) => v.into(),
        None => ().into(),
    }
}

fn fail(e: &ClientError, client: Option<&mut Client>) -> Robj {
    let (kind, code, status) = match e {
        ClientError::Spawn(_) => ("spawn", None, None),
        ClientError::Exited { status, .. } => ("exited", None, *status),
        ClientError::Timeout { .. } => ("timeout", None, None),
        ClientError::Rpc { code, .. } => ("rpc", Some(*code as f64), None),
        ClientError::Protocol(_) => ("protocol", None, None),
        ClientError::Version { .. } => ("version", None, None),
        ClientError::Closed => ("closed", None, None),
        ClientError::Invalid(_) => ("invalid", None, None),
        ClientError::Output(_) => ("output", None, None),
    };
    // The error's data, from the answer as it was read.
    let data = match (e, &client) {
        (ClientError::Rpc { .. }, Some(c)) => c
            .last_response_doc()
            .and_then(|d| d.root().get("error"))
            .and_then(|err| err.get("data"))
            .and_then(|d| server_r(d, "data").ok()),
        _ => None,
    };
    let stderr = client.map(|c| c.stderr_text());
    let message = match e {
        ClientError::Rpc { message, .. } | ClientError::Protocol(message) => message.clone(),
        _ => e.to_string(),
    };
    let seconds = match e {
        ClientError::Timeout { seconds, .. } => Some(*seconds),
        _ => None,
    };
    let error = list!(
        kind = kind,
        message = message,
        seconds = nullable(seconds),
        code = nullable(code),
        data = data.unwrap_or_else(|| ().into()),
        status = nullable(status),
        stderr = nullable(stderr)
    );
    list!(value = (), error = error).into()
}

/// Seconds from R (`Inf` waits as long as it takes).
fn seconds(x: f64) -> std::result::Result<Duration, String> {
    if x.is_nan() || x < 0.0 {
        return Err("a timeout must be a non-negative number of seconds".into());
    }
    Ok(Duration::try_from_secs_f64(x).unwrap_or(Duration::MAX))
}

/// A JSON object from an R list; an empty unnamed `list()` counts as `{}`.
fn object(x: &Robj, what: &str) -> std::result::Result<Option<Value>, String> {
    if x.is_null() {
        return Ok(None);
    }
    match from_r(x)? {
        Value::Object(m) => Ok(Some(Value::Object(m))),
        Value::Array(a) if a.is_empty() => Ok(Some(Value::Object(Map::new()))),
        _ => Err(format!("{what} must be a named list")),
    }
}

/// A named character vector (environment variables) for the operating system.
fn named_os_strings(x: &Robj, what: &str) -> std::result::Result<Vec<(OsString, OsString)>, String> {
    if x.is_null() {
        return Ok(Vec::new());
    }
    let values = crate::rstring::os_strings(x, what)?;
    let names = match x.get_attrib(names_symbol()) {
        Some(n) if !n.is_null() => crate::rstring::os_strings(&n, &format!("names({what})"))?,
        _ if values.is_empty() => Vec::new(),
        _ => return Err(format!("`{what}` must be named")),
    };
    Ok(names.into_iter().zip(values).collect())
}

fn with_client(mut ptr: Robj, f: impl FnOnce(&mut Client) -> Robj) -> Robj {
    let ext: std::result::Result<&mut ExternalPtr<Client>, _> = (&mut ptr).try_into();
    match ext {
        Ok(ext) => match ext.try_addr_mut() {
            Ok(client) => f(client),
            Err(_) => fail(&ClientError::Closed, None),
        },
        Err(_) => fail_message("not an mcplite client", "invalid"),
    }
}

/// Start a server; nothing is sent yet.
/// @noRd
#[extendr]
fn rust_client_spawn(
    program: Robj,
    args: Robj,
    env: Robj,
    clear_env: bool,
    cwd: Robj,
    protocol: Robj,
    client_info: Robj,
) -> Robj {
    use crate::rstring;
    let read = || -> std::result::Result<(Launch, String), String> {
        let launch = Launch {
            program: rstring::os_string(&program, "command")?,
            args: if args.is_null() { Vec::new() } else { rstring::os_strings(&args, "args")? },
            clear_env,
            env: named_os_strings(&env, "env")?,
            cwd: if cwd.is_null() { None } else { Some(rstring::path(&cwd, "cwd")?) },
        };
        Ok((launch, rstring::text(&protocol, "protocol")?))
    };
    let (launch, protocol) = match read() {
        Ok(x) => x,
        Err(e) => return fail_message(&e, "invalid"),
    };
    let protocol = protocol.as_str();
    let info = match from_r(&client_info) {
        Ok(v) => v,
        Err(e) => return fail_message(&format!("client_info: {e}"), "invalid"),
    };
    match Client::spawn(&launch, protocol, info) {
        Ok(client) => ok(ExternalPtr::new(client).into()),
        Err(e) => fail(&e, None),
    }
}

/// `list(value = NULL, error = NULL)` once a `begin_*` has sent its request.
fn begun(c: &mut Client, r: std::result::Result<(), ClientError>) -> Robj {
    match r {
        Ok(()) => ok(().into()),
        Err(e) => fail(&e, Some(c)),
    }
}

/// Begin the handshake of the client's protocol version.
/// @noRd
#[extendr]
fn rust_client_begin_open(ptr: Robj, timeout: f64) -> Robj {
    with_client(ptr, |c| match seconds(timeout) {
        Err(e) => fail_message(&e, "invalid"),
        Ok(t) => {
            let r = c.begin_open(t);
            begun(c, r)
        }
    })
}

/// Begin any request; `params` is NULL or a named list.
/// @noRd
#[extendr]
fn rust_client_begin_request(ptr: Robj, method: Robj, params: Robj, timeout: f64) -> Robj {
    with_client(ptr, |c| {
        let read = || -> std::result::Result<_, String> {
            Ok((crate::rstring::text(&method, "method")?, object(&params, "params")?, seconds(timeout)?))
        };
        let (method, params, t) = match read() {
            Ok(x) => x,
            Err(e) => return fail_message(&e, "invalid"),
        };
        let r = c.begin_request(&method, params, t);
        begun(c, r)
    })
}

/// Begin listing every tool, following pagination.
/// @noRd
#[extendr]
fn rust_client_begin_list_tools(ptr: Robj, timeout: f64) -> Robj {
    with_client(ptr, |c| match seconds(timeout) {
        Err(e) => fail_message(&e, "invalid"),
        Ok(t) => {
            let r = c.begin_list_tools(t);
            begun(c, r)
        }
    })
}

/// A `tools/call`'s name, arguments (an empty object when NULL) and
/// timeout, from R, for `$call()` and `$call_async()` alike.
fn call_args(name: &Robj, arguments: &Robj, timeout: f64) -> std::result::Result<(String, Value, Duration), String> {
    let name = crate::rstring::text(name, "name")?;
    let args = object(arguments, "arguments")?.unwrap_or_else(|| Value::Object(Map::new()));
    Ok((name, args, seconds(timeout)?))
}

/// Begin `tools/call`; a tool error comes back as a result with `isError`.
/// @noRd
#[extendr]
fn rust_client_begin_call_tool(ptr: Robj, name: Robj, arguments: Robj, timeout: f64, progress: bool) -> Robj {
    with_client(ptr, |c| {
        let (name, args, t) = match call_args(&name, &arguments, timeout) {
            Ok(x) => x,
            Err(e) => return fail_message(&e, "invalid"),
        };
        let r = c.begin_call_tool_with(&name, args, t, progress);
        begun(c, r)
    })
}

/// The progress notifications (their `params`) received for the last call
/// that asked for progress: all, or (`new_only`) those not returned before.
/// @noRd
#[extendr]
fn rust_client_progress(ptr: Robj, new_only: bool) -> Robj {
    with_client(ptr, |c| {
        let values: std::result::Result<Vec<Robj>, String> =
            c.take_progress(new_only).iter().map(|n| server_r(progress_params(n), "params")).collect();
        match values {
            Ok(v) => ok(List::from_values(v).into()),
            Err(e) => fail(&ClientError::Protocol(format!("a progress notification cannot be used: {e}")), Some(c)),
        }
    })
}

/// Send `tools/call` without waiting: `value` is the call's id (a double),
/// for the `rust_client_async_*` entry points.
/// @noRd
#[extendr]
fn rust_client_begin_call_async(ptr: Robj, name: Robj, arguments: Robj, timeout: f64, progress: bool) -> Robj {
    with_client(ptr, |c| {
        let (name, args, t) = match call_args(&name, &arguments, timeout) {
            Ok(x) => x,
            Err(e) => return fail_message(&e, "invalid"),
        };
        match c.begin_call_async(&name, args, t, progress) {
            Ok(id) => ok((id as f64).into()),
            Err(e) => fail(&e, Some(c)),
        }
    })
}

/// Wait at most `slice` seconds for the async call `id`, reading every
/// line meanwhile: `list(value, error, pending)` as `rust_client_step`.
/// @noRd
#[extendr]
fn rust_client_async_step(ptr: Robj, id: f64, slice: f64) -> Robj {
    with_client(ptr, |c| {
        let slice = match seconds(slice) {
            Ok(s) => s,
            Err(e) => return fail_message(&e, "invalid"),
        };
        let stepped = c.step_async(id as i64, slice);
        step_r(stepped, c)
    })
}

/// Cancel the async call `id`: `value` is TRUE when it was in flight.
/// @noRd
#[extendr]
fn rust_client_async_cancel(ptr: Robj, id: f64) -> Robj {
    with_client(ptr, |c| ok(c.cancel_async(id as i64).into()))
}

/// The progress of async calls received since the last take: a list of
/// `list(id, params)`.
/// @noRd
#[extendr]
fn rust_client_async_progress(ptr: Robj) -> Robj {
    with_client(ptr, |c| {
        let mut items: Vec<Robj> = Vec::new();
        for (id, notification) in c.take_async_progress() {
            // One R cannot hold is left out, as in `$notifications()`.
            if let Ok(p) = server_r(progress_params(&notification), "params") {
                items.push(list!(id = id as f64, params = p).into());
            }
        }
        ok(List::from_values(items).into())
    })
}

/// The R value of a finished operation.
fn outcome_r(o: &Outcome) -> std::result::Result<Robj, String> {
    match o {
        Outcome::Answer(a) => server_r(a.result(), "result"),
        Outcome::Pages(pages) => {
            let mut tools = Vec::new();
            for page in pages {
                for tool in page_tools(page) {
                    tools.push(server_r(tool, "tool")?);
                }
            }
            Ok(List::from_values(tools).into())
        }
    }
}

/// Wait at most `slice` seconds for the operation begun last:
/// `list(value, error, pending)`, `pending` TRUE until it is done.
/// @noRd
#[extendr]
fn rust_client_step(ptr: Robj, slice: f64) -> Robj {
    with_client(ptr, |c| {
        let slice = match seconds(slice) {
            Ok(s) => s,
            Err(e) => return fail_message(&e, "invalid"),
        };
        let stepped = c.step(slice);
        step_r(stepped, c)
    })
}

/// A wait's result as `list(value, error, pending)`: `pending` TRUE until the
/// operation (or async call) is done.
fn step_r(stepped: Result<Option<Outcome>, ClientError>, c: &mut Client) -> Robj {
    match stepped {
        Ok(None) => list!(value = (), error = (), pending = true).into(),
        Ok(Some(outcome)) => match outcome_r(&outcome) {
            Ok(x) => ok(x),
            Err(e) => fail(&ClientError::Protocol(format!("the answer cannot be used: {e}")), Some(c)),
        },
        Err(e) => fail(&e, Some(c)),
    }
}

/// Give up the operation in progress (its request is cancelled).
/// @noRd
#[extendr]
fn rust_client_abandon(ptr: Robj) -> Robj {
    with_client(ptr, |c| {
        c.abandon();
        ok(().into())
    })
}

/// A notification to the server.
/// @noRd
#[extendr]
fn rust_client_notify(ptr: Robj, method: Robj, params: Robj) -> Robj {
    with_client(ptr, |c| {
        let read = || -> std::result::Result<_, String> {
            Ok((crate::rstring::text(&method, "method")?, object(&params, "params")?))
        };
        let (method, params) = match read() {
            Ok(x) => x,
            Err(e) => return fail_message(&e, "invalid"),
        };
        match c.notify(&method, params) {
            Ok(()) => ok(().into()),
            Err(e) => fail(&e, Some(c)),
        }
    })
}

/// Notifications received so far (one R cannot hold is left out).
/// @noRd
#[extendr]
fn rust_client_notifications(ptr: Robj, clear: bool) -> Robj {
    with_client(ptr, |c| ok(docs_r(&c.notification_docs(clear))))
}

/// What the server wrote on stderr so far.
/// @noRd
#[extendr]
fn rust_client_stderr(ptr: Robj) -> Robj {
    with_client(ptr, |c| ok(c.stderr_text().into()))
}

/// The client's state: process, version, handshake answer, timing, and what
/// arrived outside of answers (stray stdout lines, the most recent kept and
/// how many arrived in all, server requests, responses that matched no
/// request), and whether the server's process group outlived it.
/// @noRd
#[extendr]
fn rust_client_state(ptr: Robj) -> Robj {
    with_client(ptr, |c| {
        let alive = c.is_alive();
        let exit = c.exit_status();
        let stray: Vec<Robj> =
            c.stray_lines().into_iter().map(|s| list!(at_ms = s.at_ms, text = s.text).into()).collect();
        let first = c.first_response().map(|d| d.as_secs_f64() * 1000.0);
        let opened = c.opened_answer().and_then(|a| server_r(a.result(), "result").ok());
        let server_info = c.server_info().and_then(|v| server_r(v, mcplite_core::wire::SERVER_INFO).ok());
        let state = list!(
            pid = c.pid() as f64,
            protocol = c.protocol(),
            alive = alive,
            closed = c.is_closed(),
            opened = opened.unwrap_or_else(|| ().into()),
            server_info = server_info.unwrap_or_else(|| ().into()),
            first_response_ms = nullable(first),
            elapsed_ms = c.elapsed().as_secs_f64() * 1000.0,
            exit_code = nullable(exit.as_ref().and_then(|e| e.0)),
            exit = nullable(exit.map(|e| e.1)),
            stray = List::from_values(stray),
            stray_total = c.stray_count() as f64,
            server_requests = docs_r(&c.server_request_docs()),
            unmatched = docs_r(&c.unmatched_docs()),
            last_response = nullable(c.last_response().map(str::to_string)),
            group_left_running = nullable(c.group_left_running())
        );
        ok(state.into())
    })
}

/// Whether `tools/call` results are checked against the output schemas of
/// the last `tools/list`, as the SDK clients do.
/// @noRd
#[extendr]
fn rust_client_check_output(ptr: Robj, on: bool) -> Robj {
    with_client(ptr, |c| {
        c.set_check_output(on);
        ok(().into())
    })
}

/// `on` NA: take the transcript (lines sent `->` and received `<-`, in
/// order); TRUE/FALSE: start or stop keeping it.
/// @noRd
#[extendr]
fn rust_client_transcript(ptr: Robj, on: Rbool) -> Robj {
    with_client(ptr, |c| {
        if on.is_na() {
            let lines: Vec<String> = c
                .take_transcript()
                .into_iter()
                .map(|(sent, line)| format!("{} {line}", if sent { "->" } else { "<-" }))
                .collect();
            ok(lines.into())
        } else {
            c.set_transcript(on.is_true());
            ok(().into())
        }
    })
}

fn status_r(status: Option<(Option<i32>, String)>) -> Robj {
    list!(code = nullable(status.as_ref().and_then(|s| s.0)), exit = nullable(status.map(|s| s.1))).into()
}

/// Close the server's stdin, then wait at most `slice` seconds for it to
/// exit: `list(value = list(done, code, exit))`. `kill` TRUE kills it (and
/// its process group) at once instead. Reaped either way once done.
/// @noRd
#[extendr]
fn rust_client_close_step(ptr: Robj, slice: f64, kill: bool) -> Robj {
    with_client(ptr, |c| {
        c.begin_close();
        let done = if kill {
            c.kill();
            true
        } else {
            c.close_step(seconds(slice).unwrap_or(Duration::ZERO))
        };
        let status = if done { c.exit_status() } else { None };
        ok(list!(done = done, status = status_r(status)).into())
    })
}

/// Close stdin, wait up to `grace` seconds, kill, reap (not interruptible:
/// for short graces).
/// @noRd
#[extendr]
fn rust_client_close(ptr: Robj, grace: f64) -> Robj {
    with_client(ptr, |c| {
        let grace = seconds(grace).unwrap_or(Duration::from_secs(1));
        ok(status_r(c.close(grace)))
    })
}

/// Checks of tool listings: `listings` is a named list (version -> list of
/// tools), newest first.
/// @noRd
#[extendr]
fn rust_check_listings(listings: List) -> Robj {
    let mut parsed = Vec::with_capacity(listings.len());
    for (version, tools) in listings.iter() {
        let tools = match from_r(&tools) {
            Ok(Value::Array(t)) => t,
            Ok(Value::Object(m)) if m.is_empty() => Vec::new(),
            Ok(_) => return fail_message("each listing must be a list of tools", "invalid"),
            Err(e) => return fail_message(&e, "invalid"),
        };
        parsed.push((version.to_string(), tools));
    }
    let findings: Vec<Value> = check_listings(&parsed).iter().map(|f| f.to_value()).collect();
    ok(own_r(&Value::Array(findings)))
}

/// A string argument that may be NULL (none).
fn optional_string(x: &Robj) -> Option<String> {
    if x.is_null() {
        None
    } else {
        x.as_str().map(str::to_string)
    }
}

/// One finding of `mcp_check()` about facts R found: `rule` names one of
/// the core's reported rules, which gives the severity and the fix unless
/// `fix` is given; `fix`, `tool` and `version` may be NULL. An R list in the
/// shape of the listing checks' findings.
/// @noRd
#[extendr]
fn rust_check_finding(rule: &str, message: &str, fix: Robj, tool: Robj, version: Robj) -> Robj {
    match Finding::reported(
        rule,
        message.to_string(),
        optional_string(&fix),
        optional_string(&tool),
        optional_string(&version),
    ) {
        Ok(f) => ok(own_r(&f.to_value())),
        Err(e) => fail_message(&e, "invalid"),
    }
}

/// `mcp_check()`'s findings (a list of what `rust_check_finding` and
/// `rust_check_listings` return) as its data frame: one character column per
/// field, errors first, then warnings, then notes.
/// @noRd
#[extendr]
fn rust_check_frame(findings: List) -> Robj {
    let mut values = Vec::with_capacity(findings.len());
    for (_, f) in findings.iter() {
        let Some(fields) = f.as_list() else { return fail_message("each finding must be a list", "invalid") };
        let map: Map<String, Value> = fields
            .iter()
            .filter_map(|(name, v)| optional_string(&v).map(|s| (name.to_string(), Value::String(s))))
            .collect();
        values.push(Value::Object(map));
    }
    let columns = match frame_columns(&values) {
        Ok(c) => c,
        Err(e) => return fail_message(&e, "invalid"),
    };
    let rows = columns.first().map_or(0, Vec::len);
    let columns: Vec<Robj> = columns
        .into_iter()
        .map(|col| Strings::from_values(col.into_iter().map(|s| s.map_or_else(Rstr::na, Rstr::from))).into())
        .collect();
    // Automatic row names, stored as R stores them: c(NA, -rows).
    let row_names: Robj = match i32::try_from(rows) {
        Ok(0) => Integers::from_values(Vec::<Rint>::new()).into(),
        Ok(n) => Integers::from_values([Rint::na(), Rint::from(-n)]).into(),
        Err(_) => return fail_message("too many findings", "invalid"),
    };
    let frame = List::from_names_and_values(FIELDS, columns).and_then(|l| {
        let mut frame: Robj = l.into();
        frame.set_attrib("row.names", row_names)?;
        frame.set_class(["data.frame"])?;
        Ok(frame)
    });
    match frame {
        Ok(f) => ok(f),
        Err(e) => fail_message(&e.to_string(), "invalid"),
    }
}

/// Indented JSON in the fixed encoding (for configuration snippets).
/// @noRd
#[extendr]
fn rust_json_pretty(x: Robj) -> Robj {
    match from_r(&x).and_then(|v| serde_json::to_string_pretty(&v).map_err(|e| e.to_string())) {
        Ok(s) => ok(s.into()),
        Err(e) => fail_message(&e, "invalid"),
    }
}

/// Standard base64 (with padding, no line breaks) of a raw vector.
/// @noRd
#[extendr]
fn rust_base64(x: Raw) -> Robj {
    let bytes = x.as_slice();
    let mut out = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    mcplite_core::rjson::write_base64(&mut out, bytes);
    // base64 output is ASCII.
    ok(String::from_utf8_lossy(&out).into_owned().into())
}

extendr_module! {
    mod client;
    fn rust_client_spawn;
    fn rust_client_begin_open;
    fn rust_client_begin_request;
    fn rust_client_begin_list_tools;
    fn rust_client_begin_call_tool;
    fn rust_client_step;
    fn rust_client_progress;
    fn rust_client_begin_call_async;
    fn rust_client_async_step;
    fn rust_client_async_cancel;
    fn rust_client_async_progress;
    fn rust_client_abandon;
    fn rust_client_notify;
    fn rust_client_notifications;
    fn rust_client_stderr;
    fn rust_client_state;
    fn rust_client_transcript;
    fn rust_client_check_output;
    fn rust_client_close_step;
    fn rust_client_close;
    fn rust_check_listings;
    fn rust_check_finding;
    fn rust_check_frame;
    fn rust_json_pretty;
    fn rust_base64;
}
