//! R <-> JSON for protocol data: parsing JSON into shape-preserving R lists,
//! and the fixed encoding used for schemas, annotations and `_meta`.

use extendr_api::prelude::*;
use extendr_ffi as ffi;
use serde_json::{Map, Number, Value};
use std::ffi::CStr;

/// Nesting deeper than this is refused instead of risking the C stack.
pub const MAX_DEPTH: usize = 512;

// SEXP is an opaque pointer on the C side.
#[allow(improper_ctypes)]
extern "C" {
    fn Rf_inherits(x: ffi::SEXP, klass: *const std::os::raw::c_char) -> ffi::Rboolean;
}

/// Does `x` carry class `klass`?
pub fn inherits(x: ffi::SEXP, klass: &CStr) -> bool {
    unsafe { Rf_inherits(x, klass.as_ptr()) != ffi::Rboolean::FALSE }
}

/// UTF-8 text of a CHARSXP (None for NA); invalid bytes become U+FFFD.
pub fn char_utf8(ch: ffi::SEXP) -> Option<String> {
    // SAFETY: callers pass CHARSXPs taken from live vectors.
    unsafe { crate::rjson::charsxp_utf8(ch) }.map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The element of list `x` named exactly `name` (R's `$` would also match a
/// prefix, and extendr's `dollar()` evaluates R code on every call).
pub fn list_elt(x: &Robj, name: &str) -> Option<Robj> {
    let list = x.as_list()?;
    list.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
}

/// JSON value -> R: objects become named lists (`{}` a list with empty names),
/// arrays unnamed lists, integers that fit int32 integer vectors.
pub fn value_to_robj(v: &Value) -> Robj {
    match v {
        Value::Null => ().into(),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => number_to_robj(n),
        Value::String(s) => s.as_str().into(),
        Value::Array(items) => List::from_values(items.iter().map(value_to_robj)).into(),
        Value::Object(map) => object_to_robj(map),
    }
}

fn number_to_robj(n: &Number) -> Robj {
    match n.as_i64() {
        // i32::MIN is R's NA_integer_, so it stays a double.
        Some(i) if i > i32::MIN as i64 && i <= i32::MAX as i64 => (i as i32).into(),
        _ => n.as_f64().unwrap_or(f64::NAN).into(),
    }
}

pub fn object_to_robj(map: &Map<String, Value>) -> Robj {
    let names: Vec<&str> = map.keys().map(String::as_str).collect();
    let values: Vec<Robj> = map.values().map(value_to_robj).collect();
    let mut list: Robj = List::from_values(values).into();
    let names: Robj = names.into_iter().collect_robj();
    // Setting names on an empty list keeps `character(0)`: the `{}` marker.
    let _ = list.set_attrib(names_symbol(), names);
    list
}

/// Fixed (protocol) encoding of an R value. See ARCHITECTURE.md.
pub fn robj_to_value(x: &Robj) -> std::result::Result<Value, String> {
    to_value(unsafe { x.get() }, 0)
}

fn to_value(x: ffi::SEXP, depth: usize) -> std::result::Result<Value, String> {
    use ffi::SEXPTYPE::*;
    if depth > MAX_DEPTH {
        return Err(format!("nesting deeper than {MAX_DEPTH} levels"));
    }
    unsafe {
        let n = ffi::Rf_xlength(x) as usize;
        let scalar = n == 1 && !inherits(x, c"AsIs");
        let t = ffi::TYPEOF(x);
        let items: Vec<Value> = match t {
            NILSXP => return Ok(Value::Null),
            LGLSXP => {
                let p = ffi::LOGICAL(x);
                (0..n)
                    .map(|i| {
                        let b = *p.add(i);
                        if b == ffi::R_NaInt { Value::Null } else { Value::Bool(b != 0) }
                    })
                    .collect()
            }
            INTSXP if inherits(x, c"factor") => {
                let levels = ffi::Rf_getAttrib(x, ffi::R_LevelsSymbol);
                let p = ffi::INTEGER(x);
                (0..n)
                    .map(|i| {
                        let code = *p.add(i);
                        if code == ffi::R_NaInt || code < 1 {
                            Value::Null
                        } else {
                            char_utf8(ffi::STRING_ELT(levels, (code - 1) as ffi::R_xlen_t))
                                .map_or(Value::Null, Value::String)
                        }
                    })
                    .collect()
            }
            INTSXP => {
                let p = ffi::INTEGER(x);
                (0..n)
                    .map(|i| {
                        let v = *p.add(i);
                        if v == ffi::R_NaInt { Value::Null } else { Value::from(v) }
                    })
                    .collect()
            }
            REALSXP => {
                let p = ffi::REAL(x);
                (0..n).map(|i| double_value(*p.add(i))).collect()
            }
            STRSXP => (0..n)
                .map(|i| char_utf8(ffi::STRING_ELT(x, i as ffi::R_xlen_t)).map_or(Value::Null, Value::String))
                .collect(),
            VECSXP => {
                let names = ffi::Rf_getAttrib(x, ffi::R_NamesSymbol);
                let mut values = Vec::with_capacity(n);
                for i in 0..n {
                    values.push(to_value(ffi::VECTOR_ELT(x, i as ffi::R_xlen_t), depth + 1)?);
                }
                if ffi::TYPEOF(names) == STRSXP {
                    let mut map = Map::with_capacity(n);
                    for (i, v) in values.into_iter().enumerate() {
                        let key = char_utf8(ffi::STRING_ELT(names, i as ffi::R_xlen_t)).unwrap_or_default();
                        map.insert(key, v);
                    }
                    return Ok(Value::Object(map));
                }
                return Ok(Value::Array(values));
            }
            other => return Err(format!("cannot encode an R object of type {}", type_name(other))),
        };
        if scalar {
            Ok(items.into_iter().next().unwrap_or(Value::Null))
        } else {
            Ok(Value::Array(items))
        }
    }
}

/// Integral doubles keep integer form (300000, never 3e+05); non-finite values
/// have no JSON form and become null.
pub fn double_value(d: f64) -> Value {
    if d.is_finite() && d.fract() == 0.0 && d.abs() < 9_007_199_254_740_992.0 {
        Value::from(d as i64)
    } else {
        Number::from_f64(d).map_or(Value::Null, Value::Number)
    }
}

pub fn type_name(t: ffi::SEXPTYPE) -> &'static str {
    use ffi::SEXPTYPE::*;
    match t {
        NILSXP => "NULL",
        SYMSXP => "symbol",
        LISTSXP => "pairlist",
        CLOSXP | SPECIALSXP | BUILTINSXP => "function",
        ENVSXP => "environment",
        PROMSXP => "promise",
        LANGSXP => "language",
        CHARSXP => "char",
        LGLSXP => "logical",
        INTSXP => "integer",
        REALSXP => "double",
        CPLXSXP => "complex",
        STRSXP => "character",
        DOTSXP => "...",
        EXPRSXP => "expression",
        VECSXP => "list",
        EXTPTRSXP => "externalptr",
        WEAKREFSXP => "weakref",
        RAWSXP => "raw",
        S4SXP => "S4",
        _ => "unknown",
    }
}
