//! The few R C API entry points `extendr_ffi` does not declare, and the two
//! ways this crate calls into R safely.
//!
//! An R error is a `longjmp`: if one happened inside a Rust frame it would
//! skip that frame without unwinding it, which Rust does not allow. So every
//! R API call made while serving either cannot fail (type and bounds are
//! checked first, e.g. `STRING_ELT` only on a character vector and an index
//! below its length) or runs under R's own error protection: [`protected`]
//! for C API calls that can fail (allocations whose size a client or tool
//! controls, string translation), [`call`] for evaluating R code.

use extendr_api::prelude::*;
use extendr_ffi::{cetype_t, Rboolean, SEXP, SEXPTYPE};
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
    pub fn vmaxget() -> *mut c_void;
    pub fn vmaxset(p: *const c_void);
    pub fn Rf_type2char(t: SEXPTYPE) -> *const c_char;
    pub fn R_ToplevelExec(fun: Option<unsafe extern "C" fn(*mut c_void)>, data: *mut c_void) -> Rboolean;
    fn R_CheckUserInterrupt();
    /// A new JSON text object holding a copy of the bytes (src/altjson.c);
    /// allocates, so only under [`protected`].
    pub fn mcplite_json_text(bytes: *const u8, len: isize) -> SEXP;
    /// The bytes of a JSON text object R code cannot have changed; 0 for any
    /// other object. Never allocates or fails.
    pub fn mcplite_json_bytes(x: SEXP, bytes: *mut *const u8, len: *mut isize) -> c_int;
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

/// Calls R function `fun` with `args` and returns its value, or `None` when
/// R signalled an error (R prints it on stderr). The call is built and run
/// under [`protected`]; the value is protected before it is returned.
pub fn call(fun: &Robj, args: &[&Robj]) -> Option<Robj> {
    // SAFETY: every SEXP comes from a live Robj owned by the caller; the
    // call object is protected while it exists; R_tryEval returns normally.
    let value = protected(|| unsafe {
        let mut call = extendr_ffi::R_NilValue;
        for a in args.iter().rev() {
            call = extendr_ffi::Rf_cons(a.get(), call);
            extendr_ffi::Rf_protect(call);
        }
        call = extendr_ffi::Rf_lcons(fun.get(), call);
        extendr_ffi::Rf_protect(call);
        let mut failed: c_int = 0;
        let value = extendr_ffi::R_tryEval(call, extendr_ffi::R_GlobalEnv, &mut failed);
        extendr_ffi::Rf_protect(value);
        let keep = (failed == 0).then(|| Robj::from_sexp(value));
        extendr_ffi::Rf_unprotect(args.len() as c_int + 2);
        keep
    });
    value.flatten()
}

/// Calls R function `fun` as [`call`] does, for a tool: the tool itself or
/// R code converting its result. A SIGINT meanwhile interrupts it (anywhere
/// else it asks the server to stop, see `platform::StopSignals`); one that R
/// has not acted on by the end is dropped, so it interrupts nothing later.
pub fn call_for_tool(fun: &Robj, args: &[&Robj]) -> Option<Robj> {
    let for_tool = crate::platform::ForTool::enter();
    let value = call(fun, args);
    if for_tool.leave() {
        drop_pending_interrupt();
    }
    value
}

/// Makes R act on an interrupt it holds, under protection, which drops it.
fn drop_pending_interrupt() {
    // SAFETY: R_CheckUserInterrupt raises a pending interrupt as an R
    // condition, which R_ToplevelExec catches (no handlers are set there).
    protected(|| unsafe { R_CheckUserInterrupt() });
}
