//! R strings entering Rust: one rule for each direction of meaning.
//!
//! * [`text`] / [`texts`]: text that goes into the protocol (a tool name, a
//!   method, JSON text) is UTF-8, translated from the string's encoding as
//!   `enc2utf8()` does (Latin-1, the native encoding). A string marked
//!   "bytes" is taken when its bytes are UTF-8 and refused otherwise (R
//!   cannot say what they mean).
//! * [`os_string`] / [`os_strings`] / [`path`]: file paths, program
//!   arguments and environment variables reach the operating system as R's
//!   own file functions pass them: in the native encoding (unix: the
//!   session's bytes, via `translateChar`; Windows: wide strings, from UTF-8).
//!
//! No entry point takes `&str` (or `as_str()`) from R: extendr reads a
//! string's bytes as they are, whatever its encoding, so a Latin-1 string
//! would become invalid UTF-8 inside a `&str`.

use crate::ffi;
use extendr_api::prelude::*;
use extendr_ffi::{cetype_t, SEXP, SEXPTYPE};
use std::ffi::OsString;
use std::os::raw::c_char;
use std::path::PathBuf;

/// The bytes of a CHARSXP as R stores them.
///
/// # Safety
/// `ch` must be a live CHARSXP other than `NA_character_`, outliving the borrow.
unsafe fn stored_bytes<'a>(ch: SEXP) -> &'a [u8] {
    // SAFETY: a live CHARSXP (the caller's contract): R_CHAR points at its
    // LENGTH bytes, which live as long as it does.
    unsafe {
        let n = extendr_ffi::LENGTH(ch).max(0) as usize;
        let p = extendr_ffi::R_CHAR(ch) as *const u8;
        if n == 0 || p.is_null() {
            &[]
        } else {
            std::slice::from_raw_parts(p, n)
        }
    }
}

/// Runs one of R's translations (`translateChar*`) of `ch` under error
/// protection and copies the result, releasing R's scratch memory at once;
/// R's message when it failed.
///
/// # Safety
/// `ch` must be a live CHARSXP other than `NA_character_`.
unsafe fn translated(ch: SEXP, translate: unsafe extern "C" fn(SEXP) -> *const c_char) -> Result<Vec<u8>, String> {
    // SAFETY: the translation reads a live CHARSXP (the caller's contract)
    // and returns a NUL-terminated string in R's transient memory, valid
    // until vmaxset, which runs only after the copy.
    let out = ffi::protected(|| unsafe {
        let top = ffi::vmaxget();
        let t = translate(ch);
        let bytes = if t.is_null() { Vec::new() } else { std::ffi::CStr::from_ptr(t).to_bytes().to_vec() };
        ffi::vmaxset(top);
        bytes
    });
    out.ok_or_else(ffi::last_error_message)
}

/// What `what` is, for messages: "`name`" or "`args[2]`".
fn place(what: &str, i: usize, n: usize) -> String {
    if n == 1 {
        format!("`{what}`")
    } else {
        format!("`{what}[{}]`", i + 1)
    }
}

/// The UTF-8 text of a CHARSXP (not `NA`), for the protocol.
///
/// # Safety
/// `ch` must be a live CHARSXP other than `NA_character_`.
unsafe fn charsxp_text(ch: SEXP, at: &str) -> Result<String, String> {
    // SAFETY: the caller's contract, passed on.
    let stored = unsafe { stored_bytes(ch) };
    // SAFETY: reads the encoding bits of a live CHARSXP.
    let ce = unsafe { ffi::Rf_getCharCE(ch) };
    let bytes = if stored.is_ascii() || matches!(ce, cetype_t::CE_UTF8 | cetype_t::CE_BYTES) {
        stored.to_vec()
    } else {
        // Latin-1 or native: R translates (a native string in a UTF-8
        // session comes back as it is).
        // SAFETY: the caller's contract, passed on.
        unsafe { translated(ch, ffi::Rf_translateCharUTF8) }
            .map_err(|e| format!("{at} could not be translated to UTF-8: {e}"))?
    };
    String::from_utf8(bytes).map_err(|_| {
        if matches!(ce, cetype_t::CE_BYTES) {
            format!(
                "{at} is marked as \"bytes\" and is not valid UTF-8: give its encoding \
                 (`Encoding(x) <- \"latin1\"`) or convert it with `iconv()`"
            )
        } else {
            format!("{at} is not valid text in its declared encoding (it is not valid UTF-8 after translation)")
        }
    })
}

/// The native-encoding bytes of a CHARSXP (not `NA`), for the operating
/// system: what R's file functions pass. A string marked "bytes" is its
/// bytes (`translateChar` refuses those; for a file name they are exactly
/// what is meant).
///
/// # Safety
/// `ch` must be a live CHARSXP other than `NA_character_`.
unsafe fn charsxp_native(ch: SEXP, at: &str) -> Result<Vec<u8>, String> {
    // SAFETY: the caller's contract, passed on.
    let stored = unsafe { stored_bytes(ch) };
    // SAFETY: reads the encoding bits of a live CHARSXP.
    let ce = unsafe { ffi::Rf_getCharCE(ch) };
    if stored.is_ascii() || matches!(ce, cetype_t::CE_BYTES | cetype_t::CE_NATIVE) {
        return Ok(stored.to_vec());
    }
    // SAFETY: the caller's contract, passed on.
    unsafe { translated(ch, ffi::Rf_translateChar) }
        .map_err(|e| format!("{at} could not be translated to the session's encoding: {e}"))
}

/// Each element of character vector `x` through `read`; `NA` is refused.
fn each<T>(x: &Robj, what: &str, read: impl Fn(SEXP, &str) -> Result<T, String>) -> Result<Vec<T>, String> {
    // SAFETY: reading the type and length of a live object.
    let sexp = unsafe { x.get() };
    // SAFETY: as above.
    if unsafe { extendr_ffi::TYPEOF(sexp) } != SEXPTYPE::STRSXP {
        return Err(format!("`{what}` must be a character vector"));
    }
    // SAFETY: a character vector: its length.
    let n = unsafe { extendr_ffi::Rf_xlength(sexp) }.max(0) as usize;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: an index below the length of a character vector; the
        // CHARSXP lives as long as `x`.
        let ch = unsafe { extendr_ffi::STRING_ELT(sexp, i as isize) };
        let at = place(what, i, n);
        // SAFETY: R_NaString is a global constant.
        if ch == unsafe { extendr_ffi::R_NaString } {
            return Err(format!("{at} must not be NA"));
        }
        out.push(read(ch, &at)?);
    }
    Ok(out)
}

/// A single string, for the protocol, as UTF-8.
pub fn text(x: &Robj, what: &str) -> Result<String, String> {
    let mut v = texts(x, what)?;
    match (v.pop(), v.is_empty()) {
        (Some(s), true) => Ok(s),
        _ => Err(format!("`{what}` must be a single string")),
    }
}

/// A character vector, for the protocol, as UTF-8.
pub fn texts(x: &Robj, what: &str) -> Result<Vec<String>, String> {
    each(x, what, |ch, at| {
        // SAFETY: `each` hands over live CHARSXPs other than NA.
        unsafe { charsxp_text(ch, at) }
    })
}

/// A character vector, for the operating system (arguments, environment).
pub fn os_strings(x: &Robj, what: &str) -> Result<Vec<OsString>, String> {
    each(x, what, |ch, at| {
        // SAFETY: `each` hands over live CHARSXPs other than NA.
        let native = || unsafe { charsxp_native(ch, at) };
        // SAFETY: as above.
        let utf8 = || unsafe { charsxp_text(ch, at) };
        crate::platform::os_string(native, utf8)
    })
}

/// A single string, for the operating system.
pub fn os_string(x: &Robj, what: &str) -> Result<OsString, String> {
    let mut v = os_strings(x, what)?;
    match (v.pop(), v.is_empty()) {
        (Some(s), true) => Ok(s),
        _ => Err(format!("`{what}` must be a single string")),
    }
}

/// A file path, as R's file functions would open it.
pub fn path(x: &Robj, what: &str) -> Result<PathBuf, String> {
    os_string(x, what).map(PathBuf::from)
}

/// A string from the operating system (a path) as an R string: marked
/// native on unix (the bytes R's file functions give back), UTF-8 on Windows.
pub fn from_os(s: &std::ffi::OsStr) -> Result<Robj, String> {
    let (bytes, ce) = match crate::platform::os_text(s) {
        crate::platform::OsText::Native(b) => (b, cetype_t::CE_NATIVE),
        crate::platform::OsText::Utf8(t) => (t.into_bytes(), cetype_t::CE_UTF8),
    };
    if bytes.contains(&0) || bytes.len() > i32::MAX as usize {
        return Err(format!("the path {} cannot be an R string", s.to_string_lossy()));
    }
    // SAFETY: allocations under protection; the bytes hold no NUL and their
    // length fits an int (checked above); the CHARSXP is stored into the
    // protected vector as soon as it is made.
    ffi::make(|| unsafe {
        let x = extendr_ffi::Rf_protect(extendr_ffi::Rf_allocVector(SEXPTYPE::STRSXP, 1));
        let ch = extendr_ffi::Rf_mkCharLenCE(bytes.as_ptr() as *const c_char, bytes.len() as i32, ce);
        extendr_ffi::SET_STRING_ELT(x, 0, ch);
        extendr_ffi::Rf_unprotect(1);
        x
    })
    .map(Robj::from)
    .map_err(|e| format!("R could not make a string of the path {}: {e}", s.to_string_lossy()))
}
