//! Spans produced by the core, read back from the OTLP JSON-lines exporter.

#[path = "support/host.rs"]
mod host;

use host::{tool, TestHost};
use mcplite_core::rjson::Options;
use mcplite_core::telemetry::{JsonLinesExporter, Telemetry};
use mcplite_core::{serve, Server, ServerInfo};
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde_json::{json, Value};
use std::io::Write;
use std::sync::{Arc, Mutex};

/// Serve `lines` with tracing into a buffer; return (stdout text, spans).
fn traced(lines: &[&str]) -> (String, Vec<Value>) {
    let (stdout, spans, _) = traced_with(lines);
    (stdout, spans)
}

/// A telemetry exporting into a buffer, and the buffer.
fn buffered() -> (Telemetry, Arc<Mutex<Vec<u8>>>) {
    let buf: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let sink: Arc<Mutex<dyn Write + Send>> = Arc::new(Mutex::new(Shared(buf.clone())));
    let provider = SdkTracerProvider::builder().with_simple_exporter(JsonLinesExporter::new(sink)).build();
    (Telemetry::from_provider(Some(provider)), buf)
}

fn spans_in(buf: &Arc<Mutex<Vec<u8>>>) -> Vec<Value> {
    let text = String::from_utf8(buf.lock().unwrap().clone()).unwrap();
    text.lines()
        .flat_map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let mut spans = vec![];
            for rs in v["resourceSpans"].as_array().unwrap() {
                for ss in rs["scopeSpans"].as_array().unwrap() {
                    spans.extend(ss["spans"].as_array().unwrap().iter().cloned());
                }
            }
            spans
        })
        .collect()
}

/// As `traced`, and the test host (what it was given).
fn traced_with(lines: &[&str]) -> (String, Vec<Value>, TestHost) {
    let (mut telemetry, buf) = buffered();
    let mut host = TestHost::default();
    let mut server = Server::new(
        vec![tool("echo"), tool("fail"), tool("later_echo")],
        None,
        ServerInfo { name: "s".into(), version: "1".into() },
        Options::default(),
    )
    .unwrap();
    let mut out = Vec::new();
    let signals = host.signals.clone();
    serve(
        std::io::Cursor::new(lines.join("\n").into_bytes()),
        &mut out,
        &mut server,
        &mut host,
        &|| signals.requests(),
        &mut telemetry,
    )
    .unwrap();
    telemetry.shutdown();
    (String::from_utf8(out).unwrap(), spans_in(&buf), host)
}

fn attr(span: &Value, key: &str) -> Option<String> {
    span["attributes"].as_array()?.iter().find(|a| a["key"] == key).map(|a| {
        let v = &a["value"];
        v.get("stringValue")
            .or(v.get("intValue"))
            .map(|x| x.as_str().map(str::to_string).unwrap_or(x.to_string()))
            .unwrap_or_default()
    })
}

const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[test]
fn one_server_span_per_valid_message() {
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{{"name":"echo","arguments":{{"secret":"argument-value"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"traceparent":"{TP}"}}}}}}"#
    );
    let (stdout, spans) = traced(&[
        "",
        "not json",
        "[1]",
        r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fail"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"nope"}"#,
        &call,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","_meta":{"traceparent":"garbage"}}}"#,
    ]);
    let names: Vec<&str> = spans.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["initialize", "notifications/initialized", "tools/call fail", "nope", "tools/call echo", "tools/call echo"]
    );
    for s in &spans {
        assert_eq!(s["kind"], json!(2), "SERVER kind");
        assert_eq!(attr(s, "network.transport").as_deref(), Some("pipe"));
    }
    let fail = &spans[2];
    assert_eq!(attr(fail, "error.type").as_deref(), Some("tool_error"));
    assert_eq!(fail["status"]["code"], json!(2));
    assert_eq!(attr(fail, "gen_ai.tool.name").as_deref(), Some("fail"));
    assert_eq!(attr(fail, "gen_ai.operation.name").as_deref(), Some("execute_tool"));
    assert_eq!(attr(fail, "mcp.protocol.version").as_deref(), Some("2025-06-18"));
    assert_eq!(attr(fail, "jsonrpc.request.id").as_deref(), Some("2"));
    let nope = &spans[3];
    assert_eq!(attr(nope, "error.type").as_deref(), Some("-32601"));
    assert_eq!(attr(nope, "rpc.response.status_code").as_deref(), Some("-32601"));
    let remote = &spans[4];
    assert_eq!(remote["traceId"], json!("4bf92f3577b34da6a3ce929d0e0e4736"));
    assert_eq!(remote["parentSpanId"], json!("00f067aa0ba902b7"));
    assert_eq!(attr(remote, "mcp.protocol.version").as_deref(), Some("2026-07-28"));
    assert_eq!(attr(remote, "jsonrpc.request.id").as_deref(), Some("c1"));
    let orphan = &spans[5];
    assert_ne!(orphan["traceId"], json!("4bf92f3577b34da6a3ce929d0e0e4736"));
    assert!(orphan["parentSpanId"].as_str().unwrap_or("").is_empty(), "malformed traceparent is ignored");
    let all = serde_json::to_string(&spans).unwrap();
    for secret in ["argument-value", "boom", "traceparent", TP] {
        assert!(!all.contains(secret), "span data must not contain {secret}");
    }
    assert_eq!(stdout.lines().count(), 8, "tracing does not change the answers");
}

#[test]
fn a_worker_call_span_joins_the_server_span() {
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"later_echo","arguments":{{"polls":3}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"traceparent":"{TP}"}}}}}}"#
    );
    let (stdout, spans, host) = traced_with(&[&call]);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let server = &spans[0];
    assert_eq!(server["name"], json!("tools/call later_echo"));
    // The worker is told the server span, not the client's.
    let tp = host.traceparents[0].clone().expect("a traced call passes its traceparent");
    let server_span = server["spanId"].as_str().unwrap();
    assert_eq!(tp, format!("00-4bf92f3577b34da6a3ce929d0e0e4736-{server_span}-01"));

    // The worker process has its own telemetry.
    let (mut worker, buf) = buffered();
    let span = worker.begin_worker_call("later_echo", &tp);
    worker.end_worker_call(span, true);
    let ok = worker.begin_worker_call("later_echo", "not a traceparent");
    worker.end_worker_call(ok, false);
    let spans = spans_in(&buf);
    assert_eq!(spans.len(), 2, "each span is exported when it ends: {spans:?}");
    let joined = &spans[0];
    assert_eq!(joined["name"], json!("execute_tool later_echo"));
    assert_eq!(joined["kind"], json!(1), "INTERNAL kind");
    assert_eq!(joined["traceId"], json!("4bf92f3577b34da6a3ce929d0e0e4736"));
    assert_eq!(joined["parentSpanId"], json!(server_span));
    assert_eq!(attr(joined, "gen_ai.tool.name").as_deref(), Some("later_echo"));
    assert_eq!(attr(joined, "error.type").as_deref(), Some("tool_error"));
    assert_eq!(joined["status"]["code"], json!(2));
    let root = &spans[1];
    assert!(root["parentSpanId"].as_str().unwrap_or("").is_empty(), "a malformed traceparent makes a root");
    assert_ne!(root["status"]["code"], json!(2));
}

#[test]
fn starting_workers_is_a_root_span_with_the_reason_when_it_failed() {
    let (mut telemetry, buf) = buffered();
    let ok = telemetry.begin_workers_start();
    telemetry.end_workers_start(ok, None);
    let failed = telemetry.begin_workers_start();
    telemetry.end_workers_start(failed, Some("cannot start the workers: no daemons"));
    telemetry.shutdown();
    let spans = spans_in(&buf);
    assert_eq!(spans.len(), 2);
    for span in &spans {
        assert_eq!(span["name"], json!("start workers"));
        assert_eq!(span["parentSpanId"], json!(""), "a root span: {span}");
    }
    assert_eq!(attr(&spans[0], "error.type"), None);
    assert_eq!(attr(&spans[1], "error.type").as_deref(), Some("workers_start"));
    assert_eq!(spans[1]["status"]["code"], json!(2));
    assert_eq!(spans[1]["status"]["message"], json!("cannot start the workers: no daemons"));
}
