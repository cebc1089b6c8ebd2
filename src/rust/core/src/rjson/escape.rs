//! String escaping, base64 and hex exactly as jsonlite writes them.

use super::out::put;

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// High bit set in exactly the bytes of `w` that are zero (no borrow
/// artefacts, so every set bit can be used).
#[inline(always)]
fn zero_bytes(w: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((w & LOW7).wrapping_add(LOW7)) | w) & HI
}

/// Bytes jsonlite may escape: `"`, `\\`, `/` (escaped only after `<`) and
/// control bytes below 0x20 (those with the top three bits clear).
#[inline(always)]
fn special_bytes(w: u64) -> u64 {
    zero_bytes(w & (0xe0 * LO))
        | zero_bytes(w ^ (b'"' as u64 * LO))
        | zero_bytes(w ^ (b'\\' as u64 * LO))
        | zero_bytes(w ^ (b'/' as u64 * LO))
}

/// The positions (bit `j` for byte `j`) of the bytes of `s` (under 16
/// bytes) that may need escaping: at most two overlapping words, or one
/// padded with spaces.
#[inline(always)]
fn special_positions(s: &[u8]) -> u32 {
    let n = s.len();
    let word = |b: &[u8]| {
        let mut w = [b' '; 8];
        w[..b.len()].copy_from_slice(b);
        // One bit per flagged byte, gathered into the low byte.
        let m = special_bytes(u64::from_le_bytes(w)) >> 7;
        (m.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32
    };
    if n <= 8 {
        word(s)
    } else {
        word(&s[..8]) | (word(&s[n - 8..]) << (n - 8))
    }
}

/// The escape for byte `c` at position `i` of `s`, or `None` when it is
/// written as it is.
#[inline(always)]
fn escape_of(s: &[u8], i: usize, c: u8) -> Option<&'static [u8]> {
    const CTRL: [&[u8; 6]; 32] = [
        b"\\u0000",
        b"\\u0001",
        b"\\u0002",
        b"\\u0003",
        b"\\u0004",
        b"\\u0005",
        b"\\u0006",
        b"\\u0007",
        b"\\b\0\0\0\0",
        b"\\t\0\0\0\0",
        b"\\n\0\0\0\0",
        b"\\u000b",
        b"\\f\0\0\0\0",
        b"\\r\0\0\0\0",
        b"\\u000e",
        b"\\u000f",
        b"\\u0010",
        b"\\u0011",
        b"\\u0012",
        b"\\u0013",
        b"\\u0014",
        b"\\u0015",
        b"\\u0016",
        b"\\u0017",
        b"\\u0018",
        b"\\u0019",
        b"\\u001a",
        b"\\u001b",
        b"\\u001c",
        b"\\u001d",
        b"\\u001e",
        b"\\u001f",
    ];
    match c {
        b'"' => Some(b"\\\""),
        b'\\' => Some(b"\\\\"),
        b'/' if i > 0 && s[i - 1] == b'<' => Some(b"\\/"),
        0x08 | 0x09 | 0x0a | 0x0c | 0x0d => Some(&CTRL[c as usize][..2]),
        0x00..=0x1f => Some(&CTRL[c as usize][..]),
        _ => None,
    }
}

/// The escape of every byte, as (length, bytes padded to eight) so that it
/// can be stored with one fixed-size move; length 0 means the byte is copied
/// as it is (`/` is escaped only after `<`, which the caller checks).
const ESCAPES: [(u8, [u8; 8]); 256] = {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut t = [(0u8, [0u8; 8]); 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = (6, [b'\\', b'u', b'0', b'0', HEX[c >> 4], HEX[c & 15], 0, 0]);
        c += 1;
    }
    t[0x08] = (2, [b'\\', b'b', 0, 0, 0, 0, 0, 0]);
    t[0x09] = (2, [b'\\', b't', 0, 0, 0, 0, 0, 0]);
    t[0x0a] = (2, [b'\\', b'n', 0, 0, 0, 0, 0, 0]);
    t[0x0c] = (2, [b'\\', b'f', 0, 0, 0, 0, 0, 0]);
    t[0x0d] = (2, [b'\\', b'r', 0, 0, 0, 0, 0, 0]);
    t[b'"' as usize] = (2, [b'\\', b'"', 0, 0, 0, 0, 0, 0]);
    t[b'\\' as usize] = (2, [b'\\', b'\\', 0, 0, 0, 0, 0, 0]);
    t
};
const SLASH: (u8, [u8; 8]) = (2, [b'\\', b'/', 0, 0, 0, 0, 0, 0]);

/// Input bytes escaped per `reserve` in [`write_json_string`].
const BLOCK: usize = 4096;
/// The longest escape (`\u00xx`).
const MAX_ESCAPE: usize = 6;

/// Appends `s` as a JSON string literal the way jsonlite's `C_escape_chars`
/// does: the usual short escapes, other control bytes as `\u00xx` (lower-case
/// hex), `</` written as `<\/`, and every other byte (DEL and non-ASCII
/// included) copied verbatim.
///
/// Eight bytes are looked at a time: a word with nothing to escape is
/// stored whole, and in one that has some, the runs between escapes and the
/// escapes themselves are stored with fixed-size moves into space reserved
/// per block, so JSON text (a quote every few bytes) is escaped at several
/// hundred MB/s more than a byte loop and plain text at memory speed.
pub fn write_json_string(out: &mut Vec<u8>, s: &[u8]) {
    let n = s.len();
    // Room for the text, the block slack and, for long texts, a few escapes,
    // so that long texts are rarely moved while they grow.
    out.reserve(if n >= 16 { n + n / 8 + BLOCK * MAX_ESCAPE + 32 } else { n + 2 });
    out.push(b'"');
    let src = s.as_ptr();
    let mut i = 0; // first byte not yet written
                   // Whole words while a word and the next fit, so every 8-byte read from
                   // any position inside the word stays within `s`.
    while i + 16 <= n {
        let block_end = (i + BLOCK).min(n - 15);
        out.reserve((block_end + 8 - i) * MAX_ESCAPE + 16);
        // SAFETY: reads: every load starts at `w + p` with p <= 8 and w + 16 <= n,
        // so it ends within `s`. Writes: each word of input produces at most
        // 8 * MAX_ESCAPE bytes and every store is 8 bytes at the current end,
        // so everything written lies within the reserved
        // (block_end + 8 - i) * MAX_ESCAPE + 16 bytes after the old length;
        // `set_len` covers exactly the bytes produced, all of them written.
        unsafe {
            let base = out.as_mut_ptr();
            let mut dst = base.add(out.len());
            let load = |at: usize| (src.add(at) as *const u64).read_unaligned();
            let mut w = i;
            while w < block_end {
                let word = load(w);
                let mut m = special_bytes(u64::from_le(word));
                if m == 0 {
                    // A run of clean words: one copy (memory speed for plain text).
                    let run = w;
                    w += 8;
                    while w < block_end && special_bytes(u64::from_le(load(w))) == 0 {
                        w += 8;
                    }
                    if w - run == 8 {
                        (dst as *mut u64).write_unaligned(word);
                    } else {
                        std::ptr::copy_nonoverlapping(src.add(run), dst, w - run);
                    }
                    dst = dst.add(w - run);
                    continue;
                }
                let mut p = 0; // bytes of this word already written
                while m != 0 {
                    let k = (m.trailing_zeros() / 8) as usize;
                    m &= m - 1;
                    let c = *src.add(w + k);
                    let (len, esc) = if c == b'/' {
                        if w + k == 0 || *src.add(w + k - 1) != b'<' {
                            continue;
                        }
                        SLASH
                    } else {
                        ESCAPES[c as usize]
                    };
                    (dst as *mut u64).write_unaligned(load(w + p));
                    dst = dst.add(k - p);
                    (dst as *mut [u8; 8]).write_unaligned(esc);
                    dst = dst.add(len as usize);
                    p = k + 1;
                }
                (dst as *mut u64).write_unaligned(load(w + p));
                dst = dst.add(8 - p);
                w += 8;
            }
            out.set_len(dst.offset_from(base) as usize);
            i = w;
        }
    }
    // Fewer than 16 bytes left (all of a short string): only the flagged
    // bytes are looked at, and text with none is copied whole.
    let mut m = special_positions(&s[i..]);
    let mut start = i;
    while m != 0 {
        let j = i + m.trailing_zeros() as usize;
        m &= m - 1;
        if let Some(esc) = escape_of(s, j, s[j]) {
            put(out, &s[start..j]);
            put(out, esc);
            start = j + 1;
        }
    }
    put(out, &s[start..]);
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

    /// The straightforward byte loop the fast escaper must agree with.
    fn reference(s: &[u8]) -> Vec<u8> {
        let mut out = vec![b'"'];
        for (i, &c) in s.iter().enumerate() {
            match c {
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'"' => out.extend_from_slice(b"\\\""),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                0x08 => out.extend_from_slice(b"\\b"),
                0x0c => out.extend_from_slice(b"\\f"),
                b'/' if i > 0 && s[i - 1] == b'<' => out.extend_from_slice(b"\\/"),
                0x00..=0x1f => out.extend_from_slice(format!("\\u{:04x}", c).as_bytes()),
                _ => out.push(c),
            }
        }
        out.push(b'"');
        out
    }

    #[test]
    fn every_byte_at_every_offset() {
        // Each byte value at each position of a 20-byte run (word edges and tail).
        for c in 0..=255u8 {
            for pos in 0..20 {
                let mut s = b"abcdefghij<klmnopqrs".to_vec();
                s[pos] = c;
                let mut o = Vec::new();
                write_json_string(&mut o, &s);
                assert_eq!(o, reference(&s), "byte {c:#x} at {pos}");
                let mut o = Vec::new();
                write_json_string(&mut o, &s[..pos + 1]);
                assert_eq!(o, reference(&s[..pos + 1]), "byte {c:#x} ending a {}-byte string", pos + 1);
            }
        }
        // "</" split across a word boundary.
        for pos in 0..17 {
            let mut s = vec![b'x'; 18];
            s[pos] = b'<';
            s[pos + 1] = b'/';
            let mut o = Vec::new();
            write_json_string(&mut o, &s);
            assert_eq!(o, reference(&s));
        }
    }

    #[test]
    fn long_texts_across_blocks() {
        // JSON-like text longer than several blocks, with "</" and escapes at
        // every block edge.
        let mut s = Vec::new();
        while s.len() < 3 * BLOCK + 100 {
            s.extend_from_slice(b"{\"id\":1,\"v\":\"a\\\\b</c\n\x01\"},");
        }
        for edge in [BLOCK, 2 * BLOCK, 3 * BLOCK] {
            for d in 0..20 {
                let mut t = s.clone();
                t[edge - 10 + d] = b'<';
                t[edge - 9 + d] = b'/';
                t[edge + 5] = 0x1f;
                let mut o = Vec::new();
                write_json_string(&mut o, &t);
                assert_eq!(o, reference(&t), "edge {edge} + {d}");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        #[test]
        fn long_texts_match_the_byte_loop(
            s in proptest::collection::vec(proptest::prop_oneof![
                4 => 0x20u8..0x7f,
                1 => proptest::sample::select(vec![b'"', b'\\', b'/', b'<', b'\n', 0x01u8, 0x1f, 0xe2]),
            ], 0..(3 * BLOCK)),
        ) {
            let mut o = Vec::new();
            write_json_string(&mut o, &s);
            proptest::prop_assert_eq!(o, reference(&s));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5_000))]
        #[test]
        fn fast_escaper_matches_the_byte_loop(
            s in proptest::collection::vec(proptest::prop_oneof![
                6 => proptest::prelude::any::<u8>(),
                2 => proptest::sample::select(vec![b'"', b'\\', b'/', b'<', b'\n', 0x01u8, 0x1f, 0x7f, 0xc3, 0xa9]),
                4 => 0x20u8..0x7f,
            ], 0..200),
        ) {
            let mut o = Vec::new();
            write_json_string(&mut o, &s);
            proptest::prop_assert_eq!(o, reference(&s));
        }
    }
}
