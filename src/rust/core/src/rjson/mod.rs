//! jsonlite-compatible serialization of R values (`jsonlite::toJSON()` with
//! mcplite's payload options), byte for byte, without R: the R object is seen
//! through the [`RValue`] trait.

mod encode;
mod escape;
mod names;
pub mod number;
mod out;
mod validate;
mod value;

#[cfg(test)]
mod testvalue;
#[cfg(test)]
mod tests;

pub use encode::MAX_DEPTH;
pub use escape::write_json_string;
pub use number::Digits;
pub use validate::{check_compact_json, JsonFault};
pub use value::{Conversion, RType, RValue};

/// What an R `NULL` becomes (jsonlite's `null` argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NullMode {
    /// `null = "null"`: JSON `null` (mcplite's default).
    Null,
    /// `null = "list"`: `{}` (jsonlite's own default).
    List,
}

/// jsonlite's `na` argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NaOption {
    /// Not given: every class keeps jsonlite's own default.
    Unset,
    /// `na = "null"`.
    Null,
    /// `na = "string"`.
    String,
}

/// The payload JSON options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub null: NullMode,
    pub na: NaOption,
    pub auto_unbox: bool,
    pub digits: Digits,
}

impl Default for Options {
    /// mcplite's defaults: `toJSON(x, auto_unbox = TRUE, null = "null")`.
    fn default() -> Self {
        Options { null: NullMode::Null, na: NaOption::Unset, auto_unbox: true, digits: Digits::Decimal(4) }
    }
}

/// Serializes `x` and appends the JSON text to `out`. On error `out` may hold
/// a partial document; callers discard it.
pub fn to_json_into<V: RValue>(x: &V, opts: &Options, out: Vec<u8>) -> Result<Vec<u8>, String> {
    let mut enc = encode::Encoder::new(opts, out);
    enc.write_root(x)?;
    Ok(enc.out)
}

/// Serializes `x` to JSON text.
pub fn to_json<V: RValue>(x: &V, opts: &Options) -> Result<Vec<u8>, String> {
    to_json_into(x, opts, Vec::new())
}
