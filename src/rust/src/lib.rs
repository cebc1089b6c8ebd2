//! extendr glue: the R-facing entry points of mcplite.
use extendr_api::prelude::*;

mod rjson;
pub use rjson::{payload_json, JsonOptions};

/// Parse JSON text into R lists (objects become named lists, arrays unnamed lists).
/// @noRd
#[extendr]
fn rust_json_parse(text: &str) -> Robj {
    let _ = text;
    ().into()
}

extendr_module! {
    mod mcplite;
    fn rust_json_parse;
    use rjson;
}
