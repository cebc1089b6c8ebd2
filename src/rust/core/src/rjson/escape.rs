//! String escaping, base64 and hex exactly as jsonlite writes them.

/// Appends `s` as a JSON string literal the way jsonlite's `C_escape_chars`
/// does: the usual short escapes, other control bytes as `\u00xx` (lower-case
/// hex), `</` written as `<\/`, and every other byte (DEL and non-ASCII
/// included) copied verbatim.
pub fn write_json_string(out: &mut Vec<u8>, s: &[u8]) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    let mut start = 0;
    for (i, &c) in s.iter().enumerate() {
        let esc: &[u8] = match c {
            b'\\' => b"\\\\",
            b'"' => b"\\\"",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'/' if i > 0 && s[i - 1] == b'<' => b"\\/",
            0x00..=0x1f => {
                out.extend_from_slice(&s[start..i]);
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(c >> 4) as usize]);
                out.push(HEX[(c & 15) as usize]);
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&s[start..i]);
        out.extend_from_slice(esc);
        start = i + 1;
    }
    out.extend_from_slice(&s[start..]);
    out.push(b'"');
}

/// Standard base64 with padding and no line breaks (jsonlite's `base64_enc`).
pub fn write_base64(out: &mut Vec<u8>, data: &[u8]) {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in data.chunks(3) {
        let b0 = chunk[0] as u32;
        let b1 = chunk.get(1).copied().unwrap_or(0) as u32;
        let b2 = chunk.get(2).copied().unwrap_or(0) as u32;
        let n = (b0 << 16) | (b1 << 8) | b2;
        out.push(T[(n >> 18) as usize & 63]);
        out.push(T[(n >> 12) as usize & 63]);
        out.push(if chunk.len() > 1 { T[(n >> 6) as usize & 63] } else { b'=' });
        out.push(if chunk.len() > 2 { T[n as usize & 63] } else { b'=' });
    }
}

/// One raw byte as R's `as.character.hexmode()` prints it: lower-case hex,
/// no padding (`0`, `f`, `10`, `ff`).
pub fn write_hex_byte(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    if b >= 16 {
        out.push(HEX[(b >> 4) as usize]);
    }
    out.push(HEX[(b & 15) as usize]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(s: &str) -> String {
        let mut o = Vec::new();
        write_json_string(&mut o, s.as_bytes());
        String::from_utf8(o).unwrap()
    }

    #[test]
    fn escapes_like_jsonlite() {
        assert_eq!(esc("plain"), r#""plain""#);
        assert_eq!(esc("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(esc("\n\r\t\u{8}\u{c}"), r#""\n\r\t\b\f""#);
        assert_eq!(esc("\u{1}\u{1f}\u{0b}"), r#""\u0001\u001f\u000b""#);
        assert_eq!(esc("\u{7f}"), "\"\u{7f}\"");
        assert_eq!(esc("</script>"), r#""<\/script>""#);
        assert_eq!(esc("a/b"), r#""a/b""#);
        assert_eq!(esc("/x"), r#""/x""#);
        assert_eq!(esc("h\u{e9}llo \u{1F600}"), "\"h\u{e9}llo \u{1F600}\"");
        assert_eq!(esc(""), r#""""#);
    }

    #[test]
    fn base64_and_hex() {
        let b = |d: &[u8]| {
            let mut o = Vec::new();
            write_base64(&mut o, d);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(b(&[]), "");
        assert_eq!(b(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), "AQIDBAUGBwgJCg==");
        assert_eq!(b(b"ab"), "YWI=");
        assert_eq!(b(&[255, 254, 253]), "//79");
        let h = |x: u8| {
            let mut o = Vec::new();
            write_hex_byte(&mut o, x);
            String::from_utf8(o).unwrap()
        };
        assert_eq!([h(0), h(15), h(16), h(255)], ["0", "f", "10", "ff"]);
    }
}
