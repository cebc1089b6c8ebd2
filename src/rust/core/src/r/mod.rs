//! Everything the core knows about R values, on both sides of a tool call:
//!
//! - reading R objects through the [`RValue`] trait: the protocol's fixed
//!   encoding ([`fixed`]: schemas, annotations, `_meta`), the tool specs R hands
//!   over at start ([`spec`]), and what a tool returns ([`result`]); the
//!   payload serializer ([`crate::rjson`]) reads through the same trait;
//! - building R objects through the [`RBuilder`] trait: tool arguments from the
//!   client's JSON ([`args`]).
//!
//! The glue implements both traits for SEXPs once; the tests implement them
//! over [`crate::rjson::testvalue`] and a small builder model.

pub mod args;
pub mod author;
pub mod fixed;
pub mod options;
pub mod result;
pub mod spec;

pub use crate::rjson::{is_na_real, RType, RValue};
pub use args::{Formals, RBuilder, Scalar, MAX_ARG_DEPTH};

/// R's `NA_integer_` and `NA` for logicals.
pub const NA_INTEGER: i32 = i32::MIN;

/// Where a rule's message describes the offending value ([`describe`]):
/// [`Problem`] puts the description there, the one for R
/// ([`Problem::for_r`]) or the server's own ([`Problem::text`]).
pub const VALUE: &str = "{value}";
/// Where a message shows the offending value itself: R writes it there as R
/// prints it (`format_scalar()` in R/conditions.R: R's own number printing,
/// which only R knows); the server's own texts quote a string.
pub const SCALAR: &str = "{scalar}";

/// What a rule found: the mistake (if any) and the warnings to give.
#[derive(Debug, Default, PartialEq)]
pub struct Verdict {
    pub problem: Option<Problem>,
    pub warnings: Vec<Problem>,
    /// For named lists: the name R keeps for each element (`None`: R drops
    /// it), when the rule renames.
    pub names: Option<Vec<Option<String>>>,
}

impl Verdict {
    fn of(r: Result<(), Problem>) -> Verdict {
        Verdict { problem: r.err(), ..Verdict::default() }
    }

    /// A renaming rule's outcome: the names kept, or the mistake; the
    /// warnings given on the way either way.
    pub fn renaming(r: Result<Vec<Option<String>>, Problem>, warnings: Vec<Problem>) -> Verdict {
        match r {
            Ok(names) => Verdict { problem: None, warnings, names: Some(names) },
            Err(p) => Verdict { problem: Some(p), warnings, names: None },
        }
    }
}

/// An author's mistake found by a rule of the core. The R constructors raise
/// it as the classed condition `mcplite_error_<class>` naming `arg`; the
/// message reads as R's own because R describes the value ([`VALUE`],
/// [`SCALAR`]) found at `at` (1-based positions from the checked object).
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub message: String,
    pub class: &'static str,
    pub arg: String,
    pub at: Vec<usize>,
    /// How the value is described: for [`Problem::text`] and for
    /// [`Problem::for_r`] (boxed: a problem travels in `Result`s).
    described: Box<Described>,
}

#[derive(Clone, Debug, PartialEq)]
struct Described {
    server: String,
    r: String,
}

impl Problem {
    pub fn new<V: RValue>(class: &'static str, arg: &str, message: String, at: Vec<usize>, value: &V) -> Problem {
        let described = match string1(value) {
            Some(s) if message.contains(SCALAR) => format!("{s:?}"),
            _ => describe(value),
        };
        let described = Box::new(Described { server: described, r: describe_for_r(value) });
        Problem { message, class, arg: arg.to_string(), at, described }
    }

    /// The message with the core's description in place, where no R code
    /// fills it in (the server's own start-up checks).
    pub fn text(&self) -> String {
        self.message.replace(VALUE, &self.described.server).replace(SCALAR, &self.described.server)
    }

    /// The message for R to raise: the description in place, with the
    /// [`SCALAR`] R fills in (the value found at `at`, as R prints it).
    pub fn for_r(&self) -> String {
        self.message.replace(VALUE, &self.described.r)
    }
}

/// The element of list `v` whose name is exactly `name` (R's `[[` with
/// `exact = TRUE`; `$` would also match a prefix). The first one if repeated.
pub fn field<V: RValue>(v: &V, name: &str) -> Option<V> {
    if v.rtype() != RType::List {
        return None;
    }
    let names = v.attr("names")?;
    if names.rtype() != RType::Character {
        return None;
    }
    let n = names.len().min(v.len());
    (0..n).find(|&i| names.str_elt(i).is_some_and(|s| &*s == name.as_bytes())).map(|i| v.list_elt(i))
}

/// Like [`field`], treating `NULL` as absent.
pub fn field_present<V: RValue>(v: &V, name: &str) -> Option<V> {
    field(v, name).filter(|x| x.rtype() != RType::Null)
}

/// Whether `v` carries class `class` (R's `inherits()`).
pub fn inherits<V: RValue>(v: &V, class: &str) -> bool {
    v.class().iter().any(|c| c == class)
}

/// A single non-NA string (`is_string()` in R), as UTF-8 with invalid bytes
/// replaced.
pub fn string1<V: RValue>(v: &V) -> Option<String> {
    if v.rtype() != RType::Character || v.len() != 1 {
        return None;
    }
    v.str_elt(0).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The elements of a character vector, as UTF-8 with invalid bytes replaced
/// (`NA` as ""); `None` for any other value.
pub fn strings<V: RValue>(v: &V) -> Option<Vec<String>> {
    if v.rtype() != RType::Character {
        return None;
    }
    Some(
        (0..v.len())
            .map(|i| v.str_elt(i).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default())
            .collect(),
    )
}

/// A single non-NA logical.
pub fn flag1<V: RValue>(v: &V) -> Option<bool> {
    if v.rtype() != RType::Logical || v.len() != 1 || !v.class().is_empty() {
        return None;
    }
    match v.logicals().first() {
        Some(&NA_INTEGER) | None => None,
        Some(&b) => Some(b != 0),
    }
}

/// A single non-NA number (integer or double, no class).
pub fn number1<V: RValue>(v: &V) -> Option<f64> {
    if v.len() != 1 || !v.class().is_empty() {
        return None;
    }
    match v.rtype() {
        RType::Integer => v.integers().first().filter(|&&i| i != NA_INTEGER).map(|&i| i as f64),
        RType::Double => v.doubles().first().filter(|d| !d.is_nan()).copied(),
        _ => None,
    }
}

/// `TRUE` or `FALSE`, read as R's `is_flag()` (a class does not matter,
/// unlike [`flag1`]).
pub fn is_flag<V: RValue>(v: &V) -> Option<bool> {
    match (v.rtype(), v.len(), v.logicals().first()) {
        (RType::Logical, 1, Some(&b)) if b != NA_INTEGER => Some(b != 0),
        _ => None,
    }
}

/// Whether `v` is one `NA` that R's `is.na()` sees, of a logical or a number.
pub fn single_na<V: RValue>(v: &V) -> bool {
    v.len() == 1
        && match v.rtype() {
            RType::Logical => v.logicals().first() == Some(&NA_INTEGER),
            RType::Integer => v.integers().first() == Some(&NA_INTEGER),
            RType::Double => v.doubles().first().is_some_and(|d| d.is_nan()),
            _ => false,
        }
}

/// The one number of `v` (classes ignored, as R's `unclass()` does), if it
/// is an integer or double vector of length 1.
pub fn unclassed_number<V: RValue>(v: &V) -> Option<f64> {
    if v.len() != 1 {
        return None;
    }
    match v.rtype() {
        RType::Integer => v.integers().first().filter(|&&i| i != NA_INTEGER).map(|&i| i as f64),
        RType::Double => v.doubles().first().copied().filter(|d| !d.is_nan()),
        _ => None,
    }
}

/// The names of list `x`, one per element ("" where it has none).
pub fn list_names<V: RValue>(x: &V) -> Vec<String> {
    let mut names = x.attr("names").and_then(|n| strings(&n)).unwrap_or_default();
    names.resize(x.len(), String::new());
    names
}

/// `` `a` ``, `` `a` and `b` ``, `` `a`, `b` and `c` ``.
pub fn quote_names<S: AsRef<str>>(names: &[S]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("`{}`", n.as_ref())).collect();
    match q.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => q.join(""),
    }
}

/// The warning for annotation names MCP does not define (for `what`:
/// "tools" or "content"): they are sent as given. `known` lists MCP's names.
pub fn unknown_annotations<V: RValue, S: AsRef<str>>(
    arg: &str,
    names: &[S],
    what: &str,
    known: &str,
    x: &V,
) -> Problem {
    let (which, verb) = if names.len() > 1 { ("names", "they are") } else { ("the name", "it is") };
    Problem::new(
        "unknown_annotation",
        arg,
        format!(
            "`{arg}` has {which} {}, which MCP does not define for {what}; {verb} sent as given.\nMCP's names: {known}.",
            quote_names(names)
        ),
        Vec::new(),
        x,
    )
}

/// What a value is, in the words R users know, for the server's own error
/// messages: a single value is named by its kind only ("a character
/// value"), since a tool error does not echo what the tool returned.
pub fn describe<V: RValue>(v: &V) -> String {
    describe_as(v, false)
}

/// What a value is, for the messages R raises (`describe_value()` in
/// R/conditions.R is this): a single value is shown too ("the character
/// value {scalar}", [`SCALAR`] for R to fill in).
pub fn describe_for_r<V: RValue>(v: &V) -> String {
    describe_as(v, true)
}

/// The classes that say no more than the type (R's implicit classes).
const PLAIN_CLASSES: [&str; 6] = ["AsIs", "integer", "numeric", "character", "logical", "list"];

fn describe_as<V: RValue>(v: &V, show_scalar: bool) -> String {
    let class = v.class();
    let type_name = v.type_name();
    if matches!(type_name.as_str(), "closure" | "builtin" | "special") {
        return "a function".into();
    }
    if type_name == "environment" {
        return "an environment".into();
    }
    if class.iter().any(|c| c == "data.frame") {
        return "a data frame".into();
    }
    if let Some(c) = class.iter().find(|c| !PLAIN_CLASSES.contains(&c.as_str())) {
        return format!("an object of class <{c}>");
    }
    let n = v.len();
    let list = |n: usize| if n == 0 { "an empty list".to_string() } else { format!("a list of length {n}") };
    let kind = match v.rtype() {
        RType::Null => return "NULL".into(),
        RType::List => return list(n),
        // R's is.list() holds for pairlists too.
        RType::Other if type_name == "pairlist" => return list(n),
        RType::Logical => "logical",
        RType::Integer => "integer",
        RType::Double => "numeric",
        RType::Character => "character",
        RType::Complex => "complex",
        RType::Raw => "raw",
        RType::Other => return format!("an object of type '{type_name}'"),
    };
    if n == 1 {
        let na = match v.rtype() {
            RType::Logical => v.logicals().first() == Some(&NA_INTEGER),
            RType::Integer => v.integers().first() == Some(&NA_INTEGER),
            RType::Double => v.doubles().first().is_some_and(|d| d.is_nan()),
            RType::Character => v.str_elt(0).is_none(),
            RType::Complex => v.complexes().first().is_some_and(|c| c[0].is_nan() || c[1].is_nan()),
            _ => false,
        };
        if na {
            return format!("a missing {kind} value (NA)");
        }
        return if show_scalar { format!("the {kind} value {SCALAR}") } else { format!("a {kind} value") };
    }
    let article = if kind.starts_with(|c: char| "aeiou".contains(c)) { "an" } else { "a" };
    format!("{article} {kind} vector of length {n}")
}

/// R's syntactic names (what `make.names(x) == x` accepts), for paths.
fn is_syntactic(name: &str) -> bool {
    const RESERVED: [&str; 19] = [
        "if",
        "else",
        "repeat",
        "while",
        "function",
        "for",
        "next",
        "break",
        "TRUE",
        "FALSE",
        "NULL",
        "Inf",
        "NaN",
        "NA",
        "NA_integer_",
        "NA_real_",
        "NA_character_",
        "NA_complex_",
        "in",
    ];
    let mut chars = name.chars();
    let Some(first) = chars.next() else { return false };
    if !(first.is_alphabetic() || first == '.') {
        return false;
    }
    if first == '.' && name[1..].starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    chars.all(|c| c.is_alphanumeric() || c == '.' || c == '_') && !RESERVED.contains(&name)
}

/// Appends how R code would reach element `name` of a list: `$name`, or
/// `[["odd name"]]` when the name is not syntactic.
pub fn push_name(path: &mut String, name: &str) {
    if is_syntactic(name) {
        path.push('$');
        path.push_str(name);
    } else {
        path.push_str("[[\"");
        for c in name.chars() {
            match c {
                '"' => path.push_str("\\\""),
                '\\' => path.push_str("\\\\"),
                '\0' => path.push_str("\\0"),
                c if c.is_control() => path.push_str(&c.escape_default().to_string()),
                c => path.push(c),
            }
        }
        path.push_str("\"]]");
    }
}

/// Appends `[[i]]` (1-based, as R counts).
pub fn push_index(path: &mut String, i: usize) {
    path.push_str(&format!("[[{}]]", i + 1));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rjson::testvalue::*;

    #[test]
    fn fields_are_read_by_exact_name() {
        let v = named(vec![(Some("typeExtension"), s("object")), (Some("type"), s("x")), (Some("type"), s("y"))]);
        assert_eq!(field(&v, "type").and_then(|x| string1(&x)), Some("x".into()));
        assert!(field(&v, "typ").is_none());
        assert!(field(&s("a"), "a").is_none());
        assert!(field(&list(vec![s("a")]), "a").is_none());
    }

    #[test]
    fn scalars() {
        assert_eq!(string1(&chr(&[None])), None);
        assert_eq!(string1(&chr(&[Some("a"), Some("b")])), None);
        assert_eq!(flag1(&lgl(&[Some(true)])), Some(true));
        assert_eq!(flag1(&lgl(&[None])), None);
        assert_eq!(flag1(&s("no")), None);
        assert_eq!(number1(&int(&[NA_INT])), None);
        assert_eq!(number1(&dbl(&[2.5])), Some(2.5));
        assert_eq!(number1(&dbl(&[2.5]).class(&["Date"])), None);
    }

    #[test]
    fn descriptions_and_paths() {
        assert_eq!(describe(&other("closure")), "a function");
        assert_eq!(describe(&dbl(&[1.0]).class(&["Date"])), "an object of class <Date>");
        assert_eq!(describe(&chr(&[None])), "a missing character value (NA)");
        assert_eq!(describe(&int(&[1, 2])), "an integer vector of length 2");
        assert_eq!(describe(&list(vec![])), "an empty list");
        // One set of words, for R's messages with the single value shown.
        assert_eq!(describe(&s("yes")), "a character value");
        assert_eq!(describe_for_r(&s("yes")), "the character value {scalar}");
        assert_eq!(describe_for_r(&dbl(&[f64::NAN])), "a missing numeric value (NA)");
        assert_eq!(describe_for_r(&cplx(&[[f64::NAN, 0.0]])), "a missing complex value (NA)");
        assert_eq!(describe_for_r(&raw(&[1])), "the raw value {scalar}");
        assert_eq!(describe_for_r(&int(&[1]).class(&["AsIs", "integer"])), "the integer value {scalar}");
        assert_eq!(describe_for_r(&other("environment").class(&["R6"])), "an environment");
        assert_eq!(describe_for_r(&named(vec![(Some("a"), int(&[1]))]).class(&["data.frame"])), "a data frame");
        assert_eq!(describe_for_r(&other("language")), "an object of type 'language'");
        let mut p = String::from("x");
        push_name(&mut p, "a");
        push_index(&mut p, 1);
        push_name(&mut p, "odd key\"");
        push_name(&mut p, "if");
        push_name(&mut p, ".2x");
        assert_eq!(p, r#"x$a[[2]][["odd key\""]][["if"]][[".2x"]]"#);
    }
}
