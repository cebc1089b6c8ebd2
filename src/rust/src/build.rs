//! R objects made from JSON: `RBuilder` for SEXPs, and the entry point that
//! turns JSON text into R lists.
//!
//! Building runs inside [`ffi::make`]: allocations whose size the
//! client controls can fail, and R signals that with an error. The core
//! checks the value first (no NUL, bounded depth, no string longer than R
//! holds), so nothing else fails.

use crate::ffi;
use extendr_api::prelude::*;
use extendr_ffi::{cetype_t, SEXP, SEXPTYPE};
use mcplite_core::json::Val;
use mcplite_core::r::args::JsonTree;
use mcplite_core::r::{RBuilder, Scalar};
use std::os::raw::c_int;

/// Builds SEXPs. Lists stay on R's protection stack from `new_list` to
/// `finish_list` (so at most the nesting depth of them at once); everything
/// else is stored into a protected list as soon as it is made.
pub struct SexpBuilder<'a> {
    /// The names vector of each open list (`R_NilValue` for unnamed ones),
    /// innermost last: items are stored into the innermost open list, so its
    /// names need not be looked up among its attributes for each member.
    /// Owned by the caller, outside R's error protection: an R error jumps
    /// over the frames that build, which must own nothing to drop.
    names: &'a mut Vec<SEXP>,
}

/// A CHARSXP of a string the core checked: no NUL, and at most
/// `R_STRING_MAX` bytes (`r::args::check*` refuse longer strings and names
/// with a tool error first). One that is longer all the same becomes `NA`
/// rather than a shortened string.
fn mkchar(s: &str) -> SEXP {
    let Ok(len) = c_int::try_from(s.len()) else {
        // SAFETY: R_NaString is a global constant.
        return unsafe { extendr_ffi::R_NaString };
    };
    // SAFETY: the bytes are valid for `len` bytes (the whole string), UTF-8
    // and without NUL; R copies them (an allocation that can fail with an R
    // error, which the caller's `ffi::make` catches).
    unsafe { extendr_ffi::Rf_mkCharLenCE(s.as_ptr() as *const _, len, cetype_t::CE_UTF8) }
}

impl RBuilder for SexpBuilder<'_> {
    type Obj = SEXP;

    fn scalar(&mut self, value: Scalar<'_>) -> SEXP {
        // SAFETY: allocation of length-one vectors; the result is stored into
        // a protected list (or protected by the caller) before anything else
        // allocates.
        unsafe {
            match value {
                Scalar::Null => extendr_ffi::R_NilValue,
                Scalar::Logical(b) => {
                    let x = extendr_ffi::Rf_allocVector(SEXPTYPE::LGLSXP, 1);
                    *extendr_ffi::LOGICAL(x) = b as c_int;
                    x
                }
                Scalar::Integer(i) => extendr_ffi::Rf_ScalarInteger(i),
                Scalar::Double(d) => {
                    let x = extendr_ffi::Rf_allocVector(SEXPTYPE::REALSXP, 1);
                    *extendr_ffi::REAL(x) = d;
                    x
                }
                Scalar::String(s) => {
                    let x = extendr_ffi::Rf_allocVector(SEXPTYPE::STRSXP, 1);
                    extendr_ffi::Rf_protect(x);
                    extendr_ffi::SET_STRING_ELT(x, 0, mkchar(s));
                    extendr_ffi::Rf_unprotect(1);
                    x
                }
            }
        }
    }

    fn new_list(&mut self, len: usize, named: bool) -> SEXP {
        // SAFETY: a new list, protected until finish_list; its names vector is
        // attached at once, so the list protects it.
        unsafe {
            let list = extendr_ffi::Rf_allocVector(SEXPTYPE::VECSXP, len as isize);
            extendr_ffi::Rf_protect(list);
            let mut names = extendr_ffi::R_NilValue;
            if named {
                names = extendr_ffi::Rf_allocVector(SEXPTYPE::STRSXP, len as isize);
                extendr_ffi::Rf_setAttrib(list, extendr_ffi::R_NamesSymbol, names);
            }
            self.names.push(names);
            list
        }
    }

    fn set_item(&mut self, list: SEXP, i: usize, name: Option<&str>, item: SEXP) {
        // SAFETY: `list` is a protected list of more than `i` items, the
        // innermost open one (the core stores items only there), so the top
        // of `names` is its names vector (attached to it, so protected); the
        // item is stored before the name's CHARSXP is allocated.
        unsafe {
            extendr_ffi::SET_VECTOR_ELT(list, i as isize, item);
            if let (Some(name), Some(&names)) = (name, self.names.last()) {
                if extendr_ffi::TYPEOF(names) == SEXPTYPE::STRSXP {
                    extendr_ffi::SET_STRING_ELT(names, i as isize, mkchar(name));
                }
            }
        }
    }

    fn finish_list(&mut self, _list: SEXP) {
        self.names.pop();
        // SAFETY: pairs with the protect in new_list (lists finish in LIFO order).
        unsafe { extendr_ffi::Rf_unprotect(1) }
    }
}

/// The named list of a tool's arguments (checked by the core first), built
/// under error protection; R's error if it could not allocate it.
pub fn arguments(args: Option<Val<'_>>) -> Result<ffi::Kept, ffi::RFailure> {
    let mut names = Vec::new();
    ffi::make(|| mcplite_core::r::args::build(args, &mut SexpBuilder { names: &mut names }))
}

/// The R call that runs a tool in this process, built under error
/// protection: `invoker(runner(fun(a = .., b = ..)), "name")`, with the
/// argument values in the call itself (as `do.call()` puts them), each
/// tagged with its name translated to R's native encoding (as `do.call()`
/// does; an empty name is no tag). `invoker` gets the tool's call unevaluated
/// (a promise), so it sets its condition handlers before the tool runs, and
/// `runner` marks the run of the tool's own function (see
/// `host::closure_scope`); nothing in the call but R functions and the
/// values JSON makes (never a symbol or a call), so evaluating it evaluates
/// nothing of the client's. R's error if it could not allocate it.
pub fn tool_call(
    invoker: &Robj,
    runner: &Robj,
    fun: &Robj,
    name: &str,
    arguments: Option<Val<'_>>,
) -> Result<ffi::Kept, ffi::RFailure> {
    let mut names = Vec::new();
    // SAFETY: reads the SEXPs of live Robjs the caller holds.
    let (invoker, runner, fun) = unsafe { (invoker.get(), runner.get(), fun.get()) };
    // SAFETY: allocations under the protection `ffi::make` runs this in; every
    // object made is protected (the argument list and the call being built,
    // by a protect each, balanced before returning) or stored into a
    // protected one before anything else allocates; the list's names are a
    // STRSXP of its length (`SexpBuilder::new_list`) read within bounds, and
    // R's scratch memory from translating them is released at once.
    ffi::make(|| unsafe {
        let list =
            extendr_ffi::Rf_protect(mcplite_core::r::args::build(arguments, &mut SexpBuilder { names: &mut names }));
        let arg_names = extendr_ffi::Rf_getAttrib(list, extendr_ffi::R_NamesSymbol);
        let n = if extendr_ffi::TYPEOF(list) == SEXPTYPE::VECSXP { extendr_ffi::Rf_xlength(list) } else { 0 };
        let named = extendr_ffi::TYPEOF(arg_names) == SEXPTYPE::STRSXP && extendr_ffi::Rf_xlength(arg_names) == n;
        let mut args = extendr_ffi::Rf_protect(extendr_ffi::R_NilValue);
        for i in (0..n).rev() {
            args = extendr_ffi::Rf_cons(extendr_ffi::VECTOR_ELT(list, i), args);
            extendr_ffi::Rf_unprotect(1);
            extendr_ffi::Rf_protect(args);
            let arg_name = if named { extendr_ffi::STRING_ELT(arg_names, i) } else { extendr_ffi::R_NaString };
            if arg_name != extendr_ffi::R_NaString && extendr_ffi::LENGTH(arg_name) > 0 {
                let top = ffi::vmaxget();
                let tag = extendr_ffi::Rf_install(ffi::Rf_translateChar(arg_name));
                ffi::vmaxset(top);
                extendr_ffi::SET_TAG(args, tag);
            }
        }
        let tool = extendr_ffi::Rf_lcons(fun, args);
        extendr_ffi::Rf_unprotect(1);
        extendr_ffi::Rf_protect(tool);
        let run = extendr_ffi::Rf_lcons(runner, extendr_ffi::Rf_cons(tool, extendr_ffi::R_NilValue));
        extendr_ffi::Rf_unprotect(1);
        extendr_ffi::Rf_protect(run);
        let tool_name = extendr_ffi::Rf_protect(extendr_ffi::Rf_allocVector(SEXPTYPE::STRSXP, 1));
        extendr_ffi::SET_STRING_ELT(tool_name, 0, mkchar(name));
        let rest = extendr_ffi::Rf_cons(run, extendr_ffi::Rf_cons(tool_name, extendr_ffi::R_NilValue));
        let call = extendr_ffi::Rf_lcons(invoker, rest);
        extendr_ffi::Rf_unprotect(3);
        call
    })
}

/// The R value of any JSON value: one the core's reader read (checked with
/// `check_json` first), or a serde value this package made, which becomes
/// what its JSON text read back would (`r::args::JsonTree`), without writing
/// the text.
pub fn value<'a, J: JsonTree<'a>>(v: J) -> Result<ffi::Kept, ffi::RFailure> {
    let mut names = Vec::new();
    ffi::make(|| mcplite_core::r::args::build_value(v, &mut SexpBuilder { names: &mut names }))
}

/// A character vector of length one holding `bytes` (JSON text our serializer
/// wrote from `source`: no NUL) as a JSON text object (src/altjson.c): R
/// makes the string only if R code reads it, and the server writes the bytes
/// as they are. Bytes that are not UTF-8 (passed-through "bytes" strings, as
/// jsonlite does) are replaced.
pub fn json_text(bytes: &[u8], source: &Robj) -> std::result::Result<ffi::Kept, String> {
    if bytes.len() > c_int::MAX as usize {
        return Err("JSON text is larger than R's 2 GB string limit".into());
    }
    let lossy;
    let bytes = match std::str::from_utf8(bytes) {
        Ok(_) => bytes,
        Err(_) => {
            lossy = String::from_utf8_lossy(bytes).into_owned();
            lossy.as_bytes()
        }
    };
    // SAFETY: reads the SEXP of a live Robj.
    let source = unsafe { source.get() };
    // SAFETY: `bytes` is valid for its length, which fits an int (checked
    // above), and `source` is a live object the caller holds; the C function
    // only allocates, copies and keeps a reference to `source`.
    ffi::make(|| unsafe { ffi::mcplite_json_text(bytes.as_ptr(), bytes.len() as isize, source) })
        .map_err(|e| format!("R could not make a string of the JSON text: {e}"))
}
