use super::*;
use serde_json::json;

const ALL: [Draft; 5] = [Draft::Draft4, Draft::Draft6, Draft::Draft7, Draft::Draft201909, Draft::Draft202012];

fn errors(schema: Value, draft: Draft, instance: Value) -> Vec<String> {
    let v = Validator::new(&schema, draft).unwrap_or_else(|e| panic!("{schema} does not compile: {e}"));
    v.errors(&instance).into_iter().map(|e| format!("{}: {}", e.path, e.message)).collect()
}

fn valid(schema: Value, draft: Draft, instance: Value) -> bool {
    errors(schema, draft, instance).is_empty()
}

/// (schema, valid instances, invalid instances), for the drafts from `since`.
fn cases() -> Vec<(Draft, Value, Vec<Value>, Vec<Value>)> {
    use Draft::*;
    vec![
        (Draft4, json!({"type": "integer"}), vec![json!(1), json!(-3)], vec![json!(1.5), json!("1"), json!(null)]),
        (Draft6, json!({"type": "integer"}), vec![json!(1.0), json!(-3)], vec![json!(1.5)]),
        (Draft4, json!({"type": ["string", "null"]}), vec![json!("a"), json!(null)], vec![json!(1), json!([])]),
        (Draft4, json!({"type": "number"}), vec![json!(1), json!(2.5)], vec![json!(true), json!({})]),
        (
            Draft4,
            json!({"enum": [1, "a", null, [1]]}),
            vec![json!(1.0), json!("a"), json!(null), json!([1])],
            vec![json!(2), json!("b"), json!([2])],
        ),
        (Draft6, json!({"const": {"a": [1, 2]}}), vec![json!({"a": [1.0, 2]})], vec![json!({"a": [2, 1]}), json!({})]),
        (Draft4, json!({"minimum": 2, "maximum": 5}), vec![json!(2), json!(5), json!("x")], vec![json!(1), json!(5.5)]),
        (
            Draft4,
            json!({"minimum": 2, "exclusiveMinimum": true, "maximum": 5, "exclusiveMaximum": true}),
            vec![json!(3)],
            vec![json!(2), json!(5)],
        ),
        (
            Draft6,
            json!({"exclusiveMinimum": 2, "exclusiveMaximum": 5}),
            vec![json!(3), json!(4.99)],
            vec![json!(2), json!(5)],
        ),
        (Draft4, json!({"multipleOf": 0.1}), vec![json!(0.3), json!(7), json!(1.1)], vec![json!(0.35)]),
        (Draft4, json!({"multipleOf": 3}), vec![json!(9), json!(-3), json!(0)], vec![json!(10), json!(4.5)]),
        (
            Draft4,
            json!({"minLength": 2, "maxLength": 3}),
            vec![json!("ab"), json!("éé"), json!("abc"), json!(1)],
            vec![json!("a"), json!("abcd")],
        ),
        (Draft4, json!({"pattern": "^a+[0-9]$"}), vec![json!("aa1"), json!(5)], vec![json!("b1"), json!("aa")]),
        (Draft4, json!({"pattern": "x"}), vec![json!("axb")], vec![json!("ab")]),
        (
            Draft4,
            json!({"minItems": 1, "maxItems": 2, "uniqueItems": true}),
            vec![json!([1]), json!([1, "1"]), json!([{"a": 1}, {"a": 2}])],
            vec![json!([]), json!([1, 2, 3]), json!([1, 1.0]), json!([{"a": 1}, {"a": 1}])],
        ),
        (
            Draft4,
            json!({"minProperties": 1, "maxProperties": 1}),
            vec![json!({"a": 1})],
            vec![json!({}), json!({"a": 1, "b": 2})],
        ),
        (
            Draft4,
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b/c": {"type": "integer"}}, "required": ["a"], "additionalProperties": false}),
            vec![json!({"a": "x"}), json!({"a": "x", "b/c": 1})],
            vec![json!({}), json!({"a": 1}), json!({"a": "x", "z": 1, "y": 2}), json!({"a": "x", "b/c": "1"})],
        ),
        (
            Draft4,
            json!({"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": {"type": "integer"}}),
            vec![json!({"x-a": "s", "n": 1})],
            vec![json!({"x-a": 1}), json!({"n": "s"})],
        ),
        (Draft4, json!({"items": {"type": "integer"}}), vec![json!([1, 2]), json!([])], vec![json!([1, "2"])]),
        (
            Draft4,
            json!({"items": [{"type": "integer"}, {"type": "string"}], "additionalItems": false}),
            vec![json!([1, "a"]), json!([1])],
            vec![json!([1, "a", 3]), json!(["a"])],
        ),
        (
            Draft201909,
            json!({"items": [{"type": "integer"}], "additionalItems": {"type": "string"}}),
            vec![json!([1, "a", "b"])],
            vec![json!([1, 2])],
        ),
        (
            Draft202012,
            json!({"prefixItems": [{"type": "integer"}], "items": {"type": "string"}}),
            vec![json!([1, "a"]), json!([])],
            vec![json!([1, 2]), json!(["a"])],
        ),
        (
            Draft202012,
            json!({"prefixItems": [{"type": "integer"}], "items": false}),
            vec![json!([1])],
            vec![json!([1, 2])],
        ),
        (
            Draft6,
            json!({"contains": {"type": "integer"}}),
            vec![json!([1]), json!(["a", 2]), json!({})],
            vec![json!([]), json!(["a"])],
        ),
        (
            Draft201909,
            json!({"contains": {"type": "integer"}, "minContains": 2, "maxContains": 3}),
            vec![json!([1, 2]), json!([1, "a", 2, 3])],
            vec![json!([1]), json!([1, 2, 3, 4])],
        ),
        (Draft4, json!({"allOf": [{"type": "integer"}, {"minimum": 2}]}), vec![json!(3)], vec![json!(1), json!(2.5)]),
        (
            Draft4,
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}]}),
            vec![json!(1), json!("a")],
            vec![json!(1.5), json!(null)],
        ),
        (
            Draft4,
            json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]}),
            vec![json!(1), json!(2.5)],
            vec![json!(3), json!(1.5)],
        ),
        (Draft4, json!({"not": {"type": "string"}}), vec![json!(1)], vec![json!("a")]),
        (
            Draft7,
            json!({"if": {"type": "integer"}, "then": {"minimum": 1}, "else": {"type": "string"}}),
            vec![json!(2), json!("a")],
            vec![json!(0), json!(null)],
        ),
        (
            Draft4,
            json!({"dependencies": {"a": ["b"], "c": {"required": ["d"]}}}),
            vec![json!({"a": 1, "b": 2}), json!({"c": 1, "d": 1}), json!({})],
            vec![json!({"a": 1}), json!({"c": 1})],
        ),
        (
            Draft201909,
            json!({"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}}}),
            vec![json!({"a": 1, "b": 2}), json!({"c": 1, "d": 1})],
            vec![json!({"a": 1}), json!({"c": 1})],
        ),
        (
            Draft6,
            json!({"propertyNames": {"maxLength": 2}}),
            vec![json!({"ab": 1}), json!([])],
            vec![json!({"abc": 1})],
        ),
        (
            Draft6,
            json!({"properties": {"a": false, "b": true}}),
            vec![json!({"b": 1}), json!({})],
            vec![json!({"a": 1})],
        ),
        (
            Draft4,
            json!({"definitions": {"pos": {"type": "integer", "minimum": 1}}, "properties": {"n": {"$ref": "#/definitions/pos"}}}),
            vec![json!({"n": 1})],
            vec![json!({"n": 0}), json!({"n": "1"})],
        ),
        (
            Draft202012,
            json!({"$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}, "v": {"type": "integer"}}}}, "$ref": "#/$defs/node"}),
            vec![json!({"v": 1, "next": {"v": 2, "next": {}}})],
            vec![json!({"next": {"next": {"v": "x"}}})],
        ),
        (
            Draft202012,
            json!({"$defs": {"a": {"$anchor": "pos", "minimum": 1}}, "$ref": "#pos"}),
            vec![json!(1)],
            vec![json!(0)],
        ),
        (
            Draft7,
            json!({"definitions": {"a": {"$id": "#pos", "minimum": 1}}, "$ref": "#pos"}),
            vec![json!(1)],
            vec![json!(0)],
        ),
        (
            Draft202012,
            json!({"$id": "https://example.com/root.json", "$defs": {"b": {"$id": "b.json", "type": "string"}}, "properties": {"x": {"$ref": "b.json"}}}),
            vec![json!({"x": "s"})],
            vec![json!({"x": 1})],
        ),
        (
            Draft202012,
            json!({"$defs": {"a~b": {"type": "string"}, "c%d": {"type": "integer"}}, "properties": {"x": {"$ref": "#/$defs/a~0b"}, "y": {"$ref": "#/$defs/c%25d"}}}),
            vec![json!({"x": "s", "y": 1})],
            vec![json!({"x": 1}), json!({"y": "s"})],
        ),
        (
            Draft202012,
            json!({"properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}], "unevaluatedProperties": false}),
            vec![json!({"a": 1, "b": 2})],
            vec![json!({"a": 1, "c": 3})],
        ),
        (
            Draft202012,
            json!({"anyOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]}, {"properties": {"b": {}}, "required": ["b"]}], "unevaluatedProperties": false}),
            vec![json!({"a": 1}), json!({"b": 1}), json!({"a": 1, "b": 1})],
            vec![json!({"a": "x", "b": 1}), json!({"b": 1, "c": 1})],
        ),
        (
            Draft202012,
            json!({"if": {"properties": {"k": {"const": 1}}}, "then": {"properties": {"x": {}}}, "unevaluatedProperties": false}),
            vec![json!({"k": 1, "x": 2})],
            vec![json!({"k": 2, "x": 2})],
        ),
        (
            Draft202012,
            json!({"prefixItems": [{"type": "integer"}], "unevaluatedItems": false}),
            vec![json!([1])],
            vec![json!([1, 2])],
        ),
        (
            Draft202012,
            json!({"allOf": [{"prefixItems": [true, true]}], "unevaluatedItems": {"type": "string"}}),
            vec![json!([1, 2, "a"])],
            vec![json!([1, 2, 3])],
        ),
        (
            Draft202012,
            json!({"contains": {"type": "string"}, "unevaluatedItems": false}),
            vec![json!(["a", "b"])],
            vec![json!(["a", 1])],
        ),
        (
            Draft201909,
            json!({"properties": {"a": {}}, "unevaluatedProperties": {"type": "integer"}}),
            vec![json!({"a": "s", "b": 1})],
            vec![json!({"b": "s"})],
        ),
        (Draft4, json!(true), vec![json!(1)], vec![]),
        (Draft6, json!(false), vec![], vec![json!(1), json!(null)]),
        (Draft7, json!({"format": "email"}), vec![json!("not an email"), json!(1)], vec![]),
        (Draft202012, json!({"format": "date-time"}), vec![json!("yesterday")], vec![]),
        (Draft7, json!({"format": "regex"}), vec![json!("^a+$"), json!(1)], vec![json!("(unclosed")]),
    ]
}

#[test]
fn every_keyword_accepts_and_refuses_what_it_should_in_every_draft() {
    for (since, schema, good, bad) in cases() {
        for draft in ALL.into_iter().filter(|d| *d >= since) {
            // Keywords later drafts dropped or changed.
            let items_array = schema.get("items").is_some_and(Value::is_array);
            let draft4_exclusive = schema.get("exclusiveMinimum").is_some_and(Value::is_boolean);
            let regex_format = schema.get("format") == Some(&json!("regex"));
            let fragment_id = schema.to_string().contains(r##""$id":"#"##);
            if draft == Draft::Draft202012 && items_array
                || draft > Draft::Draft4 && draft4_exclusive
                || draft > Draft::Draft7 && (regex_format || fragment_id)
            {
                continue;
            }
            for i in &good {
                assert!(
                    valid(schema.clone(), draft, i.clone()),
                    "{draft:?} {schema} should accept {i}: {:?}",
                    errors(schema.clone(), draft, i.clone())
                );
            }
            for i in &bad {
                assert!(!valid(schema.clone(), draft, i.clone()), "{draft:?} {schema} should refuse {i}");
            }
        }
    }
}

#[test]
fn keywords_of_later_drafts_are_ignored_by_earlier_ones() {
    assert!(valid(json!({"const": 1}), Draft::Draft4, json!(2)));
    assert!(!valid(json!({"type": "integer"}), Draft::Draft4, json!(1.0)));
    assert!(valid(json!({"contains": {"type": "string"}}), Draft::Draft4, json!([1])));
    assert!(valid(json!({"if": {"type": "string"}, "then": false}), Draft::Draft6, json!("a")));
    assert!(valid(json!({"prefixItems": [{"type": "string"}]}), Draft::Draft201909, json!([1])));
    assert!(valid(json!({"dependentRequired": {"a": ["b"]}}), Draft::Draft7, json!({"a": 1})));
    // Up to draft 7, `$ref` hides its siblings.
    assert!(valid(
        json!({"definitions": {"a": {}}, "$ref": "#/definitions/a", "type": "string"}),
        Draft::Draft7,
        json!(1)
    ));
    assert!(!valid(json!({"$defs": {"a": {}}, "$ref": "#/$defs/a", "type": "string"}), Draft::Draft202012, json!(1)));
}

#[test]
fn messages_name_the_instance_path_and_read_like_before() {
    let schema = json!({"type": "object", "properties": {"total": {"type": "number"}, "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
        "a/b": {"minimum": 3}}, "required": ["total", "id"], "additionalProperties": false});
    let e = errors(schema, Draft::Draft202012, json!({"total": "two", "tags": ["a", "c"], "a/b": 1, "x": 1}));
    assert_eq!(
        e,
        [
            r#"/total: "two" is not of type "number""#,
            r#"/tags/1: "c" is not one of "a" or "b""#,
            "/a~1b: 1 is less than the minimum of 3",
            r#": "id" is a required property"#,
            ": Additional properties are not allowed ('x' was unexpected)",
        ]
    );
    let e = errors(json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}), Draft::Draft202012, json!(1.5));
    assert_eq!(e, [": 1.5 is not valid under any of the schemas listed in the 'anyOf' keyword"]);
    let e = errors(json!({"enum": [1, 2, 3, 4]}), Draft::Draft7, json!(5));
    assert_eq!(e, [": 5 is not one of 1, 2 or 2 other candidates"]);
    let e = errors(json!({"type": ["string", "null"]}), Draft::Draft7, json!(5));
    assert_eq!(e, [r#": 5 is not of types "null", "string""#]);
}

#[test]
fn every_meta_schema_validates_itself_and_refuses_broken_schemas() {
    for draft in ALL {
        let meta = Validator::meta_schema(draft).unwrap();
        for doc in meta_docs().unwrap().iter().filter(|d| d.draft == draft) {
            assert_eq!(meta.errors(&doc.value), [], "{draft:?}");
        }
        for good in [
            json!({}),
            json!({"type": "object", "properties": {"x": {"type": "string", "minLength": 1}}, "required": ["x"]}),
        ] {
            assert!(meta.is_valid(&good), "{draft:?} {good}");
        }
        for bad in [
            json!({"type": "strin"}),
            json!({"properties": {"x": {"type": 5}}}),
            json!({"required": "x"}),
            json!({"minLength": -1}),
            json!({"items": {"properties": {"a": {"enum": "x"}}}}),
            json!({"allOf": []}),
            json!({"$defs": {"a": {"type": "strin"}}, "definitions": {"a": {"type": "strin"}}}),
            json!(5),
        ] {
            assert!(!meta.is_valid(&bad), "{draft:?} meta-schema should refuse {bad}");
        }
    }
    let e =
        Validator::meta_schema(Draft::Draft202012).unwrap().errors(&json!({"properties": {"x": {"type": "strin"}}}));
    assert_eq!(e[0].path, "/properties/x/type");
    assert_eq!(e[0].message, r#""strin" is not valid under any of the schemas listed in the 'anyOf' keyword"#);
}

#[test]
fn schemas_that_cannot_be_used_are_refused() {
    for (schema, why) in [
        (json!({"$ref": "#/$defs/missing"}), "Unresolvable"),
        (json!({"properties": {"x": {"$ref": "https://example.com/s.json"}}}), "not fetched"),
        (json!({"$ref": "other.json"}), "not fetched"),
        (json!({"$ref": "#nowhere"}), "Unresolvable"),
        (json!({"pattern": "(unclosed"}), "regular expression"),
        (json!({"patternProperties": {"[": {}}}), "regular expression"),
    ] {
        let e = Validator::new(&schema, Draft::Draft202012).err().unwrap_or_default();
        assert!(e.contains(why), "{schema}: {e}");
    }
    // A reference to an embedded meta-schema resolves without fetching.
    let v =
        Validator::new(&json!({"$ref": "https://json-schema.org/draft/2020-12/schema"}), Draft::Draft202012).unwrap();
    assert!(!v.is_valid(&json!({"type": "strin"})));
}

#[test]
fn a_reference_cycle_is_an_error_not_a_stack_overflow() {
    for schema in [
        json!({"$ref": "#"}),
        json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
    ] {
        let v = Validator::new(&schema, Draft::Draft202012).unwrap();
        assert!(!v.errors(&json!(1)).is_empty());
    }
}

#[test]
fn deep_instances_of_recursive_schemas_are_validated() {
    // On a stack the size of R's main thread's (8 MiB), where the checks run.
    let run = || {
        let mut inst = json!({});
        for _ in 0..120 {
            inst = json!({"next": inst});
        }
        let schema = json!({"$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"});
        assert!(valid(schema, Draft::Draft202012, inst.clone()));
        let mut deep_schema = json!({"type": "string"});
        for _ in 0..50 {
            deep_schema = json!({"type": "object", "properties": {"x": deep_schema}});
        }
        assert!(Validator::meta_schema(Draft::Draft202012).unwrap().is_valid(&deep_schema));
    };
    let t = std::thread::Builder::new().stack_size(8 << 20).spawn(run).unwrap();
    t.join().unwrap();
}

/// The schema folder of the official MCP schemas in this repository.
fn mcp_schemas() -> Vec<(String, Value)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/schema");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path().join("schema.json");
        if let Ok(text) = std::fs::read_to_string(&path) {
            out.push((path.display().to_string(), serde_json::from_str(&text).unwrap()));
        }
    }
    assert!(out.len() >= 4, "{}", dir.display());
    out
}

fn draft_of(doc: &Value) -> Draft {
    match doc.get("$schema").and_then(Value::as_str) {
        Some(s) if s.contains("draft-07") => Draft::Draft7,
        _ => Draft::Draft202012,
    }
}

/// `doc` with a root `$ref` to one of its definitions.
fn definition(doc: &Value, name: &str) -> Value {
    let mut d = doc.clone();
    let defs = if doc.get("$defs").is_some() { "$defs" } else { "definitions" };
    d["$ref"] = json!(format!("#/{defs}/{name}"));
    d
}

#[test]
fn the_official_mcp_schemas_are_valid_and_validate_messages() {
    for (path, doc) in mcp_schemas() {
        let draft = draft_of(&doc);
        assert_eq!(Validator::meta_schema(draft).unwrap().errors(&doc), [], "{path}");
        let tool = definition(&doc, "Tool");
        let v = Validator::new(&tool, draft).unwrap();
        assert!(
            v.is_valid(
                &json!({"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}}})
            ),
            "{path}"
        );
        let e = v.errors(&json!({"name": 5, "inputSchema": {"type": "object"}}));
        assert!(e.iter().any(|e| e.path == "/name"), "{path}: {e:?}");
        assert!(!v.is_valid(&json!({"inputSchema": {"type": "object"}})), "{path}");
        let result = definition(&doc, "CallToolResult");
        let v = Validator::new(&result, draft).unwrap();
        // 2026-07-28 requires resultType; earlier versions allow it.
        let ok = json!({"content": [{"type": "text", "text": "hi"}], "resultType": "complete"});
        assert_eq!(v.errors(&ok), [], "{path}");
        assert!(!v.is_valid(&json!({"content": [{"type": "text", "text": 5}], "resultType": "complete"})), "{path}");
        assert!(!v.is_valid(&json!({"content": "hi", "resultType": "complete"})), "{path}");
    }
}

/// What the jsonschema crate said, for the differential test.
fn reference(schema: &Value, draft: Draft, instance: &Value) -> Option<(bool, Vec<String>)> {
    let d = match draft {
        Draft::Draft4 => jsonschema::Draft::Draft4,
        Draft::Draft6 => jsonschema::Draft::Draft6,
        Draft::Draft7 => jsonschema::Draft::Draft7,
        Draft::Draft201909 => jsonschema::Draft::Draft201909,
        Draft::Draft202012 => jsonschema::Draft::Draft202012,
    };
    // The crate refuses to build a schema its draft's meta-schema refuses
    // (draft 4's boolean exclusiveMinimum under draft 6): nothing to compare.
    let v = jsonschema::options().with_draft(d).should_validate_formats(false).build(schema).ok()?;
    let mut e: Vec<String> = v.iter_errors(instance).map(|e| format!("{}: {e}", e.instance_path().as_str())).collect();
    e.sort();
    Some((v.is_valid(instance), e))
}

#[test]
fn results_agree_with_the_jsonschema_crate() {
    let mut compared = 0;
    for (since, schema, good, bad) in cases() {
        for draft in ALL.into_iter().filter(|d| *d >= since) {
            // A fragment `$id` is an anchor only up to draft 7; later meta-schemas refuse it.
            if schema.get("format").is_some() || draft > Draft::Draft7 && schema.to_string().contains(r##""$id":"#"##) {
                continue;
            }
            for i in good.iter().chain(&bad) {
                let ours = Validator::new(&schema, draft).unwrap();
                let mut mine: Vec<String> =
                    ours.errors(i).into_iter().map(|e| format!("{}: {}", e.path, e.message)).collect();
                mine.sort();
                let Some((ok, theirs)) = reference(&schema, draft, i) else { continue };
                assert_eq!(mine.is_empty(), ok, "{draft:?} {schema} on {i}: ours {mine:?}, jsonschema {theirs:?}");
                // Single errors must read the same.
                if theirs.len() == 1 && mine.len() == 1 && !theirs[0].contains("unexpected") {
                    assert_eq!(mine, theirs, "{draft:?} {schema} on {i}");
                }
                compared += 1;
            }
        }
    }
    // Meta-schema validation of schemas, good and bad, and of the MCP schemas.
    let mut schemas: Vec<Value> = cases().into_iter().map(|c| c.1).collect();
    schemas.extend([
        json!({"type": "strin"}),
        json!({"properties": {"x": {"type": 5}}}),
        json!({"required": "x"}),
        json!({"minLength": -1}),
        json!({"items": {"properties": {"a": {"enum": "x"}}}}),
        json!({"allOf": []}),
        json!({"$defs": {"a": {"type": "strin"}}}),
        json!(5),
        json!({"additionalProperties": {"maxItems": 1.5}}),
        json!({"patternProperties": {"x": {"uniqueItems": "yes"}}}),
    ]);
    for (_, doc) in mcp_schemas() {
        schemas.push(doc);
    }
    for draft in ALL {
        let meta = Validator::meta_schema(draft).unwrap();
        let refv = match draft {
            Draft::Draft4 => jsonschema::draft4::meta::validator(),
            Draft::Draft6 => jsonschema::draft6::meta::validator(),
            Draft::Draft7 => jsonschema::draft7::meta::validator(),
            Draft::Draft201909 => jsonschema::draft201909::meta::validator(),
            Draft::Draft202012 => jsonschema::draft202012::meta::validator(),
        };
        for s in &schemas {
            let mut mine: Vec<String> =
                meta.errors(s).into_iter().map(|e| format!("{}: {}", e.path, e.message)).collect();
            mine.sort();
            let mut theirs: Vec<String> =
                refv.iter_errors(s).map(|e| format!("{}: {e}", e.instance_path().as_str())).collect();
            theirs.sort();
            assert_eq!(
                mine.is_empty(),
                theirs.is_empty(),
                "{draft:?} meta on {s}: ours {mine:?}, jsonschema {theirs:?}"
            );
            if theirs.len() == 1 {
                assert_eq!(mine, theirs, "{draft:?} meta on {s}");
            }
            compared += 1;
        }
    }
    assert!(compared > 300, "{compared}");
}
