//! extendr glue: the R-facing entry points of mcplite. Every entry point that
//! can fail returns `list(value, error)` so R raises the classed condition.

use extendr_api::prelude::*;

mod client;
mod guard;
mod host;
mod otel;
mod rjson;
mod rvalue;
mod serve;

fn outcome(r: std::result::Result<Robj, String>) -> Robj {
    match r {
        Ok(value) => list!(value = value, error = ()).into(),
        Err(e) => list!(value = (), error = e).into(),
    }
}

/// Parse JSON text into shape-preserving R lists.
/// @noRd
#[extendr]
fn rust_json_parse(text: &str) -> Robj {
    outcome(
        serde_json::from_str::<serde_json::Value>(text)
            .map(|v| rvalue::value_to_robj(&v))
            .map_err(|e| e.to_string()),
    )
}

/// Fixed protocol encoding of an R value (schemas, annotations, `_meta`).
/// @noRd
#[extendr]
fn rust_to_json_fixed(x: Robj) -> Robj {
    outcome(rvalue::robj_to_value(&x).map(|v| v.to_string().into()))
}

/// Serve MCP on stdin/stdout until end of input.
/// @noRd
#[extendr]
fn rust_serve(specs: List, instructions: Robj, opts: Robj, invoker: Robj, info: Robj, on_start: Robj) -> Robj {
    outcome(serve::run(specs, instructions, opts, invoker, info, on_start).map(|_| ().into()))
}

extendr_module! {
    mod mcplite;
    fn rust_json_parse;
    fn rust_to_json_fixed;
    fn rust_serve;
    use client;
    use otel;
    use rjson;
}
