//! R entry points of the MCP client (`mcp_client()`, `mcp_check()`), the
//! listing checks, pretty JSON for `mcp_config()` and base64 for
//! `plot_image()`. The protocol logic lives in `mcplite_core::client` and
//! `mcplite_core::check`; this file only converts between R and JSON.
//!
//! Every entry point returns `list(value, error)`. A client error is a list
//! with `kind` (spawn, exited, timeout, rpc, protocol, version, closed,
//! invalid), `message`, and when they apply `code`, `data`, `status`,
//! `seconds` (timeouts) and the server's `stderr`.

use extendr_api::prelude::*;
use mcplite_core::check::check_listings;
use mcplite_core::client::{Client, ClientError, Launch};
use serde_json::{Map, Value};
use std::time::Duration;

/// JSON -> R (the one place this file does it), with the mapping tool
/// arguments get (`r::args`): the value is read back through the core's JSON
/// reader, so a string R cannot hold is an error, not an R error.
fn to_r(v: &Value) -> std::result::Result<Robj, String> {
    let doc = mcplite_core::json::Doc::parse(v.to_string().into_bytes()).map_err(|e| e.to_string())?;
    mcplite_core::r::args::check_json(doc.root()).map_err(|e| format!("the server sent a value R cannot hold: {e}"))?;
    crate::build::value(doc.root()).ok_or_else(|| "the server sent a value too large for R".to_string())
}

/// `list(value = <v as R>, error = NULL)`, or an "invalid" error.
fn ok_json(v: &Value) -> Robj {
    match to_r(v) {
        Ok(x) => ok(x),
        Err(e) => fail_message(&e, "invalid"),
    }
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
    let (kind, code, data, status) = match e {
        ClientError::Spawn(_) => ("spawn", None, None, None),
        ClientError::Exited { status, .. } => ("exited", None, None, *status),
        ClientError::Timeout { .. } => ("timeout", None, None, None),
        ClientError::Rpc { code, data, .. } => {
            ("rpc", Some(*code as f64), data.as_ref().and_then(|d| to_r(d).ok()), None)
        }
        ClientError::Protocol(_) => ("protocol", None, None, None),
        ClientError::Version { .. } => ("version", None, None, None),
        ClientError::Closed => ("closed", None, None, None),
        ClientError::Invalid(_) => ("invalid", None, None, None),
    };
    let stderr = client.map(|c| c.stderr_text());
    let message = match e {
        ClientError::Rpc { message, .. } => message.clone(),
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

fn named_strings(x: &Robj) -> Vec<(String, String)> {
    let Some(values) = x.as_str_vector() else { return Vec::new() };
    let names: Vec<String> = match x.names() {
        Some(n) => n.map(str::to_string).collect(),
        None => return Vec::new(),
    };
    names.into_iter().zip(values.into_iter().map(str::to_string)).collect()
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
    program: &str,
    args: Robj,
    env: Robj,
    clear_env: bool,
    cwd: Robj,
    protocol: &str,
    client_info: Robj,
) -> Robj {
    let launch = Launch {
        program: program.to_string(),
        args: args.as_str_vector().map(|v| v.into_iter().map(str::to_string).collect()).unwrap_or_default(),
        clear_env,
        env: named_strings(&env),
        cwd: cwd.as_str().map(str::to_string),
    };
    let info = match from_r(&client_info) {
        Ok(v) => v,
        Err(e) => return fail_message(&format!("client_info: {e}"), "invalid"),
    };
    match Client::spawn(&launch, protocol, info) {
        Ok(client) => ok(ExternalPtr::new(client).into()),
        Err(e) => fail(&e, None),
    }
}

/// The handshake of the client's protocol version.
/// @noRd
#[extendr]
fn rust_client_open(ptr: Robj, timeout: f64) -> Robj {
    with_client(ptr, |c| match seconds(timeout) {
        Err(e) => fail_message(&e, "invalid"),
        Ok(t) => match c.open(t) {
            Ok(v) => ok_json(&v),
            Err(e) => fail(&e, Some(c)),
        },
    })
}

/// Any request; `params` is NULL or a named list.
/// @noRd
#[extendr]
fn rust_client_request(ptr: Robj, method: &str, params: Robj, timeout: f64) -> Robj {
    with_client(ptr, |c| {
        let (params, t) = match (object(&params, "params"), seconds(timeout)) {
            (Ok(p), Ok(t)) => (p, t),
            (Err(e), _) | (_, Err(e)) => return fail_message(&e, "invalid"),
        };
        match c.request(method, params, t) {
            Ok(v) => ok_json(&v),
            Err(e) => fail(&e, Some(c)),
        }
    })
}

/// A notification to the server.
/// @noRd
#[extendr]
fn rust_client_notify(ptr: Robj, method: &str, params: Robj) -> Robj {
    with_client(ptr, |c| {
        let params = match object(&params, "params") {
            Ok(p) => p,
            Err(e) => return fail_message(&e, "invalid"),
        };
        match c.notify(method, params) {
            Ok(()) => ok(().into()),
            Err(e) => fail(&e, Some(c)),
        }
    })
}

/// Every tool, following pagination.
/// @noRd
#[extendr]
fn rust_client_list_tools(ptr: Robj, timeout: f64) -> Robj {
    with_client(ptr, |c| match seconds(timeout) {
        Err(e) => fail_message(&e, "invalid"),
        Ok(t) => match c.list_tools(t) {
            Ok(tools) => ok_json(&Value::Array(tools)),
            Err(e) => fail(&e, Some(c)),
        },
    })
}

/// `tools/call`; a tool error comes back as a result with `isError`.
/// @noRd
#[extendr]
fn rust_client_call_tool(ptr: Robj, name: &str, arguments: Robj, timeout: f64) -> Robj {
    with_client(ptr, |c| {
        let (args, t) = match (object(&arguments, "arguments"), seconds(timeout)) {
            (Ok(a), Ok(t)) => (a.unwrap_or_else(|| Value::Object(Map::new())), t),
            (Err(e), _) | (_, Err(e)) => return fail_message(&e, "invalid"),
        };
        match c.call_tool(name, args, t) {
            Ok(v) => ok_json(&v),
            Err(e) => fail(&e, Some(c)),
        }
    })
}

/// Notifications received so far.
/// @noRd
#[extendr]
fn rust_client_notifications(ptr: Robj, clear: bool) -> Robj {
    with_client(ptr, |c| ok_json(&Value::Array(c.notifications(clear))))
}

/// What the server wrote on stderr so far.
/// @noRd
#[extendr]
fn rust_client_stderr(ptr: Robj) -> Robj {
    with_client(ptr, |c| ok(c.stderr_text().into()))
}

/// The client's state: process, version, handshake answer, timing, and what
/// arrived outside of answers (stray stdout lines, server requests,
/// responses that matched no request).
/// @noRd
#[extendr]
fn rust_client_state(ptr: Robj) -> Robj {
    with_client(ptr, |c| {
        let alive = c.is_alive();
        let exit = c.exit_status();
        let stray: Vec<Robj> =
            c.stray_lines().into_iter().map(|s| list!(at_ms = s.at_ms, text = s.text).into()).collect();
        let first = c.first_response().map(|d| d.as_secs_f64() * 1000.0);
        let state = list!(
            pid = c.pid() as f64,
            protocol = c.protocol(),
            alive = alive,
            closed = c.is_closed(),
            opened = c.opened().and_then(|o| to_r(o).ok()).unwrap_or_else(|| ().into()),
            first_response_ms = nullable(first),
            elapsed_ms = c.elapsed().as_secs_f64() * 1000.0,
            exit_code = nullable(exit.as_ref().and_then(|e| e.0)),
            exit = nullable(exit.map(|e| e.1)),
            stray = List::from_values(stray),
            server_requests = to_r(&Value::Array(c.server_requests())).unwrap_or_else(|_| ().into()),
            unmatched = to_r(&Value::Array(c.unmatched())).unwrap_or_else(|_| ().into()),
            last_response = nullable(c.last_response().map(str::to_string))
        );
        ok(state.into())
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

/// Close stdin, wait up to `grace` seconds, kill, reap.
/// @noRd
#[extendr]
fn rust_client_close(ptr: Robj, grace: f64) -> Robj {
    with_client(ptr, |c| {
        let grace = seconds(grace).unwrap_or(Duration::from_secs(1));
        let status = c.close(grace);
        let out = list!(code = nullable(status.as_ref().and_then(|s| s.0)), exit = nullable(status.map(|s| s.1)));
        ok(out.into())
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
    ok_json(&Value::Array(findings))
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
    fn rust_client_open;
    fn rust_client_request;
    fn rust_client_notify;
    fn rust_client_list_tools;
    fn rust_client_call_tool;
    fn rust_client_notifications;
    fn rust_client_stderr;
    fn rust_client_state;
    fn rust_client_transcript;
    fn rust_client_close;
    fn rust_check_listings;
    fn rust_json_pretty;
    fn rust_base64;
}
