//! Number formatting exactly as jsonlite's `num_to_char.c` does it.
//!
//! jsonlite picks one of three formatters per double: `modp_dtoa2` (fixed
//! decimals, trailing zeros dropped) for moderate magnitudes, C's `%.*g` for
//! everything else, and `%.15g` when `digits = NA`. Each is reproduced here
//! byte for byte; this module is where output differences would hide, so it
//! is tested against the C library's `snprintf` as well as fixed examples.

use std::fmt::Write as _;

use super::out::in_place;

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

/// Two decimal digits per entry: `DIGITS2[2 * n..2 * n + 2]` is `n` (00 to 99).
const DIGITS2: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes exactly `width` decimal digits of `u` (left-padded with zeros;
/// `u < 10^width`) into `dst`.
#[inline]
fn fixed_digits(dst: &mut [u8], mut u: u64) {
    let mut i = dst.len();
    while i >= 2 {
        let r = (u % 100) as usize;
        u /= 100;
        i -= 2;
        dst[i..i + 2].copy_from_slice(&DIGITS2[2 * r..2 * r + 2]);
    }
    if i == 1 {
        dst[0] = b'0' + (u % 10) as u8;
    }
}

/// Number of decimal digits of `u` (1 for 0).
#[inline(always)]
fn decimal_len(u: u64) -> usize {
    // floor(log10(2^bits)) + 1 is the length or one more; one comparison fixes it.
    let bits = 64 - (u | 1).leading_zeros() as usize;
    let d = ((bits * 1233) >> 12) + 1;
    (d - (u < POW10_U64[d - 1]) as usize).max(1)
}

/// Appends an R integer (not NA) in decimal, like `modp_itoa10`.
#[inline(always)]
pub fn write_i32(out: &mut Vec<u8>, v: i32) {
    write_i64(out, v as i64);
}

/// Appends a 64-bit integer in decimal.
#[inline(always)]
pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v.unsigned_abs() < 100_000_000 {
        out.reserve(SHORT_ROOM);
        // SAFETY: `reserve` leaves SHORT_ROOM writable bytes after the old
        // length; the value fits an i32, and `set_len` covers only the
        // bytes written.
        unsafe {
            if let Some(n) = write_i32_short(out.as_mut_ptr().add(out.len()), v as i32) {
                out.set_len(out.len() + n);
                return;
            }
        }
    }
    write_i64_long(out, v);
}

/// [`write_i64`] from 10^8 on.
#[inline(never)]
fn write_i64_long(out: &mut Vec<u8>, v: i64) {
    in_place::<24>(out, |buf| {
        let u = v.unsigned_abs();
        let neg = (v < 0) as usize;
        buf[0] = b'-';
        let w = decimal_len(u);
        fixed_digits(&mut buf[neg..neg + w], u);
        neg + w
    });
}

/// Appends a finite double the way jsonlite's `R_num_to_char` formats it.
/// Inlined, so the row loop reaches [`modp_dtoa2`]'s common case without a
/// call; the other formats are out of line.
#[inline(always)]
pub fn write_f64(out: &mut Vec<u8>, val: f64, digits: Digits) {
    if let Digits::Decimal(p) = digits {
        let a = val.abs();
        if p > -1 && p < 10 && a < 2147483647.0 && a > 1e-5 {
            return modp_dtoa2(out, val, p);
        }
    }
    write_f64_other(out, val, digits);
}

/// [`write_f64`] for significant digits, `digits = NA`, and magnitudes
/// jsonlite sends to `%g`.
#[inline(never)]
fn write_f64_other(out: &mut Vec<u8>, val: f64, digits: Digits) {
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

const POW10: [f64; 10] =
    [1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0, 1000000.0, 10000000.0, 100000000.0, 1000000000.0];

/// Port of `modp_dtoa2` from jsonlite's `modp_numtoa.c`: fixed decimals with
/// trailing zeros removed and its own round-half-to-even rule. Callers
/// guarantee `|value| < 2^31 - 1` and `0 <= prec <= 9`.
#[inline(always)]
pub fn modp_dtoa2(out: &mut Vec<u8>, value: f64, prec: i32) {
    if value.is_nan() || value.abs() > 2147483647.0 {
        return modp_unusual(out, value);
    }
    let prec = prec.clamp(0, 9) as usize;
    if prec == 0 {
        let neg = value < 0.0;
        let whole = value.abs() as i64;
        return modp_no_decimals(out, neg, whole, value.abs() - whole as f64);
    }
    let (neg, whole, frac) = modp_parts(value, prec);
    if prec <= 4 && whole < 10_000 {
        return modp_short(out, neg, whole, frac * POW10_U32[4 - prec]);
    }
    modp_long(out, neg, whole as i64, frac, prec);
}

/// `modp_dtoa2`'s sign, whole part and rounded decimals (`prec` of them,
/// 1 to 9), for a `value` that is not NaN and within +-(2^31 - 1).
#[inline(always)]
fn modp_parts(value: f64, prec: usize) -> (bool, u32, u32) {
    let neg = value < 0.0;
    let value = value.abs().min(2147483647.0);
    // Same float operations, in the same order, as the C code. The bound
    // keeps both conversions in range (0 <= value <= 2^31 - 1, and
    // 0 <= tmp < 10^9 below), so they need no saturation code.
    // SAFETY: `value` is in 0..=2147483647 (not NaN, by the contract), so
    // truncating it gives an `i32`.
    let whole0 = unsafe { value.to_int_unchecked::<i32>() };
    let tmp = (value - whole0 as f64) * POW10[prec];
    // The C code rounds `tmp` up past one half, and on exactly one half when
    // the kept digit is odd: round half to even, which adding and removing
    // 2^52 does in the FPU's default mode (0 <= tmp < 10^9 < 2^52), with no
    // branch on the data.
    // SAFETY: `tmp` is in 0..10^9 (a fraction times at most 10^9), and so
    // is its rounding, which fits a `u32`.
    let rounded: u32 = unsafe { ((tmp + 4503599627370496.0) - 4503599627370496.0).to_int_unchecked::<u32>() };
    // A fraction that rounds up to 1 carries into the whole part.
    let carry = rounded >= POW10_U32[prec];
    let whole = whole0 as u32 + carry as u32;
    (neg, whole, if carry { 0 } else { rounded })
}

/// Bytes [`write_f64_short`] and [`write_i32_short`] may write.
pub const SHORT_ROOM: usize = 16;

/// Writes `val` at `dst` when jsonlite would give it one to four decimals
/// and a whole part below 10^4 (its default format on everyday numbers),
/// returning the length; `None` (nothing of value written) for
/// [`write_f64`] to handle.
///
/// # Safety
/// `dst` must be valid for writes of [`SHORT_ROOM`] bytes.
#[inline(always)]
pub unsafe fn write_f64_short(dst: *mut u8, val: f64, digits: Digits) -> Option<usize> {
    let Digits::Decimal(p @ 1..=4) = digits else { return None };
    let a = val.abs();
    // Also false for NaN. Values that round to 0 at `p` decimals go to
    // [`write_f64`] too (same text), where the encoder notes them: rare, so
    // the short path stays free of that check.
    if !(a >= ZERO_BELOW[p as usize] && a < 10_000.0) {
        return None;
    }
    let (neg, whole, frac) = modp_parts(val, p as usize);
    if whole >= 10_000 {
        return None;
    }
    // SAFETY: the caller's contract.
    Some(unsafe { modp_short_at(dst, neg, whole, frac * POW10_U32[4 - p as usize]) })
}

/// Just above half a unit of the last of `p` decimal places (1 to 4): a
/// magnitude below it may be written as 0 (at exactly half, rounding goes
/// either way); one at or above it never is. `ZERO_BELOW[0]` is unused.
/// All above 1e-5, where jsonlite switches to significant digits, as the
/// short path requires.
const ZERO_BELOW: [f64; 5] = [f64::INFINITY, 0.050001, 0.0050001, 0.00050001, 0.000050001];

/// Whether `text`, the JSON [`write_f64`] wrote for the finite `val`, is a
/// zero that `val` is not: too few decimal places for a small number.
#[inline(always)]
pub fn zeroed(text: &[u8], val: f64) -> bool {
    matches!(text, b"0" | b"-0") && val != 0.0
}

/// Writes an integer below 10^8 in magnitude at `dst` and returns the
/// length; `None` for larger ones (see [`write_i64`]).
///
/// # Safety
/// `dst` must be valid for writes of [`SHORT_ROOM`] bytes.
#[inline(always)]
pub unsafe fn write_i32_short(dst: *mut u8, v: i32) -> Option<usize> {
    let u = v.unsigned_abs();
    if u >= 100_000_000 {
        return None;
    }
    // Eight digits at once, leading zeros cut by counting zero bytes.
    let d = digits8(u);
    let lead = ((d ^ 0x3030_3030_3030_3030).trailing_zeros() / 8).min(7) as usize;
    let sign = (v < 0) as usize;
    // SAFETY: the stores reach 1 + 8 bytes into the caller's 16.
    unsafe {
        *dst = b'-';
        (dst.add(sign) as *mut u64).write_unaligned((d >> (8 * lead)).to_le());
    }
    Some(sign + 8 - lead)
}

/// The usual case (jsonlite's default of 4 decimals, values below 10^4):
/// the whole part and the fraction, scaled to four decimals, as eight
/// digits in one word, without loops. Leading zeros of the whole part and
/// trailing zeros of the fraction (the C code's division loop) are cut by
/// counting zero bytes.
#[inline(always)]
fn modp_short(out: &mut Vec<u8>, neg: bool, whole: u32, frac4: u32) {
    out.reserve(SHORT_ROOM);
    // SAFETY: `reserve` leaves SHORT_ROOM writable bytes after the old
    // length, and `set_len` covers only the bytes written there.
    unsafe {
        let n = modp_short_at(out.as_mut_ptr().add(out.len()), neg, whole, frac4);
        out.set_len(out.len() + n);
    }
}

/// [`modp_short`] at `dst`, returning the length.
///
/// # Safety
/// `dst` must be valid for writes of [`SHORT_ROOM`] bytes.
#[inline(always)]
unsafe fn modp_short_at(dst: *mut u8, neg: bool, whole: u32, frac4: u32) -> usize {
    let d = digit_bytes(whole as u64 | (frac4 as u64) << 32);
    // Digit values per byte, so a zero byte is a '0'.
    let lead = ((d as u32).trailing_zeros() / 8).min(3) as usize;
    let trail = ((d >> 32) as u32).leading_zeros() as usize / 8;
    let d = d | 0x3030_3030_3030_3030;
    let sign = neg as usize;
    let int_end = sign + 4 - lead;
    let len = if trail < 4 { int_end + 5 - trail } else { int_end };
    // SAFETY: the stores reach at most 1 + 4 + 1 + 4 = 10 bytes into the
    // caller's 16.
    unsafe {
        *dst = b'-';
        (dst.add(sign) as *mut u32).write_unaligned(((d as u32) >> (8 * lead)).to_le());
        *dst.add(int_end) = b'.';
        (dst.add(int_end + 1) as *mut u32).write_unaligned(((d >> 32) as u32).to_le());
    }
    len
}

/// `prec = 0`: the C code rounds the whole part itself, half to even on its
/// own parity.
#[inline(never)]
fn modp_no_decimals(out: &mut Vec<u8>, neg: bool, whole: i64, tmp: f64) {
    let diff = tmp - (tmp as u32) as f64;
    let up = diff > 0.5 || (diff == 0.5 && (whole & 1) == 1);
    modp_text_slow(out, neg, whole + up as i64, 0, 0);
}

/// Five to eight decimals, or a whole part of five to eight digits: both
/// parts as eight digits each, as in [`modp_short`].
#[inline(never)]
fn modp_long(out: &mut Vec<u8>, neg: bool, whole: i64, frac: u32, prec: usize) {
    if prec <= 8 && whole < 100_000_000 {
        const ZEROS: u64 = 0x3030_3030_3030_3030;
        let w = digits8(whole as u32);
        let lead = ((w ^ ZEROS).trailing_zeros() / 8).min(7) as usize;
        // The last `prec` digits of the fraction, zero-padded.
        let f = digits8(frac) >> (8 * (8 - prec));
        let trail = ((f ^ (ZEROS >> (8 * (8 - prec)))).leading_zeros() as usize / 8) - (8 - prec);
        let sign = neg as usize;
        let int_end = sign + 8 - lead;
        let len = if trail < prec { int_end + 1 + prec - trail } else { int_end };
        out.reserve(24);
        // SAFETY: `reserve(24)` leaves at least 24 writable bytes after the
        // old length; the stores reach at most 1 + 8 + 1 + 8 = 18 bytes in,
        // and `set_len` covers only the `len` <= 18 bytes written before it
        // (sign, whole digits, point and fraction digits).
        unsafe {
            let dst = out.as_mut_ptr().add(out.len());
            *dst = b'-';
            (dst.add(sign) as *mut u64).write_unaligned((w >> (8 * lead)).to_le());
            *dst.add(int_end) = b'.';
            (dst.add(int_end + 1) as *mut u64).write_unaligned(f.to_le());
            out.set_len(out.len() + len);
        }
        return;
    }
    modp_text_slow(out, neg, whole, frac, prec);
}

/// NaN and values beyond `int`, which jsonlite's call site never passes:
/// the C code's "nan" and "%e" fallbacks (its rounding steps are skipped,
/// since their result is not used).
#[cold]
#[inline(never)]
fn modp_unusual(out: &mut Vec<u8>, value: f64) {
    if value.is_nan() {
        out.extend_from_slice(b"nan");
        return;
    }
    let mut sb = StackBuf::new();
    let _ = write!(sb, "{value:.6e}");
    push_c_exponent(out, sb.as_bytes());
}

/// The text of a rounded `modp_dtoa2` result outside the common case (no
/// decimals, 9 decimals, or a whole part of nine digits or more), as the C
/// code writes it.
#[inline(never)]
fn modp_text_slow(out: &mut Vec<u8>, neg: bool, mut whole: i64, mut frac: u32, prec: usize) {
    let mut count = prec;
    if prec > 0 {
        while count > 0 && frac % 10 == 0 {
            count -= 1;
            frac /= 10;
        }
    }
    // The C code writes `count` digits of `frac`, lowest first, then bumps
    // the whole part if anything is left over.
    let p10 = POW10_U32[count];
    // frac < 10^count always holds here (so no division is needed), but keep
    // the C code's carry for safety.
    let fdigits = if frac < p10 {
        frac
    } else {
        whole += (frac / p10 > 0) as i64;
        frac % p10
    };
    // Sign, up to 10 whole digits, the point and up to 9 decimals.
    in_place::<24>(out, |buf| modp_text(buf, neg, whole, count, fdigits));
}

/// The eight decimal digits of `n` (below 10^8, zero-padded) as ASCII, the
/// first digit in the lowest byte (so in memory order when stored little
/// endian).
#[inline(always)]
fn digits8(n: u32) -> u64 {
    let n = n as u64;
    // abcdefgh -> abcd | efgh << 32
    digit_bytes((n / 10_000) | ((n % 10_000) << 32)) | 0x3030_3030_3030_3030
}

/// Two numbers below 10^4, one per 32-bit lane, as four digit values
/// (0 to 9, not ASCII) per lane, the first digit in the lowest byte:
/// halves and digits split in parallel lanes, with multiply-shift divisions
/// exact for these ranges.
#[inline(always)]
fn digit_bytes(x: u64) -> u64 {
    // each lane abcd -> ab | cd << 16 (x * 10486 >> 20 is x / 100 below 10^4)
    let q = ((x * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let x = q | ((x - q * 100) << 16);
    // each 16-bit lane ab -> a | b << 8 (x * 103 >> 10 is x / 10 below 100)
    let q = ((x * 103) >> 10) & 0x000F_000F_000F_000F;
    q | ((x - q * 10) << 8)
}

/// The text of a `modp_dtoa2` result: sign, whole part, and `count` decimals.
#[inline(always)]
fn modp_text(buf: &mut [u8; 24], neg: bool, whole: i64, count: usize, fdigits: u32) -> usize {
    let mut len = 0;
    if neg {
        buf[0] = b'-';
        len = 1;
    }
    let w = decimal_len(whole as u64);
    fixed_digits(&mut buf[len..len + w], whole as u64);
    len += w;
    if count > 0 {
        buf[len] = b'.';
        fixed_digits(&mut buf[len + 1..len + 1 + count], fdigits as u64);
        len += 1 + count;
    }
    len
}

const POW10_U32: [u32; 10] = [1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000];

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

/// `5^k` for k = 0..=32 (5^32 < 2^75, so `m * 5^k` fits in 128 bits for a
/// 53-bit significand `m`).
const POW5: [u128; 33] = {
    let mut t = [1u128; 33];
    let mut k = 1;
    while k < 33 {
        t[k] = t[k - 1] * 5;
        k += 1;
    }
    t
};

/// `10^k` for k = 0..=19.
const POW10_U64: [u64; 20] = {
    let mut t = [1u64; 20];
    let mut k = 1;
    while k < 20 {
        t[k] = t[k - 1] * 10;
        k += 1;
    }
    t
};

/// `a` (finite, positive, normal) correctly rounded to `p` (1 to 17)
/// significant digits, ties to even on the exact binary value, as glibc's
/// `printf` rounds: returns `(q, x)` with `10^(p-1) <= q < 10^p` and
/// `a ~= q * 10^(x - p + 1)`. Exact integer arithmetic on the significand;
/// `None` when the value is outside the range this covers (subnormals, and
/// magnitudes where the scaling needs more than 128 bits), for the slow path.
#[inline]
fn sig_digits_int(a: f64, p: usize) -> Option<(u64, i32)> {
    use std::cmp::Ordering;
    if !(1..=17).contains(&p) || a.is_nan() || a < f64::MIN_POSITIVE || a.is_infinite() {
        return None;
    }
    let bits = a.to_bits();
    let m: u64 = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let e: i32 = ((bits >> 52) & 0x7ff) as i32 - 1075;
    // a = m * 2^e with 2^52 <= m < 2^53, so floor(log2 a) = e + 52 and
    // k = floor(log10(2^(e+52))) is floor(log10 a) or one less.
    let e2 = e + 52;
    let k = (e2 * 315653) >> 20;
    let s = p as i32 - 1 - k;
    // q0 = floor(a * 10^s), with 10^(p-1) <= q0 < 10^(p+1); `half` says how
    // the dropped remainder compares with one half, `exact` whether it is 0.
    let (q0, half, exact): (u64, Ordering, bool) = if s >= 0 {
        if s > 32 {
            return None;
        }
        let n = (m as u128) * POW5[s as usize];
        let t = e + s;
        if t >= 0 {
            if t >= 64 {
                return None;
            }
            let q = n << t;
            if q > u64::MAX as u128 {
                return None;
            }
            (q as u64, Ordering::Less, true)
        } else {
            let sh = (-t) as u32;
            if sh >= 128 {
                return None;
            }
            let q = n >> sh;
            if q > u64::MAX as u128 {
                return None;
            }
            let rem = n & ((1u128 << sh) - 1);
            let halfv = 1u128 << (sh - 1);
            (q as u64, rem.cmp(&halfv), rem == 0)
        }
    } else {
        let u = (-s) as usize;
        if u >= 20 {
            return None;
        }
        let den = POW10_U64[u];
        if e >= 0 {
            if e > 11 {
                // a >= 2^64: u128 division; rare enough for the slow path.
                return None;
            }
            let v = m << e;
            let rem = v % den;
            (v / den, (2 * rem as u128).cmp(&(den as u128)), rem == 0)
        } else {
            let sh = (-e) as u32;
            if sh >= 64 {
                return None;
            }
            let d = (den as u128) << sh;
            if d > u64::MAX as u128 {
                return None;
            }
            let d = d as u64;
            let rem = m % d;
            (m / d, (2 * rem as u128).cmp(&(d as u128)), rem == 0)
        }
    };
    let lim = POW10_U64[p];
    if q0 < POW10_U64[p - 1] || q0 / 10 >= lim {
        // The exponent estimate was off: leave it to the slow path.
        return None;
    }
    let (mut q, half, mut x) = if q0 >= lim {
        // One digit too many: drop it, folding it into the remainder.
        let dgt = q0 % 10;
        let h = match dgt.cmp(&5) {
            Ordering::Greater => Ordering::Greater,
            Ordering::Less => Ordering::Less,
            Ordering::Equal if exact => Ordering::Equal,
            Ordering::Equal => Ordering::Greater,
        };
        (q0 / 10, h, k + 1)
    } else {
        (q0, half, k)
    };
    if half == Ordering::Greater || (half == Ordering::Equal && q & 1 == 1) {
        q += 1;
        if q == lim {
            q = POW10_U64[p - 1];
            x += 1;
        }
    }
    Some((q, x))
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
    let exp = std::str::from_utf8(&s[(e + 1).min(s.len())..]).ok().and_then(|t| t.parse::<i32>().ok()).unwrap_or(0);
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
    // The text is built in a fixed buffer and appended in one move. At most
    // 39 digits, a sign, a point, "0." and 3 zeros, or an exponent: < 48.
    in_place::<48>(out, |buf| g_text(buf, v, p));
}

/// The text of `%.{p}g` for `v` in `buf`; returns its length.
#[inline(always)]
fn g_text(buf: &mut [u8; 48], v: f64, p: usize) -> usize {
    let mut len = 0;
    if v.is_sign_negative() {
        buf[0] = b'-';
        len = 1;
    }
    if v == 0.0 {
        buf[len] = b'0';
        return len + 1;
    }
    let mut d = [0u8; 40];
    let (n, x) = match sig_digits_int(v.abs(), p) {
        Some((q, x)) => {
            let n = decimal_len(q);
            fixed_digits(&mut d[..n], q);
            (n, x)
        }
        None => sig_digits(v, p.min(39), &mut d),
    };
    // Drop trailing zeros (no '#' flag).
    let mut n = n;
    while n > 1 && d[n - 1] == b'0' {
        n -= 1;
    }
    if x < -4 || x >= p as i32 {
        buf[len] = d[0];
        len += 1;
        if n > 1 {
            buf[len] = b'.';
            buf[len + 1..len + n].copy_from_slice(&d[1..n]);
            len += n;
        }
        buf[len] = b'e';
        buf[len + 1] = if x < 0 { b'-' } else { b'+' };
        len += 2;
        let ax = x.unsigned_abs() as usize;
        if ax >= 100 {
            buf[len] = b'0' + (ax / 100) as u8;
            len += 1;
        }
        let r = ax % 100;
        buf[len..len + 2].copy_from_slice(&DIGITS2[2 * r..2 * r + 2]);
        len += 2;
    } else if x >= 0 {
        let int_len = x as usize + 1;
        let k = n.min(int_len);
        buf[len..len + k].copy_from_slice(&d[..k]);
        len += k;
        for _ in n..int_len {
            buf[len] = b'0';
            len += 1;
        }
        if n > int_len {
            buf[len] = b'.';
            buf[len + 1..len + 1 + n - int_len].copy_from_slice(&d[int_len..n]);
            len += 1 + n - int_len;
        }
    } else {
        buf[len] = b'0';
        buf[len + 1] = b'.';
        len += 2;
        for _ in 0..(-x - 1) {
            buf[len] = b'0';
            len += 1;
        }
        buf[len..len + n].copy_from_slice(&d[..n]);
        len += n;
    }
    len
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
    fn decimal_lengths() {
        assert_eq!(decimal_len(0), 1);
        for (k, &p) in POW10_U64.iter().enumerate().take(20) {
            assert_eq!(decimal_len(p), k + 1, "10^{k}");
            if p > 1 {
                assert_eq!(decimal_len(p - 1), k, "10^{k} - 1");
            }
        }
        assert_eq!(decimal_len(u64::MAX), 20);
    }

    #[test]
    fn integers_match_rust_formatting() {
        let check = |v: i64| {
            let mut o = b"x".to_vec();
            write_i64(&mut o, v);
            assert_eq!(&o[1..], v.to_string().as_bytes(), "{v}");
        };
        (-1_000_000..=1_000_000).for_each(check);
        (-100_000_100..=100_000_100).step_by(97).for_each(check);
        let edges = [99_999_999, 100_000_000, 10_000_000, 2147483647, -2147483647, i64::MAX, i64::MIN, i64::MIN + 1];
        edges.into_iter().for_each(check);
        let mut o = Vec::new();
        write_i32(&mut o, -2147483647);
        assert_eq!(o, b"-2147483647");
    }

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

    /// Values where a formatter is most likely to go wrong: powers of ten and
    /// of two and their neighbours, exact ties at every digit position,
    /// integers past 2^53 and 2^64, subnormals, the extremes.
    fn hard_values() -> Vec<f64> {
        let mut v = vec![0.0, -0.0, f64::MIN_POSITIVE, 5e-324, f64::MAX, f64::EPSILON, 0.1, 0.2, 0.3];
        for k in -325..=308 {
            let x: f64 = format!("1e{k}").parse().unwrap_or(0.0);
            v.extend([x, x * 5.0, x * 9.5, x * 1.5]);
            if x > 0.0 && x.is_finite() {
                v.extend([f64::from_bits(x.to_bits() - 1), f64::from_bits(x.to_bits() + 1)]);
            }
        }
        for k in -1074..=1023 {
            let x = 2f64.powi(k);
            v.extend([x, x * 1.5, x * 3.0]);
        }
        // Exact binary ties: n + 1/2, n/4, n/8 ... at many magnitudes.
        for n in [1u64, 3, 5, 25, 125, 12345, 999_999, 123_456_789, 99_999_999_999] {
            for sh in 1..12 {
                v.push(n as f64 / (1u64 << sh) as f64);
                v.push((n as f64 + 0.5) * 10f64.powi(sh));
            }
        }
        // Integers around 2^53, 2^63 and 2^64, and 17-digit ones.
        for base in [2f64.powi(53), 2f64.powi(63), 2f64.powi(64), 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23] {
            let mut x = base;
            for _ in 0..8 {
                v.push(x);
                x = f64::from_bits(x.to_bits() + 1);
            }
            let mut x = base;
            for _ in 0..8 {
                x = f64::from_bits(x.to_bits() - 1);
                v.push(x);
            }
        }
        for i in 0..2000u64 {
            v.push(i as f64 * 0.005); // 0.005 steps: decimal midpoints at 2 digits
            v.push(i as f64 + 0.5);
            v.push(0.000015 * i as f64);
            v.push(9.5 * 10f64.powi((i % 40) as i32 - 20));
        }
        v.retain(|x| x.is_finite());
        let neg: Vec<f64> = v.iter().map(|x| -x).collect();
        v.extend(neg);
        v
    }

    #[test]
    fn g_matches_libc_on_hard_values_for_every_precision() {
        let vals = hard_values();
        for p in 0..=17 {
            for &x in &vals {
                assert_eq!(g(x, p), c_g(x, p), "value {:e} ({:#x}) precision {}", x, x.to_bits(), p);
            }
        }
    }

    #[test]
    fn integer_digit_path_covers_ordinary_numbers() {
        // The exact integer path must handle the magnitudes real data has, so
        // the slow core::fmt path is only for the extremes.
        for x in [1e-12, 3.7e-9, 0.000123, 0.5, 1.0, 2.5049, 123456.789, 2147483647.5, 9.007e15, 1.8e19] {
            for p in 1..=17 {
                assert!(sig_digits_int(x, p).is_some(), "{x} at {p} digits");
            }
        }
        assert!(sig_digits_int(5e-324, 15).is_none());
        assert_eq!(sig_digits_int(0.125, 2), Some((12, -1)));
        assert_eq!(sig_digits_int(0.375, 2), Some((38, -1)));
        assert_eq!(sig_digits_int(9.995, 3), Some((999, 0))); // 9.995 is below the tie in binary
        assert_eq!(sig_digits_int(99.5, 2), Some((10, 2)));
    }

    #[test]
    fn eight_digits_at_once() {
        let check = |n: u32| {
            let got = digits8(n).to_le_bytes();
            assert_eq!(&got, format!("{n:08}").as_bytes(), "{n}");
        };
        // Every value below 10^6, then every 97th one up to 10^8.
        (0..1_000_000).for_each(check);
        (1_000_000..100_000_000).step_by(97).for_each(check);
        [99_999_999, 10_000_000, 99_990_000, 12_345_678, 90_000_009].into_iter().for_each(check);
        // Two numbers at once, as modp_short uses it: every value in each lane.
        for n in 0..10_000u64 {
            let other = (n * 7919) % 10_000;
            let got = (digit_bytes(n | other << 32) | 0x3030_3030_3030_3030).to_le_bytes();
            assert_eq!(&got, format!("{n:04}{other:04}").as_bytes(), "{n}");
        }
    }

    #[test]
    fn dtoa2_matches_the_c_loop_transcribed() {
        // modp_dtoa2 must keep the C code's float steps; compare with a
        // direct transcription of the original loop on many values.
        fn reference(value: f64, prec: usize) -> String {
            let (neg, value) = if value < 0.0 { (true, -value) } else { (false, value) };
            let mut whole = value as i32 as i64;
            let tmp = (value - whole as f64) * POW10[prec];
            let mut frac = tmp as u32;
            let diff = tmp - frac as f64;
            // The C code's three rounding branches, which all round up.
            let round_up = diff > 0.5
                || (diff == 0.5 && prec > 0 && (frac & 1) == 1)
                || (diff == 0.5 && prec == 0 && (whole & 1) == 1);
            if round_up {
                frac += 1;
                if frac as f64 >= POW10[prec] {
                    frac = 0;
                    whole += 1;
                }
            }
            let mut s = Vec::new();
            let mut count = prec;
            if prec > 0 {
                while count > 0 && frac % 10 == 0 {
                    count -= 1;
                    frac /= 10;
                }
            }
            let mut fr = Vec::new();
            while count > 0 {
                count -= 1;
                fr.push(b'0' + (frac % 10) as u8);
                frac /= 10;
            }
            if frac > 0 {
                whole += 1;
            }
            if neg {
                s.push(b'-');
            }
            s.extend(whole.to_string().bytes());
            if !fr.is_empty() {
                s.push(b'.');
                fr.reverse();
                s.extend(fr);
            }
            String::from_utf8(s).unwrap()
        }
        let mut st = 0x2545F4914F6CDD1Du64;
        for i in 0..300_000u64 {
            let r = next(&mut st);
            let v = match i % 3 {
                0 => (r % 4_000_000_000) as f64 / 1.7 - 1e9,
                1 => (r % 2_000_000) as f64 / [2.0, 8.0, 100.0, 1000.0, 1e5, 1e7][(r >> 40) as usize % 6],
                _ => (r as f64 / u64::MAX as f64 - 0.5) * 10f64.powi((r >> 20) as i32 % 10),
            };
            let prec = (i as usize / 3) % 10;
            let mut o = Vec::new();
            modp_dtoa2(&mut o, v, prec as i32);
            assert_eq!(String::from_utf8(o).unwrap(), reference(v, prec), "value {v:e} prec {prec}");
        }
        // Exact halves at every precision (round half to even on the kept
        // digit, or on the whole part with no decimals) and carries into the
        // whole part.
        for m in 1..=12 {
            for k in 0..300i64 {
                for (v, prec) in (0..10).flat_map(|p| {
                    let x = k as f64 / (1u64 << m) as f64 + (k % 7) as f64;
                    [(x, p), (-x, p), (x / POW10[p], p), (1.0 - 0.4 / POW10[p] - k as f64 * 1e-12, p)]
                }) {
                    let mut o = Vec::new();
                    modp_dtoa2(&mut o, v, prec as i32);
                    assert_eq!(String::from_utf8(o).unwrap(), reference(v, prec), "value {v:e} prec {prec}");
                }
            }
        }
        // Where the number of whole digits changes (the four-digit and
        // eight-digit paths end there), rounding up or not, either sign.
        for w in [0.0, 9.0, 99.0, 999.0, 9999.0, 99_999.0, 9_999_999.0, 99_999_999.0, 999_999_999.0] {
            for (prec, p10) in POW10.iter().enumerate() {
                for d in [0.4, 0.5, 0.6, 1.0, 3.0] {
                    for v in [w + 1.0 - d / p10, w + d / p10, w + 1.0, w] {
                        for v in [v, -v] {
                            let mut o = Vec::new();
                            modp_dtoa2(&mut o, v, prec as i32);
                            assert_eq!(String::from_utf8(o).unwrap(), reference(v, prec), "value {v:e} prec {prec}");
                        }
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]
        #[test]
        fn g_matches_libc_for_any_double(bits in proptest::prelude::any::<u64>(), p in 0i32..=17) {
            let x = f64::from_bits(bits);
            if x.is_finite() {
                proptest::prop_assert_eq!(g(x, p), c_g(x, p));
            }
        }

        #[test]
        fn g_matches_libc_for_short_decimals(n in -10_000_000i64..10_000_000, sc in -25i32..25, p in 1i32..=17) {
            let x = n as f64 * 10f64.powi(sc);
            proptest::prop_assert_eq!(g(x, p), c_g(x, p));
        }
    }
}
