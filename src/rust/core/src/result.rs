//! The internal, version-neutral shapes of tools and tool results, in plain
//! Rust terms: no MCP field names here (those live in `projection`, which
//! writes the wire), and no R (large texts stay in the R object that holds
//! them, read through [`RValue`] only when the answer is written).

use crate::rjson::RValue;
use serde_json::{Map, Value};

/// A registered tool's metadata, already in wire vocabulary where it is
/// user-written JSON (schemas, annotations, `_meta`).
#[derive(Debug, Clone)]
pub struct ToolDef {
    pub name: String,
    pub description: Option<String>,
    pub title: Option<String>,
    pub input_schema: Map<String, Value>,
    pub output_schema: Option<Value>,
    pub annotations: Option<Map<String, Value>>,
    pub meta: Option<Map<String, Value>>,
}

/// Text for the wire: a string held by R (a character vector of length one,
/// not NA), written without copying it first, or one the core made.
#[derive(Debug, Clone)]
pub enum Text<V> {
    R(V),
    Owned(String),
    /// Payload JSON the core wrote, in a serializer buffer.
    Json(JsonBuffer),
}

/// JSON text in one of the serializer's output buffers ([`crate::rjson::take_buffer`]),
/// handed back when the text is dropped (after its answer is written), so
/// the next large answer reuses the memory.
#[derive(Debug, Clone)]
pub struct JsonBuffer(String);

impl JsonBuffer {
    /// The text the serializer wrote into a buffer it took.
    pub fn new(bytes: Vec<u8>) -> Self {
        JsonBuffer(String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }
}

impl Drop for JsonBuffer {
    fn drop(&mut self) {
        crate::rjson::give_back(std::mem::take(&mut self.0).into_bytes());
    }
}

impl<V: RValue> Text<V> {
    /// The UTF-8 bytes (invalid sequences from "bytes"-encoded R strings are
    /// replaced when written).
    pub fn with_bytes<T>(&self, f: impl FnOnce(&[u8]) -> T) -> T {
        match self {
            Text::R(v) => match v.str_elt(0) {
                Some(b) => f(&b),
                None => f(b"NA"),
            },
            Text::Owned(s) => f(s.as_bytes()),
            Text::Json(j) => f(j.0.as_bytes()),
        }
    }

    /// Appends the text as a JSON string literal.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        if let Text::R(v) = self {
            if let Some(b) = v.core_json() {
                // Valid UTF-8 already (the glue made it so).
                return crate::rjson::write_json_string(out, b);
            }
        }
        self.with_bytes(|b| match std::str::from_utf8(b) {
            Ok(_) => crate::rjson::write_json_string(out, b),
            Err(_) => crate::rjson::write_json_string(out, String::from_utf8_lossy(b).as_bytes()),
        })
    }

    pub fn to_string_lossy(&self) -> String {
        self.with_bytes(|b| String::from_utf8_lossy(b).into_owned())
    }
}

/// What a content block carries.
#[derive(Debug, Clone)]
pub enum Block<V> {
    Text {
        text: Text<V>,
    },
    Image {
        data: Text<V>,
        mime_type: String,
    },
    Audio {
        data: Text<V>,
        mime_type: String,
    },
    ResourceLink {
        uri: String,
        name: String,
        title: Option<String>,
        description: Option<String>,
        mime_type: Option<String>,
        /// A whole number of bytes.
        size: Option<f64>,
    },
    Resource {
        uri: String,
        mime_type: Option<String>,
        body: ResourceBody<V>,
    },
}

#[derive(Debug, Clone)]
pub enum ResourceBody<V> {
    Text(Text<V>),
    /// Base64 data.
    Blob(Text<V>),
}

/// Who a block is meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Annotations {
    pub audience: Option<Vec<Role>>,
    pub priority: Option<f64>,
    pub last_modified: Option<String>,
    /// Members MCP does not define, sent as given (the schema allows them).
    pub other: Map<String, Value>,
}

/// One content block.
#[derive(Debug, Clone)]
pub struct Content<V> {
    pub block: Block<V>,
    pub annotations: Annotations,
    pub meta: Option<Map<String, Value>>,
}

impl<V> Content<V> {
    pub fn text(text: impl Into<String>) -> Self {
        Content {
            block: Block::Text { text: Text::Owned(text.into()) },
            annotations: Annotations::default(),
            meta: None,
        }
    }

    /// The block's MCP `type`.
    pub fn wire_type(&self) -> &'static str {
        match self.block {
            Block::Text { .. } => "text",
            Block::Image { .. } => "image",
            Block::Audio { .. } => "audio",
            Block::ResourceLink { .. } => "resource_link",
            Block::Resource { .. } => "resource",
        }
    }
}

/// What a tool produced, checked and ready to be projected.
#[derive(Debug, Clone)]
pub struct CallResult<V> {
    pub content: Vec<Content<V>>,
    /// Structured content as compact JSON text: validated if R built it.
    pub structured: Option<Text<V>>,
    pub is_error: bool,
    pub meta: Option<Map<String, Value>>,
    /// The R object the texts above live in, kept alive until written.
    pub keep: Option<V>,
}

impl<V> CallResult<V> {
    /// A contained tool-level error carrying one text block.
    pub fn tool_error(message: impl Into<String>) -> Self {
        CallResult { content: vec![Content::text(message)], structured: None, is_error: true, meta: None, keep: None }
    }

    pub fn text(text: Text<V>) -> Self {
        CallResult {
            content: vec![Content { block: Block::Text { text }, annotations: Annotations::default(), meta: None }],
            structured: None,
            is_error: false,
            meta: None,
            keep: None,
        }
    }
}

impl<V: RValue> CallResult<V> {
    /// Whether the structured content is a JSON object.
    pub fn structured_is_object(&self) -> bool {
        self.structured.as_ref().is_some_and(|s| s.with_bytes(|b| b.first() == Some(&b'{')))
    }
}
