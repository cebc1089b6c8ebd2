//! R objects as the core reads them: `RValue` for SEXPs.
//!
//! Element access goes through R's accessors (REAL, INTEGER, STRING_ELT, ...)
//! without copying vectors, always after checking the type and the index.
//! Only the conversions that need R's own semantics (time zones in
//! `format()`, R's number printer for complex numbers) call R, through the
//! helper functions R/json.R defines, once per vector.

use crate::ffi;
use extendr_api::prelude::*;
use extendr_ffi::{SEXP, SEXPTYPE};
use mcplite_core::rjson::{Conversion, RType, RValue};
use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

/// R functions the serializer needs for conversions, and the session's
/// locale (from R/json.R's `json_helpers()`).
pub struct Helpers {
    /// The list they came in, kept: R passes the same (cached) list at every
    /// entry point that serializes, known again by its address.
    list: ffi::Kept,
    time: ffi::Kept,
    complex: ffi::Kept,
    as_character: ffi::Kept,
}

thread_local! {
    // Global because the core's serializer calls R's conversions through
    // `RValue`, which carries no context; set at each entry point that serializes.
    static HELPERS: RefCell<Option<Rc<Helpers>>> = const { RefCell::new(None) };
}

/// Remember the helpers R passes with every entry point that serializes.
pub fn set_helpers(list: &Robj) -> Result<(), String> {
    // SAFETY: reads the SEXP of a live object.
    let given = unsafe { list.get() };
    // SAFETY: as above, of an object the helpers keep.
    let same = HELPERS.with(|h| h.borrow().as_ref().is_some_and(|h| unsafe { h.list.get() } == given));
    if same {
        return Ok(());
    }
    let item = |name: &str| -> Result<ffi::Kept, String> {
        let v =
            mcplite_core::r::field(&Sx::borrowed(list), name).ok_or_else(|| format!("helper `{name}` is missing"))?;
        v.keep().map_err(|e| e.to_string())
    };
    let helpers = Helpers {
        list: ffi::keep(list).map_err(|e| e.to_string())?,
        time: item("time")?,
        complex: item("complex")?,
        as_character: item("as_character")?,
    };
    let utf8 = mcplite_core::r::field(&Sx::borrowed(list), "utf8").ok_or("helper `utf8` is missing")?;
    let utf8 = mcplite_core::r::flag1(&utf8).unwrap_or(true);
    ffi::set_utf8_locale(utf8);
    HELPERS.with(|h| *h.borrow_mut() = Some(Rc::new(helpers)));
    Ok(())
}

fn helpers() -> Result<Rc<Helpers>, String> {
    HELPERS.with(|h| h.borrow().clone()).ok_or_else(|| "the conversion helpers were not given".to_string())
}

/// A SEXP seen by the core. Objects reached from a root are kept alive by
/// that root; roots and objects R made for us (conversions) own what keeps
/// them (an `Robj`, or a [`ffi::Kept`] for what the glue made), which their
/// children share.
#[derive(Clone)]
pub struct Sx {
    sexp: SEXP,
    /// R's type and vector length, read once (the serializer asks per element).
    ty: SEXPTYPE,
    n: usize,
    /// R's error for a vector whose data R could not produce (see
    /// [`materialize`]): the view is then refused, with this message, rather
    /// than read.
    unreadable: Option<Rc<String>>,
    keep: Option<Rc<dyn std::any::Any>>,
}

/// The types whose length a view holds (pairlists too: describe() gives
/// their length, as R's is.list() holds for them).
fn vector_type(ty: SEXPTYPE) -> bool {
    use SEXPTYPE::*;
    matches!(ty, LGLSXP | INTSXP | REALSXP | CPLXSXP | STRSXP | VECSXP | RAWSXP | LISTSXP)
}

/// The type and vector length (0 for non-vectors) of a live object, and R's
/// error when its data cannot be read (see [`materialize`]).
fn type_and_len(sexp: SEXP) -> (SEXPTYPE, usize, Option<Rc<String>>) {
    use SEXPTYPE::*;
    // SAFETY: `sexp` is a live R object; xlength only on vector types.
    unsafe {
        let ty = extendr_ffi::TYPEOF(sexp);
        let n = if vector_type(ty) { extendr_ffi::Rf_xlength(sexp).max(0) as usize } else { 0 };
        let unreadable = match ty {
            LGLSXP | INTSXP | REALSXP | CPLXSXP | STRSXP | RAWSXP if n > 0 => materialize(sexp).err().map(Rc::new),
            _ => None,
        };
        (ty, n, unreadable)
    }
}

/// Makes the data of an ALTREP atomic vector (a compact sequence, a deferred
/// string, another package's lazy vector) under R's error protection, so
/// that reading it later raises no R error: making it is an allocation or
/// the class's own code, either of which can fail (a sequence too long for
/// the memory left, a file that is gone). Returns R's error message when R
/// failed; the value is then refused rather than read. Ordinary vectors cost
/// one call.
///
/// # Safety
/// `sexp` must be a live atomic vector.
unsafe fn materialize(sexp: SEXP) -> Result<(), String> {
    // SAFETY: a live object (the caller's contract); the JSON text check only
    // reads it, and DATAPTR_RO runs under protection.
    unsafe {
        if extendr_ffi::ALTREP(sexp) == 0 {
            return Ok(());
        }
        // A JSON text is read through its bytes; making its string is what
        // the class exists to avoid.
        let mut p: *const u8 = std::ptr::null();
        let mut len: isize = 0;
        if ffi::mcplite_json_bytes(sexp, &mut p, &mut len) != 0 {
            return Ok(());
        }
        if ffi::protected(|| {
            extendr_ffi::DATAPTR_RO(sexp);
        })
        .is_some()
        {
            return Ok(());
        }
        Err(ffi::last_error_message())
    }
}

impl Sx {
    /// A view of an object the caller keeps alive for as long as this lives.
    pub fn borrowed(robj: &Robj) -> Sx {
        // SAFETY: the caller's Robj outlives the view.
        let sexp = unsafe { robj.get() };
        let (ty, n, unreadable) = type_and_len(sexp);
        Sx { sexp, ty, n, unreadable, keep: None }
    }

    /// A view for describing the object in a message (`r::describe`), which
    /// reads the data of a single value only: a long lazy vector (`1:1e9`)
    /// is not made for that. Only for describing.
    pub fn for_description(robj: &Robj) -> Sx {
        // SAFETY: the caller's Robj outlives the view.
        let sexp = unsafe { robj.get() };
        // SAFETY: TYPEOF and xlength (of a vector) read the header of a live
        // object; neither makes an ALTREP vector's data.
        let (ty, n) = unsafe {
            let ty = extendr_ffi::TYPEOF(sexp);
            (ty, if vector_type(ty) { extendr_ffi::Rf_xlength(sexp).max(0) as usize } else { 0 })
        };
        if n == 1 {
            return Sx::borrowed(robj);
        }
        Sx { sexp, ty, n, unreadable: None, keep: None }
    }

    /// A view that keeps the object alive itself.
    pub fn owned(robj: Robj) -> Sx {
        // SAFETY: the Robj is kept alive by `keep`.
        let sexp = unsafe { robj.get() };
        let (ty, n, unreadable) = type_and_len(sexp);
        Sx { sexp, ty, n, unreadable, keep: Some(Rc::new(robj)) }
    }

    /// A view that keeps an object the glue made alive itself.
    pub fn kept(kept: ffi::Kept) -> Sx {
        // SAFETY: the object is kept alive by `keep`.
        let sexp = unsafe { kept.get() };
        let (ty, n, unreadable) = type_and_len(sexp);
        Sx { sexp, ty, n, unreadable, keep: Some(Rc::new(kept)) }
    }

    /// R's `NULL`.
    pub fn null() -> Sx {
        // SAFETY: R_NilValue is a global constant.
        Sx { sexp: unsafe { extendr_ffi::R_NilValue }, ty: SEXPTYPE::NILSXP, n: 0, unreadable: None, keep: None }
    }

    fn child(&self, sexp: SEXP) -> Sx {
        let (ty, n, unreadable) = type_and_len(sexp);
        Sx { sexp, ty, n, unreadable, keep: self.keep.clone() }
    }

    /// The `row.names` attribute in its stored form. getAttrib() expands
    /// automatic row names (stored as `c(NA, -n)`) into a compact sequence
    /// 1..n (a small allocation, hence under protection), whose data the view
    /// would then make: n integers for nothing, since the serializer needs
    /// only the count. Such a sequence, or any other lazy integer row names,
    /// is given back as `c(NA, -n)`, so no data is made and the core sees
    /// the form it reads (see `rjson::encode`'s `nrow_of`).
    fn row_names(&self, sym: SEXP) -> Option<Sx> {
        // SAFETY: getAttrib on a live object that is not a CHARSXP, under
        // protection (as the allocation); an expanded sequence is only read
        // for its length before the new vector is made.
        let robj = ffi::make(|| unsafe {
            let value = extendr_ffi::Rf_getAttrib(self.sexp, sym);
            if extendr_ffi::TYPEOF(value) != SEXPTYPE::INTSXP || extendr_ffi::ALTREP(value) == 0 {
                return value;
            }
            let n = extendr_ffi::Rf_xlength(value).min(i32::MAX as isize) as i32;
            let stored = extendr_ffi::Rf_allocVector(SEXPTYPE::INTSXP, 2);
            let p = extendr_ffi::INTEGER(stored);
            *p = extendr_ffi::R_NaInt;
            *p.add(1) = -n;
            stored
        })
        .ok()?;
        if robj.is_null() {
            return None;
        }
        Some(Sx::kept(robj))
    }

    #[inline]
    fn typeof_(&self) -> SEXPTYPE {
        self.ty
    }

    /// The object as an `&Robj`, for as long as this view (which keeps it
    /// alive, or borrows it from a caller that does) is borrowed.
    pub fn as_robj(&self) -> &Robj {
        // SAFETY: the object is alive while the view is (see the constructors).
        unsafe { ffi::as_robj(&self.sexp) }
    }

    /// The object kept from R's collector for as long as the `Kept` lives,
    /// outside extendr's ownership table (see `ffi::Kept`).
    pub fn keep(&self) -> std::result::Result<ffi::Kept, ffi::RFailure> {
        ffi::keep(self.as_robj())
    }

    /// The object as an Robj (protected while the Robj lives).
    pub fn robj(&self) -> Robj {
        // SAFETY: sexp is live; from_sexp protects it for the Robj's lifetime.
        unsafe { Robj::from_sexp(self.sexp) }
    }

    fn slice<T>(&self, ptr: *const T) -> &[T] {
        let n = self.len();
        if n == 0 || ptr.is_null() {
            return &[];
        }
        // SAFETY: ptr is the data pointer of a live vector of n elements of T.
        unsafe { std::slice::from_raw_parts(ptr, n) }
    }

    fn typed<T>(&self, want: SEXPTYPE, get: unsafe extern "C" fn(SEXP) -> *const T) -> &[T] {
        if self.typeof_() != want || self.unreadable.is_some() {
            return &[];
        }
        // SAFETY: the type was checked above, so `get` is the right accessor.
        self.slice(unsafe { get(self.sexp) })
    }
}

fn symbol(name: &str) -> Option<SEXP> {
    // SAFETY: reading R's global symbol constants.
    unsafe {
        Some(match name {
            "names" => extendr_ffi::R_NamesSymbol,
            "dim" => extendr_ffi::R_DimSymbol,
            "dimnames" => extendr_ffi::R_DimNamesSymbol,
            "class" => extendr_ffi::R_ClassSymbol,
            "levels" => extendr_ffi::R_LevelsSymbol,
            "row.names" => extendr_ffi::R_RowNamesSymbol,
            _ => return None,
        })
    }
}

impl RValue for Sx {
    fn rtype(&self) -> RType {
        use SEXPTYPE::*;
        if self.unreadable.is_some() {
            return RType::Other;
        }
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
        // SAFETY: type2char returns a pointer to a static C string (or null).
        unsafe {
            let p = ffi::Rf_type2char(self.typeof_());
            if p.is_null() {
                return "unknown".to_string();
            }
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.n
    }

    fn is_s4(&self) -> bool {
        // SAFETY: live object.
        unsafe { extendr_ffi::Rf_isS4(self.sexp) != extendr_ffi::Rboolean::FALSE }
    }

    fn class(&self) -> Vec<String> {
        self.attr("class").and_then(|c| mcplite_core::r::strings(&c)).unwrap_or_default()
    }

    fn attr(&self, name: &str) -> Option<Self> {
        use SEXPTYPE::*;
        let sym = symbol(name)?;
        // SAFETY: TYPEOF reads the header of a live object.
        let ty = unsafe { extendr_ffi::TYPEOF(self.sexp) };
        match ty {
            // getAttrib() refuses CHARSXPs; a pairlist's or call's names are
            // its tags (made anew by getAttrib), never an attribute.
            CHARSXP => return None,
            LISTSXP | LANGSXP | DOTSXP if name == "names" => return None,
            _ => {}
        }
        if name == "row.names" {
            return self.row_names(sym);
        }
        // SAFETY: a live object that is not a CHARSXP and, for `names`, not a
        // pairlist: getAttrib() then only looks the attribute up (no
        // allocation, no error). The value is reachable from the object.
        let value = unsafe { extendr_ffi::Rf_getAttrib(self.sexp, sym) };
        // SAFETY: R_NilValue is a global constant.
        if value == unsafe { extendr_ffi::R_NilValue } {
            return None;
        }
        Some(self.child(value))
    }

    fn logicals(&self) -> &[i32] {
        self.typed(SEXPTYPE::LGLSXP, ffi::LOGICAL_RO)
    }

    fn integers(&self) -> &[i32] {
        self.typed(SEXPTYPE::INTSXP, ffi::INTEGER_RO)
    }

    fn doubles(&self) -> &[f64] {
        self.typed(SEXPTYPE::REALSXP, ffi::REAL_RO)
    }

    fn complexes(&self) -> &[[f64; 2]] {
        // A complex vector whose data R could not make reads as empty, as
        // with the other types (`typed`).
        let data = self.typed(SEXPTYPE::CPLXSXP, ffi::COMPLEX_RO);
        // SAFETY: Rcomplex is two f64 (repr C), the same size and alignment
        // as [f64; 2]; same length, same memory.
        unsafe { std::slice::from_raw_parts(data.as_ptr() as *const [f64; 2], data.len()) }
    }

    fn raws(&self) -> &[u8] {
        self.typed(SEXPTYPE::RAWSXP, ffi::RAW_RO)
    }

    fn str_elt(&self, i: usize) -> Option<Cow<'_, [u8]>> {
        if self.typeof_() != SEXPTYPE::STRSXP || i >= self.len() || self.unreadable.is_some() {
            return None;
        }
        // A JSON text is read without R making its string.
        if let Some(b) = self.core_json() {
            return Some(Cow::Borrowed(b));
        }
        // SAFETY: a character vector and an index below its length; CHARSXPs
        // live as long as their vector.
        unsafe { ffi::charsxp_utf8(extendr_ffi::STRING_ELT(self.sexp, i as isize)) }
    }

    fn read_error(&self) -> Option<String> {
        self.unreadable.as_ref().map(|why| {
            format!(
                "R could not produce the values of an ALTREP {} vector of length {}: {why}",
                self.type_name(),
                self.n
            )
        })
    }

    fn str_keys(&self) -> Option<&[usize]> {
        if self.typeof_() != SEXPTYPE::STRSXP || self.len() == 0 {
            return None;
        }
        // SAFETY: ALTREP() reads the header of a live object. An ALTREP
        // vector's data pointer may have to be made (an allocation that can
        // fail), so those get no keys.
        if unsafe { extendr_ffi::ALTREP(self.sexp) } != 0 {
            return None;
        }
        // SAFETY: an ordinary character vector: STRING_PTR_RO returns its
        // array of CHARSXP pointers (never allocating), alive as long as the
        // vector; a SEXP is a pointer, so it reads as a usize.
        Some(self.slice(unsafe { extendr_ffi::STRING_PTR_RO(self.sexp) } as *const usize))
    }

    fn core_json(&self) -> Option<&[u8]> {
        // JSON texts have length one; longer vectors (data-frame columns)
        // skip the check.
        if self.typeof_() != SEXPTYPE::STRSXP || self.len() != 1 {
            return None;
        }
        let mut p: *const u8 = std::ptr::null();
        let mut n: isize = 0;
        // SAFETY: a live object and two out-pointers; the C function only
        // reads the object (it never allocates or fails).
        let ours = unsafe { ffi::mcplite_json_bytes(self.sexp, &mut p, &mut n) } != 0;
        if !ours {
            return None;
        }
        if p.is_null() || n <= 0 {
            return Some(&[]);
        }
        // SAFETY: the raw vector's data, n bytes, owned by the JSON text this
        // view keeps alive; R code cannot change it (it is dropped instead).
        Some(unsafe { std::slice::from_raw_parts(p, n as usize) })
    }

    fn is_json_written_from(&self, value: &Self) -> bool {
        // SAFETY: two live objects; the C function only reads them (it never
        // allocates or fails).
        unsafe { ffi::mcplite_json_written_from(self.sexp, value.sexp) != 0 }
    }

    fn list_elt(&self, i: usize) -> Self {
        if self.typeof_() != SEXPTYPE::VECSXP || i >= self.len() {
            // SAFETY: R_NilValue is a global constant.
            return self.child(unsafe { extendr_ffi::R_NilValue });
        }
        // SAFETY: a list and an index below its length.
        self.child(unsafe { extendr_ffi::VECTOR_ELT(self.sexp, i as isize) })
    }

    fn convert(&self, conv: Conversion<'_>) -> std::result::Result<Self, String> {
        let h = helpers()?;
        let x = self.as_robj();
        // The helpers' arguments are made under protection, as R values.
        let failed = |e: ffi::RFailure| format!("R conversion failed: {e}");
        let out = match conv {
            Conversion::FormatTime { classes, posixlt_to_ct } => {
                let is_date = classes.first().map(String::as_str) == Some("Date");
                let classes = ffi::strings(classes).map_err(failed)?;
                let lt = ffi::flag(posixlt_to_ct).map_err(failed)?;
                let date = ffi::flag(is_date).map_err(failed)?;
                ffi::call_for_tool(&h.time, &[x, &classes, &lt, &date])
            }
            Conversion::ComplexStrings { digits } => {
                let digits = ffi::integer(digits).map_err(failed)?;
                ffi::call_for_tool(&h.complex, &[x, &digits])
            }
            Conversion::AsCharacter { classes } => {
                let classes = ffi::strings(classes).map_err(failed)?;
                ffi::call_for_tool(&h.as_character, &[x, &classes])
            }
        };
        let out = out.map_err(failed)?;
        let sx = Sx::kept(out);
        if sx.rtype() == RType::List {
            // The helper caught an R error and returned its message.
            let msg = mcplite_core::r::string1(&sx.list_elt(0)).unwrap_or_default();
            return Err(format!("R conversion failed: {msg}"));
        }
        Ok(sx)
    }
}
