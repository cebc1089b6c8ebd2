//! A strict, fast check of compact JSON text: exactly what the serializer
//! writes and nothing else.
//!
//! Used where JSON text made earlier (and kept in an R object, where a tool
//! author could edit it) is about to be spliced into an answer: one pass,
//! no allocation, no tree. Accepts one JSON value with nothing before or
//! after it, no whitespace outside strings, valid UTF-8, no raw control bytes
//! in strings, only JSON's escapes (a `\u` surrogate must be a proper pair),
//! numbers in JSON's grammar, and at most [`MAX_DEPTH`] nested arrays and
//! objects.

use super::encode::MAX_DEPTH;

/// What is wrong with a JSON text, and where (a byte offset from 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonFault {
    /// Offset of the offending byte (the length of the text when it ends too early).
    pub offset: usize,
    /// The problem, in words (no offset).
    pub problem: String,
}

impl std::fmt::Display for JsonFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not valid JSON at byte {}: {}", self.offset, self.problem)
    }
}

impl std::error::Error for JsonFault {}

fn fault<T>(offset: usize, problem: impl Into<String>) -> Result<T, JsonFault> {
    Err(JsonFault { offset, problem: problem.into() })
}

/// How a byte reads in an error message.
fn shown(c: u8) -> String {
    match c {
        b' ' => "a space".to_string(),
        b'\n' => "a newline".to_string(),
        b'\r' => "a carriage return".to_string(),
        b'\t' => "a tab".to_string(),
        0x21..=0x7e => format!("'{}'", c as char),
        _ => format!("byte 0x{c:02x}"),
    }
}

fn unexpected<T>(b: &[u8], i: usize, wanted: &str) -> Result<T, JsonFault> {
    match b.get(i) {
        None => fault(i, format!("the text ends where {wanted} should follow")),
        Some(&c) if matches!(c, b' ' | b'\n' | b'\r' | b'\t') => {
            fault(i, format!("unexpected {} (compact JSON has no whitespace outside strings)", shown(c)))
        }
        Some(&c) => fault(i, format!("unexpected {} where {wanted} should follow", shown(c))),
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

#[inline(always)]
fn load8(s: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[i..i + 8]);
    u64::from_le_bytes(w)
}

/// High bit of each byte of `w` that is `"`, `\` or below 0x20 (the lowest
/// set bit is exact; higher ones may be borrow artefacts).
#[inline(always)]
fn string_stops(w: u64) -> u64 {
    let ctrl = w.wrapping_sub(0x20 * LO) & !w & HI;
    let q = w ^ (b'"' as u64 * LO);
    let bs = w ^ (b'\\' as u64 * LO);
    ctrl | (q.wrapping_sub(LO) & !q & HI) | (bs.wrapping_sub(LO) & !bs & HI)
}

/// Checks that `bytes` is one compact JSON value as the serializer writes it.
/// See the module documentation for exactly what is accepted.
pub fn check_compact_json(bytes: &[u8]) -> Result<(), JsonFault> {
    if let Err(e) = std::str::from_utf8(bytes) {
        return fault(e.valid_up_to(), "invalid UTF-8");
    }
    let b = bytes;
    let n = b.len();
    if n == 0 {
        return fault(0, "the text is empty");
    }
    // One bit per open container: 1 = object, 0 = array.
    let mut kinds = [0u64; MAX_DEPTH.div_ceil(64)];
    let mut depth = 0usize;
    let mut i = 0usize;
    'value: loop {
        // A value starts at i.
        let Some(&c) = b.get(i) else {
            return unexpected(b, i, "a value");
        };
        match c {
            b'{' | b'[' => {
                if depth == MAX_DEPTH {
                    return fault(i, format!("arrays and objects nested more than {MAX_DEPTH} deep"));
                }
                let obj = c == b'{';
                let (w, bit) = (depth / 64, 1u64 << (depth % 64));
                if obj {
                    kinds[w] |= bit;
                } else {
                    kinds[w] &= !bit;
                }
                depth += 1;
                i += 1;
                let close = if obj { b'}' } else { b']' };
                if b.get(i) == Some(&close) {
                    i += 1;
                    depth -= 1;
                } else if obj {
                    i = key(b, i)?;
                    continue 'value;
                } else {
                    continue 'value;
                }
            }
            b'"' => i = string(b, i)?,
            b'-' | b'0'..=b'9' => i = number(b, i)?,
            b't' => i = literal(b, i, b"true")?,
            b'f' => i = literal(b, i, b"false")?,
            b'n' => i = literal(b, i, b"null")?,
            _ => return unexpected(b, i, "a value"),
        }
        // A value ended at i: a comma, a closing bracket, or the end.
        loop {
            if depth == 0 {
                if i == n {
                    return Ok(());
                }
                return match b[i] {
                    b' ' | b'\n' | b'\r' | b'\t' => unexpected(b, i, "nothing"),
                    _ => fault(
                        i,
                        format!(
                            "{} after the end of the JSON value (a second value, or a stray character)",
                            shown(b[i])
                        ),
                    ),
                };
            }
            let top = depth - 1;
            let obj = kinds[top / 64] & (1u64 << (top % 64)) != 0;
            match b.get(i) {
                Some(b',') => {
                    i += 1;
                    if obj {
                        i = key(b, i)?;
                    }
                    continue 'value;
                }
                Some(b'}') if obj => {
                    i += 1;
                    depth -= 1;
                }
                Some(b']') if !obj => {
                    i += 1;
                    depth -= 1;
                }
                _ => return unexpected(b, i, if obj { "',' or '}'" } else { "',' or ']'" }),
            }
        }
    }
}

/// An object key and its colon, from `i`; returns the offset after the colon.
#[inline]
fn key(b: &[u8], i: usize) -> Result<usize, JsonFault> {
    if b.get(i) != Some(&b'"') {
        return unexpected(b, i, "a key (a string)");
    }
    let j = string(b, i)?;
    if b.get(j) != Some(&b':') {
        return unexpected(b, j, "':'");
    }
    Ok(j + 1)
}

#[inline]
fn literal(b: &[u8], i: usize, word: &[u8]) -> Result<usize, JsonFault> {
    let end = i + word.len();
    if b.len() >= end && &b[i..end] == word {
        return Ok(end);
    }
    let at = (i..end.min(b.len())).find(|&k| b[k] != word[k - i]).unwrap_or(b.len());
    let w = String::from_utf8_lossy(word);
    unexpected(b, at, &format!("the rest of '{w}'"))
}

/// A number in JSON's grammar from `i`; returns the offset after it.
#[inline]
fn number(b: &[u8], mut i: usize) -> Result<usize, JsonFault> {
    let digits = |b: &[u8], mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    if b[i] == b'-' {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(b, i + 1),
        _ => return unexpected(b, i, "a digit"),
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return unexpected(b, i, "a digit after the decimal point");
        }
        i = digits(b, i);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return unexpected(b, i, "a digit in the exponent");
        }
        i = digits(b, i);
    }
    if b.get(i).is_some_and(u8::is_ascii_digit) {
        // Only "0" and "-0" stop before a digit: a leading zero.
        return fault(i, "a number with a leading zero");
    }
    Ok(i)
}

fn hex4(b: &[u8], i: usize) -> Result<u32, JsonFault> {
    let mut v = 0u32;
    for k in 0..4 {
        let d = match b.get(i + k) {
            Some(&c @ b'0'..=b'9') => c - b'0',
            Some(&c @ b'a'..=b'f') => c - b'a' + 10,
            Some(&c @ b'A'..=b'F') => c - b'A' + 10,
            _ => return unexpected(b, i + k, "four hex digits after \\u"),
        };
        v = v * 16 + d as u32;
    }
    Ok(v)
}

/// A string from the opening quote at `i`; returns the offset after the
/// closing quote. Plain runs are skipped eight bytes at a time.
#[inline]
fn string(b: &[u8], i: usize) -> Result<usize, JsonFault> {
    let n = b.len();
    let mut i = i + 1;
    loop {
        while i + 8 <= n {
            let m = string_stops(load8(b, i));
            if m != 0 {
                i += (m.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        while i < n && b[i] >= 0x20 && b[i] != b'"' && b[i] != b'\\' {
            i += 1;
        }
        let Some(&c) = b.get(i) else {
            return fault(n, "the text ends inside a string (no closing quote)");
        };
        match c {
            b'"' => return Ok(i + 1),
            b'\\' => match b.get(i + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                Some(b'u') => {
                    let u = hex4(b, i + 2)?;
                    if (0xDC00..0xE000).contains(&u) {
                        return fault(
                            i,
                            format!("\\u{u:04x} is the second half of a surrogate pair with no first half"),
                        );
                    }
                    if (0xD800..0xDC00).contains(&u) {
                        let low = if b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u') {
                            Some(hex4(b, i + 8)?)
                        } else {
                            None
                        };
                        match low {
                            Some(l) if (0xDC00..0xE000).contains(&l) => i += 12,
                            _ => {
                                return fault(
                                    i,
                                    format!("\\u{u:04x} is the first half of a surrogate pair with no second half"),
                                )
                            }
                        }
                    } else {
                        i += 6;
                    }
                }
                Some(&e) => {
                    return fault(i, format!("invalid escape '\\{}' in a string", String::from_utf8_lossy(&[e])))
                }
                None => return fault(n, "the text ends inside a string (no closing quote)"),
            },
            _ => {
                let hint = match c {
                    b'\n' => " (write it as \\n)",
                    b'\t' => " (write it as \\t)",
                    b'\r' => " (write it as \\r)",
                    _ => "",
                };
                return fault(i, format!("raw control byte 0x{c:02x} inside a string{hint}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(s: &[u8]) -> String {
        check_compact_json(s).expect_err("must be rejected").to_string()
    }

    #[test]
    fn accepts_compact_json() {
        for s in [
            "0",
            "-0",
            "1.5e-05",
            "1E+20",
            "-12.25",
            "true",
            "false",
            "null",
            "\"\"",
            "\"a\\\"b\\\\c\\/\\b\\f\\n\\r\\t\"",
            "\"\\u00e9\\ud83d\\ude00\"",
            "\"d\u{e9}j\u{e0} \u{1F600}\"",
            "[]",
            "{}",
            "[1,[2,[]],{}]",
            r#"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
            r#"[{"id":1,"value":0.5},{}]"#,
            "\"\u{7f}\"",
        ] {
            assert_eq!(check_compact_json(s.as_bytes()), Ok(()), "{s}");
        }
    }

    #[test]
    fn names_the_fault_and_where() {
        assert_eq!(bad(b""), "not valid JSON at byte 0: the text is empty");
        assert_eq!(bad(b"{\"a\":1,}"), "not valid JSON at byte 7: unexpected '}' where a key (a string) should follow");
        assert_eq!(bad(b"[1,,2]"), "not valid JSON at byte 3: unexpected ',' where a value should follow");
        assert_eq!(
            bad(b"{\"a\": 1}"),
            "not valid JSON at byte 5: unexpected a space (compact JSON has no whitespace outside strings)"
        );
        assert_eq!(
            bad(b"[1]\n"),
            "not valid JSON at byte 3: unexpected a newline (compact JSON has no whitespace outside strings)"
        );
        assert_eq!(
            bad(b"[1][2]"),
            "not valid JSON at byte 3: '[' after the end of the JSON value (a second value, or a stray character)"
        );
        assert_eq!(bad(b"[1,2"), "not valid JSON at byte 4: the text ends where ',' or ']' should follow");
        assert_eq!(bad(b"\"ab"), "not valid JSON at byte 3: the text ends inside a string (no closing quote)");
        assert_eq!(
            bad(b"\"a\nb\""),
            "not valid JSON at byte 2: raw control byte 0x0a inside a string (write it as \\n)"
        );
        assert_eq!(bad(b"\"a\x01\""), "not valid JSON at byte 2: raw control byte 0x01 inside a string");
        assert_eq!(bad(b"\"\\x\""), "not valid JSON at byte 1: invalid escape '\\x' in a string");
        assert_eq!(
            bad(b"\"\\ud800\""),
            "not valid JSON at byte 1: \\ud800 is the first half of a surrogate pair with no second half"
        );
        assert_eq!(
            bad(b"\"\\ud800\\u0041\""),
            "not valid JSON at byte 1: \\ud800 is the first half of a surrogate pair with no second half"
        );
        assert_eq!(
            bad(b"\"\\udc00\""),
            "not valid JSON at byte 1: \\udc00 is the second half of a surrogate pair with no first half"
        );
        assert_eq!(
            bad(b"\"\\u12g4\""),
            "not valid JSON at byte 5: unexpected 'g' where four hex digits after \\u should follow"
        );
        assert_eq!(bad(b"[\"a\xff\"]"), "not valid JSON at byte 3: invalid UTF-8");
        assert_eq!(bad(b"\"\xc3\""), "not valid JSON at byte 1: invalid UTF-8");
        assert_eq!(bad(b"01"), "not valid JSON at byte 1: a number with a leading zero");
        assert_eq!(
            bad(b"1."),
            "not valid JSON at byte 2: the text ends where a digit after the decimal point should follow"
        );
        assert_eq!(bad(b"1e"), "not valid JSON at byte 2: the text ends where a digit in the exponent should follow");
        assert_eq!(bad(b"-"), "not valid JSON at byte 1: the text ends where a digit should follow");
        assert_eq!(bad(b"+1"), "not valid JSON at byte 0: unexpected '+' where a value should follow");
        assert_eq!(bad(b".5"), "not valid JSON at byte 0: unexpected '.' where a value should follow");
        assert_eq!(bad(b"NaN"), "not valid JSON at byte 0: unexpected 'N' where a value should follow");
        assert_eq!(bad(b"[NA]"), "not valid JSON at byte 1: unexpected 'N' where a value should follow");
        assert_eq!(bad(b"tru"), "not valid JSON at byte 3: the text ends where the rest of 'true' should follow");
        assert_eq!(bad(b"nul1"), "not valid JSON at byte 3: unexpected '1' where the rest of 'null' should follow");
        assert_eq!(bad(b"{\"a\"1}"), "not valid JSON at byte 4: unexpected '1' where ':' should follow");
        assert_eq!(bad(b"{1:2}"), "not valid JSON at byte 1: unexpected '1' where a key (a string) should follow");
        assert_eq!(bad(b"[1}"), "not valid JSON at byte 2: unexpected '}' where ',' or ']' should follow");
        assert_eq!(bad(b"'a'"), "not valid JSON at byte 0: unexpected ''' where a value should follow");
    }

    #[test]
    fn nesting_limit_is_the_serializer_limit() {
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(check_compact_json(ok.as_bytes()), Ok(()));
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(
            check_compact_json(deep.as_bytes()).map_err(|f| f.offset),
            Err(MAX_DEPTH),
            "the bracket past the limit is named"
        );
        // Deep nesting never recurses: a huge run of brackets is just an error.
        let huge = "[{\"a\":".repeat(1_000_000);
        assert!(check_compact_json(huge.as_bytes()).is_err());
    }

    #[test]
    fn long_strings_and_word_edges() {
        for len in 0..40 {
            for pos in 0..len {
                let mut s = vec![b'x'; len];
                s[pos] = b'"';
                let mut txt = vec![b'"'];
                txt.extend_from_slice(&s);
                txt.push(b'"');
                // An unescaped quote inside ends the string early.
                let r = check_compact_json(&txt);
                assert_eq!(r.map_err(|f| f.offset), Err(pos + 2), "len {len} pos {pos}");
                s[pos] = b'\\';
                s.insert(pos + 1, b'n');
                let mut txt = vec![b'"'];
                txt.extend_from_slice(&s);
                txt.push(b'"');
                assert_eq!(check_compact_json(&txt), Ok(()), "len {len} escape at {pos}");
            }
        }
    }
}

/// Everything the serializer writes passes; every way of breaking it fails.
#[cfg(test)]
mod properties {
    use super::check_compact_json;
    use crate::rjson::testvalue::*;
    use crate::rjson::{to_json, Digits, NaOption, NullMode, Options};
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z]{0,6}",
            "\\PC{0,12}",
            proptest::collection::vec(
                prop_oneof![
                    Just('"'),
                    Just('\\'),
                    Just('/'),
                    Just('<'),
                    Just('\n'),
                    Just('\u{1}'),
                    Just('\u{1f}'),
                    Just('\u{7f}'),
                    Just('\u{e9}'),
                    Just('\u{1F600}'),
                    Just('\u{2028}'),
                    any::<char>()
                ],
                0..16
            )
            .prop_map(|v| v.into_iter().collect()),
        ]
    }

    fn double() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            (-1e6f64..1e6),
            Just(na_real()),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-0.0),
            Just(5e-324),
            Just(1e300),
        ]
    }

    fn leaf() -> impl Strategy<Value = TV> {
        prop_oneof![
            Just(null()),
            proptest::collection::vec(double(), 0..5).prop_map(|v| dbl(&v)),
            proptest::collection::vec(prop_oneof![any::<i32>(), Just(NA_INT)], 0..5).prop_map(|v| int(&v)),
            proptest::collection::vec(proptest::option::of(any::<bool>()), 0..5).prop_map(|v| lgl(&v)),
            proptest::collection::vec(proptest::option::of(text()), 0..5).prop_map(|v| {
                let r: Vec<Option<&str>> = v.iter().map(|s| s.as_deref()).collect();
                chr(&r)
            }),
            proptest::collection::vec(0i32..4, 0..5).prop_map(|v| {
                let codes: Vec<i32> = v.iter().map(|&c| if c == 0 { NA_INT } else { c }).collect();
                int(&codes).attr("levels", chr(&[Some("a"), Some("b \""), Some("\u{e9}")])).class(&["factor"])
            }),
            proptest::collection::vec(any::<u8>(), 0..6).prop_map(|v| raw(&v)),
        ]
    }

    fn value() -> impl Strategy<Value = TV> {
        leaf().prop_recursive(4, 40, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(list),
                proptest::collection::vec((proptest::option::of(text()), inner.clone()), 0..5).prop_map(|v| {
                    let names: Vec<Option<&str>> = v.iter().map(|(n, _)| n.as_deref()).collect();
                    list(v.iter().map(|(_, x)| x.clone()).collect()).attr("names", chr(&names))
                }),
                // A data frame: columns of one length, optionally a list column.
                (0usize..4, proptest::collection::vec(0u8..4, 1..4), inner).prop_map(|(n, kinds, cell)| {
                    let cols: Vec<(String, TV)> = kinds
                        .iter()
                        .enumerate()
                        .map(|(j, k)| {
                            let col = match k {
                                0 => dbl(&(0..n)
                                    .map(|i| if i == 1 { na_real() } else { i as f64 / 3.0 })
                                    .collect::<Vec<_>>()),
                                1 => int(&(0..n as i32).map(|i| if i == 2 { NA_INT } else { i }).collect::<Vec<_>>()),
                                2 => chr(&(0..n).map(|i| if i == 0 { None } else { Some("x\"y") }).collect::<Vec<_>>()),
                                _ => list((0..n).map(|_| cell.clone()).collect()),
                            };
                            (format!("c{}", j % 2), col)
                        })
                        .collect();
                    df(cols.iter().map(|(k, v)| (k.as_str(), v.clone())).collect(), n as i32)
                }),
            ]
        })
    }

    fn options() -> impl Strategy<Value = Options> {
        (
            prop_oneof![Just(NullMode::Null), Just(NullMode::List)],
            prop_oneof![Just(NaOption::Unset), Just(NaOption::Null), Just(NaOption::String)],
            any::<bool>(),
            prop_oneof![
                (0i32..12).prop_map(Digits::Decimal),
                (1i32..17).prop_map(Digits::Significant),
                Just(Digits::Max)
            ],
        )
            .prop_map(|(null, na, auto_unbox, digits)| Options { null, na, auto_unbox, digits })
    }

    /// (opening quote, closing quote) offsets of every string in a valid text.
    fn strings(t: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < t.len() {
            if t[i] == b'"' {
                let open = i;
                i += 1;
                while t[i] != b'"' {
                    i += if t[i] == b'\\' { 2 } else { 1 };
                }
                out.push((open, i));
            }
            i += 1;
        }
        out
    }

    /// Offsets outside every string where a byte can be inserted.
    fn outside(t: &[u8]) -> Vec<usize> {
        let s = strings(t);
        (0..=t.len()).filter(|&p| !s.iter().any(|&(o, c)| p > o && p <= c)).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]

        #[test]
        fn serializer_output_passes(x in value(), o in options()) {
            let t = to_json(&x, &o);
            // (Values the serializer refuses are rare here; too many would fail the test.)
            prop_assume!(t.is_ok());
            let t = t.unwrap_or_default();
            prop_assert_eq!(check_compact_json(&t), Ok(()), "{}", String::from_utf8_lossy(&t));
        }

        #[test]
        fn broken_output_fails(x in value(), o in options(), how in 0u8..9, pick in any::<prop::sample::Index>(), byte in 0u8..0x20) {
            let t = to_json(&x, &o);
            prop_assume!(t.is_ok());
            let t = t.unwrap_or_default();
            let strs = strings(&t);
            let ends_in_digit = t.last().is_some_and(u8::is_ascii_digit);
            let mut m = t.clone();
            match how {
                // Whitespace outside strings.
                0 => {
                    let out = outside(&t);
                    m.insert(out[pick.index(out.len())], [b' ', b'\n', b'\t', b'\r'][byte as usize % 4]);
                }
                // A raw control byte inside a string.
                1 => {
                    if strs.is_empty() { return Ok(()) }
                    let (open, _) = strs[pick.index(strs.len())];
                    m.insert(open + 1, byte);
                }
                // Truncated.
                2 => {
                    if ends_in_digit { return Ok(()) }
                    m.truncate(pick.index(t.len()));
                }
                // Something appended.
                3 => m.push(b",]}:x \"[{"[byte as usize % 9]),
                // An invalid escape.
                4 => {
                    if strs.is_empty() { return Ok(()) }
                    let (open, _) = strs[pick.index(strs.len())];
                    let bad: &[u8] = [b"\\x".as_slice(), b"\\u12g4", b"\\ud800", b"\\udc00", b"\\'"][byte as usize % 5];
                    m.splice(open + 1..open + 1, bad.iter().copied());
                }
                // Invalid UTF-8 inside a string, or anywhere.
                5 => {
                    let at = if strs.is_empty() { pick.index(t.len() + 1) } else { strs[pick.index(strs.len())].0 + 1 };
                    m.insert(at, [0xff, 0x80, 0xc3, 0xed][byte as usize % 4]);
                }
                // Two values.
                6 => {
                    if ends_in_digit { return Ok(()) }
                    m.extend_from_slice(&t);
                }
                // A stray comma before a closing bracket or at the start.
                7 => {
                    let closes: Vec<usize> = (0..t.len()).filter(|&p| matches!(t[p], b']' | b'}') && outside(&t).contains(&p)).collect();
                    if closes.is_empty() { m.insert(0, b','); } else { m.insert(closes[pick.index(closes.len())], b','); }
                }
                // Nested one level past the limit.
                _ => {
                    let d = crate::rjson::MAX_DEPTH;
                    m = [vec![b'['; d + 1], t.clone(), vec![b']'; d + 1]].concat();
                }
            }
            prop_assert!(check_compact_json(&m).is_err(), "accepted: {}", String::from_utf8_lossy(&m));
        }
    }
}
