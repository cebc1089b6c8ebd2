//! The view of an R object that the serializer needs.
//!
//! The glue crate implements [`RValue`] over SEXPs; the tests implement it
//! over a plain Rust enum, so the encoder is exercised without R.

use std::borrow::Cow;

/// R's `NA_real_`: a NaN whose low word is 1954 (what `R_IsNA` tests).
pub fn is_na_real(d: f64) -> bool {
    d.is_nan() && (d.to_bits() & 0xFFFF_FFFF) == 1954
}

/// The R storage types the serializer distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RType {
    Null,
    Logical,
    Integer,
    Double,
    Complex,
    Character,
    Raw,
    /// A generic vector (`list`).
    List,
    /// Anything else (environment, closure, external pointer, language, ...);
    /// [`RValue::type_name`] says which.
    Other,
}

/// Conversions that need R's own semantics (time zones, R's number printer);
/// the glue performs them by calling R, exactly as jsonlite does.
#[derive(Clone, Copy, Debug)]
pub enum Conversion<'a> {
    /// `format(x)` for Date, `format(x, format = "")` for POSIXct/POSIXlt,
    /// after setting the class attribute to `classes` (jsonlite strips the
    /// classes it has dispatched past). With `posixlt_to_ct`, the object is
    /// instead passed through `as.POSIXct()` unchanged (what jsonlite does to
    /// POSIXlt data-frame columns) and `classes` is ignored.
    FormatTime { classes: &'a [String], posixlt_to_ct: bool },
    /// `prettyNum(x, digits = digits)` of a complex vector, element-wise.
    ComplexStrings { digits: i32 },
    /// `as.character(x)` after setting the class attribute to `classes`
    /// (used for `hms` and `ITime`).
    AsCharacter { classes: &'a [String] },
}

/// An R object as seen by the serializer. Accessors for a type other than the
/// object's own may return an empty slice; the encoder only calls the one
/// that matches [`RValue::rtype`]. Clones must be cheap handles.
pub trait RValue: Sized + Clone {
    fn rtype(&self) -> RType;
    /// R's `typeof()` name, for error messages.
    fn type_name(&self) -> String;
    /// `length()` of the underlying vector (not dispatched).
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn is_s4(&self) -> bool;
    /// The explicit `class` attribute; empty when there is none.
    fn class(&self) -> Vec<String>;
    /// Any other attribute (`names`, `dim`, `levels`, `row.names`, `dimnames`).
    /// `row.names` must be returned as stored, compact form included.
    fn attr(&self, name: &str) -> Option<Self>;
    fn logicals(&self) -> &[i32];
    fn integers(&self) -> &[i32];
    fn doubles(&self) -> &[f64];
    /// Complex numbers as `[re, im]` pairs.
    fn complexes(&self) -> &[[f64; 2]];
    fn raws(&self) -> &[u8];
    /// Element `i` of a character vector as UTF-8 bytes; `None` for NA.
    fn str_elt(&self, i: usize) -> Option<Cow<'_, [u8]>>;
    /// The bytes of a JSON text the serializer made and R code cannot have
    /// changed (the glue's JSON text objects, which `tool_result()` holds):
    /// compact, valid UTF-8, one value, so they need no validation before
    /// they are written. `None` for every other object.
    fn core_json(&self) -> Option<&[u8]> {
        None
    }
    /// Whether this is such a JSON text (see [`RValue::core_json`]) written
    /// from `value` itself, the very same R object. The JSON text refers to
    /// its source, so R copies the source before any change: the same object
    /// means the JSON is still that value's. `false` for every other pair.
    fn is_json_written_from(&self, _value: &Self) -> bool {
        false
    }
    /// Why the vector's values cannot be read (R failed to produce the data
    /// of a lazily computed vector); `None` for every readable object. Such
    /// a value reports [`RType::Other`], and the serializer refuses it with
    /// this message.
    fn read_error(&self) -> Option<String> {
        None
    }
    /// The identities of a character vector's strings, one per element:
    /// two elements with the same key have the same text (R keeps one
    /// CHARSXP per distinct string and encoding, and keys are their
    /// addresses). Keys are never 0. `None` when there are none to give
    /// (a compact or deferred vector); the serializer then reads every
    /// element.
    fn str_keys(&self) -> Option<&[usize]> {
        None
    }
    /// Element `i` of a list.
    fn list_elt(&self, i: usize) -> Self;
    /// See [`Conversion`]; the result is a character vector.
    fn convert(&self, conv: Conversion<'_>) -> Result<Self, String>;
}
