//! Reading the tool specs R hands over when serving starts (built by
//! `mcp_server()`: plain snake_case lists) into [`ToolDef`]s. This is where
//! R's names meet MCP's: `read_only_hint` becomes `readOnlyHint`, and so on.

use super::fixed::{encode, encode_object, FixedError};
use super::{describe, field, field_present, string1, RValue};
use crate::result::ToolDef;
use crate::wire;
use serde_json::{Map, Value};

/// Tool annotations: the R name and the MCP name of each.
pub const ANNOTATIONS: [(&str, &str); 5] = [
    ("title", "title"),
    ("read_only_hint", wire::READ_ONLY_HINT),
    ("destructive_hint", wire::DESTRUCTIVE_HINT),
    ("idempotent_hint", wire::IDEMPOTENT_HINT),
    ("open_world_hint", wire::OPEN_WORLD_HINT),
];

fn fixed(tool: &str, e: FixedError) -> String {
    format!("tool {tool}: `{}` is {}", e.path, e.what)
}

fn optional_string<V: RValue>(spec: &V, name: &str, tool: &str) -> Result<Option<String>, String> {
    match field_present(spec, name) {
        None => Ok(None),
        Some(x) => string1(&x)
            .map(Some)
            .ok_or_else(|| format!("tool {tool}: `{name}` must be a single string, not {}", describe(&x))),
    }
}

/// One spec: `name`, `description`, `title`, `input_schema`, `output_schema`,
/// `annotations` (snake_case names), `meta`.
pub fn read_tool<V: RValue>(spec: &V) -> Result<ToolDef, String> {
    let name = match field(spec, "name") {
        Some(n) => super::author::tool_name(&n, "name").map_err(|p| format!("a tool spec's {}", p.text()))?,
        None => return Err("a tool spec has no name".into()),
    };
    let input_schema = match field_present(spec, "input_schema") {
        Some(s) => encode_object(&s, "input_schema").map_err(|e| fixed(&name, e))?,
        None => return Err(format!("tool {name}: no input schema")),
    };
    if input_schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(format!("tool {name}: the input schema must have type \"object\" at its root"));
    }
    let output_schema = match field_present(spec, "output_schema") {
        Some(s) => Some(encode(&s, "output_schema").map_err(|e| fixed(&name, e))?),
        None => None,
    };
    let annotations = match field_present(spec, "annotations") {
        None => None,
        Some(a) => {
            let given = encode_object(&a, "annotations").map_err(|e| fixed(&name, e))?;
            let mut out = Map::new();
            for (key, value) in given {
                // MCP's own hints get MCP's names and must have their types;
                // others (R checked them and warned) are sent as given.
                match ANNOTATIONS.iter().find(|(r, w)| *r == key || *w == key).map(|(_, w)| *w) {
                    Some(wire) => {
                        let ok = if wire == "title" { value.is_string() } else { value.is_boolean() };
                        if !ok {
                            return Err(format!("tool {name}: annotation `{key}` has the wrong type"));
                        }
                        out.insert(wire.to_string(), value);
                    }
                    None => {
                        out.insert(key, value);
                    }
                }
            }
            (!out.is_empty()).then_some(out)
        }
    };
    let meta = match field_present(spec, "meta") {
        None => None,
        Some(m) => Some(encode_object(&m, "meta").map_err(|e| fixed(&name, e))?).filter(|m| !m.is_empty()),
    };
    Ok(ToolDef {
        description: optional_string(spec, "description", &name)?,
        title: optional_string(spec, "title", &name)?,
        input_schema,
        output_schema,
        annotations,
        meta,
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rjson::testvalue::*;
    use serde_json::json;

    fn spec(fields: Vec<(&str, TV)>) -> TV {
        named(fields.into_iter().map(|(k, v)| (Some(k), v)).collect())
    }

    fn schema() -> TV {
        named(vec![(Some("type"), s("object")), (Some("properties"), named(vec![]))])
    }

    #[test]
    fn reads_a_spec_in_wire_vocabulary() {
        let t = read_tool(&spec(vec![
            ("name", s("add")),
            ("description", s("Adds.")),
            ("input_schema", schema()),
            ("annotations", named(vec![(Some("read_only_hint"), lgl(&[Some(true)])), (Some("title"), s("Add"))])),
        ]))
        .unwrap();
        assert_eq!(t.name, "add");
        assert_eq!(Value::Object(t.input_schema), json!({"type":"object","properties":{}}));
        assert_eq!(Value::Object(t.annotations.unwrap()), json!({"readOnlyHint":true,"title":"Add"}));
        assert!(t.meta.is_none());
    }

    #[test]
    fn refuses_what_no_version_accepts() {
        let partial = named(vec![(Some("typeExtension"), s("object"))]);
        let e = read_tool(&spec(vec![("name", s("t")), ("input_schema", partial)])).unwrap_err();
        assert!(e.contains("type \"object\" at its root"), "{e}");
        let t = read_tool(&spec(vec![
            ("name", s("t")),
            ("input_schema", schema()),
            ("annotations", named(vec![(Some("cool"), lgl(&[Some(true)]))])),
        ]))
        .unwrap();
        assert_eq!(Value::Object(t.annotations.unwrap()), json!({"cool":true}), "others are sent as given");
        let e = read_tool(&spec(vec![
            ("name", s("t")),
            ("input_schema", schema()),
            ("annotations", named(vec![(Some("read_only_hint"), s("yes"))])),
        ]))
        .unwrap_err();
        assert!(e.contains("wrong type"), "{e}");
        assert!(read_tool(&spec(vec![("input_schema", schema())])).is_err());
    }
}
