//! Routing: one validated message in, at most one response line out.
//!
//! Era rules (each request judged on its own):
//! - a request whose `params._meta` names a protocol version or client
//!   capabilities is served statelessly in the version it names;
//! - otherwise `tools/list` and `tools/call` use the version negotiated by the
//!   latest legacy `initialize`; before any `initialize` they get -32602, as a
//!   modern request without its required `_meta` would;
//! - `initialize` may be repeated and re-negotiates; it never affects modern requests.

use crate::envelope::{self, ErrorCode, Incoming, Message, RpcError};
use crate::projection::{project_result, project_tool};
use crate::result::{CallResult, ToolDef};
use crate::version::{self, VersionIndex, VERSIONS};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Runs tools; the only way the core reaches R.
pub trait ToolHost {
    /// Run tool `index` with its arguments. R errors come back as a result
    /// with `is_error` set, never as a failure of the host.
    fn call_tool(&mut self, index: usize, tool: &ToolDef, arguments: Map<String, Value>) -> CallResult;
}

/// Sees every message that passed envelope validation: `begin` before it is
/// handled, `end` after, with what happened. Telemetry implements it.
pub trait Observer {
    fn begin(&mut self, msg: &Message);
    fn end(&mut self, handled: &Handled);
}

/// An observer that does nothing.
pub struct NoObserver;

impl Observer for NoObserver {
    fn begin(&mut self, _msg: &Message) {}
    fn end(&mut self, _handled: &Handled) {}
}

/// The server's name and version, as announced to clients.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
}

/// What happened to one message: the answer, and what telemetry and the
/// cancellation check need to know about it.
#[derive(Debug, Default)]
pub struct Handled {
    /// The response line, if the message gets one.
    pub line: Option<String>,
    pub version: Option<VersionIndex>,
    pub rpc_error: Option<ErrorCode>,
    pub tool_error: bool,
    /// The request id as a JSON value, to match cancellations.
    pub request_id_json: Option<Value>,
}

pub struct Server {
    tools: Vec<ToolDef>,
    by_name: HashMap<String, usize>,
    instructions: Option<String>,
    info: ServerInfo,
    /// Version negotiated by the latest legacy `initialize`.
    legacy: Option<VersionIndex>,
    /// `tools` arrays pre-serialized per version: byte-identical every time.
    tools_json: Vec<String>,
}

impl Server {
    pub fn new(tools: Vec<ToolDef>, instructions: Option<String>, info: ServerInfo) -> Result<Self, String> {
        let mut by_name = HashMap::new();
        for (i, t) in tools.iter().enumerate() {
            if by_name.insert(t.name.clone(), i).is_some() {
                return Err(format!("duplicate tool name: {}", t.name));
            }
        }
        let tools_json = VERSIONS
            .iter()
            .map(|v| Value::Array(tools.iter().map(|t| project_tool(t, v)).collect()).to_string())
            .collect();
        Ok(Server { tools, by_name, instructions, info, legacy: None, tools_json })
    }

    fn server_info_value(&self) -> Value {
        json!({"name": self.info.name, "version": self.info.version})
    }

    /// Handle one raw input line.
    pub fn handle_line(&mut self, line: &[u8], host: &mut dyn ToolHost, observer: &mut dyn Observer) -> Handled {
        match envelope::classify(line) {
            Incoming::Ignore(_) | Incoming::BadNotification => Handled::default(),
            Incoming::Reject(id, err) => Handled {
                line: Some(envelope::error_line(id.as_ref(), &err)),
                rpc_error: Some(err.code),
                ..Default::default()
            },
            Incoming::Notification(msg) => {
                observer.begin(&msg);
                let handled = Handled {
                    version: self.version_hint(&msg),
                    ..Default::default()
                };
                observer.end(&handled);
                handled
            }
            Incoming::Request(msg) => {
                observer.begin(&msg);
                let handled = self.handle_request(msg, host);
                observer.end(&handled);
                handled
            }
        }
    }

    /// The version a message would be served in, for telemetry only.
    fn version_hint(&self, msg: &Message) -> Option<VersionIndex> {
        match meta_of(msg) {
            Some(meta) if is_modern(meta) => {
                meta.get(META_PROTOCOL_VERSION).and_then(Value::as_str).and_then(version::lookup)
            }
            _ => self.legacy,
        }
    }

    fn handle_request(&mut self, msg: Message, host: &mut dyn ToolHost) -> Handled {
        let mut handled = Handled {
            request_id_json: msg.id.as_ref().and_then(|id| serde_json::from_str(id.raw()).ok()),
            ..Default::default()
        };
        let Some(id) = msg.id.clone() else { return handled };
        let outcome = self.route(&msg, host, &mut handled);
        handled.line = Some(match outcome {
            Ok(result) => envelope::result_line(&id, &result),
            Err(err) => {
                handled.rpc_error = Some(err.code);
                envelope::error_line(Some(&id), &err)
            }
        });
        handled
    }

    fn route(&mut self, msg: &Message, host: &mut dyn ToolHost, handled: &mut Handled) -> Result<String, RpcError> {
        let modern = meta_of(msg).is_some_and(is_modern);
        match msg.method.as_str() {
            "initialize" => self.initialize(msg, handled),
            "ping" if !modern => {
                handled.version = self.legacy;
                Ok("{}".into())
            }
            "server/discover" => {
                let v = self.modern_version(msg)?;
                handled.version = Some(v);
                Ok(self.discover())
            }
            "tools/list" | "tools/call" => {
                let v = if modern {
                    self.modern_version(msg)?
                } else {
                    self.legacy.ok_or_else(|| {
                        RpcError::new(
                            ErrorCode::InvalidParams,
                            "Invalid params: send initialize first, or give the protocol version and client \
                             capabilities in params._meta",
                        )
                    })?
                };
                handled.version = Some(v);
                if msg.method == "tools/list" {
                    self.list_tools(msg, v)
                } else {
                    self.call_tool(msg, v, host, handled)
                }
            }
            other => Err(RpcError::new(ErrorCode::MethodNotFound, format!("Method not found: {other}"))),
        }
    }

    fn initialize(&mut self, msg: &Message, handled: &mut Handled) -> Result<String, RpcError> {
        let requested = match msg.params.get("protocolVersion") {
            Some(Value::String(s)) => s.as_str(),
            _ => {
                return Err(RpcError::new(
                    ErrorCode::InvalidParams,
                    "Invalid params: initialize needs a string protocolVersion",
                ))
            }
        };
        for key in ["capabilities", "clientInfo"] {
            if msg.params.get(key).is_some_and(|v| !v.is_object()) {
                return Err(RpcError::new(ErrorCode::InvalidParams, format!("Invalid params: {key} must be an object")));
            }
        }
        let v = version::negotiate_legacy(requested);
        self.legacy = Some(v);
        handled.version = Some(v);
        let mut result = Map::new();
        result.insert("protocolVersion".into(), Value::from(VERSIONS[v].id));
        result.insert("capabilities".into(), json!({"tools": {}}));
        result.insert("serverInfo".into(), self.server_info_value());
        if let Some(text) = &self.instructions {
            result.insert("instructions".into(), Value::from(text.clone()));
        }
        Ok(Value::Object(result).to_string())
    }

    /// Validate the per-request metadata of a modern request.
    fn modern_version(&self, msg: &Message) -> Result<VersionIndex, RpcError> {
        let missing = |field: &str| {
            RpcError::new(ErrorCode::InvalidParams, format!("Invalid params: missing required _meta field {field}"))
        };
        let meta = meta_of(msg).ok_or_else(|| missing(META_PROTOCOL_VERSION))?;
        let requested = meta.get(META_PROTOCOL_VERSION).and_then(Value::as_str).ok_or_else(|| missing(META_PROTOCOL_VERSION))?;
        let v = version::lookup(requested).ok_or_else(|| {
            RpcError::new(ErrorCode::UnsupportedProtocolVersion, "Unsupported protocol version")
                .with_data(json!({"supported": version::supported_ids(), "requested": requested}))
        })?;
        if !meta.get(META_CLIENT_CAPABILITIES).is_some_and(Value::is_object) {
            return Err(missing(META_CLIENT_CAPABILITIES));
        }
        Ok(v)
    }

    fn modern_tail(&self, cacheable: bool) -> String {
        let mut tail = String::new();
        if cacheable {
            tail.push_str(&format!(",\"ttlMs\":{},\"cacheScope\":\"public\"", version::CACHE_TTL_MS));
        }
        tail.push_str(&format!(",\"_meta\":{}", json!({ META_SERVER_INFO: self.server_info_value() })));
        tail
    }

    fn discover(&self) -> String {
        let mut out = String::from("{\"resultType\":\"complete\",\"supportedVersions\":");
        out.push_str(&Value::from(version::supported_ids()).to_string());
        out.push_str(",\"capabilities\":{\"tools\":{}}");
        if let Some(text) = &self.instructions {
            out.push_str(",\"instructions\":");
            out.push_str(&Value::from(text.clone()).to_string());
        }
        out.push_str(&self.modern_tail(true));
        out.push('}');
        out
    }

    fn list_tools(&self, msg: &Message, v: VersionIndex) -> Result<String, RpcError> {
        if msg.params.contains_key("cursor") {
            // mcplite lists every tool on one page and never hands out cursors.
            return Err(RpcError::new(ErrorCode::InvalidParams, "Invalid params: unknown cursor"));
        }
        let modern = VERSIONS[v].modern_result;
        let mut out = String::with_capacity(self.tools_json[v].len() + 160);
        out.push('{');
        if modern {
            out.push_str("\"resultType\":\"complete\",");
        }
        out.push_str("\"tools\":");
        out.push_str(&self.tools_json[v]);
        if modern {
            out.push_str(&self.modern_tail(true));
        }
        out.push('}');
        Ok(out)
    }

    fn call_tool(
        &mut self,
        msg: &Message,
        v: VersionIndex,
        host: &mut dyn ToolHost,
        handled: &mut Handled,
    ) -> Result<String, RpcError> {
        let name = match msg.params.get("name") {
            Some(Value::String(s)) => s.as_str(),
            _ => return Err(RpcError::new(ErrorCode::InvalidParams, "Invalid params: tools/call needs a string name")),
        };
        let arguments = match msg.params.get("arguments") {
            None => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(RpcError::new(ErrorCode::InvalidParams, "Invalid params: arguments must be an object")),
        };
        let index = *self
            .by_name
            .get(name)
            .ok_or_else(|| RpcError::new(ErrorCode::InvalidParams, format!("Invalid params: unknown tool {name}")))?;
        let result = host.call_tool(index, &self.tools[index], arguments);
        handled.tool_error = result.is_error;
        let version = &VERSIONS[v];
        let info = self.server_info_value();
        let server_meta = version.modern_result.then_some((META_SERVER_INFO, &info));
        Ok(project_result(&result, version, server_meta))
    }
}

fn meta_of(msg: &Message) -> Option<&Map<String, Value>> {
    msg.params.get("_meta").and_then(Value::as_object)
}

fn is_modern(meta: &Map<String, Value>) -> bool {
    meta.contains_key(META_PROTOCOL_VERSION) || meta.contains_key(META_CLIENT_CAPABILITIES)
}

