//! Projection: one internal tool or result, shaped for the version in force.
//! The rules come from the flags in `version::VERSIONS`.

use crate::result::{CallResult, Content, ContentKind, ToolDef};
use crate::version::{Structured, Version};
use serde_json::{Map, Value};
use std::borrow::Cow;

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
    out.insert("inputSchema".into(), Value::Object(input));
    if let Some(schema) = &tool.output_schema {
        if structured_allowed(v.output_schema, schema_root_is_object(schema)) {
            let schema = match (schema, v.strict_schema_members) {
                (Value::Object(m), true) => Value::Object(strict_members(m)),
                _ => schema.clone(),
            };
            out.insert("outputSchema".into(), schema);
        }
    }
    if v.tool_title_annotations_meta {
        if let Some(a) = &tool.annotations {
            out.insert("annotations".into(), Value::Object(a.clone()));
        }
        if let Some(m) = &tool.meta {
            out.insert("_meta".into(), Value::Object(m.clone()));
        }
    }
    Value::Object(out)
}

/// A content block narrowed to version `v`: borrowed as is when the version
/// keeps everything it holds (large text blocks are not copied), else a
/// copy without the fields the version lacks. Blocks the version cannot carry
/// at all are handled by [`project_result`].
fn project_content<'a>(block: &'a Content, v: &Version) -> Cow<'a, Map<String, Value>> {
    let body = &block.body;
    let drops_meta = !v.content_meta
        && (body.contains_key("_meta") || body.get("resource").is_some_and(|r| r.get("_meta").is_some()));
    let drops_modified = !v.last_modified && body.get("annotations").is_some_and(|a| a.get("lastModified").is_some());
    let drops_icons = !v.icons && body.contains_key("icons");
    if !(drops_meta || drops_modified || drops_icons) {
        return Cow::Borrowed(body);
    }
    let mut body = body.clone();
    if drops_meta {
        body.remove("_meta");
        if let Some(Value::Object(res)) = body.get_mut("resource") {
            res.remove("_meta");
        }
    }
    if drops_modified {
        if let Some(Value::Object(ann)) = body.get_mut("annotations") {
            ann.remove("lastModified");
            if ann.is_empty() {
                body.remove("annotations");
            }
        }
    }
    if drops_icons {
        body.remove("icons");
    }
    Cow::Owned(body)
}

/// The `CallToolResult` object for version `v`, as JSON text. `server_meta`
/// (serverInfo) is merged into `_meta` for modern results.
pub fn project_result(result: &CallResult, v: &Version, server_meta: Option<(&str, &Value)>) -> String {
    if !v.audio_and_links {
        if let Some(block) = result
            .content
            .iter()
            .find(|b| matches!(b.kind, ContentKind::Audio | ContentKind::ResourceLink))
        {
            let what = if block.kind == ContentKind::Audio { "audio" } else { "a resource link" };
            let contained = CallResult {
                meta: result.meta.clone(),
                ..CallResult::tool_error(format!("Tool produced {what}, which protocol {} cannot carry.", v.id))
            };
            return project_result(&contained, v, server_meta);
        }
    }
    let mut out = String::with_capacity(256);
    out.push('{');
    if v.modern_result {
        out.push_str("\"resultType\":\"complete\",");
    }
    let structured = result
        .structured
        .as_ref()
        .filter(|s| structured_allowed(v.structured_content, s.is_object()));
    let fallback;
    let mut content: Vec<Cow<Map<String, Value>>> = result.content.iter().map(|b| project_content(b, v)).collect();
    if content.is_empty() {
        if let (Some(s), None) = (&result.structured, structured) {
            // Dropped structured content must still reach the client as text.
            fallback = Content::text(s.json.clone());
            content.push(Cow::Borrowed(&fallback.body));
        }
    }
    out.push_str("\"content\":");
    out.push_str(&serde_json::to_string(&content).unwrap_or_else(|_| "[]".into()));
    if let Some(s) = structured {
        out.push_str(",\"structuredContent\":");
        out.push_str(&s.json);
    }
    if result.is_error {
        out.push_str(",\"isError\":true");
    }
    let mut meta = result.meta.clone().unwrap_or_default();
    if let Some((k, val)) = server_meta {
        meta.insert(k.to_string(), val.clone());
    }
    if !meta.is_empty() {
        out.push_str(",\"_meta\":");
        out.push_str(&Value::Object(meta).to_string());
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::StructuredJson;
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

    fn block(kind: ContentKind, body: Value) -> Content {
        Content { kind, body: body.as_object().unwrap().clone() }
    }

    #[test]
    fn audio_is_contained_in_2024() {
        let r = CallResult {
            content: vec![block(ContentKind::Audio, json!({"type":"audio","data":"AA==","mimeType":"audio/wav"}))],
            ..Default::default()
        };
        let out: Value = serde_json::from_str(&project_result(&r, v("2024-11-05"), None)).unwrap();
        assert_eq!(out["isError"], json!(true));
        assert_eq!(out["content"][0]["type"], json!("text"));
        let out: Value = serde_json::from_str(&project_result(&r, v("2025-06-18"), None)).unwrap();
        assert_eq!(out["content"][0]["type"], json!("audio"));
    }

    #[test]
    fn structured_content_follows_the_version() {
        let r = CallResult {
            content: vec![Content::text("[1,2]")],
            structured: Some(StructuredJson { json: "[1,2]".into() }),
            ..Default::default()
        };
        let modern = project_result(&r, v("2026-07-28"), Some(("k", &json!({"name":"x"}))));
        assert_eq!(
            modern,
            r#"{"resultType":"complete","content":[{"type":"text","text":"[1,2]"}],"structuredContent":[1,2],"_meta":{"k":{"name":"x"}}}"#
        );
        let legacy = project_result(&r, v("2025-11-25"), None);
        assert_eq!(legacy, r#"{"content":[{"type":"text","text":"[1,2]"}]}"#);
        let empty = CallResult { structured: Some(StructuredJson { json: "{\"a\":1}".into() }), ..Default::default() };
        assert_eq!(
            project_result(&empty, v("2024-11-05"), None),
            r#"{"content":[{"type":"text","text":"{\"a\":1}"}]}"#
        );
        assert_eq!(
            project_result(&empty, v("2025-06-18"), None),
            r#"{"content":[],"structuredContent":{"a":1}}"#
        );
    }

    #[test]
    fn newer_fields_are_dropped() {
        let r = CallResult {
            content: vec![block(
                ContentKind::Resource,
                json!({"type":"resource","resource":{"uri":"u","text":"t","_meta":{"a":1}},
                       "annotations":{"priority":0.5,"lastModified":"2025-01-01T00:00:00Z"},"_meta":{"b":2}}),
            )],
            is_error: true,
            ..Default::default()
        };
        assert_eq!(
            project_result(&r, v("2024-11-05"), None),
            r#"{"content":[{"type":"resource","resource":{"uri":"u","text":"t"},"annotations":{"priority":0.5}}],"isError":true}"#
        );
    }
}
