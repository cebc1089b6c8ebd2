//! End-to-end routing tests of the core over an in-memory transport, with a
//! Rust tool host standing in for R.

use mcplite_core::result::{CallResult, Content, ContentKind, StructuredJson, ToolDef};
use mcplite_core::dispatch::NoObserver;
use mcplite_core::{serve, Server, ServerInfo, ToolHost};
use serde_json::{json, Map, Value};

struct EchoHost {
    calls: usize,
}

impl ToolHost for EchoHost {
    fn call_tool(&mut self, _index: usize, tool: &ToolDef, arguments: Map<String, Value>) -> CallResult {
        self.calls += 1;
        match tool.name.as_str() {
            "echo" => {
                // Lets a cancellation arrive while the call runs.
                if let Some(ms) = arguments.get("sleep_ms").and_then(Value::as_u64) {
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                }
                CallResult::text(Value::Object(arguments).to_string())
            }
            "fail" => CallResult::tool_error("boom"),
            "speak" => CallResult {
                content: vec![Content {
                    kind: ContentKind::Audio,
                    body: json!({"type":"audio","data":"AA==","mimeType":"audio/wav"}).as_object().unwrap().clone(),
                }],
                ..Default::default()
            },
            "panics" => panic!("a bug in a tool host"),
            "rows" => CallResult {
                content: vec![Content::text("[{\"a\":1}]")],
                structured: Some(StructuredJson { json: "[{\"a\":1}]".into() }),
                ..Default::default()
            },
            _ => CallResult::tool_error("unexpected tool"),
        }
    }
}

fn tool(name: &str) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: Some(format!("{name} tool")),
        title: None,
        input_schema: json!({"type":"object","properties":{}}).as_object().unwrap().clone(),
        output_schema: None,
        annotations: None,
        meta: None,
    }
}

fn run(lines: &[&str]) -> (Vec<Value>, usize) {
    let mut server = Server::new(
        vec![tool("echo"), tool("fail"), tool("speak"), tool("rows"), tool("panics")],
        Some("Be nice.".into()),
        ServerInfo { name: "mcplite".into(), version: "0.1.0".into() },
    )
    .unwrap();
    let mut host = EchoHost { calls: 0 };
    let input = lines.join("\n");
    let mut out = Vec::new();
    serve(std::io::Cursor::new(input.into_bytes()), &mut out, &mut server, &mut host, &mut NoObserver).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'));
    let responses = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (responses, host.calls)
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
    assert_eq!(r[0]["result"]["instructions"], json!("Be nice."));
    assert_eq!(r[0]["result"]["capabilities"], json!({"tools":{}}));
    assert_eq!(r[1]["result"]["tools"].as_array().unwrap().len(), 5);
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
               "capabilities":{"tools":{}},"instructions":"Be nice.","ttlMs":300000,"cacheScope":"public",
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
    assert_eq!(r[3]["error"]["code"], json!(-32602), "no initialize and no _meta");
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
        &format!(r#"{{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{{"name":"echo","arguments":{{"sleep_ms":200}},{M}}}}}"#),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}"#,
        &format!(r#"{{"jsonrpc":"2.0","id":"next","method":"tools/call","params":{{"name":"echo",{M}}}}}"#),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"other"}}"#,
    ]);
    assert_eq!(calls, 2);
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
