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
    let target = unknown.to_ascii_lowercase();
    let target_chars = target.chars().count();
    let max_dist = (target_chars.max(3)) / 3;
    let mut best: Option<(usize, &'a str)> = None;
    let mut prefix_of: Option<&'a str> = None;
    for name in known {
        if name.eq_ignore_ascii_case(unknown) {
            return Some(name);
        }
        let cand = name.to_ascii_lowercase();
        let d = strsim::osa_distance(&target, &cand);
        if d <= max_dist && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, name));
        }
        if target_chars >= 3
            && cand.starts_with(&target)
            && prefix_of.is_none_or(|p| name.len() < p.len())
        {
            prefix_of = Some(name);
        }
    }
    best.map(|(_, n)| n).or(prefix_of)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The distance the rules are written for: optimal string alignment (a swap of adjacent
    /// characters costs 1, but no substring is edited twice: "ca" -> "abc" is 3, not
    /// Damerau-Levenshtein's 2), counted in characters.
    #[test]
    fn distances() {
        let dist = strsim::osa_distance;
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
