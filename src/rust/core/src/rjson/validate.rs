//! Checks JSON text that an R object carries (built earlier by our own
//! serializer) before it is written to the protocol stream.

use std::fmt;

/// What is wrong with a JSON text, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonFault {
    pub at: usize,
    pub what: &'static str,
}

impl fmt::Display for JsonFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.at)
    }
}

/// Exactly one JSON value written compactly, as our serializer writes it: no
/// whitespace outside strings, valid UTF-8, no raw control bytes, valid
/// escapes (no lone surrogates), nesting at most `MAX_DEPTH` deep.
pub fn check_compact_json(bytes: &[u8]) -> Result<(), JsonFault> {
    if let Err(e) = std::str::from_utf8(bytes) {
        return Err(JsonFault { at: e.valid_up_to(), what: "invalid UTF-8" });
    }
    if let Some(at) = bytes.iter().position(|&c| c < 0x20) {
        // Raw control bytes are invalid inside strings and are whitespace outside.
        return Err(JsonFault { at, what: "raw control character or line break" });
    }
    let doc = crate::json::Doc::parse(bytes.to_vec()).map_err(|e| match e {
        crate::json::ParseError::Syntax { at, what } => JsonFault { at, what },
        crate::json::ParseError::NotUtf8 { at } => JsonFault { at, what: "invalid UTF-8" },
        crate::json::ParseError::TooLarge => JsonFault { at: 0, what: "too large" },
    })?;
    let _ = doc;
    // Whitespace outside strings: a space (the only one left) not inside a string.
    let mut in_str = false;
    let mut esc = false;
    for (i, &c) in bytes.iter().enumerate() {
        if in_str {
            if esc {
                esc = false;
                if c == b'u' {
                    let hex = bytes.get(i + 1..i + 5).and_then(|h| std::str::from_utf8(h).ok());
                    if let Some(cp) = hex.and_then(|h| u32::from_str_radix(h, 16).ok()) {
                        if (0xD800..0xDC00).contains(&cp) {
                            let lo = bytes.get(i + 5..i + 11);
                            let ok = lo.is_some_and(|l| {
                                l.starts_with(b"\\u")
                                    && std::str::from_utf8(&l[2..])
                                        .ok()
                                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                                        .is_some_and(|v| (0xDC00..0xE000).contains(&v))
                            });
                            if !ok {
                                return Err(JsonFault { at: i - 1, what: "lone surrogate escape" });
                            }
                        } else if (0xDC00..0xE000).contains(&cp) {
                            let prev_hi = i >= 7 && bytes[i - 7] == b'\\' && bytes[i - 6] == b'u';
                            if !prev_hi {
                                return Err(JsonFault { at: i - 1, what: "lone surrogate escape" });
                            }
                        }
                    }
                }
            } else if c == b'\\' {
                esc = true;
            } else if c == b'"' {
                in_str = false;
            }
        } else if c == b'"' {
            in_str = true;
        } else if c == b' ' {
            return Err(JsonFault { at: i, what: "whitespace outside a string" });
        }
    }
    Ok(())
}
