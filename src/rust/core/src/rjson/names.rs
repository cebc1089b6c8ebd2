//! Object keys as jsonlite builds them: `cleannames()` then `make.unique()`.

use std::collections::HashSet;

/// jsonlite's `cleannames()`: missing or empty names become their 1-based
/// position, then R's `make.unique(sep = ".")` resolves duplicates.
/// `None` marks an NA name.
pub fn clean_names(names: Vec<Option<Vec<u8>>>) -> Vec<Vec<u8>> {
    let filled: Vec<Vec<u8>> = names
        .into_iter()
        .enumerate()
        .map(|(i, n)| match n {
            Some(s) if !s.is_empty() => s,
            _ => (i + 1).to_string().into_bytes(),
        })
        .collect();
    make_unique(filled)
}

/// Port of R's `do_makeunique`: later duplicates get `.1`, `.2`, ... with the
/// first counter not already taken by any name, original or generated.
pub fn make_unique(names: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let n = names.len();
    if n < 2 {
        return names;
    }
    // Fast path: no duplicates at all (the common case).
    {
        let mut seen: HashSet<&[u8]> = HashSet::with_capacity(n);
        if names.iter().all(|s| seen.insert(s.as_slice())) {
            return names;
        }
    }
    let mut first: std::collections::HashMap<Vec<u8>, usize> = std::collections::HashMap::new();
    let mut dup_of: Vec<Option<usize>> = vec![None; n];
    for (i, s) in names.iter().enumerate() {
        match first.get(s) {
            Some(&j) => dup_of[i] = Some(j),
            None => {
                first.insert(s.clone(), i);
            }
        }
    }
    let mut used: HashSet<Vec<u8>> = names.iter().cloned().collect();
    let mut cnts = vec![1usize; n];
    let mut ans = names.clone();
    let mut last = Vec::new();
    for i in 1..n {
        let Some(dp) = dup_of[i] else { continue };
        let base = &names[i];
        let mut cnt = cnts[dp];
        while cnt < n {
            let mut cand = base.clone();
            cand.push(b'.');
            cand.extend_from_slice(cnt.to_string().as_bytes());
            let free = !used.contains(&cand);
            last = cand;
            if free {
                break;
            }
            cnt += 1;
        }
        used.insert(last.clone());
        ans[i] = last.clone();
        cnts[dp] = cnt + 1;
    }
    ans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cn(v: &[Option<&str>]) -> Vec<String> {
        clean_names(v.iter().map(|s| s.map(|t| t.as_bytes().to_vec())).collect())
            .into_iter()
            .map(|b| String::from_utf8(b).unwrap())
            .collect()
    }

    #[test]
    fn fills_and_deduplicates_like_r() {
        assert_eq!(cn(&[Some("a"), None, None]), ["a", "2", "3"]);
        assert_eq!(cn(&[Some("a"), Some("a"), None]), ["a", "a.1", "3"]);
        assert_eq!(cn(&[Some("a"), Some(""), Some("a.1"), Some("a")]), ["a", "2", "a.1", "a.2"]);
        assert_eq!(cn(&[Some("x"), Some("x"), Some("x"), Some("x.1")]), ["x", "x.2", "x.3", "x.1"]);
        assert_eq!(cn(&[Some("2"), None]), ["2", "2.1"]);
        assert_eq!(cn(&[]), Vec::<String>::new());
    }
}
