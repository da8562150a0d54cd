//! "Did you mean" suggestions for unknown field names.

/// The known name closest to `unknown`, if one is close enough to be worth suggesting:
///
/// 1. a name equal to it ignoring ASCII case (`UID` → `uid`);
/// 2. otherwise the name at the smallest edit distance (insertions, deletions, substitutions and
///    swaps of adjacent characters, ignoring case), if that distance is at most a third of the
///    length of `unknown` (at least 1); ties go to the earliest name;
/// 3. otherwise, for `unknown` of 3 or more characters, the shortest name it is a prefix of
///    (`bytes` → `bytes_requested`).
///
/// ```
/// use ra_filter::suggest;
/// let known = ["path", "uid", "pid", "bytes_requested", "errno"];
/// assert_eq!(suggest("pathh", known), Some("path"));
/// assert_eq!(suggest("ierr", ["errno", "uid"]), None);
/// assert_eq!(suggest("ernro", known), Some("errno"));
/// assert_eq!(suggest("bytes", known), Some("bytes_requested"));
/// assert_eq!(suggest("zzz", known), None);
/// ```
pub fn suggest<'a>(unknown: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let target: Vec<char> = unknown.chars().map(|c| c.to_ascii_lowercase()).collect();
    let max_dist = (target.len().max(3)) / 3;
    let mut best: Option<(usize, &'a str)> = None;
    let mut prefix_of: Option<&'a str> = None;
    for name in known {
        if name.eq_ignore_ascii_case(unknown) {
            return Some(name);
        }
        let cand: Vec<char> = name.chars().map(|c| c.to_ascii_lowercase()).collect();
        let d = osa_distance(&target, &cand);
        if d <= max_dist && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, name));
        }
        if target.len() >= 3
            && cand.starts_with(&target)
            && prefix_of.is_none_or(|p| name.len() < p.len())
        {
            prefix_of = Some(name);
        }
    }
    best.map(|(_, n)| n).or(prefix_of)
}

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions).
fn osa_distance(a: &[char], b: &[char]) -> usize {
    let n = b.len();
    // Three rows: i-2, i-1, i.
    let mut prev2 = vec![0usize; n + 1];
    let mut prev: Vec<usize> = (0..=n).collect();
    let mut cur = vec![0usize; n + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=n {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[n]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        osa_distance(&a, &b)
    }

    #[test]
    fn distances() {
        assert_eq!(dist("", ""), 0);
        assert_eq!(dist("abc", ""), 3);
        assert_eq!(dist("", "abc"), 3);
        assert_eq!(dist("kitten", "sitting"), 3);
        assert_eq!(dist("path", "pathh"), 1);
        assert_eq!(dist("path", "ptah"), 1);
        assert_eq!(dist("ca", "abc"), 3);
        assert_eq!(dist("日本", "日本語"), 1);
    }

    #[test]
    fn suggestions() {
        let known = ["uid", "gid", "pid", "path", "fd", "errno", "record_id", "bytes_requested"];
        assert_eq!(suggest("pathh", known), Some("path"));
        assert_eq!(suggest("PATH", known), Some("path"));
        assert_eq!(suggest("Path", known), Some("path"));
        assert_eq!(suggest("ptah", known), Some("path"));
        assert_eq!(suggest("uidd", known), Some("uid"));
        assert_eq!(suggest("xid", known), Some("uid"), "ties go to the first name");
        assert_eq!(suggest("recordid", known), Some("record_id"));
        assert_eq!(suggest("record_ids", known), Some("record_id"));
        assert_eq!(suggest("bytes", known), Some("bytes_requested"));
        assert_eq!(suggest("fdd", known), Some("fd"));
        assert_eq!(suggest("q", known), None);
        assert_eq!(suggest("timestamp", known), None);
        assert_eq!(suggest("", known), None);
        assert_eq!(suggest("path", []), None);
        let owned = ["alpha".to_string(), "beta".to_string()];
        assert_eq!(suggest("alpah", owned.iter().map(String::as_str)), Some("alpha"));
    }
}
