//! The few R C API entry points `extendr_ffi` does not declare, and the
//! ways this crate calls into R safely (ARCHITECTURE.md, "Calling R safely").
//!
//! An R error is a `longjmp`: if one happened inside a Rust frame it would
//! skip that frame without unwinding it, which Rust does not allow. So every
//! R API call made while serving either cannot fail (type and bounds are
//! checked first, e.g. `STRING_ELT` only on a character vector and an index
//! below its length) or runs under R's own error protection: [`protected`]
//! for C API calls that can fail, [`make`] for those that make an object
//! (kept as a [`Kept`], preserved under the same protection), [`call`] for
//! evaluating R code. Failures carry R's message ([`RFailure`]).

use extendr_api::prelude::*;
use extendr_ffi::{cetype_t, Rboolean, SEXP, SEXPTYPE};
use std::borrow::Cow;
use std::ffi::c_void;
use std::os::raw::{c_char, c_int};

// SEXP is an opaque pointer to R's SEXPREC; only R dereferences it.
#[allow(improper_ctypes)]
extern "C" {
    // Read-only data pointers: unlike LOGICAL(), INTEGER(), ..., they never
    // ask an ALTREP object for writable data (which may allocate and drops
    // what the object knows about itself, such as sortedness).
    pub fn LOGICAL_RO(x: SEXP) -> *const c_int;
    pub fn INTEGER_RO(x: SEXP) -> *const c_int;
    pub fn REAL_RO(x: SEXP) -> *const f64;
    pub fn RAW_RO(x: SEXP) -> *const u8;
    pub fn COMPLEX_RO(x: SEXP) -> *const extendr_ffi::Rcomplex;
    pub fn Rf_getCharCE(x: SEXP) -> cetype_t;
    pub fn Rf_translateCharUTF8(x: SEXP) -> *const c_char;
    pub fn Rf_translateChar(x: SEXP) -> *const c_char;
    pub fn vmaxget() -> *mut c_void;
    pub fn vmaxset(p: *const c_void);
    pub fn Rf_type2char(t: SEXPTYPE) -> *const c_char;
    pub fn R_ToplevelExec(fun: Option<unsafe extern "C" fn(*mut c_void)>, data: *mut c_void) -> Rboolean;
    fn R_CheckUserInterrupt();
    /// A new JSON text object holding a copy of the bytes, written from
    /// `source` (src/altjson.c); allocates, so only under [`protected`].
    pub fn mcplite_json_text(bytes: *const u8, len: isize, source: SEXP) -> SEXP;
    /// The bytes of a JSON text object R code cannot have changed; 0 for any
    /// other object. Never allocates or fails.
    pub fn mcplite_json_bytes(x: SEXP, bytes: *mut *const u8, len: *mut isize) -> c_int;
    /// 1 if `x` is a JSON text object R code cannot have changed, written
    /// from `value` itself. Never allocates or fails.
    pub fn mcplite_json_written_from(x: SEXP, value: SEXP) -> c_int;
    /// 1: reads from R's console fail with an R error; 0: they work again
    /// (src/console.c). Returns 1 if it changed anything. Never fails.
    pub fn mcplite_console_reads_fail(on: c_int) -> c_int;
    /// How many console reads were refused since it was last asked; resets
    /// the count (src/console.c). Never fails.
    pub fn mcplite_console_reads_refused() -> c_int;
}

/// Runs `f` under R's error protection (`R_ToplevelExec`): if R signals an
/// error or an interrupt inside, `f` is abandoned and `None` returned
/// instead of R jumping over Rust frames.
///
/// `f` must only make R API calls on plain data: the frames an R error
/// abandons are not unwound, so anything they own that needs dropping would
/// leak, and a panic inside would abort the process.
pub fn protected<T, F: FnOnce() -> T>(f: F) -> Option<T> {
    struct Slot<F, T> {
        f: Option<F>,
        out: Option<T>,
    }
    unsafe extern "C" fn trampoline<F: FnOnce() -> T, T>(data: *mut c_void) {
        // SAFETY: `data` is the `Slot` below, alive for the whole call.
        let slot = unsafe { &mut *(data as *mut Slot<F, T>) };
        if let Some(f) = slot.f.take() {
            slot.out = Some(f());
        }
    }
    let mut slot = Slot { f: Some(f), out: None };
    // SAFETY: the trampoline receives a pointer to `slot`, which outlives the
    // call; R_ToplevelExec returns normally whatever happens inside.
    let ok = unsafe { R_ToplevelExec(Some(trampoline::<F, T>), &mut slot as *mut Slot<F, T> as *mut c_void) };
    if ok == Rboolean::TRUE {
        slot.out
    } else {
        None
    }
}

/// How R failed under protection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RFailure {
    /// An R error, with R's message (what `geterrmessage()` gives, without
    /// its "Error: " prefix).
    Error(String),
    /// A user interrupt while a tool ran (see [`call_for_tool`]).
    Interrupted,
}

impl std::fmt::Display for RFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RFailure::Error(message) => f.write_str(message),
            RFailure::Interrupted => f.write_str("R was interrupted"),
        }
    }
}

/// An R object the glue made (arguments, a tool's value, strings for R
/// calls), kept from R's garbage collector on R's own list of preserved
/// objects (`R_PreserveObject`) for as long as this lives, and read as an
/// `&Robj`. Not an `Robj`: every `Robj` is an entry in extendr's
/// process-wide ownership table, which keeps an entry for each object it
/// ever held, spread over a hash table of 100,000 slots (3.2 MB), so the
/// objects a server makes per call had touched every page of it within a
/// few hundred calls (bench/README.md, "Memory"). R's list holds what is
/// kept now and nothing after.
pub struct Kept(SEXP);

impl Kept {
    /// An extendr `Robj` of the same object, for code that stores one.
    pub fn to_robj(&self) -> Robj {
        (**self).clone()
    }

    /// R's `NULL` (a constant: nothing to keep).
    pub fn null() -> Kept {
        // SAFETY: R_NilValue is a global constant.
        Kept(unsafe { extendr_ffi::R_NilValue })
    }
}

impl From<Kept> for Robj {
    fn from(kept: Kept) -> Robj {
        kept.to_robj()
    }
}

impl std::ops::Deref for Kept {
    type Target = Robj;
    fn deref(&self) -> &Robj {
        // SAFETY: the object is preserved while `self` is borrowed.
        unsafe { as_robj(&self.0) }
    }
}

/// A live R object read as an `&Robj` without an entry in extendr's table.
///
/// # Safety
/// The object must stay alive (protected, preserved, or a `.Call`'s
/// argument) for as long as the reference is used.
pub unsafe fn as_robj(sexp: &SEXP) -> &Robj {
    // SAFETY: `Robj` is `#[repr(transparent)]` over `SEXP`, so a reference to
    // the SEXP is a valid reference to an `Robj`; the caller keeps the object
    // alive, and a reference is never dropped, so extendr never releases an
    // object it did not protect.
    unsafe { &*(sexp as *const SEXP as *const Robj) }
}

impl Drop for Kept {
    fn drop(&mut self) {
        // SAFETY: the object was preserved once when this was made (see
        // `preserve`), unless it is NULL; releasing never allocates or fails.
        unsafe {
            if self.0 != extendr_ffi::R_NilValue {
                extendr_ffi::R_ReleaseObject(self.0)
            }
        }
    }
}

/// Preserves `sexp`, which the caller keeps protected (not `NULL`, a
/// constant). Allocates (one pairlist cell), so only under [`protected`];
/// `Kept` releases it.
unsafe fn preserve(sexp: SEXP) -> SEXP {
    // SAFETY: the caller's contract.
    unsafe {
        if sexp != extendr_ffi::R_NilValue {
            extendr_ffi::R_PreserveObject(sexp)
        }
    };
    sexp
}

/// Keeps a live object (one R holds now, such as a `.Call`'s argument or an
/// element of one) for as long as the `Kept` lives.
pub fn keep(robj: &Robj) -> Result<Kept, RFailure> {
    // SAFETY: reads the SEXP of a live object, which `make` protects first.
    make(|| unsafe { robj.get() })
}

/// Runs `make` under [`protected`] and keeps the object it returns
/// ([`Kept`]). It is protected before anything else allocates and preserved
/// under the same protection, so an R error anywhere leaves nothing kept.
/// The one place where code run under protection becomes a kept object.
pub fn make(make: impl FnOnce() -> SEXP) -> Result<Kept, RFailure> {
    // SAFETY: `make` returns a live object, protected before anything else
    // allocates and until it is preserved.
    let kept = protected(|| unsafe {
        let x = extendr_ffi::Rf_protect(make());
        preserve(x);
        extendr_ffi::Rf_unprotect(1);
        x
    });
    match kept {
        Some(sexp) => Ok(Kept(sexp)),
        None => Err(RFailure::Error(last_error_message())),
    }
}

/// R's message for the error it signalled last (R keeps it for
/// `geterrmessage()`), as the one line a tool error or a log can show.
pub fn last_error_message() -> String {
    const UNKNOWN: &str = "R signalled an error";
    // SAFETY: a call to a base function with no arguments, built and
    // evaluated under protection; the value is protected until preserved.
    let text = protected(|| unsafe {
        let fun = extendr_ffi::Rf_install(c"geterrmessage".as_ptr());
        let call = extendr_ffi::Rf_protect(extendr_ffi::Rf_lang1(fun));
        let mut failed: c_int = 0;
        let value = extendr_ffi::R_tryEval(call, extendr_ffi::R_BaseEnv, &mut failed);
        extendr_ffi::Rf_unprotect(1);
        let value = extendr_ffi::Rf_protect(if failed == 0 { value } else { extendr_ffi::R_NilValue });
        preserve(value);
        extendr_ffi::Rf_unprotect(1);
        value
    });
    let Some(text) = text else { return UNKNOWN.to_string() };
    let text = Kept(text);
    // SAFETY: `text` is a live object kept above; its type and length are
    // checked before its first element is read, and the bytes are copied
    // before `text` is released.
    let bytes = unsafe {
        let sexp = text.0;
        if extendr_ffi::TYPEOF(sexp) != SEXPTYPE::STRSXP || extendr_ffi::Rf_xlength(sexp) != 1 {
            return UNKNOWN.to_string();
        }
        charsxp_utf8(extendr_ffi::STRING_ELT(sexp, 0)).map(|b| String::from_utf8_lossy(&b).into_owned())
    };
    let Some(text) = bytes else { return UNKNOWN.to_string() };
    error_text(&text).unwrap_or_else(|| UNKNOWN.to_string())
}

/// Whether R's session uses UTF-8 (so native strings are UTF-8). Read for
/// every native string the serializer meets, so a plain static rather than
/// the thread-local helpers (R is single-threaded; this only caches a fact
/// of the session R reported).
// Global because the core's serializer reads values through `RValue`, which
// carries no context; set with the helpers at each entry point that serializes (`sexp::set_helpers`).
static UTF8_LOCALE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Remember whether R's session uses UTF-8 (see [`UTF8_LOCALE`]).
pub fn set_utf8_locale(utf8: bool) {
    UTF8_LOCALE.store(utf8, std::sync::atomic::Ordering::Relaxed);
}

#[inline]
fn utf8_locale() -> bool {
    UTF8_LOCALE.load(std::sync::atomic::Ordering::Relaxed)
}

/// The UTF-8 bytes of a CHARSXP, or `None` for `NA`. UTF-8, ASCII, "bytes"
/// and native strings in a UTF-8 locale are borrowed as they are (never
/// handed to R's translation, which raises an R error for "bytes"); others
/// (Latin-1, other native encodings) are translated as jsonlite's enc2utf8
/// does, under error protection, releasing R's scratch memory at once so a
/// long-running server does not accumulate it.
///
/// # Safety
/// `ch` must be a CHARSXP that outlives the returned borrow.
pub unsafe fn charsxp_utf8<'a>(ch: SEXP) -> Option<Cow<'a, [u8]>> {
    // SAFETY: `ch` is a live CHARSXP per the contract above (whole body).
    unsafe {
        if ch == extendr_ffi::R_NaString {
            return None;
        }
        let n = extendr_ffi::LENGTH(ch).max(0) as usize;
        let p = extendr_ffi::R_CHAR(ch) as *const u8;
        let bytes: &[u8] = if n == 0 || p.is_null() { &[] } else { std::slice::from_raw_parts(p, n) };
        let ce = Rf_getCharCE(ch);
        let native_utf8 = matches!(ce, cetype_t::CE_NATIVE) && utf8_locale();
        if matches!(ce, cetype_t::CE_UTF8 | cetype_t::CE_BYTES) || native_utf8 || bytes.is_ascii() {
            return Some(Cow::Borrowed(bytes));
        }
        let translated = protected(|| {
            let top = vmaxget();
            let t = Rf_translateCharUTF8(ch);
            let len = if t.is_null() { 0 } else { std::ffi::CStr::from_ptr(t).to_bytes().len() };
            (top, t, len)
        });
        match translated {
            Some((top, t, len)) if !t.is_null() => {
                let owned = std::slice::from_raw_parts(t as *const u8, len).to_vec();
                vmaxset(top);
                Some(Cow::Owned(owned))
            }
            // Translation failed: keep the bytes; they are checked later.
            _ => Some(Cow::Borrowed(bytes)),
        }
    }
}

/// The message of `geterrmessage()`'s text: "Error in f() : boom\n" stays
/// as it is but for the newline, "Error: boom\n" loses its prefix; lines are
/// joined with spaces.
fn error_text(raw: &str) -> Option<String> {
    let text = raw.trim_end();
    let text = text.strip_prefix("Error: ").unwrap_or(text).trim();
    let joined = text.split('\n').map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
    (!joined.is_empty()).then_some(joined)
}

/// Calls R function `fun` with `args` and returns its value, or R's error
/// (which R also prints on stderr). The call is built and run under
/// [`protected`]; the value is kept as [`make`] keeps its object.
pub fn call(fun: &Robj, args: &[&Robj]) -> Result<Kept, RFailure> {
    // SAFETY: every SEXP comes from a live Robj owned by the caller; the
    // call object is protected while it is built and evaluated (the
    // protections balanced after); `try_eval_kept`'s contract holds.
    let value = protected(|| unsafe {
        let mut call = extendr_ffi::R_NilValue;
        for a in args.iter().rev() {
            call = extendr_ffi::Rf_protect(extendr_ffi::Rf_cons(a.get(), call));
        }
        call = extendr_ffi::Rf_protect(extendr_ffi::Rf_lcons(fun.get(), call));
        let value = try_eval_kept(call);
        extendr_ffi::Rf_unprotect(args.len() as c_int + 1);
        value
    });
    kept_or_error(value)
}

/// Evaluates `call` (a call Rust built, in R's global environment) as
/// [`call`] does: its value kept, or R's error.
pub fn eval(call: &Kept) -> Result<Kept, RFailure> {
    let call = call.0;
    // SAFETY: `call` is a live object kept by the caller.
    kept_or_error(protected(|| unsafe { try_eval_kept(call) }))
}

/// `R_tryEval()` of `call` in R's global environment: its value, preserved
/// (the caller makes it a [`Kept`]), or `None` when R failed.
///
/// # Safety
/// Under [`protected`]; `call` is a live object kept alive by the caller.
unsafe fn try_eval_kept(call: SEXP) -> Option<SEXP> {
    // SAFETY: the caller's contract; R_tryEval returns normally, and the
    // value is protected before anything else allocates.
    unsafe {
        let mut failed: c_int = 0;
        let value = extendr_ffi::R_tryEval(call, extendr_ffi::R_GlobalEnv, &mut failed);
        (failed == 0).then(|| {
            let value = extendr_ffi::Rf_protect(value);
            preserve(value);
            extendr_ffi::Rf_unprotect(1);
            value
        })
    }
}

/// A value [`try_eval_kept`] preserved, or R's last error.
fn kept_or_error(value: Option<Option<SEXP>>) -> Result<Kept, RFailure> {
    match value {
        Some(Some(sexp)) => Ok(Kept(sexp)),
        _ => Err(RFailure::Error(last_error_message())),
    }
}

/// R strings and flags made under protection, for the arguments Rust
/// passes to R functions: `Robj::from("...")` would allocate outside it.
pub fn string(s: &str) -> Result<Kept, RFailure> {
    strings(&[s])
}

/// A character vector of UTF-8 strings (one with a NUL is an R error; one
/// longer than R holds is refused).
pub fn strings<S: AsRef<str>>(items: &[S]) -> Result<Kept, RFailure> {
    if let Some(s) = items.iter().find(|s| s.as_ref().len() > c_int::MAX as usize) {
        return Err(RFailure::Error(format!(
            "a string of {} bytes is longer than R's limit of {} bytes",
            s.as_ref().len(),
            c_int::MAX
        )));
    }
    // SAFETY: allocations under protection; each CHARSXP is stored into the
    // vector, protected while it is filled, as soon as it is made; every
    // length fits an int (checked above).
    make(|| unsafe {
        let x = extendr_ffi::Rf_protect(extendr_ffi::Rf_allocVector(SEXPTYPE::STRSXP, items.len() as isize));
        for (i, s) in items.iter().enumerate() {
            let s = s.as_ref();
            let ch = extendr_ffi::Rf_mkCharLenCE(s.as_ptr() as *const c_char, s.len() as c_int, cetype_t::CE_UTF8);
            extendr_ffi::SET_STRING_ELT(x, i as isize, ch);
        }
        extendr_ffi::Rf_unprotect(1);
        x
    })
}

/// A named list, `NULL` for the elements left out (`list(value, error)`,
/// what an entry point that can fail returns for R to raise).
pub fn named_list(items: &[(&str, Option<&Kept>)]) -> Result<Kept, RFailure> {
    // SAFETY: allocations under protection; the list is protected while its
    // names are made, and the names vector is reachable from it once set;
    // the names are a few ASCII bytes; the values are live objects the
    // caller keeps.
    make(|| unsafe {
        let list = extendr_ffi::Rf_protect(extendr_ffi::Rf_allocVector(SEXPTYPE::VECSXP, items.len() as isize));
        let names = extendr_ffi::Rf_allocVector(SEXPTYPE::STRSXP, items.len() as isize);
        extendr_ffi::Rf_setAttrib(list, extendr_ffi::R_NamesSymbol, names);
        for (i, (name, value)) in items.iter().enumerate() {
            let ch =
                extendr_ffi::Rf_mkCharLenCE(name.as_ptr() as *const c_char, name.len() as c_int, cetype_t::CE_UTF8);
            extendr_ffi::SET_STRING_ELT(names, i as isize, ch);
            if let Some(v) = value {
                extendr_ffi::SET_VECTOR_ELT(list, i as isize, v.0);
            }
        }
        extendr_ffi::Rf_unprotect(1);
        list
    })
}

/// An unnamed list of objects the caller keeps.
pub fn list(items: &[Kept]) -> Result<Kept, RFailure> {
    // SAFETY: one allocation under protection; the items are live objects
    // the caller keeps.
    make(|| unsafe {
        let list = extendr_ffi::Rf_allocVector(SEXPTYPE::VECSXP, items.len() as isize);
        for (i, item) in items.iter().enumerate() {
            extendr_ffi::SET_VECTOR_ELT(list, i as isize, item.0);
        }
        list
    })
}

/// An integer vector.
pub fn integers(items: &[i32]) -> Result<Kept, RFailure> {
    // SAFETY: one allocation under protection, filled within its length.
    make(|| unsafe {
        let x = extendr_ffi::Rf_allocVector(SEXPTYPE::INTSXP, items.len() as isize);
        if !items.is_empty() {
            std::ptr::copy_nonoverlapping(items.as_ptr(), extendr_ffi::INTEGER(x), items.len());
        }
        x
    })
}

/// A logical vector.
pub fn logicals(items: &[bool]) -> Result<Kept, RFailure> {
    // SAFETY: one allocation under protection, filled within its length.
    make(|| unsafe {
        let x = extendr_ffi::Rf_allocVector(SEXPTYPE::LGLSXP, items.len() as isize);
        let p = extendr_ffi::LOGICAL(x);
        for (i, &b) in items.iter().enumerate() {
            *p.add(i) = b as c_int;
        }
        x
    })
}

/// `x` with the names `names` (a character vector as long as `x`), set in place.
pub fn set_names(x: &Kept, names: &Kept) -> Result<(), RFailure> {
    // SAFETY: setAttrib under protection on two live objects the caller keeps.
    protected(|| unsafe {
        extendr_ffi::Rf_setAttrib(x.0, extendr_ffi::R_NamesSymbol, names.0);
    })
    .ok_or_else(|| RFailure::Error(last_error_message()))
}

/// `TRUE` or `FALSE`.
pub fn flag(b: bool) -> Result<Kept, RFailure> {
    // SAFETY: a length-one allocation under protection.
    make(|| unsafe {
        let x = extendr_ffi::Rf_allocVector(SEXPTYPE::LGLSXP, 1);
        *extendr_ffi::LOGICAL(x) = b as c_int;
        x
    })
}

/// A double scalar.
pub fn double(d: f64) -> Result<Kept, RFailure> {
    // SAFETY: a length-one allocation under protection.
    make(|| unsafe {
        let x = extendr_ffi::Rf_allocVector(SEXPTYPE::REALSXP, 1);
        *extendr_ffi::REAL(x) = d;
        x
    })
}

/// An integer scalar.
pub fn integer(i: i32) -> Result<Kept, RFailure> {
    // SAFETY: a length-one allocation under protection.
    make(|| unsafe { extendr_ffi::Rf_ScalarInteger(i) })
}

/// Calls R function `fun` as [`call`] does, for a tool: the tool itself or
/// R code converting its result. A SIGINT meanwhile interrupts it (anywhere
/// else it asks the server to stop, see `platform::StopSignals`); one that R
/// has not acted on by the end is dropped, so it interrupts nothing later.
pub fn call_for_tool(fun: &Robj, args: &[&Robj]) -> Result<Kept, RFailure> {
    for_tool(|| call(fun, args))
}

/// Evaluates a tool's call Rust built ([`eval`]) as [`call_for_tool`] calls
/// a function.
pub fn eval_for_tool(call: &Kept) -> Result<Kept, RFailure> {
    for_tool(|| eval(call))
}

fn for_tool(run: impl FnOnce() -> Result<Kept, RFailure>) -> Result<Kept, RFailure> {
    let for_tool = crate::platform::ForTool::enter();
    let value = run();
    if for_tool.leave() {
        drop_pending_interrupt();
        // R's error text is not about an interrupt; say what happened.
        return value.map_err(|_| RFailure::Interrupted);
    }
    value
}

/// Makes R act on an interrupt it holds, under protection, which drops it.
pub fn drop_pending_interrupt() {
    // SAFETY: R_CheckUserInterrupt raises a pending interrupt as an R
    // condition, which R_ToplevelExec catches (no handlers are set there).
    protected(|| unsafe { R_CheckUserInterrupt() });
}
