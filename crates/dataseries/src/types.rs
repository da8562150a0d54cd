//! Extent types: the XML schema, field descriptions and the record layout (spec 2.7, 2.8).

use crate::error::Error;
use crate::Result;

/// The type of one field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// One bit.
    Bool,
    /// One unsigned byte.
    Byte,
    /// Signed 32-bit integer.
    Int32,
    /// Signed 64-bit integer.
    Int64,
    /// IEEE-754 binary64.
    Double,
    /// Variable-length byte string (stored in the extent's heap).
    Variable32,
    /// Fixed number of raw bytes.
    FixedWidth(usize),
}

impl FieldType {
    /// The XML `type` attribute value.
    pub fn xml_name(self) -> &'static str {
        match self {
            FieldType::Bool => "bool",
            FieldType::Byte => "byte",
            FieldType::Int32 => "int32",
            FieldType::Int64 => "int64",
            FieldType::Double => "double",
            FieldType::Variable32 => "variable32",
            FieldType::FixedWidth(_) => "fixedwidth",
        }
    }
}

/// Description of one user-visible field, as declared in the type's XML.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDesc {
    /// Field name (unique in the type, at most 255 bytes, not starting with a space).
    pub name: String,
    /// Field type.
    pub ftype: FieldType,
    /// `opt_nullable="yes"`.
    pub nullable: bool,
    /// `pack_unique="yes"` (variable32 only): identical values share one heap entry.
    pub pack_unique: bool,
    /// `pack_scale="S"` (double only): stored as `round(v / S)`.
    pub pack_scale: Option<f64>,
    /// `pack_relative="F"`: delta from field `F` (or from the previous record if `F` is this field).
    pub pack_relative: Option<String>,
    /// `opt_doublebase` (double only): presentation offset, not a storage transform.
    pub doublebase: Option<f64>,
    /// `units` (e.g. `"nanoseconds"`, `"2^-32 seconds"`).
    pub units: Option<String>,
    /// `epoch` (e.g. `"unix"`).
    pub epoch: Option<String>,
    /// Every other attribute, in XML order (comment, field_id, print_*, ...).
    pub attrs: Vec<(String, String)>,
}

impl FieldDesc {
    /// A plain non-nullable field without pack options.
    pub fn new(name: impl Into<String>, ftype: FieldType) -> Self {
        FieldDesc {
            name: name.into(),
            ftype,
            nullable: false,
            pack_unique: false,
            pack_scale: None,
            pack_relative: None,
            doublebase: None,
            units: None,
            epoch: None,
            attrs: Vec::new(),
        }
    }

    /// Sets `opt_nullable`.
    pub fn nullable(mut self, yes: bool) -> Self {
        self.nullable = yes;
        self
    }

    /// Adds a free-form attribute (e.g. `comment`, `field_id`).
    pub fn attr(mut self, k: &str, v: &str) -> Self {
        self.attrs.push((k.to_string(), v.to_string()));
        self
    }

    /// Sets `units` and `epoch`.
    pub fn units(mut self, units: &str, epoch: &str) -> Self {
        self.units = Some(units.to_string());
        self.epoch = Some(epoch.to_string());
        self
    }

    /// Sets `pack_unique`.
    pub fn pack_unique(mut self, yes: bool) -> Self {
        self.pack_unique = yes;
        self
    }

    /// Sets `pack_scale`.
    pub fn pack_scale(mut self, scale: f64) -> Self {
        self.pack_scale = Some(scale);
        self
    }

    /// Sets `pack_relative` (the name of this field for self-relative packing).
    pub fn pack_relative(mut self, base: &str) -> Self {
        self.pack_relative = Some(base.to_string());
        self
    }

    /// Sets `opt_doublebase`.
    pub fn doublebase(mut self, base: f64) -> Self {
        self.doublebase = Some(base);
        self
    }
}

/// How a field is packed relative to something else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Relative {
    None,
    /// Delta from the previous record's value of the same field.
    SelfRel,
    /// Delta from an earlier field (user field index) of the same record.
    Other(usize),
}

/// Physical placement and packing of one user field.
#[derive(Clone, Debug)]
pub(crate) struct FieldLayout {
    pub ftype: FieldType,
    /// Byte offset in the record.
    pub offset: usize,
    /// Bit mask (bools only).
    pub mask: u8,
    /// Null flag position: (byte offset, mask).
    pub null: Option<(usize, u8)>,
    /// `(S, 1/S)` for `pack_scale`.
    pub scale: Option<(f64, f64)>,
    pub relative: Relative,
    pub unique: bool,
}

impl FieldLayout {
    /// Bytes the value occupies in the record (bools: 0, they share bytes).
    pub fn width(&self) -> usize {
        match self.ftype {
            FieldType::Bool => 0,
            FieldType::Byte => 1,
            FieldType::Int32 | FieldType::Variable32 => 4,
            FieldType::Int64 | FieldType::Double => 8,
            FieldType::FixedWidth(n) => n,
        }
    }
}

/// An extent type: the schema of one kind of extent. Immutable; shared as `Arc<ExtentType>`.
/// Its identity is the exact XML text it was created from.
#[derive(Debug, Clone)]
pub struct ExtentType {
    xml: String,
    name: String,
    namespace: Option<String>,
    version: Option<String>,
    attrs: Vec<(String, String)>,
    fields: Vec<FieldDesc>,
    pub(crate) layout: Vec<FieldLayout>,
    record_size: usize,
    pub(crate) null_compact: bool,
    /// Bytes at the start of each record that hold bools (null compaction).
    pub(crate) bool_bytes: usize,
    /// User field indices of the variable32 fields, declaration order.
    pub(crate) var_fields: Vec<usize>,
    /// Null compaction groups: non-bool user fields of width 1, 4, 8, by offset.
    pub(crate) compact_groups: [Vec<usize>; 3],
    /// Offsets of all 4-byte and 8-byte fields (byte swapping).
    pub(crate) swap4: Vec<usize>,
    pub(crate) swap8: Vec<usize>,
    /// Whether any field uses pack_scale or pack_relative.
    pub(crate) has_transforms: bool,
}

impl PartialEq for ExtentType {
    fn eq(&self, other: &Self) -> bool {
        self.xml == other.xml
    }
}

pub(crate) const XMLTYPE_NAME: &str = "DataSeries: XmlType";
pub(crate) const INDEX_NAME: &str = "DataSeries: ExtentIndex";
pub(crate) const XMLTYPE_XML: &str = "<ExtentType name=\"DataSeries: XmlType\">\n  <field type=\"variable32\" name=\"xmltype\" />\n</ExtentType>\n";
pub(crate) const INDEX_XML: &str = "<ExtentType name=\"DataSeries: ExtentIndex\">\n  <field type=\"int64\" name=\"offset\" />\n  <field type=\"variable32\" name=\"extenttype\" />\n</ExtentType>\n";

const MAX_NAME: usize = 255;

fn yes_no(type_name: &str, field: &str, attr: &str, v: &str) -> Result<bool> {
    match v {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err(Error::invalid_type(
            type_name,
            Some(field),
            format!("{attr} must be \"yes\" or \"no\", not {v:?}"),
        )),
    }
}

fn parse_f64(type_name: &str, field: &str, attr: &str, v: &str) -> Result<f64> {
    match v.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(Error::invalid_type(
            type_name,
            Some(field),
            format!("{attr}={v:?} is not a finite number"),
        )),
    }
}

/// Attributes one element of a type description may have. DataSeries' own elements have at
/// most about ten; the XML parser checks every attribute against all earlier ones of its
/// element (quadratic), so a hostile description with tens of thousands of them would take
/// minutes (found by fuzzing: 134 s for one file).
const MAX_XML_ATTRIBUTES: usize = 256;
/// XML nodes in one type description (a field is one element).
const MAX_XML_NODES: u32 = 1 << 20;

/// Refuses a type description with an element of more than [`MAX_XML_ATTRIBUTES`] attributes
/// before parsing it (each attribute has one `=` outside quoted values).
fn check_xml_shape(xml: &str) -> Result<()> {
    let mut in_tag = false;
    let mut quote: Option<u8> = None;
    let mut attrs = 0usize;
    for &c in xml.as_bytes() {
        match (in_tag, quote, c) {
            (true, Some(q), _) if c == q => quote = None,
            (true, Some(_), _) => {}
            (true, None, b'"' | b'\'') => quote = Some(c),
            (true, None, b'=') => {
                attrs += 1;
                if attrs > MAX_XML_ATTRIBUTES {
                    return Err(Error::XmlParse {
                        detail: format!("an element has more than {MAX_XML_ATTRIBUTES} attributes"),
                    });
                }
            }
            (true, None, b'>') => in_tag = false,
            (false, _, b'<') => {
                in_tag = true;
                attrs = 0;
            }
            _ => {}
        }
    }
    Ok(())
}

impl ExtentType {
    /// Parses an extent type from its XML description. The text is kept verbatim: it is the
    /// type's identity.
    pub fn from_xml(xml: &str) -> Result<ExtentType> {
        check_xml_shape(xml)?;
        let opts = roxmltree::ParsingOptions {
            nodes_limit: MAX_XML_NODES,
            ..roxmltree::ParsingOptions::default()
        };
        let doc = roxmltree::Document::parse_with_options(xml, opts)
            .map_err(|e| Error::XmlParse { detail: e.to_string() })?;
        let root = doc.root_element();
        if root.tag_name().name() != "ExtentType" || root.tag_name().namespace().is_some() {
            return Err(Error::invalid_type(
                "",
                None,
                format!("root element is <{}>, not <ExtentType>", root.tag_name().name()),
            ));
        }
        let name = root
            .attribute("name")
            .ok_or_else(|| Error::invalid_type("", None, "the name attribute is missing"))?
            .to_string();
        if name.is_empty() || name.len() > MAX_NAME {
            return Err(Error::invalid_type(&name, None, "the name must be 1 to 255 bytes long"));
        }
        let mut namespace = None;
        let mut version = None;
        let mut attrs = Vec::new();
        let mut null_compact = false;
        let mut pad_original = true;
        let mut small_to_big = true;
        for a in root.attributes() {
            let (k, v) = (a.name(), a.value());
            if a.namespace().is_some() {
                attrs.push((k.to_string(), v.to_string()));
                continue;
            }
            match k {
                "name" => {}
                "namespace" => namespace = Some(v.to_string()),
                "version" => version = Some(v.to_string()),
                "pack_null_compact" => {
                    null_compact = match v {
                        "no" => false,
                        "non_bool" => true,
                        _ => {
                            return Err(Error::invalid_type(
                                &name,
                                None,
                                format!("pack_null_compact={v:?} is not \"no\" or \"non_bool\""),
                            ))
                        }
                    }
                }
                "pack_pad_record" => {
                    pad_original = match v {
                        "original" => true,
                        "max_column_size" => false,
                        _ => {
                            return Err(Error::invalid_type(
                                &name,
                                None,
                                format!(
                                "pack_pad_record={v:?} is not \"original\" or \"max_column_size\""
                            ),
                            ))
                        }
                    }
                }
                "pack_field_ordering" => {
                    small_to_big = match v {
                        "small_to_big_sep_var32" => true,
                        "big_to_small_sep_var32" => false,
                        _ => {
                            return Err(Error::invalid_type(
                                &name,
                                None,
                                format!("pack_field_ordering={v:?} is not a known ordering"),
                            ))
                        }
                    }
                }
                _ if k.starts_with("pack_") || k.starts_with("opt_") => {
                    return Err(Error::invalid_type(
                        &name,
                        None,
                        format!("unknown option attribute {k}"),
                    ));
                }
                _ => attrs.push((k.to_string(), v.to_string())),
            }
        }
        let mut fields = Vec::new();
        for child in root.children() {
            if child.is_element() {
                if child.tag_name().name() != "field" || child.tag_name().namespace().is_some() {
                    return Err(Error::invalid_type(
                        &name,
                        None,
                        format!("unexpected element <{}>", child.tag_name().name()),
                    ));
                }
                fields.push(parse_field(&name, child)?);
            } else if child.is_text() && !child.text().unwrap_or("").trim().is_empty() {
                return Err(Error::invalid_type(&name, None, "text content inside <ExtentType>"));
            }
        }
        Self::assemble(
            xml.to_string(),
            name,
            namespace,
            version,
            attrs,
            fields,
            null_compact,
            pad_original,
            small_to_big,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
        xml: String,
        name: String,
        namespace: Option<String>,
        version: Option<String>,
        attrs: Vec<(String, String)>,
        fields: Vec<FieldDesc>,
        null_compact: bool,
        pad_original: bool,
        small_to_big: bool,
    ) -> Result<ExtentType> {
        let err = |field: &FieldDesc, reason: String| {
            Error::invalid_type(&name, Some(&field.name), reason)
        };
        // Validate names and options.
        let mut seen = std::collections::HashSet::new();
        for (i, f) in fields.iter().enumerate() {
            if f.name.is_empty() || f.name.len() > MAX_NAME {
                return Err(err(f, "field names must be 1 to 255 bytes long".into()));
            }
            if f.name.starts_with(' ') {
                return Err(err(f, "field names must not start with a space".into()));
            }
            if !seen.insert(f.name.as_str()) {
                return Err(err(f, "duplicate field name".into()));
            }
            if let FieldType::FixedWidth(n) = f.ftype {
                if n == 0 || n > i32::MAX as usize {
                    return Err(err(f, format!("fixedwidth size {n} out of range")));
                }
                if null_compact {
                    return Err(err(
                        f,
                        "fixedwidth fields cannot be combined with pack_null_compact".into(),
                    ));
                }
            }
            if f.pack_unique && f.ftype != FieldType::Variable32 {
                return Err(err(f, "pack_unique applies only to variable32 fields".into()));
            }
            if let Some(s) = f.pack_scale {
                if f.ftype != FieldType::Double {
                    return Err(err(f, "pack_scale applies only to double fields".into()));
                }
                if s == 0.0 || !s.is_finite() {
                    return Err(err(f, "pack_scale must be a finite non-zero number".into()));
                }
            }
            if f.doublebase.is_some() && f.ftype != FieldType::Double {
                return Err(err(f, "opt_doublebase applies only to double fields".into()));
            }
            if let Some(base) = &f.pack_relative {
                if !matches!(f.ftype, FieldType::Int32 | FieldType::Int64 | FieldType::Double) {
                    return Err(err(
                        f,
                        "pack_relative applies only to int32, int64 and double fields".into(),
                    ));
                }
                if *base == f.name {
                    if f.ftype == FieldType::Double && f.pack_scale.is_none() {
                        return Err(err(f, "self-relative doubles require pack_scale".into()));
                    }
                } else {
                    match fields[..i].iter().find(|g| g.name == *base) {
                        Some(g) if g.ftype == f.ftype => {}
                        Some(_) => {
                            return Err(err(
                                f,
                                format!("pack_relative base '{base}' has a different type"),
                            ))
                        }
                        None => {
                            return Err(err(
                                f,
                                format!("pack_relative base '{base}' is not an earlier field"),
                            ))
                        }
                    }
                }
            }
        }

        // Physical slots: user fields with a hidden null-flag bool after each nullable one.
        // slot = (user field index, is_null_flag)
        let mut slots: Vec<(usize, bool)> = Vec::with_capacity(fields.len() * 2);
        for (i, f) in fields.iter().enumerate() {
            slots.push((i, false));
            if f.nullable {
                slots.push((i, true));
            }
        }
        let slot_type = |s: &(usize, bool)| if s.1 { FieldType::Bool } else { fields[s.0].ftype };
        let mut offset = vec![0usize; slots.len()];
        let mut mask = vec![0u8; slots.len()];
        let mut pos = 0usize;
        let overflow = || Error::invalid_type(&name, None, "record size overflows");
        let n4 = slots
            .iter()
            .filter(|s| matches!(slot_type(s), FieldType::Int32 | FieldType::Variable32))
            .count();
        let n8 = slots
            .iter()
            .filter(|s| matches!(slot_type(s), FieldType::Int64 | FieldType::Double))
            .count();
        let place_bools = |pos: &mut usize, offset: &mut [usize], mask: &mut [u8]| {
            let mut bit = 0u32;
            for (k, s) in slots.iter().enumerate() {
                if slot_type(s) == FieldType::Bool {
                    offset[k] = *pos;
                    mask[k] = 1u8 << bit;
                    bit += 1;
                    if bit == 8 {
                        *pos += 1;
                        bit = 0;
                    }
                }
            }
            if bit != 0 {
                *pos += 1;
            }
        };
        let place = |pos: &mut usize,
                     offset: &mut [usize],
                     pred: &dyn Fn(FieldType) -> bool|
         -> Result<()> {
            for (k, s) in slots.iter().enumerate() {
                let t = slot_type(s);
                if pred(t) {
                    offset[k] = *pos;
                    let w = match t {
                        FieldType::FixedWidth(n) => n,
                        FieldType::Byte => 1,
                        FieldType::Int32 | FieldType::Variable32 => 4,
                        _ => 8,
                    };
                    *pos = pos.checked_add(w).ok_or_else(overflow)?;
                }
            }
            Ok(())
        };
        let align = |pos: usize, a: usize| pos.div_ceil(a) * a;
        let is_small = |t: FieldType| matches!(t, FieldType::Byte | FieldType::FixedWidth(_));
        let is_i32 = |t: FieldType| t == FieldType::Int32;
        let is_v32 = |t: FieldType| t == FieldType::Variable32;
        let is_8 = |t: FieldType| matches!(t, FieldType::Int64 | FieldType::Double);
        if small_to_big {
            place_bools(&mut pos, &mut offset, &mut mask);
            place(&mut pos, &mut offset, &is_small)?;
            if pad_original || n4 > 0 {
                pos = align(pos, 4);
            }
            place(&mut pos, &mut offset, &is_i32)?;
            place(&mut pos, &mut offset, &is_v32)?;
            if pad_original || n8 > 0 {
                pos = align(pos, 8);
            }
            place(&mut pos, &mut offset, &is_8)?;
        } else {
            place(&mut pos, &mut offset, &is_8)?;
            place(&mut pos, &mut offset, &is_i32)?;
            place(&mut pos, &mut offset, &is_v32)?;
            place(&mut pos, &mut offset, &is_small)?;
            place_bools(&mut pos, &mut offset, &mut mask);
            let a = if n8 > 0 || pad_original {
                8
            } else if n4 > 0 {
                4
            } else {
                1
            };
            pos = align(pos, a);
        }
        let record_size = pos;
        if record_size > i32::MAX as usize {
            return Err(overflow());
        }

        let mut layout: Vec<FieldLayout> = fields
            .iter()
            .map(|f| FieldLayout {
                ftype: f.ftype,
                offset: 0,
                mask: 0,
                null: None,
                scale: f.pack_scale.map(|s| (s, 1.0 / s)),
                relative: match &f.pack_relative {
                    None => Relative::None,
                    Some(b) if *b == f.name => Relative::SelfRel,
                    Some(b) => {
                        Relative::Other(fields.iter().position(|g| g.name == *b).unwrap_or(0))
                    }
                },
                unique: f.pack_unique,
            })
            .collect();
        let mut bool_bytes = 0;
        for (k, &(fi, is_null)) in slots.iter().enumerate() {
            if slot_type(&slots[k]) == FieldType::Bool {
                bool_bytes = bool_bytes.max(offset[k] + 1);
            }
            if is_null {
                layout[fi].null = Some((offset[k], mask[k]));
            } else {
                layout[fi].offset = offset[k];
                layout[fi].mask = mask[k];
            }
        }
        let var_fields =
            (0..fields.len()).filter(|&i| fields[i].ftype == FieldType::Variable32).collect();
        let mut compact_groups: [Vec<usize>; 3] = Default::default();
        for (i, l) in layout.iter().enumerate() {
            let g = match l.ftype {
                FieldType::Bool => continue,
                FieldType::Byte | FieldType::FixedWidth(_) => 0,
                FieldType::Int32 | FieldType::Variable32 => 1,
                FieldType::Int64 | FieldType::Double => 2,
            };
            compact_groups[g].push(i);
        }
        for g in &mut compact_groups {
            g.sort_by_key(|&i| layout[i].offset);
        }
        let swap4 = layout.iter().filter(|l| l.width() == 4).map(|l| l.offset).collect();
        let swap8 = layout
            .iter()
            .filter(|l| matches!(l.ftype, FieldType::Int64 | FieldType::Double))
            .map(|l| l.offset)
            .collect();
        let has_transforms =
            layout.iter().any(|l| l.scale.is_some() || l.relative != Relative::None);
        Ok(ExtentType {
            xml,
            name,
            namespace,
            version,
            attrs,
            fields,
            layout,
            record_size,
            null_compact,
            bool_bytes,
            var_fields,
            compact_groups,
            swap4,
            swap8,
            has_transforms,
        })
    }

    /// Starts building a type from fields; the builder generates the XML.
    pub fn builder(name: &str) -> ExtentTypeBuilder {
        ExtentTypeBuilder {
            name: name.to_string(),
            namespace: None,
            version: None,
            attrs: Vec::new(),
            fields: Vec::new(),
        }
    }

    /// The type name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `namespace` attribute.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The `version` attribute.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// The XML text, verbatim.
    pub fn xml(&self) -> &str {
        &self.xml
    }

    /// Other root attributes (not name/namespace/version/pack_*), in XML order.
    pub fn attrs(&self) -> &[(String, String)] {
        &self.attrs
    }

    /// User fields in declaration order (hidden null flags excluded).
    pub fn fields(&self) -> &[FieldDesc] {
        &self.fields
    }

    /// Index of the user field called `name`.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// Bytes per record in the (uncompacted) fixed section.
    pub fn record_size(&self) -> usize {
        self.record_size
    }

    /// Whether the type uses `pack_null_compact="non_bool"`.
    pub fn null_compact(&self) -> bool {
        self.null_compact
    }

    /// Byte offset of a field in the record and, for bools, its bit mask (for tests/tools).
    pub fn field_offset(&self, field: usize) -> Option<(usize, u8)> {
        self.layout.get(field).map(|l| (l.offset, l.mask))
    }

    pub(crate) fn xmltype() -> ExtentType {
        // The built-in XML is a constant that always parses.
        Self::from_xml(XMLTYPE_XML).unwrap_or_else(|_| unreachable!("built-in XmlType parses"))
    }

    pub(crate) fn index_type() -> ExtentType {
        Self::from_xml(INDEX_XML).unwrap_or_else(|_| unreachable!("built-in ExtentIndex parses"))
    }
}

fn parse_field(type_name: &str, node: roxmltree::Node<'_, '_>) -> Result<FieldDesc> {
    let fname = node.attribute("name").unwrap_or("").to_string();
    let tname = node.attribute("type").ok_or_else(|| {
        Error::invalid_type(type_name, Some(&fname), "the type attribute is missing")
    })?;
    if node.attribute("name").is_none() {
        return Err(Error::invalid_type(type_name, None, "a field has no name attribute"));
    }
    let ftype = match tname {
        "bool" => FieldType::Bool,
        "byte" => FieldType::Byte,
        "int32" => FieldType::Int32,
        "int64" => FieldType::Int64,
        "double" => FieldType::Double,
        "variable32" => FieldType::Variable32,
        "fixedwidth" => {
            let s = node.attribute("size").ok_or_else(|| {
                Error::invalid_type(type_name, Some(&fname), "fixedwidth needs a size attribute")
            })?;
            let n: usize = s.trim().parse().map_err(|_| {
                Error::invalid_type(
                    type_name,
                    Some(&fname),
                    format!("size={s:?} is not a positive integer"),
                )
            })?;
            FieldType::FixedWidth(n)
        }
        other => {
            return Err(Error::invalid_type(
                type_name,
                Some(&fname),
                format!("unknown field type {other:?}"),
            ))
        }
    };
    let mut f = FieldDesc::new(fname.clone(), ftype);
    for a in node.attributes() {
        let (k, v) = (a.name(), a.value());
        if a.namespace().is_some() {
            f.attrs.push((k.to_string(), v.to_string()));
            continue;
        }
        match k {
            "name" | "type" => {}
            "size" if matches!(ftype, FieldType::FixedWidth(_)) => {}
            "opt_nullable" => f.nullable = yes_no(type_name, &fname, k, v)?,
            "pack_unique" => f.pack_unique = yes_no(type_name, &fname, k, v)?,
            "pack_scale" => f.pack_scale = Some(parse_f64(type_name, &fname, k, v)?),
            "pack_relative" => f.pack_relative = Some(v.to_string()),
            "opt_doublebase" => f.doublebase = Some(parse_f64(type_name, &fname, k, v)?),
            "units" => f.units = Some(v.to_string()),
            "epoch" => f.epoch = Some(v.to_string()),
            _ => f.attrs.push((k.to_string(), v.to_string())),
        }
    }
    Ok(f)
}

/// Builds an [`ExtentType`] from field descriptions, generating its XML text.
#[derive(Clone, Debug)]
pub struct ExtentTypeBuilder {
    name: String,
    namespace: Option<String>,
    version: Option<String>,
    attrs: Vec<(String, String)>,
    fields: Vec<FieldDesc>,
}

const RESERVED_FIELD_ATTRS: &[&str] = &[
    "name",
    "type",
    "size",
    "opt_nullable",
    "pack_unique",
    "pack_scale",
    "pack_relative",
    "opt_doublebase",
    "units",
    "epoch",
];

impl ExtentTypeBuilder {
    /// Sets the `namespace` attribute.
    pub fn namespace(mut self, ns: &str) -> Self {
        self.namespace = Some(ns.to_string());
        self
    }

    /// Sets the `version` attribute.
    pub fn version(mut self, v: &str) -> Self {
        self.version = Some(v.to_string());
        self
    }

    /// Adds a root attribute (e.g. `pack_null_compact="non_bool"`, `comment`).
    pub fn attr(mut self, k: &str, v: &str) -> Self {
        self.attrs.push((k.to_string(), v.to_string()));
        self
    }

    /// Appends a field.
    pub fn field(mut self, f: FieldDesc) -> Self {
        self.fields.push(f);
        self
    }

    /// Generates the XML (one `<field .../>` per line; attributes name, type, then the rest) and
    /// parses it back, so `ExtentType::from_xml(t.xml()) == t`.
    pub fn build(self) -> Result<ExtentType> {
        use std::fmt::Write;
        let mut x = String::new();
        let _ = write!(x, "<ExtentType name=\"{}\"", escape(&self.name));
        if let Some(ns) = &self.namespace {
            let _ = write!(x, " namespace=\"{}\"", escape(ns));
        }
        if let Some(v) = &self.version {
            let _ = write!(x, " version=\"{}\"", escape(v));
        }
        for (k, v) in &self.attrs {
            if matches!(k.as_str(), "name" | "namespace" | "version") || !is_xml_name(k) {
                return Err(Error::invalid_type(
                    &self.name,
                    None,
                    format!("attribute name {k:?} is reserved or invalid"),
                ));
            }
            let _ = write!(x, " {k}=\"{}\"", escape(v));
        }
        x.push_str(">\n");
        for f in &self.fields {
            let _ =
                write!(x, "  <field name=\"{}\" type=\"{}\"", escape(&f.name), f.ftype.xml_name());
            if let FieldType::FixedWidth(n) = f.ftype {
                let _ = write!(x, " size=\"{n}\"");
            }
            if f.nullable {
                x.push_str(" opt_nullable=\"yes\"");
            }
            if f.pack_unique {
                x.push_str(" pack_unique=\"yes\"");
            }
            if let Some(s) = f.pack_scale {
                let _ = write!(x, " pack_scale=\"{s:?}\"");
            }
            if let Some(r) = &f.pack_relative {
                let _ = write!(x, " pack_relative=\"{}\"", escape(r));
            }
            if let Some(b) = f.doublebase {
                let _ = write!(x, " opt_doublebase=\"{b:?}\"");
            }
            if let Some(u) = &f.units {
                let _ = write!(x, " units=\"{}\"", escape(u));
            }
            if let Some(e) = &f.epoch {
                let _ = write!(x, " epoch=\"{}\"", escape(e));
            }
            for (k, v) in &f.attrs {
                if RESERVED_FIELD_ATTRS.contains(&k.as_str()) || !is_xml_name(k) {
                    return Err(Error::invalid_type(
                        &self.name,
                        Some(&f.name),
                        format!(
                            "attribute name {k:?} is reserved or invalid; use the FieldDesc member"
                        ),
                    ));
                }
                let _ = write!(x, " {k}=\"{}\"", escape(v));
            }
            x.push_str(" />\n");
        }
        x.push_str("</ExtentType>\n");
        let t = ExtentType::from_xml(&x)?;
        if t.fields != self.fields {
            return Err(Error::invalid_type(
                &self.name,
                None,
                "the generated XML does not parse back to the same fields",
            ));
        }
        Ok(t)
    }
}

fn is_xml_name(k: &str) -> bool {
    let mut chars = k.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Escapes an attribute value for double quotes.
fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\n' => o.push_str("&#10;"),
            '\r' => o.push_str("&#13;"),
            '\t' => o.push_str("&#9;"),
            _ => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rs(body: &str, pad: &str) -> usize {
        ExtentType::from_xml(&format!(
            "<ExtentType name=\"T\" pack_pad_record=\"{pad}\">{body}</ExtentType>"
        ))
        .unwrap()
        .record_size()
    }

    #[test]
    fn pad_record_vectors() {
        let b = r#"<field type="bool" name="b1"/><field type="bool" name="b2"/>"#;
        let y = r#"<field type="byte" name="y1"/><field type="byte" name="y2"/>"#;
        let i = r#"<field type="int32" name="i1"/>"#;
        let v = r#"<field type="variable32" name="v1"/>"#;
        let d = r#"<field type="double" name="d1"/>"#;
        let cases = [
            (b.to_string(), (8, 1)),
            (format!("{b}{y}"), (8, 3)),
            (format!("{b}{y}{i}"), (8, 8)),
            (format!("{b}{y}{i}{v}"), (16, 12)),
            (format!("{b}{y}{i}{v}{d}"), (24, 24)),
        ];
        for (body, exp) in cases {
            assert_eq!((rs(&body, "original"), rs(&body, "max_column_size")), exp, "{body}");
        }
    }

    #[test]
    fn field_ordering_vectors() {
        let t = ExtentType::from_xml(
            r#"<ExtentType name="T"><field type="int64" name="i64"/><field type="variable32" name="v32"/><field type="bool" name="bool"/><field type="int32" name="i32"/><field type="double" name="dbl"/><field type="byte" name="byte"/></ExtentType>"#,
        )
        .unwrap();
        let off = |n: &str| t.field_offset(t.field_index(n).unwrap()).unwrap().0;
        assert_eq!(
            [off("bool"), off("byte"), off("i32"), off("v32"), off("i64"), off("dbl")],
            [0, 1, 4, 8, 16, 24]
        );
        assert_eq!(t.record_size(), 32);
        let t = ExtentType::from_xml(
            r#"<ExtentType name="T" pack_field_ordering="big_to_small_sep_var32"><field type="variable32" name="v32"/><field type="bool" name="bool"/><field type="int32" name="i32"/><field type="byte" name="byte"/><field type="double" name="dbl"/><field type="int64" name="i64"/></ExtentType>"#,
        )
        .unwrap();
        let off = |n: &str| t.field_offset(t.field_index(n).unwrap()).unwrap().0;
        assert_eq!(
            [off("dbl"), off("i64"), off("i32"), off("v32"), off("byte"), off("bool")],
            [0, 8, 16, 20, 24, 25]
        );
        assert_eq!(t.record_size(), 32);
    }

    #[test]
    fn builder_round_trips() {
        let t = ExtentType::builder("Test::A")
            .namespace("example.org")
            .version("1.0")
            .field(
                FieldDesc::new("t", FieldType::Int64)
                    .pack_relative("t")
                    .units("nanoseconds", "unix"),
            )
            .field(
                FieldDesc::new("s", FieldType::Variable32)
                    .nullable(true)
                    .pack_unique(true)
                    .attr("comment", "a \"b\" <c>"),
            )
            .field(FieldDesc::new("d", FieldType::Double).pack_scale(1e-6).doublebase(100000.0))
            .field(FieldDesc::new("fw", FieldType::FixedWidth(3)))
            .build()
            .unwrap();
        let u = ExtentType::from_xml(t.xml()).unwrap();
        assert_eq!(t, u);
        assert_eq!(t.fields(), u.fields());
        assert_eq!(u.fields()[2].pack_scale, Some(1e-6));
        assert!(t.xml().contains("  <field name=\"t\" type=\"int64\" pack_relative=\"t\" units=\"nanoseconds\" epoch=\"unix\" />\n"));
    }

    #[test]
    fn invalid_types_are_rejected() {
        for xml in [
            "<ExtentType/>",
            "<Other name=\"x\"/>",
            "<ExtentType name=\"x\"><field name=\"a\" type=\"int7\"/></ExtentType>",
            "<ExtentType name=\"x\"><field name=\"a\" type=\"double\" pack_relative=\"a\"/></ExtentType>",
            "<ExtentType name=\"x\"><field name=\"a\" type=\"int32\" pack_relative=\"b\"/><field name=\"b\" type=\"int32\"/></ExtentType>",
            "<ExtentType name=\"x\"><field name=\"a\" type=\"int32\"/><field name=\"a\" type=\"int32\"/></ExtentType>",
            "<ExtentType name=\"x\" pack_bogus=\"1\"/>",
            "<ExtentType name=\"x\"><field name=\"a\" type=\"fixedwidth\" size=\"0\"/></ExtentType>",
            "<ExtentType name=\"x\"><other/></ExtentType>",
            "<ExtentType name=\"x\"",
        ] {
            assert!(ExtentType::from_xml(xml).is_err(), "{xml}");
        }
    }
}
