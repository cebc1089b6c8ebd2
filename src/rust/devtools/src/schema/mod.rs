//! A compact JSON Schema validator for `mcp_check()` (tool schemas against
//! their dialect's meta-schema) and `mcp_client()` (structured content
//! against a tool's output schema). Drafts 4, 6, 7, 2019-09 and 2020-12:
//! every assertion and applicator keyword, `$ref`/`$id`/`$anchor`,
//! `$recursiveRef` and `$dynamicRef` (what the 2019-09 and 2020-12
//! meta-schemas need), `unevaluatedProperties`/`unevaluatedItems`. `format` is
//! an annotation, except `regex` in drafts 4 to 7 (their meta-schemas assert
//! it for `pattern`). Patterns are regex-lite expressions (no look-around, no
//! Unicode classes; a schema using them is refused as unusable). Nothing is
//! ever fetched: a `$ref` must point inside the schema or to an embedded
//! meta-schema. Messages follow the jsonschema crate this replaces, so what
//! users read did not change.

use std::collections::{HashMap, HashSet};

use mcplite_core::wire;
use regex_lite::Regex;
use serde_json::{Map, Value};

mod uri;

/// A JSON Schema dialect.
/// Ordered oldest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Draft {
    Draft4,
    Draft6,
    Draft7,
    Draft201909,
    Draft202012,
}

/// One validation error: where in the instance (a JSON pointer, `""` for the
/// root) and what.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    pub path: String,
    pub message: String,
}

/// Nesting of schema evaluations past which evaluation stops with an error,
/// never a stack overflow (reference cycles that consume nothing are caught
/// before, as a (schema, instance) pair met again).
const MAX_DEPTH: usize = 500;

/// The embedded meta-schemas: (draft, text). The 2019-09 and 2020-12 ones
/// are split in vocabularies, each its own document.
const META: &[(Draft, &str)] = &[
    (Draft::Draft4, include_str!("meta/draft4.json")),
    (Draft::Draft6, include_str!("meta/draft6.json")),
    (Draft::Draft7, include_str!("meta/draft7.json")),
    (Draft::Draft201909, include_str!("meta/draft2019-09/schema.json")),
    (Draft::Draft201909, include_str!("meta/draft2019-09/meta/core.json")),
    (Draft::Draft201909, include_str!("meta/draft2019-09/meta/applicator.json")),
    (Draft::Draft201909, include_str!("meta/draft2019-09/meta/validation.json")),
    (Draft::Draft201909, include_str!("meta/draft2019-09/meta/meta-data.json")),
    (Draft::Draft201909, include_str!("meta/draft2019-09/meta/format.json")),
    (Draft::Draft201909, include_str!("meta/draft2019-09/meta/content.json")),
    (Draft::Draft202012, include_str!("meta/draft2020-12/schema.json")),
    (Draft::Draft202012, include_str!("meta/draft2020-12/meta/core.json")),
    (Draft::Draft202012, include_str!("meta/draft2020-12/meta/applicator.json")),
    (Draft::Draft202012, include_str!("meta/draft2020-12/meta/unevaluated.json")),
    (Draft::Draft202012, include_str!("meta/draft2020-12/meta/validation.json")),
    (Draft::Draft202012, include_str!("meta/draft2020-12/meta/meta-data.json")),
    (Draft::Draft202012, include_str!("meta/draft2020-12/meta/format-annotation.json")),
    (Draft::Draft202012, include_str!("meta/draft2020-12/meta/content.json")),
];

/// The base URI of a schema without `$id` (the jsonschema crate's).
const DEFAULT_BASE: &str = "json-schema:///";

/// Members whose values are data, not subschemas.
const DATA_KEYWORDS: [&str; 5] = ["enum", "const", "default", "examples", "example"];

struct Doc {
    value: Value,
    draft: Draft,
}

/// A compiled schema: its documents (the schema, then the meta-schemas it
/// may reference), where each resource and anchor is, and its patterns.
pub struct Validator {
    /// The schema (document 0); the meta-schemas are documents 1 and on.
    root: Doc,
    meta: &'static [Doc],
    /// Absolute URI (no fragment) or `uri#anchor` -> (document, JSON pointer).
    targets: HashMap<String, (usize, String)>,
    /// `uri#name` of every `$dynamicAnchor`, and `uri` of every resource with
    /// `"$recursiveAnchor": true`.
    dynamic: HashSet<String>,
    regexes: HashMap<String, Regex>,
    root_base: String,
}

impl Validator {
    /// Compiles `schema` in `draft`: every `$ref` must resolve and every
    /// pattern compile; otherwise the first problem found.
    pub fn new(schema: &Value, draft: Draft) -> Result<Validator, String> {
        let meta = meta_docs()?;
        let schema_doc = Doc { value: schema.clone(), draft };
        let mut v = Validator {
            root: Doc { value: Value::Null, draft },
            meta,
            targets: HashMap::new(),
            dynamic: HashSet::new(),
            regexes: HashMap::new(),
            root_base: String::new(),
        };
        // Meta-schemas first: a schema's own `$id` may shadow them.
        let mut refs = Vec::new();
        let mut patterns = Vec::new();
        for i in (1..=meta.len()).chain([0]) {
            let doc = if i == 0 { &schema_doc } else { &meta[i - 1] };
            let base = doc.value.get(id_keyword(doc.draft)).and_then(Value::as_str).unwrap_or("");
            let base = uri::strip_fragment(&uri::resolve(DEFAULT_BASE, base)).to_string();
            if i == 0 {
                v.root_base = base.clone();
            }
            let mut walk =
                Walk { draft: doc.draft, doc: i, targets: &mut v.targets, dynamic: &mut v.dynamic, refs: &mut refs };
            walk.schema(&doc.value, base, String::new());
            collect_patterns(&doc.value, &mut patterns);
        }
        v.root = schema_doc;
        for (base, reference) in refs {
            let target = uri::resolve(&base, &reference);
            if v.locate(&target).is_none() {
                return Err(format!(
                    "Unresolvable reference {reference}: {target} is not in the schema and is not fetched"
                ));
            }
        }
        for p in patterns {
            match Regex::new(&p) {
                Ok(re) => {
                    v.regexes.insert(p, re);
                }
                Err(e) => return Err(format!("\"{p}\" is not a valid regular expression: {e}")),
            }
        }
        Ok(v)
    }

    /// The validator of `draft`'s meta-schema.
    pub fn meta_schema(draft: Draft) -> Result<Validator, String> {
        let uri = match draft {
            Draft::Draft4 => "http://json-schema.org/draft-04/schema#",
            Draft::Draft6 => "http://json-schema.org/draft-06/schema#",
            Draft::Draft7 => "http://json-schema.org/draft-07/schema#",
            Draft::Draft201909 => "https://json-schema.org/draft/2019-09/schema",
            Draft::Draft202012 => "https://json-schema.org/draft/2020-12/schema",
        };
        let mut root = Map::new();
        root.insert("$ref".to_string(), Value::String(uri.to_string()));
        Validator::new(&Value::Object(root), draft)
    }

    /// Every error of `instance`, in document order of the keywords.
    pub fn errors(&self, instance: &Value) -> Vec<Error> {
        let mut errors = Vec::new();
        let mut cx = Cx { v: self, scope: vec![self.root_base.clone()], depth: 0, active: Vec::new() };
        cx.node(&self.root.value, self.root.draft, &self.root_base, instance, &mut String::new(), &mut errors);
        errors
    }

    /// Whether `instance` is valid.
    #[cfg(test)]
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.errors(instance).is_empty()
    }

    /// The document and subschema a URI with an optional fragment names,
    /// with that subschema's base URI.
    fn locate(&self, target: &str) -> Option<(usize, &Value, String)> {
        let (base, fragment) = uri::split_fragment(target);
        let (doc, pointer) = match fragment {
            Some(f) if !f.is_empty() && !f.starts_with('/') => self.targets.get(target)?.clone(),
            _ => {
                let (doc, ptr) = self.targets.get(base)?;
                (*doc, format!("{ptr}{}", uri::percent_decode(fragment.unwrap_or(""))))
            }
        };
        let d = self.doc(doc);
        let value = d.value.pointer(&pointer)?;
        // The base of a subschema is that of the innermost resource on the way.
        let mut at = &d.value;
        let mut b = uri::resolve(DEFAULT_BASE, at.get(id_keyword(d.draft)).and_then(Value::as_str).unwrap_or(""));
        for token in pointer.split('/').skip(1) {
            let token = token.replace("~1", "/").replace("~0", "~");
            at = match at {
                Value::Object(m) => m.get(&token)?,
                Value::Array(a) => a.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
            if let Some(id) = at.get(id_keyword(d.draft)).and_then(Value::as_str) {
                if !id.starts_with('#') {
                    b = uri::resolve(&b, id);
                }
            }
        }
        Some((doc, value, uri::strip_fragment(&b).to_string()))
    }

    fn doc(&self, i: usize) -> &Doc {
        match i.checked_sub(1) {
            Some(m) => &self.meta[m],
            None => &self.root,
        }
    }
}

/// The embedded meta-schemas, parsed once.
fn meta_docs() -> Result<&'static [Doc], String> {
    static DOCS: std::sync::OnceLock<Result<Vec<Doc>, String>> = std::sync::OnceLock::new();
    let docs = DOCS.get_or_init(|| {
        META.iter()
            .map(|(draft, text)| {
                let value = serde_json::from_str(text).map_err(|e| format!("embedded meta-schema: {e}"))?;
                Ok(Doc { value, draft: *draft })
            })
            .collect()
    });
    docs.as_ref().map(Vec::as_slice).map_err(Clone::clone)
}

fn id_keyword(draft: Draft) -> &'static str {
    if draft == Draft::Draft4 {
        "id"
    } else {
        "$id"
    }
}

/// The registration pass over one document.
struct Walk<'a> {
    draft: Draft,
    doc: usize,
    targets: &'a mut HashMap<String, (usize, String)>,
    dynamic: &'a mut HashSet<String>,
    /// (base, reference) of every `$ref`, checked once all is registered.
    refs: &'a mut Vec<(String, String)>,
}

impl Walk<'_> {
    fn schema(&mut self, value: &Value, mut base: String, ptr: String) {
        let Value::Object(map) = value else {
            if let Value::Array(items) = value {
                for (i, item) in items.iter().enumerate() {
                    self.schema(item, base.clone(), format!("{ptr}/{i}"));
                }
            }
            return;
        };
        let draft = self.draft;
        if ptr.is_empty() {
            self.targets.insert(base.clone(), (self.doc, ptr.clone()));
        }
        if let Some(id) = map.get(id_keyword(draft)).and_then(Value::as_str) {
            let full = uri::resolve(&base, id);
            let (b, fragment) = uri::split_fragment(&full);
            match fragment {
                Some(name) if !name.is_empty() && draft <= Draft::Draft7 => {
                    self.targets.insert(full.clone(), (self.doc, ptr.clone()));
                    if !id.starts_with('#') {
                        self.targets.insert(b.to_string(), (self.doc, ptr.clone()));
                        base = b.to_string();
                    }
                }
                _ => {
                    self.targets.insert(b.to_string(), (self.doc, ptr.clone()));
                    base = b.to_string();
                }
            }
        }
        if draft >= Draft::Draft201909 {
            if let Some(name) = map.get("$anchor").and_then(Value::as_str) {
                self.targets.insert(format!("{base}#{name}"), (self.doc, ptr.clone()));
            }
            if let Some(name) = map.get("$dynamicAnchor").and_then(Value::as_str) {
                self.targets.insert(format!("{base}#{name}"), (self.doc, ptr.clone()));
                self.dynamic.insert(format!("{base}#{name}"));
            }
            if map.get("$recursiveAnchor") == Some(&Value::Bool(true)) {
                self.dynamic.insert(base.clone());
            }
        }
        for key in ["$ref", "$dynamicRef"] {
            if let Some(r) = map.get(key).and_then(Value::as_str) {
                self.refs.push((base.clone(), r.to_string()));
            }
        }
        for (k, v) in map {
            if DATA_KEYWORDS.contains(&k.as_str()) || k == "properties" && !v.is_object() {
                continue;
            }
            let child = format!("{ptr}/{}", k.replace('~', "~0").replace('/', "~1"));
            if matches!(
                k.as_str(),
                "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" | "dependencies"
            ) {
                if let Value::Object(members) = v {
                    for (name, sub) in members {
                        self.schema(
                            sub,
                            base.clone(),
                            format!("{child}/{}", name.replace('~', "~0").replace('/', "~1")),
                        );
                    }
                }
            } else if v.is_object() || v.is_array() {
                self.schema(v, base.clone(), child);
            }
        }
    }
}

/// Every `pattern` and `patternProperties` key of a schema.
fn collect_patterns(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if DATA_KEYWORDS.contains(&k.as_str()) {
                    continue;
                }
                match (k.as_str(), v) {
                    ("pattern", Value::String(p)) => out.push(p.clone()),
                    ("patternProperties", Value::Object(m)) => {
                        out.extend(m.keys().cloned());
                        m.values().for_each(|s| collect_patterns(s, out));
                    }
                    ("properties", Value::Object(m)) => m.values().for_each(|s| collect_patterns(s, out)),
                    _ => collect_patterns(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_patterns(v, out)),
        _ => {}
    }
}

/// What a valid subschema evaluated, for `unevaluated*`.
#[derive(Default)]
struct Evaluated {
    props: HashSet<String>,
    /// Items `0..items` were evaluated, or all of them.
    items: usize,
    all_items: bool,
}

impl Evaluated {
    fn merge(&mut self, other: Evaluated) {
        self.props.extend(other.props);
        self.items = self.items.max(other.items);
        self.all_items |= other.all_items;
    }
}

/// One evaluation: the dynamic scope (base URIs entered, outermost first).
struct Cx<'a> {
    v: &'a Validator,
    scope: Vec<String>,
    depth: usize,
    /// The (schema, instance) pairs being evaluated: meeting one again is a
    /// reference cycle that consumes nothing.
    active: Vec<(*const Value, *const Value)>,
}

fn push_path(path: &mut String, token: &str) -> usize {
    let len = path.len();
    path.push('/');
    path.push_str(&token.replace('~', "~0").replace('/', "~1"));
    len
}

fn err(errors: &mut Vec<Error>, path: &str, message: String) {
    errors.push(Error { path: path.to_string(), message });
}

const TYPE_ORDER: [&str; 7] = ["array", "boolean", "integer", "null", "number", "object", "string"];

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_integer(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

fn has_type(v: &Value, t: &str, draft: Draft) -> bool {
    match t {
        // Draft 4 counts 1.0 as a number only.
        "integer" if draft == Draft::Draft4 => v.as_i64().is_some() || v.as_u64().is_some(),
        "integer" => is_integer(v),
        "number" => v.is_number(),
        _ => type_name(v) == t,
    }
}

/// JSON equality with numbers compared by value (1 == 1.0).
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
            (Some(p), Some(q), _, _) => p == q,
            (_, _, Some(p), Some(q)) => p == q,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| equal(p, q)))
        }
        _ => a == b,
    }
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn is_multiple(x: &Value, m: &Value) -> bool {
    if let (Some(a), Some(b)) = (x.as_i64(), m.as_i64()) {
        return b == 0 || a % b == 0;
    }
    let (Some(a), Some(b)) = (num(x), num(m)) else { return true };
    if b == 0.0 {
        return true;
    }
    let q = a / b;
    if !q.is_finite() {
        return false;
    }
    (q - q.round()).abs() <= 1e-9 * q.abs().max(1.0)
}

fn count_label(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn quoted_list(items: &[String]) -> String {
    items.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(", ")
}

fn unexpected(n: usize) -> &'static str {
    if n == 1 {
        " was unexpected)"
    } else {
        " were unexpected)"
    }
}

fn enum_message(inst: &Value, options: &[Value]) -> String {
    let mut s = format!("{inst} is not one of ");
    if options.len() <= 3 {
        for (i, o) in options.iter().enumerate() {
            if i == 0 {
                s.push_str(&o.to_string());
            } else if i == options.len() - 1 {
                s.push_str(&format!(" or {o}"));
            } else {
                s.push_str(&format!(", {o}"));
            }
        }
    } else {
        s.push_str(&format!("{}, {} or {} other candidates", options[0], options[1], options.len() - 2));
    }
    s
}

impl Cx<'_> {
    fn valid(
        &mut self,
        schema: &Value,
        draft: Draft,
        base: &str,
        inst: &Value,
        path: &mut String,
    ) -> Option<Evaluated> {
        let mut errors = Vec::new();
        let e = self.node(schema, draft, base, inst, path, &mut errors);
        errors.is_empty().then_some(e)
    }

    /// Follows a reference from `base`, entering the target's resource.
    fn follow(&mut self, target: &str, inst: &Value, path: &mut String, errors: &mut Vec<Error>) -> Evaluated {
        let Some((doc, schema, b)) = self.v.locate(target) else {
            err(errors, path, format!("Unresolvable reference {target}"));
            return Evaluated::default();
        };
        let draft = self.v.doc(doc).draft;
        let entered = self.scope.last() != Some(&b);
        if entered {
            self.scope.push(b.clone());
        }
        let e = self.node(schema, draft, &b, inst, path, errors);
        if entered {
            self.scope.pop();
        }
        e
    }

    /// Evaluates one (sub)schema; its errors go to `errors`.
    #[allow(clippy::too_many_lines)]
    fn node(
        &mut self,
        schema: &Value,
        draft: Draft,
        base: &str,
        inst: &Value,
        path: &mut String,
        errors: &mut Vec<Error>,
    ) -> Evaluated {
        let mut ev = Evaluated::default();
        let map = match schema {
            Value::Bool(true) => {
                return Evaluated { props: HashSet::new(), items: 0, all_items: true }.with_props(inst)
            }
            Value::Bool(false) => {
                err(errors, path, format!("False schema does not allow {inst}"));
                return ev;
            }
            Value::Object(map) => map,
            _ => return ev,
        };
        let key = (schema as *const Value, inst as *const Value);
        if self.depth >= MAX_DEPTH || self.active.contains(&key) {
            err(errors, path, "the schema recurses without end (a $ref cycle)".to_string());
            return ev;
        }
        self.active.push(key);
        self.depth += 1;
        let mut base = base.to_string();
        let mut entered = false;
        if let Some(id) = map.get(id_keyword(draft)).and_then(Value::as_str) {
            if !(id.starts_with('#') || draft <= Draft::Draft7 && map.contains_key("$ref")) {
                base = uri::strip_fragment(&uri::resolve(&base, id)).to_string();
                if self.scope.last() != Some(&base) {
                    self.scope.push(base.clone());
                    entered = true;
                }
            }
        }
        // Drafts up to 7: `$ref` stands alone.
        if draft <= Draft::Draft7 {
            if let Some(r) = map.get("$ref").and_then(Value::as_str) {
                let target = uri::resolve(&base, r);
                let e = self.follow(&target, inst, path, errors);
                if entered {
                    self.scope.pop();
                }
                self.depth -= 1;
                self.active.pop();
                return e;
            }
        }
        for (k, value) in map {
            self.keyword(map, k, value, draft, &base, inst, path, errors, &mut ev);
        }
        // unevaluated* see what every other keyword evaluated.
        if draft >= Draft::Draft201909 {
            if let (Some(u), Value::Object(obj)) = (map.get("unevaluatedProperties"), inst) {
                let mut extra = Vec::new();
                for (name, item) in obj {
                    if ev.props.contains(name) {
                        continue;
                    }
                    let at = push_path(path, name);
                    let ok = self.valid(u, draft, &base, item, path).is_some();
                    path.truncate(at);
                    if ok {
                        ev.props.insert(name.clone());
                    } else {
                        extra.push(name.clone());
                    }
                }
                if !extra.is_empty() {
                    if u == &Value::Bool(false) {
                        let n = extra.len();
                        err(
                            errors,
                            path,
                            format!("Unevaluated properties are not allowed ({}{}", quoted_list(&extra), unexpected(n)),
                        );
                    } else {
                        for name in &extra {
                            let at = push_path(path, name);
                            if let Some(item) = obj.get(name) {
                                self.node(u, draft, &base, item, path, errors);
                            }
                            path.truncate(at);
                        }
                    }
                }
            }
            if let (Some(u), Value::Array(arr)) = (map.get("unevaluatedItems"), inst) {
                if !ev.all_items {
                    let mut extra = Vec::new();
                    for (i, item) in arr.iter().enumerate().skip(ev.items) {
                        let at = push_path(path, &i.to_string());
                        if self.valid(u, draft, &base, item, path).is_none() {
                            extra.push((i, item));
                        }
                        path.truncate(at);
                    }
                    if !extra.is_empty() {
                        let shown: Vec<String> = extra.iter().map(|(_, v)| v.to_string()).collect();
                        err(
                            errors,
                            path,
                            format!(
                                "Unevaluated items are not allowed ({}{}",
                                quoted_list(&shown),
                                unexpected(shown.len())
                            ),
                        );
                    } else {
                        ev.all_items = true;
                    }
                }
            }
        }
        if entered {
            self.scope.pop();
        }
        self.depth -= 1;
        self.active.pop();
        ev
    }

    #[allow(clippy::too_many_arguments, clippy::too_many_lines)]
    fn keyword(
        &mut self,
        map: &Map<String, Value>,
        k: &str,
        value: &Value,
        draft: Draft,
        base: &str,
        inst: &Value,
        path: &mut String,
        errors: &mut Vec<Error>,
        ev: &mut Evaluated,
    ) {
        let modern = draft >= Draft::Draft201909;
        match k {
            "$ref" => {
                let target = uri::resolve(base, value.as_str().unwrap_or(""));
                let e = self.follow(&target, inst, path, errors);
                ev.merge(e);
            }
            "$dynamicRef" if draft == Draft::Draft202012 => {
                let r = value.as_str().unwrap_or("");
                let mut target = uri::resolve(base, r);
                if let (_, Some(name)) = uri::split_fragment(&target) {
                    if self.v.dynamic.contains(&target) {
                        let name = name.to_string();
                        if let Some(outer) = self.scope.iter().find(|b| self.v.dynamic.contains(&format!("{b}#{name}")))
                        {
                            target = format!("{outer}#{name}");
                        }
                    }
                }
                let e = self.follow(&target, inst, path, errors);
                ev.merge(e);
            }
            "$recursiveRef" if draft == Draft::Draft201909 => {
                let mut target = uri::resolve(base, value.as_str().unwrap_or("#"));
                let resource = uri::strip_fragment(&target).to_string();
                if self.v.dynamic.contains(&resource) {
                    if let Some(outer) = self.scope.iter().find(|b| self.v.dynamic.contains(*b)) {
                        target = outer.clone();
                    }
                }
                let e = self.follow(&target, inst, path, errors);
                ev.merge(e);
            }
            "type" => {
                let ok = match value {
                    Value::String(t) => has_type(inst, t, draft),
                    Value::Array(ts) => ts.iter().any(|t| t.as_str().is_some_and(|t| has_type(inst, t, draft))),
                    _ => true,
                };
                if !ok {
                    let message = match value {
                        Value::String(t) => format!("{inst} is not of type \"{t}\""),
                        Value::Array(ts) if ts.len() == 1 => format!("{inst} is not of type {}", ts[0]),
                        Value::Array(ts) => {
                            // Listed in a fixed order, as the jsonschema crate did.
                            let mut names: Vec<&Value> = ts.iter().collect();
                            names.sort_by_key(|t| TYPE_ORDER.iter().position(|o| t.as_str() == Some(*o)));
                            format!(
                                "{inst} is not of types {}",
                                names.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
                            )
                        }
                        _ => String::new(),
                    };
                    err(errors, path, message);
                }
            }
            "enum" => {
                if let Value::Array(options) = value {
                    if !options.iter().any(|o| equal(o, inst)) {
                        err(errors, path, enum_message(inst, options));
                    }
                }
            }
            "const" if draft >= Draft::Draft6 && !equal(value, inst) => {
                err(errors, path, format!("{value} was expected"));
            }
            "multipleOf" if inst.is_number() && value.is_number() && !is_multiple(inst, value) => {
                err(errors, path, format!("{inst} is not a multiple of {value}"));
            }
            "maximum" | "minimum" => {
                let (Some(x), Some(limit)) = (num(inst), num(value)) else { return };
                let max = k == "maximum";
                let exclusive = draft == Draft::Draft4
                    && map.get(if max { "exclusiveMaximum" } else { "exclusiveMinimum" }) == Some(&Value::Bool(true));
                let bad = match (max, exclusive) {
                    (true, false) => x > limit,
                    (true, true) => x >= limit,
                    (false, false) => x < limit,
                    (false, true) => x <= limit,
                };
                if bad {
                    let message = match (max, exclusive) {
                        (true, false) => format!("{inst} is greater than the maximum of {value}"),
                        (true, true) => format!("{inst} is greater than or equal to the maximum of {value}"),
                        (false, false) => format!("{inst} is less than the minimum of {value}"),
                        (false, true) => format!("{inst} is less than or equal to the minimum of {value}"),
                    };
                    err(errors, path, message);
                }
            }
            "exclusiveMaximum" | "exclusiveMinimum" if draft >= Draft::Draft6 => {
                let (Some(x), Some(limit)) = (num(inst), num(value)) else { return };
                if k == "exclusiveMaximum" && x >= limit {
                    err(errors, path, format!("{inst} is greater than or equal to the maximum of {value}"));
                } else if k == "exclusiveMinimum" && x <= limit {
                    err(errors, path, format!("{inst} is less than or equal to the minimum of {value}"));
                }
            }
            wire::MAX_LENGTH | wire::MIN_LENGTH => {
                let (Value::String(s), Some(limit)) = (inst, value.as_f64()) else { return };
                let n = s.chars().count() as f64;
                let shown = limit as u64;
                if k == wire::MAX_LENGTH && n > limit {
                    err(
                        errors,
                        path,
                        format!("{inst} is longer than {}", count_label(shown, "character", "characters")),
                    );
                } else if k == wire::MIN_LENGTH && n < limit {
                    err(
                        errors,
                        path,
                        format!("{inst} is shorter than {}", count_label(shown, "character", "characters")),
                    );
                }
            }
            "pattern" => {
                if let (Value::String(s), Value::String(p)) = (inst, value) {
                    if let Some(re) = self.regex(p) {
                        if !re.is_match(s) {
                            err(errors, path, format!("{inst} does not match \"{p}\""));
                        }
                    }
                }
            }
            "format" if draft <= Draft::Draft7 && value == "regex" => {
                if let Value::String(s) = inst {
                    if Regex::new(s).is_err() {
                        err(errors, path, format!("{inst} is not a \"regex\""));
                    }
                }
            }
            wire::MAX_ITEMS | wire::MIN_ITEMS => {
                let (Value::Array(a), Some(limit)) = (inst, value.as_f64()) else { return };
                let n = a.len() as f64;
                let shown = limit as u64;
                if k == wire::MAX_ITEMS && n > limit {
                    err(errors, path, format!("{inst} has more than {}", count_label(shown, "item", "items")));
                } else if k == wire::MIN_ITEMS && n < limit {
                    err(errors, path, format!("{inst} has less than {}", count_label(shown, "item", "items")));
                }
            }
            "uniqueItems" => {
                if let (Value::Array(a), Value::Bool(true)) = (inst, value) {
                    let dup = a.iter().enumerate().any(|(i, x)| a[..i].iter().any(|y| equal(x, y)));
                    if dup {
                        err(errors, path, format!("{inst} has non-unique elements"));
                    }
                }
            }
            "maxProperties" | "minProperties" => {
                let (Value::Object(o), Some(limit)) = (inst, value.as_f64()) else { return };
                let n = o.len() as f64;
                let shown = limit as u64;
                if k == "maxProperties" && n > limit {
                    err(errors, path, format!("{inst} has more than {}", count_label(shown, "property", "properties")));
                } else if k == "minProperties" && n < limit {
                    err(errors, path, format!("{inst} has less than {}", count_label(shown, "property", "properties")));
                }
            }
            "required" => {
                if let (Value::Object(o), Value::Array(names)) = (inst, value) {
                    for name in names {
                        if let Some(n) = name.as_str() {
                            if !o.contains_key(n) {
                                err(errors, path, format!("{name} is a required property"));
                            }
                        }
                    }
                }
            }
            "dependentRequired" if modern => {
                if let (Value::Object(o), Value::Object(deps)) = (inst, value) {
                    for (p, names) in deps {
                        if o.contains_key(p) {
                            for name in names.as_array().into_iter().flatten() {
                                if name.as_str().is_some_and(|n| !o.contains_key(n)) {
                                    err(errors, path, format!("{name} is a required property"));
                                }
                            }
                        }
                    }
                }
            }
            "dependentSchemas" | "dependencies" => {
                // `dependencies` (drafts 4 to 7) stays honoured in later
                // drafts, as the jsonschema crate did.
                if k == "dependentSchemas" && !modern {
                    return;
                }
                if let (Value::Object(o), Value::Object(deps)) = (inst, value) {
                    for (p, dep) in deps {
                        if !o.contains_key(p) {
                            continue;
                        }
                        match dep {
                            Value::Array(names) => {
                                for name in names {
                                    if name.as_str().is_some_and(|n| !o.contains_key(n)) {
                                        err(errors, path, format!("{name} is a required property"));
                                    }
                                }
                            }
                            sub => {
                                let e = self.node(sub, draft, base, inst, path, errors);
                                ev.merge(e);
                            }
                        }
                    }
                }
            }
            "properties" | "patternProperties" | wire::ADDITIONAL_PROPERTIES => {
                let Value::Object(o) = inst else { return };
                if k != wire::ADDITIONAL_PROPERTIES {
                    for (name, item) in o {
                        let subs: Vec<&Value> = if k == "properties" {
                            value.get(name).into_iter().collect()
                        } else {
                            value
                                .as_object()
                                .into_iter()
                                .flatten()
                                .filter(|(p, _)| self.regex(p).is_some_and(|re| re.is_match(name)))
                                .map(|(_, s)| s)
                                .collect()
                        };
                        for sub in subs {
                            let at = push_path(path, name);
                            let n = errors.len();
                            self.node(sub, draft, base, item, path, errors);
                            path.truncate(at);
                            if errors.len() == n {
                                ev.props.insert(name.clone());
                            }
                        }
                    }
                    return;
                }
                let props = map.get("properties").and_then(Value::as_object);
                let patterns = map.get("patternProperties").and_then(Value::as_object);
                let extra: Vec<&String> = o
                    .keys()
                    .filter(|name| !props.is_some_and(|p| p.contains_key(*name)))
                    .filter(|name| {
                        !patterns.is_some_and(|p| p.keys().any(|re| self.regex(re).is_some_and(|re| re.is_match(name))))
                    })
                    .collect();
                if extra.is_empty() {
                    return;
                }
                if value == &Value::Bool(false) {
                    let names: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
                    err(
                        errors,
                        path,
                        format!(
                            "Additional properties are not allowed ({}{}",
                            quoted_list(&names),
                            unexpected(names.len())
                        ),
                    );
                    return;
                }
                for name in extra {
                    let at = push_path(path, name);
                    let n = errors.len();
                    if let Some(item) = o.get(name) {
                        self.node(value, draft, base, item, path, errors);
                    }
                    path.truncate(at);
                    if errors.len() == n {
                        ev.props.insert(name.clone());
                    }
                }
            }
            "propertyNames" if draft >= Draft::Draft6 => {
                if let Value::Object(o) = inst {
                    for name in o.keys() {
                        self.node(value, draft, base, &Value::String(name.clone()), path, errors);
                    }
                }
            }
            "prefixItems" if draft == Draft::Draft202012 => {
                if let (Value::Array(a), Value::Array(subs)) = (inst, value) {
                    for (i, (item, sub)) in a.iter().zip(subs).enumerate() {
                        let at = push_path(path, &i.to_string());
                        self.node(sub, draft, base, item, path, errors);
                        path.truncate(at);
                    }
                    ev.items = ev.items.max(subs.len().min(a.len()));
                }
            }
            "items" => {
                let Value::Array(a) = inst else { return };
                match value {
                    Value::Array(subs) if draft != Draft::Draft202012 => {
                        for (i, (item, sub)) in a.iter().zip(subs).enumerate() {
                            let at = push_path(path, &i.to_string());
                            self.node(sub, draft, base, item, path, errors);
                            path.truncate(at);
                        }
                        ev.items = ev.items.max(subs.len().min(a.len()));
                    }
                    sub => {
                        let start = if draft == Draft::Draft202012 {
                            map.get("prefixItems").and_then(Value::as_array).map_or(0, Vec::len)
                        } else {
                            0
                        };
                        for (i, item) in a.iter().enumerate().skip(start) {
                            let at = push_path(path, &i.to_string());
                            self.node(sub, draft, base, item, path, errors);
                            path.truncate(at);
                        }
                        ev.all_items = true;
                    }
                }
            }
            "additionalItems" if draft != Draft::Draft202012 => {
                let (Value::Array(a), Some(Value::Array(subs))) = (inst, map.get("items")) else { return };
                if a.len() <= subs.len() {
                    return;
                }
                if value == &Value::Bool(false) {
                    let shown: Vec<String> = a[subs.len()..].iter().map(Value::to_string).collect();
                    err(
                        errors,
                        path,
                        format!("Additional items are not allowed ({}{}", shown.join(", "), unexpected(shown.len())),
                    );
                    return;
                }
                for (i, item) in a.iter().enumerate().skip(subs.len()) {
                    let at = push_path(path, &i.to_string());
                    self.node(value, draft, base, item, path, errors);
                    path.truncate(at);
                }
                ev.all_items = true;
            }
            "contains" if draft >= Draft::Draft6 => {
                let Value::Array(a) = inst else { return };
                let mut matched = 0usize;
                for (i, item) in a.iter().enumerate() {
                    let at = push_path(path, &i.to_string());
                    if self.valid(value, draft, base, item, path).is_some() {
                        matched += 1;
                    }
                    path.truncate(at);
                }
                let min = if modern { map.get("minContains").and_then(Value::as_u64).unwrap_or(1) } else { 1 };
                let max = if modern { map.get("maxContains").and_then(Value::as_u64) } else { None };
                // One message for too few and too many, the jsonschema crate's.
                if (matched as u64) < min || max.is_some_and(|m| matched as u64 > m) {
                    err(errors, path, format!("None of {inst} are valid under the given schema"));
                } else if draft == Draft::Draft202012 {
                    // What `contains` matched counts as evaluated only in 2020-12.
                    if matched == a.len() {
                        ev.all_items = true;
                    }
                }
            }
            "allOf" => {
                for sub in value.as_array().into_iter().flatten() {
                    let e = self.node(sub, draft, base, inst, path, errors);
                    ev.merge(e);
                }
            }
            wire::ANY_OF => {
                let mut any = false;
                for sub in value.as_array().into_iter().flatten() {
                    if let Some(e) = self.valid(sub, draft, base, inst, path) {
                        any = true;
                        ev.merge(e);
                        if !modern {
                            break;
                        }
                    }
                }
                if !any {
                    err(
                        errors,
                        path,
                        format!("{inst} is not valid under any of the schemas listed in the 'anyOf' keyword"),
                    );
                }
            }
            wire::ONE_OF => {
                let mut passed = Vec::new();
                for sub in value.as_array().into_iter().flatten() {
                    if let Some(e) = self.valid(sub, draft, base, inst, path) {
                        passed.push(e);
                    }
                }
                match passed.len() {
                    0 => err(
                        errors,
                        path,
                        format!("{inst} is not valid under any of the schemas listed in the 'oneOf' keyword"),
                    ),
                    1 => passed.into_iter().for_each(|e| ev.merge(e)),
                    _ => err(
                        errors,
                        path,
                        format!("{inst} is valid under more than one of the schemas listed in the 'oneOf' keyword"),
                    ),
                }
            }
            "not" if self.valid(value, draft, base, inst, path).is_some() => {
                err(errors, path, format!("{value} is not allowed for {inst}"));
            }
            "if" if draft >= Draft::Draft7 => {
                let branch = match self.valid(value, draft, base, inst, path) {
                    Some(e) => {
                        ev.merge(e);
                        map.get("then")
                    }
                    None => map.get("else"),
                };
                if let Some(b) = branch {
                    let e = self.node(b, draft, base, inst, path, errors);
                    ev.merge(e);
                }
            }
            _ => {}
        }
    }

    fn regex(&self, pattern: &str) -> Option<&Regex> {
        self.v.regexes.get(pattern)
    }
}

impl Evaluated {
    /// `true` evaluates every member and item.
    fn with_props(mut self, inst: &Value) -> Evaluated {
        if let Value::Object(o) = inst {
            self.props = o.keys().cloned().collect();
        }
        self
    }
}

#[cfg(test)]
mod tests;
