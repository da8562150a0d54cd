//! `fs mount --tracer SPEC`: one more tracer, as `key=value` pairs separated by commas.
//!
//! Keys: `out=FILE` (required: its trace file), `name=NAME` (default: its number, the first
//! tracer being 1), `filter=EXPR` (the `--filter` language), `data=full|hash|none` (or, quoted,
//! `data='write=LEVEL,read=LEVEL'`) and
//! `driver=stream|aggregate:SECS|stream+aggregate:SECS`. A value that holds a comma is
//! quoted in single quotes: `filter='op in {read, write}'`; inside quotes `''` is one `'`.

use std::path::PathBuf;
use std::time::Duration;

use crate::tracer::{parse_filter, DataMode};
use crate::TracerConfig;

/// The keys a spec takes.
pub const KEYS: &str = "out, name, filter, data, driver";

/// Split a spec into its `(key, value)` pairs, unquoting quoted values.
fn pairs(spec: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut it = spec.chars().peekable();
    loop {
        let mut key = String::new();
        let mut eq = false;
        for c in it.by_ref() {
            if c == '=' {
                eq = true;
                break;
            }
            if c == ',' {
                break;
            }
            key.push(c);
        }
        if !eq {
            return Err(format!("`{key}` has no value (expected KEY=VALUE; keys: {KEYS})"));
        }
        let key = key.trim().to_string();
        if key.is_empty() {
            return Err(format!("an empty key (expected KEY=VALUE,...; keys: {KEYS})"));
        }
        let mut val = String::new();
        if it.peek() == Some(&'\'') {
            it.next();
            loop {
                match it.next() {
                    None => return Err(format!("`{key}`: the quote ' is not closed")),
                    Some('\'') if it.peek() == Some(&'\'') => {
                        it.next();
                        val.push('\'');
                    }
                    Some('\'') => break,
                    Some(c) => val.push(c),
                }
            }
            match it.next() {
                None | Some(',') => {}
                Some(c) => {
                    return Err(format!("`{key}`: `{c}` after the closing quote (expected ,)"))
                }
            }
        } else {
            while let Some(c) = it.next_if(|&c| c != ',') {
                val.push(c);
            }
            it.next();
        }
        out.push((key, val));
        if it.peek().is_none() {
            return Ok(out);
        }
    }
}

/// Parse one `--tracer` spec; `number` names it when it has no `name=`.
pub fn parse(spec: &str, number: usize) -> Result<TracerConfig, String> {
    let mut t = TracerConfig {
        name: number.to_string(),
        output: PathBuf::new(),
        data: DataMode::FULL,
        filter: None,
        stream: true,
        aggregate: None,
    };
    let mut seen: Vec<String> = Vec::new();
    for (k, v) in pairs(spec)? {
        if seen.contains(&k) {
            return Err(format!("`{k}` given twice"));
        }
        seen.push(k.clone());
        match k.as_str() {
            "out" if v.is_empty() => return Err("`out=` needs a file".into()),
            "out" if v == "-" || v.contains("://") => {
                return Err(format!(
                    "`out={v}`: another tracer writes a file (not - or a collector)"
                ))
            }
            "out" => t.output = PathBuf::from(v),
            "name" if v.is_empty() || v.chars().any(char::is_whitespace) => {
                return Err(format!("`name={v}`: a name is a word (no spaces)"))
            }
            "name" => t.name = v,
            "filter" => t.filter = Some((v.clone(), parse_filter(&v)?)),
            "data" => {
                t.data = DataMode::parse(&v).map_err(|e| {
                    format!(
                    "`data={v}`: {e}; a per-direction mode is quoted: data='write=full,read=hash'"
                )
                })?
            }
            "driver" => {
                let secs = |s: &str| -> Result<Duration, String> {
                    match s.parse::<f64>() {
                        Ok(x) if (0.05..=86400.0).contains(&x) => Ok(Duration::from_secs_f64(x)),
                        _ => Err(format!(
                            "`driver={v}`: the interval must be a number of seconds from 0.05 to \
                             86400"
                        )),
                    }
                };
                (t.stream, t.aggregate) = match v.split_once(':') {
                    None if v == "stream" => (true, None),
                    Some(("aggregate", s)) => (false, Some(secs(s)?)),
                    Some(("stream+aggregate", s)) => (true, Some(secs(s)?)),
                    _ => {
                        return Err(format!(
                            "`driver={v}`: expected stream, aggregate:SECS or \
                             stream+aggregate:SECS"
                        ))
                    }
                };
            }
            _ => return Err(format!("unknown key `{k}`; keys: {KEYS}")),
        }
    }
    if t.output.as_os_str().is_empty() {
        return Err("no `out=FILE`: each tracer writes a trace file of its own".into());
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        let t =
            parse("out=w.ds,filter='op in {read, write} && path ~ \"*.db\"',data=hash", 2).unwrap();
        assert_eq!(t.output, PathBuf::from("w.ds"));
        assert_eq!(t.name, "2");
        assert_eq!(t.filter.unwrap().0, "op in {read, write} && path ~ \"*.db\"");
        assert_eq!(t.data, DataMode::HASH);
        assert!(t.stream && t.aggregate.is_none());
        let t = parse("name=agg,out=a.ds,driver=aggregate:0.5", 3).unwrap();
        assert_eq!((t.name.as_str(), t.stream), ("agg", false));
        assert_eq!(t.aggregate, Some(Duration::from_millis(500)));
        let t = parse("out=a.ds,filter='comm == ''ab'''", 3).unwrap();
        assert_eq!(t.filter.unwrap().0, "comm == 'ab'");
        let t = parse("out=a.ds,data='write=full,read=none'", 3).unwrap();
        assert_eq!(t.data, DataMode::parse("write=full,read=none").unwrap());
        let t = parse("out=a.ds,driver=stream+aggregate:2", 3).unwrap();
        assert!(t.stream && t.aggregate == Some(Duration::from_secs(2)));
    }

    #[test]
    fn bad_specs() {
        for (spec, want) in [
            ("data=hash", "no `out=FILE`"),
            ("out=a,colour=red", "unknown key `colour`"),
            ("out=a,data=most", "neither a level"),
            ("out=a,driver=aggregate", "expected stream, aggregate:SECS"),
            ("out=a,driver=aggregate:0", "interval must be"),
            ("out=a,filter='op == read", "not closed"),
            ("out=a,filter='op == read'x", "after the closing quote"),
            ("out=a,filter=nosuch == 1", "unknown field `nosuch`"),
            ("out=a,out=b", "given twice"),
            ("out=-", "writes a file"),
            ("out", "has no value"),
        ] {
            let e = parse(spec, 2).err().unwrap_or_else(|| panic!("{spec} accepted"));
            assert!(e.contains(want), "{spec}: {e}");
        }
    }
}
