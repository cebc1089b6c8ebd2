//! Payload JSON for ordinary return values and structured content.
//! Placeholder until the jsonlite-compatible serializer lands: the fixed
//! protocol encoding stands in for it.

use extendr_api::prelude::*;

pub fn payload_json(x: &Robj, _opts: &Robj) -> std::result::Result<String, String> {
    crate::rvalue::robj_to_value(x).map(|v| v.to_string())
}
