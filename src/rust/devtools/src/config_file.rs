//! MCP clients' configuration files, for `mcp_config(write = TRUE)`: merge one
//! server entry into a client's JSON or TOML file, keeping every other server
//! and setting, and replace the file safely, keeping the old one as a backup
//! (see [`write_entry`]). Also the default file of each client on each system.
//!
//! JSON files are edited as text: the core's own reader ([`mcplite_core::json::Doc`])
//! gives the byte span of the servers' object and of the entry, and only the
//! entry's text is replaced or added, indented as its neighbours, so every
//! other byte stays (keys written twice, numbers beyond double precision).
//! serde_json reads the file for the checks and their messages and for the
//! value the result must read as. A file with comments or trailing commas
//! (VS Code accepts them in `mcp.json`) is refused, as is a server name
//! written twice (clients differ in which one they read).
//!
//! TOML files (Codex) are edited in place: the file is parsed with toml_edit,
//! which keeps the position of every key, value and table, and only the entry's
//! own values are replaced or appended, so comments, order and formatting stay
//! byte for byte. (toml_edit's printer needs toml_writer, which the vendored
//! crates do not include; the few values written here are TOML basic or
//! literal strings, arrays and tables of them.) Every result is parsed again
//! and compared with what was intended: the entry as asked and everything else
//! as it was, or the file is left alone with an error.

use crate::platform::{self, CreateError, FileFacts};
use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::fs;
use std::io::{Read as _, Write as _};
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml_edit::{Document, Item, Table};

/// The kind of a failure; R raises `mcplite_error_config_<kind>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file is not valid JSON or TOML, or does not have the expected shape.
    Invalid,
    /// JSON with comments or trailing commas.
    Jsonc,
    /// Valid, but laid out in a way this module does not edit (an inline
    /// `mcp_servers` table, an entry written with dotted keys).
    Layout,
    /// Reading or writing failed (a read-only file, a directory we cannot write).
    Io,
    /// The default file cannot be found (no home directory in the environment).
    Path,
    /// The file has more than one hard link.
    Links,
    /// Another program kept changing the file while it was written.
    Changed,
    /// The new file cannot be given the original's owner and group.
    Owner,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Invalid => "invalid",
            ErrorKind::Jsonc => "jsonc",
            ErrorKind::Layout => "layout",
            ErrorKind::Io => "io",
            ErrorKind::Path => "path",
            ErrorKind::Links => "links",
            ErrorKind::Changed => "changed",
            ErrorKind::Owner => "owner",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub kind: ErrorKind,
    pub message: String,
}

impl ConfigError {
    fn new(kind: ErrorKind, message: String) -> Self {
        ConfigError { kind, message }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Toml,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "json" => Some(Format::Json),
            "toml" => Some(Format::Toml),
            _ => None,
        }
    }
}

/// One server entry to put under `servers_key` (`mcpServers`, `servers`,
/// `mcp_servers`) as `name`. `entry` holds the fields mcplite writes
/// (`command`, `args`, `env`, VS Code's `type`). An existing entry of that
/// name keeps its other fields (timeouts, `trust`, `required`); its `env` is
/// replaced by this one's, or dropped when this one has none.
#[derive(Clone, Copy, Debug)]
pub struct Update<'a> {
    pub format: Format,
    pub servers_key: &'a str,
    pub name: &'a str,
    pub entry: &'a Map<String, Value>,
}

/// Fields of an entry that mcplite owns even when it does not write them:
/// an updated entry keeps none of these that it does not write. `env`, and
/// the keys that make an entry a remote server (or belong to one), so that
/// it has exactly one transport, the command: `url` (Claude, Cursor, VS
/// Code, Gemini's SSE, Codex), `httpUrl` and `tcp` (Gemini), `serverUrl`,
/// `type` (`"http"`/`"sse"`; VS Code's `"stdio"` is written), `headers`,
/// and Codex's `http_headers`, `env_http_headers`, `bearer_token` and
/// `bearer_token_env_var`.
const OWNED_KEYS: &[&str] = &[
    "env",
    "url",
    "httpUrl",
    "tcp",
    "serverUrl",
    "type",
    "headers",
    "http_headers",
    "env_http_headers",
    "bearer_token",
    "bearer_token_env_var",
];

fn owned_keys() -> impl Iterator<Item = &'static str> {
    OWNED_KEYS.iter().copied()
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merged {
    pub text: String,
    /// An entry of that name was there and has been updated.
    pub replaced: bool,
}

/// The text of the file with the entry merged in. `text` is the file's
/// content (empty for a new file); `file` names it in messages.
pub fn merge(text: &str, update: &Update<'_>, file: &str) -> Result<Merged, ConfigError> {
    let (bom, body) = match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    };
    let merged = match update.format {
        Format::Json => merge_json(body, update, file)?,
        Format::Toml => merge_toml(body, update, file)?,
    };
    Ok(Merged { text: format!("{bom}{}", merged.text), replaced: merged.replaced })
}

// ---------------------------------------------------------------------------
// JSON

fn merge_json(body: &str, update: &Update<'_>, file: &str) -> Result<Merged, ConfigError> {
    if body.trim().is_empty() {
        let mut servers = Map::new();
        servers.insert(update.name.to_string(), Value::Object(update.entry.clone()));
        let mut root = Map::new();
        root.insert(update.servers_key.to_string(), Value::Object(servers));
        let text = JsonStyle::detect(body).render(&Value::Object(root))?;
        return Ok(Merged { text, replaced: false });
    }
    // serde reads the file for the checks and their messages, and for the
    // value the result must read as; the file itself is edited as text.
    let mut expected: Value = serde_json::from_str(body).map_err(|e| match jsonc_feature(body) {
        Some((what, line)) => ConfigError::new(
            ErrorKind::Jsonc,
            format!(
                "{file} has {what} (line {line}), which plain JSON does not allow and writing the file \
                 again would drop; remove them, or add the entry by hand."
            ),
        ),
        None => ConfigError::new(ErrorKind::Invalid, format!("{file} is not valid JSON: {e}.")),
    })?;
    let Some(object) = expected.as_object_mut() else {
        return Err(ConfigError::new(
            ErrorKind::Invalid,
            format!("{file} must hold a JSON object, not {}.", crate::check::kind_of(&expected)),
        ));
    };
    let key = update.servers_key;
    let servers = object.entry(key.to_string()).or_insert_with(|| Value::Object(Map::new()));
    let Some(servers) = servers.as_object_mut() else {
        return Err(ConfigError::new(
            ErrorKind::Invalid,
            format!("`{key}` in {file} must be a JSON object, not {}.", crate::check::kind_of(servers)),
        ));
    };
    let replaced = match servers.get_mut(update.name) {
        Some(Value::Object(existing)) => {
            update_json_entry(existing, update.entry);
            true
        }
        Some(other) => {
            *other = Value::Object(update.entry.clone());
            true
        }
        None => {
            servers.insert(update.name.to_string(), Value::Object(update.entry.clone()));
            false
        }
    };
    let text = splice_json(body, update, file)?;
    // What is written must read back as what was meant.
    let back: Value = serde_json::from_str(&text)
        .map_err(|e| ConfigError::new(ErrorKind::Layout, format!("mcplite made invalid JSON for {file}: {e}.")))?;
    if back != expected {
        return Err(ConfigError::new(ErrorKind::Layout, format!("mcplite could not rewrite {file} faithfully.")));
    }
    Ok(Merged { text, replaced })
}

/// An existing entry updated: the fields mcplite writes get their new values,
/// the fields it owns and does not write go, and the rest stay.
fn update_json_entry(existing: &mut Map<String, Value>, entry: &Map<String, Value>) {
    for (k, v) in entry {
        // An existing key keeps its position.
        existing.insert(k.clone(), v.clone());
    }
    for k in owned_keys() {
        if !entry.contains_key(k) {
            existing.shift_remove(k);
        }
    }
}

/// The document with only the entry's text changed: the entry replaced, or
/// added after the last server (the servers' object added after the last
/// setting when there is none), indented as its neighbours are; every other
/// byte stays, so duplicate keys and numbers beyond double precision too.
fn splice_json(body: &str, update: &Update<'_>, file: &str) -> Result<String, ConfigError> {
    let doc = mcplite_core::json::Doc::parse(body.as_bytes().to_vec())
        .map_err(|e| ConfigError::new(ErrorKind::Invalid, format!("{file} is not valid JSON: {e}.")))?;
    let fmt = JsonFormat::detect(body);
    let root = doc.root();
    let key = update.servers_key;
    let name = update.name;
    let (range, text) = match unique_member(root, key, || format!("{file} has the key `{key}`"))? {
        None => {
            let mut servers = Map::new();
            servers.insert(name.to_string(), Value::Object(update.entry.clone()));
            insert_member(body, root, key, &Value::Object(servers), &fmt)?
        }
        Some(servers) => match unique_member(servers, name, || format!("`{key}` in {file} has the server `{name}`"))? {
            None => insert_member(body, servers, name, &Value::Object(update.entry.clone()), &fmt)?,
            Some(old) if old.is_object() => {
                let indent = line_indent(body, old.span().start);
                (old.span(), updated_entry(body, old, update.entry, indent, &fmt)?)
            }
            Some(old) => {
                let indent = line_indent(body, old.span().start);
                (old.span(), fmt.value(&Value::Object(update.entry.clone()), indent)?)
            }
        },
    };
    apply_edits(body, vec![(range, text)])
        .ok_or_else(|| ConfigError::new(ErrorKind::Layout, format!("mcplite could not edit {file}.")))
}

/// The value of `key` in the object `obj`, refusing a key that is there twice:
/// clients differ in which one they read. `what` says where, for the message.
fn unique_member<'d>(
    obj: mcplite_core::json::Val<'d>,
    key: &str,
    what: impl Fn() -> String,
) -> Result<Option<mcplite_core::json::Val<'d>>, ConfigError> {
    let found: Vec<_> = obj.members().filter(|(k, _)| k.as_str() == Some(key)).map(|(_, v)| v).collect();
    if found.len() > 1 {
        return Err(ConfigError::new(
            ErrorKind::Layout,
            format!(
                "{} {} times; clients differ in which one they read, so mcplite does not choose. Remove \
                 all but one, or edit the file by hand.",
                what(),
                found.len()
            ),
        ));
    }
    Ok(found.into_iter().next())
}

/// The whitespace at the start of the line holding `at`.
fn line_indent(body: &str, at: usize) -> &str {
    let start = body[..at].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line = &body[start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The whitespace just before `at`.
fn whitespace_before(body: &str, at: usize) -> &str {
    let before = &body[..at];
    &before[before.trim_end_matches([' ', '\t', '\r', '\n']).len()..]
}

/// A new member `key: value` for the object `obj`: after its last member,
/// separated and indented as that one is, or as the only member of an empty
/// object. Returns the range to replace and its new text.
fn insert_member(
    body: &str,
    obj: mcplite_core::json::Val<'_>,
    key: &str,
    value: &Value,
    fmt: &JsonFormat,
) -> Result<(Range<usize>, String), ConfigError> {
    let key_text = json_text(&Value::String(key.to_string()))?;
    match obj.members().last() {
        Some((last_key, last_value)) => {
            let sep = whitespace_before(body, last_key.span().start);
            let colon = &body[last_key.span().end..last_value.span().start];
            let indent = sep.rsplit('\n').next().unwrap_or("");
            let at = last_value.span().end;
            let value = if sep.contains('\n') { fmt.value(value, indent)? } else { json_text(value)? };
            Ok((at..at, format!(",{sep}{key_text}{colon}{value}")))
        }
        None => {
            let span = obj.span();
            let text = match &fmt.indent {
                None => format!("{{{key_text}:{}}}", json_text(value)?),
                Some(unit) => {
                    let base = line_indent(body, span.start);
                    let inner = format!("{base}{unit}");
                    format!("{{{nl}{inner}{key_text}: {}{nl}{base}}}", fmt.value(value, &inner)?, nl = fmt.nl)
                }
            };
            Ok((span, text))
        }
    }
}

/// The text of an existing entry (the object `old`) updated: its other
/// fields keep their exact text and order.
fn updated_entry(
    body: &str,
    old: mcplite_core::json::Val<'_>,
    entry: &Map<String, Value>,
    indent: &str,
    fmt: &JsonFormat,
) -> Result<String, ConfigError> {
    let member_indent = match (&fmt.indent, old.members().next()) {
        (Some(_), Some((k, _))) if whitespace_before(body, k.span().start).contains('\n') => {
            whitespace_before(body, k.span().start).rsplit('\n').next().unwrap_or("").to_string()
        }
        (Some(unit), _) => format!("{indent}{unit}"),
        (None, _) => String::new(),
    };
    let mut members: Vec<(String, String)> = Vec::new();
    let mut written: Vec<&str> = Vec::new();
    for (k, v) in old.members() {
        let Some(name) = k.as_str() else { continue };
        match entry.get_key_value(name) {
            Some((name, value)) => {
                // A key written twice by hand: the new value once, where the first was.
                if !written.contains(&name.as_str()) {
                    written.push(name);
                    members.push((k.raw_str().to_string(), fmt.value(value, &member_indent)?));
                }
            }
            None if owned_keys().any(|o| o == name) => {}
            None => members.push((k.raw_str().to_string(), v.raw_str().to_string())),
        }
    }
    for (k, v) in entry {
        if !written.contains(&k.as_str()) {
            members.push((json_text(&Value::String(k.clone()))?, fmt.value(v, &member_indent)?));
        }
    }
    Ok(match &fmt.indent {
        None => {
            let parts: Vec<String> = members.iter().map(|(k, v)| format!("{k}:{v}")).collect();
            format!("{{{}}}", parts.join(","))
        }
        Some(_) => {
            let nl = fmt.nl;
            let parts: Vec<String> = members.iter().map(|(k, v)| format!("{nl}{member_indent}{k}: {v}")).collect();
            format!("{{{}{nl}{indent}}}", parts.join(","))
        }
    })
}

/// Compact JSON text of a value.
fn json_text(v: &Value) -> Result<String, ConfigError> {
    serde_json::to_string(v).map_err(|e| ConfigError::new(ErrorKind::Layout, format!("cannot write JSON: {e}")))
}

/// How new JSON text is laid out to match the file: one level of indentation
/// (`None`: all on one line) and the line break.
struct JsonFormat {
    indent: Option<String>,
    nl: &'static str,
}

impl JsonFormat {
    fn detect(body: &str) -> JsonFormat {
        let style = JsonStyle::detect(body);
        JsonFormat { indent: style.indent, nl: if style.crlf { "\r\n" } else { "\n" } }
    }

    /// A value whose first line starts on a line indented by `indent`.
    fn value(&self, v: &Value, indent: &str) -> Result<String, ConfigError> {
        let Some(unit) = &self.indent else { return json_text(v) };
        let mut buf = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
        serde::Serialize::serialize(v, &mut ser)
            .map_err(|e| ConfigError::new(ErrorKind::Layout, format!("cannot write JSON: {e}")))?;
        let text = String::from_utf8(buf)
            .map_err(|e| ConfigError::new(ErrorKind::Layout, format!("cannot write JSON: {e}")))?;
        // JSON strings hold no raw line breaks, so every one is layout.
        Ok(text.replace('\n', &format!("{}{indent}", self.nl)))
    }
}

/// How a JSON file was laid out: its indentation (`None`: all on one line),
/// line ending and whether it ended with one.
#[derive(Clone, Debug, PartialEq, Eq)]
struct JsonStyle {
    indent: Option<String>,
    crlf: bool,
    final_newline: bool,
}

impl JsonStyle {
    fn detect(body: &str) -> JsonStyle {
        if body.trim().is_empty() {
            return JsonStyle { indent: Some("  ".into()), crlf: false, final_newline: true };
        }
        let crlf = body.contains("\r\n");
        let final_newline = body.ends_with('\n');
        let content = body.trim_end();
        if !content.contains('\n') {
            return JsonStyle { indent: None, crlf, final_newline };
        }
        // The whitespace in front of the first line with content after the
        // first line break: one level of indentation.
        let mut indent = None;
        for line in content.split('\n').skip(1) {
            let line = line.trim_end_matches('\r');
            let text = line.trim_start_matches([' ', '\t']);
            if text.is_empty() {
                continue;
            }
            if !text.starts_with('}') && !text.starts_with(']') {
                indent = Some(line[..line.len() - text.len()].to_string());
            }
            break;
        }
        JsonStyle { indent: Some(indent.unwrap_or_else(|| "  ".into())), crlf, final_newline }
    }

    fn render(&self, v: &Value) -> Result<String, ConfigError> {
        let bytes = match &self.indent {
            None => serde_json::to_vec(v),
            Some(indent) => {
                let mut buf = Vec::new();
                let fmt = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
                let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
                serde::Serialize::serialize(v, &mut ser).map(|_| buf)
            }
        }
        .map_err(|e| ConfigError::new(ErrorKind::Layout, format!("cannot write JSON: {e}")))?;
        let mut out = String::from_utf8(bytes)
            .map_err(|e| ConfigError::new(ErrorKind::Layout, format!("cannot write JSON: {e}")))?;
        if self.final_newline {
            out.push('\n');
        }
        // JSON strings hold no raw line breaks, so every one is layout.
        if self.crlf {
            out = out.replace('\n', "\r\n");
        }
        Ok(out)
    }
}

/// Where JSON text that serde_json refused has a comment or a trailing comma
/// (JSONC, as VS Code writes it): what and the line, or `None`.
fn jsonc_feature(text: &str) -> Option<(&'static str, usize)> {
    let b = text.as_bytes();
    let mut line = 1;
    let mut i = 0;
    let mut in_string = false;
    // The line of a comma whose next token is still to come.
    let mut comma: Option<usize> = None;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
        }
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            b'/' if matches!(b.get(i + 1), Some(b'/') | Some(b'*')) => return Some(("comments", line)),
            b',' => comma = Some(line),
            b'}' | b']' => {
                if let Some(l) = comma {
                    return Some(("a trailing comma", l));
                }
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'"' => {
                in_string = true;
                comma = None;
            }
            _ => comma = None,
        }
        i += 1;
    }
    None
}

// ---------------------------------------------------------------------------
// TOML

fn toml_error(file: &str, text: &str, e: &toml_edit::TomlError) -> ConfigError {
    let at = e
        .span()
        .map(|s| {
            let before = &text.as_bytes()[..s.start.min(text.len())];
            let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
            let col = before.iter().rev().take_while(|&&c| c != b'\n').count() + 1;
            format!(" at line {line}, column {col}")
        })
        .unwrap_or_default();
    let message: Vec<&str> = e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    ConfigError::new(ErrorKind::Invalid, format!("{file} is not valid TOML{at}: {}.", message.join("; ")))
}

fn merge_toml(body: &str, update: &Update<'_>, file: &str) -> Result<Merged, ConfigError> {
    let doc = Document::parse(body).map_err(|e| toml_error(file, body, &e))?;
    let nl = if body.contains("\r\n") { "\r\n" } else { "\n" };
    let key = update.servers_key;
    let name = update.name;
    let servers = match doc.as_table().get(key) {
        None => None,
        Some(Item::Table(t)) => Some(t),
        Some(Item::Value(toml_edit::Value::InlineTable(_))) => {
            return Err(ConfigError::new(
                ErrorKind::Layout,
                format!(
                    "`{key}` in {file} is an inline table, which mcplite does not edit; write its servers \
                     as [{key}.<name>] tables, or add the entry by hand."
                ),
            ))
        }
        Some(_) => {
            return Err(ConfigError::new(ErrorKind::Invalid, format!("`{key}` in {file} must be a table.")));
        }
    };
    let header_path = format!("{}.{}", toml_key(key), toml_key(name));
    let (text, replaced) = match servers.and_then(|s| s.get(name)) {
        None => (append_entry(body, &header_path, update.entry, nl)?, false),
        Some(Item::Table(t)) if !t.is_implicit() && !t.is_dotted() && t.span().is_some() => {
            (edit_entry(body, t, &header_path, update.entry, nl, file, name)?, true)
        }
        Some(_) => {
            return Err(ConfigError::new(
                ErrorKind::Layout,
                format!(
                    "the entry `{key}.{name}` in {file} is not written as a [{header_path}] table, which \
                     mcplite does not edit; edit it by hand."
                ),
            ))
        }
    };
    verify_toml(&doc, &text, update, file)?;
    Ok(Merged { text, replaced })
}

/// A new entry, at the end of the file (where `codex mcp add` puts it).
fn append_entry(body: &str, header_path: &str, entry: &Map<String, Value>, nl: &str) -> Result<String, ConfigError> {
    let mut out = body.to_string();
    if !out.trim().is_empty() {
        if !out.ends_with('\n') {
            out.push_str(nl);
        }
        if !out.trim_end_matches([' ', '\t']).ends_with(&format!("{nl}{nl}")) {
            out.push_str(nl);
        }
    }
    let _ = write!(out, "[{header_path}]{nl}");
    for (k, v) in entry.iter().filter(|(_, v)| !v.is_object()) {
        let _ = write!(out, "{} = {}{nl}", toml_key(k), toml_value(v)?);
    }
    for (k, v) in entry {
        if let Value::Object(m) = v {
            if !m.is_empty() {
                let _ = write!(out, "{nl}[{header_path}.{}]{nl}", toml_key(k));
                for (kk, vv) in m {
                    let _ = write!(out, "{} = {}{nl}", toml_key(kk), toml_value(vv)?);
                }
            }
        }
    }
    Ok(out)
}

/// Where the text of a table's header and key/values ends (before the line
/// break and whatever comes after): inserting there keeps what follows.
fn table_content_end(t: &Table, header: &Range<usize>) -> usize {
    let mut end = header.end;
    if let Some(s) = t.decor().suffix().and_then(|s| s.span()) {
        end = end.max(s.end);
    }
    for (_, item) in t.iter() {
        if let Item::Value(v) = item {
            if let Some(s) = v.span() {
                end = end.max(s.end);
            }
            if let Some(s) = v.decor().suffix().and_then(|s| s.span()) {
                end = end.max(s.end);
            }
        }
    }
    end
}

/// The start of a table's header with the comments and blank lines above it.
fn table_block_start(t: &Table, header: &Range<usize>) -> usize {
    t.decor().prefix().and_then(|p| p.span()).map(|p| p.start).unwrap_or(header.start)
}

#[allow(clippy::too_many_arguments)]
fn edit_entry(
    body: &str,
    t: &Table,
    header_path: &str,
    entry: &Map<String, Value>,
    nl: &str,
    file: &str,
    name: &str,
) -> Result<String, ConfigError> {
    let layout = |what: &str| {
        ConfigError::new(
            ErrorKind::Layout,
            format!(
                "`{what}` of the entry `{name}` in {file} is written in a way mcplite does not edit; edit it by hand."
            ),
        )
    };
    let Some(header) = t.span() else { return Err(layout("the header")) };
    let header_line_end = t.decor().suffix().and_then(|s| s.span()).map(|s| s.end).unwrap_or(header.end);
    let content_end = table_content_end(t, &header);
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut new_keys = String::new();
    for (k, v) in entry.iter().filter(|(_, v)| !v.is_object()) {
        match t.get(k) {
            Some(Item::Value(old)) => {
                let Some(span) = old.span() else { return Err(layout(k)) };
                edits.push((span, toml_value(v)?));
            }
            None => {
                let _ = write!(new_keys, "{nl}{} = {}", toml_key(k), toml_value(v)?);
            }
            Some(_) => return Err(layout(k)),
        }
    }
    if !new_keys.is_empty() {
        edits.push((header_line_end..header_line_end, new_keys));
    }
    let empty = Map::new();
    // The entry's tables, and the keys it owns and does not write (removed).
    let mut tables: Vec<&str> = entry.iter().filter(|(_, v)| v.is_object()).map(|(k, _)| k.as_str()).collect();
    for k in owned_keys() {
        if !entry.contains_key(k) {
            tables.push(k);
        }
    }
    for k in tables {
        let m = entry.get(k).and_then(Value::as_object).unwrap_or(&empty);
        match t.get_key_value(k) {
            None => {
                if !m.is_empty() {
                    let mut s = String::new();
                    let _ = write!(s, "{nl}{nl}[{header_path}.{}]", toml_key(k));
                    for (kk, vv) in m {
                        let _ = write!(s, "{nl}{} = {}", toml_key(kk), toml_value(vv)?);
                    }
                    edits.push((content_end..content_end, s));
                }
            }
            Some((key, Item::Value(old))) => {
                if m.is_empty() {
                    // The whole `env = {...}` (`url = "..."`) line, with its line break.
                    let start = key.leaf_decor().prefix().and_then(|p| p.span()).map(|p| p.start);
                    let end = old.decor().suffix().and_then(|s| s.span()).map(|s| s.end).or(old.span().map(|s| s.end));
                    match (start.or(key.span().map(|s| s.start)), end) {
                        (Some(a), Some(b)) => edits.push((a..line_end(body, b), String::new())),
                        _ => return Err(layout(k)),
                    }
                } else if old.is_inline_table() {
                    let Some(span) = old.span() else { return Err(layout(k)) };
                    edits.push((span, toml_inline_table(m)?));
                } else {
                    return Err(layout(k));
                }
            }
            Some((_, Item::Table(sub))) if !sub.is_dotted() && !sub.is_implicit() && sub.span().is_some() => {
                let Some(sub_header) = sub.span() else { return Err(layout(k)) };
                let end = table_content_end(sub, &sub_header);
                if m.is_empty() {
                    edits.push((table_block_start(sub, &sub_header)..line_end(body, end), String::new()));
                } else {
                    let mut s = format!("[{header_path}.{}]", toml_key(k));
                    for (kk, vv) in m {
                        let _ = write!(s, "{nl}{} = {}", toml_key(kk), toml_value(vv)?);
                    }
                    edits.push((sub_header.start..end, s));
                }
            }
            Some(_) => return Err(layout(k)),
        }
    }
    apply_edits(body, edits).ok_or_else(|| layout("the entry"))
}

/// `at` moved past the line break there, if there is one (removing a line
/// removes its line break).
fn line_end(body: &str, at: usize) -> usize {
    let rest = body.get(at..).unwrap_or("");
    if rest.starts_with("\r\n") {
        at + 2
    } else if rest.starts_with('\n') {
        at + 1
    } else {
        at
    }
}

/// Apply non-overlapping replacements; `None` if any overlap or fall outside.
fn apply_edits(body: &str, mut edits: Vec<(Range<usize>, String)>) -> Option<String> {
    edits.sort_by_key(|(r, _)| (r.start, r.end));
    let mut out = String::with_capacity(body.len() + 256);
    let mut at = 0;
    for (r, s) in edits {
        if r.start < at || r.end > body.len() || r.start > r.end {
            return None;
        }
        out.push_str(body.get(at..r.start)?);
        out.push_str(&s);
        at = r.end;
    }
    out.push_str(body.get(at..)?);
    Some(out)
}

/// Parse the result again and compare it with the original: the entry must
/// read as intended, and everything else as before.
fn verify_toml(old: &Document<&str>, text: &str, update: &Update<'_>, file: &str) -> Result<(), ConfigError> {
    let failed = |why: String| {
        ConfigError::new(
            ErrorKind::Layout,
            format!(
                "mcplite could not add the entry to {file} without changing other settings ({why}); add it by hand."
            ),
        )
    };
    let new = Document::parse(text).map_err(|e| failed(e.message().lines().next().unwrap_or("").to_string()))?;
    let mut expected = plain_table(old.as_table());
    let servers = expected.entry(update.servers_key.to_string()).or_insert_with(|| Value::Object(Map::new()));
    let Some(servers) = servers.as_object_mut() else { return Err(failed("the servers table".into())) };
    let entry = servers.entry(update.name.to_string()).or_insert_with(|| Value::Object(Map::new()));
    let Some(entry) = entry.as_object_mut() else { return Err(failed("the entry".into())) };
    update_json_entry(entry, update.entry);
    for (k, v) in update.entry {
        if matches!(v, Value::Object(m) if m.is_empty()) {
            entry.shift_remove(k);
        }
    }
    if plain_table(new.as_table()) != expected {
        return Err(failed("the result reads differently".into()));
    }
    Ok(())
}

/// A TOML table as plain JSON values, for comparisons: floats and dates as
/// tagged strings so that every value compares exactly.
fn plain_table(t: &Table) -> Map<String, Value> {
    let mut m = Map::new();
    for (k, item) in t.iter() {
        if let Some(v) = plain_item(item) {
            m.insert(k.to_string(), v);
        }
    }
    m
}

fn plain_item(item: &Item) -> Option<Value> {
    match item {
        Item::None => None,
        Item::Value(v) => Some(plain_value(v)),
        Item::Table(t) => Some(Value::Object(plain_table(t))),
        Item::ArrayOfTables(a) => Some(Value::Array(a.iter().map(|t| Value::Object(plain_table(t))).collect())),
    }
}

fn plain_value(v: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match v {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => Value::String(format!("float:{:?}", f.value())),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(format!("datetime:{}", d.value())),
        T::Array(a) => Value::Array(a.iter().map(plain_value).collect()),
        T::InlineTable(t) => {
            Value::Object(t.iter().map(|(k, v)| (k.to_string(), plain_value(v))).collect::<Map<String, Value>>())
        }
    }
}

/// A key: bare when TOML allows it, else a basic string.
fn toml_key(k: &str) -> String {
    if !k.is_empty() && k.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_') {
        k.to_string()
    } else {
        toml_basic_string(k)
    }
}

/// A string: literal ('...') when it has backslashes (Windows paths) and
/// nothing a literal string cannot hold, else a basic string.
fn toml_string(s: &str) -> String {
    let literal_ok = !s.chars().any(|c| c == '\'' || c.is_control());
    if literal_ok && s.contains('\\') {
        format!("'{s}'")
    } else {
        toml_basic_string(s)
    }
}

fn toml_basic_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn toml_value(v: &Value) -> Result<String, ConfigError> {
    Ok(match v {
        Value::String(s) => toml_string(s),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) if f.is_finite() => {
                let s = format!("{f:?}");
                if s.contains(['.', 'e', 'E']) {
                    s
                } else {
                    format!("{s}.0")
                }
            }
            _ => return Err(ConfigError::new(ErrorKind::Layout, format!("TOML cannot hold the number {n}"))),
        },
        Value::Array(a) => {
            let items: Result<Vec<String>, ConfigError> = a.iter().map(toml_value).collect();
            format!("[{}]", items?.join(", "))
        }
        Value::Object(m) => toml_inline_table(m)?,
        Value::Null => return Err(ConfigError::new(ErrorKind::Layout, "TOML has no null".into())),
    })
}

fn toml_inline_table(m: &Map<String, Value>) -> Result<String, ConfigError> {
    if m.is_empty() {
        return Ok("{}".into());
    }
    let mut parts = Vec::with_capacity(m.len());
    for (k, v) in m {
        parts.push(format!("{} = {}", toml_key(k), toml_value(v)?));
    }
    Ok(format!("{{ {} }}", parts.join(", ")))
}

// ---------------------------------------------------------------------------
// Files

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The file written (a symbolic link is followed: its target).
    pub path: PathBuf,
    /// The copy of the previous file, when there was one.
    pub backup: Option<PathBuf>,
    pub replaced: bool,
}

/// The backup of `path`: the same name with `.bak` added.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(".bak");
    PathBuf::from(s)
}

const NOTHING_CHANGED: &str = "Nothing was changed.";

fn io_error(what: String, e: &std::io::Error) -> ConfigError {
    ConfigError::new(ErrorKind::Io, format!("{what}: {e}. {NOTHING_CHANGED}"))
}

/// How many times the file is read, merged and written again when another
/// program changes it meanwhile.
const ATTEMPTS: u32 = 3;

/// Test hook: with `MCPLITE_CONFIG_TEST_PAUSE=<prefix>`, every attempt, once
/// its new files are written and just before the original is checked and
/// replaced, creates `<prefix>.ready.<attempt>` and waits until
/// `<prefix>.go.<attempt>` exists: a barrier a test holds open while it
/// changes the original or another user tries to read the new files.
const TEST_PAUSE_VAR: &str = "MCPLITE_CONFIG_TEST_PAUSE";

/// Merge the entry into the file at `path` (created, with its directory, when
/// missing; a symbolic link is followed and kept). The new content and a copy
/// of the previous one go to new files in the same directory, created
/// exclusively with the original's mode, owner and group; just before they
/// replace `<file>.bak` and the file, each in one step, the file is checked
/// to be the one read (device, inode, size, modification time, content).
/// When another program has changed it, it is read and merged again, up to
/// [`ATTEMPTS`] times. A file with several hard links is refused (replacing
/// it would split them). On any error the file and its backup are as they
/// were, unless the error says otherwise.
pub fn write_entry(path: &Path, update: &Update<'_>) -> Result<Written, ConfigError> {
    let shown = path.display().to_string();
    let pause = std::env::var_os(TEST_PAUSE_VAR).filter(|p| !p.is_empty()).map(PathBuf::from);
    for attempt in 1..=ATTEMPTS {
        if let Some(written) = write_attempt(path, &shown, update, attempt, pause.as_deref())? {
            return Ok(written);
        }
    }
    Err(ConfigError::new(
        ErrorKind::Changed,
        format!(
            "{shown} changed while mcplite was writing it, {ATTEMPTS} times (another program, perhaps the \
             client, is saving it); close that program or try again. {NOTHING_CHANGED}"
        ),
    ))
}

/// The original file as read: its facts and bytes.
struct Original {
    facts: FileFacts,
    bytes: Vec<u8>,
}

/// One read, merge and replace; `None` when the file changed meanwhile.
fn write_attempt(
    path: &Path,
    shown: &str,
    update: &Update<'_>,
    attempt: u32,
    pause: Option<&Path>,
) -> Result<Option<Written>, ConfigError> {
    let (target, original) = read_original(path, shown)?;
    let text = match &original {
        None => String::new(),
        Some(o) => String::from_utf8(o.bytes.clone()).map_err(|_| {
            ConfigError::new(ErrorKind::Invalid, format!("{shown} is not UTF-8 text. {NOTHING_CHANGED}"))
        })?,
    };
    let merged = merge(&text, update, shown).map_err(|mut e| {
        e.message.push(' ');
        e.message.push_str(NOTHING_CHANGED);
        e
    })?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // Declared before the new files, so that they go first.
    let mut new_dirs = NewDirs(Vec::new());
    if original.is_none() {
        new_dirs.0 =
            dir.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).map(Path::to_path_buf).collect();
        fs::create_dir_all(&dir).map_err(|e| io_error(format!("cannot create the directory {}", dir.display()), &e))?;
    }
    let facts = original.as_ref().map(|o| &o.facts);
    let mut temps = TempFiles(Vec::new());
    let new_file = temps.write(&dir, &target, facts, merged.text.as_bytes(), &format!("cannot write {shown}"))?;
    let backup = match &original {
        Some(o) => {
            let bak = backup_path(&target);
            let doing = format!("cannot keep a backup of {shown} as {}", bak.display());
            Some((temps.write(&dir, &bak, facts, &o.bytes, &doing)?, bak))
        }
        None => None,
    };
    if let Some(prefix) = pause {
        test_pause(prefix, attempt);
    }
    if !unchanged(&target, original.as_ref()) {
        return Ok(None);
    }
    // The window between that check and the renames is left open: a program
    // that saves the file just now loses its change.
    if let Some((tmp, bak)) = &backup {
        fs::rename(tmp, bak)
            .map_err(|e| io_error(format!("cannot keep a backup of {shown} as {}", bak.display()), &e))?;
    }
    if let Err(e) = fs::rename(&new_file, &target) {
        let kept = match &backup {
            Some((_, bak)) => format!(" The previous file was copied to {}; {shown} is as it was.", bak.display()),
            None => format!(" {NOTHING_CHANGED}"),
        };
        return Err(ConfigError::new(ErrorKind::Io, format!("cannot replace {shown}: {e}.{kept}")));
    }
    temps.0.clear();
    new_dirs.0.clear();
    sync_dir(&dir);
    Ok(Some(Written { path: target, backup: backup.map(|(_, b)| b), replaced: merged.replaced }))
}

/// The file `path` names (a symbolic link followed) and, when it exists, what
/// it holds.
fn read_original(path: &Path, shown: &str) -> Result<(PathBuf, Option<Original>), ConfigError> {
    let cannot_read = |e: std::io::Error| io_error(format!("cannot read {shown}"), &e);
    match fs::symlink_metadata(path) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((path.to_path_buf(), None)),
        Err(e) => return Err(cannot_read(e)),
    }
    let real = fs::canonicalize(path).map_err(cannot_read)?;
    let mut file = fs::File::open(&real).map_err(cannot_read)?;
    let meta = file.metadata().map_err(cannot_read)?;
    if !meta.is_file() {
        return Err(ConfigError::new(ErrorKind::Io, format!("{shown} is not a file. {NOTHING_CHANGED}")));
    }
    if meta.permissions().readonly() {
        return Err(ConfigError::new(
            ErrorKind::Io,
            format!("{shown} is read-only; make it writable first. {NOTHING_CHANGED}"),
        ));
    }
    let facts = platform::file_facts(&meta);
    if facts.links > 1 {
        return Err(ConfigError::new(
            ErrorKind::Links,
            format!(
                "{shown} has {} hard links (names); replacing it would leave the other names with the old \
                 content. Edit it by hand, or make it a single file (or a symbolic link) first. {NOTHING_CHANGED}",
                facts.links
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(facts.size).unwrap_or(0));
    file.read_to_end(&mut bytes).map_err(cannot_read)?;
    Ok((real, Some(Original { facts, bytes })))
}

/// Whether `target` is still the file read (or still missing, when there was
/// none): same device, inode, size, modification time and content.
fn unchanged(target: &Path, original: Option<&Original>) -> bool {
    let Some(original) = original else {
        return matches!(fs::symlink_metadata(target), Err(e) if e.kind() == std::io::ErrorKind::NotFound);
    };
    let Ok(meta) = fs::symlink_metadata(target) else { return false };
    let now = platform::file_facts(&meta);
    let same = |f: &FileFacts| (f.device, f.inode, f.size, f.modified);
    if same(&now) != same(&original.facts) {
        return false;
    }
    matches!(fs::read(target), Ok(bytes) if bytes == original.bytes)
}

/// The directories an attempt created for a new file, deepest first; those
/// still listed are removed (when empty) when it ends, so that a failure
/// leaves nothing behind.
struct NewDirs(Vec<PathBuf>);

impl Drop for NewDirs {
    fn drop(&mut self) {
        for d in &self.0 {
            let _ = fs::remove_dir(d);
        }
    }
}

/// The new files of one attempt; those still listed are removed when it ends.
struct TempFiles(Vec<PathBuf>);

impl Drop for TempFiles {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = fs::remove_file(p);
        }
    }
}

impl TempFiles {
    /// A new file in `dir` holding `bytes`, named after `name`, with the mode,
    /// owner and group of `like`; written through to the disk. `doing` starts
    /// the error messages ("cannot write <file>").
    fn write(
        &mut self,
        dir: &Path,
        name: &Path,
        like: Option<&FileFacts>,
        bytes: &[u8],
        doing: &str,
    ) -> Result<PathBuf, ConfigError> {
        let stem = name.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "config".into());
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let mut last = None;
        for i in 0..100u32 {
            let tmp = dir.join(format!(".{stem}.mcplite-{}-{nanos}-{i}.tmp", std::process::id()));
            match platform::create_exclusive(&tmp, like) {
                Ok(mut file) => {
                    self.0.push(tmp.clone());
                    file.write_all(bytes).and_then(|_| file.sync_all()).map_err(|e| io_error(doing.to_string(), &e))?;
                    return Ok(tmp);
                }
                Err(CreateError::Create(e)) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(CreateError::Create(e)) => {
                    return Err(io_error(format!("{doing} (creating a file in {})", dir.display()), &e))
                }
                Err(CreateError::Owner(e)) => {
                    let (uid, gid) = like.and_then(|f| f.owner).unwrap_or((0, 0));
                    return Err(ConfigError::new(
                        ErrorKind::Owner,
                        format!(
                            "{doing} keeping its owner (user {uid}) and group ({gid}): {e}. Run R as that \
                             user. {NOTHING_CHANGED}"
                        ),
                    ));
                }
            }
        }
        let e = last.unwrap_or_else(|| std::io::Error::other("no temporary file name is free"));
        Err(io_error(format!("{doing} (creating a file in {})", dir.display()), &e))
    }
}

/// The test hook of [`TEST_PAUSE_VAR`].
fn test_pause(prefix: &Path, attempt: u32) {
    let with = |what: &str| {
        let mut s = prefix.as_os_str().to_os_string();
        s.push(format!(".{what}.{attempt}"));
        PathBuf::from(s)
    };
    let go = with("go");
    let _ = fs::write(with("ready"), attempt.to_string());
    while !go.exists() {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Make the rename durable (Unix; best effort).
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

// ---------------------------------------------------------------------------
// Default files

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Os {
    Linux,
    Macos,
    Windows,
}

impl Os {
    pub fn current() -> Os {
        if cfg!(windows) {
            Os::Windows
        } else if cfg!(target_os = "macos") {
            Os::Macos
        } else {
            Os::Linux
        }
    }
}

/// A client `mcp_config()` knows: how its configuration is written (`None`:
/// it keeps its servers in files of its own, written by its command) and the
/// key holding the servers. Its user-wide file is [`default_path`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Client {
    pub id: &'static str,
    pub format: Option<Format>,
    pub servers_key: Option<&'static str>,
}

/// Every client, in the order `mcp_config()` offers them.
pub const CLIENTS: [Client; 6] = [
    Client { id: "claude-desktop", format: Some(Format::Json), servers_key: Some("mcpServers") },
    Client { id: "claude-code", format: None, servers_key: None },
    Client { id: "vscode", format: Some(Format::Json), servers_key: Some("servers") },
    Client { id: "cursor", format: Some(Format::Json), servers_key: Some("mcpServers") },
    Client { id: "gemini", format: Some(Format::Json), servers_key: Some("mcpServers") },
    Client { id: "codex", format: Some(Format::Toml), servers_key: Some("mcp_servers") },
];

/// The environment variable that is `~` on `os`, as the clients read it.
fn home_var(os: Os) -> &'static str {
    if os == Os::Windows {
        "USERPROFILE"
    } else {
        "HOME"
    }
}

/// A path given to `mcp_config()` with `~` as the clients read it: `~` (and
/// `~/...`, `~\...`) is the home of [`default_path`], read now (not the home
/// R noted when it started). Other paths are returned as they are; `None`
/// when the variable is unset or empty.
pub fn expand_home(path: &str, os: Os, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let Some(rest) = path.strip_prefix('~').filter(|r| r.is_empty() || r.starts_with(['/', '\\'])) else {
        return Some(path.to_string());
    };
    let home = env(home_var(os)).filter(|v| !v.is_empty())?;
    Some(format!("{}{rest}", home.trim_end_matches(['/', '\\'])))
}

/// The file each client reads its user-wide servers from, on `os`, with the
/// environment `env` (unset and empty variables are `None`):
///
/// * claude-desktop: macOS `~/Library/Application Support/Claude/claude_desktop_config.json`,
///   Windows `%APPDATA%\Claude\claude_desktop_config.json` (the two places
///   Claude Code's `mcp add-from-claude-desktop` reads); Linux, which Claude
///   Desktop does not support, `$XDG_CONFIG_HOME/Claude/...` (`~/.config`).
/// * cursor: `~/.cursor/mcp.json`.
/// * vscode: the user `mcp.json`: `~/.config/Code/User` (or
///   `$XDG_CONFIG_HOME/Code/User`), `~/Library/Application Support/Code/User`,
///   `%APPDATA%\Code\User`.
/// * gemini: `~/.gemini/settings.json`, where `~` is `$GEMINI_CLI_HOME` when set.
/// * codex: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`.
///
/// `~` is `HOME`, on Windows `USERPROFILE`.
pub fn default_path(client: &str, os: Os, env: &dyn Fn(&str) -> Option<String>) -> Result<String, ConfigError> {
    let get = |k: &str| env(k).filter(|v| !v.is_empty());
    let sep = if os == Os::Windows { "\\" } else { "/" };
    let join = |base: String, parts: &[&str]| {
        let mut p = base.trim_end_matches(['/', '\\']).to_string();
        if p.is_empty() {
            p.push_str(sep);
        }
        for part in parts {
            if !p.ends_with(['/', '\\']) {
                p.push_str(sep);
            }
            p.push_str(part);
        }
        p
    };
    let missing = |var: &str| ConfigError::new(ErrorKind::Path, format!("the environment variable {var} is not set"));
    let home = || get(home_var(os)).ok_or_else(|| missing(home_var(os)));
    let xdg_config = || match get("XDG_CONFIG_HOME") {
        Some(x) => Ok(x),
        None => home().map(|h| join(h, &[".config"])),
    };
    let appdata = || get("APPDATA").ok_or_else(|| missing("APPDATA"));
    Ok(match (client, os) {
        ("claude-desktop", Os::Macos) => {
            join(home()?, &["Library", "Application Support", "Claude", "claude_desktop_config.json"])
        }
        ("claude-desktop", Os::Windows) => join(appdata()?, &["Claude", "claude_desktop_config.json"]),
        ("claude-desktop", Os::Linux) => join(xdg_config()?, &["Claude", "claude_desktop_config.json"]),
        ("cursor", _) => join(home()?, &[".cursor", "mcp.json"]),
        ("vscode", Os::Macos) => join(home()?, &["Library", "Application Support", "Code", "User", "mcp.json"]),
        ("vscode", Os::Windows) => join(appdata()?, &["Code", "User", "mcp.json"]),
        ("vscode", Os::Linux) => join(xdg_config()?, &["Code", "User", "mcp.json"]),
        ("gemini", _) => {
            let base = match get("GEMINI_CLI_HOME") {
                Some(h) => h,
                None => home()?,
            };
            join(base, &[".gemini", "settings.json"])
        }
        ("codex", _) => match get("CODEX_HOME") {
            Some(h) => join(h, &["config.toml"]),
            None => join(home()?, &[".codex", "config.toml"]),
        },
        _ => return Err(ConfigError::new(ErrorKind::Path, format!("no configuration file is known for {client}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn up<'a>(format: Format, key: &'a str, name: &'a str, e: &'a Map<String, Value>) -> Update<'a> {
        Update { format, servers_key: key, name, entry: e }
    }

    fn r_entry() -> Map<String, Value> {
        entry(json!({"command": "/usr/bin/Rscript", "args": ["--vanilla", "/srv/my tools/server.R"],
                     "env": {"R_LIBS": "/opt/R", "TOKEN": "a \"b\" = c"}}))
    }

    // ---- JSON

    #[test]
    fn json_new_file_is_two_space_indented() {
        let e = r_entry();
        let m = merge("", &up(Format::Json, "mcpServers", "r", &e), "f.json").unwrap();
        assert!(!m.replaced);
        assert!(m.text.starts_with("{\n  \"mcpServers\": {\n    \"r\": {\n      \"command\""));
        assert!(m.text.ends_with("}\n"));
        let v: Value = serde_json::from_str(&m.text).unwrap();
        assert_eq!(v["mcpServers"]["r"]["env"]["TOKEN"], "a \"b\" = c");
    }

    #[test]
    fn json_keeps_other_servers_settings_order_and_indentation() {
        let text = "{\n    \"theme\": \"dark\",\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"}\n    },\n    \"zoom\": 1.5\n}";
        let e = entry(json!({"command": "c", "args": ["a"]}));
        let m = merge(text, &up(Format::Json, "mcpServers", "r", &e), "f.json").unwrap();
        assert_eq!(
            m.text,
            "{\n    \"theme\": \"dark\",\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"},\n        \"r\": {\n            \"command\": \"c\",\n            \"args\": [\n                \"a\"\n            ]\n        }\n    },\n    \"zoom\": 1.5\n}"
        );
    }

    #[test]
    fn json_only_the_entry_changes_byte_for_byte() {
        // Duplicate keys, numbers beyond double precision, odd spacing and
        // escapes elsewhere in the file all stay as they were.
        let head = "{\n  \"a\": 1, \"a\": 2,\n  \"big\": 123456789012345678901234567890,\n  \"f\": 1.00000000000000000001e300,\n  \"s\": \"\\u00e9\\/\",\n  \"mcpServers\" :  {\n    \"x\": {\"command\": \"y\", \"n\": 12345678901234567890123},\n    \"r\": ";
        let tail = ",\n    \"z\":{ }\n  },\n  \"a\": 3\n}\n";
        let old_entry = "{\n      \"command\": \"old\",\n      \"timeout\": 99999999999999999999999,\n      \"env\": {\"A\": \"1\"},\n      \"httpUrl\": \"https://remote\"\n    }";
        let text = format!("{head}{old_entry}{tail}");
        let e = entry(json!({"command": "c", "args": ["a"]}));
        let m = merge(&text, &up(Format::Json, "mcpServers", "r", &e), "f").unwrap();
        assert!(m.replaced);
        assert_eq!(
            m.text,
            format!("{head}{{\n      \"command\": \"c\",\n      \"timeout\": 99999999999999999999999,\n      \"args\": [\n        \"a\"\n      ]\n    }}{tail}")
        );
        // A new entry goes after the last server, indented as it is.
        let m = merge(&text, &up(Format::Json, "mcpServers", "new", &e), "f").unwrap();
        assert!(!m.replaced);
        let added = ",\n    \"new\":{\n      \"command\": \"c\",\n      \"args\": [\n        \"a\"\n      ]\n    }";
        let at = text.find(",\n    \"z\"").unwrap() + ",\n    \"z\":{ }".len();
        assert_eq!(m.text, format!("{}{added}{}", &text[..at], &text[at..]));
        // A new servers object goes after the last setting.
        let m = merge(&text, &up(Format::Json, "servers", "r", &e), "f").unwrap();
        let at = text.rfind("\n}").unwrap();
        assert_eq!(
            m.text,
            format!("{},\n  \"servers\": {{\n    \"r\": {{\n      \"command\": \"c\",\n      \"args\": [\n        \"a\"\n      ]\n    }}\n  }}{}", &text[..at], &text[at..])
        );
    }

    /// Documents of many layouts, for the splice properties below.
    const JSON_LAYOUTS: &[&str] = &[
        "{}",
        "{ }",
        "{\n}\n",
        "{\"a\":1}",
        "{\"mcpServers\":{}}",
        "{\"mcpServers\": { }, \"n\": 1e999999999999999999}",
        "{\n  \"mcpServers\": {}\n}\n",
        "{\n    \"x\": [1, 2,\n        3],\n    \"mcpServers\": {\n        \"o\": {\"command\": \"c\"}\n    }\n}",
        "{\r\n\t\"mcpServers\": {\r\n\t\t\"o\": {\r\n\t\t\t\"command\": \"c\"\r\n\t\t}\r\n\t}\r\n}\r\n",
        "\u{feff}{ \"k\" : 123456789012345678901234567890 , \"k\" : 2 }",
        "{\n  \"mcpServers\" : {\n    \"a\" : {}\n  }\n}",
    ];

    /// `new` is `old` with one range replaced: the length of what `old` and
    /// `new` share at both ends covers all of `old` but `changed` bytes.
    fn differs_in_one_place(old: &str, new: &str, changed: usize) -> bool {
        let (a, b) = (old.as_bytes(), new.as_bytes());
        let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
        prefix + suffix + changed >= a.len()
    }

    proptest::proptest! {
        #[test]
        fn json_splice_changes_only_the_entry(
            layout in 0..JSON_LAYOUTS.len(), name in "\\PC{1,8}", command in "\\PC{0,12}", v in ".{0,12}",
        ) {
            let text = JSON_LAYOUTS[layout];
            if serde_json::from_str::<Value>(text.trim_start_matches('\u{feff}')).is_err() {
                // Numbers serde cannot read are refused (see the test of refusals).
                let e = entry(json!({"command": command}));
                proptest::prop_assert!(merge(text, &up(Format::Json, "mcpServers", &name, &e), "f").is_err());
                return Ok(());
            }
            let e = entry(json!({"command": command, "args": [v.clone()], "env": {"K": v}}));
            let m = merge(text, &up(Format::Json, "mcpServers", &name, &e), "f").unwrap();
            let had = serde_json::from_str::<Value>(text.trim_start_matches('\u{feff}')).unwrap()
                .get("mcpServers").and_then(|s| s.get(name.as_str())).is_some();
            proptest::prop_assert_eq!(m.replaced, had);
            if !had {
                // An insertion; into an empty object (`{ }`), that object is rewritten.
                proptest::prop_assert!(differs_in_one_place(text, &m.text, 3), "{} -> {}", text, m.text);
            }
            let v: Value = serde_json::from_str(m.text.trim_start_matches('\u{feff}')).unwrap();
            proptest::prop_assert_eq!(&v["mcpServers"][name.as_str()], &Value::Object(e.clone()));
            // Again: the entry is replaced where it is, and nothing moves.
            let again = merge(&m.text, &up(Format::Json, "mcpServers", &name, &e), "f").unwrap();
            proptest::prop_assert!(again.replaced);
            proptest::prop_assert_eq!(&again.text, &m.text);
            let other = entry(json!({"command": "other"}));
            let third = merge(&m.text, &up(Format::Json, "mcpServers", &name, &other), "f").unwrap();
            let entry_len = m.text.len() - text.len() + 64;
            proptest::prop_assert!(differs_in_one_place(&m.text, &third.text, entry_len));
        }
    }

    #[test]
    fn json_entry_or_servers_written_twice_is_refused() {
        let e = r_entry();
        let cases = [
            (
                "{\"mcpServers\": {\"r\": {}, \"r\": {\"command\": \"x\"}}}",
                "`mcpServers` in f has the server `r` 2 times",
            ),
            ("{\"mcpServers\": {}, \"mcpServers\": {}, \"mcpServers\": {}}", "f has the key `mcpServers` 3 times"),
        ];
        for (text, msg) in cases {
            let err = merge(text, &up(Format::Json, "mcpServers", "r", &e), "f").unwrap_err();
            assert_eq!(err.kind, ErrorKind::Layout);
            assert!(err.message.starts_with(msg), "{}", err.message);
        }
        // Another server written twice is no reason to refuse.
        let text = "{\"mcpServers\": {\"x\": {}, \"x\": {}}}";
        let m = merge(text, &up(Format::Json, "mcpServers", "r", &e), "f").unwrap();
        assert!(m.text.starts_with("{\"mcpServers\": {\"x\": {}, \"x\": {}, \"r\": {\"command\":"), "{}", m.text);
    }

    #[test]
    fn an_updated_entry_has_exactly_one_transport() {
        let e = entry(json!({"command": "c", "args": []}));
        for remote in [
            json!({"httpUrl": "https://h", "headers": {"Authorization": "x"}, "timeout": 5}),
            json!({"url": "https://h", "type": "http", "timeout": 5}),
            json!({"tcp": "h:1", "serverUrl": "https://h", "timeout": 5}),
        ] {
            let text = json!({"mcpServers": {"r": remote}}).to_string();
            let m = merge(&text, &up(Format::Json, "mcpServers", "r", &e), "f").unwrap();
            let v: Value = serde_json::from_str(&m.text).unwrap();
            assert_eq!(v["mcpServers"]["r"], json!({"timeout": 5, "command": "c", "args": []}), "{text}");
        }
        let text = "[mcp_servers.r]\nurl = \"https://h\"  # remote\nbearer_token_env_var = \"TOK\"\nstartup_timeout_sec = 5\n\n[mcp_servers.r.http_headers]\nX = \"y\"\n\n[other]\n";
        let m = merge(text, &up(Format::Toml, "mcp_servers", "r", &e), "f").unwrap();
        assert_eq!(m.text, "[mcp_servers.r]\ncommand = \"c\"\nargs = []\nstartup_timeout_sec = 5\n\n[other]\n");
    }

    #[test]
    fn json_tabs_crlf_bom_and_one_line_files() {
        let e = entry(json!({"command": "c", "args": []}));
        let tabs = "{\r\n\t\"servers\": {}\r\n}\r\n";
        let m = merge(tabs, &up(Format::Json, "servers", "r", &e), "f").unwrap();
        assert_eq!(m.text, "{\r\n\t\"servers\": {\r\n\t\t\"r\": {\r\n\t\t\t\"command\": \"c\",\r\n\t\t\t\"args\": []\r\n\t\t}\r\n\t}\r\n}\r\n");
        let m = merge("\u{feff}{\"a\":1}", &up(Format::Json, "servers", "r", &e), "f").unwrap();
        assert_eq!(m.text, "\u{feff}{\"a\":1,\"servers\":{\"r\":{\"command\":\"c\",\"args\":[]}}}");
        let m = merge("{\n}\n", &up(Format::Json, "servers", "r", &e), "f").unwrap();
        assert!(m.text.starts_with("{\n  \"servers\""));
    }

    #[test]
    fn json_updates_an_existing_entry_keeping_its_other_fields() {
        let text =
            r#"{"mcpServers": {"r": {"command": "old", "timeout": 30, "env": {"OLD": "1"}, "args": ["a"]}, "z": {}}}"#;
        let e = entry(json!({"command": "new", "args": ["b"]}));
        let m = merge(text, &up(Format::Json, "mcpServers", "r", &e), "f").unwrap();
        assert!(m.replaced);
        let v: Value = serde_json::from_str(&m.text).unwrap();
        assert_eq!(v["mcpServers"]["r"], json!({"command": "new", "timeout": 30, "args": ["b"]}));
        let order: Vec<&String> = v["mcpServers"]["r"].as_object().unwrap().keys().collect();
        assert_eq!(order, ["command", "timeout", "args"]);
        assert_eq!(v["mcpServers"].as_object().unwrap().keys().collect::<Vec<_>>(), ["r", "z"]);
    }

    #[test]
    fn json_with_comments_or_trailing_commas_is_refused() {
        let e = r_entry();
        for (text, what, line) in [
            ("{\n  // my servers\n  \"servers\": {}\n}", "comments", 2),
            ("{\n  \"servers\": {} /* x */\n}", "comments", 2),
            ("{\n  \"servers\": {\"a\": {\"args\": [1,2,],}},\n}", "a trailing comma", 2),
            ("{\"servers\": {},\n}", "a trailing comma", 1),
        ] {
            let err = merge(text, &up(Format::Json, "servers", "r", &e), "mcp.json").unwrap_err();
            assert_eq!(err.kind, ErrorKind::Jsonc, "{text}");
            assert!(err.message.contains(&format!("has {what} (line {line})")), "{}", err.message);
        }
        // Slashes and commas inside strings are not comments.
        let ok = "{\"a\": \"http://x, ]\", \"b\": \"\\\"//\"}";
        assert!(merge(ok, &up(Format::Json, "servers", "r", &e), "f").is_ok());
    }

    #[test]
    fn json_invalid_or_wrongly_shaped_files_are_refused() {
        let e = r_entry();
        let cases = [
            ("{\"a\": }", "f is not valid JSON: expected value at line 1 column 7."),
            ("[1]", "f must hold a JSON object, not an array."),
            ("{\"servers\": [1]}", "`servers` in f must be a JSON object, not an array."),
        ];
        for (text, msg) in cases {
            let err = merge(text, &up(Format::Json, "servers", "r", &e), "f").unwrap_err();
            assert_eq!(err.kind, ErrorKind::Invalid);
            assert_eq!(err.message, msg);
        }
    }

    // ---- TOML

    const CODEX: &str = "# Codex settings\nmodel = \"o3\" # the model\n\n[mcp_servers.other]\ncommand = \"x\"\nargs = [ \"-y\" ]   # keep this spacing\n\n# analytics\n[analytics]\nenabled = false\n";

    #[test]
    fn toml_new_entry_is_appended_and_everything_else_kept() {
        let e = r_entry();
        let m = merge(CODEX, &up(Format::Toml, "mcp_servers", "r-tools", &e), "config.toml").unwrap();
        assert!(!m.replaced);
        assert!(m.text.starts_with(CODEX));
        assert_eq!(
            &m.text[CODEX.len()..],
            "\n[mcp_servers.r-tools]\ncommand = \"/usr/bin/Rscript\"\nargs = [\"--vanilla\", \"/srv/my tools/server.R\"]\n\n[mcp_servers.r-tools.env]\nR_LIBS = \"/opt/R\"\nTOKEN = \"a \\\"b\\\" = c\"\n"
        );
    }

    #[test]
    fn toml_snippet_from_nothing() {
        let e = entry(json!({"command": "C:\\R\\bin\\Rscript.exe", "args": ["--vanilla", "it's.R"]}));
        let m = merge("", &up(Format::Toml, "mcp_servers", "my tools", &e), "f").unwrap();
        assert_eq!(
            m.text,
            "[mcp_servers.\"my tools\"]\ncommand = 'C:\\R\\bin\\Rscript.exe'\nargs = [\"--vanilla\", \"it's.R\"]\n"
        );
        let doc = Document::parse(m.text.as_str()).unwrap();
        assert_eq!(doc["mcp_servers"]["my tools"]["command"].as_str(), Some("C:\\R\\bin\\Rscript.exe"));
    }

    #[test]
    fn toml_strings_round_trip() {
        for s in ["plain", "a\"b", "back\\slash", "it's \\ both", "tab\tnew\nline\r", "\u{1}\u{7f}é✓", "'"] {
            let e = entry(json!({"command": s, "args": [s], "env": {s: s}}));
            let m = merge("", &up(Format::Toml, "mcp_servers", s, &e), "f").unwrap();
            let doc = Document::parse(m.text.as_str()).unwrap();
            let t = &doc["mcp_servers"][s];
            assert_eq!(t["command"].as_str(), Some(s), "{}", m.text);
            assert_eq!(t["args"].as_array().and_then(|a| a.get(0)).and_then(|v| v.as_str()), Some(s));
            assert_eq!(t["env"][s].as_str(), Some(s));
        }
    }

    #[test]
    fn toml_existing_entry_is_edited_in_place() {
        let text = "top = 1\n\n# my R server\n[mcp_servers.r]  # header comment\ncommand = \"old\"   # which R\nstartup_timeout_sec = 30\nargs = [\"x\"]\n\n[mcp_servers.r.env]\nOLD = \"1\"\n\n# next\n[later]\nk = \"v\"\n";
        let e = r_entry();
        let m = merge(text, &up(Format::Toml, "mcp_servers", "r", &e), "f").unwrap();
        assert!(m.replaced);
        assert_eq!(
            m.text,
            "top = 1\n\n# my R server\n[mcp_servers.r]  # header comment\ncommand = \"/usr/bin/Rscript\"   # which R\nstartup_timeout_sec = 30\nargs = [\"--vanilla\", \"/srv/my tools/server.R\"]\n\n[mcp_servers.r.env]\nR_LIBS = \"/opt/R\"\nTOKEN = \"a \\\"b\\\" = c\"\n\n# next\n[later]\nk = \"v\"\n"
        );
        // Without env this time: the env table goes, the rest stays.
        let e = entry(json!({"command": "c", "args": []}));
        let m = merge(text, &up(Format::Toml, "mcp_servers", "r", &e), "f").unwrap();
        assert_eq!(
            m.text,
            "top = 1\n\n# my R server\n[mcp_servers.r]  # header comment\ncommand = \"c\"   # which R\nstartup_timeout_sec = 30\nargs = []\n\n# next\n[later]\nk = \"v\"\n"
        );
    }

    #[test]
    fn toml_existing_entry_gains_missing_fields_and_env() {
        let text = "[mcp_servers.r]\nenabled = true\n[x]\n";
        let e = r_entry();
        let m = merge(text, &up(Format::Toml, "mcp_servers", "r", &e), "f").unwrap();
        assert_eq!(
            m.text,
            "[mcp_servers.r]\ncommand = \"/usr/bin/Rscript\"\nargs = [\"--vanilla\", \"/srv/my tools/server.R\"]\nenabled = true\n\n[mcp_servers.r.env]\nR_LIBS = \"/opt/R\"\nTOKEN = \"a \\\"b\\\" = c\"\n[x]\n"
        );
    }

    #[test]
    fn toml_inline_env_is_replaced_or_removed() {
        let text = "[mcp_servers.r]\ncommand = \"c\"\nenv = { A = \"1\" } # inline\nargs = []\r\n";
        let e = entry(json!({"command": "c", "args": [], "env": {"B": "2"}}));
        let m = merge(text, &up(Format::Toml, "mcp_servers", "r", &e), "f").unwrap();
        assert_eq!(m.text, "[mcp_servers.r]\ncommand = \"c\"\nenv = { B = \"2\" } # inline\nargs = []\r\n");
        let e = entry(json!({"command": "c", "args": []}));
        let m = merge(text, &up(Format::Toml, "mcp_servers", "r", &e), "f").unwrap();
        assert_eq!(m.text, "[mcp_servers.r]\ncommand = \"c\"\nargs = []\r\n");
    }

    #[test]
    fn toml_crlf_files_get_crlf() {
        let text = "a = 1\r\n";
        let e = entry(json!({"command": "c", "env": {"K": "v"}}));
        let m = merge(text, &up(Format::Toml, "mcp_servers", "r", &e), "f").unwrap();
        assert_eq!(
            m.text,
            "a = 1\r\n\r\n[mcp_servers.r]\r\ncommand = \"c\"\r\n\r\n[mcp_servers.r.env]\r\nK = \"v\"\r\n"
        );
    }

    #[test]
    fn toml_layouts_not_edited_and_invalid_files_are_refused() {
        let e = r_entry();
        let cases = [
            ("mcp_servers = { a = { command = \"x\" } }\n", ErrorKind::Layout, "is an inline table"),
            ("mcp_servers = 3\n", ErrorKind::Invalid, "`mcp_servers` in f must be a table."),
            (
                "[mcp_servers]\nr = { command = \"x\" }\n",
                ErrorKind::Layout,
                "is not written as a [mcp_servers.r] table",
            ),
            ("[mcp_servers.r.env]\nA = \"1\"\n", ErrorKind::Layout, "is not written as a [mcp_servers.r] table"),
            ("[mcp_servers.r]\ncommand = \"x\"\nenv.A = \"1\"\n", ErrorKind::Layout, "`env` of the entry `r`"),
            ("[mcp_servers.r]\ncommand.x = 1\n", ErrorKind::Layout, "`command` of the entry `r`"),
            ("a = \n", ErrorKind::Invalid, "f is not valid TOML at line 1, column"),
            ("[a]\n[a]\n", ErrorKind::Invalid, "f is not valid TOML at line 2"),
        ];
        for (text, kind, msg) in cases {
            let err = merge(text, &up(Format::Toml, "mcp_servers", "r", &e), "f").unwrap_err();
            assert_eq!(err.kind, kind, "{text}: {}", err.message);
            assert!(err.message.contains(msg), "{text}: {}", err.message);
        }
    }

    #[test]
    fn toml_dotted_servers_table_still_verifies() {
        // Root-level dotted keys define mcp_servers; appending a table header
        // for a new server is valid TOML and the check confirms it.
        let text = "mcp_servers.a.command = \"x\"\n";
        let e = entry(json!({"command": "c"}));
        let m = merge(text, &up(Format::Toml, "mcp_servers", "r", &e), "f").unwrap();
        let doc = Document::parse(m.text.as_str()).unwrap();
        assert_eq!(doc["mcp_servers"]["a"]["command"].as_str(), Some("x"));
        assert_eq!(doc["mcp_servers"]["r"]["command"].as_str(), Some("c"));
    }

    proptest::proptest! {
        #[test]
        fn toml_any_strings_round_trip_and_keep_the_rest(
            name in "\\PC{1,12}", command in "\\PC{0,20}", arg in ".{0,20}", k in "\\PC{1,8}", v in ".{0,20}",
        ) {
            let e = entry(json!({"command": command, "args": [arg, "x"], "env": {k.clone(): v}}));
            let m = merge(CODEX, &up(Format::Toml, "mcp_servers", &name, &e), "f").unwrap();
            proptest::prop_assert!(m.text.starts_with(CODEX));
            let doc = Document::parse(m.text.as_str()).unwrap();
            let t = &doc["mcp_servers"][name.as_str()];
            proptest::prop_assert_eq!(t["command"].as_str(), Some(command.as_str()));
            proptest::prop_assert_eq!(t["args"].as_array().and_then(|a| a.get(0)).and_then(|x| x.as_str()), Some(arg.as_str()));
            proptest::prop_assert_eq!(t["env"][k.as_str()].as_str(), Some(v.as_str()));
            // Updating it again (now in place) gives the same values.
            let again = merge(&m.text, &up(Format::Toml, "mcp_servers", &name, &e), "f").unwrap();
            proptest::prop_assert!(again.replaced);
            proptest::prop_assert_eq!(again.text, m.text);
        }
    }

    #[test]
    fn apply_edits_refuses_overlaps() {
        assert_eq!(apply_edits("abcdef", vec![(1..2, "X".into()), (4..4, "Y".into())]).as_deref(), Some("aXcdYef"));
        assert_eq!(apply_edits("abc", vec![(0..2, "X".into()), (1..3, "Y".into())]), None);
        assert_eq!(apply_edits("abc", vec![(2..9, "X".into())]), None);
    }

    // ---- files

    fn tempdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mcplite-config-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn write_creates_then_updates_with_a_backup() {
        let dir = tempdir("write");
        let path = dir.join("sub").join("settings.json");
        let e = r_entry();
        let u = up(Format::Json, "mcpServers", "r", &e);
        let w = write_entry(&path, &u).unwrap();
        assert_eq!(w.backup, None);
        assert!(!w.replaced);
        let first = fs::read_to_string(&path).unwrap();
        let w = write_entry(&path, &u).unwrap();
        assert!(w.replaced);
        assert_eq!(w.backup.as_deref(), Some(backup_path(&w.path).as_path()));
        assert_eq!(fs::read_to_string(backup_path(&path)).unwrap(), first);
        // No temporary files are left behind.
        let names: Vec<String> = fs::read_dir(dir.join("sub"))
            .unwrap()
            .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn write_refuses_invalid_and_read_only_files_and_changes_nothing() {
        let dir = tempdir("refuse");
        let e = r_entry();
        let bad = dir.join("config.toml");
        fs::write(&bad, "model = \n").unwrap();
        let err = write_entry(&bad, &up(Format::Toml, "mcp_servers", "r", &e)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Invalid);
        assert!(err.message.ends_with("Nothing was changed."), "{}", err.message);
        assert_eq!(fs::read_to_string(&bad).unwrap(), "model = \n");
        let ro = dir.join("ro.json");
        fs::write(&ro, "{}").unwrap();
        let mut perms = fs::metadata(&ro).unwrap().permissions();
        perms.set_readonly(true);
        fs::set_permissions(&ro, perms).unwrap();
        let err = write_entry(&ro, &up(Format::Json, "mcpServers", "r", &e)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Io);
        assert!(err.message.contains("is read-only"), "{}", err.message);
        assert_eq!(fs::read_to_string(&ro).unwrap(), "{}");
        assert!(!backup_path(&ro).exists());
        let err = write_entry(&dir, &up(Format::Json, "mcpServers", "r", &e)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Io);
        let mut perms = fs::metadata(&ro).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        let _ = fs::set_permissions(&ro, perms);
        let _ = fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn write_keeps_the_mode_and_follows_symlinks() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempdir("mode");
        let real = dir.join("real.toml");
        fs::write(&real, "a = 1\n").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.join("link.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let e = entry(json!({"command": "c"}));
        let w = write_entry(&link, &up(Format::Toml, "mcp_servers", "r", &e)).unwrap();
        assert_eq!(w.path, fs::canonicalize(&real).unwrap());
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(fs::read_to_string(&real).unwrap().contains("[mcp_servers.r]"));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_refused_new_file_creates_no_directory() {
        // (A failure after the directories are made removes them: the
        // full-disk test in tests/testthat/test-config-safety.R.)
        let dir = tempdir("newdir");
        let path = dir.join("a").join("b").join("mcp.json");
        let e = entry(json!({"command": "c", "n": null}));
        let err = write_entry(&dir.join("a").join("b").join("config.toml"), &up(Format::Toml, "mcp_servers", "r", &e))
            .unwrap_err();
        assert!(err.message.ends_with("Nothing was changed."), "{}", err.message);
        assert!(!dir.join("a").exists());
        let e = r_entry();
        write_entry(&path, &up(Format::Json, "servers", "r", &e)).unwrap();
        assert!(path.exists());
        let _ = fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn write_never_follows_a_backup_link_and_refuses_hard_links() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempdir("links");
        let path = dir.join("mcp.json");
        fs::write(&path, "{}\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        let victim = dir.join("victim");
        fs::write(&victim, "keep\n").unwrap();
        let e = r_entry();
        let u = up(Format::Json, "servers", "r", &e);
        for link_to in [victim.clone(), dir.join("missing")] {
            let _ = fs::remove_file(backup_path(&path));
            std::os::unix::fs::symlink(&link_to, backup_path(&path)).unwrap();
            let before = fs::read(&path).unwrap();
            write_entry(&path, &u).unwrap();
            let bak = fs::symlink_metadata(backup_path(&path)).unwrap();
            assert!(bak.file_type().is_file());
            assert_eq!(bak.permissions().mode() & 0o777, 0o640);
            assert_eq!(fs::read(backup_path(&path)).unwrap(), before);
            assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
        }
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep\n");
        assert!(!dir.join("missing").exists());
        let twin = dir.join("twin.json");
        fs::hard_link(&path, &twin).unwrap();
        let before = fs::read(&path).unwrap();
        let err = write_entry(&path, &u).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Links);
        assert!(err.message.contains("has 2 hard links"), "{}", err.message);
        assert_eq!(fs::read(&path).unwrap(), before);
        let _ = fs::remove_dir_all(&dir);
    }

    // ---- default files

    #[test]
    fn default_paths_per_os() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        let unix = env(&[("HOME", "/home/u")]);
        let xdg = env(&[
            ("HOME", "/home/u"),
            ("XDG_CONFIG_HOME", "/cfg/"),
            ("CODEX_HOME", "/ch"),
            ("GEMINI_CLI_HOME", "/gh"),
        ]);
        let win =
            env(&[("USERPROFILE", "C:\\Users\\u"), ("APPDATA", "C:\\Users\\u\\AppData\\Roaming"), ("HOME", "ignored")]);
        type Env<'a> = &'a dyn Fn(&str) -> Option<String>;
        let cases: [(&str, Os, Env<'_>, &str); 16] = [
            ("claude-desktop", Os::Linux, &unix, "/home/u/.config/Claude/claude_desktop_config.json"),
            ("claude-desktop", Os::Linux, &xdg, "/cfg/Claude/claude_desktop_config.json"),
            (
                "claude-desktop",
                Os::Macos,
                &unix,
                "/home/u/Library/Application Support/Claude/claude_desktop_config.json",
            ),
            ("claude-desktop", Os::Windows, &win, "C:\\Users\\u\\AppData\\Roaming\\Claude\\claude_desktop_config.json"),
            ("cursor", Os::Linux, &unix, "/home/u/.cursor/mcp.json"),
            ("cursor", Os::Windows, &win, "C:\\Users\\u\\.cursor\\mcp.json"),
            ("vscode", Os::Linux, &unix, "/home/u/.config/Code/User/mcp.json"),
            ("vscode", Os::Linux, &xdg, "/cfg/Code/User/mcp.json"),
            ("vscode", Os::Macos, &unix, "/home/u/Library/Application Support/Code/User/mcp.json"),
            ("vscode", Os::Windows, &win, "C:\\Users\\u\\AppData\\Roaming\\Code\\User\\mcp.json"),
            ("gemini", Os::Linux, &unix, "/home/u/.gemini/settings.json"),
            ("gemini", Os::Macos, &xdg, "/gh/.gemini/settings.json"),
            ("gemini", Os::Windows, &win, "C:\\Users\\u\\.gemini\\settings.json"),
            ("codex", Os::Linux, &unix, "/home/u/.codex/config.toml"),
            ("codex", Os::Linux, &xdg, "/ch/config.toml"),
            ("codex", Os::Windows, &win, "C:\\Users\\u\\.codex\\config.toml"),
        ];
        for (client, os, env, want) in cases {
            assert_eq!(default_path(client, os, env).unwrap(), want, "{client} {os:?}");
        }
        let none = |_: &str| None;
        let err = default_path("codex", Os::Linux, &none).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Path);
        assert!(err.message.contains("HOME is not set"));
        let err = default_path("vscode", Os::Windows, &env(&[("USERPROFILE", "C:\\u")])).unwrap_err();
        assert!(err.message.contains("APPDATA is not set"));
        assert!(default_path("claude-code", Os::Linux, &unix).is_err());
        // Every client that has a file has a default one.
        for c in CLIENTS {
            assert_eq!(default_path(c.id, Os::Linux, &unix).is_ok(), c.servers_key.is_some(), "{}", c.id);
            assert_eq!(c.format.is_some(), c.servers_key.is_some(), "{}", c.id);
        }
    }

    #[test]
    fn a_given_path_has_the_same_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        let unix = env(&[("HOME", "/home/u/"), ("USERPROFILE", "ignored")]);
        let win = env(&[("USERPROFILE", "C:\\Users\\u"), ("HOME", "ignored")]);
        type Env<'a> = &'a dyn Fn(&str) -> Option<String>;
        let cases: [(&str, Os, Env<'_>, &str); 8] = [
            ("~", Os::Linux, &unix, "/home/u"),
            ("~/x/mcp.json", Os::Macos, &unix, "/home/u/x/mcp.json"),
            ("~\\x.json", Os::Linux, &unix, "/home/u\\x.json"),
            ("~/x.json", Os::Windows, &win, "C:\\Users\\u/x.json"),
            ("~user/x.json", Os::Linux, &unix, "~user/x.json"),
            ("x/~/y", Os::Linux, &unix, "x/~/y"),
            ("/abs/x.json", Os::Linux, &unix, "/abs/x.json"),
            ("", Os::Linux, &unix, ""),
        ];
        for (path, os, env, want) in cases {
            assert_eq!(expand_home(path, os, env).as_deref(), Some(want), "{path} {os:?}");
        }
        let none = |_: &str| None;
        assert_eq!(expand_home("~/x", Os::Linux, &none), None);
        assert_eq!(expand_home("x", Os::Linux, &none).as_deref(), Some("x"));
        assert_eq!(expand_home("~/x", Os::Linux, &env(&[("HOME", "")])), None);
    }
}
