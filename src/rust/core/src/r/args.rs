//! Tool arguments: from the client's JSON object to the named R list given to
//! the tool function, through the [`RBuilder`] trait.
//!
//! Arguments are checked in full before anything is built, so building cannot
//! fail half-way (the glue builds inside R's error protection, where nothing
//! that needs cleaning up may be pending). A value R cannot hold is refused
//! with the R path of the argument: R strings cannot contain NUL, and nesting
//! is bounded. Names are matched exactly, never partially.
//!
//! JSON maps to R as jsonlite does with `simplifyVector = FALSE`: objects are
//! named lists (`{}` keeps an empty names attribute), arrays unnamed lists,
//! strings character(1), `true`/`false` logical(1), `null` NULL, integers that
//! fit R's integer type integer(1) and every other number double(1) (`1e400`
//! is `Inf`). Lone surrogate escapes arrive as U+FFFD.

use super::{push_index, push_name};
use crate::json::{r_number, Kind, RNumber, Val};

/// Arguments nested deeper than this (below `arguments`) are refused.
pub const MAX_ARG_DEPTH: usize = 512;

/// The longest string R holds, in bytes: a CHARSXP's length is an `int`
/// (2^31 - 1). Longer strings and names are refused before anything is
/// built, so the builder never has to shorten one.
pub const R_STRING_MAX: usize = i32::MAX as usize;

/// One leaf value for the builder.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar<'a> {
    Null,
    Logical(bool),
    Integer(i32),
    Double(f64),
    /// Never contains NUL.
    String(&'a str),
}

/// Builds R objects top-down: a list is made first and its items are stored
/// into it as they are built, so only the lists on the current path need
/// protecting from R's garbage collector.
pub trait RBuilder {
    /// A handle to a built object.
    type Obj: Copy;
    fn scalar(&mut self, value: Scalar<'_>) -> Self::Obj;
    /// A new list of `len` items, named when `named` (its names start empty).
    /// It stays protected until [`RBuilder::finish_list`].
    fn new_list(&mut self, len: usize, named: bool) -> Self::Obj;
    /// Store `item` (and its name, for named lists) at position `i`.
    fn set_item(&mut self, list: Self::Obj, i: usize, name: Option<&str>, item: Self::Obj);
    fn finish_list(&mut self, list: Self::Obj);
}

/// The formal arguments of a tool function, for exact name matching.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Formals {
    /// All formals except `...`.
    pub names: Vec<String>,
    /// Formals before `...` (R would match a prefix of these partially).
    pub before_dots: Vec<String>,
    pub has_dots: bool,
    /// False for primitives, whose formals R does not expose.
    pub known: bool,
}

impl Formals {
    /// From the formals in order, `...` included.
    pub fn new(all: &[String]) -> Formals {
        let dots = all.iter().position(|n| n == "...");
        Formals {
            names: all.iter().filter(|n| *n != "...").cloned().collect(),
            before_dots: dots.map(|d| all[..d].to_vec()).unwrap_or_default(),
            has_dots: dots.is_some(),
            known: true,
        }
    }

    /// Formals that cannot be checked (primitives).
    pub fn unknown() -> Formals {
        Formals::default()
    }

    /// An argument name R would not bind exactly: not a formal, and either no
    /// `...` to take it, or empty (R would bind it by position), or a prefix of
    /// a formal before `...` (R would bind it partially).
    fn inexact(&self, name: &str) -> bool {
        if !self.known || self.names.iter().any(|n| n == name) {
            return false;
        }
        !self.has_dots || name.is_empty() || self.before_dots.iter().any(|n| n.starts_with(name))
    }
}

/// Check `arguments` (an object, or absent) for tool `tool`. The message is
/// what the client receives as the tool error.
pub fn check(arguments: Option<Val<'_>>, formals: &Formals, tool: &str) -> Result<(), String> {
    let Some(args) = arguments else { return Ok(()) };
    for (key, value) in args.members() {
        let name = key.as_str().unwrap_or("");
        if key.has_nul() {
            return Err(format!(
                "Tool {tool} received an argument name with a NUL character (\\u0000), which R names cannot hold."
            ));
        }
        if name.len() > R_STRING_MAX {
            return Err(format!(
                "Tool {tool} received an argument name of {} bytes, longer than R's limit of {R_STRING_MAX} bytes.",
                name.len()
            ));
        }
        if formals.inexact(name) {
            return Err(format!("Tool {tool} has no argument named '{name}'."));
        }
        check_value(value, 1, MAX_ARG_DEPTH, R_STRING_MAX).map_err(|found| match found.fault {
            Fault::Nul => format!(
                "Argument `{}` of tool {tool} contains a NUL character (\\u0000), which R strings cannot hold.",
                found.path(name)
            ),
            Fault::NulName => format!(
                "Argument `{}` of tool {tool} has a name with a NUL character (\\u0000), which R names cannot hold.",
                found.path(name)
            ),
            Fault::Nested => format!(
                "Argument `{name}` of tool {tool} is nested deeper than {MAX_ARG_DEPTH} levels, which mcplite does not pass to R."
            ),
            Fault::Long(n) => format!(
                "Argument `{}` of tool {tool} holds a string of {n} bytes, longer than R's limit of {R_STRING_MAX} bytes.",
                found.path(name)
            ),
            Fault::LongName(n) => format!(
                "Argument `{}` of tool {tool} has a name of {n} bytes, longer than R's limit of {R_STRING_MAX} bytes.",
                found.path(name)
            ),
        })?;
    }
    Ok(())
}

enum Fault {
    Nul,
    NulName,
    Nested,
    /// A string longer than R holds, and its length in bytes.
    Long(usize),
    LongName(usize),
}

/// One step of the R path to a value.
enum Step<'d> {
    Index(usize),
    Name(&'d str),
}

/// What [`check_value`] found, and where: the steps to it, innermost first,
/// collected on the way out. The path is made only for a value that is
/// refused, so checking a large argument costs no string work per value.
struct Found<'d> {
    fault: Fault,
    steps: Vec<Step<'d>>,
}

impl<'d> Found<'d> {
    fn new(fault: Fault) -> Self {
        Found { fault, steps: Vec::new() }
    }

    fn at(mut self, step: Step<'d>) -> Self {
        self.steps.push(step);
        self
    }

    /// The R path from `root`, shortened (see [`shorten`]).
    fn path(&self, root: &str) -> String {
        let mut path = String::from(root);
        for step in self.steps.iter().rev() {
            match *step {
                Step::Index(i) => push_index(&mut path, i),
                Step::Name(name) => push_name(&mut path, name),
            }
        }
        shorten(&path)
    }
}

/// The length in bytes of a decoded string or name, if it is longer than `max`.
fn too_long(v: Val<'_>, max: usize) -> Option<usize> {
    v.as_str().map(str::len).filter(|&n| n > max)
}

/// Paths deep down are long; the start says which argument it is.
fn shorten(path: &str) -> String {
    const MAX: usize = 120;
    if path.len() <= MAX {
        return path.to_string();
    }
    let mut end = MAX;
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &path[..end])
}

/// `max_string` is [`R_STRING_MAX`] but in tests.
fn check_value(v: Val<'_>, depth: usize, max_depth: usize, max_string: usize) -> Result<(), Found<'_>> {
    match v.kind() {
        Kind::String if v.has_nul() => Err(Found::new(Fault::Nul)),
        Kind::String => match too_long(v, max_string) {
            Some(n) => Err(Found::new(Fault::Long(n))),
            None => Ok(()),
        },
        Kind::Deep => Err(Found::new(Fault::Nested)),
        Kind::Array | Kind::Object if depth > max_depth => Err(Found::new(Fault::Nested)),
        Kind::Array => {
            for (i, item) in v.items().enumerate() {
                check_value(item, depth + 1, max_depth, max_string).map_err(|f| f.at(Step::Index(i)))?;
            }
            Ok(())
        }
        Kind::Object => {
            for (key, item) in v.members() {
                if key.has_nul() {
                    return Err(Found::new(Fault::NulName));
                }
                if let Some(n) = too_long(key, max_string) {
                    return Err(Found::new(Fault::LongName(n)));
                }
                let name = key.as_str().unwrap_or("");
                check_value(item, depth + 1, max_depth, max_string).map_err(|f| f.at(Step::Name(name)))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Build the named list of arguments. Call [`check`] first: this assumes no
/// NUL, no Deep marker and bounded depth (it builds `NULL` for what it cannot).
pub fn build<B: RBuilder>(arguments: Option<Val<'_>>, b: &mut B) -> B::Obj {
    match arguments {
        Some(args) if args.is_object() => value(args, b),
        _ => {
            let list = b.new_list(0, true);
            b.finish_list(list);
            list
        }
    }
}

/// Build any JSON value: the reader's (the root of a parsed document, say:
/// call [`check_json`] first) or one this package made itself as a serde
/// value, which R gets exactly as it would get the same value's text read
/// back (no text is written).
pub fn build_value<'a, J: JsonTree<'a>, B: RBuilder>(v: J, b: &mut B) -> B::Obj {
    value(v, b)
}

/// One node of a JSON tree, as the builder reads it.
pub enum Node<'a, J: JsonTree<'a>> {
    /// `null`, and the reader's [`Kind::Deep`] marker (refused by the checks first).
    Null,
    Bool(bool),
    /// A number, as R holds the JSON text of it ([`r_number`]).
    Number(RNumber),
    String(&'a str),
    Array(usize, J::Items),
    Object(usize, J::Members),
}

/// A JSON value the builder can read. The mapping to R is [`value`]'s alone,
/// whatever the source: the reader's [`Val`] (client messages, answers a
/// client reads) or a `serde_json::Value` (JSON this package made).
pub trait JsonTree<'a>: Copy + 'a {
    type Items: Iterator<Item = Self>;
    type Members: Iterator<Item = (&'a str, Self)>;
    fn node(self) -> Node<'a, Self>;
}

impl<'d> JsonTree<'d> for Val<'d> {
    type Items = crate::json::Children<'d>;
    type Members = NamedMembers<'d>;

    #[inline]
    fn node(self) -> Node<'d, Self> {
        match self.kind() {
            Kind::Null | Kind::Deep => Node::Null,
            Kind::True => Node::Bool(true),
            Kind::False => Node::Bool(false),
            Kind::Number => Node::Number(r_number(self.raw_str())),
            Kind::String => Node::String(self.as_str().unwrap_or("")),
            Kind::Array => Node::Array(self.len(), self.items()),
            Kind::Object => Node::Object(self.len(), NamedMembers(self.members())),
        }
    }
}

/// An object's members with their names as text (the argument path's
/// iterator: a plain call per member, no function pointer).
pub struct NamedMembers<'d>(crate::json::Members<'d>);

impl<'d> Iterator for NamedMembers<'d> {
    type Item = (&'d str, Val<'d>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k.as_str().unwrap_or(""), v))
    }
}

impl<'a> JsonTree<'a> for &'a serde_json::Value {
    type Items = std::slice::Iter<'a, serde_json::Value>;
    type Members = std::iter::Map<
        serde_json::map::Iter<'a>,
        fn((&'a String, &'a serde_json::Value)) -> (&'a str, &'a serde_json::Value),
    >;

    fn node(self) -> Node<'a, Self> {
        use serde_json::Value;
        match self {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(*b),
            // From the text serde writes for it, as a reader of that text
            // would see it (the text is gone before anything is built: an R
            // error jumps over the builder's frames, which own nothing).
            Value::Number(n) => Node::Number(r_number(&n.to_string())),
            Value::String(s) => Node::String(s),
            Value::Array(items) => Node::Array(items.len(), items.iter()),
            Value::Object(map) => {
                let named: fn((&'a String, &'a Value)) -> (&'a str, &'a Value) = |(k, v)| (k.as_str(), v);
                Node::Object(map.len(), map.iter().map(named))
            }
        }
    }
}

/// Check a whole JSON value for what R cannot hold (see [`check`]).
pub fn check_json(v: Val<'_>) -> Result<(), String> {
    check_json_within(v, MAX_ARG_DEPTH, "x")
}

/// [`check_json`] with another bound on nesting (`usize::MAX`: only what the
/// reader kept, no [`Kind::Deep`] marker).
/// Paths in messages start at `root`.
pub fn check_json_within(v: Val<'_>, max_depth: usize, root: &str) -> Result<(), String> {
    check_json_limits(v, max_depth, R_STRING_MAX, root)
}

fn check_json_limits(v: Val<'_>, max_depth: usize, max_string: usize, root: &str) -> Result<(), String> {
    check_value(v, 0, max_depth, max_string).map_err(|found| match found.fault {
        Fault::Nul => format!(
            "the string at `{}` contains a NUL character (\\u0000), which R strings cannot hold",
            found.path(root)
        ),
        Fault::NulName => {
            format!("a name in `{}` contains a NUL character (\\u0000), which R names cannot hold", found.path(root))
        }
        Fault::Nested if max_depth == usize::MAX => {
            format!("it is nested deeper than {} levels", crate::json::MAX_TREE_DEPTH)
        }
        Fault::Nested => format!("it is nested deeper than {max_depth} levels"),
        Fault::Long(n) => format!(
            "the string at `{}` is {n} bytes long, longer than R's limit of {R_STRING_MAX} bytes",
            found.path(root)
        ),
        Fault::LongName(n) => {
            format!("a name in `{}` is {n} bytes long, longer than R's limit of {R_STRING_MAX} bytes", found.path(root))
        }
    })
}

fn value<'a, J: JsonTree<'a>, B: RBuilder>(v: J, b: &mut B) -> B::Obj {
    match v.node() {
        Node::Null => b.scalar(Scalar::Null),
        Node::Bool(x) => b.scalar(Scalar::Logical(x)),
        Node::Number(n) => match n {
            RNumber::Int(i) => b.scalar(Scalar::Integer(i)),
            RNumber::Double(d) => b.scalar(Scalar::Double(d)),
        },
        Node::String(s) => b.scalar(Scalar::String(s)),
        Node::Array(len, items) => {
            let list = b.new_list(len, false);
            for (i, item) in items.enumerate() {
                let x = value(item, b);
                b.set_item(list, i, None, x);
            }
            b.finish_list(list);
            list
        }
        Node::Object(len, members) => {
            let list = b.new_list(len, true);
            for (i, (key, item)) in members.enumerate() {
                let x = value(item, b);
                b.set_item(list, i, Some(key), x);
            }
            b.finish_list(list);
            list
        }
    }
}

/// A builder that makes a readable model of the R objects, for tests.
#[doc(hidden)]
pub mod model {
    use super::{RBuilder, Scalar};

    #[derive(Debug, Clone, PartialEq)]
    pub enum RObj {
        Null,
        Lgl(bool),
        Int(i32),
        Dbl(f64),
        Str(String),
        List(Vec<(Option<String>, RObj)>, bool),
    }

    /// Objects live in `store`; handles are indexes.
    #[derive(Default)]
    pub struct ModelBuilder {
        pub store: Vec<RObj>,
        pub open: usize,
    }

    impl ModelBuilder {
        pub fn get(&self, i: usize) -> RObj {
            match &self.store[i] {
                RObj::List(items, named) => RObj::List(items.clone(), *named),
                other => other.clone(),
            }
        }
    }

    impl RBuilder for ModelBuilder {
        type Obj = usize;
        fn scalar(&mut self, value: Scalar<'_>) -> usize {
            self.store.push(match value {
                Scalar::Null => RObj::Null,
                Scalar::Logical(b) => RObj::Lgl(b),
                Scalar::Integer(i) => RObj::Int(i),
                Scalar::Double(d) => RObj::Dbl(d),
                Scalar::String(s) => RObj::Str(s.to_string()),
            });
            self.store.len() - 1
        }
        fn new_list(&mut self, len: usize, named: bool) -> usize {
            self.open += 1;
            self.store.push(RObj::List(vec![(None, RObj::Null); len], named));
            self.store.len() - 1
        }
        fn set_item(&mut self, list: usize, i: usize, name: Option<&str>, item: usize) {
            let obj = self.get(item);
            if let RObj::List(items, _) = &mut self.store[list] {
                items[i] = (name.map(str::to_string), obj);
            }
        }
        fn finish_list(&mut self, _list: usize) {
            self.open -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::model::{ModelBuilder, RObj};
    use super::*;
    use crate::json::Doc;

    fn doc(s: &str) -> Doc {
        Doc::parse(s.as_bytes().to_vec()).unwrap()
    }

    fn formals(names: &[&str]) -> Formals {
        Formals::new(&names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn strings_longer_than_r_holds_are_refused_by_their_decoded_length() {
        assert_eq!(R_STRING_MAX, (1usize << 31) - 1, "a CHARSXP's length is an int");
        let check = |json: &str, max: usize| check_json_limits(doc(json).root(), usize::MAX, max, "x");
        // At the limit, and below it, nothing is refused.
        assert_eq!(check(r#"{"a":["xyz","abcde"]}"#, 5), Ok(()));
        let e = check(r#"{"a":["xyz","abcdef"]}"#, 5).unwrap_err();
        assert!(e.contains("is 6 bytes long") && e.contains(&R_STRING_MAX.to_string()), "{e}");
        // Decoded bytes count, not the escapes in the message: three é are
        // 6 bytes of UTF-8 but 18 characters of JSON.
        assert_eq!(check(r#"{"a":"\u00e9\u00e9\u00e9"}"#, 6), Ok(()));
        assert!(check(r#"{"a":"\u00e9\u00e9\u00e9"}"#, 5).unwrap_err().contains("is 6 bytes long"));
        // Names too, at any depth.
        let e = check(r#"{"a":{"abcdef":1}}"#, 5).unwrap_err();
        assert!(e.starts_with("a name in") && e.contains("6 bytes"), "{e}");
        // A top-level string.
        assert!(check(r#""abcdef""#, 5).is_err());
    }

    #[test]
    fn builds_named_lists_top_down() {
        let d = doc(r#"{"x":1,"y":[true,null,"s",1.5,{},[]],"z":{"a":-2147483648}}"#);
        let mut b = ModelBuilder::default();
        let obj = build(Some(d.root()), &mut b);
        assert_eq!(b.open, 0);
        let RObj::List(items, true) = b.get(obj) else { panic!() };
        assert_eq!(items[0], (Some("x".into()), RObj::Int(1)));
        let RObj::List(y, false) = &items[1].1 else { panic!() };
        assert_eq!(y[0].1, RObj::Lgl(true));
        assert_eq!(y[1].1, RObj::Null);
        assert_eq!(y[2].1, RObj::Str("s".into()));
        assert_eq!(y[3].1, RObj::Dbl(1.5));
        assert_eq!(y[4].1, RObj::List(vec![], true));
        assert_eq!(y[5].1, RObj::List(vec![], false));
        assert_eq!(items[2].1, RObj::List(vec![(Some("a".into()), RObj::Dbl(-2147483648.0))], true));
        let mut b = ModelBuilder::default();
        let none = build(None, &mut b);
        assert_eq!(b.get(none), RObj::List(vec![], true));
    }

    #[test]
    fn a_serde_value_builds_what_its_text_read_back_builds() {
        let shapes = [
            r#"{"a":1,"b":[true,false,null],"c":{"d":{"e":[]}},"f":{}}"#,
            r#"[1,-1,2147483647,-2147483647,-2147483648,2147483648,9007199254740993,18446744073709551615]"#,
            r#"[1.5,-0.0,0.1,1e300,-1e-300,1.7976931348623157e308,5e-324,123456789012345678901234567890]"#,
            r#"["","é","\u2603 snow","😀","tab\tquote\"back\\slash","line\nfeed",{"ключ":"значение"}]"#,
            r#"[[],{},[[]],[{}],{"":{"":[]}},[1,"x",null,true,{"k":[2.5]}]]"#,
            r#"{"z":1,"a":2,"m":3}"#,
            r#"null"#,
            r#""just a string""#,
            r#"0"#,
        ];
        for text in shapes {
            let serde: serde_json::Value = serde_json::from_str(text).unwrap();
            let mut direct = ModelBuilder::default();
            let from_serde = build_value(&serde, &mut direct);
            let doc = doc(&serde.to_string());
            let mut read = ModelBuilder::default();
            let from_text = build_value(doc.root(), &mut read);
            assert_eq!(direct.open, 0);
            assert_eq!(direct.get(from_serde), read.get(from_text), "{text}");
        }
        // The reader's own mapping, unchanged: an empty object keeps its names.
        let mut b = ModelBuilder::default();
        let v = serde_json::json!({"e": {}, "a": [], "n": 3000000000u64, "i": 7});
        let obj = build_value(&v, &mut b);
        assert_eq!(
            b.get(obj),
            RObj::List(
                vec![
                    (Some("e".into()), RObj::List(vec![], true)),
                    (Some("a".into()), RObj::List(vec![], false)),
                    (Some("n".into()), RObj::Dbl(3e9)),
                    (Some("i".into()), RObj::Int(7)),
                ],
                true
            )
        );
    }

    #[test]
    fn names_are_matched_exactly() {
        let f = formals(&["x", "verbose"]);
        let d = doc(r#"{"x":1,"verb":true}"#);
        assert_eq!(check(Some(d.root()), &f, "t"), Err("Tool t has no argument named 'verb'.".into()));
        let dots = formals(&["x", "...", "after"]);
        assert!(check(Some(doc(r#"{"anything":1,"after":2}"#).root()), &dots, "t").is_ok());
        // Before `...`, a prefix would be matched partially by R.
        let dots = formals(&["verbose", "...", "after"]);
        assert!(check(Some(doc(r#"{"verb":1}"#).root()), &dots, "t").is_err());
        assert!(check(Some(doc(r#"{"":1}"#).root()), &dots, "t").is_err());
        assert!(check(Some(doc(r#"{"x":1}"#).root()), &Formals::unknown(), "t").is_ok());
    }

    #[test]
    fn paths_are_made_only_for_what_is_refused_and_name_every_step() {
        // Steps through indexes, syntactic and other names, at several depths.
        let f = formals(&["x"]);
        for (json, path) in [
            (r#"{"x":[1,2,{"a b":[true,"\u0000"]}]}"#, r#"x[[3]][["a b"]][[2]]"#),
            (r#"{"x":{"k":{"j":[[["\u0000"]]]}}}"#, "x$k$j[[1]][[1]][[1]]"),
            (r#"{"x":[[],{},[{"q\"":"\u0000"}]]}"#, r#"x[[3]][[1]][["q\""]]"#),
            (r#"{"x":"\u0000"}"#, "x"),
        ] {
            let e = check(Some(doc(json).root()), &f, "t").unwrap_err();
            assert!(e.contains(&format!("`{path}`")), "{json}: {e}");
        }
        let e = check(Some(doc(r#"{"x":[0,{"ok":1,"a":{"b\u0000":1}}]}"#).root()), &f, "t").unwrap_err();
        assert!(e.contains("`x[[2]]$a`") && e.contains("name with a NUL"), "{e}");
        let e = check_json(doc(r#"[{"a":["s","\u0000"]}]"#).root()).unwrap_err();
        assert!(e.contains("`x[[1]]$a[[2]]`"), "{e}");
        // Long paths are shortened as before.
        let deep = format!(r#"{{"x":{}"\u0000"{}}}"#, "[".repeat(100), "]".repeat(100));
        let e = check(Some(doc(&deep).root()), &f, "t").unwrap_err();
        assert!(e.contains(&format!("`x{}...`", &"[[1]]".repeat(100)[..119])), "{e}");
    }

    #[test]
    fn values_r_cannot_hold_name_the_argument() {
        let f = formals(&["x", "..."]);
        let e = check(Some(doc(r#"{"x":{"a":[1,"b\u0000"]}}"#).root()), &f, "t").unwrap_err();
        assert!(e.contains("`x$a[[2]]`") && e.contains("NUL"), "{e}");
        let e = check(Some(doc(r#"{"odd name":"\u0000"}"#).root()), &f, "t").unwrap_err();
        assert!(e.contains("`odd name`"), "{e}");
        let e = check(Some(doc(r#"{"a\u0000b":1}"#).root()), &f, "t").unwrap_err();
        assert!(e.contains("NUL"), "{e}");
        let e = check(Some(doc(r#"{"x":{"k\u0000":1}}"#).root()), &f, "t").unwrap_err();
        assert!(e.contains("`x`") && e.contains("NUL"), "{e}");
        let deep = |n: usize| format!("{{\"x\":{}{}}}", "[".repeat(n), "]".repeat(n));
        assert!(check(Some(doc(&deep(MAX_ARG_DEPTH)).root()), &f, "t").is_ok());
        let e = check(Some(doc(&deep(MAX_ARG_DEPTH + 1)).root()), &f, "t").unwrap_err();
        assert!(e.contains("nested deeper than 512"), "{e}");
        let e = check(Some(doc(&deep(100_000)).root()), &f, "t").unwrap_err();
        assert!(e.contains("nested deeper"), "{e}");
    }
}

/// Timing of the argument path without R (issue 41, goal 6): parse, check
/// and build of 50 MB arrays, the builder doing no work. Run with
/// `tools/cargo.sh test -p mcplite-core --release --lib argument_path_timing -- --ignored --nocapture`.
#[cfg(test)]
mod timing {
    use super::*;
    use crate::json::Doc;

    /// Counts what it is given, so nothing is optimized away.
    struct Count(usize);
    impl RBuilder for Count {
        type Obj = usize;
        fn scalar(&mut self, value: Scalar<'_>) -> usize {
            self.0 += match value {
                Scalar::Double(d) => d.is_sign_negative() as usize,
                _ => 1,
            };
            0
        }
        fn new_list(&mut self, _len: usize, _named: bool) -> usize {
            0
        }
        fn set_item(&mut self, _list: usize, _i: usize, _name: Option<&str>, _item: usize) {}
        fn finish_list(&mut self, _list: usize) {}
    }

    #[test]
    #[ignore]
    fn argument_path_timing() {
        for kind in ["numbers", "strings", "objects"] {
            let mut s = String::from("{\"x\":[");
            let mut i = 0u64;
            while s.len() < 50_000_000 {
                if i > 0 {
                    s.push(',');
                }
                let x = ((i as f64).sin() * 1e6).round() / 1e3;
                match kind {
                    "numbers" => s.push_str(&format!("{x}")),
                    "strings" => s.push_str(&format!("\"item {i} of the list\"")),
                    _ => s.push_str(&format!("{{\"id\":{i},\"name\":\"item {i}\",\"score\":{x}}}")),
                }
                i += 1;
            }
            s.push_str("]}");
            let t = std::time::Instant::now();
            let d = Doc::parse(s.into_bytes()).unwrap();
            let parse = t.elapsed();
            let t = std::time::Instant::now();
            check(Some(d.root()), &Formals::unknown(), "t").unwrap();
            let checked = t.elapsed();
            let t = std::time::Instant::now();
            let mut b = Count(0);
            build(Some(d.root()), &mut b);
            let built = t.elapsed();
            println!(
                "{kind:8} {i:8} values, document {:4} MB; parse {parse:?}, check {checked:?}, build {built:?} ({})",
                d.heap_size() >> 20,
                b.0
            );
        }
    }
}
