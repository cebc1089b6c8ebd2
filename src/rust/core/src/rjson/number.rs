//! Number formatting exactly as jsonlite's `num_to_char.c` does it.
//!
//! jsonlite picks one of three formatters per double: `modp_dtoa2` (fixed
//! decimals, trailing zeros dropped) for moderate magnitudes, C's `%.*g` for
//! everything else, and `%.15g` when `digits = NA`. Each is reproduced here
//! byte for byte; this module is where output differences would hide, so it
//! is tested against the C library's `snprintf` as well as fixed examples.

use std::fmt::Write as _;

/// How doubles are rounded, as jsonlite reads its `digits` argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Digits {
    /// `digits = n`: n decimal places (jsonlite's default is 4).
    Decimal(i32),
    /// `digits = I(n)`: n significant digits.
    Significant(i32),
    /// `digits = NA`: the maximum jsonlite offers, 15 significant digits.
    Max,
}

impl Default for Digits {
    fn default() -> Self {
        Digits::Decimal(4)
    }
}

/// A fixed stack buffer so the hot path never allocates.
struct StackBuf {
    buf: [u8; 48],
    len: usize,
}

impl StackBuf {
    fn new() -> Self {
        StackBuf { buf: [0; 48], len: 0 }
    }
    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let b = s.as_bytes();
        let end = self.len + b.len();
        if end > self.buf.len() {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(b);
        self.len = end;
        Ok(())
    }
}

/// Appends an R integer (not NA) in decimal, like `modp_itoa10`.
pub fn write_i32(out: &mut Vec<u8>, v: i32) {
    write_i64(out, v as i64);
}

/// Appends a 64-bit integer in decimal.
pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    let neg = v < 0;
    let mut u = v.unsigned_abs();
    loop {
        i -= 1;
        tmp[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if neg {
        out.push(b'-');
    }
    out.extend_from_slice(&tmp[i..]);
}

/// Appends a finite double the way jsonlite's `R_num_to_char` formats it.
pub fn write_f64(out: &mut Vec<u8>, val: f64, digits: Digits) {
    match digits {
        Digits::Max => write_g(out, val, 15),
        Digits::Significant(p) => write_g(out, val, p.min(17)),
        Digits::Decimal(p) => {
            let a = val.abs();
            if p > -1 && p < 10 && a < 2147483647.0 && a > 1e-5 {
                modp_dtoa2(out, val, p);
            } else {
                // jsonlite's formula turning decimal into significant digits.
                let decimals = (1f64.max(a.log10()) + p as f64).min(17.0).ceil();
                write_g(out, val, decimals as i32);
            }
        }
    }
}

const POW10: [f64; 10] = [
    1.0,
    10.0,
    100.0,
    1000.0,
    10000.0,
    100000.0,
    1000000.0,
    10000000.0,
    100000000.0,
    1000000000.0,
];

/// Port of `modp_dtoa2` from jsonlite's `modp_numtoa.c`: fixed decimals with
/// trailing zeros removed and its own round-half-to-even rule. Callers
/// guarantee `|value| < 2^31 - 1` and `0 <= prec <= 9`.
pub fn modp_dtoa2(out: &mut Vec<u8>, value: f64, prec: i32) {
    if value.is_nan() {
        out.extend_from_slice(b"nan");
        return;
    }
    let prec = prec.clamp(0, 9) as usize;
    let (neg, value) = if value < 0.0 { (true, -value) } else { (false, value) };
    // Same float operations, in the same order, as the C code.
    let mut whole: i64 = value as i32 as i64;
    let tmp = (value - whole as f64) * POW10[prec];
    let mut frac: u32 = tmp as u32;
    let diff = tmp - frac as f64;
    let limit = POW10[prec];
    // Round up past one half, and on exactly one half when the kept digit
    // is odd (the C code's three branches, merged).
    let round_up = diff > 0.5
        || (diff == 0.5 && prec > 0 && (frac & 1) == 1)
        || (diff == 0.5 && prec == 0 && (whole & 1) == 1);
    if round_up {
        frac += 1;
        if frac as f64 >= limit {
            frac = 0;
            whole += 1;
        }
    }
    if value > 2147483647.0 {
        // Unreachable from jsonlite's call site; mirror its "%e" fallback.
        let mut sb = StackBuf::new();
        let _ = write!(sb, "{:.6e}", if neg { -value } else { value });
        push_c_exponent(out, sb.as_bytes());
        return;
    }
    let mut fbuf = [0u8; 10];
    let mut flen = 0usize;
    let mut count = prec;
    if prec > 0 {
        while count > 0 && frac % 10 == 0 {
            count -= 1;
            frac /= 10;
        }
    }
    // Digits come out lowest first, as in the C code.
    while count > 0 {
        count -= 1;
        fbuf[flen] = b'0' + (frac % 10) as u8;
        flen += 1;
        frac /= 10;
    }
    if frac > 0 {
        whole += 1;
    }
    if neg {
        out.push(b'-');
    }
    write_i64(out, whole);
    if flen > 0 {
        out.push(b'.');
        for k in (0..flen).rev() {
            out.push(fbuf[k]);
        }
    }
}

/// Rewrites Rust's `1.5e3` exponent style into C's `1.5e+03`.
fn push_c_exponent(out: &mut Vec<u8>, s: &[u8]) {
    match s.iter().position(|&c| c == b'e') {
        None => out.extend_from_slice(s),
        Some(e) => {
            out.extend_from_slice(&s[..e]);
            let exp = &s[e + 1..];
            let (sign, digits) = match exp.first() {
                Some(b'-') => (b'-', &exp[1..]),
                _ => (b'+', exp),
            };
            out.push(b'e');
            out.push(sign);
            if digits.len() < 2 {
                out.push(b'0');
            }
            out.extend_from_slice(digits);
        }
    }
}

/// Decimal digits and exponent of `v` rounded to `p` significant digits:
/// `v ~= 0.d1d2d3... * 10^(exp+1)`, i.e. `d1.d2d3... * 10^exp`.
/// Trailing zeros may be absent from `digits`.
fn sig_digits(v: f64, p: usize, digits: &mut [u8; 40]) -> (usize, i32) {
    let a = v.abs();
    let mut sb = StackBuf::new();
    // Shortest round-trip digits equal the correctly rounded p digits whenever
    // they fit in p <= 15 digits (the half-ulp of a normal double is below half
    // a unit in the 15th digit), and they are much cheaper to compute.
    let mut use_exact = true;
    if p <= 15 && a >= f64::MIN_POSITIVE {
        let _ = write!(sb, "{:e}", a);
        let s = sb.as_bytes();
        let e = s.iter().position(|&c| c == b'e').unwrap_or(s.len());
        let ndig = s[..e].iter().filter(|c| c.is_ascii_digit()).count();
        if ndig <= p {
            use_exact = false;
        }
    }
    if use_exact {
        sb = StackBuf::new();
        let _ = write!(sb, "{:.*e}", p - 1, a);
    }
    let s = sb.as_bytes();
    let e = s.iter().position(|&c| c == b'e').unwrap_or(s.len());
    let mut n = 0usize;
    for &c in &s[..e] {
        if c.is_ascii_digit() && n < digits.len() {
            digits[n] = c;
            n += 1;
        }
    }
    let exp = std::str::from_utf8(&s[(e + 1).min(s.len())..])
        .ok()
        .and_then(|t| t.parse::<i32>().ok())
        .unwrap_or(0);
    (n, exp)
}

/// C's `printf("%.*g", prec, v)` for a finite double (glibc semantics:
/// correctly rounded, ties to even, trailing zeros removed).
pub fn write_g(out: &mut Vec<u8>, v: f64, prec: i32) {
    let p: usize = if prec < 0 {
        6
    } else if prec == 0 {
        1
    } else {
        prec as usize
    };
    if v.is_sign_negative() {
        out.push(b'-');
    }
    if v == 0.0 {
        out.push(b'0');
        return;
    }
    let mut d = [0u8; 40];
    let (n, x) = sig_digits(v, p.min(39), &mut d);
    // Drop trailing zeros (no '#' flag).
    let mut n = n;
    while n > 1 && d[n - 1] == b'0' {
        n -= 1;
    }
    if x < -4 || x >= p as i32 {
        out.push(d[0]);
        if n > 1 {
            out.push(b'.');
            out.extend_from_slice(&d[1..n]);
        }
        out.push(b'e');
        out.push(if x < 0 { b'-' } else { b'+' });
        let ax = x.unsigned_abs();
        if ax < 10 {
            out.push(b'0');
        }
        write_i64(out, ax as i64);
    } else if x >= 0 {
        let int_len = x as usize + 1;
        out.extend_from_slice(&d[..n.min(int_len)]);
        out.resize(out.len() + int_len.saturating_sub(n), b'0');
        if n > int_len {
            out.push(b'.');
            out.extend_from_slice(&d[int_len..n]);
        }
    } else {
        out.extend_from_slice(b"0.");
        for _ in 0..(-x - 1) {
            out.push(b'0');
        }
        out.extend_from_slice(&d[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: f64, d: Digits) -> String {
        let mut o = Vec::new();
        write_f64(&mut o, v, d);
        String::from_utf8(o).unwrap()
    }
    fn g(v: f64, p: i32) -> String {
        let mut o = Vec::new();
        write_g(&mut o, v, p);
        String::from_utf8(o).unwrap()
    }
    #[cfg(unix)]
    fn c_g(v: f64, p: i32) -> String {
        let mut buf = [0u8; 64];
        let fmt = b"%.*g\0";
        // SAFETY: buffer and format are valid, NUL terminated; snprintf bounds writes.
        let n = unsafe {
            libc::snprintf(
                buf.as_mut_ptr() as *mut libc::c_char,
                buf.len(),
                fmt.as_ptr() as *const libc::c_char,
                p as libc::c_int,
                v,
            )
        };
        String::from_utf8(buf[..n as usize].to_vec()).unwrap()
    }

    const D4: Digits = Digits::Decimal(4);

    #[test]
    fn jsonlite_default_digits() {
        // Expected values were produced by jsonlite 2.0.0 (toJSON / num_to_char).
        assert_eq!(f(-0.0, D4), "-0");
        assert_eq!(f(-0.00004, D4), "-0");
        assert_eq!(f(0.0, D4), "0");
        assert_eq!(f(1e-5, D4), "1e-05");
        assert_eq!(f(1e-6, D4), "1e-06");
        assert_eq!(f(123456.7891, D4), "123456.7891");
        assert_eq!(f(1e5, D4), "100000");
        assert_eq!(f(2f64.powi(53), D4), "9007199254740992");
        assert_eq!(f(1e-300, D4), "1e-300");
        assert_eq!(f(0.1 + 0.2, D4), "0.3");
        assert_eq!(f(2147483647.0, D4), "2147483647");
        assert_eq!(f(2147483646.5, D4), "2147483646.5");
        assert_eq!(f(1e20, D4), "1e+20");
        assert_eq!(f(-1e20, D4), "-1e+20");
        assert_eq!(f(std::f64::consts::PI, Digits::Max), "3.14159265358979");
        assert_eq!(f(std::f64::consts::PI, Digits::Significant(2)), "3.1");
        assert_eq!(f(123456789.123, Digits::Significant(3)), "1.23e+08");
        assert_eq!(f(std::f64::consts::PI * 1e6, Digits::Decimal(10)), "3141592.653589793");
        assert_eq!(f(std::f64::consts::PI, Digits::Decimal(0)), "3");
        assert_eq!(f(0.5, Digits::Decimal(0)), "0");
        assert_eq!(f(1.5, Digits::Decimal(0)), "2");
        assert_eq!(f(2.5, Digits::Decimal(0)), "2");
        assert_eq!(f(0.99999, Digits::Decimal(4)), "1");
        assert_eq!(f(-1.00005, Digits::Decimal(4)), "-1.0001");
        assert_eq!(f(10.0, D4), "10");
        assert_eq!(f(0.0001, D4), "0.0001");
        assert_eq!(f(0.00011, D4), "0.0001");
        assert_eq!(f(-2.5, D4), "-2.5");
    }

    #[test]
    fn modp_rounding_quirks() {
        let m = |v: f64, p: i32| {
            let mut o = Vec::new();
            modp_dtoa2(&mut o, v, p);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(m(0.05, 1), "0");
        assert_eq!(m(0.15, 1), "0.2");
        assert_eq!(m(0.25, 1), "0.2");
        assert_eq!(m(0.125, 2), "0.12");
        assert_eq!(m(0.375, 2), "0.38");
        assert_eq!(m(1.0005, 3), "1");
        assert_eq!(m(9.99999, 4), "10");
        assert_eq!(m(0.5, 0), "0");
        assert_eq!(m(3.5, 0), "4");
        assert_eq!(m(123.0, 4), "123");
        assert_eq!(m(0.01, 4), "0.01");
    }

    #[test]
    fn g_fixed_examples() {
        assert_eq!(g(100000.0, 15), "100000");
        assert_eq!(g(1e15, 15), "1e+15");
        assert_eq!(g(1e14, 15), "100000000000000");
        assert_eq!(g(0.0001, 15), "0.0001");
        assert_eq!(g(0.00001, 15), "1e-05");
        assert_eq!(g(5e-324, 15), "4.94065645841247e-324");
        assert_eq!(g(f64::MAX, 15), "1.79769313486232e+308");
        assert_eq!(g(-0.0, 5), "-0");
        assert_eq!(g(1.0, 0), "1");
        assert_eq!(g(123456.0, -1), "123456");
        assert_eq!(g(1234567.0, -1), "1.23457e+06");
        assert_eq!(g(0.125, 2), "0.12");
        assert_eq!(g(0.375, 2), "0.38");
        assert_eq!(g(2.5, 1), "2");
        assert_eq!(g(1e100, 17), "1e+100");
        assert_eq!(g(0.1, 17), "0.10000000000000001");
    }

    /// Deterministic xorshift so the sweep needs no crates.
    fn next(state: &mut u64) -> u64 {
        let mut x = *state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *state = x;
        x
    }

    #[test]
    #[cfg(unix)]
    fn g_matches_libc_snprintf() {
        let mut s = 0x9E3779B97F4A7C15u64;
        let mut checked = 0;
        for i in 0..400_000u64 {
            let r = next(&mut s);
            let v = match i % 4 {
                // Arbitrary bit patterns: all magnitudes, subnormals included.
                0 => f64::from_bits(r),
                // Short decimals, where exact ties and shortest forms abound.
                1 => (r % 2_000_000) as f64 / [1.0, 8.0, 100.0, 1000.0, 1024.0][(r >> 40) as usize % 5],
                2 => ((r % 100_000) as f64) * 10f64.powi((r >> 32) as i32 % 40 - 20),
                _ => (r as f64 / u64::MAX as f64 - 0.5) * 10f64.powi((r >> 20) as i32 % 30 - 10),
            };
            if !v.is_finite() {
                continue;
            }
            let p = [1, 2, 3, 4, 5, 6, 7, 10, 14, 15, 16, 17][(i as usize / 4) % 12];
            assert_eq!(g(v, p), c_g(v, p), "value {:e} ({:?}) precision {}", v, v.to_bits(), p);
            checked += 1;
        }
        assert!(checked > 300_000);
    }
}
