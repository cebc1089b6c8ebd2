//! Spans that tool code starts with R's otel package. mcplite offers otel a
//! tracer provider (R/otel.R) whose spans live here, in the same SDK as the
//! server spans: a span started while a tool runs is a child of the server
//! span (or of the innermost span the tool activated) and reaches the same
//! exporter.

use crate::sexp::Sx;
use extendr_api::prelude::*;
use mcplite_core::r::{is_na_real, RType, RValue};
use mcplite_core::telemetry::{Span, Telemetry};
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, ContextGuard, KeyValue, Value as OtelValue};
use opentelemetry_sdk::trace::SdkTracer;
use std::cell::RefCell;

thread_local! {
    /// The server's tracer while a traced server runs.
    // Global because R's otel package reaches it from tool code through `.Call`
    // (`rust_otel_*`), which carries no handle to the serving telemetry.
    static TRACER: RefCell<Option<SdkTracer>> = const { RefCell::new(None) };
    /// Contexts activated from R, innermost last.
    // Global because spans are entered and left by separate `.Call`s from R.
    static ACTIVE: RefCell<Vec<(u64, ContextGuard)>> = const { RefCell::new(Vec::new()) };
}

pub fn set_tracer(tracer: Option<SdkTracer>) {
    TRACER.with(|t| *t.borrow_mut() = tracer);
    if TRACER.with(|t| t.borrow().is_none()) {
        ACTIVE.with(|a| a.borrow_mut().clear());
    }
}

/// An R-side span: its own context (parent + this span).
pub struct RSpan {
    cx: Context,
    id: u64,
}

/// Span attributes from a named R list, read with the reader the serializer
/// uses (read-only access, R's missing values seen as such). OpenTelemetry
/// has no missing value, so an attribute holding an `NA` (in any element) is
/// left out, as are values of other types and unnamed elements.
fn key_values(attributes: &Robj) -> Vec<KeyValue> {
    let list = Sx::borrowed(attributes);
    if list.rtype() != RType::List {
        return vec![];
    }
    let Some(names) = list.attr("names") else { return vec![] };
    let mut out = Vec::new();
    for i in 0..list.len() {
        let Some(name) = names.str_elt(i).map(|n| String::from_utf8_lossy(&n).into_owned()) else { continue };
        if name.is_empty() {
            continue;
        }
        if let Some(value) = otel_value(&list.list_elt(i)) {
            out.push(KeyValue::new(name, value));
        }
    }
    out
}

/// A name or text for telemetry, read as span attributes are (translated to
/// UTF-8; bytes that are not UTF-8 replaced); "" for anything but a string.
fn label(x: &Robj) -> String {
    mcplite_core::r::string1(&Sx::borrowed(x)).unwrap_or_default()
}

fn otel_value(x: &Sx) -> Option<OtelValue> {
    use opentelemetry::{Array, StringValue};
    let n = x.len();
    if n == 0 {
        return None;
    }
    match x.rtype() {
        RType::Character => {
            let mut v = Vec::with_capacity(n);
            for i in 0..n {
                v.push(String::from_utf8_lossy(&x.str_elt(i)?).into_owned());
            }
            Some(if n == 1 {
                OtelValue::from(v.swap_remove(0))
            } else {
                OtelValue::Array(Array::String(v.into_iter().map(StringValue::from).collect()))
            })
        }
        RType::Logical => {
            let l = x.logicals();
            if l.contains(&i32::MIN) {
                return None;
            }
            let b: Vec<bool> = l.iter().map(|v| *v != 0).collect();
            Some(if n == 1 { OtelValue::Bool(b[0]) } else { OtelValue::Array(Array::Bool(b)) })
        }
        RType::Integer => {
            let l = x.integers();
            if l.contains(&i32::MIN) {
                return None;
            }
            let v: Vec<i64> = l.iter().map(|v| *v as i64).collect();
            Some(if n == 1 { OtelValue::I64(v[0]) } else { OtelValue::Array(Array::I64(v)) })
        }
        RType::Double => {
            let d = x.doubles();
            if d.iter().any(|v| is_na_real(*v)) {
                return None;
            }
            Some(if n == 1 { OtelValue::F64(d[0]) } else { OtelValue::Array(Array::F64(d.to_vec())) })
        }
        _ => None,
    }
}

fn span_kind(kind: &str) -> SpanKind {
    match kind {
        "server" => SpanKind::Server,
        "client" => SpanKind::Client,
        "producer" => SpanKind::Producer,
        "consumer" => SpanKind::Consumer,
        _ => SpanKind::Internal,
    }
}

/// Start a span under the current context; NULL when no traced server runs.
/// @noRd
#[extendr]
fn rust_otel_start_span(name: Robj, attributes: Robj, kind: Robj) -> Robj {
    let (name, kind) = (label(&name), label(&kind));
    TRACER.with(|t| {
        let t = t.borrow();
        let Some(tracer) = t.as_ref() else { return ().into() };
        let parent = Context::current();
        let span = tracer
            .span_builder(name)
            .with_kind(span_kind(&kind))
            .with_attributes(key_values(&attributes))
            .start_with_context(tracer, &parent);
        let cx = parent.with_span(span);
        let id = u64::from_be_bytes(cx.span().span_context().span_id().to_bytes());
        ExternalPtr::new(RSpan { cx, id }).into()
    })
}

fn with_span(ptr: Robj, f: impl FnOnce(&RSpan)) -> Robj {
    if let Ok(span) = ExternalPtr::<RSpan>::try_from(&ptr) {
        f(&span);
    }
    ().into()
}

/// @noRd
#[extendr]
fn rust_otel_span_set_attributes(ptr: Robj, attributes: Robj) -> Robj {
    with_span(ptr, |s| s.cx.span().set_attributes(key_values(&attributes)))
}

/// @noRd
#[extendr]
fn rust_otel_span_add_event(ptr: Robj, name: Robj, attributes: Robj) -> Robj {
    let name = label(&name);
    with_span(ptr, |s| s.cx.span().add_event(name, key_values(&attributes)))
}

/// @noRd
#[extendr]
fn rust_otel_span_set_status(ptr: Robj, code: Robj, description: Robj) -> Robj {
    let (code, description) = (label(&code), label(&description));
    with_span(ptr, |s| {
        let status = match code.as_str() {
            "ok" => Status::Ok,
            "error" => Status::error(description),
            _ => Status::Unset,
        };
        s.cx.span().set_status(status)
    })
}

/// @noRd
#[extendr]
fn rust_otel_span_update_name(ptr: Robj, name: Robj) -> Robj {
    let name = label(&name);
    with_span(ptr, |s| s.cx.span().update_name(name))
}

/// @noRd
#[extendr]
fn rust_otel_span_end(ptr: Robj) -> Robj {
    with_span(ptr, |s| s.cx.span().end())
}

/// Make the span current, so spans started next become its children.
/// @noRd
#[extendr]
fn rust_otel_span_activate(ptr: Robj) -> Robj {
    with_span(ptr, |s| {
        let guard = s.cx.clone().attach();
        ACTIVE.with(|a| a.borrow_mut().push((s.id, guard)));
    })
}

/// Undo the span's activation (and any left open inside it).
/// @noRd
#[extendr]
fn rust_otel_span_deactivate(ptr: Robj) -> Robj {
    with_span(ptr, |s| {
        ACTIVE.with(|a| {
            let mut a = a.borrow_mut();
            if let Some(pos) = a.iter().rposition(|(id, _)| *id == s.id) {
                while a.len() > pos {
                    a.pop();
                }
            }
        })
    })
}

/// `c(trace_id, span_id)` as hex, for otel's span context objects.
/// @noRd
#[extendr]
fn rust_otel_span_ids(ptr: Robj) -> Robj {
    let mut out: Robj = ().into();
    with_span(ptr, |s| {
        let sc = s.cx.span().span_context().clone();
        out = r!([sc.trace_id().to_string(), sc.span_id().to_string()]);
    });
    out
}

// ---- tracing in a worker process (mcp_server(workers = )) -------------------

thread_local! {
    /// The worker process's own tracing, from the same OTEL_* variables the
    /// server reads; set up by the first traced call.
    // Global because a worker's `.Call`s (`rust_worker_*`) are separate calls
    // from mirai tasks and carry no handle; it lives as long as the daemon.
    static WORKER: RefCell<Option<Telemetry>> = const { RefCell::new(None) };
    /// The span of the call running on this worker, current while it runs.
    // Global because the span is opened and closed by separate `.Call`s.
    static WORKER_CALL: RefCell<Option<(Span, Option<ContextGuard>)>> = const { RefCell::new(None) };
}

/// On a worker: set up tracing from the environment; whether it is on.
/// Spans that tool code starts with otel then go to this process's exporter.
/// @noRd
#[extendr]
fn rust_worker_tracing_start() -> bool {
    WORKER.with(|w| {
        let mut w = w.borrow_mut();
        if w.is_none() {
            let telemetry = Telemetry::from_env_opening(&crate::platform::open_append_nonblocking);
            set_tracer(telemetry.tracer().cloned());
            *w = Some(telemetry);
        }
        w.as_ref().is_some_and(Telemetry::is_enabled)
    })
}

/// On a worker: open the call's span as a child of the server span named by
/// `traceparent`, and make it current. Whether a span was opened.
/// @noRd
#[extendr]
fn rust_worker_span_begin(traceparent: Robj, tool: Robj) -> bool {
    let (traceparent, tool) = (label(&traceparent), label(&tool));
    end_worker_call(false);
    WORKER.with(|w| {
        let w = w.borrow();
        let Some(telemetry) = w.as_ref().filter(|t| t.is_enabled()) else { return false };
        let span = telemetry.begin_worker_call(&tool, &traceparent);
        let guard = telemetry.enter(&span);
        WORKER_CALL.with(|c| *c.borrow_mut() = Some((span, guard)));
        true
    })
}

/// On a worker: close the call's span and export it.
/// @noRd
#[extendr]
fn rust_worker_span_end(failed: bool) {
    end_worker_call(failed);
}

fn end_worker_call(failed: bool) {
    let Some((span, guard)) = WORKER_CALL.with(|c| c.borrow_mut().take()) else { return };
    // Spans the tool activated and left open are no longer current.
    ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        while a.pop().is_some() {}
    });
    drop(guard);
    WORKER.with(|w| {
        if let Some(telemetry) = w.borrow_mut().as_mut() {
            telemetry.end_worker_call(span, failed);
        }
    });
}

extendr_module! {
    mod otel;
    fn rust_worker_tracing_start;
    fn rust_worker_span_begin;
    fn rust_worker_span_end;
    fn rust_otel_start_span;
    fn rust_otel_span_set_attributes;
    fn rust_otel_span_add_event;
    fn rust_otel_span_set_status;
    fn rust_otel_span_update_name;
    fn rust_otel_span_end;
    fn rust_otel_span_activate;
    fn rust_otel_span_deactivate;
    fn rust_otel_span_ids;
}
