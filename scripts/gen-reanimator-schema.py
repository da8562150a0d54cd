#!/usr/bin/env python3
"""Generate crates/syscalls/src/generated/reanimator_schema.rs from a Re-Animator trace.

Usage:
    scripts/gen-reanimator-schema.py [--check] TRACE.ds

Re-Animator (Stony Brook FSL) writes one DataSeries extent type
per system call, `IOTTAFSL::Trace::Syscall::<call>`, declared as XML in the file's first extent
(`DataSeries: XmlType`). This script reads that extent and writes the field lists (names, types,
nullability, field ids) as Rust tables. Only these public format facts are written; no record of
the trace is read or copied.

The XmlType extent of Re-Animator's files is stored uncompressed; zlib and bzip2 are handled too.
For other codecs pass `--proto path/to/dataseries_proto.py` (the research DataSeries reader) and
its decoder is used instead.

With --check nothing is written; the exit status is 1 if the generated file would change.
Python 3 standard library only.
"""
import argparse
import bz2
import os
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "syscalls", "src", "generated", "reanimator_schema.rs")
PREFIX = "IOTTAFSL::Trace::Syscall::"
N_COMMON = 14
KINDS = {"bool": "Bool", "byte": "Byte", "int32": "Int32", "int64": "Int64", "variable32": "Variable32"}


def read_xml_types_builtin(path):
    """The `xmltype` strings of the file's first extent, or None if its codec is not handled."""
    with open(path, "rb") as f:
        d = f.read()
    if d[:4] != b"DSv1":
        raise SystemExit(f"{path}: not a DataSeries (DSv1) file")
    check = struct.unpack("<i", d[4:8])[0]
    e = "<" if check == 0x12345678 else ">"
    off = 40
    cf, cv, nrec, vs, adler, _bjh = struct.unpack(e + "iiiiII", d[off:off + 24])
    fmode, vmode, tl = d[off + 24], d[off + 25], d[off + 26]
    name = d[off + 28:off + 28 + tl].decode("latin1")
    if name != "DataSeries: XmlType":
        raise SystemExit(f"{path}: first extent is {name!r}, not the XmlType extent")
    hl = 28 + tl
    hl += (-hl) % 4
    total = hl + cf + (-cf) % 4 + cv + (-cv) % 4
    raw = d[off:off + total]
    if zlib.adler32(raw[20:], zlib.adler32(raw[:16])) != adler:
        raise SystemExit(f"{path}: XmlType extent fails its adler32 check")

    def unpack(mode, data):
        if mode == 0:
            return data
        if mode == 2:
            return zlib.decompress(data)
        if mode == 3:
            return bz2.decompress(data)
        return None

    fixed = unpack(fmode, raw[hl:hl + cf])
    vstart = hl + cf + (-cf) % 4
    var = unpack(vmode, raw[vstart:vstart + cv])
    if fixed is None or var is None:
        return None
    var = b"\0\0\0\0" + var
    recsize = 8  # one variable32 field, padded to 8 ("original" record padding)
    if len(fixed) != nrec * recsize or len(var) != vs:
        raise SystemExit(f"{path}: XmlType extent has unexpected sizes")
    out = []
    for r in range(nrec):
        vo = struct.unpack(e + "i", fixed[r * recsize:r * recsize + 4])[0]
        size = struct.unpack(e + "i", var[vo:vo + 4])[0]
        out.append(var[vo + 4:vo + 4 + size].decode("utf-8"))
    return out


def read_xml_types_proto(path, proto):
    import importlib.util

    spec = importlib.util.spec_from_file_location("dataseries_proto", proto)
    dp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dp)
    f = dp.DSFile(path)
    x = next(f.extents())
    et, fixed, var = f.decode(x)
    return [r["xmltype"].decode("utf-8") for r in f.records(et, fixed, var)]


def parse(xmls):
    namespace = version = None
    common = None
    types = []
    for x in xmls:
        root = ET.fromstring(x)
        tname = root.get("name")
        if not tname.startswith(PREFIX):
            continue
        ns, ver = root.get("namespace"), root.get("version")
        if namespace is None:
            namespace, version = ns, ver
        elif (ns, ver) != (namespace, version):
            raise SystemExit(f"{tname}: namespace/version {ns}/{ver} differ from {namespace}/{version}")
        fields = []
        for el in root:
            if el.tag != "field":
                raise SystemExit(f"{tname}: unexpected element <{el.tag}>")
            extra = set(el.attrib) - {"field_id", "name", "type", "opt_nullable"}
            if extra:
                raise SystemExit(f"{tname}: unexpected field attributes {sorted(extra)}")
            kind = KINDS.get(el.get("type"))
            if kind is None:
                raise SystemExit(f"{tname}: unsupported field type {el.get('type')!r}")
            fields.append((el.get("name"), kind, el.get("opt_nullable") == "yes", int(el.get("field_id"))))
        head, rest = fields[:N_COMMON], fields[N_COMMON:]
        if common is None:
            common = head
        elif head != common:
            raise SystemExit(f"{tname}: the first {N_COMMON} fields are not the common fields")
        # The XML is regenerated from these facts by `extent_type_xml`: make sure that is exact.
        if render_xml(tname, ns, ver, fields) != x:
            raise SystemExit(f"{tname}: XML layout not reproducible from the extracted fields")
        types.append((tname[len(PREFIX):], rest))
    if common is None:
        raise SystemExit("no IOTTAFSL::Trace::Syscall:: types found")
    return namespace, version, common, types


def render_xml(tname, ns, ver, fields):
    lines = [f'<ExtentType name="{tname}" namespace="{ns}" version="{ver}">']
    for name, kind, nullable, fid in fields:
        t = {v: k for k, v in KINDS.items()}[kind]
        lines.append(
            f'  <field field_id="{fid}" name="{name}" type="{t}" opt_nullable="{"yes" if nullable else "no"}"/>'
        )
    lines.append("</ExtentType>")
    return "\n".join(lines) + "\n"


def render(source, namespace, version, common, types):
    def field(f):
        name, kind, nullable, fid = f
        n = "true" if nullable else "false"
        return f'SchemaField {{ name: "{name}", kind: FieldKind::{kind}, nullable: {n}, field_id: {fid} }}'

    o = []
    o.append(f"// @generated by scripts/gen-reanimator-schema.py from {source}; do not edit.")
    o.append("//")
    o.append("// Re-Animator's extent types (`IOTTAFSL::Trace::Syscall::<call>`): field names, types,")
    o.append("// nullability and field ids, in the order of the XML the traces declare.")
    o.append("")
    o.append("/// Prefix of every Re-Animator extent type name.")
    o.append(f'pub const PREFIX: &str = "{PREFIX}";')
    o.append("/// The `namespace` attribute of every Re-Animator extent type.")
    o.append(f'pub const NAMESPACE: &str = "{namespace}";')
    o.append("/// The `version` attribute of every Re-Animator extent type.")
    o.append(f'pub const VERSION: &str = "{version}";')
    o.append("")
    o.append("/// A DataSeries field type used by Re-Animator.")
    o.append("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]")
    o.append("pub enum FieldKind {")
    kind_docs = {
        "Bool": "`bool`: one bit per record.",
        "Byte": "`byte`: one unsigned byte.",
        "Int32": "`int32`: a signed 32-bit integer.",
        "Int64": "`int64`: a signed 64-bit integer (times, offsets, return values).",
        "Variable32": "`variable32`: a byte string of any length (paths, buffers, raw structs).",
    }
    for k in ["Bool", "Byte", "Int32", "Int64", "Variable32"]:
        o.append(f"    /// {kind_docs[k]}")
        o.append(f"    {k},")
    o.append("}")
    o.append("")
    o.append("impl FieldKind {")
    o.append("    /// The DataSeries XML type name (`bool`, `int32`, ...).")
    o.append("    pub fn xml_name(self) -> &'static str {")
    o.append("        match self {")
    for xmln, k in KINDS.items():
        o.append(f'            FieldKind::{k} => "{xmln}",')
    o.append("        }")
    o.append("    }")
    o.append("}")
    o.append("")
    o.append("/// One field of a Re-Animator extent type.")
    o.append("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]")
    o.append("pub struct SchemaField {")
    o.append("    /// The field's `name` attribute (`descriptor`, `given_pathname`, `time_called`).")
    o.append("    pub name: &'static str,")
    o.append("    /// The field's `type` attribute.")
    o.append("    pub kind: FieldKind,")
    o.append("    /// `opt_nullable=\"yes\"`.")
    o.append("    pub nullable: bool,")
    o.append("    /// The field's `field_id` attribute, Re-Animator's number for the field name (the same")
    o.append("    /// name has the same id in every type).")
    o.append("    pub field_id: u32,")
    o.append("}")
    o.append("")
    o.append(f"/// The {len(common)} fields every type starts with (`unique_id`, `time_called`, ...).")
    o.append("pub const COMMON: &[SchemaField] = &[")
    for f in common:
        o.append(f"    {field(f)},")
    o.append("];")
    o.append("")
    o.append(f"/// The {len(types)} call types (name after [`PREFIX`], call-specific fields after [`COMMON`]),")
    o.append("/// sorted by name.")
    o.append("pub const TYPES: &[(&str, &[SchemaField])] = &[")
    for name, fields in types:
        if not fields:
            o.append(f'    ("{name}", &[]),')
            continue
        o.append(f'    (')
        o.append(f'        "{name}",')
        o.append("        &[")
        for f in fields:
            o.append(f"            {field(f)},")
        o.append("        ],")
        o.append("    ),")
    o.append("];")
    o.append("")
    o.append("/// The call-specific fields of `call` (without [`COMMON`]), in XML order.")
    o.append("pub fn fields_of(call: &str) -> Option<&'static [SchemaField]> {")
    o.append("    TYPES.iter().find(|(n, _)| *n == call).map(|&(_, f)| f)")
    o.append("}")
    o.append("")
    o.append("/// All fields of `call`'s extent type: [`COMMON`] then the call's own, as declared.")
    o.append("pub fn all_fields_of(call: &str) -> Option<impl Iterator<Item = &'static SchemaField>> {")
    o.append("    fields_of(call).map(|f| COMMON.iter().chain(f))")
    o.append("}")
    o.append("")
    o.append("/// The field named `field` of `call`'s extent type (common fields included).")
    o.append("pub fn field(call: &str, field: &str) -> Option<&'static SchemaField> {")
    o.append("    all_fields_of(call)?.find(|f| f.name == field)")
    o.append("}")
    o.append("")
    o.append("/// The extent type XML exactly as Re-Animator declares it (byte-identical to the traces).")
    o.append("pub fn extent_type_xml(call: &str) -> Option<String> {")
    o.append("    use std::fmt::Write;")
    o.append("    let fields = all_fields_of(call)?;")
    o.append("    let mut s = format!(")
    o.append('        "<ExtentType name=\\"{PREFIX}{call}\\" namespace=\\"{NAMESPACE}\\" version=\\"{VERSION}\\">\\n"')
    o.append("    );")
    o.append("    for f in fields {")
    o.append("        let _ = writeln!(")
    o.append("            s,")
    o.append('            "  <field field_id=\\"{}\\" name=\\"{}\\" type=\\"{}\\" opt_nullable=\\"{}\\"/>",')
    o.append("            f.field_id,")
    o.append("            f.name,")
    o.append("            f.kind.xml_name(),")
    o.append('            if f.nullable { "yes" } else { "no" }')
    o.append("        );")
    o.append("    }")
    o.append('    s.push_str("</ExtentType>\\n");')
    o.append("    Some(s)")
    o.append("}")
    return "\n".join(o) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", help="a Re-Animator DataSeries trace (.ds)")
    ap.add_argument("--check", action="store_true", help="exit 1 if the generated file would change")
    ap.add_argument("--proto", help="dataseries_proto.py to decode extents this script cannot")
    ap.add_argument("--output", default=OUT)
    args = ap.parse_args()

    xmls = read_xml_types_builtin(args.trace)
    if xmls is None:
        if not args.proto:
            raise SystemExit(f"{args.trace}: XmlType extent uses a codec this script lacks; pass --proto")
        xmls = read_xml_types_proto(args.trace, args.proto)
    namespace, version, common, types = parse(xmls)
    types.sort(key=lambda t: t[0])
    if len(common) != N_COMMON:
        raise SystemExit(f"expected {N_COMMON} common fields, found {len(common)}")
    # Name the source by file name only: the generated file must not depend on where testdata lives.
    text = render(os.path.basename(args.trace), namespace, version, common, types)

    old = None
    if os.path.exists(args.output):
        with open(args.output, encoding="utf-8") as f:
            old = f.read()
    if args.check:
        # The first line names the trace the file was generated from; any trace with the same
        # schema passes the check.
        if old is None or old.split("\n", 1)[1] != text.split("\n", 1)[1]:
            print(f"stale: {args.output} (run scripts/gen-reanimator-schema.py {args.trace})", file=sys.stderr)
            sys.exit(1)
        print(f"ok: {args.output} matches {args.trace} ({len(types)} types, {len(common)} common fields)")
        return
    if old != text:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {args.output} ({len(types)} types, {len(common)} common fields)")
    else:
        print(f"unchanged: {args.output}")


if __name__ == "__main__":
    main()
