//! JSON-RPC 2.0 envelopes as MCP narrows them: classifying one input line and
//! writing response lines. The error-code table lives here and nowhere else.

use crate::json::{Doc, ExactNumber, Kind, ParseError, Val};
use serde_json::Value;

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
    pub fn invalid_params(message: impl std::fmt::Display) -> Self {
        RpcError::new(ErrorCode::InvalidParams, format!("Invalid params: {message}"))
    }
}

/// What identifies a request for matching (cancellations): a string equals
/// only the same string (after unescaping); a number equals a number with
/// the same mathematical value (`1`, `1.0`, `1e0`), compared exactly, never
/// through a float; a string never equals a number.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IdKey {
    Str(String),
    Num(ExactNumber),
}

impl IdKey {
    /// The key of any JSON value a client uses to name a request (the
    /// `requestId` of a cancellation); `None` for other kinds.
    pub fn of(v: Val<'_>) -> Option<IdKey> {
        match v.kind() {
            Kind::String => v.as_str().map(|s| IdKey::Str(s.to_string())),
            Kind::Number => ExactNumber::parse(v.raw_str()).map(IdKey::Num),
            _ => None,
        }
    }
}

/// A request id: echoed byte for byte, matched by its [`IdKey`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId {
    raw: Box<str>,
    key: IdKey,
}

impl RequestId {
    /// A valid id is a JSON string or a number with an integral value (of
    /// any size a client can represent: not beyond a double's range).
    pub fn parse(v: Val<'_>) -> Option<RequestId> {
        let key = IdKey::of(v)?;
        if let IdKey::Num(n) = &key {
            if !n.is_integral() || !n.is_finite_double() {
                return None;
            }
        }
        Some(RequestId { raw: v.raw_str().into(), key })
    }
    /// The raw JSON text, echoed byte for byte.
    pub fn raw(&self) -> &str {
        &self.raw
    }
    pub fn key(&self) -> &IdKey {
        &self.key
    }
    /// A display form for telemetry: the string value or the number text.
    pub fn display(&self) -> String {
        match &self.key {
            IdKey::Str(s) => s.clone(),
            IdKey::Num(_) => self.raw.to_string(),
        }
    }
}

/// What one input line turned out to be.
#[derive(Debug)]
pub enum Incoming {
    /// Blank line or a response from the client: nothing to answer.
    Ignore,
    /// Broken input answered with an error (id when it could be read).
    Reject(Option<RequestId>, RpcError),
    /// A malformed notification: never answered.
    BadNotification,
    Request(Message),
    Notification(Message),
}

/// A message that passed envelope validation: the parsed line and where its
/// parts are.
#[derive(Debug)]
pub struct Message {
    doc: Doc,
    pub id: Option<RequestId>,
    pub method: String,
}

impl Message {
    /// `params`, when present (always an object here).
    pub fn params(&self) -> Option<Val<'_>> {
        self.doc.root().get("params")
    }
    /// Member `name` of `params`.
    pub fn param(&self, name: &str) -> Option<Val<'_>> {
        self.params().and_then(|p| p.get(name))
    }
    /// `params._meta`, when it is an object.
    pub fn meta(&self) -> Option<Val<'_>> {
        self.param(crate::wire::META).filter(Val::is_object)
    }
    /// Member `name` of `params._meta`.
    pub fn meta_field(&self, name: &str) -> Option<Val<'_>> {
        self.meta().and_then(|m| m.get(name))
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| b.is_ascii_whitespace())
}

/// Classify one line (without its trailing newline; a trailing CR is allowed).
/// Follows the decision table of the wire reference (§1.6), first match wins.
pub fn classify(mut line: Vec<u8>) -> Incoming {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    if is_blank(&line) {
        return Incoming::Ignore;
    }
    let doc = match Doc::parse(line) {
        Ok(d) => d,
        Err(e) => {
            let message = match e {
                ParseError::NotUtf8 { .. } => "Parse error: input is not valid UTF-8".to_string(),
                e => format!("Parse error: {e}"),
            };
            return Incoming::Reject(None, RpcError::new(ErrorCode::ParseError, message));
        }
    };
    let root = doc.root();
    match root.kind() {
        Kind::Object => {}
        Kind::Array => {
            return Incoming::Reject(
                None,
                RpcError::new(ErrorCode::InvalidRequest, "Invalid Request: batches are not supported"),
            )
        }
        _ => {
            return Incoming::Reject(
                None,
                RpcError::new(ErrorCode::InvalidRequest, "Invalid Request: a message must be a JSON object"),
            )
        }
    }
    let method = root.get("method");
    if method.is_none() && (root.get("result").is_some() || root.get("error").is_some()) {
        return Incoming::Ignore;
    }
    let id = match root.get("id") {
        None => None,
        Some(v) => match RequestId::parse(v) {
            Some(id) => Some(id),
            None => {
                return Incoming::Reject(
                    None,
                    RpcError::new(ErrorCode::InvalidRequest, "Invalid Request: id must be a string or an integer"),
                )
            }
        },
    };
    let method_name = method.and_then(|m| m.as_str()).map(str::to_string);
    let Some(id) = id else {
        // No id: a notification if the method is a string (never answered,
        // whatever else is wrong), else an invalid request.
        let Some(method) = method_name else {
            return Incoming::Reject(
                None,
                RpcError::new(ErrorCode::InvalidRequest, "Invalid Request: method must be a string"),
            );
        };
        if root.get("jsonrpc").and_then(|v| v.as_str()) != Some("2.0") || !params_ok(root.get("params")) {
            return Incoming::BadNotification;
        }
        return Incoming::Notification(Message { doc, id: None, method });
    };
    let reject = |msg: &str| Incoming::Reject(Some(id.clone()), RpcError::new(ErrorCode::InvalidRequest, msg));
    if root.get("jsonrpc").and_then(|v| v.as_str()) != Some("2.0") {
        return reject("Invalid Request: jsonrpc must be \"2.0\"");
    }
    let Some(method) = method_name else {
        return reject("Invalid Request: method must be a string");
    };
    match root.get("params").map(|p| p.kind()) {
        None | Some(Kind::Object) => {}
        Some(Kind::Array) => {
            return Incoming::Reject(Some(id), RpcError::invalid_params("params must be an object"));
        }
        Some(Kind::Deep) => {
            return reject("Invalid Request: params are nested too deeply to read");
        }
        Some(_) => return reject("Invalid Request: params must be an object"),
    }
    Incoming::Request(Message { doc, id: Some(id), method })
}

fn params_ok(params: Option<Val<'_>>) -> bool {
    params.is_none_or(|p| p.is_object())
}

/// `{"jsonrpc":"2.0","id":<id>,"result":` ... the caller appends the result
/// object and [`end_line`].
pub fn begin_result(out: &mut Vec<u8>, id: &RequestId) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.raw().as_bytes());
    out.extend_from_slice(b",\"result\":");
}

pub fn end_line(out: &mut Vec<u8>) {
    out.push(b'}');
}

/// A whole result line from result JSON text.
pub fn result_line(id: &RequestId, result_json: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(result_json.len() + id.raw().len() + 32);
    begin_result(&mut out, id);
    out.extend_from_slice(result_json.as_bytes());
    end_line(&mut out);
    out
}

/// An error response; `id` is omitted when the request id could not be read
/// (what MCP 2025-11-25 and later specify; JSON-RPC's `null` fails their schema).
pub fn error_line(id: Option<&RequestId>, error: &RpcError) -> Vec<u8> {
    let mut obj = serde_json::Map::new();
    obj.insert("code".into(), Value::from(error.code.code()));
    obj.insert("message".into(), Value::from(error.message.clone()));
    if let Some(data) = &error.data {
        obj.insert("data".into(), data.clone());
    }
    let mut out = Vec::with_capacity(96 + error.message.len());
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",");
    if let Some(id) = id {
        out.extend_from_slice(b"\"id\":");
        out.extend_from_slice(id.raw().as_bytes());
        out.push(b',');
    }
    out.extend_from_slice(b"\"error\":");
    let _ = serde_json::to_writer(&mut out, &Value::Object(obj));
    out.push(b'}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(line: &str) -> Incoming {
        classify(line.as_bytes().to_vec())
    }

    fn reject(line: &str) -> (Option<String>, i64) {
        match c(line) {
            Incoming::Reject(id, e) => (id.map(|i| i.raw().to_string()), e.code.code()),
            other => panic!("expected a rejection for {line}, got {other:?}"),
        }
    }

    #[test]
    fn decision_table_order() {
        assert!(matches!(c("   \t"), Incoming::Ignore));
        assert!(matches!(c(""), Incoming::Ignore));
        assert_eq!(reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\""), (None, -32700));
        assert_eq!(reject("[1,2"), (None, -32700));
        assert_eq!(reject("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]"), (None, -32600));
        assert_eq!(reject("[]"), (None, -32600));
        assert_eq!(reject("null"), (None, -32600));
        assert_eq!(reject("42"), (None, -32600));
        assert_eq!(reject("\"x\""), (None, -32600));
        assert!(matches!(c(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#), Incoming::Ignore));
        assert!(matches!(c(r#"{"jsonrpc":"2.0","method":"x","params":3}"#), Incoming::BadNotification));
        assert!(matches!(c(r#"{"jsonrpc":"1.0","method":"x"}"#), Incoming::BadNotification));
        // No id and no string method: an invalid request, not a notification.
        assert_eq!(reject(r#"{"jsonrpc":"2.0","methodExtra":1}"#), (None, -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#), (None, -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#), (None, -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#), (None, -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#), (None, -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#), (None, -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#), (None, -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":31e400,"method":"ping"}"#), (None, -32600));
        assert_eq!(reject(r#"{"id":7,"method":"ping"}"#), (Some("7".into()), -32600));
        assert_eq!(reject(r#"{"jsonrpc":2.0,"id":7,"method":"ping"}"#), (Some("7".into()), -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":"a","method":5}"#), (Some("\"a\"".into()), -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":"a"}"#), (Some("\"a\"".into()), -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}"#), (Some("1".into()), -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#), (Some("1".into()), -32600));
        assert_eq!(reject(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#), (Some("1".into()), -32602));
    }

    #[test]
    fn parse_errors_say_what_is_wrong() {
        let mut line = br#"{"jsonrpc":"2.0","id":1,"method":""#.to_vec();
        line.extend_from_slice(&[0xff, 0xfe]);
        line.extend_from_slice(br#""}"#);
        match classify(line) {
            Incoming::Reject(None, e) => {
                assert_eq!(e.code.code(), -32700);
                assert!(e.message.contains("UTF-8"));
            }
            other => panic!("{other:?}"),
        }
        match c(r#"{"a":1,}"#) {
            Incoming::Reject(None, e) => {
                assert_eq!(e.message, "Parse error: expected a string key in an object at byte 7")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn values_serde_refuses_are_read() {
        // Lone surrogates, huge numbers and deep nesting are valid JSON.
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"\ud800"}}"#.to_string(),
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1e400}}"#.to_string(),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"a":{deep}}}}}"#),
        ] {
            assert!(matches!(classify(line.into_bytes()), Incoming::Request(_)));
        }
    }

    #[test]
    fn ids_are_echoed_exactly_and_compared_by_value() {
        for raw in ["1", "-3", "0", "\"1\"", "\"\"", "123456789012345678901234567890", "1.0", "1e0", "\"\\u00e9\""] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#);
            match c(&line) {
                Incoming::Request(m) => assert_eq!(m.id.unwrap().raw(), raw),
                other => panic!("{raw}: {other:?}"),
            }
        }
        let key = |raw: &str| match c(&format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#)) {
            Incoming::Request(m) => m.id.unwrap().key().clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(key("1"), key("1.0"));
        assert_eq!(key("1"), key("1e0"));
        assert_eq!(key("1"), key("10e-1"));
        assert_ne!(key("1"), key("\"1\""));
        assert_eq!(key("\"a\""), key("\"\\u0061\""));
        assert_ne!(key("18446744073709551617"), key("18446744073709551616"));
    }

    #[test]
    fn crlf_and_missing_params() {
        match c("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r") {
            Incoming::Notification(m) => {
                assert_eq!(m.method, "notifications/initialized");
                assert!(m.params().is_none());
            }
            other => panic!("{other:?}"),
        }
        match c(r#"{"jsonrpc":"2.0","method":"notifications\/cancelled","params":{"requestId":1}}"#) {
            Incoming::Notification(m) => assert_eq!(m.method, "notifications/cancelled"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn error_lines_omit_unreadable_ids() {
        let e = RpcError::new(ErrorCode::ParseError, "Parse error");
        assert_eq!(error_line(None, &e), br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#);
        let d = Doc::parse(b"\"x\"".to_vec()).unwrap();
        let id = RequestId::parse(d.root()).unwrap();
        let e = RpcError::new(ErrorCode::UnsupportedProtocolVersion, "Unsupported protocol version")
            .with_data(serde_json::json!({"supported": ["a"], "requested": "b"}));
        assert_eq!(
            String::from_utf8(error_line(Some(&id), &e)).unwrap(),
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["a"],"requested":"b"}}}"#
        );
    }
}
