//! A plain Rust model of R objects, so the encoder is tested without R.

use super::value::{Conversion, RType, RValue};
use std::borrow::Cow;
use std::rc::Rc;

#[derive(Debug)]
pub enum Data {
    Null,
    Lgl(Vec<i32>),
    Int(Vec<i32>),
    Dbl(Vec<f64>),
    Cplx(Vec<[f64; 2]>),
    Chr(Vec<Option<String>>),
    /// A JSON text object the glue made for serializer output: a character
    /// vector of length one whose bytes R code cannot have changed, and the
    /// value it was written from.
    Json(Vec<u8>, Option<TV>),
    Raw(Vec<u8>),
    List(Vec<TV>),
    Other(&'static str),
}

#[derive(Debug)]
pub struct Inner {
    pub data: Data,
    pub attrs: Vec<(String, TV)>,
    pub s4: bool,
    /// String identities like R's CHARSXP addresses (see [`RValue::str_keys`]).
    pub keys: Vec<usize>,
}

thread_local! {
    /// One key per distinct string (NA included), as R keeps one CHARSXP each.
    static STRINGS: std::cell::RefCell<std::collections::HashMap<Option<String>, usize>> = Default::default();
}

fn keys_of(data: &Data) -> Vec<usize> {
    let Data::Chr(v) = data else { return Vec::new() };
    STRINGS.with(|m| {
        let mut m = m.borrow_mut();
        v.iter()
            .map(|s| {
                let next = m.len() + 1;
                *m.entry(s.clone()).or_insert(next)
            })
            .collect()
    })
}

/// Test value: cheap to clone, like a SEXP handle.
#[derive(Clone, Debug)]
pub struct TV(pub Rc<Inner>);

pub const NA_INT: i32 = i32::MIN;

pub fn na_real() -> f64 {
    f64::from_bits(0x7FF0_0000_0000_07A2)
}

fn mk(data: Data) -> TV {
    let keys = keys_of(&data);
    TV(Rc::new(Inner { data, attrs: Vec::new(), s4: false, keys }))
}

pub fn null() -> TV {
    mk(Data::Null)
}
pub fn dbl(v: &[f64]) -> TV {
    mk(Data::Dbl(v.to_vec()))
}
pub fn int(v: &[i32]) -> TV {
    mk(Data::Int(v.to_vec()))
}
pub fn lgl(v: &[Option<bool>]) -> TV {
    mk(Data::Lgl(v.iter().map(|b| b.map_or(NA_INT, |x| x as i32)).collect()))
}
pub fn chr(v: &[Option<&str>]) -> TV {
    mk(Data::Chr(v.iter().map(|s| s.map(str::to_string)).collect()))
}
/// A character vector without string keys (as R's compact and deferred
/// vectors are): the serializer reads every element.
pub fn chr_unkeyed(v: &[Option<&str>]) -> TV {
    let tv = chr(v);
    let inner = Inner { data: clone_data(&tv.0.data), attrs: Vec::new(), s4: false, keys: Vec::new() };
    TV(Rc::new(inner))
}
pub fn s(x: &str) -> TV {
    chr(&[Some(x)])
}
/// JSON text as `tool_result()` holds it (see [`RValue::core_json`]).
pub fn json_text(x: &str) -> TV {
    mk(Data::Json(x.as_bytes().to_vec(), None))
}
/// JSON text written from `source` (see [`RValue::is_json_written_from`]).
pub fn json_text_from(x: &str, source: &TV) -> TV {
    mk(Data::Json(x.as_bytes().to_vec(), Some(source.clone())))
}
pub fn cplx(v: &[[f64; 2]]) -> TV {
    mk(Data::Cplx(v.to_vec()))
}
pub fn raw(v: &[u8]) -> TV {
    mk(Data::Raw(v.to_vec()))
}
pub fn list(v: Vec<TV>) -> TV {
    mk(Data::List(v))
}
pub fn other(t: &'static str) -> TV {
    mk(Data::Other(t))
}
pub fn named(v: Vec<(Option<&str>, TV)>) -> TV {
    let names: Vec<Option<&str>> = v.iter().map(|(n, _)| *n).collect();
    list(v.into_iter().map(|(_, x)| x).collect()).attr("names", chr(&names))
}

impl TV {
    /// Returns a copy with one attribute set (replacing an existing one).
    pub fn attr(self, name: &str, value: TV) -> TV {
        let inner = Rc::try_unwrap(self.0).unwrap_or_else(|rc| Inner {
            data: clone_data(&rc.data),
            attrs: rc.attrs.clone(),
            s4: rc.s4,
            keys: rc.keys.clone(),
        });
        let mut inner = inner;
        inner.attrs.retain(|(n, _)| n != name);
        inner.attrs.push((name.to_string(), value));
        TV(Rc::new(inner))
    }
    pub fn class(self, c: &[&str]) -> TV {
        let v: Vec<Option<&str>> = c.iter().map(|x| Some(*x)).collect();
        self.attr("class", chr(&v))
    }
    pub fn s4(self) -> TV {
        let mut inner = Rc::try_unwrap(self.0).expect("fresh value");
        inner.s4 = true;
        TV(Rc::new(inner))
    }
}

fn clone_data(d: &Data) -> Data {
    match d {
        Data::Null => Data::Null,
        Data::Lgl(v) => Data::Lgl(v.clone()),
        Data::Int(v) => Data::Int(v.clone()),
        Data::Dbl(v) => Data::Dbl(v.clone()),
        Data::Cplx(v) => Data::Cplx(v.clone()),
        Data::Chr(v) => Data::Chr(v.clone()),
        Data::Json(v, from) => Data::Json(v.clone(), from.clone()),
        Data::Raw(v) => Data::Raw(v.clone()),
        Data::List(v) => Data::List(v.clone()),
        Data::Other(t) => Data::Other(t),
    }
}

/// A data frame with compact row names.
pub fn df(cols: Vec<(&str, TV)>, nrow: i32) -> TV {
    let cols: Vec<(Option<&str>, TV)> = cols.into_iter().map(|(n, v)| (Some(n), v)).collect();
    named(cols).attr("row.names", int(&[NA_INT, -nrow])).class(&["data.frame"])
}

impl RValue for TV {
    fn rtype(&self) -> RType {
        match &self.0.data {
            Data::Null => RType::Null,
            Data::Lgl(_) => RType::Logical,
            Data::Int(_) => RType::Integer,
            Data::Dbl(_) => RType::Double,
            Data::Cplx(_) => RType::Complex,
            Data::Chr(_) | Data::Json(..) => RType::Character,
            Data::Raw(_) => RType::Raw,
            Data::List(_) => RType::List,
            Data::Other(_) => RType::Other,
        }
    }
    fn type_name(&self) -> String {
        match &self.0.data {
            Data::Other(t) => t.to_string(),
            _ => format!("{:?}", self.rtype()).to_lowercase(),
        }
    }
    fn len(&self) -> usize {
        match &self.0.data {
            Data::Null | Data::Other(_) => 0,
            Data::Lgl(v) | Data::Int(v) => v.len(),
            Data::Dbl(v) => v.len(),
            Data::Cplx(v) => v.len(),
            Data::Chr(v) => v.len(),
            Data::Json(..) => 1,
            Data::Raw(v) => v.len(),
            Data::List(v) => v.len(),
        }
    }
    fn is_s4(&self) -> bool {
        self.0.s4
    }
    fn class(&self) -> Vec<String> {
        match self.attr("class") {
            Some(c) => match &c.0.data {
                Data::Chr(v) => v.iter().map(|x| x.clone().unwrap_or_default()).collect(),
                _ => Vec::new(),
            },
            None => Vec::new(),
        }
    }
    fn attr(&self, name: &str) -> Option<Self> {
        self.0.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
    }
    fn logicals(&self) -> &[i32] {
        match &self.0.data {
            Data::Lgl(v) => v,
            _ => &[],
        }
    }
    fn integers(&self) -> &[i32] {
        match &self.0.data {
            Data::Int(v) => v,
            _ => &[],
        }
    }
    fn doubles(&self) -> &[f64] {
        match &self.0.data {
            Data::Dbl(v) => v,
            _ => &[],
        }
    }
    fn complexes(&self) -> &[[f64; 2]] {
        match &self.0.data {
            Data::Cplx(v) => v,
            _ => &[],
        }
    }
    fn raws(&self) -> &[u8] {
        match &self.0.data {
            Data::Raw(v) => v,
            _ => &[],
        }
    }
    fn str_elt(&self, i: usize) -> Option<Cow<'_, [u8]>> {
        match &self.0.data {
            Data::Chr(v) => v[i].as_deref().map(|s| Cow::Borrowed(s.as_bytes())),
            Data::Json(v, _) if i == 0 => Some(Cow::Borrowed(v)),
            _ => None,
        }
    }
    fn str_keys(&self) -> Option<&[usize]> {
        match &self.0.data {
            Data::Chr(_) => Some(&self.0.keys),
            _ => None,
        }
    }
    fn core_json(&self) -> Option<&[u8]> {
        match &self.0.data {
            Data::Json(v, _) => Some(v),
            _ => None,
        }
    }
    fn is_json_written_from(&self, value: &Self) -> bool {
        matches!(&self.0.data, Data::Json(_, Some(from)) if Rc::ptr_eq(&from.0, &value.0))
    }
    fn list_elt(&self, i: usize) -> Self {
        match &self.0.data {
            Data::List(v) => v[i].clone(),
            _ => null(),
        }
    }
    fn convert(&self, conv: Conversion<'_>) -> Result<Self, String> {
        match conv {
            // Tests attach the text R's format() would give.
            Conversion::FormatTime { .. } | Conversion::AsCharacter { .. } => {
                self.attr("formatted").ok_or_else(|| "no formatted text in test value".to_string())
            }
            Conversion::ComplexStrings { .. } => {
                let v: Vec<Option<String>> = self
                    .complexes()
                    .iter()
                    .map(|z| {
                        if z[0].is_nan() && (z[0].to_bits() & 0xFFFF_FFFF) == 1954 {
                            Some("NA".to_string())
                        } else {
                            Some(format!("{}{}{}i", z[0], if z[1] < 0.0 { "" } else { "+" }, z[1]))
                        }
                    })
                    .collect();
                Ok(mk(Data::Chr(v)))
            }
        }
    }
}
