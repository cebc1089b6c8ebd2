//! The URI arithmetic `$id` and `$ref` need (RFC 3986 reference
//! resolution), on plain strings.

/// `uri` without its fragment.
pub fn strip_fragment(uri: &str) -> &str {
    split_fragment(uri).0
}

/// `uri` split at `#`: (before, fragment if any).
pub fn split_fragment(uri: &str) -> (&str, Option<&str>) {
    match uri.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (uri, None),
    }
}

fn scheme_len(uri: &str) -> Option<usize> {
    let end = uri.find(':')?;
    let s = &uri[..end];
    let mut chars = s.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))).then_some(end)
}

/// `reference` resolved against the absolute URI `base`.
pub fn resolve(base: &str, reference: &str) -> String {
    if scheme_len(reference).is_some() {
        return reference.to_string();
    }
    let base = strip_fragment(base);
    if reference.is_empty() {
        return base.to_string();
    }
    if reference.starts_with('#') {
        return format!("{base}{reference}");
    }
    let scheme_end = scheme_len(base).unwrap_or(0);
    let (scheme, rest) = base.split_at(scheme_end);
    if let Some(r) = reference.strip_prefix("//") {
        return format!("{scheme}://{r}");
    }
    // The authority, if any, then the path.
    let (authority, path) = match rest.strip_prefix("://") {
        Some(after) => match after.find('/') {
            Some(i) => (format!("://{}", &after[..i]), &after[i..]),
            None => (format!("://{after}"), ""),
        },
        None => (String::from(":"), rest.strip_prefix(':').unwrap_or(rest)),
    };
    let path = path.split('?').next().unwrap_or("");
    let (reference, fragment) = match reference.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (reference, None),
    };
    let merged = if reference.starts_with('/') {
        reference.to_string()
    } else {
        match path.rfind('/') {
            Some(i) => format!("{}{reference}", &path[..=i]),
            None if authority.starts_with("://") => format!("/{reference}"),
            None => reference.to_string(),
        }
    };
    let mut out = format!("{scheme}{authority}{}", remove_dots(&merged));
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// RFC 3986 5.2.4, for paths made of segments.
fn remove_dots(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    let parts: Vec<&str> = path.split('/').collect();
    for (i, s) in parts.iter().enumerate() {
        let last = i == parts.len() - 1;
        match *s {
            "." => {
                if last {
                    segments.push("");
                }
            }
            ".." => {
                if segments.len() > 1 {
                    segments.pop();
                }
                if last {
                    segments.push("");
                }
            }
            s => segments.push(s),
        }
    }
    segments.join("/")
}

/// `%XX` escapes of a fragment decoded (JSON pointers in URIs).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_resolve_like_rfc_3986() {
        let b = "https://json-schema.org/draft/2020-12/schema";
        assert_eq!(resolve(b, "meta/core"), "https://json-schema.org/draft/2020-12/meta/core");
        assert_eq!(resolve(b, "#meta"), "https://json-schema.org/draft/2020-12/schema#meta");
        assert_eq!(resolve(&format!("{b}#x"), "#/a"), "https://json-schema.org/draft/2020-12/schema#/a");
        assert_eq!(resolve(b, "/x/y.json#/a"), "https://json-schema.org/x/y.json#/a");
        assert_eq!(resolve(b, "../other"), "https://json-schema.org/draft/other");
        assert_eq!(resolve(b, "urn:x:y"), "urn:x:y");
        assert_eq!(resolve(b, "//example.com/s"), "https://example.com/s");
        assert_eq!(resolve("json-schema:///", "item.json"), "json-schema:///item.json");
        assert_eq!(resolve("json-schema:///", "#/$defs/a"), "json-schema:///#/$defs/a");
        assert_eq!(resolve("http://x.org/a/b.json", "c.json"), "http://x.org/a/c.json");
        assert_eq!(resolve("http://x.org", "c.json"), "http://x.org/c.json");
        assert_eq!(percent_decode("/%24defs/a%25b/%zz/%4"), "/$defs/a%b/%zz/%4");
    }
}
