//! `rust_serve()`: turn the R tool specs into core tool definitions and serve
//! stdin/stdout until end of input.

use crate::host::{Formals, RHost};
use crate::platform::StdioGuard;
use crate::rvalue::{list_elt, robj_to_value};
use extendr_api::prelude::*;
use mcplite_core::result::ToolDef;
use mcplite_core::{serve, Server, ServerInfo};
use serde_json::Value;
use std::io::BufReader;

fn opt_string(spec: &Robj, name: &str) -> std::result::Result<Option<String>, String> {
    match list_elt(spec, name) {
        Some(v) if !v.is_null() => v.as_str().map(|s| Some(s.to_string())).ok_or_else(|| format!("{name} must be a string")),
        _ => Ok(None),
    }
}

fn opt_json(spec: &Robj, name: &str) -> std::result::Result<Option<Value>, String> {
    match list_elt(spec, name) {
        Some(v) if !v.is_null() => robj_to_value(&v).map(Some).map_err(|e| format!("{name}: {e}")),
        _ => Ok(None),
    }
}

fn opt_object(spec: &Robj, name: &str) -> std::result::Result<Option<serde_json::Map<String, Value>>, String> {
    match opt_json(spec, name)? {
        None => Ok(None),
        Some(Value::Object(m)) if m.is_empty() => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(Value::Array(a)) if a.is_empty() => Ok(None),
        Some(_) => Err(format!("{name} must be a named list")),
    }
}

fn tool_def(spec: &Robj) -> std::result::Result<ToolDef, String> {
    let name = opt_string(spec, "name")?.ok_or("a tool spec has no name")?;
    let input_schema = match opt_json(spec, "input_schema")? {
        Some(Value::Object(m)) => m,
        _ => return Err(format!("tool {name}: input_schema must be a named list")),
    };
    Ok(ToolDef {
        description: opt_string(spec, "description")?,
        title: opt_string(spec, "title")?,
        input_schema,
        output_schema: opt_json(spec, "output_schema")?,
        annotations: opt_object(spec, "annotations")?,
        meta: opt_object(spec, "meta")?,
        name,
    })
}

/// `on_start(tracing)` is called once the configuration is read, before any
/// input: R uses it to offer otel its tracer provider when tracing is on.
pub fn run(
    specs: List,
    instructions: Robj,
    json_opts: Robj,
    invoker: Robj,
    info: Robj,
    on_start: Robj,
) -> std::result::Result<(), String> {
    let mut defs = Vec::with_capacity(specs.len());
    let mut funs = Vec::with_capacity(specs.len());
    let mut formals = Vec::with_capacity(specs.len());
    for spec in specs.values() {
        let def = tool_def(&spec)?;
        let fun = list_elt(&spec, "fun").ok_or_else(|| format!("tool {}: no function", def.name))?;
        if !fun.is_function() {
            return Err(format!("tool {}: fun must be a function", def.name));
        }
        formals.push(Formals::of(&fun));
        funs.push(fun);
        defs.push(def);
    }
    let instructions = if instructions.is_null() { None } else { instructions.as_str().map(str::to_string) };
    let info = ServerInfo {
        name: opt_string(&info, "name")?.unwrap_or_else(|| "mcplite".into()),
        version: opt_string(&info, "version")?.unwrap_or_else(|| "0.0.0".into()),
    };
    let invoker = invoker.as_function().ok_or("invoker must be a function")?;
    let mut server = Server::new(defs, instructions, info)?;
    let json_opts = crate::rjson::json_options(&json_opts).map_err(|e| format!("payload options: {e}"))?;
    let mut host = RHost { funs, formals, invoker, json_opts };
    let mut telemetry = mcplite_core::telemetry::Telemetry::from_env();
    if let Some(hook) = on_start.as_function() {
        hook.call(pairlist!(telemetry.is_enabled())).map_err(|_| "the start hook failed".to_string())?;
    }
    crate::otel::set_tracer(telemetry.tracer().cloned());
    let mut guard = StdioGuard::install()
        .map_err(|e| format!("cannot redirect standard input and output: {e}"))?;
    let input = guard
        .take_input()
        .ok_or("standard input is already taken")?;
    let input = BufReader::with_capacity(1 << 16, input);
    let result = serve(input, guard.output(), &mut server, &mut host, &mut telemetry);
    crate::otel::set_tracer(None);
    telemetry.shutdown();
    drop(guard);
    result.map_err(|e| format!("reading standard input failed: {e}"))
}
