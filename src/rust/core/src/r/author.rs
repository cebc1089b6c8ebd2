//! The rules for what a tool author builds, for R's constructors: each rule
//! lives with the code that reads the object when the server starts (the
//! payload options in [`super::options`], tool annotations in
//! [`super::spec`] with the tool-name rule and unique names, content
//! annotations in [`super::result`]); this module only
//! routes R's `rust_check(kind, x, arg)` to them, so `tool()`,
//! `tool_result()` and `mcp_server()` refuse at definition time exactly what
//! the server would refuse later.

use super::spec::{tool_name, unique_tool_names, Unknown};
use super::{RValue, Verdict};

/// Runs the rule `kind` on `x`, which R names `arg` in messages.
pub fn check<V: RValue>(kind: &str, x: &V, arg: &str) -> Result<Verdict, String> {
    Ok(match kind {
        "payload_options" => Verdict::of(super::options::read(x).map(|_| ())),
        "tool_name" => Verdict::of(tool_name(x, arg).map(|_| ())),
        "tool_names" => Verdict::of(unique_tool_names(x, arg)),
        "tool_annotations" => super::spec::check_annotations(x, arg, Unknown::Keep),
        "tool_annotations_known" => super::spec::check_annotations(x, arg, Unknown::Drop),
        "content_annotations" => super::result::check_content_annotations(x, arg),
        _ => return Err(format!("no rule for {kind:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::r::{SCALAR, VALUE};
    use crate::rjson::testvalue::*;

    #[test]
    fn tool_names_follow_the_specification() {
        for ok in ["a", "get_weather", "ns.tool-2", &"x".repeat(128)] {
            assert_eq!(tool_name(&s(ok), "name").unwrap(), ok);
        }
        for bad in ["", "has space", "caf\u{e9}", "a/b", &"x".repeat(129)] {
            let p = tool_name(&s(bad), "name").unwrap_err();
            assert_eq!((p.class, p.arg.as_str()), ("argument", "name"));
            assert!(p.message.ends_with(&format!("not {SCALAR}.")), "{}", p.message);
        }
        for not_a_string in [chr(&[None]), chr(&[Some("a"), Some("b")]), int(&[1]), null()] {
            let p = tool_name(&not_a_string, "name").unwrap_err();
            assert_eq!(p.message, format!("`name` must be a single string, not {VALUE}."));
        }
    }

    #[test]
    fn repeated_tool_names_say_which_tools_share_them() {
        let v = check("tool_names", &chr(&[Some("a"), Some("b"), Some("a"), Some("b"), Some("c")]), "tools").unwrap();
        let p = v.problem.unwrap();
        assert_eq!(p.class, "tools");
        assert_eq!(p.message, "Tool names must be unique; `a` is used by tools 1, 3; `b` is used by tools 2, 4.");
        assert_eq!(check("tool_names", &chr(&[Some("a"), Some("b")]), "tools").unwrap(), Verdict::default());
        assert!(check("no such rule", &null(), "x").is_err());
    }
}
