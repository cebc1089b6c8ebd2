//! Reading the tool specs R hands over when serving starts (built by
//! `mcp_server()`: plain snake_case lists) into [`ToolDef`]s. This is where
//! R's names meet MCP's: `read_only_hint` becomes `readOnlyHint`, and so on.

use super::fixed::{encode, encode_object, FixedError};
use super::{
    describe, field, field_present, quote_names, string1, strings, Problem, RType, RValue, Verdict, SCALAR, VALUE,
};
use crate::result::ToolDef;
use crate::wire;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Tool annotations: the R name and the MCP name of each.
pub const ANNOTATIONS: [(&str, &str); 5] = [
    ("title", "title"),
    ("read_only_hint", wire::READ_ONLY_HINT),
    ("destructive_hint", wire::DESTRUCTIVE_HINT),
    ("idempotent_hint", wire::IDEMPOTENT_HINT),
    ("open_world_hint", wire::OPEN_WORLD_HINT),
];

/// What to do with annotation names MCP does not define.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unknown {
    /// Keep them, sent as given, with a warning (what `tool()` does: CRAN
    /// mcplite sends any annotation, and MCP's schema allows other members).
    Keep,
    /// Leave them out, silently (ellmer's own extras).
    Drop,
}

/// The tool-annotation rule: each of MCP's hints under either spelling
/// (`readOnlyHint` or `read_only_hint`), at most once, `title` a string and
/// the hints `TRUE` or `FALSE`; other names per `unknown`, fixed-encodable.
/// `annotations` is a named list (R checked its names). Returns the R name
/// of each element (`None`: dropped) and the warnings to give.
pub fn check_annotations<V: RValue>(annotations: &V, arg: &str, unknown: Unknown) -> Verdict {
    let mut warnings = Vec::new();
    let names = annotation_names(annotations, arg, unknown, &mut warnings);
    Verdict::renaming(names, warnings)
}

fn annotation_names<V: RValue>(
    annotations: &V,
    arg: &str,
    unknown: Unknown,
    warnings: &mut Vec<Problem>,
) -> Result<Vec<Option<String>>, Problem> {
    let given = super::list_names(annotations);
    let known = |n: &str| ANNOTATIONS.iter().find(|(r, w)| *r == n || *w == n).map(|(r, _)| *r);
    let strange: Vec<&String> = given.iter().filter(|n| known(n).is_none()).collect();
    if !strange.is_empty() && unknown == Unknown::Keep {
        let mcp = format!(
            "`title`, `{}`, `{}`, `{}` and `{}` (or their snake_case spellings)",
            ANNOTATIONS[1].1, ANNOTATIONS[2].1, ANNOTATIONS[3].1, ANNOTATIONS[4].1
        );
        warnings.push(super::unknown_annotations(arg, &strange, "tools", &mcp, annotations));
    }
    let names: Vec<Option<String>> = given
        .iter()
        .map(|n| match known(n) {
            Some(r) => Some(r.to_string()),
            None if unknown == Unknown::Keep => Some(n.clone()),
            None => None,
        })
        .collect();
    let mut seen = Vec::new();
    let mut twice = Vec::new();
    for n in names.iter().flatten() {
        if seen.contains(&n) {
            if !twice.contains(&n) {
                twice.push(n);
            }
        } else {
            seen.push(n);
        }
    }
    if !twice.is_empty() {
        return Err(Problem::new(
            "argument",
            arg,
            format!("`{arg}` gives {} more than once (in camelCase and snake_case).", quote_names(&twice)),
            Vec::new(),
            annotations,
        ));
    }
    for (i, name) in given.iter().enumerate() {
        let value = annotations.list_elt(i);
        let key = format!("{arg}${name}");
        let wrong = match known(name) {
            Some("title") => string1(&value).is_none().then_some("a single string"),
            Some(_) => super::is_flag(&value).is_none().then_some("`TRUE` or `FALSE`"),
            None if unknown == Unknown::Keep => {
                let mut path = arg.to_string();
                super::push_name(&mut path, name);
                if let Err(e) = encode(&value, &path) {
                    return Err(Problem::new("argument", arg, e.message(arg), Vec::new(), &value));
                }
                None
            }
            None => None,
        };
        if let Some(expected) = wrong {
            return Err(Problem::new(
                "argument",
                &key,
                format!("`{key}` must be {expected}, not {VALUE}."),
                vec![i + 1],
                &value,
            ));
        }
    }
    Ok(names)
}

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
        Some(n) => tool_name(&n, "name").map_err(|p| format!("a tool spec's {}", p.text()))?,
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
            if let Some(p) = check_annotations(&a, "annotations", Unknown::Keep).problem {
                return Err(format!("tool {name}: {}", p.text()));
            }
            let given = encode_object(&a, "annotations").map_err(|e| fixed(&name, e))?;
            // MCP's own hints get MCP's names; others are sent as given.
            let out: Map<String, Value> = given
                .into_iter()
                .map(|(key, value)| match ANNOTATIONS.iter().find(|(r, w)| *r == key || *w == key) {
                    Some((_, wire)) => (wire.to_string(), value),
                    None => (key, value),
                })
                .collect();
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

/// The tool-name rule of the 2025-11-25 specification: what `tool()`
/// requires (through [`super::author`]) and what `mcp_check()` reports of any
/// server.
pub fn name_follows_spec(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

/// Tool names used more than once, and by which tools (1-based, as R counts):
/// the one rule `Server::new` and R's `mcp_server()`
/// apply (through [`super::author`]).
pub fn repeated_names(names: &[String]) -> Option<String> {
    let mut seen: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        match index.get(name.as_str()) {
            Some(&k) => seen[k].1.push(i + 1),
            None => {
                index.insert(name, seen.len());
                seen.push((name, vec![i + 1]));
            }
        }
    }
    let repeated: Vec<String> = seen
        .iter()
        .filter(|(_, at)| at.len() > 1)
        .map(|(n, at)| {
            let at: Vec<String> = at.iter().map(|i| i.to_string()).collect();
            format!("`{n}` is used by tools {}", at.join(", "))
        })
        .collect();
    (!repeated.is_empty()).then(|| format!("Tool names must be unique; {}.", repeated.join("; ")))
}

/// A tool's name: one string that follows the specification's rule.
pub fn tool_name<V: RValue>(x: &V, arg: &str) -> Result<String, Problem> {
    let name = string1(x).filter(|_| x.rtype() == RType::Character).ok_or_else(|| {
        Problem::new("argument", arg, format!("`{arg}` must be a single string, not {VALUE}."), Vec::new(), x)
    })?;
    if !name_follows_spec(&name) {
        return Err(Problem::new(
            "argument",
            arg,
            format!("`{arg}` must be 1 to 128 characters from A-Z, a-z, 0-9, `_`, `-` and `.`, not {SCALAR}."),
            Vec::new(),
            x,
        ));
    }
    Ok(name)
}

/// The names of a server's tools (a character vector) are all different.
pub fn unique_tool_names<V: RValue>(x: &V, arg: &str) -> Result<(), Problem> {
    let names = strings(x).unwrap_or_default();
    match repeated_names(&names) {
        None => Ok(()),
        Some(message) => Err(Problem::new("tools", arg, message, Vec::new(), x)),
    }
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
        assert_eq!(e, "tool t: `annotations$read_only_hint` must be `TRUE` or `FALSE`, not a character value.");
        assert!(read_tool(&spec(vec![("input_schema", schema())])).is_err());
        let e = read_tool(&spec(vec![("name", s("two words")), ("input_schema", schema())])).unwrap_err();
        assert!(e.contains("must be 1 to 128 characters"), "{e}");
    }

    #[test]
    fn annotations_take_either_spelling_once_with_their_types() {
        let a = named(vec![
            (Some("readOnlyHint"), lgl(&[Some(true)])),
            (Some("open_world_hint"), lgl(&[Some(false)])),
            (Some("title"), s("T")),
            (Some("custom"), int(&[1])),
        ]);
        let v = check_annotations(&a, "annotations", Unknown::Keep);
        let (names, warnings) = (v.names.unwrap(), v.warnings);
        let names: Vec<_> = names.iter().map(|n| n.as_deref()).collect();
        assert_eq!(names, [Some("read_only_hint"), Some("open_world_hint"), Some("title"), Some("custom")]);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].class, "unknown_annotation");
        assert!(warnings[0].message.starts_with("`annotations` has the name `custom`, which MCP does not define"));
        let v = check_annotations(&a, "annotations", Unknown::Drop);
        let (names, warnings) = (v.names.unwrap(), v.warnings);
        assert_eq!(names[3], None);
        assert!(warnings.is_empty());

        let twice =
            named(vec![(Some("idempotentHint"), lgl(&[Some(true)])), (Some("idempotent_hint"), lgl(&[Some(true)]))]);
        let p = check_annotations(&twice, "annotations", Unknown::Keep).problem.unwrap();
        assert_eq!(p.message, "`annotations` gives `idempotent_hint` more than once (in camelCase and snake_case).");

        for (name, value, expected) in [
            ("readOnlyHint", s("yes"), "`TRUE` or `FALSE`"),
            ("destructive_hint", lgl(&[None]), "`TRUE` or `FALSE`"),
            ("destructiveHint", lgl(&[Some(true), Some(false)]), "`TRUE` or `FALSE`"),
            ("title", lgl(&[Some(true)]), "a single string"),
            ("title", chr(&[None]), "a single string"),
        ] {
            let p = check_annotations(
                &named(vec![(Some("openWorldHint"), lgl(&[Some(true)])), (Some(name), value)]),
                "annotations",
                Unknown::Keep,
            );
            let p = p.problem.unwrap();
            assert_eq!(p.message, format!("`annotations${name}` must be {expected}, not {VALUE}."));
            assert_eq!(p.at, [2]);
        }
        let v = check_annotations(&named(vec![(Some("custom"), other("environment"))]), "annotations", Unknown::Keep);
        assert_eq!(v.warnings.len(), 1, "the warning comes with the error");
        let p = v.problem.unwrap();
        assert_eq!(p.message, "`annotations` must be JSON-serializable, but `annotations$custom` is an environment.");
        assert_eq!(quote_names(&["a", "b", "c"]), "`a`, `b` and `c`");
    }
}
