//! `ds2txt`-compatible text output.
//!
//! Formatting rules (those of DataSeries' `ds2txt`, checked against `complex.txt`): doubles
//! `%.9g`, bools `T`/`F`, bytes as unsigned decimals, nulls `null`, variable32 and fixedwidth
//! values as their raw bytes, fields separated by one space.
//!
//! `write_ds2txt` ignores the per-field `print_*` attributes (`print_format`,
//! `print_divisor`, `print_true`/`print_false`) that the C++ `ds2txt` can apply; values are
//! always printed with the rules above.
//!
//! Two helpers reproduce the column formats of DataSeries' `ds2txt.test.ref` (the C++ test got
//! them from ds2txt's output options). These are our documented formatting choices for such
//! columns: [`format_tfrac_as_sec_nsec`] prints an int64 time in 2^-32 s units ("Tfrac") as
//! `sec.nsec` with 9 digits (nanoseconds rounded to the nearest), and [`format_ipv4`] prints an
//! int32 IPv4 address dotted, most significant byte first.

use std::io::Write;

use crate::error::Error;
use crate::types::{ExtentType, FieldDesc};
use crate::{DsReader, Result, Value};

/// Options for [`write_ds2txt`].
#[derive(Clone, Debug, Default)]
pub struct Ds2TxtOptions {
    /// Also print the ExtentIndex extent (default: skipped, like `ds2txt --skip-index`).
    pub include_index: bool,
    /// Print only extents of this type.
    pub type_filter: Option<String>,
}

/// C `printf("%.{prec}g", x)`.
pub fn format_g(x: f64, prec: usize) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    let p = prec.max(1);
    if x == 0.0 {
        return if x.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    let sci = format!("{:.*e}", p - 1, x);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let mant = strip_zeros(mant);
        format!("{mant}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Formats a value the way `ds2txt` prints it (variable32 bytes as lossy UTF-8).
pub fn format_value(v: &Value<'_>, f: &FieldDesc) -> String {
    let mut out = Vec::new();
    let _ = write_value(&mut out, v, f);
    String::from_utf8_lossy(&out).into_owned()
}

/// Escape bytes as a C string literal body (strace style: printable ASCII as is, `\n`, `\t`,
/// `\r`, `\"`, `\\`, others as `\xHH`).
pub fn escape_bytes(out: &mut String, b: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let plain = |c: u8| (0x20..=0x7e).contains(&c) && c != b'"' && c != b'\\';
    // SAFETY: only ASCII bytes are appended (printable ASCII copied, escapes spelt in ASCII),
    // so the string stays UTF-8.
    let out = unsafe { out.as_mut_vec() };
    out.reserve(b.len());
    let mut rest = b;
    while !rest.is_empty() {
        // A run of bytes written as they are, in one copy.
        let n = rest.iter().position(|&c| !plain(c)).unwrap_or(rest.len());
        out.extend_from_slice(&rest[..n]);
        let Some((&c, tail)) = rest[n..].split_first() else { break };
        rest = tail;
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'x',
                HEX[usize::from(c >> 4)],
                HEX[usize::from(c & 15)],
            ]),
        }
    }
}

/// Writes a value the way `ds2txt` prints it (variable32 bytes written raw).
pub fn write_value(out: &mut dyn Write, v: &Value<'_>, _f: &FieldDesc) -> std::io::Result<()> {
    match *v {
        Value::Null => out.write_all(b"null"),
        Value::Bool(b) => out.write_all(if b { b"T" } else { b"F" }),
        Value::Byte(b) => write!(out, "{b}"),
        Value::Int32(i) => write!(out, "{i}"),
        Value::Int64(i) => write!(out, "{i}"),
        Value::Double(d) => out.write_all(format_g(d, 9).as_bytes()),
        Value::Bytes(b) => out.write_all(b),
    }
}

/// An int64 time in 2^-32 s units ("Tfrac") as `seconds.nanoseconds` with 9 digits
/// (nanoseconds rounded to the nearest, carrying into the seconds).
pub fn format_tfrac_as_sec_nsec(v: i64) -> String {
    let mut sec = v >> 32;
    let frac = (v as u64) & 0xffff_ffff;
    let mut nsec = (frac * 1_000_000_000 + (1 << 31)) >> 32;
    if nsec == 1_000_000_000 {
        sec += 1;
        nsec = 0;
    }
    format!("{sec}.{nsec:09}")
}

/// An int32 IPv4 address (host order, as DataSeries NFS traces store it) in dotted form.
pub fn format_ipv4(v: i32) -> String {
    let u = v as u32;
    format!("{}.{}.{}.{}", u >> 24, (u >> 16) & 0xff, (u >> 8) & 0xff, u & 0xff)
}

fn io(e: std::io::Error) -> Error {
    Error::io("writing ds2txt output", e)
}

fn write_type_section(r: &DsReader, out: &mut dyn Write) -> Result<()> {
    let mut all: Vec<&ExtentType> = r.types().iter().map(|t| &**t).collect();
    let builtin = [crate::types::XMLTYPE_NAME, crate::types::INDEX_NAME];
    for name in builtin {
        if let Some(t) = r.type_by_name(name) {
            if !all.iter().any(|u| u.name() == name) {
                all.push(t);
            }
        }
    }
    all.sort_by(|a, b| a.name().cmp(b.name()));
    out.write_all(b"# Extent Types ...\n").map_err(io)?;
    for t in all {
        out.write_all(t.xml().as_bytes()).map_err(io)?;
        out.write_all(b"\n").map_err(io)?;
    }
    Ok(())
}

/// Writes one extent as `ds2txt` does: the `# Extent` line, the field names, one line per record.
pub fn write_extent(e: &crate::Extent, out: &mut dyn Write) -> std::io::Result<()> {
    let ty = e.extent_type();
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    writeln!(buf, "# Extent, type='{}'", ty.name())?;
    let names: Vec<&str> = ty.fields().iter().map(|f| f.name.as_str()).collect();
    writeln!(buf, "{}", names.join(" "))?;
    for r in 0..e.len() {
        for (i, f) in ty.fields().iter().enumerate() {
            if i > 0 {
                buf.push(b' ');
            }
            write_value(&mut buf, &e.value(r, i), f)?;
        }
        buf.push(b'\n');
        if buf.len() >= 60 * 1024 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)
}

/// Reproduces `ds2txt --skip-index`: the `# Extent Types ...` section (the XML of every type,
/// built-ins included, sorted by name), then every extent in file order.
pub fn write_ds2txt(r: &DsReader, out: &mut dyn Write, opts: &Ds2TxtOptions) -> Result<()> {
    write_type_section(r, out)?;
    let stream = match &opts.type_filter {
        Some(t) => r.extents_of(t),
        None => r.extents(),
    };
    for e in stream {
        write_extent(&e?, out).map_err(io)?;
    }
    if opts.include_index && opts.type_filter.is_none() {
        if let crate::TrailerStatus::Valid { index_offset } = r.trailer_status() {
            let e = r.read_extent_at(index_offset)?;
            write_extent(&e, out).map_err(io)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte, alone and in runs, escapes as strace writes it (the one-byte-at-a-time
    /// definition the run-copying version replaced).
    #[test]
    fn escape_bytes_is_straces() {
        fn reference(b: &[u8]) -> String {
            use std::fmt::Write as _;
            let mut out = String::new();
            for &c in b {
                match c {
                    b'"' => out.push_str("\\\""),
                    b'\\' => out.push_str("\\\\"),
                    b'\n' => out.push_str("\\n"),
                    b'\t' => out.push_str("\\t"),
                    b'\r' => out.push_str("\\r"),
                    0x20..=0x7e => out.push(c as char),
                    _ => write!(out, "\\x{c:02x}").unwrap(),
                }
            }
            out
        }
        let all: Vec<u8> = (0..=255).collect();
        let mixed = b"ab\"c\\d\ne\x00\xffxyz  \x7f~".to_vec();
        for b in [&all[..], &mixed[..], b"", b"plain", b"\x01"] {
            let mut got = String::from("<");
            escape_bytes(&mut got, b);
            assert_eq!(got, format!("<{}", reference(b)), "{b:?}");
        }
    }

    #[test]
    fn percent_g() {
        let cases: &[(f64, &str)] = &[
            (0.526675524, "0.526675524"),
            (102339.536, "102339.536"),
            (9.35719727e-05, "9.35719727e-05"),
            (1.0, "1"),
            (100000.0, "100000"),
            (123456789.0, "123456789"),
            (1234567890.0, "1.23456789e+09"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-5270.89208, "-5270.89208"),
            (9.9999999999, "10"),
            (1e100, "1e+100"),
        ];
        for &(x, s) in cases {
            assert_eq!(format_g(x, 9), s, "{x}");
        }
    }

    #[test]
    fn helpers() {
        assert_eq!(format_ipv4(0x0A6E_011A), "10.110.1.26");
        assert_eq!(format_tfrac_as_sec_nsec(5 << 32 | 0x8000_0000), "5.500000000");
    }
}
