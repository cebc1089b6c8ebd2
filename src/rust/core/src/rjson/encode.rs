//! The value walker: jsonlite's `asJSON()` dispatch, streamed into one buffer.
//!
//! jsonlite builds a character vector per level and pastes it together; we
//! write straight into the output. `collapse = FALSE` (the per-element
//! strings jsonlite makes for data-frame columns, matrices and `unbox()`) is
//! modelled by [`Column`], which writes element `i` on demand, so data frames
//! are written row by row without materialising per-cell strings.

use super::escape::{write_base64, write_hex_byte, write_json_string};
use super::names::clean_names;
use super::number::{write_f64, write_f64_short, write_i32, write_i32_short, zeroed, Digits, SHORT_ROOM};
use super::out::put;
use super::value::{is_na_real, Conversion, RType, RValue};
use super::{NaOption, NullMode, Options};

/// Serializes `x` and appends the JSON text to `out`. On error `out` may hold
/// a partial document; callers discard it.
pub fn to_json_into<V: RValue>(x: &V, opts: &Options, out: Vec<u8>) -> Result<Vec<u8>, String> {
    let mut enc = Encoder::new(opts, out);
    enc.write_root(x)?;
    if enc.zeroed {
        super::note_zeroed();
    }
    Ok(enc.out)
}

/// Serializes `x` to JSON text.
pub fn to_json<V: RValue>(x: &V, opts: &Options) -> Result<Vec<u8>, String> {
    to_json_into(x, opts, Vec::new())
}

/// Serializes `x` into a per-thread buffer reused across calls and hands the
/// text to `f` (which copies it where it belongs, e.g. into an R string).
/// Reusing the buffer spares the page faults of fresh memory on every call,
/// a large part of the cost of a multi-megabyte answer. Re-entrant calls get
/// another buffer.
pub fn with_json<V: RValue, R>(x: &V, opts: &Options, f: impl FnOnce(&[u8]) -> R) -> Result<R, String> {
    let bytes = to_json_into(x, opts, super::take_buffer())?;
    let ret = f(&bytes);
    super::give_back(bytes);
    Ok(ret)
}

/// Maximum nesting of lists, data frames and arrays. jsonlite itself runs out
/// of C stack at about 150 levels, so nothing it can serialize is refused.
pub const MAX_DEPTH: usize = 512;

const NA_INTEGER: i32 = i32::MIN;

/// jsonlite's `na` argument as it travels down the recursion. `Default` is
/// "not given" (each class picks its own default); `Omit` is jsonlite's
/// internal `"NA"`, used for data-frame columns so missing fields are dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Na {
    Default,
    Null,
    Str,
    Omit,
}

#[derive(Clone, Copy, Debug)]
struct Ctx {
    na: Na,
    /// The data frame's own `na`, restored for list and matrix cells.
    oldna: Na,
    auto_unbox: bool,
}

impl Ctx {
    /// What lists and arrays pass to their elements: jsonlite resets the
    /// internal "NA" mode to `oldna`, and `oldna` does not travel further.
    fn for_elements(self) -> Ctx {
        Ctx {
            na: if self.na == Na::Omit { self.oldna } else { self.na },
            oldna: Na::Default,
            auto_unbox: self.auto_unbox,
        }
    }
}

/// The asJSON method jsonlite would select.
enum Method {
    Null,
    Logical,
    Numeric,
    Character,
    Complex,
    Raw,
    List,
    Array,
    DataFrame,
    Factor,
    /// Date / POSIXct / POSIXlt, with the class vector from that class on.
    Time(usize),
    /// hms / ITime: `as.character()`, class vector from that class on.
    AsChar(usize),
    Json,
    /// `ts`: `as.vector()`, i.e. dispatch on the storage type only.
    Plain,
    AsIs(usize),
    Scalar(usize),
}

fn is_atomic(t: RType) -> bool {
    matches!(t, RType::Logical | RType::Integer | RType::Double | RType::Complex | RType::Character | RType::Raw)
}

/// The way out offered with every "cannot convert" error: what a tool can
/// return instead.
const PRINTED: &str = "text from `paste(capture.output(print(x)), collapse = \"\\n\")`";

fn unsupported<V: RValue>(v: &V) -> String {
    if let Some(e) = v.read_error() {
        return e;
    }
    let t = v.type_name();
    match t.as_str() {
        "closure" | "builtin" | "special" => {
            format!("cannot convert a function (R type '{t}') to JSON; return what it computes, or {PRINTED}")
        }
        "environment" => format!(
            "cannot convert an object of R type '{t}' to JSON; return a list of the values you need (`as.list(x)`), or {PRINTED}"
        ),
        "symbol" | "language" | "expression" | "pairlist" => {
            format!("cannot convert an object of R type '{t}' to JSON; return it as text with `deparse(x)`")
        }
        _ => format!("cannot convert an object of R type '{t}' to JSON; return a list of the parts you need, or {PRINTED}"),
    }
}

/// A class with no JSON mapping (a model fit, a summary, ...).
fn no_mapping(class: &str) -> String {
    format!(
        "cannot convert an object of class '{class}' to JSON: no mapping for that class; return a list of the parts \
         you need, a data frame, `unclass(x)`, or {PRINTED}"
    )
}

fn by_type<V: RValue>(v: &V) -> Result<Method, String> {
    Ok(match v.rtype() {
        RType::Null => Method::Null,
        RType::Logical => Method::Logical,
        RType::Integer | RType::Double => Method::Numeric,
        RType::Character => Method::Character,
        RType::Complex => Method::Complex,
        RType::Raw => Method::Raw,
        RType::List => Method::List,
        RType::Other => return Err(unsupported(v)),
    })
}

/// S4-style dispatch as jsonlite gets it: the first class with a method wins;
/// unknown classes are skipped (jsonlite's "ANY" method), but running out of
/// classes is an error, as in jsonlite.
fn resolve<V: RValue>(v: &V, classes: &[String]) -> Result<Method, String> {
    if let Some(e) = v.read_error() {
        return Err(e);
    }
    if v.is_s4() {
        let c = classes.first().map(String::as_str).unwrap_or("?");
        return Err(format!(
            "cannot convert an S4 object (class '{c}') to JSON; return a list of the slots you need, or {PRINTED}"
        ));
    }
    let t = v.rtype();
    for (i, c) in classes.iter().enumerate() {
        let m = match c.as_str() {
            "AsIs" => Method::AsIs(i),
            "scalar" => Method::Scalar(i),
            "json" => Method::Json,
            "data.frame" => Method::DataFrame,
            "factor" => Method::Factor,
            "Date" | "POSIXct" | "POSIXlt" | "POSIXt" => Method::Time(i),
            "hms" | "ITime" => Method::AsChar(i),
            // Multivariate time series are registered as matrices for S4
            // dispatch, so jsonlite writes them row-wise.
            "mts" if v.attr("dim").is_some() => Method::Array,
            "ts" => Method::Plain,
            "list" if t == RType::List => Method::List,
            "numeric" if matches!(t, RType::Integer | RType::Double) => Method::Numeric,
            "integer" if t == RType::Integer => Method::Numeric,
            "double" if t == RType::Double => Method::Numeric,
            "character" if t == RType::Character => Method::Character,
            "logical" if t == RType::Logical => Method::Logical,
            "complex" if t == RType::Complex => Method::Complex,
            "raw" if t == RType::Raw => Method::Raw,
            "matrix" | "array" if v.attr("dim").is_some() => Method::Array,
            "function" => return Err(unsupported(v)),
            _ => continue,
        };
        return Ok(m);
    }
    if let Some(first) = classes.first() {
        return Err(no_mapping(first));
    }
    if t != RType::Null && v.attr("dim").is_some() {
        return Ok(Method::Array);
    }
    by_type(v)
}

/// `setdiff(classes, "AsIs")`: drops AsIs and duplicates, keeps order.
fn strip_asis(classes: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(classes.len());
    for c in classes {
        if c != "AsIs" && !out.contains(c) {
            out.push(c.clone());
        }
    }
    out
}

/// One `collapse = FALSE` result: a vector of JSON texts, produced lazily.
enum Column<V> {
    Logical(V, Na),
    Integer(V, Na),
    Double(V, Na),
    Character(V, Na),
    /// Factor codes with their levels pre-rendered as JSON strings.
    Factor(V, Vec<Option<Vec<u8>>>, Na),
    /// Raw data-frame column: hex text per byte.
    Hex(V),
    /// Raw vector elsewhere: one base64 string.
    Base64(V),
    /// prettyNum() strings plus the numbers (for `is.finite()`).
    Complex(V, V, Na),
    /// List cells: each a full value.
    List(V, Ctx),
    /// Data-frame rows.
    Rows(Box<DataFrame<V>>),
    /// First-index slices of a matrix or array.
    Slices(Box<ArrayPlan<V>>),
    /// A single JSON text (what jsonlite returns for NULL, raw, named lists and
    /// 1-d arrays even when asked not to collapse).
    Whole(V, Vec<String>, Ctx),
}

struct DataFrame<V> {
    nrow: usize,
    /// `,"name":` prefixes, or `None` when the frame has no usable names
    /// (rows are then written as arrays).
    keys: Option<Vec<Vec<u8>>>,
    cols: Vec<Column<V>>,
}

struct ArrayPlan<V> {
    dims: Vec<usize>,
    strides: Vec<usize>,
    elems: Column<V>,
}

/// Streams JSON for R values into `out`.
pub struct Encoder<'o> {
    opts: &'o Options,
    pub out: Vec<u8>,
    depth: usize,
    /// A finite non-zero number was written as 0 (`digits` too few).
    pub zeroed: bool,
}

impl<'o> Encoder<'o> {
    pub fn new(opts: &'o Options, out: Vec<u8>) -> Self {
        Encoder { opts, out, depth: 0, zeroed: false }
    }

    /// Writes `x` as `jsonlite::toJSON()` would with these options.
    pub fn write_root<V: RValue>(&mut self, x: &V) -> Result<(), String> {
        let na = match self.opts.na {
            NaOption::Unset => Na::Default,
            NaOption::Null => Na::Null,
            NaOption::String => Na::Str,
        };
        let ctx = Ctx { na, oldna: Na::Default, auto_unbox: self.opts.auto_unbox };
        let classes = x.class();
        self.value(x, &classes, ctx)
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("value is nested too deeply to convert to JSON (more than {MAX_DEPTH} levels)"));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Opens an array or object. The depth counts JSON brackets exactly, so
    /// the text never nests deeper than [`MAX_DEPTH`] (what the validator
    /// accepts).
    #[inline]
    fn open(&mut self, bracket: u8) -> Result<(), String> {
        self.enter()?;
        self.out.push(bracket);
        Ok(())
    }

    #[inline]
    fn close(&mut self, bracket: u8) {
        self.out.push(bracket);
        self.leave();
    }

    fn write_null(&mut self) -> Result<(), String> {
        match self.opts.null {
            NullMode::Null => self.out.extend_from_slice(b"null"),
            NullMode::List => {
                self.open(b'{')?;
                self.close(b'}');
            }
        }
        Ok(())
    }

    /// asJSON(x) with collapse = TRUE.
    fn value<V: RValue>(&mut self, v: &V, classes: &[String], ctx: Ctx) -> Result<(), String> {
        match resolve(v, classes)? {
            Method::Null => self.write_null(),
            Method::List => {
                let names = v.attr("names");
                self.list(v, names.as_ref(), ctx)
            }
            Method::Array => self.array(v, ctx),
            Method::DataFrame => {
                let df = self.data_frame(v, ctx)?;
                self.open(b'[')?;
                self.rows(&df)?;
                self.close(b']');
                Ok(())
            }
            Method::Raw => self.raw_value(v, ctx.auto_unbox),
            Method::Plain => match by_type(v)? {
                Method::List => self.list(v, v.attr("names").as_ref(), ctx),
                Method::Raw => self.raw_value(v, ctx.auto_unbox),
                Method::Null => self.write_null(),
                _ => {
                    let col = self.plain_column(v, ctx)?;
                    self.vector(&col, ctx)
                }
            },
            Method::AsIs(i) => {
                let rest = strip_asis(&classes[i..]);
                let mut ctx = ctx;
                if is_atomic(v.rtype()) && v.len() == 1 {
                    // I() on a single value: never unboxed.
                    ctx.auto_unbox = false;
                }
                self.value(v, &rest, ctx)
            }
            Method::Scalar(i) => {
                let col = self.column(v, &classes[i + 1..], ctx, false)?;
                let n = col_len(&col);
                if n != 1 {
                    return Err(format!("cannot unbox a value of length {n}: unbox() needs exactly one element"));
                }
                if !self.elem(&col, 0)? {
                    self.out.extend_from_slice(b"NA");
                }
                Ok(())
            }
            _ => {
                let col = self.column(v, classes, ctx, false)?;
                self.vector(&col, ctx)
            }
        }
    }

    /// Raw vectors: base64 of the whole vector, one string, boxed unless unboxing.
    fn raw_value<V: RValue>(&mut self, v: &V, unbox: bool) -> Result<(), String> {
        if !unbox {
            self.open(b'[')?;
        }
        self.out.push(b'"');
        write_base64(&mut self.out, v.raws());
        self.out.push(b'"');
        if !unbox {
            self.close(b']');
        }
        Ok(())
    }

    /// A vector column collapsed to an array, or unboxed when it has one element.
    fn vector<V: RValue>(&mut self, col: &Column<V>, ctx: Ctx) -> Result<(), String> {
        let n = col_len(col);
        if ctx.auto_unbox && n == 1 {
            if !self.elem(col, 0)? {
                self.out.extend_from_slice(b"NA");
            }
            return Ok(());
        }
        let mut cells = cells_of(col);
        self.open(b'[')?;
        let start = self.out.len();
        for i in 0..n {
            if i > 0 {
                self.out.push(b',');
            }
            // jsonlite pastes an NA_character_ cell as the bare text NA.
            if !self.cell(&mut cells, i)? {
                self.out.extend_from_slice(b"NA");
            }
            if i == PRESIZE_AFTER {
                self.presize(start, i + 1, n);
            }
        }
        self.close(b']');
        Ok(())
    }

    /// After `done` of `total` items took `out[start..]`, reserves room for
    /// the rest at the same rate, so a large answer is not copied as it grows.
    fn presize(&mut self, start: usize, done: usize, total: usize) {
        let per = (self.out.len() - start) / done.max(1) + 1;
        let rest = per.saturating_mul(total - done.min(total));
        self.out.reserve(rest.saturating_add(rest / 32));
    }

    /// Writes the rows of a data frame, comma-separated.
    fn rows<V: RValue>(&mut self, df: &DataFrame<V>) -> Result<(), String> {
        let mut cells: Vec<Cells<'_, V>> = df.cols.iter().map(cells_of).collect();
        let keys = df.keys.as_deref();
        let start = self.out.len();
        for i in 0..df.nrow {
            if i > 0 {
                self.out.push(b',');
            }
            self.row_cells(&mut cells, keys, i)?;
            if i == PRESIZE_AFTER {
                self.presize(start, i + 1, df.nrow);
            }
        }
        Ok(())
    }

    fn list<V: RValue>(&mut self, v: &V, names: Option<&V>, ctx: Ctx) -> Result<(), String> {
        let ectx = ctx.for_elements();
        let n = v.len();
        match names {
            Some(nm) => {
                let keys = keys_of(nm, n)?;
                self.open(b'{')?;
                for (i, key) in keys.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    write_json_string(&mut self.out, key);
                    self.out.push(b':');
                    let e = v.list_elt(i);
                    let cls = e.class();
                    self.value(&e, &cls, ectx)?;
                }
                self.close(b'}');
            }
            None => {
                self.open(b'[')?;
                for i in 0..n {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    let e = v.list_elt(i);
                    let cls = e.class();
                    self.value(&e, &cls, ectx)?;
                }
                self.close(b']');
            }
        }
        Ok(())
    }

    fn array<V: RValue>(&mut self, v: &V, ctx: Ctx) -> Result<(), String> {
        let dims = dims_of(v)?;
        let mut ectx = ctx.for_elements();
        // jsonlite never passes auto_unbox into matrix cells.
        ectx.auto_unbox = false;
        if dims.len() < 2 {
            // 1-d arrays are plain vectors: c(x) keeps dimnames[[1]] as names.
            if v.rtype() == RType::List {
                let dn = v.attr("dimnames").map(|d| d.list_elt(0)).filter(|n| n.rtype() == RType::Character);
                return self.list(v, dn.as_ref(), ectx);
            }
            if v.rtype() == RType::Raw {
                return self.raw_value(v, false);
            }
            let col = self.plain_column(v, ectx)?;
            return self.vector(&col, ectx);
        }
        let plan = self.array_plan(v, dims, ectx)?;
        self.array_level(&plan, 0, 0)
    }

    fn array_plan<V: RValue>(&mut self, v: &V, dims: Vec<usize>, ectx: Ctx) -> Result<ArrayPlan<V>, String> {
        let total = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).unwrap_or(usize::MAX);
        let elems = if v.rtype() == RType::Raw {
            // jsonlite base64-encodes the whole vector as one cell, which only
            // fits the dimensions when there is exactly one byte.
            if total != 1 {
                return Err("cannot convert a raw matrix or array to JSON".to_string());
            }
            Column::Base64(v.clone())
        } else {
            self.plain_column(v, ectx)?
        };
        if col_len(&elems) != total {
            return Err("array dimensions do not match its length".to_string());
        }
        let mut strides = Vec::with_capacity(dims.len());
        let mut s = 1usize;
        for &d in &dims {
            strides.push(s);
            s = s.saturating_mul(d);
        }
        Ok(ArrayPlan { dims, strides, elems })
    }

    /// The cells of c(x): dispatch on storage type only.
    fn plain_column<V: RValue>(&mut self, v: &V, ectx: Ctx) -> Result<Column<V>, String> {
        Ok(match by_type(v)? {
            Method::Logical => Column::Logical(v.clone(), ectx.na),
            Method::Numeric => numeric_column(v.clone(), ectx.na),
            Method::Character => Column::Character(v.clone(), ectx.na),
            Method::Complex => self.complex_column(v, ectx.na)?,
            Method::List => Column::List(v.clone(), ectx.for_elements()),
            Method::Null => Column::Whole(v.clone(), Vec::new(), ectx),
            _ => return Err(unsupported(v)),
        })
    }

    fn array_level<V: RValue>(&mut self, p: &ArrayPlan<V>, level: usize, offset: usize) -> Result<(), String> {
        self.open(b'[')?;
        let d = p.dims[level];
        let st = p.strides[level];
        let last = level + 1 == p.dims.len();
        for k in 0..d {
            if k > 0 {
                self.out.push(b',');
            }
            let off = offset + k * st;
            if last {
                if !self.elem(&p.elems, off)? {
                    self.out.extend_from_slice(b"NA");
                }
            } else {
                self.array_level(p, level + 1, off)?;
            }
        }
        self.close(b']');
        Ok(())
    }

    fn complex_column<V: RValue>(&mut self, v: &V, na: Na) -> Result<Column<V>, String> {
        let digits = match self.opts.digits {
            Digits::Decimal(d) | Digits::Significant(d) => d,
            // jsonlite errors here; we give full precision instead.
            Digits::Max => 15,
        };
        let strings = v.convert(Conversion::ComplexStrings { digits })?;
        if strings.len() != v.len() {
            return Err("complex formatting returned the wrong length".to_string());
        }
        Ok(Column::Complex(strings, v.clone(), na))
    }

    /// asJSON(x, collapse = FALSE): the per-element texts of `v`.
    fn column<V: RValue>(&mut self, v: &V, classes: &[String], ctx: Ctx, in_df: bool) -> Result<Column<V>, String> {
        Ok(match resolve(v, classes)? {
            Method::Null => Column::Whole(v.clone(), classes.to_vec(), ctx),
            Method::Logical => Column::Logical(v.clone(), ctx.na),
            Method::Numeric => numeric_column(v.clone(), ctx.na),
            Method::Character => Column::Character(v.clone(), ctx.na),
            Method::Json => {
                if v.rtype() != RType::Character {
                    return Err("an object of class 'json' must be a character vector".to_string());
                }
                Column::Character(v.clone(), ctx.na)
            }
            Method::Complex => self.complex_column(v, ctx.na)?,
            Method::Raw => {
                if in_df {
                    Column::Hex(v.clone())
                } else {
                    Column::Base64(v.clone())
                }
            }
            Method::List => {
                if !in_df && v.attr("names").is_some() {
                    Column::Whole(v.clone(), classes.to_vec(), ctx)
                } else {
                    Column::List(v.clone(), ctx.for_elements())
                }
            }
            Method::Array => {
                let dims = dims_of(v)?;
                let mut ectx = ctx.for_elements();
                ectx.auto_unbox = false;
                if dims.len() < 2 {
                    Column::Whole(v.clone(), classes.to_vec(), ctx)
                } else {
                    Column::Slices(Box::new(self.array_plan(v, dims, ectx)?))
                }
            }
            Method::DataFrame => Column::Rows(Box::new(self.data_frame(v, ctx)?)),
            Method::Factor => self.factor_column(v, ctx.na)?,
            Method::Time(i) => {
                let s = v.convert(Conversion::FormatTime { classes: &classes[i..], posixlt_to_ct: false })?;
                Column::Character(one_string_each(v, s, "formatting a date-time")?, ctx.na)
            }
            Method::AsChar(i) => {
                let s = v.convert(Conversion::AsCharacter { classes: &classes[i..] })?;
                Column::Character(one_string_each(v, s, "as.character()")?, ctx.na)
            }
            Method::Plain => match by_type(v)? {
                Method::List | Method::Null => Column::Whole(v.clone(), vec!["ts".to_string()], ctx),
                Method::Raw => Column::Whole(v.clone(), Vec::new(), ctx),
                _ => self.plain_column(v, ctx)?,
            },
            Method::AsIs(i) => {
                let rest = strip_asis(&classes[i..]);
                let mut ctx = ctx;
                if is_atomic(v.rtype()) && v.len() == 1 {
                    ctx.auto_unbox = false;
                }
                self.column(v, &rest, ctx, in_df)?
            }
            Method::Scalar(i) => self.column(v, &classes[i + 1..], ctx, in_df)?,
        })
    }

    fn factor_column<V: RValue>(&mut self, v: &V, na: Na) -> Result<Column<V>, String> {
        if v.rtype() != RType::Integer {
            return Err("a factor must have integer codes".to_string());
        }
        let mut levels = Vec::new();
        if let Some(lv) = v.attr("levels") {
            if lv.rtype() != RType::Character {
                return Err("factor levels must be character strings".to_string());
            }
            for k in 0..lv.len() {
                levels.push(lv.str_elt(k).map(|s| {
                    let mut b = Vec::with_capacity(s.len() + 2);
                    write_json_string(&mut b, &s);
                    b
                }));
            }
        }
        Ok(Column::Factor(v.clone(), levels, na))
    }

    /// Prepares a data frame for row-wise writing (jsonlite's asJSON.data.frame).
    fn data_frame<V: RValue>(&mut self, v: &V, ctx: Ctx) -> Result<DataFrame<V>, String> {
        if v.rtype() != RType::List {
            return Err("a data frame must be a list of columns".to_string());
        }
        let ncol = v.len();
        let names = v.attr("names").filter(|n| n.rtype() == RType::Character && n.len() == ncol);
        let has_names = names.is_some();
        let nrow = nrow_of(v);
        let col_na = if has_names {
            match ctx.na {
                Na::Default | Na::Omit => Na::Omit,
                x => x,
            }
        } else {
            ctx.na
        };
        let oldna = match ctx.na {
            Na::Default | Na::Omit => Na::Default,
            x => x,
        };
        let cctx = Ctx { na: col_na, oldna, auto_unbox: ctx.auto_unbox };

        let mut col_names: Vec<Option<Vec<u8>>> = match &names {
            Some(nm) => (0..ncol).map(|j| nm.str_elt(j).map(|s| s.into_owned())).collect(),
            None => Vec::new(),
        };
        // Character row names that are not just numbers become a "_row" field
        // (replacing an existing "_row" column before anything else happens).
        let mut row_names = None;
        if has_names {
            if let Some(rn) = v.attr("row.names") {
                if rn.rtype() == RType::Character && rn.len() == nrow && !all_digits(&rn) {
                    row_names = Some(rn);
                }
            }
        }
        let row_pos = match row_names {
            Some(_) => col_names.iter().position(|n| n.as_deref() == Some(b"_row".as_slice())),
            None => None,
        };
        let mut cols: Vec<Column<V>> = Vec::with_capacity(ncol + 1);
        for j in 0..ncol {
            if row_pos == Some(j) {
                if let Some(rn) = &row_names {
                    cols.push(Column::Character(rn.clone(), cctx.na));
                    continue;
                }
            }
            let c = v.list_elt(j);
            let cls = c.class();
            let col = if c.rtype() == RType::Raw {
                // jsonlite turns raw columns into hex strings first.
                Column::Hex(c)
            } else if cls.iter().any(|k| k == "POSIXlt") {
                let s = c.convert(Conversion::FormatTime { classes: &cls, posixlt_to_ct: true })?;
                Column::Character(s, cctx.na)
            } else {
                self.column(&c, &cls, cctx, true)?
            };
            let n = col_len(&col);
            if n != nrow {
                return Err(format!("data frame column {} has {} values for {} rows", j + 1, n, nrow));
            }
            cols.push(col);
        }
        if let (Some(rn), None) = (row_names, row_pos) {
            cols.push(Column::Character(rn, cctx.na));
            col_names.push(Some(b"_row".to_vec()));
        }
        let keys = if has_names {
            Some(
                clean_names(col_names)
                    .into_iter()
                    .map(|k| {
                        let mut b = Vec::with_capacity(k.len() + 4);
                        b.push(b',');
                        write_json_string(&mut b, &k);
                        b.push(b':');
                        b
                    })
                    .collect(),
            )
        } else {
            None
        };
        Ok(DataFrame { nrow, keys, cols })
    }

    /// Writes row `i` of a data frame (a one-off: [`Encoder::rows`] prepares
    /// the columns once for all rows).
    fn row<V: RValue>(&mut self, df: &DataFrame<V>, i: usize) -> Result<(), String> {
        let mut cells: Vec<Cells<'_, V>> = df.cols.iter().map(cells_of).collect();
        self.row_cells(&mut cells, df.keys.as_deref(), i)
    }

    /// Writes row `i` from prepared columns: an object keyed by the column
    /// names, missing fields left out, or an array when the frame has no names.
    fn row_cells<V: RValue>(
        &mut self,
        cells: &mut [Cells<'_, V>],
        keys: Option<&[Vec<u8>]>,
        i: usize,
    ) -> Result<(), String> {
        match keys {
            Some(keys) => {
                self.enter()?;
                // Every field is written with its key's leading comma; the
                // first field's comma becomes the opening brace at the end
                // (so which field comes first is not a branch per field).
                let start = self.out.len();
                // Room for the whole row when every field takes a common
                // form: those are written through a local cursor, so the
                // buffer's length is not stored and reloaded per piece.
                let room = keys.iter().map(|k| k.len() + CELL_ROOM).sum::<usize>() + 2;
                self.out.reserve(room);
                let mut base = self.out.as_mut_ptr();
                let mut pos = start;
                for (c, key) in cells.iter_mut().zip(keys) {
                    // SAFETY: `room` bytes were reserved at `pos` or before
                    // it, at the start or after the last field written the
                    // slow way, and every field since took at most its key's
                    // length plus CELL_ROOM of them (what raw_cell and
                    // copy_key may write); `set_len` below covers only
                    // bytes written.
                    let raw = unsafe {
                        let dst = base.add(pos);
                        copy_key(dst, key);
                        raw_cell(c, i, dst.add(key.len()), self.opts.digits)
                    };
                    if let Some((n, present)) = raw {
                        // A missing field is left out, as jsonlite does. A
                        // select rather than a branch: where NAs are is random.
                        pos = if present { pos + key.len() + n } else { pos };
                        continue;
                    }
                    // SAFETY: the bytes up to `pos` are written (above).
                    unsafe { self.out.set_len(pos) };
                    put(&mut self.out, key);
                    let kept = self.cell(c, i)?;
                    let end = if kept { self.out.len() } else { pos };
                    self.out.truncate(end);
                    self.out.reserve(room);
                    base = self.out.as_mut_ptr();
                    pos = self.out.len();
                }
                // SAFETY: as above.
                unsafe { self.out.set_len(pos) };
                if self.out.len() == start {
                    self.out.push(b'{');
                } else {
                    self.out[start] = b'{';
                }
                self.close(b'}');
            }
            None => {
                self.open(b'[')?;
                for (j, c) in cells.iter_mut().enumerate() {
                    if j > 0 {
                        self.out.push(b',');
                    }
                    if !self.cell(c, i)? {
                        self.out.extend_from_slice(b"NA");
                    }
                }
                self.close(b']');
            }
        }
        Ok(())
    }

    /// Writes cell `i` of a prepared column; `false` means "missing, leave it
    /// out". The common column types are written from their data slices; the
    /// rest go through [`Encoder::elem`].
    #[inline(always)]
    fn cell<V: RValue>(&mut self, c: &mut Cells<'_, V>, i: usize) -> Result<bool, String> {
        match c {
            Cells::Rows(..) | Cells::Other(_) => self.cell_nested(c, i),
            _ => Ok(self.cell_flat(c, i)),
        }
    }

    /// Nested frames and the generic path (kept out of line: they recurse).
    #[inline(never)]
    fn cell_nested<V: RValue>(&mut self, c: &mut Cells<'_, V>, i: usize) -> Result<bool, String> {
        match c {
            Cells::Rows(sub, keys) => {
                self.row_cells(sub, *keys, i)?;
                Ok(true)
            }
            Cells::Other(col) => self.elem(col, i),
            _ => Ok(self.cell_flat(c, i)),
        }
    }

    /// The vector column types, written from their slices (no recursion, so
    /// this inlines into the row loop).
    #[inline(always)]
    fn cell_flat<V: RValue>(&mut self, c: &mut Cells<'_, V>, i: usize) -> bool {
        let out = &mut self.out;
        match c {
            Cells::Dbl(s, na) => {
                let x = s[i];
                if *na == Na::Omit {
                    // Data-frame fields the row cursor leaves to this path
                    // (numbers outside its short form): as there, a missing
                    // number is a stand-in the caller drops, so NAs scattered
                    // at random cost no mispredicted branch.
                    let finite = x.is_finite();
                    let start = out.len();
                    write_f64(out, if finite { x } else { 1.0 }, self.opts.digits);
                    self.zeroed |= zeroed(&out[start..], x);
                    return finite;
                }
                if x.is_finite() {
                    let start = out.len();
                    write_f64(out, x, self.opts.digits);
                    self.zeroed |= zeroed(&out[start..], x);
                    true
                } else {
                    write_na(out, *na, NaKind::Number(nonfinite_text(x)))
                }
            }
            Cells::Int(s, na) => {
                let x = s[i];
                if x == NA_INTEGER {
                    return write_na(out, *na, NaKind::Number("\"NA\""));
                }
                write_i32(out, x);
                true
            }
            Cells::Lgl(s, na) => {
                let x = s[i];
                if x == NA_INTEGER {
                    return write_na(out, *na, NaKind::Logical);
                }
                put(out, if x != 0 { b"true" } else { b"false" });
                true
            }
            Cells::Chr(v, na, cache) => {
                if let Some(c) = cache {
                    match c.lookup(i) {
                        // An NA is cached as an empty text, which is all a
                        // data-frame field needs (the caller drops it).
                        Cached::Text(text, present) if present || *na == Na::Omit => {
                            c.put(out, text);
                            return present;
                        }
                        Cached::Text(..) => return write_na(out, *na, NaKind::Character),
                        Cached::Miss(key) => {
                            let mark = out.len();
                            let text = match v.str_elt(i) {
                                Some(s) => {
                                    write_json_string(out, &s);
                                    Some(&out[mark..])
                                }
                                None => None,
                            };
                            if !c.insert(key, text) {
                                *cache = None;
                            }
                            if text.is_some() {
                                return true;
                            }
                            return write_na(out, *na, NaKind::Character);
                        }
                    }
                }
                match v.str_elt(i) {
                    Some(s) => {
                        write_json_string(out, &s);
                        true
                    }
                    None => write_na(out, *na, NaKind::Character),
                }
            }
            Cells::Factor(codes, levels, na) => {
                let code = codes[i];
                let lvl = if code >= 1 { levels.get(code as usize - 1).and_then(|l| l.as_ref()) } else { None };
                match lvl {
                    Some(l) => {
                        put(out, l);
                        true
                    }
                    None => write_na(out, *na, NaKind::Character),
                }
            }
            // Never reached: `cell` sends these to `cell_nested`.
            Cells::Rows(..) | Cells::Other(_) => false,
        }
    }

    /// Writes element `i` of a column; `false` means "missing, leave it out".
    fn elem<V: RValue>(&mut self, col: &Column<V>, i: usize) -> Result<bool, String> {
        let out = &mut self.out;
        match col {
            Column::Logical(v, na) => {
                let x = v.logicals()[i];
                if x == NA_INTEGER {
                    return Ok(write_na(out, *na, NaKind::Logical));
                }
                out.extend_from_slice(if x != 0 { b"true" } else { b"false" });
            }
            Column::Integer(v, na) => {
                let x = v.integers()[i];
                if x == NA_INTEGER {
                    return Ok(write_na(out, *na, NaKind::Number("\"NA\"")));
                }
                write_i32(out, x);
            }
            Column::Double(v, na) => {
                let x = v.doubles()[i];
                if !x.is_finite() {
                    return Ok(write_na(out, *na, NaKind::Number(nonfinite_text(x))));
                }
                let start = out.len();
                write_f64(out, x, self.opts.digits);
                self.zeroed |= zeroed(&out[start..], x);
            }
            Column::Character(v, na) => match v.str_elt(i) {
                Some(s) => write_json_string(out, &s),
                None => return Ok(write_na(out, *na, NaKind::Character)),
            },
            Column::Factor(v, levels, na) => {
                let code = v.integers()[i];
                let lvl = if code >= 1 { levels.get(code as usize - 1).and_then(|l| l.as_ref()) } else { None };
                match lvl {
                    Some(l) => out.extend_from_slice(l),
                    None => return Ok(write_na(out, *na, NaKind::Character)),
                }
            }
            Column::Hex(v) => {
                out.push(b'"');
                write_hex_byte(out, v.raws()[i]);
                out.push(b'"');
            }
            Column::Base64(v) => {
                out.push(b'"');
                write_base64(out, v.raws());
                out.push(b'"');
            }
            Column::Complex(strings, values, na) => {
                let z = values.complexes()[i];
                if !(z[0].is_finite() && z[1].is_finite()) && matches!(na, Na::Null | Na::Omit) {
                    return Ok(write_na(out, *na, NaKind::Character));
                }
                match strings.str_elt(i) {
                    Some(s) => write_json_string(out, &s),
                    None => return Ok(write_na(out, *na, NaKind::Character)),
                }
            }
            Column::List(v, ectx) => {
                let e = v.list_elt(i);
                let cls = e.class();
                self.value(&e, &cls, *ectx)?;
            }
            Column::Rows(df) => {
                self.row(df, i)?;
            }
            Column::Slices(p) => {
                if p.dims.len() < 2 {
                    if !self.elem(&p.elems, i)? {
                        self.out.extend_from_slice(b"NA");
                    }
                } else {
                    self.array_level(p, 1, i)?;
                }
            }
            Column::Whole(v, classes, ctx) => {
                self.value(v, classes, *ctx)?;
            }
        }
        Ok(true)
    }
}

enum NaKind {
    Logical,
    Character,
    /// Numbers: the string jsonlite writes for this value with na = "string".
    Number(&'static str),
}

/// Writes a missing value; returns false when it is to be omitted.
fn write_na(out: &mut Vec<u8>, na: Na, kind: NaKind) -> bool {
    let text: &str = match (na, kind) {
        (Na::Omit, _) => return false,
        (Na::Null, _) => "null",
        (Na::Str, NaKind::Number(s)) => s,
        (Na::Str, _) => "\"NA\"",
        (Na::Default, NaKind::Number(s)) => s,
        (Na::Default, _) => "null",
    };
    out.extend_from_slice(text.as_bytes());
    true
}

/// What jsonlite writes for a non-finite double with `na = "string"`.
fn nonfinite_text(x: f64) -> &'static str {
    if is_na_real(x) {
        "\"NA\""
    } else if x.is_nan() {
        "\"NaN\""
    } else if x > 0.0 {
        "\"Inf\""
    } else {
        "\"-Inf\""
    }
}

/// A column with its data fetched once, for writing many cells: the common
/// vector types as slices (no trait call per cell), nested data frames
/// prepared recursively, anything else through the generic [`Column`].
enum Cells<'a, V: RValue> {
    Lgl(&'a [i32], Na),
    Int(&'a [i32], Na),
    Dbl(&'a [f64], Na),
    /// With a cache of escaped strings when the vector has string keys
    /// and enough elements to be worth one.
    Chr(&'a V, Na, Option<StrCache<'a>>),
    Factor(&'a [i32], &'a [Option<Vec<u8>>], Na),
    Rows(Vec<Cells<'a, V>>, Option<&'a [Vec<u8>]>),
    Other(&'a Column<V>),
}

/// Escaped strings of one character column, by R string identity
/// ([`RValue::str_keys`]): in a column with few distinct values (groups,
/// labels, "yes"/"no") each one is read from R and escaped once. A column
/// whose values keep missing the cache (mostly distinct strings) turns it
/// off and is written as if it had none.
struct StrCache<'a> {
    keys: &'a [usize],
    /// Direct-mapped by key hash; allocated on the first lookup.
    slots: Vec<Slot>,
    /// The escaped texts (quotes included) the slots point into.
    texts: Vec<u8>,
    lookups: u32,
    misses: u32,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    /// 0 for an empty slot (keys are addresses, never 0).
    key: usize,
    start: u32,
    len: u32,
    /// An NA (its text is empty).
    na: bool,
}

enum Cached {
    /// Where the text is in [`StrCache::texts`], and whether the string is
    /// present (false: NA).
    Text(std::ops::Range<usize>, bool),
    /// Not cached; the element's key, for [`StrCache::insert`].
    Miss(usize),
}

const CACHE_SLOTS: usize = 256;
/// Columns shorter than this are written without a cache.
const CACHE_MIN_LEN: usize = 64;
/// Longer texts are escaped at memory speed anyway.
const CACHE_MAX_TEXT: usize = 64;
const CACHE_MAX_BYTES: usize = 1 << 16;
/// Every this many lookups, the cache checks that it is hit often enough.
const CACHE_REVIEW: u32 = 256;
/// Each text is stored in at least this many bytes, so texts up to this
/// long are copied with one fixed-size move, whatever their length.
const CACHE_PAD: usize = 16;

impl<'a> StrCache<'a> {
    fn new(keys: Option<&'a [usize]>, n: usize) -> Option<Self> {
        let keys = keys.filter(|k| n >= CACHE_MIN_LEN && k.len() >= n)?;
        Some(StrCache { keys, slots: Vec::new(), texts: Vec::new(), lookups: 0, misses: 0 })
    }

    #[inline(always)]
    fn slot_of(key: usize) -> usize {
        // Fibonacci hashing: the top byte of the key times 2^64 / phi.
        ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize % CACHE_SLOTS
    }

    #[inline(always)]
    fn lookup(&mut self, i: usize) -> Cached {
        let key = self.keys.get(i).copied().unwrap_or(0);
        if self.slots.is_empty() {
            self.slots = vec![Slot::default(); CACHE_SLOTS];
        }
        self.lookups = self.lookups.saturating_add(1);
        let slot = self.slots[Self::slot_of(key)];
        if key == 0 || slot.key != key {
            return Cached::Miss(key);
        }
        let start = slot.start as usize;
        Cached::Text(start..start + slot.len as usize, !slot.na)
    }

    /// Appends a cached text. Texts of up to [`CACHE_PAD`] bytes are copied
    /// as that many bytes and the length set after, with no branch on the
    /// length (NAs, a few letters and longer labels alternate at random).
    #[inline(always)]
    fn put(&self, out: &mut Vec<u8>, text: std::ops::Range<usize>) {
        out.reserve(CELL_ROOM);
        // SAFETY: `reserve` leaves CELL_ROOM writable bytes after the old
        // length, and `set_len` covers only the bytes `put_at` wrote.
        unsafe {
            let n = self.put_at(out.as_mut_ptr().add(out.len()), text).unwrap_or(0);
            out.set_len(out.len() + n);
        }
    }

    /// [`StrCache::put`] at `dst`, returning the length (`None` for a range
    /// the cache does not hold, which lookups never give).
    ///
    /// # Safety
    /// `dst` must be valid for writes of [`CELL_ROOM`] bytes.
    #[inline(always)]
    unsafe fn put_at(&self, dst: *mut u8, text: std::ops::Range<usize>) -> Option<usize> {
        let n = text.len().min(CACHE_MAX_TEXT);
        match self.texts.get(text.start..text.start + n.max(CACHE_PAD)) {
            // SAFETY: the source is within `texts`, and at most
            // max(n, CACHE_PAD) <= CELL_ROOM bytes are written.
            Some(t) => unsafe {
                if n <= CACHE_PAD {
                    (dst as *mut [u8; CACHE_PAD])
                        .write_unaligned((t.as_ptr() as *const [u8; CACHE_PAD]).read_unaligned());
                } else {
                    std::ptr::copy_nonoverlapping(t.as_ptr(), dst, n);
                }
                Some(n)
            },
            None => None,
        }
    }

    /// Records the escaped `text` of a missed element (`None`: NA). Returns
    /// false when the cache is not worth keeping.
    #[cold]
    fn insert(&mut self, key: usize, text: Option<&[u8]>) -> bool {
        self.misses += 1;
        if self.lookups >= CACHE_REVIEW {
            if self.misses > self.lookups / 4 {
                return false;
            }
            self.lookups = 0;
            self.misses = 0;
        }
        let t = text.unwrap_or_default();
        if t.len() > CACHE_MAX_TEXT || self.texts.len() + t.len() + CACHE_PAD > CACHE_MAX_BYTES {
            return true;
        }
        let start = self.texts.len() as u32;
        self.texts.extend_from_slice(t);
        self.texts.resize(start as usize + t.len().max(CACHE_PAD), 0);
        let slot = Slot { key, start, len: t.len() as u32, na: text.is_none() };
        if key != 0 {
            self.slots[Self::slot_of(key)] = slot;
        }
        true
    }
}

/// Bytes a field written by [`raw_cell`] may take beyond its key: the
/// longest cached text, or the fixed-size move of a shorter one.
const CELL_ROOM: usize = CACHE_MAX_TEXT + CACHE_PAD;
const _: () = assert!(SHORT_ROOM <= CELL_ROOM && 8 <= CELL_ROOM);

/// Copies a data-frame key to `dst`: short keys with two fixed-size moves.
///
/// # Safety
/// `dst` must be valid for writes of `key.len()` bytes.
#[inline(always)]
unsafe fn copy_key(dst: *mut u8, key: &[u8]) {
    let n = key.len();
    let src = key.as_ptr();
    // SAFETY: reads stay within `key`, writes within `dst..dst + n`.
    unsafe {
        if (8..=16).contains(&n) {
            (dst as *mut u64).write_unaligned((src as *const u64).read_unaligned());
            (dst.add(n - 8) as *mut u64).write_unaligned((src.add(n - 8) as *const u64).read_unaligned());
        } else if (4..8).contains(&n) {
            (dst as *mut u32).write_unaligned((src as *const u32).read_unaligned());
            (dst.add(n - 4) as *mut u32).write_unaligned((src.add(n - 4) as *const u32).read_unaligned());
        } else {
            std::ptr::copy_nonoverlapping(src, dst, n);
        }
    }
}

/// Writes cell `i` at `dst` when it takes a common form (a number in
/// jsonlite's default format, a logical, a cached string, or one of these
/// missing in a data-frame field), returning its length and whether it is
/// present; `None`, with nothing of value written, for the general path.
///
/// # Safety
/// `dst` must be valid for writes of [`CELL_ROOM`] bytes.
#[inline(always)]
unsafe fn raw_cell<V: RValue>(c: &mut Cells<'_, V>, i: usize, dst: *mut u8, digits: Digits) -> Option<(usize, bool)> {
    // SAFETY: (the whole body) every writer below writes at most CELL_ROOM
    // bytes at `dst`.
    unsafe {
        // Data-frame fields (`Na::Omit`): a missing value is written as a
        // stand-in the caller drops, so NAs at random places cost no
        // mispredicted branch. Elsewhere NAs take the general path.
        match c {
            Cells::Dbl(s, Na::Omit) => {
                let x = *s.get(i)?;
                let present = x.is_finite();
                Some((write_f64_short(dst, if present { x } else { 1.0 }, digits)?, present))
            }
            Cells::Dbl(s, _) => {
                let x = *s.get(i)?;
                Some((write_f64_short(dst, x, digits)?, true))
            }
            Cells::Int(s, Na::Omit) => {
                let x = *s.get(i)?;
                let present = x != NA_INTEGER;
                Some((write_i32_short(dst, if present { x } else { 0 })?, present))
            }
            Cells::Int(s, _) => {
                let x = *s.get(i)?;
                if x == NA_INTEGER {
                    return None;
                }
                Some((write_i32_short(dst, x)?, true))
            }
            Cells::Lgl(s, na) => {
                let x = *s.get(i)?;
                let present = x != NA_INTEGER;
                if *na != Na::Omit && !present {
                    return None;
                }
                let text: &[u8; 8] = if x != 0 { b"true\0\0\0\0" } else { b"false\0\0\0" };
                (dst as *mut [u8; 8]).write_unaligned(*text);
                Some((4 + (x == 0) as usize, present))
            }
            Cells::Chr(_, na, Some(cache)) => match cache.lookup(i) {
                Cached::Text(text, present) if present || *na == Na::Omit => Some((cache.put_at(dst, text)?, present)),
                _ => {
                    // The general path looks it up again.
                    cache.lookups = cache.lookups.saturating_sub(1);
                    None
                }
            },
            _ => None,
        }
    }
}

/// Prepares a column for [`Encoder::cell`]. A slice shorter than the column
/// (an `RValue` whose accessor disagrees with its length) falls back to the
/// generic path rather than being indexed out of bounds.
fn cells_of<V: RValue>(col: &Column<V>) -> Cells<'_, V> {
    let n = col_len(col);
    match col {
        Column::Logical(v, na) if v.logicals().len() >= n => Cells::Lgl(v.logicals(), *na),
        Column::Integer(v, na) if v.integers().len() >= n => Cells::Int(v.integers(), *na),
        Column::Double(v, na) if v.doubles().len() >= n => Cells::Dbl(v.doubles(), *na),
        Column::Character(v, na) => Cells::Chr(v, *na, StrCache::new(v.str_keys(), n)),
        Column::Factor(v, levels, na) if v.integers().len() >= n => Cells::Factor(v.integers(), levels, *na),
        Column::Rows(df) => Cells::Rows(df.cols.iter().map(cells_of).collect(), df.keys.as_deref()),
        other => Cells::Other(other),
    }
}

/// Items written before the output buffer is sized for the rest.
const PRESIZE_AFTER: usize = 255;

fn numeric_column<V: RValue>(v: V, na: Na) -> Column<V> {
    if v.rtype() == RType::Integer {
        Column::Integer(v, na)
    } else {
        Column::Double(v, na)
    }
}

fn col_len<V: RValue>(c: &Column<V>) -> usize {
    match c {
        Column::Logical(v, _)
        | Column::Integer(v, _)
        | Column::Double(v, _)
        | Column::Character(v, _)
        | Column::Factor(v, _, _)
        | Column::Hex(v)
        | Column::Complex(_, v, _)
        | Column::List(v, _) => v.len(),
        Column::Rows(df) => df.nrow,
        Column::Slices(p) => p.dims.first().copied().unwrap_or(0),
        Column::Whole(..) | Column::Base64(_) => 1,
    }
}

fn dims_of<V: RValue>(v: &V) -> Result<Vec<usize>, String> {
    let d = v.attr("dim").ok_or_else(|| "array without dimensions".to_string())?;
    let raw: Vec<i64> = match d.rtype() {
        RType::Integer => d.integers().iter().map(|&x| x as i64).collect(),
        RType::Double => d.doubles().iter().map(|&x| x as i64).collect(),
        _ => return Err("the dim attribute must be numeric".to_string()),
    };
    raw.into_iter().map(|x| usize::try_from(x).map_err(|_| "invalid dim attribute".to_string())).collect()
}

/// Rows of a data frame, from its row.names attribute (compact form included).
fn nrow_of<V: RValue>(v: &V) -> usize {
    match v.attr("row.names") {
        None => 0,
        Some(rn) => {
            if rn.rtype() == RType::Integer && rn.len() == 2 && rn.integers()[0] == NA_INTEGER {
                rn.integers()[1].unsigned_abs() as usize
            } else if rn.rtype() == RType::Double && rn.len() == 2 && rn.doubles()[0].is_nan() {
                rn.doubles()[1].abs() as usize
            } else {
                rn.len()
            }
        }
    }
}

/// `all(grepl("^\\d+$", x))`; NA counts as not matching.
fn all_digits<V: RValue>(x: &V) -> bool {
    (0..x.len()).all(|i| match x.str_elt(i) {
        Some(s) => !s.is_empty() && s.iter().all(u8::is_ascii_digit),
        None => false,
    })
}

fn keys_of<V: RValue>(names: &V, n: usize) -> Result<Vec<Vec<u8>>, String> {
    if names.rtype() != RType::Character || names.len() != n {
        return Err("the names attribute does not match the list".to_string());
    }
    Ok(clean_names((0..n).map(|i| names.str_elt(i).map(|s| s.into_owned())).collect()))
}

/// What an R method (`format()`, `as.character()`, possibly the author's own)
/// gave for `v`: it must be one string for each value, or the result would
/// silently lose or invent values.
fn one_string_each<V: RValue>(v: &V, s: V, what: &str) -> Result<V, String> {
    if s.rtype() != RType::Character {
        return Err(format!("{what} did not give character strings"));
    }
    // A POSIXlt value is a list of fields, not one element per value.
    if v.rtype() != RType::List && s.len() != v.len() {
        return Err(format!("{what} gave {} strings for {} values", s.len(), v.len()));
    }
    Ok(s)
}
