//! The payload options R passes (`payload_options()` in R/options.R, already
//! checked there): `null`, `na`, `auto_unbox`, `digits`, `signif`.

use super::{field_present, flag1, number1, string1, RType, RValue};
use crate::rjson::{Digits, NaOption, NullMode, Options};

/// Read the options list; missing fields take mcplite's defaults.
pub fn read<V: RValue>(opts: &V) -> Result<Options, String> {
    let mut o = Options::default();
    if opts.rtype() == RType::Null {
        return Ok(o);
    }
    if opts.rtype() != RType::List {
        return Err("JSON options must be a list".into());
    }
    if let Some(v) = field_present(opts, "null") {
        o.null = match string1(&v).as_deref() {
            Some("null") => NullMode::Null,
            Some("list") => NullMode::List,
            _ => return Err("option 'null' must be \"null\" or \"list\"".into()),
        };
    }
    if let Some(v) = field_present(opts, "na") {
        o.na = match (v.rtype(), string1(&v).as_deref()) {
            (RType::Character, None) | (RType::Logical, None) => NaOption::Unset,
            (_, Some("null")) => NaOption::Null,
            (_, Some("string")) => NaOption::String,
            _ => return Err("option 'na' must be unset, \"null\" or \"string\"".into()),
        };
    }
    if let Some(v) = field_present(opts, "auto_unbox") {
        o.auto_unbox = flag1(&v).ok_or("option 'auto_unbox' must be TRUE or FALSE")?;
    }
    let signif = field_present(opts, "signif").and_then(|v| flag1(&v)).unwrap_or(false);
    if let Some(d) = field_present(opts, "digits") {
        if d.len() != 1 || !matches!(d.rtype(), RType::Integer | RType::Double | RType::Logical) {
            return Err("option 'digits' must be a single number or NA".into());
        }
        o.digits = match number1(&d) {
            None => Digits::Max,
            Some(n) if signif => Digits::Significant(n as i32),
            Some(n) => Digits::Decimal(n as i32),
        };
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rjson::testvalue::*;

    #[test]
    fn reads_what_r_passes() {
        let o = read(&named(vec![
            (Some("null"), s("list")),
            (Some("na"), chr(&[None])),
            (Some("auto_unbox"), lgl(&[Some(false)])),
            (Some("digits"), int(&[NA_INT])),
            (Some("signif"), lgl(&[Some(false)])),
        ]))
        .unwrap();
        assert_eq!(o, Options { null: NullMode::List, na: NaOption::Unset, auto_unbox: false, digits: Digits::Max });
        let o = read(&named(vec![
            (Some("digits"), int(&[3])),
            (Some("signif"), lgl(&[Some(true)])),
            (Some("na"), s("null")),
        ]))
        .unwrap();
        assert_eq!(o.digits, Digits::Significant(3));
        assert_eq!(o.na, NaOption::Null);
        assert_eq!(read(&null()).unwrap(), Options::default());
        assert!(read(&named(vec![(Some("null"), s("nope"))])).is_err());
    }
}
