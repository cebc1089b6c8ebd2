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

pub use encode::{to_json, to_json_into, with_json, MAX_DEPTH};
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

/// Output buffers up to this size are always kept for the next answer.
pub const SCRATCH_KEEP: usize = 16 << 20;

/// Whether a buffer of `capacity` bytes, of which the answer just written
/// used `used`, is kept for the next one: always up to [`SCRATCH_KEEP`],
/// a larger one while answers keep filling at least a quarter of it (a
/// buffer grows by doubling, and `tool_result()`'s JSON fills half of the
/// line that carries it twice). A server
/// answering large results over and over then writes them into memory it
/// already has (fresh pages cost as much as the serializing, so the time of
/// an answer would grow faster than its size), and a one-off huge answer
/// stays resident only until a much smaller one follows.
pub fn keeps(capacity: usize, used: usize) -> bool {
    capacity <= SCRATCH_KEEP || used >= capacity / 4
}

thread_local! {
    /// This thread's kept output buffers, empty: two, because a plain
    /// answer's JSON is still held while its answer line is written.
    static SPARE: [std::cell::Cell<Vec<u8>>; 2] = const { [std::cell::Cell::new(Vec::new()), std::cell::Cell::new(Vec::new())] };
}

/// An empty output buffer: the larger one this thread kept, or a new one.
/// The serializer's text and the answer lines take theirs here, so the
/// buffer `tool_result()`'s JSON was written in (then copied into R) is the
/// one its answer line is written in next.
pub fn take_buffer() -> Vec<u8> {
    SPARE.with(|[a, b]| {
        let (x, y) = (a.take(), b.take());
        let (larger, smaller) = if x.capacity() >= y.capacity() { (x, y) } else { (y, x) };
        a.set(smaller);
        larger
    })
}

/// Hands an output buffer back after use, if [`keeps`] says so; of the
/// buffers kept already and this one, the two larger stay.
pub fn give_back(mut buf: Vec<u8>) {
    if !keeps(buf.capacity(), buf.len()) {
        return;
    }
    buf.clear();
    SPARE.with(|[a, b]| {
        let mut three = [a.take(), b.take(), buf];
        three.sort_by_key(|v| std::cmp::Reverse(v.capacity()));
        let [x, y, _] = three;
        a.set(x);
        b.set(y);
    });
}

#[cfg(test)]
mod buffer_tests {
    use super::*;

    fn drain() {
        let _ = (take_buffer(), take_buffer());
    }

    #[test]
    fn large_buffers_are_kept_while_answers_fill_them() {
        drain();
        let big = 4 * SCRATCH_KEEP;
        assert!(keeps(SCRATCH_KEEP, 0), "small buffers are always kept");
        assert!(keeps(big, big / 4) && !keeps(big, big / 4 - 1));
        // A large buffer handed back after a large answer is the next one taken.
        let mut buf = Vec::with_capacity(big);
        buf.resize(big * 3 / 4, b'x');
        give_back(buf);
        let mut again = take_buffer();
        assert!(again.is_empty() && again.capacity() >= big);
        // Used for a small answer, it is let go.
        again.extend_from_slice(b"[1]");
        give_back(again);
        assert_eq!(take_buffer().capacity(), 0);
        // Two are kept, the larger ones, and the larger is taken first.
        for cap in [1024, 4096, 2048] {
            give_back(Vec::with_capacity(cap));
        }
        assert!(take_buffer().capacity() >= 4096);
        let second = take_buffer().capacity();
        assert!((2048..4096).contains(&second), "{second}");
        assert_eq!(take_buffer().capacity(), 0);
        // A plain answer's JSON hands its buffer back once written (dropped).
        let mut json = take_buffer();
        json.reserve(8192);
        json.extend_from_slice(b"{\"a\":1}");
        let text = crate::result::JsonBuffer::new(json);
        assert!(take_buffer().capacity() < 8192, "in use, not kept");
        drop(text);
        assert!(take_buffer().capacity() >= 8192);
    }

    #[test]
    fn the_buffer_a_text_was_written_in_is_the_next_one_taken() {
        use crate::rjson::testvalue::*;
        drain();
        let x = s(&"y".repeat(SCRATCH_KEEP + 1));
        let n = with_json(&x, &Options::default(), |b| b.len()).unwrap();
        assert_eq!(n, SCRATCH_KEEP + 3);
        // Copied elsewhere by `f`: the answer line takes the same memory.
        let line = take_buffer();
        assert!(line.capacity() >= n);
        assert_eq!(take_buffer().capacity(), 0, "one buffer, not two");
    }
}
