//! The payload options: `mcplite.json.null`, `mcplite.json.na`,
//! `mcplite.json.auto_unbox` and `mcplite.json.digits`, as the user set them.
//! R hands over the four values as given (`NULL` when unset: a list with
//! names `null`, `na`, `auto_unbox`, `digits`, `payload_options()` in
//! R/options.R); this is the one place that checks them, for R when a result
//! is built or the server starts, and for the serializer.

use super::{Problem, RType, RValue, VALUE};
use crate::rjson::{Digits, NaOption, NullMode, Options};

/// The option each member of the list R passes holds.
const OPTIONS: [(&str, &str); 4] = [
    ("null", "mcplite.json.null"),
    ("na", "mcplite.json.na"),
    ("auto_unbox", "mcplite.json.auto_unbox"),
    ("digits", "mcplite.json.digits"),
];

fn bad<V: RValue>(option: &str, expected: &str, at: usize, value: &V) -> Problem {
    Problem::new(
        "option",
        option,
        format!("Option `{option}` must be {expected}, not {VALUE}.\nReset it with `options({option} = NULL)`."),
        vec![at + 1],
        value,
    )
}

/// A string among `allowed`, read as R's `is_string(x) && x %in% allowed`.
fn choice<V: RValue>(v: &V, allowed: &[&str]) -> Option<String> {
    super::string1(v).filter(|s| allowed.contains(&s.as_str()))
}

/// Checks and reads the options as given; unset ones take mcplite's defaults
/// (`"null"`, unset, `TRUE`, 4 decimal places). `NULL` reads as all unset.
pub fn read<V: RValue>(given: &V) -> Result<Options, Problem> {
    let mut o = Options::default();
    if given.rtype() == RType::Null {
        return Ok(o);
    }
    for (at, (member, option)) in OPTIONS.iter().enumerate() {
        let Some(v) = super::field(given, member).filter(|v| v.rtype() != RType::Null) else { continue };
        match *member {
            "null" => {
                o.null = match choice(&v, &["null", "list"]).as_deref() {
                    Some("list") => NullMode::List,
                    Some(_) => NullMode::Null,
                    None => return Err(bad(option, "\"null\" or \"list\"", at, &v)),
                }
            }
            "na" => {
                o.na = match choice(&v, &["null", "string"]).as_deref() {
                    Some("null") => NaOption::Null,
                    Some(_) => NaOption::String,
                    None => return Err(bad(option, "\"null\", \"string\" or unset (NULL)", at, &v)),
                }
            }
            "auto_unbox" => {
                o.auto_unbox = super::is_flag(&v).ok_or_else(|| bad(option, "`TRUE` or `FALSE`", at, &v))?;
            }
            _ => {
                // jsonlite's `digits`: whole decimal places (0 to 15), `I(n)`
                // for n significant digits (1 to 15), or NA for full precision.
                let signif = super::inherits(&v, "AsIs");
                if !signif && super::single_na(&v) {
                    o.digits = Digits::Max;
                    continue;
                }
                let lower = if signif { 1.0 } else { 0.0 };
                let n = super::unclassed_number(&v)
                    .filter(|n| n.is_finite() && n.fract() == 0.0 && (lower..=15.0).contains(n))
                    .ok_or_else(|| {
                        bad(option, "a whole number from 0 to 15, `I(n)` with n from 1 to 15, or NA", at, &v)
                    })?;
                o.digits = if signif { Digits::Significant(n as i32) } else { Digits::Decimal(n as i32) };
            }
        }
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rjson::testvalue::*;

    fn given(members: Vec<(&'static str, TV)>) -> TV {
        named(members.into_iter().map(|(k, v)| (Some(k), v)).collect())
    }

    #[test]
    fn reads_the_options_as_set() {
        let o = read(&given(vec![
            ("null", s("list")),
            ("na", null()),
            ("auto_unbox", lgl(&[Some(false)])),
            ("digits", lgl(&[None])),
        ]))
        .unwrap();
        assert_eq!(o, Options { null: NullMode::List, na: NaOption::Unset, auto_unbox: false, digits: Digits::Max });
        let o = read(&given(vec![("digits", int(&[3]).class(&["AsIs"])), ("na", s("null"))])).unwrap();
        assert_eq!(o.digits, Digits::Significant(3));
        assert_eq!(o.na, NaOption::Null);
        assert_eq!(read(&given(vec![("digits", dbl(&[0.0]))])).unwrap().digits, Digits::Decimal(0));
        assert_eq!(read(&null()).unwrap(), Options::default());
        assert_eq!(read(&given(vec![])).unwrap(), Options::default());
    }

    #[test]
    fn each_bad_value_names_its_option_and_where_it_is() {
        let cases: Vec<(&str, TV, usize)> = vec![
            ("null", s("nope"), 1),
            ("null", chr(&[Some("null"), Some("list")]), 1),
            ("na", lgl(&[None]), 2),
            ("auto_unbox", lgl(&[None]), 3),
            ("auto_unbox", s("TRUE"), 3),
            ("digits", dbl(&[16.0]), 4),
            ("digits", dbl(&[-1.0]), 4),
            ("digits", dbl(&[2.5]), 4),
            ("digits", dbl(&[f64::INFINITY]), 4),
            ("digits", int(&[0]).class(&["AsIs"]), 4),
            ("digits", lgl(&[None]).class(&["AsIs"]), 4),
            ("digits", s("4"), 4),
            ("digits", int(&[1, 2]), 4),
        ];
        for (member, value, at) in cases {
            let mut members = vec![("null", null()), ("na", null()), ("auto_unbox", null()), ("digits", null())];
            members[at - 1] = (member, value);
            let p = read(&given(members)).unwrap_err();
            let option = format!("mcplite.json.{member}");
            assert_eq!((p.class, p.arg.as_str(), p.at.as_slice()), ("option", option.as_str(), &[at][..]));
            assert!(p.message.starts_with(&format!("Option `{option}` must be ")), "{}", p.message);
            assert!(p.message.ends_with(&format!(", not {VALUE}.\nReset it with `options({option} = NULL)`.")));
        }
    }
}
