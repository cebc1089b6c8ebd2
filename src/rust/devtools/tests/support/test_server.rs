//! A scripted stdio MCP server for the client tests: the core's own `Server`
//! with a Rust tool host, plus misbehaviour on demand.
//!
//! usage: mcplite-test-server [serve|banner|fail-start|silent|linger|old]
//! - serve: tools echo, sleep (arguments.ms), fail (tool error), die (exits
//!   with status 3), chatty (sends a log notification and a roots/list
//!   request before answering), junk (writes a non-JSON line first), env
//!   (the environment as a JSON object), cwd (the working directory),
//!   panics (the tool host panics: the service answers -32603), quit (ends
//!   the process as R's quit() in a tool does: writes the answers of every
//!   call still owed one, as the R host's exit hook does, then the
//!   notification "bye", and exits)
//! - banner: writes a line of text on stdout before serving
//! - glued: writes text without a newline before serving
//! - fail-start: writes an R-like error on stderr and exits with status 1
//! - silent: reads input and never answers
//! - linger: serves, and keeps running for a minute after end of input
//! - old: answers initialize with protocol 2025-03-26

use mcplite_core::dispatch::{CallContext, Finished, Owed, Started};
use mcplite_core::json::Val;
use mcplite_core::r::Formals;
use mcplite_core::result::ToolDef;
use mcplite_core::rjson::testvalue::{lgl, list, named, s, TV};
use mcplite_core::rjson::Options;
use mcplite_core::serve::handle_line;
use mcplite_core::telemetry::Telemetry;
use mcplite_core::transport::LineReader;
use mcplite_core::{Server, ServerInfo, Tool, ToolHost};
use serde_json::{json, Map, Value};
use std::io::{BufReader, Write};
use std::time::Duration;

/// The tool host; `owed` is the server's list of calls owed an answer, which
/// the quit tool answers as the R host's exit hook does.
struct Host {
    owed: Owed,
}

/// A tool error the way `tool_result(is_error = TRUE)` makes it.
fn tool_error(text: &str) -> TV {
    let block = named(vec![(Some("type"), s("text")), (Some("text"), s(text))])
        .class(&["mcplite_content_text", "mcplite_content"]);
    named(vec![(Some("content"), list(vec![block])), (Some("is_error"), lgl(&[Some(true)]))])
        .class(&["mcplite_tool_result"])
}

impl ToolHost for Host {
    type Fun = &'static str;
    type Value = TV;

    fn call(&mut self, tool: &Tool<&'static str>, args: Option<Val<'_>>, cx: CallContext) -> Started<TV> {
        match tool.fun {
            "panics" => panic!("a bug in the service, as asked"),
            "quit" => exit_as_r_quit(&self.owed, &cx),
            _ => {}
        }
        let arguments: Map<String, Value> = match args.map(|a| a.to_value()) {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        Started::Done(Finished::Returned(match tool.fun {
            "echo" => s(&Value::Object(arguments).to_string()),
            "sleep" => {
                let ms = arguments.get("ms").and_then(Value::as_u64).unwrap_or(0);
                std::thread::sleep(Duration::from_millis(ms));
                s(&format!("slept {ms} ms"))
            }
            "fail" => tool_error("it failed, as asked"),
            "env" => {
                let vars: Map<String, Value> = std::env::vars().map(|(k, v)| (k, Value::from(v))).collect();
                s(&Value::Object(vars).to_string())
            }
            "cwd" => s(&std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default()),
            _ => s("ok"),
        }))
    }
}

/// What the R host's exit hook (`host::on_r_exit` in the glue) writes when a
/// tool calls quit(): one answer for each call still owed one.
fn exit_as_r_quit(owed: &Owed, cx: &CallContext) -> ! {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    owed.mark_running(Some(&cx.id));
    for line in owed.take_answers::<TV>() {
        let _ = out.write_all(&line);
        let _ = out.write_all(b"\n");
    }
    write(&mut out, r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"bye"}}"#);
    std::process::exit(0)
}

fn tool(name: &'static str) -> Tool<&'static str> {
    Tool {
        def: ToolDef {
            name: name.into(),
            description: Some(format!("The {name} tool.")),
            title: None,
            input_schema: json!({"type": "object"}).as_object().cloned().unwrap_or_default(),
            output_schema: None,
            annotations: None,
            meta: None,
        },
        formals: Formals::unknown(),
        fun: name,
    }
}

fn write(out: &mut impl Write, line: &str) {
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "serve".into());
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match mode.as_str() {
        "fail-start" => {
            eprintln!("Error in library(missingpkg) : there is no package called 'missingpkg'");
            eprintln!("Execution halted");
            std::process::exit(1);
        }
        "banner" => write(&mut out, "Welcome! This line is not JSON-RPC."),
        // No newline: the text runs into the first answer.
        "glued" => {
            let _ = out.write_all(b"Loading...");
        }
        _ => {}
    }
    let names = ["echo", "sleep", "fail", "die", "chatty", "junk", "env", "cwd", "panics", "quit"];
    let Ok(mut server) = Server::new(
        names.iter().map(|n| tool(n)).collect(),
        Some("A test server.".into()),
        ServerInfo { name: "mcplite-test-server".into(), version: "1.0.0".into() },
        Options::default(),
    ) else {
        std::process::exit(2);
    };
    let mut host = Host { owed: server.owed() };
    let mut reader = LineReader::new(BufReader::new(std::io::stdin()));
    while let Ok(Some(line)) = reader.next_line() {
        if mode == "silent" {
            continue;
        }
        let line = line.to_vec();
        let msg: Value = serde_json::from_slice(&line).unwrap_or(Value::Null);
        let method = msg.get("method").and_then(Value::as_str).unwrap_or_default();
        if method.is_empty() && msg.is_object() {
            eprintln!("answer from the client: {}", String::from_utf8_lossy(&line));
            continue;
        }
        if mode == "old" && method == "initialize" {
            let answer = json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": "2025-03-26", "capabilities": {"tools": {}},
                "serverInfo": {"name": "old", "version": "1"}}});
            write(&mut out, &answer.to_string());
            continue;
        }
        if method == "tools/call" {
            match msg.pointer("/params/name").and_then(Value::as_str) {
                Some("die") => {
                    eprintln!("dying as asked");
                    std::process::exit(3);
                }
                Some("junk") => write(&mut out, "[1] \"printed by a tool\""),
                Some("chatty") => {
                    write(
                        &mut out,
                        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}"#,
                    );
                    write(&mut out, r#"{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}"#);
                }
                _ => {}
            }
        }
        let mut telemetry = Telemetry::from_provider(None);
        let answer = handle_line(&mut server, &mut host, &mut telemetry, &line);
        let _ = out.write_all(&answer);
        let _ = out.flush();
    }
    if mode == "linger" {
        std::thread::sleep(Duration::from_secs(60));
    }
}
