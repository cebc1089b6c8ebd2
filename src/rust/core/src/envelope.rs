//! JSON-RPC 2.0 envelopes as MCP narrows them: classifying one input line and
//! writing response lines. The error-code table lives here and nowhere else.

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Every JSON-RPC error code mcplite emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    ParseError,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    InternalError,
    UnsupportedProtocolVersion,
}

impl ErrorCode {
    pub fn code(self) -> i64 {
        match self {
            ErrorCode::ParseError => -32700,
            ErrorCode::InvalidRequest => -32600,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::InvalidParams => -32602,
            ErrorCode::InternalError => -32603,
            ErrorCode::UnsupportedProtocolVersion => -32022,
        }
    }
}

/// A JSON-RPC error ready to be written.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: ErrorCode,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        RpcError { code, message: message.into(), data: None }
    }
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

/// A request id exactly as the client wrote it (string or integral number).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(Box<str>);

impl RequestId {
    /// The raw JSON text, echoed byte for byte.
    pub fn raw(&self) -> &str {
        &self.0
    }
    /// A display form for telemetry: the string value or the number text.
    pub fn display(&self) -> String {
        match serde_json::from_str::<String>(&self.0) {
            Ok(s) => s,
            Err(_) => self.0.to_string(),
        }
    }
}

/// What one input line turned out to be.
#[derive(Debug)]
pub enum Incoming {
    /// Blank line or a response from the client: nothing to answer.
    Ignore(&'static str),
    /// Broken input answered with an error (id when it could be read).
    Reject(Option<RequestId>, RpcError),
    /// A malformed notification: never answered.
    BadNotification,
    Request(Message),
    Notification(Message),
}

/// A message that passed envelope validation.
#[derive(Debug)]
pub struct Message {
    pub id: Option<RequestId>,
    pub method: String,
    /// `params` as an object (absent params become an empty object).
    pub params: Map<String, Value>,
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| b.is_ascii_whitespace())
}

/// Classify one line (without its trailing newline; a trailing CR is allowed).
pub fn classify(line: &[u8]) -> Incoming {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if is_blank(line) {
        return Incoming::Ignore("blank line");
    }
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(_) => return Incoming::Reject(None, RpcError::new(ErrorCode::ParseError, "Parse error: input is not valid UTF-8")),
    };
    let members: HashMap<String, Box<RawValue>> = match serde_json::from_str(text) {
        Ok(m) => m,
        Err(_) => return not_an_object(text),
    };
    let raw = |k: &str| members.get(k).map(|v| v.get());

    let method = raw("method");
    if method.is_none() && (members.contains_key("result") || members.contains_key("error")) {
        return Incoming::Ignore("a response from the client");
    }
    let id = match raw("id") {
        None => None,
        Some(r) => match parse_id(r) {
            Some(id) => Some(id),
            None => {
                return Incoming::Reject(
                    None,
                    RpcError::new(ErrorCode::InvalidRequest, "Invalid Request: id must be a string or an integer"),
                )
            }
        },
    };
    let reject = |msg: &str| match &id {
        Some(id) => Incoming::Reject(Some(id.clone()), RpcError::new(ErrorCode::InvalidRequest, msg)),
        None => Incoming::BadNotification,
    };
    if raw("jsonrpc") != Some("\"2.0\"") {
        return reject("Invalid Request: jsonrpc must be \"2.0\"");
    }
    let method: String = match method.map(serde_json::from_str::<String>) {
        Some(Ok(m)) => m,
        _ => return reject("Invalid Request: method must be a string"),
    };
    let params = match members.get("params") {
        None => Map::new(),
        Some(p) => match serde_json::from_str::<Value>(p.get()) {
            Ok(Value::Object(map)) => map,
            Ok(Value::Array(_)) => {
                return match id {
                    Some(id) => Incoming::Reject(
                        Some(id),
                        RpcError::new(ErrorCode::InvalidParams, "Invalid params: params must be an object"),
                    ),
                    None => Incoming::BadNotification,
                }
            }
            // Already validated as JSON; anything else is a scalar.
            _ => return reject("Invalid Request: params must be an object"),
        },
    };
    let msg = Message { id, method, params };
    if msg.id.is_some() {
        Incoming::Request(msg)
    } else {
        Incoming::Notification(msg)
    }
}

fn not_an_object(text: &str) -> Incoming {
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Err(_) => Incoming::Reject(None, RpcError::new(ErrorCode::ParseError, "Parse error")),
        Ok(_) => {
            let first = text.trim_start().as_bytes().first().copied();
            let message = if first == Some(b'[') {
                "Invalid Request: batches are not supported"
            } else {
                "Invalid Request: a message must be a JSON object"
            };
            Incoming::Reject(None, RpcError::new(ErrorCode::InvalidRequest, message))
        }
    }
}

/// A valid id is a JSON string or a number with an integral value.
fn parse_id(raw: &str) -> Option<RequestId> {
    let first = *raw.as_bytes().first()?;
    if first == b'"' {
        return Some(RequestId(raw.into()));
    }
    if first == b'-' || first.is_ascii_digit() {
        let integral = if raw.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
            true
        } else {
            matches!(raw.parse::<f64>(), Ok(x) if x.is_finite() && x.fract() == 0.0)
        };
        if integral {
            return Some(RequestId(raw.into()));
        }
    }
    None
}

/// `{"jsonrpc":"2.0","id":<id>,"result":<result>}`
pub fn result_line(id: &RequestId, result_json: &str) -> String {
    let mut out = String::with_capacity(result_json.len() + id.raw().len() + 32);
    out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    out.push_str(id.raw());
    out.push_str(",\"result\":");
    out.push_str(result_json);
    out.push('}');
    out
}

/// An error response; `id` is omitted when the request id could not be read
/// (what MCP 2025-11-25 and later specify; JSON-RPC's `null` fails their schema).
pub fn error_line(id: Option<&RequestId>, error: &RpcError) -> String {
    let mut obj = Map::new();
    obj.insert("code".into(), Value::from(error.code.code()));
    obj.insert("message".into(), Value::from(error.message.clone()));
    if let Some(data) = &error.data {
        obj.insert("data".into(), data.clone());
    }
    let body = Value::Object(obj).to_string();
    let mut out = String::with_capacity(body.len() + 48);
    out.push_str("{\"jsonrpc\":\"2.0\",");
    if let Some(id) = id {
        out.push_str("\"id\":");
        out.push_str(id.raw());
        out.push(',');
    }
    out.push_str("\"error\":");
    out.push_str(&body);
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reject(line: &str) -> (Option<String>, i64) {
        match classify(line.as_bytes()) {
            Incoming::Reject(id, e) => (id.map(|i| i.raw().to_string()), e.code.code()),
            other => panic!("expected a rejection for {line}, got {other:?}"),
        }
    }

    #[test]
    fn decision_table_order() {
        assert!(matches!(classify(b"   \t"), Incoming::Ignore(_)));
        assert!(matches!(classify(b""), Incoming::Ignore(_)));
        assert_eq!(reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\""), (None, -32700));
        assert_eq!(reject("[1,2"), (None, -32700));
        assert_eq!(reject("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]"), (None, -32600));
        assert_eq!(reject("[]"), (None, -32600));
        assert_eq!(reject("null"), (None, -32600));
        assert_eq!(reject("42"), (None, -32600));
        assert_eq!(reject("\"x\""), (None, -32600));
        assert!(matches!(classify(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#), Incoming::Ignore(_)));
        assert!(matches!(classify(br#"{"jsonrpc":"2.0","method":"x","params":3}"#), Incoming::BadNotification));
        assert!(matches!(classify(br#"{"jsonrpc":"1.0","method":"x"}"#), Incoming::BadNotification));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#), (None, -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#), (None, -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#), (None, -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#), (None, -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#), (None, -32600));
        assert_eq!(reject(r#"{"id":7,"method":"ping"}"#), (Some("7".into()), -32600));
        assert_eq!(reject(r#"{"jsonrpc":2.0,"id":7,"method":"ping"}"#), (Some("7".into()), -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":"a","method":5}"#), (Some("\"a\"".into()), -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":"a"}"#), (Some("\"a\"".into()), -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}"#), (Some("1".into()), -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#), (Some("1".into()), -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#), (Some("1".into()), -32602));
    }

    #[test]
    fn invalid_utf8_is_a_parse_error() {
        let mut line = br#"{"jsonrpc":"2.0","id":1,"method":""#.to_vec();
        line.extend_from_slice(&[0xff, 0xfe]);
        line.extend_from_slice(br#""}"#);
        assert_eq!(
            match classify(&line) { Incoming::Reject(None, e) => e.code.code(), _ => 0 },
            -32700
        );
    }

    #[test]
    fn ids_are_echoed_exactly() {
        for raw in ["1", "-3", "0", "\"1\"", "\"\"", "123456789012345678901234567890", "1.0", "\"\\u00e9\""] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#);
            match classify(line.as_bytes()) {
                Incoming::Request(m) => assert_eq!(m.id.unwrap().raw(), raw),
                other => panic!("{raw}: {other:?}"),
            }
        }
    }

    #[test]
    fn crlf_and_missing_params() {
        match classify(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r") {
            Incoming::Notification(m) => {
                assert_eq!(m.method, "notifications/initialized");
                assert!(m.params.is_empty());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn error_lines_omit_unreadable_ids() {
        let e = RpcError::new(ErrorCode::ParseError, "Parse error");
        assert_eq!(error_line(None, &e), r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#);
        let id = parse_id("\"x\"").unwrap();
        let e = RpcError::new(ErrorCode::UnsupportedProtocolVersion, "Unsupported protocol version")
            .with_data(serde_json::json!({"supported": ["a"], "requested": "b"}));
        assert_eq!(
            error_line(Some(&id), &e),
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["a"],"requested":"b"}}}"#
        );
    }
}
