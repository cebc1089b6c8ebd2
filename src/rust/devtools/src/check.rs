//! Checks of a server's tool listings, as `mcp_check()` reports them: the
//! rules of the protocol (names, schema roots, dialects, meta-schema
//! validity, what each version's schema files accept), what each version
//! drops, and schema features that particular clients are known to reject.
//!
//! Every finding carries its severity, a one-line fix and, for rules that come
//! from somewhere other than the MCP specification, its source.

use mcplite_core::r::spec::name_follows_spec;
use mcplite_core::version::{self, Structured, Version, VERSIONS};
use mcplite_core::wire;
use serde_json::{Map, Value};
use std::collections::HashSet;

use crate::schema::{Draft, Validator};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Clients will fail: no tools, a rejected listing, a tool that cannot work.
    Error,
    /// Works in some clients, or against a SHOULD of the specification.
    Warning,
    /// Worth knowing; nothing to fix.
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub severity: Severity,
    /// A stable identifier of the rule (tests and programs match on it).
    pub rule: &'static str,
    pub tool: Option<String>,
    /// The protocol version the finding applies to, when only one does.
    pub version: Option<String>,
    pub message: String,
    pub fix: String,
    /// Where the rule comes from, for rules about particular clients.
    pub source: Option<String>,
}

/// A sentence: the first word capitalised unless it is an identifier
/// (`inputSchema`), and a final full stop.
fn sentence(s: &str) -> String {
    let first = s.split(|c: char| !c.is_alphanumeric()).next().unwrap_or_default();
    let plain_word = !first.is_empty() && first.chars().all(|c| c.is_ascii_lowercase());
    let mut out = String::with_capacity(s.len() + 1);
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if plain_word => out.extend(c.to_uppercase()),
        Some(c) => out.push(c),
        None => {}
    }
    out.extend(chars);
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

impl Finding {
    fn new(
        severity: Severity,
        rule: &'static str,
        tool: Option<&str>,
        message: String,
        fix: impl Into<String>,
    ) -> Self {
        Finding {
            severity,
            rule,
            tool: tool.map(str::to_string),
            version: None,
            message: sentence(&message),
            fix: sentence(&fix.into()),
            source: None,
        }
    }

    fn source(mut self, source: &str) -> Self {
        self.source = Some(source.into());
        self
    }

    fn version(mut self, v: &str) -> Self {
        self.version = Some(v.into());
        self
    }

    /// The finding as a JSON object with the members of [`FIELDS`] (`null`
    /// for what it does not have).
    pub fn to_value(&self) -> Value {
        let values = [
            Some(self.severity.as_str()),
            Some(self.rule),
            self.tool.as_deref(),
            self.version.as_deref(),
            Some(self.message.as_str()),
            Some(self.fix.as_str()),
            self.source.as_deref(),
        ];
        Value::Object(
            FIELDS.iter().zip(values).map(|(k, v)| (k.to_string(), v.map_or(Value::Null, Value::from))).collect(),
        )
    }
}

/// The columns of a finding, in the order of `mcp_check()`'s data frames.
pub const FIELDS: [&str; 7] = ["severity", "rule", "tool", "version", "message", "fix", "source"];

/// A rule `mcp_check()` applies to facts only R can see (the script, the
/// server's start and standard error, the calls): its severity, and the fix
/// reported unless the finding names a more specific one. The rules about
/// listings are made in this module ([`check_listings`]).
#[derive(Debug)]
pub struct Rule {
    pub id: &'static str,
    pub severity: Severity,
    pub fix: &'static str,
}

const fn rule(id: &'static str, severity: Severity, fix: &'static str) -> Rule {
    Rule { id, severity, fix }
}

use Severity::{Error as E, Info as I, Warning as W};

pub const REPORTED_RULES: &[Rule] = &[
    rule("script_missing", E, "Give the path of your server script; clients need its absolute path."),
    rule("script_relative", I, "Nothing to do; in a client configuration written by hand, use the absolute path too."),
    rule("command_only", I, "Nothing to do; give `script` instead for those checks."),
    rule("package_not_installed", E, "Install the package."),
    rule("package_not_found", E, "Set R_LIBS in the client configuration to the library that holds the package."),
    rule("start_error", E, "Check that R is installed where this R runs from, and that the script can be read."),
    rule("no_server", E, "End the script with mcplite::mcp_server(...), which answers clients until they close it."),
    rule("no_answer", E, "End the script with mcplite::mcp_server(...) and move slow work into the tools."),
    rule("relative_file", E, "Build paths with script_file(\"data.csv\"), which gives the same path wherever the script runs, or use absolute paths."),
    rule("stdout_noise", E, "Remove print() and cat() calls that run outside tools, or send them to standard error with message(); keep --vanilla so no profile prints."),
    rule("slow_start", W, "Load fewer packages or do less work before mcp_server(); prepare data lazily inside tools."),
    rule("modern_unsupported", I, "Nothing to do; mcplite servers serve every version."),
    rule("handshake_failed", E, "Answer initialize for every protocol version (mcp_server() does)."),
    rule("version_negotiated", I, "Nothing to do, unless clients of that version matter to you."),
    rule("tools_list_failed", E, "Make tools/list answer in every version (mcp_server() does)."),
    rule("no_tools", W, "Pass your tools to mcp_server()."),
    rule("output_schema_mismatch", E, "Make the tool return structured content that matches its output schema (or change the schema): the MCP Inspector and SDK-based clients fail the call."),
    rule("call_failed", E, "Check the tool name and arguments, and the server's standard error."),
    rule("call_tool_error", E, "Fix the tool, or the arguments given in `calls`."),
    rule("startup_warning", W, "Fix what it says: clients do not show the server's warnings, and the tools may not be what you meant."),
    rule("number_sent_as_zero", W, "Put options(mcplite.json.digits = NA) (every digit) or I(n) (n significant digits) at the top of the script."),
    rule("progress_not_increasing", W, "Report values that grow with each call of mcp_progress() (items done, percent, seconds)."),
    rule("workers_failed", E, "Make the script run on a worker too: find files next to it with script_file(), and guard what must run only in the server with `if (!mirai::on_daemon())`."),
    rule("workers_not_ready", W, "Do less when the script starts on a worker (load data inside the tools that need it, or guard it with `if (!mirai::on_daemon())`), or give mcp_check() a larger `timeout` if it must take longer."),
    rule("background_processes", W, "End background processes before the server exits (for example with tools::pskill() in on.exit()), or give them no inherited standard output."),
];

impl Finding {
    /// A finding of one of [`REPORTED_RULES`] about facts found outside this
    /// module: the message as given, the rule's severity, and its fix unless
    /// `fix` names a more specific one.
    pub fn reported(
        rule: &str,
        message: String,
        fix: Option<String>,
        tool: Option<String>,
        version: Option<String>,
    ) -> Result<Finding, String> {
        let r = REPORTED_RULES.iter().find(|r| r.id == rule).ok_or_else(|| format!("unknown rule {rule:?}"))?;
        Ok(Finding {
            severity: r.severity,
            rule: r.id,
            tool,
            version,
            message,
            fix: fix.unwrap_or_else(|| r.fix.to_string()),
            source: None,
        })
    }
}

/// Findings (as [`Finding::to_value`] writes them) as the columns of
/// [`FIELDS`], in the order a report shows them: errors, then warnings, then
/// notes, each in the order found. `None` is a missing value.
pub fn frame_columns(findings: &[Value]) -> Result<Vec<Vec<Option<String>>>, String> {
    let mut ranked = Vec::with_capacity(findings.len());
    for f in findings {
        let rank = match f.get("severity").and_then(Value::as_str) {
            Some("error") => 0,
            Some("warning") => 1,
            Some("info") => 2,
            _ => return Err(format!("a finding without a known severity: {}", short(f))),
        };
        ranked.push((rank, f));
    }
    ranked.sort_by_key(|(rank, _)| *rank);
    Ok(FIELDS
        .iter()
        .map(|field| ranked.iter().map(|(_, f)| f.get(*field).and_then(Value::as_str).map(str::to_string)).collect())
        .collect())
}

// Sources of the client-specific rules. They describe third-party behaviour
// as documented or as reported by those clients' own error messages.
const SRC_TOOL_NAMES: &str = "MCP specification 2025-11-25, server/tools, \"Tool names\"";
const SRC_OPENAI_NAMES: &str = "OpenAI API reference, function `name`: a-z, A-Z, 0-9, underscores and dashes, at most 64 characters; Anthropic tool use documentation, tool `name` pattern ^[a-zA-Z0-9_-]{1,64}$";
const SRC_ANTHROPIC_TOP: &str = "Anthropic Messages API, which refuses such tools with \"input_schema does not support oneOf, allOf, or anyOf at the top level\" (Claude Desktop, Claude Code)";
const SRC_VSCODE_ITEMS: &str =
    "VS Code (GitHub Copilot Chat), which refuses such tools with \"tool parameters array type must have items\"";
const SRC_REF: &str = "MCP specification 2026-07-28, basic/index, \"$ref resolution\": clients must not fetch network references and reject schemas whose external references they cannot resolve";
const SRC_DIALECT: &str = "MCP specification 2025-11-25, basic/index, \"JSON Schema usage\": 2020-12 is the default and the only dialect clients must support";

const URI_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// A `$schema` value: the draft it names, and whether MCP clients can be
/// expected to support it (2020-12, and draft-07 which the older MCP schema
/// files themselves use).
pub(crate) fn dialect(uri: &str) -> Option<(Draft, bool)> {
    let u = uri.trim_end_matches('#');
    let u = u.strip_prefix("https://").or_else(|| u.strip_prefix("http://"))?;
    match u {
        "json-schema.org/draft/2020-12/schema" => Some((Draft::Draft202012, true)),
        "json-schema.org/draft-07/schema" => Some((Draft::Draft7, true)),
        "json-schema.org/draft/2019-09/schema" => Some((Draft::Draft201909, false)),
        "json-schema.org/draft-06/schema" => Some((Draft::Draft6, false)),
        "json-schema.org/draft-04/schema" => Some((Draft::Draft4, false)),
        _ => None,
    }
}

/// Meta-schema errors of `schema` (at most `limit`), then whether it compiles
/// (references resolve, patterns are valid regular expressions).
fn validate_schema(schema: &Value, draft: Draft, limit: usize) -> (Vec<String>, Option<String>) {
    let meta = match Validator::meta_schema(draft) {
        Ok(meta) => meta,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let errors: Vec<String> = meta
        .errors(schema)
        .into_iter()
        .take(limit)
        .map(|e| if e.path.is_empty() { e.message } else { format!("at {}: {}", e.path, e.message) })
        .collect();
    if !errors.is_empty() {
        return (errors, None);
    }
    (errors, Validator::new(schema, draft).err())
}

fn tool_name(tool: &Value) -> Option<&str> {
    tool.get("name").and_then(Value::as_str)
}

fn name_is_portable(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Members whose values are data, not subschemas: not walked.
const DATA_KEYWORDS: [&str; 5] = ["enum", "const", "default", "examples", "example"];

/// Every subschema of `schema` (itself included) with its JSON pointer.
fn walk<'a>(schema: &'a Value, path: String, out: &mut Vec<(String, &'a Map<String, Value>)>) {
    match schema {
        Value::Object(map) => {
            out.push((path.clone(), map));
            for (k, v) in map {
                if DATA_KEYWORDS.contains(&k.as_str()) {
                    continue;
                }
                walk(v, format!("{path}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                walk(v, format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn has_type(node: &Map<String, Value>, t: &str) -> bool {
    match node.get("type") {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(a)) => a.iter().any(|x| x.as_str() == Some(t)),
        _ => false,
    }
}

fn shown(path: &str) -> &str {
    if path.is_empty() {
        "the root"
    } else {
        path
    }
}

/// Checks of one schema (`field` is `inputSchema` or `outputSchema`).
fn check_schema(tool: &str, field: &str, schema: &Value, out: &mut Vec<Finding>) {
    let input = field == wire::INPUT_SCHEMA;
    let t = Some(tool);
    let Value::Object(root) = schema else {
        out.push(Finding::new(
            Severity::Error,
            "schema_not_object",
            t,
            format!("{field} is {}, not a JSON object", kind_of(schema)),
            format!("give the tool an {field} that is a JSON object with \"type\": \"object\""),
        ));
        return;
    };
    if input && root.get("type").and_then(Value::as_str) != Some("object") {
        let found = root.get("type").map_or_else(|| "missing".to_string(), Value::to_string);
        out.push(Finding::new(
            Severity::Error,
            "input_root_type",
            t,
            format!("inputSchema must have \"type\": \"object\" at its root (found {found}); clients that validate the listing reject all tools"),
            "describe the arguments as an object: a named list of types in tool(arguments = ...)",
        ));
    }
    match root.get("required") {
        None => {}
        Some(Value::Array(names)) if names.iter().all(Value::is_string) => {
            let props = root.get("properties").and_then(Value::as_object);
            let unknown: Vec<&str> =
                names.iter().filter_map(Value::as_str).filter(|n| !props.is_some_and(|p| p.contains_key(*n))).collect();
            if !unknown.is_empty() {
                out.push(Finding::new(
                    Severity::Warning,
                    "required_unknown",
                    t,
                    format!(
                        "{field} requires {} but does not describe {} in properties",
                        quote_list(&unknown),
                        if unknown.len() == 1 { "it" } else { "them" }
                    ),
                    "add each required name to properties, or drop it from required",
                ));
            }
        }
        Some(other) => out.push(Finding::new(
            Severity::Error,
            "required_not_array",
            t,
            format!("{field}.required must be an array of names, not {}", kind_of(other)),
            "write required as an array, e.g. I(\"x\") or list(\"x\") in R",
        )),
    }
    let mut draft = Draft::Draft202012;
    let mut validate = true;
    match root.get("$schema") {
        None => {}
        Some(Value::String(uri)) => match dialect(uri) {
            Some((d, true)) => draft = d,
            Some((d, false)) => {
                draft = d;
                out.push(
                    Finding::new(
                        Severity::Warning,
                        "dialect",
                        t,
                        format!("{field} declares the JSON Schema dialect {uri}; clients only have to support 2020-12"),
                        format!("drop $schema or use {URI_2020_12}"),
                    )
                    .source(SRC_DIALECT),
                );
            }
            None => {
                validate = false;
                out.push(
                    Finding::new(
                        Severity::Warning,
                        "dialect",
                        t,
                        format!("{field} declares the unknown JSON Schema dialect {uri}; it was not checked against a meta-schema"),
                        format!("drop $schema or use {URI_2020_12}"),
                    )
                    .source(SRC_DIALECT),
                );
            }
        },
        Some(other) => {
            validate = false;
            out.push(Finding::new(
                Severity::Error,
                "dialect",
                t,
                format!("{field}.$schema must be a URI string, not {}", kind_of(other)),
                format!("drop $schema or use {URI_2020_12}"),
            ));
        }
    }
    if validate {
        let checked = std::panic::catch_unwind(|| validate_schema(schema, draft, 3));
        match checked {
            Ok((errors, compile)) => {
                if !errors.is_empty() {
                    out.push(Finding::new(
                        Severity::Error,
                        "schema_invalid",
                        t,
                        format!("{field} is not a valid JSON Schema: {}", errors.join("; ")),
                        "fix the schema so it validates against its dialect's meta-schema",
                    ));
                } else if let Some(e) = compile {
                    out.push(Finding::new(
                        Severity::Error,
                        "schema_unusable",
                        t,
                        format!("{field} cannot be used by a validator: {e}"),
                        "make every $ref point inside the schema (#/$defs/...) and every pattern a valid regular expression",
                    ));
                }
            }
            Err(_) => out.push(Finding::new(
                Severity::Warning,
                "schema_unchecked",
                t,
                format!("{field} could not be checked: the validator failed on it"),
                "simplify the schema",
            )),
        }
    }
    // Portability.
    if input {
        let top: Vec<&str> =
            [wire::ONE_OF, wire::ANY_OF, wire::ALL_OF].into_iter().filter(|k| root.contains_key(*k)).collect();
        if !top.is_empty() {
            out.push(
                Finding::new(
                    Severity::Warning,
                    "portability_top_composition",
                    t,
                    format!("inputSchema uses {} at the top level, which Claude's API refuses", quote_list(&top)),
                    "move the alternatives into a property, or describe them in the description",
                )
                .source(SRC_ANTHROPIC_TOP),
            );
        }
    }
    let mut nodes = Vec::new();
    walk(schema, String::new(), &mut nodes);
    if input {
        let bare: Vec<String> = nodes
            .iter()
            .filter(|(_, n)| has_type(n, "array") && !n.contains_key("items") && !n.contains_key("prefixItems"))
            .map(|(p, _)| shown(p).to_string())
            .collect();
        if !bare.is_empty() {
            out.push(
                Finding::new(
                    Severity::Warning,
                    "portability_array_items",
                    t,
                    format!("inputSchema has an array without items at {}", bare.join(", ")),
                    "say what the array holds: type_array(items = type_string()), or \"items\": {} for anything",
                )
                .source(SRC_VSCODE_ITEMS),
            );
        }
    }
    let external: Vec<String> = nodes
        .iter()
        .filter_map(|(p, n)| match n.get("$ref") {
            Some(Value::String(r)) if !r.starts_with('#') => Some(format!("{r} (at {})", shown(p))),
            _ => None,
        })
        .collect();
    if !external.is_empty() {
        out.push(
            Finding::new(
                Severity::Warning,
                "portability_external_ref",
                t,
                format!("{field} refers to other documents: {}", external.join(", ")),
                "copy the referenced definitions into $defs and refer to them as #/$defs/<name>",
            )
            .source(SRC_REF),
        );
    }
}

/// What kind of JSON value `v` is, for messages ("a string", ...).
pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn quote_list(items: &[&str]) -> String {
    let q: Vec<String> = items.iter().map(|s| format!("\"{s}\"")).collect();
    match q.len() {
        0 => String::new(),
        1 => q[0].clone(),
        n => format!("{} and {}", q[..n - 1].join(", "), q[n - 1]),
    }
}

/// Checks of one tool as listed in the richest version.
pub fn check_tool(tool: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(name) = tool_name(tool) else {
        out.push(Finding::new(
            Severity::Error,
            "name_missing",
            None,
            format!("a tool has no name (it is {})", short(tool)),
            "give every tool a name",
        ));
        return out;
    };
    let t = Some(name);
    if !name_follows_spec(name) {
        out.push(
            Finding::new(
                Severity::Warning,
                "name_rule",
                t,
                format!("the name {name:?} breaks the specification's rule (1 to 128 characters: letters, digits, _, - and .)"),
                "rename the tool, e.g. with underscores instead of spaces",
            )
            .source(SRC_TOOL_NAMES),
        );
    } else if !name_is_portable(name) {
        out.push(
            Finding::new(
                Severity::Warning,
                "portability_name",
                t,
                format!("the name {name:?} has a dot or more than 64 characters, which OpenAI's and Anthropic's APIs refuse"),
                "use at most 64 letters, digits, _ and -",
            )
            .source(SRC_OPENAI_NAMES),
        );
    }
    match tool.get("description") {
        Some(Value::String(d)) if !d.trim().is_empty() => {}
        _ => out.push(Finding::new(
            Severity::Warning,
            "description_missing",
            t,
            "the tool has no description; models choose tools by their descriptions".to_string(),
            "say in one or two sentences what the tool does and when to use it",
        )),
    }
    match tool.get(wire::INPUT_SCHEMA) {
        None => out.push(Finding::new(
            Severity::Error,
            "input_schema_missing",
            t,
            "the tool has no inputSchema; clients reject the listing".to_string(),
            "give every tool an inputSchema with \"type\": \"object\"",
        )),
        Some(s) => check_schema(name, wire::INPUT_SCHEMA, s, &mut out),
    }
    if let Some(s) = tool.get(wire::OUTPUT_SCHEMA) {
        check_schema(name, wire::OUTPUT_SCHEMA, s, &mut out);
    }
    out
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        format!("{}...", s.chars().take(77).collect::<String>())
    } else {
        s
    }
}

/// The row of the version table for a version named in a listing.
fn served(id: &str) -> Option<&'static Version> {
    version::lookup(id).map(|i| &VERSIONS[i])
}

/// What the schema files of the versions up to 2025-11-25 demand of a tool
/// schema: root `type: "object"`, object-valued `properties` members and an
/// array `required`. A listing that breaks them fails validation in clients
/// that check it, which then show no tools at all.
fn legacy_schema_problems(schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    match schema {
        Value::Object(root) => {
            if root.get("type").and_then(Value::as_str) != Some("object") {
                problems.push("the root is not \"type\": \"object\"".to_string());
            }
            if let Some(props) = root.get("properties") {
                match props.as_object() {
                    Some(p) => {
                        let bad: Vec<&str> =
                            p.iter().filter(|(_, v)| !v.is_object()).map(|(k, _)| k.as_str()).collect();
                        if !bad.is_empty() {
                            problems.push(format!("properties {} are not objects", quote_list(&bad)));
                        }
                    }
                    None => problems.push("properties is not an object".to_string()),
                }
            }
            if let Some(r) = root.get("required") {
                if !r.as_array().is_some_and(|a| a.iter().all(Value::is_string)) {
                    problems.push("required is not an array of strings".to_string());
                }
            }
        }
        other => problems.push(format!("it is {}", kind_of(other))),
    }
    problems
}

/// All checks of a server's listings: `listings` holds `(version, tools)`
/// for every version that answered `tools/list`, newest first. The first is
/// checked in full; the others are compared with it.
pub fn check_listings(listings: &[(String, Vec<Value>)]) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some((_, reference)) = listings.first() else { return out };
    let mut seen = HashSet::new();
    for tool in reference {
        if let Some(name) = tool_name(tool) {
            if !seen.insert(name.to_string()) {
                out.push(Finding::new(
                    Severity::Error,
                    "name_duplicate",
                    Some(name),
                    format!("two tools are named {name:?}; clients keep only one of them or reject the listing"),
                    "give every tool its own name",
                ));
            }
        }
        out.extend(check_tool(tool));
    }
    let mut compared = HashSet::new();
    for tool in reference {
        let Some(name) = tool_name(tool) else { continue };
        if !compared.insert(name) {
            continue; // a duplicate, reported above
        }
        let mut dropped = Vec::new();
        // (field, problems) -> versions whose listing shows them.
        let mut legacy: Vec<(&str, Vec<String>, Vec<&str>)> = Vec::new();
        for (i, (version, tools)) in listings.iter().enumerate() {
            let listed = if i == 0 { Some(tool) } else { tools.iter().find(|t| tool_name(t) == Some(name)) };
            let Some(listed) = listed else {
                out.push(
                    Finding::new(
                        Severity::Error,
                        "tool_not_listed",
                        Some(name),
                        format!("the tool is not listed for clients of {version}"),
                        "list every tool in every protocol version the server offers",
                    )
                    .version(version),
                );
                continue;
            };
            if served(version).is_some_and(|v| v.strict_schema_members) {
                for field in [wire::INPUT_SCHEMA, wire::OUTPUT_SCHEMA] {
                    let Some(schema) = listed.get(field) else { continue };
                    let problems = legacy_schema_problems(schema);
                    if problems.is_empty() {
                        continue;
                    }
                    match legacy.iter_mut().find(|(f, p, _)| *f == field && *p == problems) {
                        Some((_, _, versions)) => versions.push(version.as_str()),
                        None => legacy.push((field, problems, vec![version.as_str()])),
                    }
                }
            }
            if i > 0 && tool.get(wire::OUTPUT_SCHEMA).is_some() && listed.get(wire::OUTPUT_SCHEMA).is_none() {
                dropped.push(version.as_str());
            }
        }
        for (field, problems, versions) in legacy {
            let vs = versions.join(", ");
            let mut f = Finding::new(
                Severity::Error,
                "legacy_schema_shape",
                Some(name),
                format!("{field} as listed for {vs} breaks the schema of {}: {}; clients that validate the listing show no tools", if versions.len() == 1 { "that version" } else { "those versions" }, problems.join("; ")),
                "use object subschemas for every property ({} for anything) and an array for required",
            );
            if versions.len() == 1 {
                f = f.version(versions[0]);
            }
            out.push(f);
        }
        if !dropped.is_empty() {
            // A version without output schemas drops every one; another
            // version dropping one means its root is not an object.
            let only_oldest = dropped.iter().all(|v| served(v).is_some_and(|v| v.output_schema == Structured::None));
            let (severity, fix) = if only_oldest {
                (Severity::Info, "nothing to do: those clients read the text content")
            } else {
                (Severity::Warning, "give the output schema a root of \"type\": \"object\" (wrap other values in an object) so that 2025 clients see it")
            };
            out.push(Finding::new(
                severity,
                "output_schema_dropped",
                Some(name),
                format!(
                    "the output schema is not sent to clients of {}; they get the result as text only",
                    dropped.join(", ")
                ),
                fix,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(f: &[Finding]) -> Vec<&'static str> {
        f.iter().map(|x| x.rule).collect()
    }

    fn tool(schema: Value) -> Value {
        json!({"name": "t", "description": "A tool.", "inputSchema": schema})
    }

    #[test]
    fn reported_rules_own_severity_and_fix() {
        let f = Finding::reported("no_tools", "The server lists no tools.".into(), None, None, None).unwrap();
        assert_eq!((f.severity, f.fix.as_str()), (Severity::Warning, "Pass your tools to mcp_server()."));
        let f = Finding::reported("call_failed", "m".into(), Some("specific".into()), Some("t".into()), None).unwrap();
        assert_eq!((f.severity, f.fix.as_str(), f.tool.as_deref()), (Severity::Error, "specific", Some("t")));
        assert!(Finding::reported("no_such_rule", "m".into(), None, None, None).is_err());
        let mut ids: Vec<&str> = REPORTED_RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), REPORTED_RULES.len(), "rule ids are unique");
    }

    #[test]
    fn frames_put_errors_first_and_keep_the_order_found() {
        let mk = |rule, message: &str| Finding::reported(rule, message.into(), None, None, None).unwrap().to_value();
        let listed = check_tool(&json!({"name": "t", "inputSchema": {"type": "object"}}));
        let mut found = vec![mk("script_relative", "a"), mk("no_tools", "b"), mk("call_failed", "c")];
        found.extend(listed.iter().map(Finding::to_value));
        found.push(mk("call_tool_error", "d"));
        let cols = frame_columns(&found).unwrap();
        assert_eq!(cols.len(), FIELDS.len());
        let rules: Vec<&str> = cols[1].iter().map(|r| r.as_deref().unwrap_or("NA")).collect();
        assert_eq!(rules, ["call_failed", "call_tool_error", "no_tools", "description_missing", "script_relative"]);
        assert_eq!(cols[2][3].as_deref(), Some("t"));
        assert_eq!(cols[2][0], None, "a missing tool is a missing value");
        assert!(frame_columns(&[json!({"rule": "x"})]).is_err());
        assert_eq!(frame_columns(&[]).unwrap(), vec![Vec::<Option<String>>::new(); 7]);
    }

    #[test]
    fn messages_are_sentences() {
        assert_eq!(sentence("the root is bad"), "The root is bad.");
        assert_eq!(sentence("inputSchema is bad."), "inputSchema is bad.");
        assert_eq!(sentence("\"x\" is bad"), "\"x\" is bad.");
    }

    #[test]
    fn a_plain_tool_has_no_findings() {
        let t = tool(
            json!({"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"additionalProperties":false}),
        );
        assert_eq!(check_tool(&t), vec![]);
        let draft7 = tool(json!({"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}));
        assert_eq!(check_tool(&draft7), vec![]);
    }

    #[test]
    fn names_and_descriptions() {
        let mut t = tool(json!({"type":"object"}));
        t["name"] = json!("has space");
        t.as_object_mut().unwrap().remove("description");
        assert_eq!(rules(&check_tool(&t)), ["name_rule", "description_missing"]);
        t["name"] = json!("a.b");
        t["description"] = json!("  ");
        assert_eq!(rules(&check_tool(&t)), ["portability_name", "description_missing"]);
        t["name"] = json!("x".repeat(65));
        assert_eq!(rules(&check_tool(&t))[0], "portability_name");
        t["name"] = json!("x".repeat(129));
        assert_eq!(rules(&check_tool(&t))[0], "name_rule");
        assert_eq!(rules(&check_tool(&json!({"inputSchema": {}}))), ["name_missing"]);
    }

    #[test]
    fn input_schema_roots() {
        assert_eq!(rules(&check_tool(&tool(json!({"type":"string"})))), ["input_root_type"]);
        assert_eq!(rules(&check_tool(&tool(json!(true)))), ["schema_not_object"]);
        let mut t = tool(json!({}));
        t.as_object_mut().unwrap().remove("inputSchema");
        assert_eq!(rules(&check_tool(&t)), ["input_schema_missing"]);
    }

    #[test]
    fn required_names() {
        let f = check_tool(&tool(json!({"type":"object","properties":{"a":{}},"required":["a","b","c"]})));
        assert_eq!(rules(&f), ["required_unknown"]);
        assert!(f[0].message.contains("\"b\" and \"c\""), "{}", f[0].message);
        assert_eq!(
            rules(&check_tool(&tool(json!({"type":"object","required":"a"})))),
            ["required_not_array", "schema_invalid"]
        );
    }

    #[test]
    fn dialects_and_meta_schema() {
        let f = check_tool(&tool(json!({"$schema":"http://json-schema.org/draft-04/schema#","type":"object"})));
        assert_eq!(rules(&f), ["dialect"]);
        assert!(f[0].source.is_some());
        let f = check_tool(&tool(
            json!({"$schema":"https://example.com/my-dialect","type":"object","properties":{"x":{"type":"strin"}}}),
        ));
        assert_eq!(rules(&f), ["dialect"], "unknown dialects are not validated");
        let f = check_tool(&tool(json!({"type":"object","properties":{"x":{"type":"strin"}}})));
        assert_eq!(rules(&f), ["schema_invalid"]);
        assert!(f[0].message.contains("/properties/x/type"), "{}", f[0].message);
        let f = check_tool(&tool(json!({"type":"object","properties":{"x":{"$ref":"#/$defs/missing"}}})));
        assert_eq!(rules(&f), ["schema_unusable"]);
        let f = check_tool(&tool(json!({"type":"object","properties":{"x":{"type":"string","pattern":"(unclosed"}}})));
        assert_eq!(rules(&f), ["schema_unusable"]);
    }

    #[test]
    fn portability_rules_carry_their_source() {
        let f = check_tool(&tool(json!({"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}],
            "properties":{"a":{"type":"string"},"b":{"type":"string"}}})));
        assert_eq!(rules(&f), ["portability_top_composition"]);
        let f = check_tool(&tool(json!({"type":"object","properties":{"xs":{"type":"array"},
            "ys":{"type":["array","null"],"items":{}},"zs":{"enum":[{"type":"array"}]}}})));
        assert_eq!(rules(&f), ["portability_array_items"]);
        assert!(f[0].message.ends_with("/properties/xs."), "{}", f[0].message);
        let f = check_tool(&tool(json!({"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}})));
        assert_eq!(rules(&f), ["schema_unusable", "portability_external_ref"]);
        assert!(f.iter().filter(|x| x.rule.starts_with("portability")).all(|x| x.source.is_some()));
    }

    #[test]
    fn listings_are_compared_across_versions() {
        let modern = vec![
            json!({"name":"a","description":"d","inputSchema":{"type":"object","properties":{"x":true}},
                   "outputSchema":{"type":"array"}}),
            json!({"name":"b","description":"d","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}),
        ];
        let legacy = vec![
            json!({"name":"a","description":"d","inputSchema":{"type":"object","properties":{"x":true}}}),
            json!({"name":"b","description":"d","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}),
        ];
        let oldest = vec![json!({"name":"a","description":"d","inputSchema":{"type":"object","properties":{"x":{}}}})];
        let f = check_listings(&[
            ("2026-07-28".into(), modern),
            ("2025-11-25".into(), legacy),
            ("2024-11-05".into(), oldest),
        ]);
        let got: Vec<(&str, Option<&str>, Option<&str>, &str)> =
            f.iter().map(|x| (x.rule, x.tool.as_deref(), x.version.as_deref(), x.severity.as_str())).collect();
        assert_eq!(
            got,
            [
                ("legacy_schema_shape", Some("a"), Some("2025-11-25"), "error"),
                ("output_schema_dropped", Some("a"), None, "warning"),
                ("tool_not_listed", Some("b"), Some("2024-11-05"), "error"),
            ]
        );
        let legacy_only = check_listings(&[
            (
                "2025-11-25".into(),
                vec![json!({"name":"a","description":"d","inputSchema":{"type":"object","properties":{"x":true}}})],
            ),
            (
                "2024-11-05".into(),
                vec![json!({"name":"a","description":"d","inputSchema":{"type":"object","properties":{"x":true}}})],
            ),
        ]);
        assert_eq!(rules(&legacy_only), ["legacy_schema_shape"]);
        assert!(legacy_only[0].message.contains("2025-11-25, 2024-11-05"), "{}", legacy_only[0].message);
        assert_eq!(legacy_only[0].version, None);
        let dup = check_listings(&[
            (
                "2025-11-25".into(),
                vec![tool(json!({"type":"object","properties":{"x":true}})), tool(json!({"type":"object"}))],
            ),
            (
                "2024-11-05".into(),
                vec![tool(json!({"type":"object","properties":{"x":true}})), tool(json!({"type":"object"}))],
            ),
        ]);
        assert_eq!(rules(&dup), ["name_duplicate", "legacy_schema_shape"], "a duplicate is compared once");
        assert_eq!(check_listings(&[]), vec![]);
    }
}
