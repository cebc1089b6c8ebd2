//! The R side of `ToolHost`: runs tool closures through the R-level invoker
//! and reads what they return into the core's result types.

use crate::platform::flush_c_streams;
use crate::rvalue::{char_utf8, inherits, list_elt, robj_to_value};
use extendr_api::prelude::*;
use extendr_ffi as ffi;
use mcplite_core::result::{CallResult, Content, ContentKind, StructuredJson, ToolDef};
use mcplite_core::ToolHost;
use serde_json::{Map, Value};

/// Formal argument names of one tool, for exact (never partial) matching.
pub struct Formals {
    /// All formals except `...`.
    names: Vec<String>,
    /// Formals before `...`, which R would match partially.
    before_dots: Vec<String>,
    has_dots: bool,
    /// Primitives have no formals to check.
    known: bool,
}

impl Formals {
    pub fn of(fun: &Robj) -> Self {
        let formals = fun.as_function().and_then(|f| f.formals());
        let Some(formals) = formals else {
            return Formals { names: vec![], before_dots: vec![], has_dots: false, known: false };
        };
        let all: Vec<String> = formals.names().map(str::to_string).collect();
        let dots = all.iter().position(|n| n == "...");
        Formals {
            before_dots: dots.map(|d| all[..d].to_vec()).unwrap_or_default(),
            has_dots: dots.is_some(),
            names: all.into_iter().filter(|n| n != "...").collect(),
            known: true,
        }
    }

    /// An argument name R would not bind exactly, if any.
    fn inexact<'a>(&self, args: &'a Map<String, Value>) -> Option<&'a str> {
        if !self.known {
            return None;
        }
        args.keys().map(String::as_str).find(|k| {
            if self.names.iter().any(|n| n == k) {
                return false;
            }
            !self.has_dots || k.is_empty() || self.before_dots.iter().any(|n| n.starts_with(k))
        })
    }
}

pub struct RHost {
    pub funs: Vec<Robj>,
    pub formals: Vec<Formals>,
    /// `mcplite:::invoke_tool(fun, args, name)`.
    pub invoker: Function,
    /// Payload options, read once when the server starts.
    pub json_opts: crate::rjson::JsonOptions,
}

/// A contained tool failure: the client gets the message as a tool error and
/// the author gets one line on stderr.
fn failure(tool: &ToolDef, message: String) -> CallResult {
    let first = message.lines().next().unwrap_or("");
    let more = if message.lines().nth(1).is_some() { " ..." } else { "" };
    eprintln!("mcplite: tool {} failed: {first}{more}", tool.name);
    CallResult::tool_error(message)
}

impl ToolHost for RHost {
    fn call_tool(&mut self, index: usize, tool: &ToolDef, arguments: Map<String, Value>) -> CallResult {
        if let Some(bad) = self.formals[index].inexact(&arguments) {
            return failure(tool, format!("Tool {} has no argument named '{bad}'.", tool.name));
        }
        let args = crate::rvalue::object_to_robj(&arguments);
        let call = self.invoker.call(pairlist!(self.funs[index].clone(), args, tool.name.as_str()));
        flush_c_streams();
        let outcome = match call {
            Ok(v) => v,
            Err(_) => return failure(tool, format!("Tool {} was interrupted or aborted.", tool.name)),
        };
        // The invoker returns list(ok, value) or list(ok = FALSE, message).
        let ok = list_elt(&outcome, "ok").and_then(|o| o.as_bool()).unwrap_or(false);
        if !ok {
            let msg = list_elt(&outcome, "message").and_then(|m| m.as_str().map(str::to_string));
            return failure(tool, msg.unwrap_or_else(|| format!("Tool {} failed.", tool.name)));
        }
        let value = list_elt(&outcome, "value").unwrap_or_else(|| ().into());
        let converted = if inherits(unsafe { value.get() }, c"mcplite_tool_result") {
            read_tool_result(&value)
        } else {
            ordinary_result(&value, &self.json_opts)
        };
        converted.unwrap_or_else(|e| failure(tool, format!("Tool {} returned a value that cannot be sent: {e}", tool.name)))
    }
}

/// Ordinary return values become one text block.
fn ordinary_result(x: &Robj, opts: &crate::rjson::JsonOptions) -> std::result::Result<CallResult, String> {
    let sexp = unsafe { x.get() };
    let t = unsafe { ffi::TYPEOF(sexp) };
    let text = match t {
        ffi::SEXPTYPE::STRSXP => {
            let n = unsafe { ffi::Rf_xlength(sexp) } as usize;
            let parts: Vec<String> = (0..n)
                .map(|i| char_utf8(unsafe { ffi::STRING_ELT(sexp, i as ffi::R_xlen_t) }).unwrap_or_else(|| "NA".into()))
                .collect();
            parts.join("\n")
        }
        ffi::SEXPTYPE::NILSXP => "{}".to_string(),
        ffi::SEXPTYPE::VECSXP if x.len() == 0 && x.names().is_none() => "[]".to_string(),
        _ => crate::rjson::payload_json(x, opts)?,
    };
    Ok(CallResult::text(text))
}

fn field(x: &Robj, name: &str) -> Option<Robj> {
    list_elt(x, name).filter(|v| !v.is_null())
}

fn string_field(x: &Robj, name: &str) -> Option<String> {
    field(x, name).and_then(|v| v.as_str().map(str::to_string))
}

fn object_field(x: &Robj, name: &str) -> std::result::Result<Option<Map<String, Value>>, String> {
    match field(x, name) {
        None => Ok(None),
        Some(v) => match robj_to_value(&v)? {
            Value::Object(m) if m.is_empty() => Ok(None),
            Value::Object(m) => Ok(Some(m)),
            Value::Array(a) if a.is_empty() => Ok(None),
            _ => Err(format!("{name} must be a named list")),
        },
    }
}

fn annotations(block: &Robj) -> std::result::Result<Option<Value>, String> {
    let Some(ann) = field(block, "annotations") else { return Ok(None) };
    let mut out = Map::new();
    if let Some(a) = field(&ann, "audience") {
        let list: Vec<Value> = a.as_str_iter().map(|it| it.map(Value::from).collect()).unwrap_or_default();
        out.insert("audience".into(), Value::Array(list));
    }
    if let Some(p) = field(&ann, "priority") {
        out.insert("priority".into(), robj_to_value(&p)?);
    }
    if let Some(m) = string_field(&ann, "last_modified") {
        out.insert("lastModified".into(), Value::from(m));
    }
    Ok((!out.is_empty()).then_some(Value::Object(out)))
}

fn read_block(block: &Robj) -> std::result::Result<Content, String> {
    let type_name = string_field(block, "type").ok_or("a content block has no type")?;
    let kind = ContentKind::from_wire_type(&type_name).ok_or_else(|| format!("unknown content type {type_name}"))?;
    let mut body = Map::new();
    body.insert("type".into(), Value::from(type_name));
    let put = |key: &str, field_name: &str, body: &mut Map<String, Value>| {
        if let Some(v) = field(block, field_name) {
            body.insert(key.into(), robj_to_value(&v)?);
        }
        Ok::<(), String>(())
    };
    match kind {
        ContentKind::Text => put("text", "text", &mut body)?,
        ContentKind::Image | ContentKind::Audio => {
            put("data", "data", &mut body)?;
            put("mimeType", "mime_type", &mut body)?;
        }
        ContentKind::ResourceLink => {
            for (key, name) in
                [("uri", "uri"), ("name", "name"), ("title", "title"), ("description", "description"), ("mimeType", "mime_type"), ("size", "size")]
            {
                put(key, name, &mut body)?;
            }
        }
        ContentKind::Resource => {
            let mut res = Map::new();
            for (key, name) in [("uri", "uri"), ("mimeType", "mime_type"), ("text", "text"), ("blob", "blob")] {
                put(key, name, &mut res)?;
            }
            body.insert("resource".into(), Value::Object(res));
        }
    }
    if let Some(a) = annotations(block)? {
        body.insert("annotations".into(), a);
    }
    if let Some(m) = object_field(block, "meta")? {
        body.insert("_meta".into(), Value::Object(m));
    }
    Ok(Content { kind, body })
}

fn read_tool_result(x: &Robj) -> std::result::Result<CallResult, String> {
    let mut content = Vec::new();
    if let Some(blocks) = field(x, "content") {
        let list = blocks.as_list().ok_or("content must be a list of content blocks")?;
        for block in list.values() {
            content.push(read_block(&block)?);
        }
    }
    let structured = string_field(x, "structured_json").map(|json| StructuredJson { json });
    let is_error = field(x, "is_error").and_then(|v| v.as_bool()).unwrap_or(false);
    let meta = object_field(x, "meta")?;
    Ok(CallResult { content, structured, is_error, meta })
}
