//! Projection: one internal tool or result, written in the vocabulary of the
//! version in force. Every MCP field name of a tool result is written here and
//! nowhere else; which fields a version carries comes from the flags in
//! `version::VERSIONS`.

use crate::result::{Annotations, Block, CallResult, Content, ResourceBody, ToolDef};
use crate::rjson::{write_json_string, RValue};
use crate::version::{Structured, Version};
use crate::wire;
use serde_json::{Map, Value};

fn schema_root_is_object(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// Older schema files want every root `properties` member to be an object and
/// `required` to be an array; boolean subschemas are rewritten to equivalents.
fn strict_members(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut out = schema.clone();
    if let Some(Value::Object(props)) = out.get_mut("properties") {
        for v in props.values_mut() {
            match v {
                Value::Bool(true) => *v = Value::Object(Map::new()),
                Value::Bool(false) => *v = serde_json::json!({"not": {}}),
                _ => {}
            }
        }
    }
    if let Some(req) = out.get_mut("required") {
        if let Value::String(s) = req {
            *req = Value::Array(vec![Value::String(std::mem::take(s))]);
        }
    }
    out
}

fn structured_allowed(rule: Structured, is_object: bool) -> bool {
    match rule {
        Structured::None => false,
        Structured::ObjectOnly => is_object,
        Structured::Any => true,
    }
}

/// A Tool object for `tools/list` in version `v`.
pub fn project_tool(tool: &ToolDef, v: &Version) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), Value::from(tool.name.clone()));
    if v.tool_title_annotations_meta {
        if let Some(t) = &tool.title {
            out.insert("title".into(), Value::from(t.clone()));
        }
    }
    if let Some(d) = &tool.description {
        out.insert("description".into(), Value::from(d.clone()));
    }
    let input = if v.strict_schema_members { strict_members(&tool.input_schema) } else { tool.input_schema.clone() };
    out.insert(wire::INPUT_SCHEMA.into(), Value::Object(input));
    if let Some(schema) = &tool.output_schema {
        if structured_allowed(v.output_schema, schema_root_is_object(schema)) {
            let schema = match (schema, v.strict_schema_members) {
                (Value::Object(m), true) => Value::Object(strict_members(m)),
                _ => schema.clone(),
            };
            out.insert(wire::OUTPUT_SCHEMA.into(), schema);
        }
    }
    if v.tool_title_annotations_meta {
        if let Some(a) = &tool.annotations {
            out.insert("annotations".into(), Value::Object(a.clone()));
        }
        if let Some(m) = &tool.meta {
            out.insert(wire::META.into(), Value::Object(m.clone()));
        }
    }
    Value::Object(out)
}

/// Appends `"key":` (key is a plain ASCII name).
fn key(out: &mut Vec<u8>, name: &str) {
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

fn string(out: &mut Vec<u8>, s: &str) {
    write_json_string(out, s.as_bytes());
}

fn json_value(out: &mut Vec<u8>, v: &Value) {
    // Serializing a Value into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, v);
}

fn json_map(out: &mut Vec<u8>, m: &Map<String, Value>) {
    let _ = serde_json::to_writer(&mut *out, m);
}

/// A finite double as JSON: whole numbers without a fraction.
fn number(out: &mut Vec<u8>, d: f64) {
    json_value(out, &crate::r::fixed::double_value(d));
}

fn annotations(out: &mut Vec<u8>, a: &Annotations, v: &Version) {
    let last_modified = a.last_modified.as_ref().filter(|_| v.last_modified);
    if a.audience.is_none() && a.priority.is_none() && last_modified.is_none() && a.other.is_empty() {
        return;
    }
    out.extend_from_slice(b",\"annotations\":{");
    let mut first = true;
    let mut sep = |out: &mut Vec<u8>| {
        if !first {
            out.push(b',');
        }
        first = false;
    };
    if let Some(roles) = &a.audience {
        sep(out);
        key(out, "audience");
        out.push(b'[');
        for (i, r) in roles.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            string(out, r.as_str());
        }
        out.push(b']');
    }
    if let Some(p) = a.priority {
        sep(out);
        key(out, "priority");
        number(out, p);
    }
    if let Some(m) = last_modified {
        sep(out);
        key(out, wire::LAST_MODIFIED);
        string(out, m);
    }
    for (name, value) in &a.other {
        sep(out);
        string(out, name);
        out.push(b':');
        json_value(out, value);
    }
    out.push(b'}');
}

fn optional(out: &mut Vec<u8>, name: &str, value: &Option<String>) {
    if let Some(s) = value {
        out.push(b',');
        key(out, name);
        string(out, s);
    }
}

/// One content block for version `v` (which can carry its kind).
fn content<V: RValue>(out: &mut Vec<u8>, c: &Content<V>, v: &Version) {
    out.extend_from_slice(b"{\"type\":");
    string(out, c.wire_type());
    match &c.block {
        Block::Text { text } => {
            out.extend_from_slice(b",\"text\":");
            text.write_json(out);
        }
        Block::Image { data, mime_type } | Block::Audio { data, mime_type } => {
            out.extend_from_slice(b",\"data\":");
            data.write_json(out);
            out.extend_from_slice(wire::after::MIME_TYPE.as_bytes());
            string(out, mime_type);
        }
        Block::ResourceLink { uri, name, title, description, mime_type, size } => {
            out.extend_from_slice(b",\"uri\":");
            string(out, uri);
            out.extend_from_slice(b",\"name\":");
            string(out, name);
            optional(out, "title", title);
            optional(out, "description", description);
            optional(out, wire::MIME_TYPE, mime_type);
            if let Some(size) = size {
                out.extend_from_slice(b",\"size\":");
                number(out, *size);
            }
        }
        Block::Resource { uri, mime_type, body } => {
            out.extend_from_slice(b",\"resource\":{\"uri\":");
            string(out, uri);
            optional(out, wire::MIME_TYPE, mime_type);
            match body {
                ResourceBody::Text(t) => {
                    out.extend_from_slice(b",\"text\":");
                    t.write_json(out);
                }
                ResourceBody::Blob(b) => {
                    out.extend_from_slice(b",\"blob\":");
                    b.write_json(out);
                }
            }
            out.push(b'}');
        }
    }
    annotations(out, &c.annotations, v);
    if v.content_meta {
        if let Some(m) = &c.meta {
            out.extend_from_slice(wire::after::META.as_bytes());
            json_map(out, m);
        }
    }
    out.push(b'}');
}

/// Appends the `CallToolResult` object for version `v`. `server_meta`
/// (serverInfo, the server's own key) is merged into `_meta` for modern
/// results.
pub fn write_result<V: RValue>(
    out: &mut Vec<u8>,
    result: &CallResult<V>,
    v: &Version,
    server_meta: Option<(&str, &Value)>,
) {
    if !v.audio_and_links {
        let uncarried =
            result.content.iter().find(|b| matches!(b.block, Block::Audio { .. } | Block::ResourceLink { .. }));
        if let Some(block) = uncarried {
            let what = if matches!(block.block, Block::Audio { .. }) { "audio" } else { "a resource link" };
            let contained = CallResult::<V> {
                meta: result.meta.clone(),
                ..CallResult::tool_error(format!("Tool produced {what}, which protocol {} cannot carry.", v.id))
            };
            return write_result(out, &contained, v, server_meta);
        }
    }
    out.push(b'{');
    if v.modern_result {
        out.extend_from_slice(wire::first::RESULT_TYPE.as_bytes());
        out.extend_from_slice(b"\"complete\",");
    }
    let structured =
        result.structured.as_ref().filter(|_| structured_allowed(v.structured_content, result.structured_is_object()));
    out.extend_from_slice(b"\"content\":[");
    for (i, c) in result.content.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        content(out, c, v);
    }
    if result.content.is_empty() {
        if let (Some(s), None) = (&result.structured, structured) {
            // Structured content the version drops must still reach the client.
            out.extend_from_slice(b"{\"type\":\"text\",\"text\":");
            s.write_json(out);
            out.push(b'}');
        }
    }
    out.push(b']');
    if let Some(s) = structured {
        out.extend_from_slice(wire::after::STRUCTURED_CONTENT.as_bytes());
        s.with_bytes(|b| out.extend_from_slice(b));
    }
    out.extend_from_slice(wire::after::IS_ERROR.as_bytes());
    out.extend_from_slice(if result.is_error { b"true" } else { b"false" });
    let mut meta = result.meta.clone().unwrap_or_default();
    if let Some((k, val)) = server_meta {
        meta.insert(k.to_string(), val.clone());
    }
    if !meta.is_empty() {
        out.extend_from_slice(wire::after::META.as_bytes());
        json_map(out, &meta);
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Role, Text};
    use crate::rjson::testvalue::{s, TV};
    use crate::version::VERSIONS;
    use serde_json::json;

    fn v(id: &str) -> &'static Version {
        VERSIONS.iter().find(|x| x.id == id).unwrap()
    }

    fn tool() -> ToolDef {
        ToolDef {
            name: "t".into(),
            description: Some("d".into()),
            title: Some("T".into()),
            input_schema: json!({"type":"object","properties":{"a":true,"b":false},"required":"a"})
                .as_object()
                .unwrap()
                .clone(),
            output_schema: Some(json!({"type":"array"})),
            annotations: Some(json!({"readOnlyHint":true}).as_object().unwrap().clone()),
            meta: None,
        }
    }

    fn text(r: &CallResult<TV>, version: &str) -> String {
        let mut out = Vec::new();
        write_result(&mut out, r, v(version), None);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn tools_are_narrowed_per_version() {
        let t = tool();
        let modern = project_tool(&t, v("2026-07-28"));
        assert_eq!(modern["outputSchema"], json!({"type":"array"}));
        assert_eq!(modern["inputSchema"]["properties"]["a"], json!(true));
        assert_eq!(modern["title"], json!("T"));
        let l = project_tool(&t, v("2025-06-18"));
        assert!(l.get("outputSchema").is_none(), "array output schema dropped before 2026-07-28");
        assert_eq!(l["inputSchema"]["properties"]["a"], json!({}));
        assert_eq!(l["inputSchema"]["properties"]["b"], json!({"not":{}}));
        assert_eq!(l["inputSchema"]["required"], json!(["a"]));
        assert_eq!(l["annotations"], json!({"readOnlyHint":true}));
        let old = project_tool(&t, v("2024-11-05"));
        assert!(old.get("title").is_none() && old.get("annotations").is_none());
        let mut obj = t.clone();
        obj.output_schema = Some(json!({"type":"object","properties":{}}));
        assert!(project_tool(&obj, v("2025-11-25")).get("outputSchema").is_some());
        assert!(project_tool(&obj, v("2024-11-05")).get("outputSchema").is_none());
    }

    fn block(b: Block<TV>) -> Content<TV> {
        Content { block: b, annotations: Annotations::default(), meta: None }
    }

    #[test]
    fn audio_is_contained_in_2024() {
        let r = CallResult {
            content: vec![block(Block::Audio { data: Text::R(s("AA==")), mime_type: "audio/wav".into() })],
            structured: None,
            is_error: false,
            meta: None,
            keep: None,
        };
        let out: Value = serde_json::from_str(&text(&r, "2024-11-05")).unwrap();
        assert_eq!(out["isError"], json!(true));
        assert_eq!(out["content"][0]["type"], json!("text"));
        let out: Value = serde_json::from_str(&text(&r, "2025-06-18")).unwrap();
        assert_eq!(out["content"][0], json!({"type":"audio","data":"AA==","mimeType":"audio/wav"}));
        assert_eq!(out["isError"], json!(false));
    }

    #[test]
    fn structured_content_follows_the_version() {
        let r = CallResult::<TV> {
            content: vec![Content::text("[1,2]")],
            structured: Some(Text::R(s("[1,2]"))),
            is_error: false,
            meta: None,
            keep: None,
        };
        let mut out = Vec::new();
        write_result(&mut out, &r, v("2026-07-28"), Some(("k", &json!({"name":"x"}))));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"resultType":"complete","content":[{"type":"text","text":"[1,2]"}],"structuredContent":[1,2],"isError":false,"_meta":{"k":{"name":"x"}}}"#
        );
        assert_eq!(text(&r, "2025-11-25"), r#"{"content":[{"type":"text","text":"[1,2]"}],"isError":false}"#);
        let empty = CallResult::<TV> {
            content: vec![],
            structured: Some(Text::Owned("{\"a\":1}".into())),
            ..CallResult::tool_error("")
        };
        let empty = CallResult { is_error: false, ..empty };
        assert_eq!(text(&empty, "2024-11-05"), r#"{"content":[{"type":"text","text":"{\"a\":1}"}],"isError":false}"#);
        assert_eq!(text(&empty, "2025-06-18"), r#"{"content":[],"structuredContent":{"a":1},"isError":false}"#);
    }

    #[test]
    fn newer_fields_are_dropped() {
        let r = CallResult::<TV> {
            content: vec![Content {
                block: Block::Resource {
                    uri: "u".into(),
                    mime_type: None,
                    body: ResourceBody::Text(Text::Owned("t".into())),
                },
                annotations: Annotations {
                    audience: Some(vec![Role::User]),
                    priority: Some(0.5),
                    last_modified: Some("2025-01-01T00:00:00Z".into()),
                    other: Map::new(),
                },
                meta: Some(json!({"b":2}).as_object().unwrap().clone()),
            }],
            structured: None,
            is_error: true,
            meta: None,
            keep: None,
        };
        assert_eq!(
            text(&r, "2024-11-05"),
            r#"{"content":[{"type":"resource","resource":{"uri":"u","text":"t"},"annotations":{"audience":["user"],"priority":0.5}}],"isError":true}"#
        );
        assert_eq!(
            text(&r, "2025-06-18"),
            r#"{"content":[{"type":"resource","resource":{"uri":"u","text":"t"},"annotations":{"audience":["user"],"priority":0.5,"lastModified":"2025-01-01T00:00:00Z"},"_meta":{"b":2}}],"isError":true}"#
        );
    }

    #[test]
    fn links_write_every_field() {
        let r = CallResult::<TV> {
            content: vec![block(Block::ResourceLink {
                uri: "file:///x".into(),
                name: "x".into(),
                title: Some("X".into()),
                description: None,
                mime_type: Some("text/csv".into()),
                size: Some(2048.0),
            })],
            structured: None,
            is_error: false,
            meta: None,
            keep: None,
        };
        assert_eq!(
            text(&r, "2025-11-25"),
            r#"{"content":[{"type":"resource_link","uri":"file:///x","name":"x","title":"X","mimeType":"text/csv","size":2048}],"isError":false}"#
        );
    }
}
