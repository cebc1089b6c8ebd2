//! Appending short byte strings to the output without a `memcpy` call each.
//!
//! The serializer appends millions of pieces of 1 to 20 bytes (numbers,
//! keys, short strings). `Vec::extend_from_slice` with a length unknown at
//! compile time calls `memcpy`, whose call and size dispatch cost more than
//! the copy itself; these helpers copy with a few fixed-size moves instead.

/// Appends `s`. Up to 16 bytes are copied with two overlapping fixed-size
/// moves; longer slices go through `extend_from_slice`.
#[inline(always)]
pub(crate) fn put(out: &mut Vec<u8>, s: &[u8]) {
    let n = s.len();
    if n > 16 {
        out.extend_from_slice(s);
        return;
    }
    out.reserve(16);
    let old = out.len();
    // SAFETY: `reserve(16)` leaves at least 16 writable bytes after `old`, and
    // every write below lands in `old..old + n` with n <= 16; every read is
    // within `s`. All of `old..old + n` is written before `set_len` exposes it.
    unsafe {
        let dst = out.as_mut_ptr().add(old);
        let src = s.as_ptr();
        if n >= 8 {
            let a = (src as *const u64).read_unaligned();
            let b = (src.add(n - 8) as *const u64).read_unaligned();
            (dst as *mut u64).write_unaligned(a);
            (dst.add(n - 8) as *mut u64).write_unaligned(b);
        } else if n >= 4 {
            let a = (src as *const u32).read_unaligned();
            let b = (src.add(n - 4) as *const u32).read_unaligned();
            (dst as *mut u32).write_unaligned(a);
            (dst.add(n - 4) as *mut u32).write_unaligned(b);
        } else if n > 0 {
            *dst = *src;
            *dst.add(n / 2) = *src.add(n / 2);
            *dst.add(n - 1) = *src.add(n - 1);
        }
        out.set_len(old + n);
    }
}

/// Lets `f` write up to `N` bytes straight into the end of `out` and keeps
/// the number of bytes it returns. Writing in place (after one wide zero
/// fill) avoids assembling the text on the stack and reloading it, which
/// stalls on store forwarding.
#[inline(always)]
pub(crate) fn in_place<const N: usize>(out: &mut Vec<u8>, f: impl FnOnce(&mut [u8; N]) -> usize) {
    let old = out.len();
    out.resize(old + N, 0);
    let len = match <&mut [u8; N]>::try_from(&mut out[old..]) {
        Ok(slot) => f(slot).min(N),
        Err(_) => 0,
    };
    out.truncate(old + len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_appends_exactly_the_slice() {
        let src: Vec<u8> = (0..40u8).collect();
        for start in 0..3 {
            for n in 0..=33 {
                let mut out = vec![0xAAu8; start];
                put(&mut out, &src[..n]);
                let mut want = vec![0xAAu8; start];
                want.extend_from_slice(&src[..n]);
                assert_eq!(out, want, "{start} + {n}");
                put(&mut out, &src[n..n + 3]);
                want.extend_from_slice(&src[n..n + 3]);
                assert_eq!(out, want);
            }
        }
        let mut out = b"abcxy".to_vec();
        in_place::<8>(&mut out, |b| {
            b[..2].copy_from_slice(b"!!");
            2
        });
        assert_eq!(out, b"abcxy!!");
    }
}
