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

/// Output buffers up to this size are always kept for the next answer.
pub const SCRATCH_KEEP: usize = 16 << 20;

/// Whether a buffer of `capacity` bytes, of which the answer just written
/// used `used`, is kept for the next one: always up to [`SCRATCH_KEEP`],
/// a larger one while answers keep filling at least half of it. A server
/// answering large results over and over then writes them into memory it
/// already has (fresh pages cost as much as the serializing, so the time of
/// an answer would grow faster than its size), and a one-off huge answer
/// stays resident only until a much smaller one follows.
pub fn keeps(capacity: usize, used: usize) -> bool {
    capacity <= SCRATCH_KEEP || used >= capacity / 2
}

thread_local! {
    static SCRATCH: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// An empty output buffer: this thread's kept one, or a new one (when it is
/// in use, by a re-entrant call or a text not written yet).
pub fn take_buffer() -> Vec<u8> {
    SCRATCH.with(|cell| cell.take())
}

/// Hands an output buffer back after use (see [`keeps`]); the larger of two
/// is kept.
pub fn give_back(mut buf: Vec<u8>) {
    if !keeps(buf.capacity(), buf.len()) {
        return;
    }
    buf.clear();
    SCRATCH.with(|cell| {
        let held = cell.take();
        cell.set(if held.capacity() >= buf.capacity() { held } else { buf });
    });
}

/// Serializes `x` into a per-thread buffer reused across calls and hands the
/// text to `f` (which copies it where it belongs, e.g. into an R string).
/// Reusing the buffer spares the page faults of fresh memory on every call,
/// a large part of the cost of a multi-megabyte answer; buffers over
/// [`SCRATCH_KEEP`] are let go. Re-entrant calls get a fresh buffer.
pub fn with_json<V: RValue, R>(x: &V, opts: &Options, f: impl FnOnce(&[u8]) -> R) -> Result<R, String> {
    let bytes = to_json_into(x, opts, take_buffer())?;
    let ret = f(&bytes);
    // `f` copied the text: a large buffer kept besides would make a third
    // copy of a large answer (with R's and the answer line's).
    if bytes.capacity() <= SCRATCH_KEEP {
        give_back(bytes);
    }
    Ok(ret)
}

#[cfg(test)]
mod buffer_tests {
    use super::*;

    #[test]
    fn large_buffers_are_kept_while_answers_fill_them() {
        let big = 4 * SCRATCH_KEEP;
        assert!(keeps(SCRATCH_KEEP, 0), "small buffers are always kept");
        assert!(keeps(big, big / 2) && !keeps(big, big / 2 - 1));
        // A large buffer handed back after a large answer is the next one taken.
        let _ = take_buffer();
        let mut buf = Vec::with_capacity(big);
        buf.resize(big * 3 / 4, b'x');
        give_back(buf);
        let again = take_buffer();
        assert!(again.is_empty() && again.capacity() >= big);
        // Used for a small answer, it is let go; a small one is kept instead.
        let mut again = again;
        again.extend_from_slice(b"[1]");
        give_back(again);
        assert!(take_buffer().capacity() < big);
        give_back(Vec::with_capacity(1024));
        assert!(take_buffer().capacity() >= 1024);
        // Of two, the larger is kept.
        give_back(Vec::with_capacity(1024));
        give_back(Vec::with_capacity(4096));
        give_back(Vec::with_capacity(2048));
        assert!(take_buffer().capacity() >= 4096);
        // A plain answer's JSON hands its buffer back once written (dropped).
        let mut json = take_buffer();
        json.reserve(8192);
        json.extend_from_slice(b"{\"a\":1}");
        let text = crate::result::JsonBuffer::new(json);
        assert!(take_buffer().capacity() < 8192, "in use, not in the pool");
        drop(text);
        assert!(take_buffer().capacity() >= 8192);
    }

    #[test]
    fn a_large_text_copied_elsewhere_does_not_keep_its_buffer() {
        use crate::rjson::testvalue::*;
        let _ = take_buffer();
        let x = s(&"y".repeat(SCRATCH_KEEP + 1));
        let n = with_json(&x, &Options::default(), |b| b.len()).unwrap();
        assert_eq!(n, SCRATCH_KEEP + 3);
        assert!(take_buffer().capacity() <= SCRATCH_KEEP);
        // A small one is kept for the next call.
        with_json(&s("z"), &Options::default(), |_| ()).unwrap();
        assert!(take_buffer().capacity() > 0);
    }
}
