//! Copies a DataSeries file keeping only the types its extents use (and the extents as they
//! are, re-encoded uncompressed). A reanimator trace declares every call type it could hold,
//! about 300 KB of XML; the copy of a small recording is a few KB: small enough to seed the
//! trace fuzzer (fuzz/README.md).
//!
//! `cargo run -p dataseries --example subset -- IN.ds OUT.ds`

use std::collections::BTreeSet;

use dataseries::{DsReader, DsWriter, ExtentBuilder, WriterOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        return Err("usage: subset IN.ds OUT.ds".into());
    };
    let r = DsReader::open(input)?;
    let mut used = BTreeSet::new();
    for h in r.headers() {
        used.insert(h?.type_name);
    }
    let types: Vec<_> = r.types().iter().filter(|t| used.contains(t.name())).cloned().collect();
    let mut w = DsWriter::create(output, &types, WriterOptions::uncompressed())?;
    for e in r.extents() {
        w.write_extent(ExtentBuilder::from_extent(&e?))?;
    }
    w.finish()?;
    Ok(())
}
