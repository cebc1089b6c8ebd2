//! jsonlite-compatible serialization of R values (`jsonlite::toJSON()` with
//! mcplite's payload options), byte for byte, without R: the R object is seen
//! through the [`RValue`] trait.

mod encode;
mod escape;
mod names;
pub mod number;
mod out;
mod value;

#[cfg(test)]
mod tests;
/// A plain Rust model of R values, for tests of everything that reads R
/// objects (here and in `tests/`).
#[doc(hidden)]
pub mod testvalue;

pub use encode::MAX_DEPTH;
pub use escape::{write_base64, write_json_string};
pub use number::Digits;
pub use value::{is_na_real, Conversion, RType, RValue};

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
    if enc.zeroed {
        ZEROED.with(|z| z.set(true));
    }
    Ok(enc.out)
}

thread_local! {
    /// Whether this thread wrote a finite non-zero number as 0 since
    /// [`take_zeroed`] last asked: the server tells the author once per tool
    /// (the payload `digits` keep too few decimal places). A tool's
    /// `tool_result()` is serialized while it runs, its plain value after, on
    /// the same thread, so the flag covers both.
    static ZEROED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a number was written as 0 that is not (see [`ZEROED`]); clears it.
pub fn take_zeroed() -> bool {
    ZEROED.with(|z| z.replace(false))
}

/// Notes that a number was written as 0 elsewhere (a worker's serializer).
pub fn note_zeroed() {
    ZEROED.with(|z| z.set(true));
}

/// Serializes `x` to JSON text.
pub fn to_json<V: RValue>(x: &V, opts: &Options) -> Result<Vec<u8>, String> {
    to_json_into(x, opts, Vec::new())
}

/// Largest output buffer kept between calls of [`with_json`]; larger ones
/// are freed after use, so a one-off huge answer does not stay resident.
pub const SCRATCH_KEEP: usize = 16 << 20;

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Serializes `x` into a per-thread buffer reused across calls and hands the
/// text to `f` (which copies it where it belongs, e.g. into an R string).
/// Reusing the buffer spares the page faults of fresh memory on every call,
/// a large part of the cost of a multi-megabyte answer. Re-entrant calls get
/// a fresh buffer.
pub fn with_json<V: RValue, R>(x: &V, opts: &Options, f: impl FnOnce(&[u8]) -> R) -> Result<R, String> {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            let mut out = std::mem::take(&mut *buf);
            out.clear();
            let res = to_json_into(x, opts, out);
            let (ret, mut back) = match res {
                Ok(bytes) => {
                    let r = f(&bytes);
                    (Ok(r), bytes)
                }
                Err(e) => (Err(e), Vec::new()),
            };
            if back.capacity() > SCRATCH_KEEP {
                back = Vec::new();
            }
            back.clear();
            *buf = back;
            ret
        }
        Err(_) => to_json(x, opts).map(|bytes| f(&bytes)),
    })
}
