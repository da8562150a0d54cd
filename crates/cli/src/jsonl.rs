//! `dump --format jsonl` of a trace's calls: each call's line written straight into a byte
//! buffer, buffers as hex or escaped strings in place, with no `serde_json::Value` in between.
//!
//! The line is byte for byte what serde_json writes (compact) of [`crate::dump::event_json_fds`]
//! with the descriptors' paths (the reference; a property test holds the two together): keys
//! in byte order as serde_json's map keeps them (the last of two equal keys wins), strings
//! escaped as serde_json escapes them, bytes by [`ra_fsstate::JsonBytes`]'s rule (valid UTF-8
//! without a NUL is a string, anything else `{"hex": …}`; C strings without their NUL).
//!
//! Why: on a trace of 4 KiB buffers (bench/analysis) each line is ~8 KiB of hex, and building
//! it as a `String` inside a `Value`, then scanning and copying it into the line, was half of
//! `dump --format jsonl`'s time.

use ra_syscalls::ArgKind;
use ra_trace::fileio::EventFds;
use ra_trace::{ArgValue, Event, ExtraValue};

/// Writes calls as JSON lines; keeps its scratch space between calls.
#[derive(Default)]
pub(crate) struct JsonLines {
    /// Argument or extra-field indices in key order.
    order: Vec<usize>,
}

impl JsonLines {
    /// Append `ev`'s JSON object (no newline) to `out`. `fds`: the descriptors' paths when
    /// they are decoded (`fd_path`, `fd_path2`, `ret_fd_path`).
    pub(crate) fn event(&mut self, out: &mut Vec<u8>, ev: &Event, fds: Option<&EventFds>) {
        out.extend_from_slice(b"{\"args\":{");
        if let Some(def) = ev.def {
            let n = def.args.len().min(ev.args.len());
            key_order(&mut self.order, n, |i| def.args[i].name.as_bytes());
            for (k, &i) in self.order.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                push_str(out, def.args[i].name.as_bytes());
                out.push(b':');
                push_arg(out, def.args[i].kind, &ev.args[i]);
            }
        }
        out.extend_from_slice(b"},\"buffer_not_captured\":");
        out.extend_from_slice(if ev.buffer_not_captured { b"true" } else { b"false" });
        out.extend_from_slice(b",\"call\":");
        push_str(out, ev.name.as_bytes());
        out.extend_from_slice(b",\"errno\":");
        push_int(out, ev.errno);
        out.extend_from_slice(b",\"errno_name\":");
        match ev.errno.and_then(ra_trace::format::errno_name) {
            Some(n) => push_str(out, n.as_bytes()),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"extra\":{");
        key_order(&mut self.order, ev.extra.len(), |i| ev.extra[i].0.as_bytes());
        for (k, &i) in self.order.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            let (name, v) = &ev.extra[i];
            push_str(out, name.as_bytes());
            out.push(b':');
            push_extra(out, v);
        }
        out.push(b'}');
        if let Some(fds) = fds {
            let [p1, p2] = fds.first_two();
            out.extend_from_slice(b",\"fd_path\":");
            push_opt_bytes(out, p1.map(|p| &p[..]));
            out.extend_from_slice(b",\"fd_path2\":");
            push_opt_bytes(out, p2.map(|p| &p[..]));
        }
        out.extend_from_slice(b",\"gid\":");
        push_int(out, ev.gid);
        out.extend_from_slice(b",\"pid\":");
        push_int(out, ev.pid);
        out.extend_from_slice(b",\"ppid\":");
        push_int(out, ev.ppid);
        if let Some(fds) = fds {
            out.extend_from_slice(b",\"ret_fd_path\":");
            push_opt_bytes(out, fds.ret.as_deref());
        }
        out.extend_from_slice(b",\"return_value\":");
        push_int(out, ev.ret);
        out.extend_from_slice(b",\"syscall\":");
        match ev.def {
            Some(d) => push_str(out, d.name.as_bytes()),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"tid\":");
        push_int(out, ev.tid);
        out.extend_from_slice(b",\"time_called\":");
        push_int(out, ev.time_called);
        out.extend_from_slice(b",\"time_returned\":");
        push_int(out, ev.time_returned);
        out.extend_from_slice(b",\"uid\":");
        push_int(out, ev.uid);
        out.extend_from_slice(b",\"unique_id\":");
        push_int(out, Some(ev.unique_id));
        out.push(b'}');
    }
}

/// `order` = the indices `0..n` in the order serde_json's map gives their keys: by key bytes,
/// one index per key, the last index of equal keys (a later insert replaces the value).
fn key_order<'a>(order: &mut Vec<usize>, n: usize, key: impl Fn(usize) -> &'a [u8]) {
    order.clear();
    order.extend(0..n);
    order.sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(b.cmp(&a)));
    order.dedup_by(|later, kept| key(*later) == key(*kept));
}

fn push_arg(out: &mut Vec<u8>, kind: ArgKind, v: &ArgValue) {
    match v {
        ArgValue::Absent => out.extend_from_slice(b"null"),
        ArgValue::NotCaptured => out.extend_from_slice(b"{\"not_captured\":true}"),
        ArgValue::Hashed { len, blake3 } => {
            out.extend_from_slice(b"{\"blake3\":\"");
            ra_hex::encode_into(out, blake3);
            out.extend_from_slice(b"\",\"len\":");
            push_int(out, Some(*len));
            out.push(b'}');
        }
        ArgValue::Int(i) => push_int(out, Some(*i)),
        ArgValue::Data(d) if kind.is_c_string() => {
            push_bytes(out, d.strip_suffix(&[0]).unwrap_or(d))
        }
        ArgValue::Data(d) => push_bytes(out, d),
        ArgValue::Iov(v) => {
            out.push(b'[');
            for (k, iov) in v.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(b"{\"data\":");
                push_opt_bytes(out, iov.data.as_deref());
                out.extend_from_slice(b",\"len\":");
                push_int(out, Some(iov.requested));
                out.push(b'}');
            }
            out.push(b']');
        }
        ArgValue::Strings(s) => {
            out.push(b'[');
            for (k, b) in s.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                push_bytes(out, b);
            }
            out.push(b']');
        }
    }
}

fn push_extra(out: &mut Vec<u8>, v: &ExtraValue) {
    match v {
        ExtraValue::Null => out.extend_from_slice(b"null"),
        ExtraValue::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        ExtraValue::Int(i) => push_int(out, Some(*i)),
        // serde_json's own float form (and `null` for NaN and the infinities); rare.
        ExtraValue::DoubleBits(b) => {
            let v = serde_json::Value::from(f64::from_bits(*b));
            // Writing a number or null into memory cannot fail.
            serde_json::to_writer(&mut *out, &v).expect("a JSON number writes into memory");
        }
        ExtraValue::Bytes(b) => push_bytes(out, b),
    }
}

/// An integer, or `null`.
fn push_int<I: itoa::Integer>(out: &mut Vec<u8>, i: Option<I>) {
    match i {
        Some(i) => out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes()),
        None => out.extend_from_slice(b"null"),
    }
}

fn push_opt_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        Some(b) => push_bytes(out, b),
        None => out.extend_from_slice(b"null"),
    }
}

/// Bytes by [`ra_fsstate::JsonBytes`]'s rule: UTF-8 without a NUL as a string, anything else
/// as `{"hex":"…"}`.
fn push_bytes(out: &mut Vec<u8>, b: &[u8]) {
    // The NUL test first (JsonBytes::new's order): it decides most binary buffers at once.
    if !b.contains(&0) {
        if let Ok(s) = std::str::from_utf8(b) {
            return push_str(out, s.as_bytes());
        }
    }
    out.extend_from_slice(b"{\"hex\":\"");
    ra_hex::encode_into(out, b);
    out.extend_from_slice(b"\"}");
}

/// What serde_json writes after a backslash for each byte (0: the byte as it is; `u`: `\u00XX`).
const ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

/// Whether a word's eight bytes hold one that needs an escape (below 0x20, `"`, `\`). The
/// classic byte tests (`(v - 0x01…) & !v & 0x80…` is non-zero exactly when a byte of `v` is
/// zero, `(x - 0x20…) & !x & 0x80…` when one is below 0x20) are exact for "any byte".
fn word_needs_escape(x: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let control = x.wrapping_sub(0x20 * ONES) & !x & HIGHS;
    (control | zero(x ^ (u64::from(b'"') * ONES)) | zero(x ^ (u64::from(b'\\') * ONES))) != 0
}

/// A JSON string of `s` (UTF-8) as serde_json writes it: runs that need no escape copied
/// whole (found eight bytes at a time), `\"`, `\\`, `\b\t\n\f\r`, other controls `\u00xx`.
fn push_str(out: &mut Vec<u8>, s: &[u8]) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    while i < s.len() {
        if i + 8 <= s.len() {
            let x = u64::from_le_bytes(s[i..i + 8].try_into().expect("eight bytes"));
            if !word_needs_escape(x) {
                i += 8;
                continue;
            }
        }
        let end = (i + 8).min(s.len());
        while i < end {
            let c = s[i];
            let e = ESCAPE[usize::from(c)];
            if e != 0 {
                out.extend_from_slice(&s[start..i]);
                out.push(b'\\');
                out.push(e);
                if e == b'u' {
                    out.extend_from_slice(b"00");
                    ra_hex::encode_into(out, &[c]);
                }
                start = i + 1;
            }
            i += 1;
        }
    }
    out.extend_from_slice(&s[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;
    use ra_trace::{Bytes, IovValue};

    use super::*;

    /// The reference: what `dump --format jsonl` wrote before this writer (serde_json).
    fn reference(ev: &Event, fds: Option<&EventFds>) -> Vec<u8> {
        let v = crate::dump::event_json_fds(ev, fds, true);
        serde_json::to_vec(&v).unwrap()
    }

    fn mine(ev: &Event, fds: Option<&EventFds>) -> Vec<u8> {
        let mut out = b"prefix".to_vec();
        JsonLines::default().event(&mut out, ev, fds);
        out.split_off(6)
    }

    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => prop::collection::vec(any::<u8>(), 0..40),
            4 => any::<String>().prop_map(String::into_bytes),
            // Text with the characters that need escapes, and C strings' NUL at the end.
            3 => "[a-z/\"\\\\\t\n\r\u{1}\u{7f}\u{8}\u{c}é☕ ]{0,40}\\x00?".prop_map(String::into_bytes),
            1 => (0usize..5000).prop_map(|n| vec![0; n]),
            1 => (0usize..300, any::<u8>()).prop_map(|(n, b)| vec![b'a' + b % 26; n]),
        ]
    }

    fn arg_value() -> impl Strategy<Value = ArgValue> {
        prop_oneof![
            Just(ArgValue::Absent),
            Just(ArgValue::NotCaptured),
            any::<i64>().prop_map(ArgValue::Int),
            bytes().prop_map(|b| ArgValue::Data(Bytes::from(b))),
            prop::collection::vec((any::<u64>(), prop::option::of(bytes())), 0..4).prop_map(|v| {
                ArgValue::Iov(
                    v.into_iter()
                        .map(|(requested, d)| IovValue { requested, data: d.map(Bytes::from) })
                        .collect(),
                )
            }),
            prop::collection::vec(bytes(), 0..4).prop_map(ArgValue::Strings),
            (any::<u64>(), any::<[u8; 32]>())
                .prop_map(|(len, blake3)| ArgValue::Hashed { len, blake3 }),
        ]
    }

    fn extra() -> impl Strategy<Value = (String, ExtraValue)> {
        let key = prop_oneof![
            Just("full_pathname".to_string()),
            Just("a".to_string()),
            Just("b".to_string()),
            any::<String>()
        ];
        let value = prop_oneof![
            Just(ExtraValue::Null),
            any::<bool>().prop_map(ExtraValue::Bool),
            any::<i64>().prop_map(ExtraValue::Int),
            any::<u64>().prop_map(ExtraValue::DoubleBits),
            any::<f64>().prop_map(|f| ExtraValue::DoubleBits(f.to_bits())),
            bytes().prop_map(ExtraValue::Bytes),
        ];
        (key, value)
    }

    fn path() -> impl Strategy<Value = Option<Arc<[u8]>>> {
        prop::option::of(bytes().prop_map(Arc::from))
    }

    fn fds() -> impl Strategy<Value = Option<EventFds>> {
        prop::option::of((prop::array::uniform6(path()), path()).prop_map(|(args, ret)| EventFds {
            args,
            ret,
            ..EventFds::default()
        }))
    }

    prop_compose! {
        fn event()(
            def in prop::option::of(0..ra_syscalls::REGISTRY.len()),
            name in "[a-z_0-9\"\\\\\n]{0,12}",
            unique_id in any::<u64>(),
            times in any::<(Option<i64>, Option<i64>)>(),
            ids in any::<(Option<i32>, Option<i32>, Option<i32>, Option<i32>, Option<i32>)>(),
            ret in any::<Option<i64>>(),
            errno in prop_oneof![Just(None), (0..140i32).prop_map(Some), any::<i32>().prop_map(Some)],
            buffer_not_captured in any::<bool>(),
            args in prop::collection::vec(arg_value(), 0..8),
            extra in prop::collection::vec(extra(), 0..5),
        ) -> Event {
            Event {
                def: def.map(|i| &ra_syscalls::REGISTRY[i]),
                name,
                unique_id,
                time_called: times.0,
                time_returned: times.1,
                time_recorded: None,
                pid: ids.0,
                tid: ids.1,
                ppid: ids.2,
                uid: ids.3,
                gid: ids.4,
                sid: None,
                pgid: None,
                ret,
                errno,
                buffer_not_captured,
                args,
                extra,
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// Any call, with or without descriptor paths: the line serde_json writes of the
        /// reference value.
        #[test]
        fn the_line_is_serde_json_s(ev in event(), fds in fds()) {
            let want = reference(&ev, fds.as_ref());
            let got = mine(&ev, fds.as_ref());
            prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
            prop_assert_eq!(got, want);
        }

        #[test]
        fn strings_are_escaped_as_serde_json_escapes(s in any::<String>(), pre in "[\"\\\\\n\u{0}a]{0,9}") {
            let s = pre + &s;
            let mut got = Vec::new();
            push_str(&mut got, s.as_bytes());
            prop_assert_eq!(got, serde_json::to_vec(&s).unwrap());
        }
    }

    /// Every byte value in every lane of the word: the escape test.
    #[test]
    fn every_byte_in_every_lane() {
        for b in 0..=255u8 {
            for lane in 0..16 {
                let mut w = [b'a'; 16];
                w[lane] = b;
                let needs = b < 0x20 || b == b'"' || b == b'\\';
                let word = u64::from_le_bytes(w[lane / 8 * 8..][..8].try_into().unwrap());
                assert_eq!(word_needs_escape(word), needs, "{b:#x} lane {lane}");
            }
        }
    }
}
