//! The internal, version-neutral shapes of tools and tool results. They are
//! written in the newest vocabulary (2026-07-28); `projection` narrows them.

use serde_json::{Map, Value};

/// A registered tool, with its JSON already in wire vocabulary.
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

/// Content block kinds; the wire `type` of each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentKind {
    Text,
    Image,
    Audio,
    ResourceLink,
    Resource,
}

impl ContentKind {
    pub fn wire_type(self) -> &'static str {
        match self {
            ContentKind::Text => "text",
            ContentKind::Image => "image",
            ContentKind::Audio => "audio",
            ContentKind::ResourceLink => "resource_link",
            ContentKind::Resource => "resource",
        }
    }
    pub fn from_wire_type(t: &str) -> Option<Self> {
        [Self::Text, Self::Image, Self::Audio, Self::ResourceLink, Self::Resource]
            .into_iter()
            .find(|k| k.wire_type() == t)
    }
}

/// One content block: its kind and its full wire object (including `type`).
#[derive(Debug, Clone, PartialEq)]
pub struct Content {
    pub kind: ContentKind,
    pub body: Map<String, Value>,
}

impl Content {
    pub fn text(text: impl Into<String>) -> Self {
        let mut body = Map::new();
        body.insert("type".into(), Value::from("text"));
        body.insert("text".into(), Value::from(text.into()));
        Content { kind: ContentKind::Text, body }
    }
}

/// Structured content as JSON text produced by the R serializer.
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredJson {
    pub json: String,
}

impl StructuredJson {
    pub fn is_object(&self) -> bool {
        self.json.trim_start().starts_with('{')
    }
}

/// What a tool produced.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallResult {
    pub content: Vec<Content>,
    pub structured: Option<StructuredJson>,
    pub is_error: bool,
    pub meta: Option<Map<String, Value>>,
}

impl CallResult {
    /// A contained tool-level error carrying one text block.
    pub fn tool_error(message: impl Into<String>) -> Self {
        CallResult { content: vec![Content::text(message)], structured: None, is_error: true, meta: None }
    }
    pub fn text(text: impl Into<String>) -> Self {
        CallResult { content: vec![Content::text(text)], ..Default::default() }
    }
}
