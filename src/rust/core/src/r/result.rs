//! Reading what a tool returned into a [`CallResult`].
//!
//! Nothing an R object carries reaches the wire unchecked. A `tool_result()`
//! is read field by field by exact name and must hold together: every content
//! block made by a `content_*()` constructor with the fields its type needs,
//! `is_error` a flag, metadata with a fixed encoding, and the structured
//! content's JSON text (built once by `tool_result()`) exactly one compact
//! JSON value. Whatever does not becomes a tool error that says what is wrong,
//! so an object edited by hand can neither break the protocol stream nor make
//! the server lie. Large texts are not copied here: the result refers to the
//! R strings, which are escaped straight into the answer when it is written.

use super::fixed::{encode_object, FixedError};
use super::{
    describe, field, field_present, flag1, inherits, number1, push_index, string1, Problem, RType, RValue, VALUE,
};
use crate::result::{Annotations, Block, CallResult, Content, JsonBuffer, ResourceBody, Role, Text};
use crate::rjson::{self, Options};

/// Class of the objects `tool_result()` makes.
pub const RESULT_CLASS: &str = "mcplite_tool_result";
/// Class every `content_*()` block carries.
pub const CONTENT_CLASS: &str = "mcplite_content";

/// Turn a tool's return value into a result, or say (naming the tool) why it
/// cannot be sent.
pub fn read_return<V: RValue>(value: V, opts: &Options, tool: &str) -> Result<CallResult<V>, String> {
    let read = if inherits(&value, RESULT_CLASS) {
        read_tool_result(&value, opts)
            .map_err(|e| format!("Tool {tool} returned a tool_result() that cannot be sent: {e}"))
    } else {
        ordinary(&value, opts).map_err(|e| format!("Tool {tool} returned a value that cannot be sent: {e}"))
    };
    read.map(|mut r| {
        r.keep = Some(value);
        r
    })
}

/// Ordinary values become one text block: character vectors joined with
/// newlines, `NULL` as `{}`, an unnamed empty list as `[]`, anything else as
/// payload JSON.
fn ordinary<V: RValue>(x: &V, opts: &Options) -> Result<CallResult<V>, String> {
    let text = match x.rtype() {
        RType::Character if x.len() == 1 && x.str_elt(0).is_some() => Text::R(x.clone()),
        RType::Character => {
            let mut out = Vec::new();
            for i in 0..x.len() {
                if i > 0 {
                    out.push(b'\n');
                }
                match x.str_elt(i) {
                    Some(b) => out.extend_from_slice(&b),
                    None => out.extend_from_slice(b"NA"),
                }
            }
            Text::Owned(String::from_utf8_lossy(&out).into_owned())
        }
        RType::Null => Text::Owned("{}".into()),
        RType::List if x.is_empty() && x.attr("names").is_none() && x.class().is_empty() => Text::Owned("[]".into()),
        _ => {
            let bytes = rjson::to_json_into(x, opts, rjson::take_buffer())?;
            Text::Json(JsonBuffer::new(bytes))
        }
    };
    Ok(CallResult::text(text))
}

fn fixed(e: FixedError) -> String {
    format!("`{}` is {}, which has no JSON form", e.path, e.what)
}

/// A field that must be a single string.
fn required_string<V: RValue>(block: &V, name: &str, path: &str) -> Result<String, String> {
    let x = field(block, name).ok_or_else(|| format!("`{path}${name}` is missing"))?;
    string1(&x).ok_or_else(|| format!("`{path}${name}` must be a single string, not {}", describe(&x)))
}

/// A field that may be absent (or NULL), else a single string.
fn optional_string<V: RValue>(block: &V, name: &str, path: &str) -> Result<Option<String>, String> {
    match field_present(block, name) {
        None => Ok(None),
        Some(x) => string1(&x)
            .map(Some)
            .ok_or_else(|| format!("`{path}${name}` must be a single string or NULL, not {}", describe(&x))),
    }
}

/// A single string kept in R (not copied): large payloads live in these.
fn required_text<V: RValue>(block: &V, name: &str, path: &str) -> Result<Text<V>, String> {
    let x = field(block, name).ok_or_else(|| format!("`{path}${name}` is missing"))?;
    if x.rtype() == RType::Character && x.len() == 1 && x.str_elt(0).is_some() {
        Ok(Text::R(x))
    } else {
        Err(format!("`{path}${name}` must be a single string, not {}", describe(&x)))
    }
}

fn read_tool_result<V: RValue>(x: &V, opts: &Options) -> Result<CallResult<V>, String> {
    if x.rtype() != RType::List {
        return Err(format!("it must be a list, not {}", describe(x)));
    }
    let mut content = Vec::new();
    if let Some(blocks) = field_present(x, "content") {
        if blocks.rtype() != RType::List || !blocks.class().is_empty() {
            return Err(format!("`content` must be a list of content blocks, not {}", describe(&blocks)));
        }
        for i in 0..blocks.len() {
            let mut path = String::from("content");
            push_index(&mut path, i);
            content.push(read_block(&blocks.list_elt(i), &path)?);
        }
    }
    let is_error = match field(x, "is_error") {
        None => false,
        Some(f) => flag1(&f).ok_or_else(|| format!("`is_error` must be TRUE or FALSE, not {}", describe(&f)))?,
    };
    let meta = read_meta(x, "meta", "meta")?;
    let structured = read_structured(x, &mut content, opts)?;
    if content.is_empty() && structured.is_none() {
        // The schema allows an empty `content`, but a result that says nothing
        // is an author's mistake (CRAN mcplite 0.2.0 refuses it too).
        return Err("it has no content: give at least one content block, or `structured_content`".into());
    }
    Ok(CallResult { content, structured, is_error, meta, keep: None })
}

/// The structured content to send. `structured_content` is the one source:
/// the JSON `tool_result()` wrote (`structured_json`, the same JSON text as
/// the text block it generated) is sent as it is while it is still that
/// value's. An author who changed or removed `structured_content` since gets
/// the edit sent: its JSON is written now, and the generated text block
/// follows it (or goes with it). JSON text R code replaced is checked and
/// sent, as given.
fn read_structured<V: RValue>(x: &V, content: &mut Vec<Content<V>>, opts: &Options) -> Result<Option<Text<V>>, String> {
    let value = field_present(x, "structured_content");
    let Some(json) = field_present(x, "structured_json") else {
        // Built by hand without the JSON: write it now, as tool_result() would.
        return value.map(|v| write_structured(&v, opts)).transpose();
    };
    if json.rtype() != RType::Character || json.len() != 1 || json.str_elt(0).is_none() {
        return Err(format!("`structured_json` must be a single string of JSON, not {}", describe(&json)));
    }
    if json.core_json().is_none() {
        // R code replaced the text: check it (the serializer's own is trusted).
        if let Some(Err(fault)) = json.str_elt(0).map(|b| crate::json::check_compact(&b, rjson::MAX_DEPTH)) {
            return Err(format!("`structured_json` is not the compact JSON `tool_result()` writes: {fault}"));
        }
        return Ok(Some(Text::R(json)));
    }
    let Some(generated) = structured_edit(x) else { return Ok(Some(Text::R(json))) };
    let fresh = value.map(|v| write_structured(&v, opts)).transpose()?;
    match &fresh {
        Some(text) => {
            for &i in &generated {
                content[i].block = Block::Text { text: text.clone() };
            }
        }
        None => {
            for &i in generated.iter().rev() {
                content.remove(i);
            }
        }
    }
    Ok(fresh)
}

/// Whether `x`'s `structured_content` was changed (or removed) after
/// `tool_result()` wrote its JSON, which `x` still holds as `structured_json`:
/// then the positions (from 0) in `content` of the text blocks holding that
/// same JSON text (the generated one). `None` when the JSON is still the
/// value's, or is not the serializer's (R code replaced it).
pub fn structured_edit<V: RValue>(x: &V) -> Option<Vec<usize>> {
    if x.rtype() != RType::List {
        return None;
    }
    let json = field_present(x, "structured_json")?;
    let written = json.core_json()?;
    if field_present(x, "structured_content").is_some_and(|v| json.is_json_written_from(&v)) {
        return None;
    }
    let blocks = field_present(x, "content").filter(|b| b.rtype() == RType::List);
    let generated = blocks.map_or_else(Vec::new, |blocks| {
        (0..blocks.len())
            .filter(|&i| {
                let block = blocks.list_elt(i);
                let text = field_present(&block, "text")
                    .filter(|_| field_present(&block, "type").and_then(|t| string1(&t)).is_some_and(|t| t == "text"));
                text.is_some_and(|t| t.core_json().is_some_and(|b| std::ptr::eq(b, written)))
            })
            .collect()
    });
    Some(generated)
}

/// `structured_content`'s JSON, written now with the server's payload
/// options (and `tool_result()`'s rule for the root: a bare `list()` is `{}`).
fn write_structured<V: RValue>(value: &V, opts: &Options) -> Result<Text<V>, String> {
    if value.rtype() == RType::List && value.is_empty() && value.attr("names").is_none() && value.class().is_empty() {
        return Ok(Text::Owned("{}".into()));
    }
    let bytes = rjson::to_json(value, opts).map_err(|e| format!("`structured_content`: {e}"))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| "`structured_content` holds strings that are not valid UTF-8".to_string())?;
    Ok(Text::Owned(text))
}

/// The check `tool_result()` makes of the object it built: the reading the
/// server does before sending it, so that a block edited by hand is refused
/// when the result is made, not when a client calls.
pub fn check_built<V: RValue>(x: &V) -> Result<(), String> {
    // The structured content's JSON is already written (and trusted: it is
    // the JSON of `structured_content`), so the payload options play no part.
    read_tool_result(x, &Options::default()).map(|_| ())
}

fn read_meta<V: RValue>(
    x: &V,
    name: &str,
    path: &str,
) -> Result<Option<serde_json::Map<String, serde_json::Value>>, String> {
    match field_present(x, name) {
        None => Ok(None),
        Some(m) => {
            let map = encode_object(&m, path).map_err(fixed)?;
            Ok((!map.is_empty()).then_some(map))
        }
    }
}

fn read_block<V: RValue>(b: &V, path: &str) -> Result<Content<V>, String> {
    if b.rtype() != RType::List || !inherits(b, CONTENT_CLASS) {
        return Err(format!(
            "`{path}` must be a content block made by content_text() and friends, not {}",
            describe(b)
        ));
    }
    let kind = required_string(b, "type", path)?;
    let block = match kind.as_str() {
        "text" => Block::Text { text: required_text(b, "text", path)? },
        "image" => {
            Block::Image { data: required_text(b, "data", path)?, mime_type: required_string(b, "mime_type", path)? }
        }
        "audio" => {
            Block::Audio { data: required_text(b, "data", path)?, mime_type: required_string(b, "mime_type", path)? }
        }
        "resource_link" => Block::ResourceLink {
            uri: required_string(b, "uri", path)?,
            name: required_string(b, "name", path)?,
            title: optional_string(b, "title", path)?,
            description: optional_string(b, "description", path)?,
            mime_type: optional_string(b, "mime_type", path)?,
            size: match field_present(b, "size") {
                None => None,
                Some(s) => {
                    Some(number1(&s).filter(|v| v.is_finite() && *v >= 0.0 && v.fract() == 0.0).ok_or_else(|| {
                        format!("`{path}$size` must be a whole number of bytes, not {}", describe(&s))
                    })?)
                }
            },
        },
        "resource" => {
            let text = field_present(b, "text");
            let blob = field_present(b, "blob");
            let body = match (text.is_some(), blob.is_some()) {
                (true, false) => ResourceBody::Text(required_text(b, "text", path)?),
                (false, true) => ResourceBody::Blob(required_text(b, "blob", path)?),
                _ => return Err(format!("`{path}` must have exactly one of `text` and `blob`")),
            };
            Block::Resource {
                uri: required_string(b, "uri", path)?,
                mime_type: optional_string(b, "mime_type", path)?,
                body,
            }
        }
        other => {
            return Err(format!(
            "`{path}$type` is \"{other}\", not one of \"text\", \"image\", \"audio\", \"resource_link\", \"resource\""
        ))
        }
    };
    let annotations = read_annotations(b, path)?;
    let meta = read_meta(b, "meta", &format!("{path}$meta"))?;
    Ok(Content { block, annotations, meta })
}

/// What MCP's content annotations must hold, by R name: `None` if `value`
/// will do, else what it must be. One rule for `content_*()` (the author's
/// value, where a POSIXct time will do for `last_modified`: R writes it as
/// ISO 8601) and for the server reading a block (R's converted value).
fn annotation_problem<V: RValue>(name: &str, value: &V, from_author: bool) -> Option<&'static str> {
    match name {
        "audience" => {
            let ok = value.rtype() == RType::Character
                && !value.is_empty()
                && (0..value.len())
                    .all(|j| value.str_elt(j).is_some_and(|s| Role::parse(&String::from_utf8_lossy(&s)).is_some()));
            (!ok).then_some("\"user\", \"assistant\" or both")
        }
        "priority" => {
            // R's is.numeric(): integers and doubles, but not the classes
            // that say otherwise.
            let numeric = matches!(value.rtype(), RType::Integer | RType::Double)
                && !value.class().iter().any(|c| matches!(c.as_str(), "factor" | "Date" | "POSIXt" | "difftime"));
            let p = if numeric { super::unclassed_number(value) } else { None };
            (!p.is_some_and(|p| (0.0..=1.0).contains(&p))).then_some("a number from 0 to 1")
        }
        "last_modified" => {
            let time = from_author && inherits(value, "POSIXct") && value.len() == 1 && !super::single_na(value);
            let ok = time || string1(value).is_some_and(|s| !s.is_empty());
            (!ok).then_some("an ISO 8601 time stamp as a single string (or a POSIXct time)")
        }
        _ => None,
    }
}

/// The content-annotation rule, for `content_*()`: `lastModified` is
/// `last_modified` too (once), each of MCP's annotations holds what it must,
/// and other names are sent as given, with a warning, if they have a fixed
/// encoding. `x` is a named list (R checked its names). Returns the R name of
/// each element and the warnings.
pub fn check_content_annotations<V: RValue>(x: &V, arg: &str) -> super::Verdict {
    let mut warnings = Vec::new();
    let names = content_annotation_names(x, arg, &mut warnings);
    super::Verdict::renaming(names, warnings)
}

fn content_annotation_names<V: RValue>(
    x: &V,
    arg: &str,
    warnings: &mut Vec<Problem>,
) -> Result<Vec<Option<String>>, Problem> {
    const KNOWN: [&str; 3] = ["audience", "priority", "last_modified"];
    let given = super::list_names(x);
    let problem = |message: String, at: Vec<usize>, value: &V| Problem::new("content", arg, message, at, value);
    if given.iter().any(|n| n == crate::wire::LAST_MODIFIED) && given.iter().any(|n| n == "last_modified") {
        return Err(problem(
            format!("`{arg}` gives `last_modified` more than once (in camelCase and snake_case)."),
            Vec::new(),
            x,
        ));
    }
    let names: Vec<String> = given
        .into_iter()
        .map(|n| if n == crate::wire::LAST_MODIFIED { "last_modified".to_string() } else { n })
        .collect();
    let unknown: Vec<&String> = names.iter().filter(|n| !KNOWN.contains(&n.as_str())).collect();
    if !unknown.is_empty() {
        let mcp = "`audience`, `priority` and `last_modified`";
        warnings.push(super::unknown_annotations(arg, &unknown, "content", mcp, x));
    }
    for (i, name) in names.iter().enumerate() {
        let value = x.list_elt(i);
        if let Some(expected) = annotation_problem(name, &value, true) {
            return Err(problem(format!("`{arg}${name}` must be {expected}, not {VALUE}."), vec![i + 1], &value));
        }
    }
    for (i, name) in names.iter().enumerate() {
        if !KNOWN.contains(&name.as_str()) {
            let mut path = arg.to_string();
            super::push_name(&mut path, name);
            let value = x.list_elt(i);
            if let Err(e) = super::fixed::encode(&value, &path) {
                return Err(problem(e.message(arg), Vec::new(), &value));
            }
        }
    }
    Ok(names.into_iter().map(Some).collect())
}

fn read_annotations<V: RValue>(b: &V, path: &str) -> Result<Annotations, String> {
    let mut out = Annotations::default();
    let Some(a) = field_present(b, "annotations") else { return Ok(out) };
    let here = format!("{path}$annotations");
    if a.rtype() != RType::List {
        return Err(format!("`{here}` must be a named list, not {}", describe(&a)));
    }
    let names = a.attr("names");
    for i in 0..a.len() {
        let name = names
            .as_ref()
            .and_then(|n| n.str_elt(i).map(|s| String::from_utf8_lossy(&s).into_owned()))
            .unwrap_or_default();
        if name.is_empty() {
            return Err(format!("`{here}` must name every element"));
        }
        let value = a.list_elt(i);
        if let Some(expected) = annotation_problem(&name, &value, false) {
            return Err(format!("`{here}${name}` must be {expected}, not {}", describe(&value)));
        }
        match name.as_str() {
            "audience" => {
                out.audience = Some(
                    (0..value.len())
                        .filter_map(|j| value.str_elt(j).and_then(|s| Role::parse(&String::from_utf8_lossy(&s))))
                        .collect(),
                )
            }
            "priority" => out.priority = super::unclassed_number(&value),
            "last_modified" => out.last_modified = string1(&value),
            _ => {
                let mut path = here.clone();
                super::push_name(&mut path, &name);
                let value = super::fixed::encode(&value, &path).map_err(fixed)?;
                out.other.insert(name, value);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rjson::testvalue::*;

    fn block(kind: &str, fields: Vec<(&str, TV)>) -> TV {
        let mut all = vec![(Some("type"), s(kind))];
        all.extend(fields.into_iter().map(|(k, v)| (Some(k), v)));
        named(all).class(&[&format!("mcplite_content_{kind}"), CONTENT_CLASS])
    }

    fn result(fields: Vec<(&str, TV)>) -> TV {
        named(fields.into_iter().map(|(k, v)| (Some(k), v)).collect()).class(&[RESULT_CLASS])
    }

    fn err(v: TV) -> String {
        read_return(v, &Options::default(), "t").expect_err("expected a refusal")
    }

    fn ok(v: TV) -> CallResult<TV> {
        read_return(v, &Options::default(), "t").expect("readable")
    }

    #[test]
    fn ordinary_values() {
        let r = ok(chr(&[Some("a"), None, Some("b")]));
        let Block::Text { text } = &r.content[0].block else { panic!() };
        assert_eq!(text.to_string_lossy(), "a\nNA\nb");
        let r = ok(null());
        let Block::Text { text } = &r.content[0].block else { panic!() };
        assert_eq!(text.to_string_lossy(), "{}");
        let r = ok(list(vec![]));
        let Block::Text { text } = &r.content[0].block else { panic!() };
        assert_eq!(text.to_string_lossy(), "[]");
        assert!(err(other("environment")).starts_with("Tool t returned a value that cannot be sent"));
    }

    #[test]
    fn a_good_result_reads_whole() {
        let r = ok(result(vec![
            (
                "content",
                list(vec![block(
                    "text",
                    vec![
                        ("text", s("hi")),
                        ("annotations", named(vec![(Some("audience"), s("user")), (Some("custom"), int(&[1]))])),
                    ],
                )]),
            ),
            ("structured_json", s("{\"a\":1}")),
            ("is_error", lgl(&[Some(false)])),
            ("meta", named(vec![(Some("k"), s("v"))])),
        ]));
        assert!(!r.is_error);
        assert_eq!(r.content.len(), 1);
        assert_eq!(r.content[0].annotations.audience, Some(vec![Role::User]));
        assert_eq!(r.content[0].annotations.other["custom"], 1, "other members are sent as given");
        assert!(r.structured_is_object());
        assert_eq!(r.meta.as_ref().unwrap()["k"], "v");
    }

    #[test]
    fn tampered_results_are_refused_with_the_reason() {
        let good_text = || block("text", vec![("text", s("x"))]);
        let cases: Vec<(TV, &str)> = vec![
            (result(vec![("content", list(vec![block("text", vec![])]))]), "`content[[1]]$text` is missing"),
            (
                result(vec![("content", list(vec![block("text", vec![("text", null())])]))]),
                "`content[[1]]$text` must be a single string",
            ),
            (
                result(vec![("content", list(vec![block("text", vec![("text", chr(&[None]))])]))]),
                "must be a single string",
            ),
            (
                result(vec![("content", list(vec![block("text", vec![("text", chr(&[Some("a"), Some("b")]))])]))]),
                "must be a single string",
            ),
            (
                result(vec![("content", list(vec![named(vec![(Some("type"), s("text")), (Some("text"), s("x"))])]))]),
                "content block made by",
            ),
            (result(vec![("content", list(vec![block("video", vec![])]))]), "`content[[1]]$type` is \"video\""),
            (result(vec![("content", s("x"))]), "`content` must be a list"),
            (
                result(vec![("content", list(vec![good_text()])), ("is_error", s("no"))]),
                "`is_error` must be TRUE or FALSE",
            ),
            (result(vec![("is_error", lgl(&[None]))]), "`is_error` must be TRUE or FALSE"),
            (result(vec![("structured_json", s("{\"a\":\n1}"))]), "not the compact JSON"),
            (result(vec![("structured_json", s("{"))]), "not the compact JSON"),
            (result(vec![("structured_json", s("1 2"))]), "not the compact JSON"),
            (
                result(vec![("structured_json", s("1}\n{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}"))]),
                "not the compact JSON",
            ),
            (result(vec![("structured_json", int(&[1]))]), "`structured_json` must be a single string"),
            (result(vec![("meta", s("x"))]), "`meta`"),
            (result(vec![("meta", named(vec![(Some("f"), other("closure"))]))]), "`meta$f` is a function"),
            (
                result(vec![(
                    "content",
                    list(vec![block(
                        "text",
                        vec![("text", s("x")), ("annotations", named(vec![(Some("priority"), dbl(&[2.0]))]))],
                    )]),
                )]),
                "`content[[1]]$annotations$priority` must be a number from 0 to 1",
            ),
            (
                result(vec![(
                    "content",
                    list(vec![block(
                        "text",
                        vec![("text", s("x")), ("annotations", named(vec![(Some("audience"), s("robot"))]))],
                    )]),
                )]),
                "audience",
            ),
            (
                result(vec![(
                    "content",
                    list(vec![block("resource", vec![("uri", s("u")), ("text", s("t")), ("blob", s("b"))])]),
                )]),
                "exactly one of `text` and `blob`",
            ),
            (
                result(vec![(
                    "content",
                    list(vec![block("resource_link", vec![("uri", s("u")), ("name", s("n")), ("size", dbl(&[-1.0]))])]),
                )]),
                "whole number of bytes",
            ),
            (
                result(vec![(
                    "content",
                    list(vec![block("image", vec![("data", s("AA==")), ("mime_type", int(&[1]).class(&["factor"]))])]),
                )]),
                "`content[[1]]$mime_type` must be a single string",
            ),
            (
                result(vec![(
                    "content",
                    list(vec![block(
                        "text",
                        vec![("text", s("x")), ("meta", named(vec![(Some("d"), dbl(&[1.0]).class(&["Date"]))]))],
                    )]),
                )]),
                "`content[[1]]$meta$d`",
            ),
            (s("x").class(&[RESULT_CLASS]), "it must be a list"),
        ];
        for (value, want) in cases {
            let e = err(value);
            assert!(e.starts_with("Tool t returned a tool_result() that cannot be sent: "), "{e}");
            assert!(e.contains(want), "{e} does not say {want}");
        }
    }

    #[test]
    fn json_texts_the_serializer_made_are_trusted_as_they_are() {
        // The glue hands out JSON texts only for serializer output that R
        // code cannot have changed, so they are not checked again (even
        // this one, which the serializer could never have written).
        let value = named(vec![(Some("a"), int(&[1, 2]))]);
        let r = ok(result(vec![
            ("structured_content", value.clone()),
            ("structured_json", json_text_from("{\"a\":[1 ,2]}", &value)),
        ]));
        assert_eq!(r.structured.unwrap().to_string_lossy(), "{\"a\":[1 ,2]}");
        // The same bytes as an ordinary R string are checked.
        assert!(err(result(vec![("structured_json", s("{\"a\":[1 ,2]}"))])).contains("not the compact JSON"));
    }

    /// A result as `tool_result()` builds it from `value`: its JSON text
    /// (written from `value`), the same text as the generated block, then
    /// `more` blocks of the author's.
    fn built(value: &TV, json: &str, more: Vec<TV>) -> (TV, TV) {
        let text = json_text_from(json, value);
        let mut blocks = vec![block("text", vec![("text", text.clone())])];
        blocks.extend(more);
        (list(blocks), text)
    }

    fn texts(r: &CallResult<TV>) -> Vec<String> {
        r.content
            .iter()
            .map(|c| match &c.block {
                Block::Text { text } => text.to_string_lossy(),
                _ => String::new(),
            })
            .collect()
    }

    #[test]
    fn an_edited_structured_content_is_sent_with_its_generated_block() {
        let before = named(vec![(Some("a"), int(&[1]))]);
        let own = || block("text", vec![("text", s("mine"))]);
        // Unchanged: the JSON written then is sent, not written again (it
        // says 99, which the value does not, to tell).
        let (blocks, json) = built(&before, "{\"a\":99}", vec![own()]);
        let r = ok(result(vec![
            ("content", blocks.clone()),
            ("structured_content", before.clone()),
            ("structured_json", json.clone()),
        ]));
        assert_eq!(r.structured.as_ref().unwrap().to_string_lossy(), "{\"a\":99}");
        assert_eq!(texts(&r), ["{\"a\":99}", "mine"]);
        // Changed values (an equal value is another object too: written
        // again, the same JSON): the JSON and the generated block follow,
        // the author's block stays.
        for (after, want) in [
            (named(vec![(Some("a"), int(&[2]))]), "{\"a\":2}"),
            (named(vec![(Some("a"), int(&[1]))]), "{\"a\":1}"),
            (list(vec![s("x"), null()]), "[\"x\",null]"),
            (dbl(&[1.5]), "1.5"),
            (list(vec![]), "{}"),
        ] {
            let r = ok(result(vec![
                ("content", blocks.clone()),
                ("structured_content", after),
                ("structured_json", json.clone()),
            ]));
            assert_eq!(r.structured.as_ref().unwrap().to_string_lossy(), want);
            assert_eq!(texts(&r), [want, "mine"]);
        }
        // Only text blocks are generated: a resource holding the same JSON
        // text is the author's, and stays as it was.
        let resource = block("resource", vec![("uri", s("file:///a.json")), ("text", json.clone())]);
        let r = ok(result(vec![
            ("content", list(vec![block("text", vec![("text", json.clone())]), own(), resource])),
            ("structured_content", named(vec![(Some("a"), int(&[3]))])),
            ("structured_json", json.clone()),
        ]));
        assert_eq!(texts(&r), ["{\"a\":3}", "mine", ""]);
        let Block::Resource { body: ResourceBody::Text(t), .. } = &r.content[2].block else { panic!() };
        assert_eq!(t.to_string_lossy(), "{\"a\":99}");
        // Removed: no structured content, and the generated block goes too.
        for gone in [vec![], vec![("structured_content", null())]] {
            let mut fields = vec![("content", blocks.clone()), ("structured_json", json.clone())];
            fields.extend(gone.clone());
            let r = ok(result(fields));
            assert!(r.structured.is_none());
            assert_eq!(texts(&r), ["mine"]);
            let (alone, json) = built(&before, "{\"a\":1}", vec![]);
            let mut fields = vec![("content", alone), ("structured_json", json)];
            fields.extend(gone);
            assert!(err(result(fields)).contains("it has no content"));
        }
        // A value with no JSON form is refused, naming the field.
        let e = err(result(vec![
            ("content", blocks),
            ("structured_content", named(vec![(Some("e"), other("environment"))])),
            ("structured_json", json),
        ]));
        assert!(e.contains("`structured_content`: cannot convert an object of R type 'environment'"), "{e}");
    }

    #[test]
    fn structured_content_without_its_json_is_written_now() {
        let r = ok(result(vec![("structured_content", named(vec![(Some("a"), int(&[1]))]))]));
        assert!(!r.is_error);
        assert_eq!(r.structured.unwrap().to_string_lossy(), "{\"a\":1}");
    }
    #[test]
    fn content_annotations_follow_one_rule() {
        let time = dbl(&[0.0]).class(&["POSIXct", "POSIXt"]);
        let a = named(vec![
            (Some("audience"), chr(&[Some("user"), Some("assistant")])),
            (Some("priority"), int(&[1])),
            (Some("lastModified"), time),
            (Some("custom"), s("x")),
        ]);
        let v = check_content_annotations(&a, "annotations");
        let (names, warnings) = (v.names.unwrap(), v.warnings);
        let names: Vec<_> = names.iter().map(|n| n.as_deref().unwrap_or("")).collect();
        assert_eq!(names, ["audience", "priority", "last_modified", "custom"]);
        assert_eq!(warnings.len(), 1);
        let twice = named(vec![(Some("lastModified"), s("a")), (Some("last_modified"), s("b"))]);
        let p = check_content_annotations(&twice, "annotations").problem.unwrap();
        assert_eq!(p.message, "`annotations` gives `last_modified` more than once (in camelCase and snake_case).");
        for (name, value) in [
            ("audience", s("everyone")),
            ("audience", chr(&[])),
            ("audience", chr(&[Some("user"), None])),
            ("priority", dbl(&[2.0])),
            ("priority", dbl(&[-0.1])),
            ("priority", dbl(&[f64::NAN])),
            ("priority", s("0.5")),
            ("priority", dbl(&[0.5]).class(&["Date"])),
            ("last_modified", dbl(&[5.0])),
            ("last_modified", s("")),
            ("last_modified", dbl(&[f64::NAN]).class(&["POSIXct", "POSIXt"])),
            ("last_modified", dbl(&[0.0, 1.0]).class(&["POSIXct", "POSIXt"])),
        ] {
            let p = check_content_annotations(&named(vec![(Some(name), value)]), "annotations").problem.unwrap();
            assert_eq!((p.class, p.arg.as_str(), p.at.as_slice()), ("content", "annotations", &[1][..]), "{name}");
            assert!(p.message.starts_with(&format!("`annotations${name}` must be ")), "{}", p.message);
        }
    }
}
