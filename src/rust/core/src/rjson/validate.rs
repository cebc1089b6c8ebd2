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
                    _ => fault(i, format!("{} after the end of the JSON value (a second value, or a stray character)", shown(b[i]))),
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
                        return fault(i, format!("\\u{u:04x} is the second half of a surrogate pair with no first half"));
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
                                return fault(i, format!("\\u{u:04x} is the first half of a surrogate pair with no second half"))
                            }
                        }
                    } else {
                        i += 6;
                    }
                }
                Some(&e) => return fault(i, format!("invalid escape '\\{}' in a string", String::from_utf8_lossy(&[e]))),
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
            "0", "-0", "1.5e-05", "1E+20", "-12.25", "true", "false", "null", "\"\"", "\"a\\\"b\\\\c\\/\\b\\f\\n\\r\\t\"",
            "\"\\u00e9\\ud83d\\ude00\"", "\"d\u{e9}j\u{e0} \u{1F600}\"", "[]", "{}", "[1,[2,[]],{}]",
            r#"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#, r#"[{"id":1,"value":0.5},{}]"#, "\"\u{7f}\"",
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
        assert_eq!(bad(b"[1]\n"), "not valid JSON at byte 3: unexpected a newline (compact JSON has no whitespace outside strings)");
        assert_eq!(bad(b"[1][2]"), "not valid JSON at byte 3: '[' after the end of the JSON value (a second value, or a stray character)");
        assert_eq!(bad(b"[1,2"), "not valid JSON at byte 4: the text ends where ',' or ']' should follow");
        assert_eq!(bad(b"\"ab"), "not valid JSON at byte 3: the text ends inside a string (no closing quote)");
        assert_eq!(bad(b"\"a\nb\""), "not valid JSON at byte 2: raw control byte 0x0a inside a string (write it as \\n)");
        assert_eq!(bad(b"\"a\x01\""), "not valid JSON at byte 2: raw control byte 0x01 inside a string");
        assert_eq!(bad(b"\"\\x\""), "not valid JSON at byte 1: invalid escape '\\x' in a string");
        assert_eq!(bad(b"\"\\ud800\""), "not valid JSON at byte 1: \\ud800 is the first half of a surrogate pair with no second half");
        assert_eq!(bad(b"\"\\ud800\\u0041\""), "not valid JSON at byte 1: \\ud800 is the first half of a surrogate pair with no second half");
        assert_eq!(bad(b"\"\\udc00\""), "not valid JSON at byte 1: \\udc00 is the second half of a surrogate pair with no first half");
        assert_eq!(bad(b"\"\\u12g4\""), "not valid JSON at byte 5: unexpected 'g' where four hex digits after \\u should follow");
        assert_eq!(bad(b"[\"a\xff\"]"), "not valid JSON at byte 3: invalid UTF-8");
        assert_eq!(bad(b"\"\xc3\""), "not valid JSON at byte 1: invalid UTF-8");
        assert_eq!(bad(b"01"), "not valid JSON at byte 1: a number with a leading zero");
        assert_eq!(bad(b"1."), "not valid JSON at byte 2: the text ends where a digit after the decimal point should follow");
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
