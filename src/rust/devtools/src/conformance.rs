//! What the official SDK clients check in a `tools/call` result, for
//! `mcp_client()` and `mcp_check()`: a tool that declares an `outputSchema`
//! must return `structuredContent` (unless the result is a tool error), and
//! that content must validate against the schema. The TypeScript SDK client
//! (`Client.callTool()`, 1.32.2) does exactly this, with the output schemas of
//! its last `tools/list`; it does not check arguments against input schemas,
//! and neither does this.

use std::collections::HashMap;

use serde_json::Value;

use crate::check::dialect;
use crate::schema::{Draft, Validator};
use mcplite_core::wire;

/// Errors listed in one message, at most.
const SHOWN: usize = 5;

/// Compiled output schemas by tool name, from one tools listing.
#[derive(Default)]
pub struct OutputSchemas {
    validators: HashMap<String, Validator>,
}

impl OutputSchemas {
    /// The output schemas of `tools` (a `tools/list` result's `tools`). A
    /// schema that does not compile is left out: `mcp_check()` reports it,
    /// and a client cannot check against it.
    pub fn from_tools(tools: &[Value]) -> OutputSchemas {
        let mut validators = HashMap::new();
        for tool in tools {
            let (Some(name), Some(schema)) = (tool.get("name").and_then(Value::as_str), tool.get(wire::OUTPUT_SCHEMA))
            else {
                continue;
            };
            let draft = schema
                .get("$schema")
                .and_then(Value::as_str)
                .and_then(dialect)
                .map(|(d, _)| d)
                .unwrap_or(Draft::Draft202012);
            if let Ok(v) = Validator::new(schema, draft) {
                validators.insert(name.to_string(), v);
            }
        }
        OutputSchemas { validators }
    }

    /// Whether `tool` declared an output schema that compiled.
    pub fn declares(&self, tool: &str) -> bool {
        self.validators.contains_key(tool)
    }

    /// Whether the result of calling `tool` is what SDK clients accept;
    /// otherwise what is wrong with it, with the JSON path of each error.
    pub fn check(&self, tool: &str, result: &Value) -> Result<(), String> {
        let Some(validator) = self.validators.get(tool) else { return Ok(()) };
        let is_error = result.get(wire::IS_ERROR).and_then(Value::as_bool).unwrap_or(false);
        let Some(structured) = result.get(wire::STRUCTURED_CONTENT) else {
            if is_error {
                return Ok(());
            }
            return Err(format!("tool {tool} declares an output schema but its result has no structuredContent"));
        };
        let errors: Vec<String> = validator
            .errors(structured)
            .into_iter()
            .map(|e| format!("at {}: {}", if e.path.is_empty() { "/" } else { &e.path }, e.message))
            .collect();
        if errors.is_empty() {
            return Ok(());
        }
        let more = errors.len().saturating_sub(SHOWN);
        let mut text = format!(
            "the structuredContent of tool {tool} does not match its output schema: {}",
            errors[..errors.len().min(SHOWN)].join("; ")
        );
        if more > 0 {
            text.push_str(&format!("; and {more} more"));
        }
        Err(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schemas() -> OutputSchemas {
        OutputSchemas::from_tools(&[
            json!({"name": "stats", "inputSchema": {"type": "object"}, "outputSchema": {
                "type": "object",
                "properties": {"total": {"type": "number"}, "label": {"type": "string"}},
                "required": ["total"],
                "additionalProperties": false
            }}),
            json!({"name": "plain", "inputSchema": {"type": "object"}}),
        ])
    }

    #[test]
    fn conforming_results_and_tools_without_schema_pass() {
        let s = schemas();
        assert!(s.check("stats", &json!({"content": [], "structuredContent": {"total": 2}})).is_ok());
        assert!(s.check("stats", &json!({"content": [], "structuredContent": {"total": 2.5, "label": "x"}})).is_ok());
        assert!(s.check("plain", &json!({"content": []})).is_ok());
        assert!(s.check("unknown", &json!({"content": []})).is_ok());
        // A tool error need not carry structured content.
        assert!(s.check("stats", &json!({"content": [], "isError": true})).is_ok());
    }

    #[test]
    fn each_violation_names_its_path() {
        let s = schemas();
        let e = s.check("stats", &json!({"content": [], "structuredContent": {"total": "2"}})).unwrap_err();
        assert!(e.contains("at /total: ") && e.contains("number"), "{e}");
        let e = s.check("stats", &json!({"content": [], "structuredContent": {}})).unwrap_err();
        assert!(e.contains("at /: ") && e.contains("total"), "{e}");
        let e = s.check("stats", &json!({"content": [], "structuredContent": {"total": 1, "extra": 1}})).unwrap_err();
        assert!(e.contains("extra"), "{e}");
        let e = s.check("stats", &json!({"content": []})).unwrap_err();
        assert!(e.contains("no structuredContent"), "{e}");
        let e = s.check("stats", &json!({"content": [], "structuredContent": [1]})).unwrap_err();
        assert!(e.contains("object"), "{e}");
    }

    #[test]
    fn many_errors_are_cut_short() {
        let many = OutputSchemas::from_tools(&[json!({"name": "t", "outputSchema": {
            "type": "object", "additionalProperties": {"type": "string"}
        }})]);
        let bad: serde_json::Map<String, Value> = (0..9).map(|i| (format!("k{i}"), json!(i))).collect();
        let e = many.check("t", &json!({"structuredContent": bad})).unwrap_err();
        assert!(e.ends_with("and 4 more"), "{e}");
    }

    #[test]
    fn schemas_that_do_not_compile_are_skipped() {
        let s = OutputSchemas::from_tools(&[json!({"name": "t", "outputSchema": {"type": "object", "pattern": "("}})]);
        assert!(s.check("t", &json!({"content": []})).is_ok());
    }
}
