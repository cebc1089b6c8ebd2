//! Shared by the property tests (tests/fuzz.rs) and the long-running fuzz
//! driver (examples/fuzz.rs): input generation, a tool host with every kind
//! of result, and the invariant every output must satisfy.
#![allow(dead_code)]

#[path = "host.rs"]
mod host;

use host::TestHost;
use mcplite_core::envelope::{classify, Incoming};
use mcplite_core::r::Formals;
use mcplite_core::result::ToolDef;
use mcplite_core::rjson::Options;
use mcplite_core::serve::handle_line;
use mcplite_core::telemetry::Telemetry;
use mcplite_core::version::VERSIONS;
use mcplite_core::{Server, ServerInfo, Tool};
use serde_json::{json, Value};

pub const VERSION_IDS: [&str; 4] = ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"];

/// Tools whose results cover every content kind and structured shape.
const TOOLS: [&str; 9] = ["text", "error", "audio", "link", "bare_rows", "object", "resource", "tampered", "frame"];

pub fn tools() -> Vec<Tool<&'static str>> {
    TOOLS
        .iter()
        .map(|name| Tool {
            def: ToolDef {
                name: name.to_string(),
                description: Some(format!("{name} tool")),
                title: Some(name.to_uppercase()),
                input_schema: json!({"type":"object","properties":{"a":true,"b":{"type":"string"}},"required":"b"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                output_schema: Some(if *name == "bare_rows" {
                    json!({"type":"array"})
                } else {
                    json!({"type":"object"})
                }),
                annotations: Some(json!({"readOnlyHint": true}).as_object().cloned().unwrap_or_default()),
                meta: Some(json!({"x": 1}).as_object().cloned().unwrap_or_default()),
            },
            formals: if *name == "text" {
                Formals::new(&["b".to_string(), "...".to_string()])
            } else {
                Formals::unknown()
            },
            fun: *name,
        })
        .collect()
}

pub fn server() -> Server<&'static str> {
    Server::new(tools(), Some("hi".into()), ServerInfo { name: "fuzz".into(), version: "1".into() }, Options::default())
        .expect("fixed tool list is valid")
}

/// Valid messages of every era, the seeds that mutations start from.
pub fn seeds() -> Vec<String> {
    let mut out = vec![];
    for v in VERSION_IDS {
        let meta = format!(
            r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{v}","io.modelcontextprotocol/clientCapabilities":{{}}}}"#
        );
        out.push(format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{v}","capabilities":{{}},"clientInfo":{{"name":"c","version":"1"}}}}}}"#
        ));
        out.push(format!(r#"{{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{{{meta}}}}}"#));
        out.push(format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{{meta}}}}}"#));
        for tool in TOOLS.iter().copied().chain(["nope"]) {
            out.push(format!(
                r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"{tool}","arguments":{{"b":"x"}},{meta}}}}}"#
            ));
            out.push(format!(r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"{tool}"}}}}"#));
        }
    }
    out.push(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into());
    out.push(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#.into());
    out.push(r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#.into());
    out
}

/// Check one handled line. `version` is the legacy version in force, used
/// to check projected shapes of legacy answers. Returns a description of the
/// violation, if any.
pub fn check(line: &[u8], response: Option<&str>, legacy: Option<&str>) -> Result<(), String> {
    let incoming = classify(line.to_vec());
    let expect_answer = matches!(incoming, Incoming::Request(_) | Incoming::Reject(..));
    let request_id = match &incoming {
        Incoming::Request(m) => m.id.as_ref().map(|i| i.raw().to_string()),
        Incoming::Reject(id, _) => id.as_ref().map(|i| i.raw().to_string()),
        _ => None,
    };
    // Read the version the way the server does.
    let modern_version = match &incoming {
        Incoming::Request(m) => {
            m.meta_field("io.modelcontextprotocol/protocolVersion").and_then(|v| v.as_str()).map(str::to_string)
        }
        _ => None,
    };
    let Some(resp) = response else {
        return if expect_answer { Err("a request got no answer".into()) } else { Ok(()) };
    };
    if !expect_answer {
        return Err(format!("a notification or ignored line was answered: {resp}"));
    }
    if resp.contains('\n') || resp.contains('\r') {
        return Err("response contains a raw line break".into());
    }
    let v: Value = serde_json::from_str(resp).map_err(|e| format!("response is not JSON: {e}"))?;
    let obj = v.as_object().ok_or("response is not an object")?;
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return Err("jsonrpc is not 2.0".into());
    }
    match (&request_id, obj.get("id")) {
        (Some(raw), Some(_)) => {
            if !resp.contains(&format!("\"id\":{raw},")) {
                return Err(format!("the answer does not echo id {raw} byte for byte"));
            }
        }
        (None, None) => {}
        (Some(_), None) => return Err("id missing from the answer".into()),
        (None, Some(id)) => return Err(format!("unexpected id {id}")),
    }
    match (obj.get("result"), obj.get("error")) {
        (Some(r), None) => check_result(r, modern_version.as_deref().or(legacy)),
        (None, Some(e)) => {
            let code = e.get("code").and_then(Value::as_i64).ok_or("error without integer code")?;
            if ![-32700, -32600, -32601, -32602, -32603, -32022].contains(&code) {
                return Err(format!("unexpected error code {code}"));
            }
            e.get("message").and_then(Value::as_str).ok_or("error without message")?;
            if code == -32022 {
                let d = e.get("data").ok_or("-32022 without data")?;
                if !d.get("supported").is_some_and(Value::is_array) || !d.get("requested").is_some_and(Value::is_string)
                {
                    return Err("-32022 data lacks supported/requested".into());
                }
            }
            Ok(())
        }
        _ => Err("response must have exactly one of result and error".into()),
    }
}

fn check_result(r: &Value, version: Option<&str>) -> Result<(), String> {
    let r = r.as_object().ok_or("result is not an object")?;
    let Some(vid) = version else { return Ok(()) };
    let Some(v) = VERSIONS.iter().find(|x| x.id == vid) else { return Ok(()) };
    if !v.modern_result && r.contains_key("resultType") && !r.contains_key("supportedVersions") {
        return Err(format!("resultType leaked into {vid}"));
    }
    if let Some(tools) = r.get("tools") {
        for t in tools.as_array().ok_or("tools is not an array")? {
            if t.pointer("/inputSchema/type") != Some(&json!("object")) {
                return Err("inputSchema root is not an object".into());
            }
            if !v.tool_title_annotations_meta && (t.get("title").is_some() || t.get("annotations").is_some()) {
                return Err(format!("title/annotations leaked into {vid}"));
            }
            if v.strict_schema_members {
                if let Some(props) = t.pointer("/inputSchema/properties").and_then(Value::as_object) {
                    if props.values().any(|p| !p.is_object()) {
                        return Err("non-object property schema".into());
                    }
                }
                if t.pointer("/inputSchema/required").is_some_and(|x| !x.is_array()) {
                    return Err("required is not an array".into());
                }
            }
            if let Some(o) = t.get("outputSchema") {
                match v.output_schema {
                    mcplite_core::version::Structured::None => return Err(format!("outputSchema leaked into {vid}")),
                    mcplite_core::version::Structured::ObjectOnly if o.get("type") != Some(&json!("object")) => {
                        return Err(format!("non-object outputSchema in {vid}"))
                    }
                    _ => {}
                }
            }
        }
    }
    if let Some(content) = r.get("content") {
        for b in content.as_array().ok_or("content is not an array")? {
            let t = b.get("type").and_then(Value::as_str).ok_or("block without type")?;
            if !v.audio_and_links && (t == "audio" || t == "resource_link") {
                return Err(format!("{t} block in {vid}"));
            }
            if !v.content_meta && (b.get("_meta").is_some() || b.pointer("/resource/_meta").is_some()) {
                return Err(format!("content _meta in {vid}"));
            }
            if !v.last_modified && b.pointer("/annotations/lastModified").is_some() {
                return Err(format!("lastModified in {vid}"));
            }
        }
        match (r.get("structuredContent"), v.structured_content) {
            (Some(_), mcplite_core::version::Structured::None) => return Err(format!("structuredContent in {vid}")),
            (Some(s), mcplite_core::version::Structured::ObjectOnly) if !s.is_object() => {
                return Err(format!("non-object structuredContent in {vid}"))
            }
            _ => {}
        }
        if v.modern_result && r.get("resultType") != Some(&json!("complete")) {
            return Err("modern call result without resultType".into());
        }
        if !r.get("isError").is_some_and(Value::is_boolean) {
            return Err("call result without a boolean isError".into());
        }
    }
    Ok(())
}

/// Run a sequence of lines through one server, checking every answer.
pub fn run_and_check(lines: &[Vec<u8>]) -> Result<(), String> {
    let mut server = server();
    let mut host = TestHost::default();
    let mut telemetry = Telemetry::from_provider(None);
    let mut legacy: Option<String> = None;
    for line in lines {
        let written = handle_line(&mut server, &mut host, &mut telemetry, line);
        let text = String::from_utf8(written).map_err(|_| "the answer is not UTF-8".to_string())?;
        if !text.is_empty() && (!text.ends_with('\n') || text.matches('\n').count() != 1) {
            return Err(format!("not exactly one line: {text:?}"));
        }
        let resp = text.strip_suffix('\n').filter(|t| !t.is_empty());
        check(line, resp, legacy.as_deref()).map_err(|e| format!("{e}\n  input: {}", String::from_utf8_lossy(line)))?;
        if let Some(resp) = resp {
            if let Ok(v) = serde_json::from_str::<Value>(resp) {
                if let Some(pv) = v.pointer("/result/protocolVersion").and_then(Value::as_str) {
                    legacy = Some(pv.to_string());
                }
            }
        }
    }
    Ok(())
}

/// A small deterministic PRNG (xorshift), so the driver needs no extra crate.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One mutation of a seed line.
pub fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut s = seed.to_vec();
    let pos = rng.below(s.len() + 1);
    match rng.below(12) {
        0 => {
            if !s.is_empty() {
                let i = rng.below(s.len());
                s[i] ^= 1 << rng.below(8);
            }
        }
        1 => s.truncate(pos),
        2 => s.insert(pos, [0u8, 0xff, 0xfe, 0xc3, b'\t', b'\r', 0x0b, b'"'][rng.below(8)]),
        3 => {
            let depth = 1 + rng.below(600);
            let open = "[".repeat(depth);
            let close = "]".repeat(depth);
            let text = String::from_utf8_lossy(&s).replace("{\"b\":\"x\"}", &format!("{{\"b\":{open}1{close}}}"));
            s = text.into_bytes();
        }
        4 => {
            let text = String::from_utf8_lossy(&s).replacen(":1,", ":123456789012345678901234567890,", 1);
            s = text.into_bytes();
        }
        5 => {
            let long = "é".repeat(1 + rng.below(100_000));
            s = String::from_utf8_lossy(&s).replace("\"x\"", &format!("\"{long}\"")).into_bytes();
        }
        6 => {
            let tokens: [&[u8]; 8] = [b"null", b"[]", b"{}", b"1.5", b"-0", b"1e400", b"\"\"", b"true"];
            let t = tokens[rng.below(tokens.len())];
            let end = (pos + rng.below(12)).min(s.len());
            s.splice(pos..end, t.iter().copied());
        }
        7 => s = format!("  \t{}\r", String::from_utf8_lossy(&s)).into_bytes(),
        8 => s = format!("[{}]", String::from_utf8_lossy(&s)).into_bytes(),
        9 => {
            let keys = ["\"id\"", "\"method\"", "\"params\"", "\"jsonrpc\"", "\"_meta\"", "\"arguments\"", "\"name\""];
            let text = String::from_utf8_lossy(&s).replacen(keys[rng.below(keys.len())], "\"x\"", 1);
            s = text.into_bytes();
        }
        10 => {
            let n = rng.below(16);
            for _ in 0..n {
                let i = rng.below(s.len() + 1);
                s.insert(i, (rng.next() & 0xff) as u8);
            }
        }
        _ => {
            let text = String::from_utf8_lossy(&s).replacen("\"id\":", "\"id\":\"\\u0000\",\"id2\":", 1);
            s = text.into_bytes();
        }
    }
    s.retain(|b| *b != b'\n');
    s
}
