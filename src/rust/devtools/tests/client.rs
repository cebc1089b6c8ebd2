//! The stdio client against a real child process (tests/support/test_server.rs)
//! over real pipes.

use mcplite_devtools::client::{Client, ClientError, Launch};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(20);

fn launch(mode: &str) -> Launch {
    Launch { program: env!("CARGO_BIN_EXE_mcplite-test-server").into(), args: vec![mode.into()], ..Default::default() }
}

fn info() -> Value {
    json!({"name": "client-test", "version": "1.0"})
}

fn start(mode: &str, protocol: &str) -> Client {
    let mut c = Client::spawn(&launch(mode), protocol, info()).expect("spawn");
    c.open(T).expect("open");
    c
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn every_version_lists_and_calls_tools() {
    for v in ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"] {
        let mut c = start("serve", v);
        assert_eq!(c.protocol(), v);
        let opened = c.opened().cloned().unwrap_or_default();
        if v == "2026-07-28" {
            assert_eq!(opened["supportedVersions"][0], json!("2026-07-28"));
        } else {
            assert_eq!(opened["protocolVersion"], json!(v));
            assert_eq!(opened["serverInfo"]["name"], json!("mcplite-test-server"));
        }
        let tools = c.list_tools(T).expect("tools/list");
        assert_eq!(tools.len(), 10, "{v}");
        let r = c.call_tool("echo", json!({"a": [1, 2], "b": "x"}), T).expect("call");
        assert_eq!(text(&r), r#"{"a":[1,2],"b":"x"}"#, "{v}");
        let line: Value = serde_json::from_str(c.last_response().unwrap_or_default()).expect("last line");
        assert_eq!(line["result"], r, "{v}: the exact line of the last answer is kept");
        assert_eq!(r.get("resultType").is_some(), v == "2026-07-28", "{v}");
        let r = c.call_tool("fail", json!({}), T).expect("a tool error is a result");
        assert_eq!(r["isError"], json!(true));
        match c.call_tool("nope", json!({}), T) {
            Err(ClientError::Rpc { code: -32602, .. }) => {}
            other => panic!("{v}: unknown tool gave {other:?}"),
        }
        assert_eq!(c.close(Duration::from_secs(5)).map(|s| s.0), Some(Some(0)), "{v}");
    }
}

#[test]
fn modern_requests_carry_meta_and_legacy_ones_do_not() {
    // The core server refuses a tools/list without _meta when no initialize
    // came first: a modern client that forgot its _meta would fail here.
    let mut c = start("serve", "2026-07-28");
    assert!(c.request("tools/list", None, T).is_ok());
    match c.request("ping", None, T) {
        Err(ClientError::Rpc { code: -32601, .. }) => {}
        other => panic!("modern ping gave {other:?}"),
    }
    let mut c = start("serve", "2025-06-18");
    assert_eq!(c.request("ping", None, T).expect("legacy ping"), json!({}));
}

#[test]
fn server_requests_get_method_not_found_and_notifications_are_kept() {
    let mut c = start("serve", "2025-11-25");
    let r = c.call_tool("chatty", json!({}), T).expect("call");
    assert_eq!(text(&r), "ok");
    let notes = c.notifications(false);
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0]["method"], json!("notifications/message"));
    assert_eq!(c.notifications(true).len(), 1);
    assert!(c.notifications(false).is_empty(), "cleared");
    let reqs = c.server_requests();
    assert_eq!(reqs[0]["method"], json!("roots/list"));
    // The server logs the answer it got on stderr; wait for it.
    let deadline = Instant::now() + T;
    while !c.stderr_text().contains("srv-1") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let err = c.stderr_text();
    assert!(err.contains(r#""id":"srv-1""#) && err.contains("-32601"), "{err}");
}

#[test]
fn the_transcript_holds_every_line_in_order() {
    let mut c = Client::spawn(&launch("banner"), "2025-11-25", info()).expect("spawn");
    c.set_transcript(true);
    c.open(T).expect("open");
    c.call_tool("echo", json!({"x": 1}), T).expect("call");
    let t = c.take_transcript();
    let shown: Vec<(bool, String)> = t
        .iter()
        .map(|(sent, line)| {
            let v: Value = serde_json::from_str(line).unwrap_or(Value::Null);
            let what = v.get("method").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| {
                if v.is_null() {
                    line.clone()
                } else {
                    format!("answer {}", v["id"])
                }
            });
            (*sent, what)
        })
        .collect();
    // The server prints its banner as it starts, which may be before or after
    // the client has written `initialize`: both orders are the true order.
    let banner = (false, "Welcome! This line is not JSON-RPC.".to_string());
    let at = shown.iter().position(|l| *l == banner).expect("the banner is in the transcript");
    assert!(at <= 1, "the banner comes before the first answer: {shown:?}");
    let mut shown = shown;
    shown.remove(at);
    let expected: Vec<(bool, String)> = vec![
        (true, "initialize".into()),
        (false, "answer 0".into()),
        (true, "notifications/initialized".into()),
        (true, "tools/call".into()),
        (false, "answer 1".into()),
    ];
    assert_eq!(shown, expected);
    assert!(c.take_transcript().is_empty(), "taken");
}

#[test]
fn stray_stdout_lines_are_kept_apart() {
    let mut c = start("banner", "2025-11-25");
    let stray = c.stray_lines();
    assert_eq!(stray.len(), 1);
    assert_eq!(stray[0].text, "Welcome! This line is not JSON-RPC.");
    assert!(c.first_response().is_some());
    c.call_tool("junk", json!({}), T).expect("call");
    assert_eq!(c.stray_lines()[1].text, "[1] \"printed by a tool\"");

    // Text without a newline glued to the first answer: both are seen.
    let mut c = start("glued", "2025-11-25");
    assert_eq!(c.protocol(), "2025-11-25");
    let stray = c.stray_lines();
    assert_eq!(stray.len(), 1);
    assert_eq!(stray[0].text, "Loading...");
}

#[test]
fn a_server_that_dies_is_a_clear_error_with_its_stderr() {
    let mut c = Client::spawn(&launch("fail-start"), "2025-11-25", info()).expect("spawn");
    match c.open(T) {
        Err(ClientError::Exited { status: Some(1), .. }) => {}
        other => panic!("gave {other:?}"),
    }
    assert!(c.stderr_text().contains("there is no package called 'missingpkg'"));
    assert!(!c.is_alive());
    // Later requests fail the same way; they do not hang or panic.
    assert!(matches!(c.request("tools/list", None, T), Err(ClientError::Exited { .. })));

    let mut c = start("serve", "2026-07-28");
    match c.call_tool("die", json!({"big": "x".repeat(1 << 20)}), T) {
        Err(ClientError::Exited { status: Some(3), .. }) => {}
        other => panic!("gave {other:?}"),
    }
    assert!(c.stderr_text().contains("dying as asked"));
    // Writing to the dead server's stdin fails cleanly (EPIPE, no signal).
    for _ in 0..3 {
        assert!(c.call_tool("echo", json!({"big": "x".repeat(1 << 20)}), T).is_err());
    }
}

#[test]
fn timeouts_cancel_and_the_client_keeps_working() {
    let mut c = start("serve", "2025-11-25");
    let t0 = Instant::now();
    match c.call_tool("sleep", json!({"ms": 1500}), Duration::from_millis(200)) {
        Err(ClientError::Timeout { .. }) => {}
        other => panic!("gave {other:?}"),
    }
    assert!(t0.elapsed() < Duration::from_millis(1400));
    // The late answer to the abandoned request is dropped; the next one matches.
    let r = c.call_tool("echo", json!({"n": 1}), T).expect("call after a timeout");
    assert_eq!(text(&r), r#"{"n":1}"#);
    assert!(c.unmatched().is_empty());

    let mut silent = Client::spawn(&launch("silent"), "2025-11-25", info()).expect("spawn");
    assert!(matches!(silent.open(Duration::from_millis(300)), Err(ClientError::Timeout { .. })));
}

#[test]
fn version_negotiation_is_checked() {
    let mut c = Client::spawn(&launch("old"), "2025-11-25", info()).expect("spawn");
    match c.open(T) {
        Err(ClientError::Version { requested, answered }) => {
            assert_eq!((requested.as_str(), answered.as_str()), ("2025-11-25", "2025-03-26"));
        }
        other => panic!("gave {other:?}"),
    }
    assert!(matches!(Client::spawn(&launch("serve"), "2025-03-26", info()), Err(ClientError::Invalid(_))));
}

#[test]
fn the_environment_and_directory_are_exactly_what_was_asked() {
    let dir = std::env::temp_dir();
    let mut l = launch("serve");
    l.clear_env = true;
    l.env = vec![("ONLY_THIS".into(), "1".into())];
    l.cwd = Some(dir.clone());
    let mut c = Client::spawn(&l, "2025-11-25", info()).expect("spawn");
    c.open(T).expect("open");
    let env: Value = serde_json::from_str(text(&c.call_tool("env", json!({}), T).expect("env"))).expect("json");
    assert_eq!(env, json!({"ONLY_THIS": "1"}));
    let cwd = c.call_tool("cwd", json!({}), T).expect("cwd");
    let canon = |p: &str| std::fs::canonicalize(p).ok();
    assert_eq!(canon(text(&cwd)), canon(&dir.display().to_string()));

    let mut l = launch("serve");
    l.env = vec![("ADDED".into(), "2".into())];
    let mut c = Client::spawn(&l, "2025-11-25", info()).expect("spawn");
    c.open(T).expect("open");
    let env: Value = serde_json::from_str(text(&c.call_tool("env", json!({}), T).expect("env"))).expect("json");
    assert_eq!(env["ADDED"], json!("2"));
    assert!(env.as_object().map_or(0, |m| m.len()) > 1, "inherits the rest");
}

#[test]
fn close_reaps_and_kills_a_server_that_ignores_end_of_input() {
    let mut c = start("linger", "2025-11-25");
    let t0 = Instant::now();
    let status = c.close(Duration::from_millis(300));
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert!(status.is_some(), "reaped");
    assert!(!c.is_alive());
    assert!(matches!(c.request("tools/list", None, T), Err(ClientError::Closed)));
    assert_eq!(c.close(Duration::from_millis(10)), status, "idempotent");

    let mut c = start("serve", "2025-11-25");
    assert_eq!(c.close(Duration::from_secs(5)).map(|s| s.0), Some(Some(0)), "exits on end of input");
}

#[test]
fn spawn_failures_are_errors() {
    let l = Launch { program: "/nonexistent/mcplite-server".into(), ..Default::default() };
    assert!(matches!(Client::spawn(&l, "2025-11-25", info()), Err(ClientError::Spawn(_))));
}

/// A call the service failed (-32603, a panic) has had its one answer: when
/// a later tool ends the process (R's quit()), the exit hook answers only
/// the calls still owed one, so no id is answered twice.
#[test]
fn a_call_answered_with_an_internal_error_is_not_answered_again_at_exit() {
    for v in ["2025-11-25", "2026-07-28"] {
        let mut c = start("serve", v);
        c.set_transcript(true);
        match c.call_tool("panics", json!({}), T) {
            Err(ClientError::Rpc { code: -32603, .. }) => {}
            other => panic!("{v}: the panicking call gave {other:?}"),
        }
        let r = c.call_tool("quit", json!({}), T).expect("the quitting call is answered");
        assert_eq!(r["isError"], json!(true), "{v}");
        assert!(text(&r).contains("ended the R process"), "{v}: {r}");
        // The server's last line says every answer it wrote has arrived.
        let deadline = Instant::now() + T;
        while !c.notifications(false).iter().any(|n| n["params"]["data"] == json!("bye")) {
            assert!(Instant::now() < deadline, "{v}: the server's last line never came");
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut answers: Vec<String> = c
            .take_transcript()
            .into_iter()
            .filter(|(sent, _)| !sent)
            .filter_map(|(_, line)| serde_json::from_str::<Value>(&line).ok())
            .filter(|m| m.get("method").is_none())
            .map(|m| m["id"].to_string())
            .collect();
        let n = answers.len();
        answers.sort();
        answers.dedup();
        assert_eq!(answers.len(), n, "{v}: an id was answered twice: {answers:?}");
        assert_eq!(answers.len(), 2, "{v}: both calls were answered: {answers:?}");
        c.close(Duration::from_secs(5));
    }
}

/// Wait for the async call `id` to end.
fn wait_async(c: &mut Client, id: i64) -> Result<Value, ClientError> {
    loop {
        if let Some(outcome) = c.step_async(id, Duration::from_millis(100))? {
            return Ok(match outcome {
                mcplite_devtools::client::Outcome::Answer(a) => a.to_value(),
                mcplite_devtools::client::Outcome::Pages(_) => Value::Null,
            });
        }
    }
}

#[test]
fn async_calls_are_matched_by_id_beside_other_requests() {
    for v in ["2026-07-28", "2025-11-25"] {
        let mut c = start("serve", v);
        let ids: Vec<i64> =
            (0..5).map(|n| c.begin_call_async("echo", json!({ "n": n }), T, false).expect("send")).collect();
        // A blocking call while they are in flight reads their answers too.
        let r = c.call_tool("echo", json!({"n": "now"}), T).expect("call");
        assert_eq!(text(&r), r#"{"n":"now"}"#, "{v}");
        // Waited for in another order than sent, each gets its own answer.
        for (n, id) in ids.iter().enumerate().rev() {
            let r = wait_async(&mut c, *id).expect("answer");
            assert_eq!(text(&r), format!(r#"{{"n":{n}}}"#), "{v}");
        }
        // A cancelled call's late answer is dropped, not kept as unmatched.
        let slow = c.begin_call_async("sleep", json!({"ms": 300}), T, false).expect("send");
        assert!(c.cancel_async(slow));
        assert!(!c.cancel_async(slow));
        assert!(matches!(c.step_async(slow, Duration::ZERO), Err(ClientError::Invalid(_))));
        let r = c.call_tool("echo", json!({"n": 9}), T).expect("call after a cancel");
        assert_eq!(text(&r), r#"{"n":9}"#);
        // Its own timeout cancels it.
        let late = c.begin_call_async("sleep", json!({"ms": 1500}), Duration::from_millis(200), false).expect("send");
        assert!(matches!(wait_async(&mut c, late), Err(ClientError::Timeout { .. })), "{v}");
        let pending = c.begin_call_async("sleep", json!({"ms": 1500}), T, false).expect("send");
        c.close(Duration::from_secs(5));
        assert_eq!(c.step_async(pending, Duration::ZERO).err(), Some(ClientError::Closed), "{v}");
        assert!(c.unmatched().is_empty(), "{v}");
    }
}
