//! The protocol's fixed encoding of R values: what schemas, annotations and
//! `_meta` become on the wire, whatever the payload options say.
//!
//! - a named list is an object (every name present, non-empty and unique), an
//!   unnamed list an array; `structure(list(), names = character(0))` is `{}`
//!   and `list()` is `[]`;
//! - a plain atomic vector of length one is a scalar, any other length (or one
//!   wrapped in `I()`) an array; `NA` and `NULL` are `null`;
//! - whole doubles are written as integers (`300000`, never `3e+05`), other
//!   doubles as the shortest text that reads back to the same number;
//! - anything else (classed objects such as factors and dates, `NaN` and
//!   infinities, functions, environments, complex and raw vectors) is refused,
//!   with the R path of the first offending element.
//!
//! R calls this at definition time (`tool()`, `content_*()`), so authors see a
//! mistake where they make it; the server reads the same way when it starts.

use super::{describe, field, is_na_real, push_index, push_name, RType, RValue, NA_INTEGER};
use serde_json::{Map, Number, Value};

/// Nesting deeper than this is refused instead of risking the C stack.
pub const MAX_FIXED_DEPTH: usize = crate::rjson::MAX_DEPTH;

/// Why a value has no fixed encoding: where, and what was found there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedError {
    /// R code reaching the element, starting with the argument's name.
    pub path: String,
    /// What the element is, e.g. "an object of class <factor>".
    pub what: String,
}

impl FixedError {
    /// The author-facing sentence: "`arg` must be JSON-serializable, but
    /// `arg$x` is a function."
    pub fn message(&self, arg: &str) -> String {
        format!("`{arg}` must be JSON-serializable, but `{}` is {}.", self.path, self.what)
    }
}

/// Encode `x`; `arg` starts the paths in errors.
pub fn encode<V: RValue>(x: &V, arg: &str) -> Result<Value, FixedError> {
    let mut path = arg.to_string();
    walk(x, &mut path, 0)
}

/// Encode `x` and require an object (a named list, or an empty list).
pub fn encode_object<V: RValue>(x: &V, arg: &str) -> Result<Map<String, Value>, FixedError> {
    match encode(x, arg)? {
        Value::Object(m) => Ok(m),
        Value::Array(a) if a.is_empty() => Ok(Map::new()),
        Value::Null => Ok(Map::new()),
        _ => Err(FixedError { path: arg.to_string(), what: format!("{}, not a named list", describe(x)) }),
    }
}

/// The element `name` of list `v`, fixed-encoded, if present and not NULL.
pub fn encode_field<V: RValue>(v: &V, name: &str, arg: &str) -> Result<Option<Value>, FixedError> {
    match field(v, name) {
        Some(x) if x.rtype() != RType::Null => encode(&x, arg).map(Some),
        _ => Ok(None),
    }
}

fn bad<V: RValue>(path: &str, x: &V) -> FixedError {
    FixedError { path: path.to_string(), what: describe(x) }
}

fn walk<V: RValue>(x: &V, path: &mut String, depth: usize) -> Result<Value, FixedError> {
    if depth > MAX_FIXED_DEPTH {
        return Err(FixedError { path: path.clone(), what: format!("nested deeper than {MAX_FIXED_DEPTH} levels") });
    }
    let t = x.rtype();
    if t == RType::Null {
        return Ok(Value::Null);
    }
    let classes = x.class();
    let as_is = classes.iter().any(|c| c == "AsIs");
    if x.is_s4() || classes.iter().any(|c| c != "AsIs") || matches!(t, RType::Other | RType::Complex | RType::Raw) {
        return Err(bad(path, x));
    }
    let n = x.len();
    if t == RType::List {
        return object_or_array(x, n, path, depth);
    }
    atomic(x, t, n, as_is, path)
}

/// Kept out of `walk` so the recursive frames stay small.
#[inline(never)]
fn atomic<V: RValue>(x: &V, t: RType, n: usize, as_is: bool, path: &str) -> Result<Value, FixedError> {
    let mut items = Vec::with_capacity(n);
    for i in 0..n {
        let item = match t {
            RType::Logical => match x.logicals()[i] {
                NA_INTEGER => Value::Null,
                b => Value::Bool(b != 0),
            },
            RType::Integer => match x.integers()[i] {
                NA_INTEGER => Value::Null,
                v => Value::from(v),
            },
            RType::Double => {
                let d = x.doubles()[i];
                if d.is_nan() && is_na_real(d) {
                    Value::Null
                } else if !d.is_finite() {
                    return Err(FixedError { path: path.to_string(), what: "a number that is NaN or infinite".into() });
                } else {
                    double_value(d)
                }
            }
            RType::Character => match x.str_elt(i) {
                None => Value::Null,
                Some(b) => Value::String(String::from_utf8_lossy(&b).into_owned()),
            },
            _ => return Err(bad(path, x)),
        };
        items.push(item);
    }
    if n == 1 && !as_is {
        Ok(items.pop().unwrap_or(Value::Null))
    } else {
        Ok(Value::Array(items))
    }
}

fn object_or_array<V: RValue>(x: &V, n: usize, path: &mut String, depth: usize) -> Result<Value, FixedError> {
    let names = x.attr("names").filter(|nm| nm.rtype() == RType::Character);
    let Some(names) = names else {
        let mut items = Vec::with_capacity(n);
        for i in 0..n {
            let len = path.len();
            push_index(path, i);
            items.push(walk(&x.list_elt(i), path, depth + 1)?);
            path.truncate(len);
        }
        return Ok(Value::Array(items));
    };
    let mut keys = Vec::with_capacity(n);
    for i in 0..n {
        match names.str_elt(i) {
            Some(k) if !k.is_empty() => keys.push(String::from_utf8_lossy(&k).into_owned()),
            _ => {
                return Err(FixedError {
                    path: path.clone(),
                    what: "a list with some elements unnamed (use all names for an object, none for an array)".into(),
                })
            }
        }
    }
    let mut seen = std::collections::HashSet::with_capacity(n);
    let mut dups: Vec<&str> = Vec::new();
    for k in &keys {
        if !seen.insert(k.as_str()) && !dups.contains(&k.as_str()) {
            dups.push(k);
        }
    }
    if !dups.is_empty() {
        let quoted: Vec<String> = dups.iter().map(|d| format!("`{d}`")).collect();
        let joined = match quoted.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => quoted.join(""),
        };
        return Err(FixedError { path: path.clone(), what: format!("a list with the repeated name {joined}") });
    }
    let mut map = Map::with_capacity(n);
    for (i, k) in keys.into_iter().enumerate() {
        let len = path.len();
        push_name(path, &k);
        let v = walk(&x.list_elt(i), path, depth + 1)?;
        path.truncate(len);
        map.insert(k, v);
    }
    Ok(Value::Object(map))
}

/// Whole doubles keep integer form (300000, never 3e+05) within the range
/// where doubles are exact integers; others are the shortest round trip.
pub fn double_value(d: f64) -> Value {
    if d.fract() == 0.0 && d.abs() < 9_007_199_254_740_992.0 {
        Value::from(d as i64)
    } else {
        Number::from_f64(d).map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rjson::testvalue::*;
    use serde_json::json;

    fn enc(x: &TV) -> Result<Value, String> {
        encode(x, "x").map_err(|e| e.message("x"))
    }

    #[test]
    fn shapes() {
        assert_eq!(enc(&null()), Ok(Value::Null));
        assert_eq!(enc(&s("a")), Ok(json!("a")));
        assert_eq!(enc(&s("a").class(&["AsIs"])), Ok(json!(["a"])));
        assert_eq!(enc(&int(&[1, NA_INT])), Ok(json!([1, null])));
        assert_eq!(enc(&dbl(&[300000.0, 0.1, na_real()])), Ok(json!([300000, 0.1, null])));
        assert_eq!(enc(&lgl(&[Some(true)])), Ok(json!(true)));
        assert_eq!(enc(&list(vec![])), Ok(json!([])));
        assert_eq!(enc(&named(vec![])), Ok(json!({})));
        assert_eq!(
            enc(&named(vec![(Some("type"), s("object")), (Some("required"), list(vec![s("a")]))])),
            Ok(json!({"type":"object","required":["a"]}))
        );
    }

    #[test]
    fn refusals_name_the_path() {
        let nested = named(vec![(Some("a"), list(vec![null(), dbl(&[f64::NAN])]))]);
        assert_eq!(
            enc(&nested),
            Err("`x` must be JSON-serializable, but `x$a[[2]]` is a number that is NaN or infinite.".into())
        );
        let f = named(vec![(Some("f"), other("closure"))]);
        assert_eq!(enc(&f), Err("`x` must be JSON-serializable, but `x$f` is a function.".into()));
        let fac = named(vec![(Some("odd key"), int(&[1]).class(&["factor"]))]);
        assert_eq!(
            enc(&fac),
            Err("`x` must be JSON-serializable, but `x[[\"odd key\"]]` is an object of class <factor>.".into())
        );
        let unnamed = named(vec![(Some("a"), s("1")), (None, s("2"))]);
        assert!(enc(&unnamed).unwrap_err().contains("some elements unnamed"));
        let dup = named(vec![(Some("a"), s("1")), (Some("a"), s("2")), (Some("b"), s("")), (Some("b"), s(""))]);
        assert!(enc(&dup).unwrap_err().contains("repeated name `a` and `b`"));
        assert!(enc(&dbl(&[f64::INFINITY])).is_err());
        assert!(enc(&cplx(&[[1.0, 2.0]])).is_err());
        assert!(enc(&raw(&[1])).is_err());
        assert!(enc(&other("environment")).unwrap_err().contains("an environment"));
    }

    #[test]
    fn depth_is_bounded() {
        // R's main thread has a stack of several MB; test with a like one.
        let t = std::thread::Builder::new().stack_size(16 << 20).spawn(|| {
            let mut v = s("leaf");
            for _ in 0..(MAX_FIXED_DEPTH + 2) {
                v = list(vec![v]);
            }
            enc(&v).unwrap_err()
        });
        assert!(t.unwrap().join().unwrap().contains("nested deeper"));
    }
}
