//! R side of the payload JSON serializer: `RValue` over SEXPs, the options
//! parser, and the `rust_to_json()` entry point.
//!
//! Element access goes through R's C accessors (REAL, INTEGER, STRING_ELT, ...)
//! without copying vectors. Only the conversions that need R's own semantics
//! (time zones in `format()`, R's number printer for complex) call back into R,
//! exactly as jsonlite does, once per vector rather than once per element.

use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

use extendr_api::prelude::*;
use extendr_api::SEXP;
use mcplite_core::rjson::{self, Conversion, Digits, NaOption, NullMode, RType, RValue};

pub use mcplite_core::rjson::Options as JsonOptions;

#[allow(non_snake_case, non_upper_case_globals, improper_ctypes)]
mod ffi {
    use extendr_api::SEXP;
    use std::os::raw::{c_char, c_int, c_uint};

    #[repr(C)]
    pub struct Rcomplex {
        pub r: f64,
        pub i: f64,
    }

    extern "C" {
        pub static R_NilValue: SEXP;
        pub static R_NaString: SEXP;
        pub static R_NamesSymbol: SEXP;
        pub static R_DimSymbol: SEXP;
        pub static R_DimNamesSymbol: SEXP;
        pub static R_ClassSymbol: SEXP;
        pub static R_LevelsSymbol: SEXP;
        pub static R_RowNamesSymbol: SEXP;
        pub fn TYPEOF(x: SEXP) -> c_int;
        pub fn Rf_xlength(x: SEXP) -> isize;
        pub fn LENGTH(x: SEXP) -> c_int;
        pub fn REAL(x: SEXP) -> *mut f64;
        pub fn INTEGER(x: SEXP) -> *mut c_int;
        pub fn LOGICAL(x: SEXP) -> *mut c_int;
        pub fn RAW(x: SEXP) -> *mut u8;
        pub fn COMPLEX(x: SEXP) -> *mut Rcomplex;
        pub fn STRING_ELT(x: SEXP, i: isize) -> SEXP;
        pub fn VECTOR_ELT(x: SEXP, i: isize) -> SEXP;
        pub fn R_CHAR(x: SEXP) -> *const c_char;
        pub fn ATTRIB(x: SEXP) -> SEXP;
        pub fn CAR(x: SEXP) -> SEXP;
        pub fn CDR(x: SEXP) -> SEXP;
        pub fn TAG(x: SEXP) -> SEXP;
        pub fn Rf_install(name: *const c_char) -> SEXP;
        pub fn Rf_isS4(x: SEXP) -> c_uint;
        pub fn Rf_getCharCE(x: SEXP) -> c_int;
        pub fn Rf_translateCharUTF8(x: SEXP) -> *const c_char;
        pub fn Rf_type2char(t: c_int) -> *const c_char;
        pub fn vmaxget() -> *mut std::ffi::c_void;
        pub fn Rf_mkCharLenCE(s: *const c_char, len: c_int, enc: c_int) -> SEXP;
        pub fn Rf_ScalarString(x: SEXP) -> SEXP;
        pub fn vmaxset(p: *const std::ffi::c_void);
    }
}

const NILSXP: i32 = 0;
const LGLSXP: i32 = 10;
const INTSXP: i32 = 13;
const REALSXP: i32 = 14;
const CPLXSXP: i32 = 15;
const STRSXP: i32 = 16;
const VECSXP: i32 = 19;
const RAWSXP: i32 = 24;
const CE_NATIVE: i32 = 0;
const CE_UTF8: i32 = 1;
const CE_BYTES: i32 = 3;

/// The UTF-8 bytes of a CHARSXP, or `None` for `NA`. UTF-8, ASCII, "bytes"
/// and native strings in a UTF-8 locale are borrowed as they are (never
/// handed to R's translation, which raises an R error for "bytes"); others
/// (Latin-1, other native encodings) are translated as jsonlite's enc2utf8
/// does, releasing R's scratch memory at once so a long-running server does
/// not accumulate it.
///
/// # Safety
/// `ch` must be a CHARSXP that outlives the returned borrow.
pub(crate) unsafe fn charsxp_utf8<'a>(ch: SEXP) -> Option<Cow<'a, [u8]>> {
    if ch == ffi::R_NaString {
        return None;
    }
    let n = ffi::LENGTH(ch).max(0) as usize;
    let p = ffi::R_CHAR(ch) as *const u8;
    let bytes: &[u8] = if n == 0 { &[] } else { std::slice::from_raw_parts(p, n) };
    let ce = ffi::Rf_getCharCE(ch);
    if ce == CE_UTF8 || ce == CE_BYTES || bytes.is_ascii() || (ce == CE_NATIVE && utf8_locale()) {
        return Some(Cow::Borrowed(bytes));
    }
    let top = ffi::vmaxget();
    let t = ffi::Rf_translateCharUTF8(ch);
    let owned = std::ffi::CStr::from_ptr(t).to_bytes().to_vec();
    ffi::vmaxset(top);
    Some(Cow::Owned(owned))
}

/// A SEXP seen by the serializer. Objects reached from the root are kept
/// alive by the root; objects R made for us (conversions) are owned via `keep`,
/// which their children share.
/// (Prototype for the glue rewrite: the type and length are read once when
/// the handle is made, not on every element access.)
#[derive(Clone)]
pub struct Sx {
    sexp: SEXP,
    ty: i32,
    n: usize,
    keep: Option<Rc<Robj>>,
}

/// R's type and vector length of a live object (0 for non-vectors).
fn type_and_len(sexp: SEXP) -> (i32, usize) {
    // SAFETY: sexp is a live R object; xlength only on vector types.
    unsafe {
        let ty = ffi::TYPEOF(sexp);
        let n = match ty {
            LGLSXP | INTSXP | REALSXP | CPLXSXP | STRSXP | VECSXP | RAWSXP => ffi::Rf_xlength(sexp).max(0) as usize,
            _ => 0,
        };
        (ty, n)
    }
}

impl Sx {
    fn new(robj: &Robj) -> Sx {
        // SAFETY: the caller's Robj outlives the whole serialization.
        let sexp = unsafe { robj.get() };
        let (ty, n) = type_and_len(sexp);
        Sx { sexp, ty, n, keep: None }
    }

    fn owned(robj: Robj) -> Sx {
        // SAFETY: the Robj is kept alive by `keep`.
        let sexp = unsafe { robj.get() };
        let (ty, n) = type_and_len(sexp);
        Sx { sexp, ty, n, keep: Some(Rc::new(robj)) }
    }

    fn child(&self, sexp: SEXP) -> Sx {
        let (ty, n) = type_and_len(sexp);
        Sx { sexp, ty, n, keep: self.keep.clone() }
    }

    #[inline]
    fn typeof_(&self) -> i32 {
        self.ty
    }

    fn robj(&self) -> Robj {
        // SAFETY: sexp is live; from_sexp protects it for the Robj's lifetime.
        unsafe { Robj::from_sexp(self.sexp) }
    }

    fn slice<T>(&self, ptr: *mut T) -> &[T] {
        let n = self.len();
        if n == 0 || ptr.is_null() {
            return &[];
        }
        // SAFETY: ptr is the data pointer of a live vector of n elements of T.
        unsafe { std::slice::from_raw_parts(ptr as *const T, n) }
    }

    fn typed<T>(&self, want: i32, get: unsafe extern "C" fn(SEXP) -> *mut T) -> &[T] {
        if self.typeof_() != want {
            return &[];
        }
        // SAFETY: type checked above.
        self.slice(unsafe { get(self.sexp) })
    }
}

fn symbol(name: &str) -> SEXP {
    // SAFETY: reading R's global symbol table entries.
    unsafe {
        match name {
            "names" => ffi::R_NamesSymbol,
            "dim" => ffi::R_DimSymbol,
            "dimnames" => ffi::R_DimNamesSymbol,
            "class" => ffi::R_ClassSymbol,
            "levels" => ffi::R_LevelsSymbol,
            "row.names" => ffi::R_RowNamesSymbol,
            _ => match std::ffi::CString::new(name) {
                Ok(c) => ffi::Rf_install(c.as_ptr()),
                Err(_) => ffi::R_NilValue,
            },
        }
    }
}

thread_local! {
    static UTF8_LOCALE: RefCell<Option<bool>> = const { RefCell::new(None) };
    static HELPERS: RefCell<Option<(Function, Function, Function)>> = const { RefCell::new(None) };
}

fn utf8_locale() -> bool {
    UTF8_LOCALE.with(|c| {
        *c.borrow_mut().get_or_insert_with(|| {
            eval_string("isTRUE(l10n_info()[['UTF-8']])").ok().and_then(|r| r.as_bool()).unwrap_or(true)
        })
    })
}

/// R helpers for the conversions jsonlite delegates to R.
fn helpers() -> std::result::Result<(Function, Function, Function), String> {
    HELPERS.with(|h| {
        if let Some(f) = h.borrow().as_ref() {
            return Ok(f.clone());
        }
        // Closures live in the base environment so user definitions in the
        // global environment cannot mask format(), prettyNum(), etc.
        let mk = |code: &str| -> std::result::Result<Function, String> {
            eval_string(&format!("evalq({code}, baseenv())"))
                .map_err(|e| e.to_string())?
                .as_function()
                .ok_or_else(|| "internal helper is not a function".to_string())
        };
        let time = mk("function(x, cls, lt, date) tryCatch({
            if (lt) x <- as.POSIXct(x) else class(x) <- cls
            out <- if (date) format(x) else format(x, format = '')
            as.character(unname(out))
        }, error = function(e) list(conditionMessage(e)))")?;
        let cplx = mk("function(x, digits) tryCatch(
            as.character(unname(prettyNum(as.vector(unclass(x)), digits = digits))),
            error = function(e) list(conditionMessage(e)))")?;
        let aschar = mk("function(x, cls) tryCatch({
            class(x) <- cls
            out <- as.character(x)
            out[is.na(x)] <- NA
            as.character(unname(out))
        }, error = function(e) list(conditionMessage(e)))")?;
        let all = (time, cplx, aschar);
        *h.borrow_mut() = Some(all.clone());
        Ok(all)
    })
}

fn r_strings(v: &[String]) -> Robj {
    Robj::from(v.to_vec())
}

impl RValue for Sx {
    fn rtype(&self) -> RType {
        match self.typeof_() {
            NILSXP => RType::Null,
            LGLSXP => RType::Logical,
            INTSXP => RType::Integer,
            REALSXP => RType::Double,
            CPLXSXP => RType::Complex,
            STRSXP => RType::Character,
            RAWSXP => RType::Raw,
            VECSXP => RType::List,
            _ => RType::Other,
        }
    }

    fn type_name(&self) -> String {
        // SAFETY: type2char returns a static C string.
        unsafe {
            let p = ffi::Rf_type2char(self.typeof_());
            if p.is_null() {
                return "unknown".to_string();
            }
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }

    fn len(&self) -> usize {
        self.n
    }

    fn is_s4(&self) -> bool {
        // SAFETY: live object.
        unsafe { ffi::Rf_isS4(self.sexp) != 0 }
    }

    fn class(&self) -> Vec<String> {
        match self.attr("class") {
            Some(c) if c.typeof_() == STRSXP => (0..c.len())
                .map(|i| c.str_elt(i).map(|s| String::from_utf8_lossy(&s).into_owned()).unwrap_or_default())
                .collect(),
            _ => Vec::new(),
        }
    }

    fn attr(&self, name: &str) -> Option<Self> {
        let sym = symbol(name);
        // SAFETY: walking the attribute pairlist of a live object. ATTRIB gives
        // row.names in stored (compact) form, unlike getAttrib().
        unsafe {
            let mut a = ffi::ATTRIB(self.sexp);
            while a != ffi::R_NilValue {
                if ffi::TAG(a) == sym {
                    return Some(self.child(ffi::CAR(a)));
                }
                a = ffi::CDR(a);
            }
        }
        None
    }

    fn logicals(&self) -> &[i32] {
        self.typed(LGLSXP, ffi::LOGICAL)
    }

    fn integers(&self) -> &[i32] {
        self.typed(INTSXP, ffi::INTEGER)
    }

    fn doubles(&self) -> &[f64] {
        self.typed(REALSXP, ffi::REAL)
    }

    fn complexes(&self) -> &[[f64; 2]] {
        if self.typeof_() != CPLXSXP {
            return &[];
        }
        // SAFETY: Rcomplex is two f64 (repr C), same layout as [f64; 2].
        self.slice(unsafe { ffi::COMPLEX(self.sexp) } as *mut [f64; 2])
    }

    fn raws(&self) -> &[u8] {
        self.typed(RAWSXP, ffi::RAW)
    }

    fn str_elt(&self, i: usize) -> Option<Cow<'_, [u8]>> {
        if self.typeof_() != STRSXP || i >= self.len() {
            return None;
        }
        // SAFETY: i is in range; CHARSXPs live as long as their vector.
        unsafe { charsxp_utf8(ffi::STRING_ELT(self.sexp, i as isize)) }
    }

    fn list_elt(&self, i: usize) -> Self {
        if self.typeof_() != VECSXP || i >= self.len() {
            // SAFETY: R_NilValue is a global constant.
            return self.child(unsafe { ffi::R_NilValue });
        }
        // SAFETY: i in range.
        self.child(unsafe { ffi::VECTOR_ELT(self.sexp, i as isize) })
    }

    fn convert(&self, conv: Conversion<'_>) -> std::result::Result<Self, String> {
        let (time, cplx, aschar) = helpers()?;
        let res = match conv {
            Conversion::FormatTime { classes, posixlt_to_ct } => {
                let is_date = classes.first().map(String::as_str) == Some("Date");
                time.call(pairlist!(self.robj(), r_strings(classes), posixlt_to_ct, is_date))
            }
            Conversion::ComplexStrings { digits } => cplx.call(pairlist!(self.robj(), digits)),
            Conversion::AsCharacter { classes } => aschar.call(pairlist!(self.robj(), r_strings(classes))),
        };
        let out = res.map_err(|e| format!("R conversion failed: {e}"))?;
        if out.rtype() == Rtype::List {
            // The helper caught an R error and returned its message.
            let msg = out.as_list().and_then(|l| l.values().next()).and_then(|m| m.as_str().map(str::to_string));
            return Err(format!("R conversion failed: {}", msg.unwrap_or_default()));
        }
        Ok(Sx::owned(out))
    }
}

/// Reads the `opts` list of `rust_to_json()` (see ARCHITECTURE.md). Missing
/// fields take mcplite's defaults.
pub fn json_options(opts: &Robj) -> std::result::Result<JsonOptions, String> {
    let mut o = JsonOptions::default();
    if opts.is_null() {
        return Ok(o);
    }
    let list = opts.as_list().ok_or("JSON options must be a list")?;
    let mut digits: Option<Robj> = None;
    let mut signif = false;
    for (name, value) in list.iter() {
        match name {
            "null" => {
                o.null = if value.is_null() {
                    NullMode::Null
                } else {
                    match value.as_str() {
                        Some("null") => NullMode::Null,
                        Some("list") => NullMode::List,
                        _ => return Err("option 'null' must be \"null\" or \"list\"".into()),
                    }
                }
            }
            "na" => {
                o.na = if value.is_null() || value.is_na() {
                    NaOption::Unset
                } else {
                    match value.as_str() {
                        Some("null") => NaOption::Null,
                        Some("string") => NaOption::String,
                        _ => return Err("option 'na' must be unset, \"null\" or \"string\"".into()),
                    }
                }
            }
            "auto_unbox" => {
                o.auto_unbox = value.as_bool().ok_or("option 'auto_unbox' must be TRUE or FALSE")?;
            }
            "digits" => digits = Some(value),
            "signif" => signif = value.as_bool().unwrap_or(false),
            _ => {}
        }
    }
    if let Some(d) = digits {
        if d.is_null() {
        } else if d.len() != 1 {
            return Err("option 'digits' must be a single number or NA".into());
        } else if d.is_na() {
            o.digits = Digits::Max;
        } else {
            let n = d
                .as_integer()
                .or_else(|| d.as_real().map(|x| x as i32))
                .ok_or("option 'digits' must be a single number or NA")?;
            o.digits = if signif { Digits::Significant(n) } else { Digits::Decimal(n) };
        }
    }
    Ok(o)
}

/// Serializes an R value to payload JSON (byte-identical to jsonlite's
/// `toJSON()` with the given options), for the server bridge.
pub fn payload_json(x: &Robj, opts: &JsonOptions) -> std::result::Result<String, String> {
    let bytes = rjson::to_json(&Sx::new(x), opts)?;
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

fn to_json_robj(x: &Robj, opts: &Robj) -> std::result::Result<Robj, String> {
    let o = json_options(opts)?;
    // (Prototype for the glue rewrite: the text is built in a reused buffer
    // and copied straight into the CHARSXP, with no intermediate String.)
    rjson::with_json(&Sx::new(x), &o, |bytes| {
        if bytes.len() > i32::MAX as usize {
            return Err("JSON text is larger than R's 2 GB string limit".to_string());
        }
        // Bytes are UTF-8 (or passed-through "bytes" strings, as jsonlite does).
        if std::str::from_utf8(bytes).is_err() {
            return Ok(Robj::from(String::from_utf8_lossy(bytes).into_owned()));
        }
        // SAFETY: the text has no NUL (the encoder escapes control bytes) and
        // fits an int; Rf_ScalarString protects its argument while allocating,
        // and from_sexp protects the result.
        Ok(unsafe {
            let ch = ffi::Rf_mkCharLenCE(bytes.as_ptr() as *const std::os::raw::c_char, bytes.len() as i32, CE_UTF8);
            Robj::from_sexp(ffi::Rf_ScalarString(ch))
        })
    })?
}

/// Payload JSON as jsonlite::toJSON() writes it, with the payload options.
/// @noRd
#[extendr]
pub fn rust_to_json(x: Robj, opts: Robj) -> Robj {
    match to_json_robj(&x, &opts) {
        Ok(v) => list!(value = v, error = NULL).into(),
        Err(e) => list!(value = NULL, error = e).into(),
    }
}

extendr_module! {
    mod rjson;
    fn rust_to_json;
}
