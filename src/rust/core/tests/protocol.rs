//! End-to-end routing tests of the core over an in-memory transport, with a
//! Rust tool host standing in for R.

#[path = "support/host.rs"]
mod host;

use host::{tool, TestHost, Watched};
use mcplite_core::dispatch::StopRequests;
use mcplite_core::rjson::Options;
use mcplite_core::telemetry::Telemetry;
use mcplite_core::{serve, Ending, Server, ServerInfo};
use serde_json::{json, Value};

fn server(names: &[&'static str]) -> Server<&'static str> {
    Server::new(
        names.iter().map(|n| tool(n)).collect(),
        Some("Be nice.".into()),
        ServerInfo { name: "mcplite".into(), version: "0.1.0".into() },
        Options::default(),
    )
    .unwrap()
}

fn run_with(lines: &[&str], host: &mut TestHost) -> Vec<Value> {
    let mut server =
        server(&["echo", "fail", "speak", "rows", "panics", "later_echo", "later_rows", "tampered", "frame"]);
    let input = lines.join("\n");
    let mut out = Vec::new();
    let input = std::io::BufReader::new(Watched::new(std::io::Cursor::new(input.into_bytes()), host));
    let signals = host.signals.clone();
    let ending =
        serve(input, &mut out, &mut server, host, &|| signals.requests(), &mut Telemetry::from_provider(None)).unwrap();
    assert_eq!(ending, Ending::EndOfInput);
    let text = String::from_utf8(out).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'));
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn run(lines: &[&str]) -> (Vec<Value>, usize) {
    let mut host = TestHost::default();
    let r = run_with(lines, &mut host);
    (r, host.calls)
}

const M: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

#[test]
fn legacy_handshake_list_and_call() {
    let (r, calls) = run(&[
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"a":[1,2]}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"speak"}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
    ]);
    assert_eq!(r.len(), 5);
    assert_eq!(r[0]["result"]["protocolVersion"], json!("2024-11-05"));
    assert!(r[0]["result"].get("instructions").is_none(), "not in 2024-11-05, as CRAN mcplite");
    assert_eq!(r[0]["result"]["capabilities"], json!({"tools":{"listChanged":false}}));
    assert_eq!(r[1]["result"]["tools"].as_array().unwrap().len(), 9);
    assert!(r[1]["result"].get("resultType").is_none());
    assert_eq!(r[2]["result"]["content"][0]["text"], json!("{\"a\":[1,2]}"));
    assert_eq!(r[3]["result"]["isError"], json!(true));
    assert_eq!(r[4], json!({"jsonrpc":"2.0","id":4,"result":{}}));
    assert_eq!(calls, 2);
}

#[test]
fn modern_requests_need_no_initialize() {
    let (r, _) = run(&[
        &format!(r#"{{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{{{M}}}}}"#),
        &format!(r#"{{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{{{M}}}}}"#),
        &format!(r#"{{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{{"name":"rows",{M}}}}}"#),
        &format!(r#"{{"jsonrpc":"2.0","id":"p","method":"ping","params":{{{M}}}}}"#),
    ]);
    assert_eq!(
        r[0]["result"],
        json!({"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2024-11-05"],
               "capabilities":{"tools":{"listChanged":false}},"instructions":"Be nice.","ttlMs":300000,"cacheScope":"public",
               "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcplite","version":"0.1.0"}}})
    );
    assert_eq!(r[1]["result"]["resultType"], json!("complete"));
    assert_eq!(r[1]["result"]["ttlMs"], json!(300000));
    assert_eq!(r[2]["result"]["structuredContent"], json!([{"a":1}]));
    assert_eq!(r[2]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], json!("mcplite"));
    assert_eq!(r[3]["error"]["code"], json!(-32601));
}

#[test]
fn modern_metadata_errors() {
    let (r, _) = run(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-03-26","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"server/discover"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
    ]);
    assert_eq!(r[0]["error"]["code"], json!(-32602));
    assert_eq!(r[1]["error"]["code"], json!(-32022));
    assert_eq!(r[1]["error"]["data"]["requested"], json!("2025-03-26"));
    assert_eq!(r[1]["error"]["data"]["supported"][0], json!("2026-07-28"));
    assert_eq!(r[2]["error"]["code"], json!(-32602));
    assert_eq!(r[3]["error"]["code"], json!(-32600), "no initialize and no _meta");
    assert!(r[3]["error"]["message"].as_str().unwrap().contains("not initialized"));
}

#[test]
fn call_params_errors_and_notifications() {
    let (r, calls) = run(&[
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":[1]}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","method":"whatever"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"resources/list"}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":"x"}}"#,
    ]);
    let codes: Vec<_> = r.iter().skip(1).map(|x| x["error"]["code"].clone()).collect();
    assert_eq!(codes, vec![json!(-32602), json!(-32602), json!(-32602), json!(-32601), json!(-32602)]);
    assert_eq!(calls, 0, "a tools/call notification runs nothing");
}

#[test]
fn legacy_state_never_leaks_into_modern_requests() {
    let (r, _) = run(&[
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"speak",{M}}}}}"#),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rows"}}"#,
    ]);
    assert_eq!(r[1]["result"]["content"][0]["type"], json!("audio"));
    assert!(r[2]["result"].get("structuredContent").is_none());
    assert_eq!(r[2]["result"]["content"][0]["text"], json!("[{\"a\":1}]"));
}

#[test]
fn identical_requests_give_identical_bytes() {
    let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{M}}}}}"#);
    let (a, _) = run(&[&line]);
    let (b, _) = run(&[&line, &line]);
    assert_eq!(a[0], b[0]);
    assert_eq!(b[0], b[1]);
}

#[test]
fn cancelled_requests_get_no_answer() {
    let (r, calls) = run(&[
        &format!(
            r#"{{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{{"name":"echo","arguments":{{"await_input":true}},{M}}}}}"#
        ),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}"#,
        &format!(r#"{{"jsonrpc":"2.0","id":"next","method":"tools/call","params":{{"name":"echo",{M}}}}}"#),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"other"}}"#,
    ]);
    // "slow" runs, or never starts when the reader has read its
    // cancellation before the handler reaches it.
    assert!((1..=2).contains(&calls), "{calls}");
    assert_eq!(r.len(), 1, "the cancelled request is not answered: {r:?}");
    assert_eq!(r[0]["id"], json!("next"));
}

#[test]
fn a_panic_still_gives_one_answer_and_the_server_goes_on() {
    let (r, calls) = run(&[
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"panics",{M}}}}}"#),
        &format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo",{M}}}}}"#),
    ]);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0], json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}));
    assert_eq!(r[1]["result"]["content"][0]["text"], json!("{}"));
    assert_eq!(calls, 2, "both calls reached the host");
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;

#[test]
fn notifications_sent_as_requests_are_invalid_requests() {
    let (r, _) = run(&[INIT, r#"{"jsonrpc":"2.0","id":1,"method":"notifications/initialized"}"#]);
    assert_eq!(r[1]["error"]["code"], json!(-32600));
    let (r, _) = run(&[INIT]);
    assert_eq!(r[0]["result"]["instructions"], json!("Be nice."), "2025-11-25 carries instructions");
}

#[test]
fn successful_calls_say_is_error_false() {
    let (r, _) = run(&[&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo",{M}}}}}"#)]);
    assert_eq!(r[0]["result"]["isError"], json!(false));
}

#[test]
fn initialize_params_are_checked_for_the_version_negotiated() {
    let init = |params: &str| format!(r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{params}}}"#);
    let cases = [
        (r#"{"protocolVersion":"2025-11-25"}"#, "capabilities is required"),
        (r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#, "clientInfo is required"),
        (
            r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c"}}"#,
            "clientInfo.version is required",
        ),
        (
            r#"{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":1,"version":"1"}}"#,
            "clientInfo.name must be a string",
        ),
        (
            r#"{"protocolVersion":"2025-06-18","capabilities":[],"clientInfo":{"name":"c","version":"1"}}"#,
            "capabilities must be an object",
        ),
        (
            r#"{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":1}},"clientInfo":{"name":"c","version":"1"}}"#,
            "capabilities.roots.listChanged must be a boolean",
        ),
        (
            r#"{"protocolVersion":2025,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}"#,
            "protocolVersion must be a string",
        ),
        (r#"{"capabilities":{},"clientInfo":{"name":"c","version":"1"}}"#, "protocolVersion is required"),
    ];
    for (params, want) in cases {
        let (r, _) = run(&[&init(params)]);
        assert_eq!(r[0]["error"]["code"], json!(-32602), "{params}");
        let msg = r[0]["error"]["message"].as_str().unwrap();
        assert!(msg.contains(want), "{params}: {msg}");
    }
    // A field the negotiated version does not define is free.
    let (r, _) = run(&[&init(
        r#"{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1","title":3}}"#,
    )]);
    assert_eq!(r[0]["result"]["protocolVersion"], json!("2024-11-05"));
    // A failed initialize negotiates nothing.
    let (r, _) =
        run(&[&init(r#"{"protocolVersion":"2025-11-25"}"#), r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#]);
    assert_eq!(r[1]["error"]["code"], json!(-32600));
}

#[test]
fn modern_meta_is_checked() {
    let req = |meta: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{meta}}}}}"#);
    let pv = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#;
    let caps = r#""io.modelcontextprotocol/clientCapabilities":{}"#;
    let cases = [
        (format!(r#"{{{pv},{caps},"io.modelcontextprotocol/logLevel":"loud"}}"#), "logLevel\"] must be one of"),
        (format!(r#"{{{pv},{caps},"io.modelcontextprotocol/logLevel":3}}"#), "logLevel\"] must be a string"),
        (
            format!(r#"{{{pv},{caps},"io.modelcontextprotocol/clientInfo":{{"name":"c"}}}}"#),
            "clientInfo\"].version is required",
        ),
        (
            format!(r#"{{{pv},"io.modelcontextprotocol/clientCapabilities":[]}}"#),
            "clientCapabilities\"] must be an object",
        ),
        (
            format!(r#"{{{pv},"io.modelcontextprotocol/clientCapabilities":"x"}}"#),
            "clientCapabilities\"] must be an object",
        ),
        (format!(r#"{{{pv}}}"#), "missing required _meta[\"io.modelcontextprotocol/clientCapabilities\"]"),
        (
            r#"{"io.modelcontextprotocol/logLevel":"info"}"#.to_string(),
            "missing required _meta[\"io.modelcontextprotocol/protocolVersion\"]",
        ),
        (format!(r#"{{"io.modelcontextprotocol/protocolVersion":7,{caps}}}"#), "protocolVersion\"] must be a string"),
        (format!(r#"{{{pv},{caps},"progressToken":1.5}}"#), "progressToken must be a string or an integer"),
    ];
    for (meta, want) in cases {
        let (r, _) = run(&[INIT, &req(&meta)]);
        assert_eq!(r[1]["error"]["code"], json!(-32602), "{meta}");
        let msg = r[1]["error"]["message"].as_str().unwrap();
        assert!(msg.contains(want), "{meta}: {msg}");
    }
    let (r, _) = run(&[&req(&format!(
        r#"{{{pv},{caps},"io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/clientInfo":{{"name":"c","version":"1"}},"progressToken":"p","x":1}}"#
    ))]);
    assert_eq!(r[0]["result"]["resultType"], json!("complete"));
}

#[test]
fn worker_calls_are_answered_as_they_finish() {
    let call = |id: &str, tool: &str, polls: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"{tool}","arguments":{{"polls":{polls}}},{M}}}}}"#
        )
    };
    let mut host = TestHost::default();
    let r = run_with(
        &[
            &call("slow", "later_echo", 50),
            &call("fast", "later_rows", 1),
            &format!(r#"{{"jsonrpc":"2.0","id":"list","method":"tools/list","params":{{{M}}}}}"#),
            &call("inproc", "echo", 0),
        ],
        &mut host,
    );
    let ids: Vec<&str> = r.iter().map(|x| x["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 4, "{r:?}");
    assert_eq!(ids.last(), Some(&"slow"), "the slow call is answered last: {ids:?}");
    assert!(ids.iter().position(|i| *i == "fast") < ids.iter().position(|i| *i == "slow"));
    let slow = r.iter().find(|x| x["id"] == "slow").unwrap();
    assert_eq!(slow["result"]["content"][0]["text"], json!("{\"polls\":50}"));
}

#[test]
fn cancelling_a_worker_call_stops_it_and_sends_nothing() {
    let mut host = TestHost::default();
    let r = run_with(
        &[
            &format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"later_echo","arguments":{{"polls":100000}},{M}}}}}"#
            ),
            r#"{"jsonrpc":"2.0","method":"notifications\/cancelled","params":{"requestId":7.0}}"#,
            &format!(r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{"name":"echo",{M}}}}}"#),
        ],
        &mut host,
    );
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0]["id"], json!(8));
    // Started (then stopped), or never started when the reader had read
    // the cancellation before the handler reached it.
    assert_eq!(host.cancelled.len(), host.calls - 1);
}

#[test]
fn cancellations_match_ids_exactly() {
    let slow = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"await_input":true}},{M}}}}}"#
        )
    };
    let cancel =
        |id: &str| format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#);
    for (sent, cancelled, dropped) in [
        ("1", "1e0", true),
        ("1", "10e-1", true),
        ("1", "\"1\"", false),
        ("\"1\"", "1", false),
        ("\"a\"", "\"\\u0061\"", true),
        ("18446744073709551616", "18446744073709551617", false),
        ("18446744073709551617", "18446744073709551617", true),
    ] {
        let (r, _) = run(&[&slow(sent), &cancel(cancelled)]);
        assert_eq!(r.is_empty(), dropped, "request {sent}, cancellation {cancelled}: {r:?}");
    }
}

#[test]
fn results_are_checked_before_they_are_written() {
    let (r, _) =
        run(&[&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"tampered",{M}}}}}"#)]);
    assert_eq!(r.len(), 1, "no injected line: {r:?}");
    assert_eq!(r[0]["result"]["isError"], json!(true));
    assert!(r[0]["result"]["content"][0]["text"].as_str().unwrap().contains("structured_json"));
    let (r, _) =
        run(&[&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"frame",{M}}}}}"#)]);
    assert_eq!(r[0]["result"]["content"][0]["text"], json!("[{\"x\":1,\"y\":\"a\"},{\"x\":2}]"));
}

#[test]
fn arguments_r_cannot_hold_are_tool_errors() {
    let (r, calls) = run(&[
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"x":"a\u0000b"}},{M}}}}}"#
        ),
        &format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo","arguments":{{"x":"\ud800"}},{M}}}}}"#
        ),
    ]);
    assert_eq!(calls, 1, "the NUL argument never reaches the host");
    assert_eq!(r[0]["result"]["isError"], json!(true));
    assert!(r[0]["result"]["content"][0]["text"].as_str().unwrap().contains("`x`"));
    assert_eq!(r[1]["result"]["isError"], json!(false));
}

#[test]
fn truthful_errors_for_what_the_reader_cannot_hold() {
    let deep = format!("{}{}", "[".repeat(3000), "]".repeat(3000));
    let (r, _) = run(&[
        INIT,
        r#"{"jsonrpc":"2.0","methodExtra":1}"#,
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{deep}}}}}}}"#
        ),
        &format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo","arguments":{{"x":{deep}}}}}}}"#
        ),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"x":1e400}}}"#,
    ]);
    assert_eq!(
        r[1],
        json!({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: method must be a string"}})
    );
    assert_eq!(r[2]["error"]["message"], json!("Invalid params: _meta is nested deeper than 512 levels"));
    assert!(r[3]["result"]["content"][0]["text"].as_str().unwrap().contains("nested deeper than 512"));
    assert_eq!(r[4]["result"]["isError"], json!(false));
    // Metadata nested past 512 levels is refused, saying so; a deep params
    // member nothing reads is no reason to refuse a request.
    let (r, _) = run(&[&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{"experimental":{{"x":{{"y":{deep}}}}}}}}},"z":{deep}}}}}"#
    )]);
    assert_eq!(r[0]["error"]["message"], json!("Invalid params: _meta is nested deeper than 512 levels"));
    let (r, _) = run(&[&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}},"z":{deep}}}}}"#
    )]);
    assert_eq!(r[0]["result"]["resultType"], json!("complete"));
}

/// Serves `input` until it ends (which must be how serving ends) and
/// returns the ids of the answers in order, and the output.
fn serve_to_end<H: mcplite_core::ToolHost<Fun = &'static str>>(
    input: impl std::io::Read + Send + 'static,
    server: &mut Server<&'static str>,
    host: &mut H,
) -> (Vec<Value>, String) {
    let mut out = Vec::new();
    let ending = serve(
        std::io::BufReader::new(input),
        &mut out,
        server,
        host,
        &StopRequests::default,
        &mut Telemetry::from_provider(None),
    )
    .unwrap();
    assert_eq!(ending, Ending::EndOfInput);
    let text = String::from_utf8(out).unwrap();
    let ids = text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone()).collect();
    (ids, text)
}

/// Input that gives `bytes`, then stays open (as a client's pipe does) until
/// the test drops the sender of `release`, then ends; `ended` says it has.
struct OpenInput {
    bytes: Watched<std::io::Cursor<Vec<u8>>>,
    release: std::sync::mpsc::Receiver<()>,
    ended: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl OpenInput {
    fn new(bytes: Vec<u8>, host: &mut TestHost) -> (Self, std::sync::mpsc::Sender<()>) {
        let (tx, release) = std::sync::mpsc::channel();
        let ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        (OpenInput { bytes: Watched::new(std::io::Cursor::new(bytes), host), release, ended }, tx)
    }
}

impl std::io::Read for OpenInput {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.bytes.read(buf)?;
        if n > 0 {
            return Ok(n);
        }
        // Blocks until the sender is dropped (nothing is ever sent).
        let _ = self.release.recv();
        self.ended.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(0)
    }
}

#[test]
fn watching_a_long_worker_call_costs_few_looks() {
    let mut host = TestHost::default();
    let mut server = server(&["timed_echo", "echo"]);
    let lines = format!(
        "{}\n{}\n",
        format_args!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"timed_echo","arguments":{{"ms":300}},{M}}}}}"#
        ),
        format_args!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo",{M}}}}}"#),
    );
    let (input, release) = OpenInput::new(lines.into_bytes(), &mut host);
    // The input stays open while the call runs: it closes once the host has
    // finished the call (a barrier, not a time), so every look happens while
    // the call runs with the input open.
    let (finished_tx, finished) = std::sync::mpsc::channel();
    host.finished = Some(finished_tx);
    std::thread::spawn(move || {
        let _ = finished.recv();
        drop(release);
    });
    let (ids, text) = serve_to_end(input, &mut server, &mut host);
    assert_eq!(ids, [json!(2), json!(1)], "the quick call is answered first: {text}");
    // The call takes 300 ms (its own work, the host's timer): the server
    // looks at the host about every WORKER_LOOK_MAX once nothing happens
    // (150 looks), not every WORKER_LOOK_MIN (6000). A count of looks; a
    // slow machine only makes it smaller.
    let bound = (300 / mcplite_core::serve::WORKER_LOOK_MAX.as_millis() as usize) * 2 + 50;
    assert!(host.polls <= bound, "{} looks at the host while one call ran 300 ms (bound {bound})", host.polls);
    assert!(host.polls >= 2);
}

/// A stop source that can wake serving (as the glue's signal watch does):
/// with it, an idle server waits with no timeout.
struct WakingStops;

impl mcplite_core::dispatch::StopSource for WakingStops {
    fn requests(&self) -> StopRequests {
        StopRequests::default()
    }

    fn watch(&self, _wake: mcplite_core::dispatch::LoopWaker) -> Option<Box<dyn std::any::Any>> {
        Some(Box::new(()))
    }
}

/// Output that says when a line was written (a barrier for tests).
struct Told {
    text: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    wrote: std::sync::mpsc::Sender<()>,
}

impl std::io::Write for Told {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.text.lock().unwrap().extend_from_slice(buf);
        // One word per line: answers held back go out in one write.
        for _ in buf.iter().filter(|&&b| b == b'\n') {
            let _ = self.wrote.send(());
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn an_idle_server_waits_on_its_inputs_without_looking() {
    use std::sync::atomic::Ordering;
    for lines in [1usize, 3] {
        let mut host = TestHost::default();
        let looks = host.idle_looks.clone();
        let mut server = server(&["echo"]);
        let input: String = (1..=lines)
            .map(|id| {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo",{M}}}}}"#) + "\n"
            })
            .collect();
        let (input, release) = OpenInput::new(input.into_bytes(), &mut host);
        let text = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (wrote_tx, wrote) = std::sync::mpsc::channel();
        let mut out = Told { text: text.clone(), wrote: wrote_tx };
        let watcher = std::thread::spawn(move || {
            // Barrier: every answer is written, so the server has handled
            // all its input; from here it makes at most one more look (the
            // top of its loop) before it waits.
            for _ in 0..lines {
                wrote.recv().unwrap();
            }
            let at_last_answer = looks.load(Ordering::SeqCst);
            // Nothing arrives for a while. This wait is no duration
            // assertion: a server that ticks (every 50 ms before) looks
            // several times within it, one that waits on its inputs looks
            // never, however long it lasts; a slow machine can only make a
            // ticking server look fewer times.
            std::thread::sleep(std::time::Duration::from_millis(400));
            let quiet = looks.load(Ordering::SeqCst) - at_last_answer;
            drop(release);
            quiet
        });
        let ending = serve(
            std::io::BufReader::new(input),
            &mut out,
            &mut server,
            &mut host,
            &WakingStops,
            &mut Telemetry::from_provider(None),
        )
        .unwrap();
        assert_eq!(ending, Ending::EndOfInput);
        let quiet = watcher.join().unwrap();
        assert!(quiet <= 1, "an idle server looked at its host {quiet} times with nothing arriving");
        assert_eq!(host.polls, 0, "an idle server with no call running polls its host");
        let text = String::from_utf8(text.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), lines, "{text}");
    }
}

/// Serves `lines`, the input kept open until serving returns (a client that
/// has not closed its end) or ending at once (`keep_open` false), returning
/// how serving ended, the answers by id, and whether the input had ended by
/// the time serving returned.
fn serve_open(
    host: &mut TestHost,
    lines: &[String],
    keep_open: bool,
) -> (Ending, std::collections::BTreeMap<i64, Value>, bool) {
    let mut server = server(&["stop", "terminate", "echo", "later_echo", "never_echo"]);
    let mut text = lines.join("\n");
    text.push('\n');
    let (input, release) = OpenInput::new(text.into_bytes(), host);
    let ended = input.ended.clone();
    if !keep_open {
        drop(release);
    }
    let mut out = Vec::new();
    let signals = host.signals.clone();
    let ending = serve(
        std::io::BufReader::new(input),
        &mut out,
        &mut server,
        host,
        &|| signals.requests(),
        &mut Telemetry::from_provider(None),
    )
    .unwrap();
    let input_ended = ended.load(std::sync::atomic::Ordering::SeqCst);
    let text = String::from_utf8(out).unwrap();
    let mut by_id = std::collections::BTreeMap::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let id = v["id"].as_i64().unwrap();
        assert!(by_id.insert(id, v).is_none(), "request {id} answered twice: {text}");
    }
    (ending, by_id, input_ended)
}

fn call(id: i64, name: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args},{M}}}}}"#
    )
}

fn tool_error_text(v: &Value) -> Option<&str> {
    (v["result"]["isError"] == json!(true)).then(|| v["result"]["content"][0]["text"].as_str()).flatten()
}

#[test]
fn a_stop_request_answers_every_line_already_read_then_ends() {
    let mut host = TestHost::default();
    let lines = [
        call(1, "stop", r#"{"await_input":true}"#),
        call(2, "echo", "{}"),
        call(3, "later_echo", r#"{"polls":3}"#),
        r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#.to_string(),
    ];
    let (ending, answers, input_ended) = serve_open(&mut host, &lines, true);
    assert_eq!(ending, Ending::Stopped);
    assert_eq!(answers.keys().copied().collect::<Vec<_>>(), [1, 2, 3, 4]);
    for id in [1, 2, 3] {
        assert_eq!(tool_error_text(&answers[&id]), None, "call {id} ran: {}", answers[&id]);
    }
    // The input stays open until serving returns: serving that went on
    // reading until the input ended would never return.
    assert!(!input_ended);
}

#[test]
fn a_request_to_terminate_ends_the_grace_and_answers_running_calls() {
    let mut host = TestHost::default();
    // SIGINT (the `stop` call, once all input is read), more SIGINTs while
    // the server waits for the running call (nothing changes), then the
    // usual SIGTERM.
    host.signals.after_waits(vec![(2, false), (4, true)]);
    let lines = [call(1, "never_echo", "{}"), call(2, "later_echo", "{}"), call(3, "stop", r#"{"await_input":true}"#)];
    let (ending, answers, _) = serve_open(&mut host, &lines, true);
    assert_eq!(ending, Ending::Stopped);
    assert_eq!(tool_error_text(&answers[&1]), Some("The server stopped before tool never_echo finished."));
    assert_eq!(tool_error_text(&answers[&2]), None);
    assert_eq!(tool_error_text(&answers[&3]), None);
    // The second SIGINT left the server waiting (it waited again until the
    // SIGTERM came), and the SIGTERM ended the wait at once rather than the
    // grace (hundreds of waits) running out.
    assert_eq!(host.waits, 4);
    assert_eq!(host.cancelled, [1]);
}

#[test]
fn a_stop_request_at_end_of_input_answers_running_calls() {
    let mut host = TestHost::default();
    // Input ends at once; the call would keep the server waiting out the
    // whole grace, but a signal comes during it (once it has waited twice).
    host.signals.after_waits(vec![(2, true)]);
    let (ending, answers, _) = serve_open(&mut host, &[call(7, "never_echo", "{}")], false);
    assert_eq!(ending, Ending::EndOfInput);
    assert_eq!(tool_error_text(&answers[&7]), Some("The server stopped before tool never_echo finished."));
    // Ended at the signal, not when the grace ran out.
    assert_eq!(host.waits, 2);
}

#[test]
fn calls_read_after_winding_down_was_cut_short_are_answered_without_running() {
    let mut host = TestHost::default();
    let lines = [
        call(1, "stop", r#"{"await_input":true}"#),
        call(2, "terminate", "{}"),
        call(3, "echo", "{}"),
        r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#.to_string(),
        call(5, "later_echo", "{}"),
    ];
    let (ending, answers, _) = serve_open(&mut host, &lines, true);
    assert_eq!(ending, Ending::Stopped);
    assert_eq!(host.calls, 2, "only the calls before the second stop request ran");
    assert_eq!(tool_error_text(&answers[&3]), Some("The server stopped before tool echo could run."));
    assert_eq!(answers[&4]["result"], json!({}));
    assert_eq!(tool_error_text(&answers[&5]), Some("The server stopped before tool later_echo could run."));
}

#[test]
fn more_interrupts_while_winding_down_change_nothing() {
    let mut host = TestHost::default();
    let lines = [
        call(1, "stop", r#"{"await_input":true}"#),
        call(2, "stop", "{}"),
        call(3, "echo", "{}"),
        call(4, "later_echo", r#"{"polls":5}"#),
    ];
    let (ending, answers, _) = serve_open(&mut host, &lines, true);
    assert_eq!(ending, Ending::Stopped);
    assert_eq!(host.calls, 4);
    for id in 1..=4 {
        assert_eq!(tool_error_text(&answers[&id]), None, "call {id}: {}", answers[&id]);
    }
}

/// Input that gives one line per read, the first at once and each next one
/// `gap` later (a client sending while a call runs), then ends.
struct PacedInput {
    lines: std::collections::VecDeque<Vec<u8>>,
    gap: std::time::Duration,
    first: bool,
}

impl std::io::Read for PacedInput {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(line) = self.lines.front_mut() else { return Ok(0) };
        if !std::mem::replace(&mut self.first, false) && buf.len() >= line.len() {
            std::thread::sleep(self.gap);
        }
        let n = line.len().min(buf.len());
        buf[..n].copy_from_slice(&line[..n]);
        line.drain(..n);
        if line.is_empty() {
            self.lines.pop_front();
        }
        Ok(n)
    }
}

/// A worker host whose `poll` waits on its own signal, as the R workers wait
/// in mirai's condition variable, woken by the input waker.
struct WakingHost {
    inner: TestHost,
    ring: Option<std::sync::mpsc::Sender<()>>,
    rang: std::sync::mpsc::Receiver<()>,
    rings: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// Waits that ran to their end before the input ended.
    timeouts_while_reading: usize,
    woken: usize,
    lines: usize,
}

impl mcplite_core::ToolHost for WakingHost {
    type Fun = &'static str;
    type Value = mcplite_core::rjson::testvalue::TV;

    fn call(
        &mut self,
        tool: &mcplite_core::Tool<&'static str>,
        args: Option<mcplite_core::json::Val<'_>>,
        cx: mcplite_core::dispatch::CallContext,
    ) -> mcplite_core::dispatch::Started<Self::Value> {
        self.inner.call(tool, args, cx)
    }

    fn poll(
        &mut self,
        wait: std::time::Duration,
    ) -> Option<(mcplite_core::dispatch::TaskId, mcplite_core::dispatch::Finished<Self::Value>)> {
        use std::sync::mpsc::RecvTimeoutError;
        if let Some(done) = self.inner.poll(std::time::Duration::ZERO) {
            return Some(done);
        }
        if wait.is_zero() {
            return None;
        }
        let reading = self.rings.load(std::sync::atomic::Ordering::SeqCst) < self.lines;
        match self.rang.recv_timeout(wait) {
            Ok(()) => self.woken += 1,
            Err(RecvTimeoutError::Timeout) => self.timeouts_while_reading += usize::from(reading),
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(wait),
        }
        self.inner.poll(std::time::Duration::ZERO)
    }

    fn input_waker(&mut self) -> Option<mcplite_core::dispatch::InputWaker> {
        let ring = std::sync::Mutex::new(self.ring.take()?);
        let rings = self.rings.clone();
        Some(Box::new(move || {
            rings.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let _ = ring.lock().unwrap().send(());
        }))
    }

    fn wakes_on_input(&self) -> bool {
        true
    }
}

#[test]
fn a_host_that_wakes_on_input_is_woken_by_every_line_while_a_call_runs() {
    use std::time::Duration;
    let (ring, rang) = std::sync::mpsc::channel();
    let mut lines = vec![call(1, "timed_echo", r#"{"ms":600}"#)];
    lines.extend((2..=11).map(|id| call(id, "echo", "{}")));
    let mut host = WakingHost {
        inner: TestHost::default(),
        ring: Some(ring),
        rang,
        rings: Default::default(),
        timeouts_while_reading: 0,
        woken: 0,
        lines: lines.len(),
    };
    let input = PacedInput {
        lines: lines.iter().map(|l| format!("{l}\n").into_bytes()).collect(),
        // Shorter than the host's bounded wait (serve's IDLE_TICK, 50 ms), so
        // each line arrives while the server waits in the host.
        gap: Duration::from_millis(20),
        first: true,
    };
    let mut server = server(&["timed_echo", "echo"]);
    let (ids, text) = serve_to_end(input, &mut server, &mut host);
    let ids: Vec<i64> = ids.iter().map(|id| id.as_i64().unwrap()).collect();
    assert_eq!(ids, (2..=11).chain([1]).collect::<Vec<_>>(), "the echoes first, then the timed call: {text}");
    // Each line and the end of input rang the waker once.
    assert_eq!(host.rings.load(std::sync::atomic::Ordering::SeqCst), lines.len() + 1);
    // The lines ended the host's waits: without the waker each would have
    // run its 50 ms to the end.
    assert!(host.woken >= 9, "woken {} times", host.woken);
    assert!(host.timeouts_while_reading <= 2, "{} waits timed out while lines came", host.timeouts_while_reading);
}

/// The progress notifications and answers of a run, in order.
fn progress_values(r: &[Value], token: &Value) -> Vec<f64> {
    r.iter()
        .filter(|m| m["method"] == json!("notifications/progress"))
        .inspect(|m| assert_eq!(&m["params"]["progressToken"], token))
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect()
}

#[test]
fn progress_reaches_the_client_before_the_answer_and_never_after() {
    let (r, _) = run(&[
        r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo","arguments":{"progress":[1,2,2,1.5,3]},"_meta":{"progressToken":"tok","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        &format!(r#"{{"jsonrpc":"2.0","id":"p","method":"tools/list","params":{{{M}}}}}"#),
    ]);
    let answer = r.iter().position(|m| m["id"] == json!("c")).unwrap();
    let values = progress_values(&r[..answer], &json!("tok"));
    // Increasing; the latest value is never lost; non-increasing ones dropped.
    assert!(!values.is_empty() && values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    assert_eq!(values.last(), Some(&3.0));
    assert!(progress_values(&r[answer..], &json!("tok")).is_empty(), "nothing after the answer");
    assert!(r[..answer].iter().all(|m| m.get("method").is_none() || m["params"]["message"].is_string()));
}

#[test]
fn progress_leaves_out_message_in_2024_11_05_and_needs_a_token() {
    let (r, _) = run(&[
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"progress":[1]},"_meta":{"progressToken":-3}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"progress":[1]}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"progress":[1]},"_meta":{"progressToken":1.5}}}"#,
    ]);
    let notes: Vec<&Value> = r.iter().filter(|m| m.get("method").is_some()).collect();
    assert_eq!(notes.len(), 1, "{r:?}");
    assert_eq!(notes[0]["params"], json!({"progressToken":-3,"progress":1,"total":10}));
    let ids: Vec<&Value> = r.iter().filter_map(|m| m.get("id")).collect();
    assert_eq!(ids, [&json!(0), &json!(1), &json!(2), &json!(3)]);
}

#[test]
fn a_cancelled_call_sends_no_progress() {
    // The call reports once the reader has read the cancellation behind it.
    let (r, _) = run(&[
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"await_input":true,"progress":[1,2]},"_meta":{"progressToken":"x"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
    ]);
    assert_eq!(r.len(), 1, "only the initialize answer: {r:?}");
}

#[test]
fn a_call_cancelled_before_it_starts_never_runs() {
    // The first call holds the handler until the reader has read all input,
    // the cancellation of the second call included.
    let (r, calls) = run(&[
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"await_input":true}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}"#,
    ]);
    assert_eq!(calls, 2, "call 2 never ran");
    let ids: Vec<&Value> = r.iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, [&json!(0), &json!(1), &json!(3)]);
}

/// A host whose tools change while serving (the live-session server): it
/// hands serving a new tool set at a given request, and answers the tool
/// `forwarded` with a result another process wrote.
struct LiveHost {
    inner: TestHost,
    requests: usize,
    change_at: usize,
}

impl mcplite_core::ToolHost for LiveHost {
    type Fun = &'static str;
    type Value = mcplite_core::rjson::testvalue::TV;

    fn call(
        &mut self,
        tool: &mcplite_core::Tool<&'static str>,
        args: Option<mcplite_core::json::Val<'_>>,
        cx: mcplite_core::dispatch::CallContext,
    ) -> mcplite_core::dispatch::Started<Self::Value> {
        use mcplite_core::dispatch::{Finished, Started};
        match tool.fun {
            "forwarded" => Started::Done(Finished::Forwarded {
                result: br#"{"content":[{"type":"text","text":"from the session"}],"isError":false}"#.to_vec(),
                is_error: false,
                failure: None,
                zeroed: false,
            }),
            "unattached" => Started::Done(Finished::Failed("no session".into())),
            _ => self.inner.call(tool, args, cx),
        }
    }

    fn tool_update(&mut self, request: bool) -> Option<mcplite_core::dispatch::ToolSet<&'static str>> {
        if !request {
            return None;
        }
        self.requests += 1;
        (self.requests == self.change_at).then(|| mcplite_core::dispatch::ToolSet {
            tools: vec![tool("forwarded")],
            lists: None,
            fallback: Some(tool("unattached")),
        })
    }
}

#[test]
fn live_tools_change_while_serving() {
    let mut server = server(&["echo"]);
    server.set_live_tools();
    let mut host = LiveHost { inner: TestHost::default(), requests: 0, change_at: 3 };
    let lines = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"forwarded","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#,
    ]
    .join("\n");
    let modern_list = format!(r#"{{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{{{M}}}}}"#);
    let input = std::io::BufReader::new(std::io::Cursor::new(format!("{lines}\n{modern_list}").into_bytes()));
    let mut out = Vec::new();
    serve(input, &mut out, &mut server, &mut host, &StopRequests::default, &mut Telemetry::from_provider(None))
        .unwrap();
    let got: Vec<Value> = String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(got[0]["result"]["capabilities"], json!({"tools": {"listChanged": true}}));
    assert_eq!(got[1]["result"]["tools"][0]["name"], "echo");
    // The change is announced before the answer to the request that found it.
    assert_eq!(got[2], json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    assert_eq!(got[3]["result"]["tools"].as_array().unwrap().len(), 1);
    assert_eq!(got[3]["result"]["tools"][0]["name"], "forwarded");
    assert_eq!(got[4]["result"]["content"][0]["text"], "from the session");
    // A name not served goes to the fallback: a tool error, not -32602.
    assert_eq!(got[5]["result"]["isError"], true);
    assert_eq!(got[5]["result"]["content"][0]["text"], "no session");
    assert_eq!(got[6]["result"]["ttlMs"], 0);
    assert_eq!(got[6]["result"]["cacheScope"], "private");
    assert_eq!(got.len(), 7);
}

#[test]
fn a_call_run_for_another_server_gives_the_result_for_its_version() {
    use mcplite_core::dispatch::CallContext;
    use mcplite_core::envelope::RequestId;
    use mcplite_core::json::Doc;
    let mut server = server(&["echo"]);
    let mut host = TestHost::default();
    let args = Doc::parse(br#"{"a":1}"#.to_vec()).unwrap();
    let id_doc = Doc::parse(b"7".to_vec()).unwrap();
    for (v, version) in mcplite_core::version::VERSIONS.iter().enumerate() {
        let cx = CallContext {
            traceparent: None,
            id: RequestId::parse(id_doc.root()).unwrap(),
            progress: None,
            version: v,
            client: Some("c".into()),
        };
        let here = server.call_here("echo", Some(args.root()), &mut host, cx).unwrap();
        let (result, is_error) = (here.result, here.is_error);
        let result: Value = serde_json::from_slice(&result).unwrap();
        assert!(!is_error);
        assert_eq!(result["content"][0]["text"], r#"{"a":1}"#, "{}", version.id);
    }
    let cx = CallContext {
        traceparent: None,
        id: RequestId::parse(id_doc.root()).unwrap(),
        progress: None,
        version: 0,
        client: None,
    };
    assert!(server.call_here("nope", None, &mut host, cx).is_none());
}
