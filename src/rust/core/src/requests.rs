//! What the params mcplite reads must hold, per protocol version, as the
//! official schemas define them: the legacy `initialize` params
//! (`protocolVersion`, `capabilities`, `clientInfo`) and the modern
//! per-request `_meta`. A violation is answered -32602 with a message that
//! names the field. The schemas are open (unknown members are allowed), so
//! only the members a version defines are checked.

use crate::json::{Kind, Val};
use crate::wire;

/// The JSON shape a member must have.
#[derive(Debug)]
pub enum Shape {
    String,
    Boolean,
    /// A string or an integer (progress tokens).
    StringOrInteger,
    Enum(&'static [&'static str]),
    /// Any object; `members` lists the ones with a known shape.
    Object(&'static [Member]),
    /// An object whose every member has one shape.
    MapOf(&'static Shape),
    ArrayOf(&'static Shape),
}

#[derive(Debug)]
pub struct Member {
    pub name: &'static str,
    pub shape: Shape,
    pub required: bool,
}

const fn opt(name: &'static str, shape: Shape) -> Member {
    Member { name, shape, required: false }
}

const fn req(name: &'static str, shape: Shape) -> Member {
    Member { name, shape, required: true }
}

const ANY_OBJECT: Shape = Shape::Object(&[]);

const ICON: Shape = Shape::Object(&[
    req("src", Shape::String),
    opt(wire::MIME_TYPE, Shape::String),
    opt("sizes", Shape::ArrayOf(&Shape::String)),
    opt("theme", Shape::Enum(&["dark", "light"])),
]);

/// `Implementation` (clientInfo), by version.
pub const IMPLEMENTATION_2024: Shape = Shape::Object(&[req("name", Shape::String), req("version", Shape::String)]);
pub const IMPLEMENTATION_2025_06: Shape =
    Shape::Object(&[req("name", Shape::String), req("version", Shape::String), opt("title", Shape::String)]);
pub const IMPLEMENTATION_2025_11: Shape = Shape::Object(&[
    req("name", Shape::String),
    req("version", Shape::String),
    opt("title", Shape::String),
    opt("description", Shape::String),
    opt(wire::WEBSITE_URL, Shape::String),
    opt("icons", Shape::ArrayOf(&ICON)),
]);

/// `ClientCapabilities`, by version.
pub const CAPABILITIES_2024: Shape = Shape::Object(&[
    opt("experimental", Shape::MapOf(&ANY_OBJECT)),
    opt("roots", Shape::Object(&[opt(wire::LIST_CHANGED, Shape::Boolean)])),
    opt("sampling", ANY_OBJECT),
]);
pub const CAPABILITIES_2025_06: Shape = Shape::Object(&[
    opt("experimental", Shape::MapOf(&ANY_OBJECT)),
    opt("roots", Shape::Object(&[opt(wire::LIST_CHANGED, Shape::Boolean)])),
    opt("sampling", ANY_OBJECT),
    opt("elicitation", ANY_OBJECT),
]);
pub const CAPABILITIES_2025_11: Shape = Shape::Object(&[
    opt("experimental", Shape::MapOf(&ANY_OBJECT)),
    opt("roots", Shape::Object(&[opt(wire::LIST_CHANGED, Shape::Boolean)])),
    opt("sampling", Shape::Object(&[opt("context", ANY_OBJECT), opt("tools", ANY_OBJECT)])),
    opt("elicitation", Shape::Object(&[opt("form", ANY_OBJECT), opt("url", ANY_OBJECT)])),
    opt(
        "tasks",
        Shape::Object(&[
            opt("list", ANY_OBJECT),
            opt("cancel", ANY_OBJECT),
            opt(
                "requests",
                Shape::Object(&[
                    opt("elicitation", Shape::Object(&[opt("create", ANY_OBJECT)])),
                    opt("sampling", Shape::Object(&[opt(wire::CREATE_MESSAGE, ANY_OBJECT)])),
                ]),
            ),
        ]),
    ),
]);
pub const CAPABILITIES_2026: Shape = Shape::Object(&[
    opt("experimental", Shape::MapOf(&ANY_OBJECT)),
    opt("extensions", Shape::MapOf(&ANY_OBJECT)),
    opt("roots", ANY_OBJECT),
    opt("sampling", Shape::Object(&[opt("context", ANY_OBJECT), opt("tools", ANY_OBJECT)])),
    opt("elicitation", Shape::Object(&[opt("form", ANY_OBJECT), opt("url", ANY_OBJECT)])),
]);

pub const LOGGING_LEVELS: &[&str] = &["alert", "critical", "debug", "emergency", "error", "info", "notice", "warning"];

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Null => "null",
        Kind::True | Kind::False => "a boolean",
        Kind::Number => "a number",
        Kind::String => "a string",
        Kind::Array => "an array",
        Kind::Object => "an object",
        Kind::Deep => "a value nested too deeply to read",
    }
}

/// Check `v` against `shape`; the error names the field by its JSON path.
pub fn check(v: Val<'_>, shape: &Shape, path: &str) -> Result<(), String> {
    let k = v.kind();
    let want = match shape {
        Shape::String if k == Kind::String => return Ok(()),
        Shape::String => "a string",
        Shape::Boolean if matches!(k, Kind::True | Kind::False) => return Ok(()),
        Shape::Boolean => "a boolean",
        Shape::StringOrInteger => {
            let integral =
                k == Kind::Number && crate::json::ExactNumber::parse(v.raw_str()).is_some_and(|n| n.is_integral());
            if k == Kind::String || integral {
                return Ok(());
            }
            "a string or an integer"
        }
        Shape::Enum(values) => {
            if let Some(s) = v.as_str() {
                if values.contains(&s) {
                    return Ok(());
                }
                return Err(format!("{path} must be one of {}, not \"{s}\"", values.join(", ")));
            }
            "a string"
        }
        Shape::Object(members) if k == Kind::Object => {
            for m in members.iter() {
                match v.get(m.name) {
                    Some(x) => check(x, &m.shape, &format!("{path}.{}", m.name))?,
                    None if m.required => return Err(format!("{path}.{} is required", m.name)),
                    None => {}
                }
            }
            return Ok(());
        }
        Shape::MapOf(inner) if k == Kind::Object => {
            for (key, x) in v.members() {
                check(x, inner, &format!("{path}.{}", key.as_str().unwrap_or("")))?;
            }
            return Ok(());
        }
        Shape::Object(_) | Shape::MapOf(_) => "an object",
        Shape::ArrayOf(inner) if k == Kind::Array => {
            for (i, x) in v.items().enumerate() {
                check(x, inner, &format!("{path}[{i}]"))?;
            }
            return Ok(());
        }
        Shape::ArrayOf(_) => "an array",
    };
    Err(format!("{path} must be {want}, not {}", kind_name(k)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Doc;

    fn chk(json: &str, shape: &Shape) -> Result<(), String> {
        let d = Doc::parse(json.as_bytes().to_vec()).unwrap();
        check(d.root(), shape, "clientInfo")
    }

    #[test]
    fn implementation_by_version() {
        assert!(chk(r#"{"name":"c","version":"1"}"#, &IMPLEMENTATION_2024).is_ok());
        assert_eq!(chk(r#"{"name":"c"}"#, &IMPLEMENTATION_2024), Err("clientInfo.version is required".into()));
        assert_eq!(
            chk(r#"{"name":3,"version":"1"}"#, &IMPLEMENTATION_2024),
            Err("clientInfo.name must be a string, not a number".into())
        );
        // `title` is unknown (so free) in 2024-11-05, a string from 2025-06-18.
        assert!(chk(r#"{"name":"c","version":"1","title":5}"#, &IMPLEMENTATION_2024).is_ok());
        assert!(chk(r#"{"name":"c","version":"1","title":5}"#, &IMPLEMENTATION_2025_06).is_err());
        assert_eq!(
            chk(r#"{"name":"c","version":"1","icons":[{"src":"x","theme":"blue"}]}"#, &IMPLEMENTATION_2025_11),
            Err("clientInfo.icons[0].theme must be one of dark, light, not \"blue\"".into())
        );
        assert!(chk(r#"[]"#, &IMPLEMENTATION_2025_11).is_err());
    }

    #[test]
    fn capabilities_by_version() {
        assert!(chk(r#"{"roots":{"listChanged":true},"custom":1}"#, &CAPABILITIES_2024).is_ok());
        assert!(chk(r#"{"roots":{"listChanged":"yes"}}"#, &CAPABILITIES_2024).is_err());
        assert!(chk(r#"{"experimental":{"x":1}}"#, &CAPABILITIES_2026).is_err());
        assert!(chk(r#"{"extensions":{"io.x/y":{}}}"#, &CAPABILITIES_2026).is_ok());
        assert!(chk(r#"{"elicitation":{"form":true}}"#, &CAPABILITIES_2025_11).is_err());
        assert!(chk(r#"{"elicitation":{"form":true}}"#, &CAPABILITIES_2025_06).is_ok());
        assert!(chk(r#""x""#, &CAPABILITIES_2026).is_err());
    }
}
