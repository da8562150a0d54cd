//! The CSV sink, in the shape SNIA's IOTTA repository asks traces to take: one file per call
//! family (`calls-FAMILY.csv`, the family being the call's `io_class`) with a fixed column set
//! per family (the common columns, then the argument columns of the registry's calls of that
//! family, docs/TRACE_FORMAT.md 12.4), `facts.csv`, `losses.csv`, `snapshots.csv` and (with
//! `--data full`) `data.csv`, beneath `DIR/host=H/trace=T/`; optionally each compressed by
//! `xz`. Column names are the Parquet tables' (12.2, 12.3).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::columns::{self, text_into, ColType, Column, Table};
use crate::pass::{Sink, TraceMeta};
use crate::row::{Cell, Row};
use crate::{Error, Result};

/// The call families (`io_class` names), in file order.
pub const FAMILIES: [&str; 8] = {
    use ra_syscalls::IoClass as C;
    [
        C::Read.name(),
        C::Write.name(),
        C::Meta.name(),
        C::Sync.name(),
        C::OpenClose.name(),
        C::Dir.name(),
        C::Async.name(),
        C::Other.name(),
    ]
};

/// A family's file name part (`open/close` is `open-close`).
pub fn family_file(f: &str) -> String {
    f.replace('/', "-")
}

/// The columns of `calls-FAMILY.csv`, as indices into the `calls` table: the common columns,
/// then the argument columns of every registry call of the family.
pub fn family_columns(family: &str) -> Vec<u16> {
    let s = columns::calls();
    let mut v: Vec<u16> = (0..columns::c::FIRST_ARG).collect();
    for d in ra_syscalls::REGISTRY {
        if ra_syscalls::io_class(d.trace_name).name() != family
            && ra_syscalls::io_class(d.name).name() != family
        {
            continue;
        }
        for ac in s.arg_cols(d) {
            for c in [ac.value, ac.length, ac.digest].into_iter().flatten() {
                if !v.contains(&c) {
                    v.push(c);
                }
            }
        }
    }
    v[columns::c::FIRST_ARG as usize..].sort_unstable();
    v
}

/// Compression of the CSV files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsvCompress {
    /// Plain `.csv` files.
    None,
    /// Through `xz -T1` (xz-utils), as `.csv.xz`.
    Xz,
}

/// One CSV file being written.
struct CsvFile {
    tmp: PathBuf,
    dest: PathBuf,
    out: Option<BufWriter<Box<dyn Write + Send>>>,
    child: Option<Child>,
    line: Vec<u8>,
}

impl CsvFile {
    fn create(dir: &Path, name: &str, header: &[&str], compress: CsvCompress) -> Result<CsvFile> {
        ra_fsstate::private::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let ext = if compress == CsvCompress::Xz { ".csv.xz" } else { ".csv" };
        let dest = dir.join(format!("{name}{ext}"));
        let tmp = dir.join(format!(".{name}{ext}.partial"));
        let f: File = ra_fsstate::private::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        let (w, child): (Box<dyn Write + Send>, Option<Child>) = match compress {
            CsvCompress::None => (Box::new(f), None),
            CsvCompress::Xz => {
                let mut c = Command::new("xz")
                    .args(["-z", "-c", "-T1", "-6"])
                    .stdin(Stdio::piped())
                    .stdout(f)
                    .spawn()
                    .map_err(|e| Error::io(Path::new("xz (xz-utils)"), e))?;
                let stdin = c.stdin.take().expect("a piped stdin");
                (Box::new(stdin), Some(c))
            }
        };
        let mut f = CsvFile {
            tmp,
            dest,
            out: Some(BufWriter::with_capacity(1 << 20, w)),
            child,
            line: Vec::new(),
        };
        f.line.extend_from_slice(header.join(",").as_bytes());
        f.end_line()?;
        Ok(f)
    }

    fn end_line(&mut self) -> Result<()> {
        self.line.push(b'\n');
        let out = self.out.as_mut().expect("an open file");
        out.write_all(&self.line).map_err(|e| Error::io(&self.tmp, e))?;
        self.line.clear();
        Ok(())
    }

    fn finish(mut self) -> Result<PathBuf> {
        let out = self.out.take().expect("an open file");
        let w = out.into_inner().map_err(|e| Error::io(&self.tmp, e.into_error()))?;
        drop(w);
        if let Some(mut c) = self.child.take() {
            let st = c.wait().map_err(|e| Error::io(&self.tmp, e))?;
            if !st.success() {
                return Err(Error::io(&self.tmp, std::io::Error::other(format!("xz: {st}"))));
            }
        }
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| Error::io(&self.dest, e))?;
        Ok(self.dest.clone())
    }
}

impl Drop for CsvFile {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            if let Some(mut c) = self.child.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// A cell as a CSV field (RFC 4180: quoted when it holds a comma, quote or line break).
fn field(out: &mut Vec<u8>, ty: ColType, v: &Cell<'_>, escaped: &mut u64) {
    let mut tmp = Vec::new();
    let text: &[u8] = match (ty, v) {
        (_, Cell::Int(i)) => {
            out.extend_from_slice(i.to_string().as_bytes());
            return;
        }
        (_, Cell::Bool(b)) => {
            out.extend_from_slice(if *b { b"true" } else { b"false" });
            return;
        }
        (ColType::Bytes, Cell::Bytes(b) | Cell::Text(b)) | (_, Cell::Bytes(b)) => {
            ra_hex::encode_into(out, b);
            return;
        }
        (_, Cell::Digest(d)) => {
            ra_hex::encode_into(out, d);
            return;
        }
        (_, Cell::Static(t)) => {
            field(out, ty, &Cell::Text(t.as_bytes()), escaped);
            return;
        }
        (_, Cell::Text(b)) => {
            if text_into(b, &mut tmp) {
                *escaped += 1;
            }
            &tmp
        }
        (_, Cell::List(items)) => {
            let v: Vec<String> = items
                .iter()
                .map(|it| {
                    let mut t = Vec::new();
                    if text_into(it, &mut t) {
                        *escaped += 1;
                    }
                    String::from_utf8(t).unwrap_or_default()
                })
                .collect();
            tmp = serde_json::to_vec(&v).unwrap_or_default();
            &tmp
        }
    };
    if text.iter().any(|&b| matches!(b, b',' | b'"' | b'\n' | b'\r')) {
        out.push(b'"');
        for &b in text {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(text);
    }
}

/// A family's file and where each `calls` column goes in its lines.
struct FamilyFile {
    file: CsvFile,
    /// Per `calls` column: its position in the family's lines, or `u16::MAX`.
    pos: Vec<u16>,
    /// The `calls` column of each position.
    cols: Vec<u16>,
}

/// The CSV sink of one trace.
pub struct CsvSink {
    dir: PathBuf,
    compress: CsvCompress,
    meta: TraceMeta,
    families: Vec<(&'static str, Option<FamilyFile>)>,
    others: Vec<(Table, CsvFile, Vec<ColType>)>,
    /// Cells of a call whose column its family's file does not have (fs operations mapped to
    /// calls of another family): left out, counted.
    pub dropped: u64,
    /// Text values that were not UTF-8 and were written escaped (`\xNN`).
    pub escaped: u64,
    /// The files put in place by [`Sink::finish`], in the order
    /// written.
    pub files: Vec<PathBuf>,
    cells: Vec<Option<usize>>,
}

impl CsvSink {
    /// A sink writing beneath `out/host=H/trace=T/`: a `calls-FAMILY.csv` per call family
    /// (created when a call of the family comes) and one file per other table of `tables`
    /// (created now, header row included). Each is written as `.NAME.partial` and renamed
    /// by `finish`; [`crate::Error::Io`] when a file cannot be created.
    pub fn new(
        out: &Path,
        meta: &TraceMeta,
        tables: &[Table],
        compress: CsvCompress,
    ) -> Result<CsvSink> {
        let dir = out.join(format!("host={}", meta.host)).join(format!("trace={}", meta.trace_id));
        let mut others = Vec::new();
        for &t in tables {
            if t == Table::Calls {
                continue;
            }
            let cols: Vec<Column> = t.columns();
            let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
            let f = CsvFile::create(&dir, t.name(), &names, compress)?;
            others.push((t, f, cols.iter().map(|c| c.ty).collect()));
        }
        Ok(CsvSink {
            dir,
            compress,
            meta: meta.clone(),
            families: FAMILIES.iter().map(|f| (*f, None)).collect(),
            others,
            dropped: 0,
            escaped: 0,
            files: Vec::new(),
            cells: Vec::new(),
        })
    }

    fn consts(&self, col: usize) -> Option<&str> {
        match col as u16 {
            columns::HOST => Some(&self.meta.host),
            columns::TRACE_ID => Some(&self.meta.trace_id),
            columns::c::BACKEND => Some(&self.meta.backend),
            _ => None,
        }
    }
}

impl Sink for CsvSink {
    fn call(&mut self, row: &Row<'_>) -> Result<()> {
        let fam = crate::row::io_class(row.ev);
        let g = self.families.iter().position(|(f, _)| *f == fam).unwrap_or(FAMILIES.len() - 1);
        if self.families[g].1.is_none() {
            let cols = family_columns(self.families[g].0);
            let all = &columns::calls().columns;
            let names: Vec<&str> = cols.iter().map(|&c| all[c as usize].name.as_str()).collect();
            let name = format!("calls-{}", family_file(self.families[g].0));
            let file = CsvFile::create(&self.dir, &name, &names, self.compress)?;
            let mut pos = vec![u16::MAX; all.len()];
            for (i, &c) in cols.iter().enumerate() {
                pos[c as usize] = i as u16;
            }
            self.families[g].1 = Some(FamilyFile { file, pos, cols });
        }
        let consts: Vec<(usize, String)> =
            (0..3).filter_map(|c| self.consts(c).map(|v| (c, v.to_string()))).collect();
        let ff = self.families[g].1.as_mut().expect("the family's file");
        self.cells.clear();
        self.cells.resize(ff.cols.len(), None);
        for (k, (c, _)) in row.cells.iter().enumerate() {
            match ff.pos.get(*c as usize) {
                Some(&p) if p != u16::MAX => self.cells[p as usize] = Some(k),
                _ => self.dropped += 1,
            }
        }
        let types = &columns::calls().columns;
        let mut line = std::mem::take(&mut ff.file.line);
        for (i, &c) in ff.cols.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            let c = c as usize;
            if let Some((_, v)) = consts.iter().find(|(k, _)| *k == c) {
                field(&mut line, ColType::Text, &Cell::Text(v.as_bytes()), &mut self.escaped);
            } else if let Some(k) = self.cells[i] {
                field(&mut line, types[c].ty, &row.cells[k].1, &mut self.escaped);
            }
        }
        ff.file.line = line;
        ff.file.end_line()
    }

    fn row(&mut self, table: Table, cells: &[(u16, Cell<'_>)]) -> Result<()> {
        let (host, trace) = (self.meta.host.clone(), self.meta.trace_id.clone());
        let Some((_, f, types)) = self.others.iter_mut().find(|(t, _, _)| *t == table) else {
            return Ok(());
        };
        let mut line = std::mem::take(&mut f.line);
        for (i, ty) in types.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            match i {
                0 => field(&mut line, *ty, &Cell::Text(host.as_bytes()), &mut self.escaped),
                1 => field(&mut line, *ty, &Cell::Text(trace.as_bytes()), &mut self.escaped),
                _ => {
                    if let Some((_, v)) = cells.iter().find(|(c, _)| *c as usize == i) {
                        field(&mut line, *ty, v, &mut self.escaped);
                    }
                }
            }
        }
        f.line = line;
        f.end_line()
    }

    fn finish(&mut self) -> Result<()> {
        for (_, ff) in &mut self.families {
            if let Some(ff) = ff.take() {
                self.files.push(ff.file.finish()?);
            }
        }
        for (_, f, _) in std::mem::take(&mut self.others) {
            self.files.push(f.finish()?);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_hold_their_calls_arguments_under_the_parquet_names() {
        let all = &columns::calls().columns;
        let names = |f: &str| -> Vec<String> {
            family_columns(f).iter().map(|&c| all[c as usize].name.clone()).collect()
        };
        let read = names("read");
        for n in ["host", "trace_id", "unique_id", "call", "fd_path", "fd", "buf_length", "count"] {
            assert!(read.iter().any(|c| c == n), "read lacks {n}: {read:?}");
        }
        assert!(!read.iter().any(|c| c == "pathname"), "{read:?}");
        let oc = names("open/close");
        assert!(oc.iter().any(|c| c == "pathname") && oc.iter().any(|c| c == "flags"));
        let mut every: Vec<u16> = FAMILIES.iter().flat_map(|f| family_columns(f)).collect();
        every.sort_unstable();
        every.dedup();
        assert_eq!(every.len(), all.len(), "every calls column is in some family's file");
    }

    #[test]
    fn fields_are_rfc4180() {
        let mut o = Vec::new();
        let mut n = 0;
        field(&mut o, ColType::Text, &Cell::Text(b"a,\"b\"\nc"), &mut n);
        assert_eq!(o, b"\"a,\"\"b\"\"\nc\"");
        o.clear();
        field(&mut o, ColType::Bytes, &Cell::Bytes(&[0, 0xff]), &mut n);
        assert_eq!(o, b"00ff");
        o.clear();
        field(&mut o, ColType::Text, &Cell::Text(b"/x\xff"), &mut n);
        assert_eq!((o.as_slice(), n), (&b"/x\\xff"[..], 1));
    }

    /// The line docs/TRACE_FORMAT.md 12.4 gives a family's file: its argument columns.
    pub(crate) fn doc_line(f: &str) -> String {
        let all = &columns::calls().columns;
        let args: Vec<String> = family_columns(f)[columns::c::FIRST_ARG as usize..]
            .iter()
            .map(|&c| format!("`{}`", all[c as usize].name))
            .collect();
        format!("* `calls-{}.csv`: {}", family_file(f), args.join(", "))
    }

    #[test]
    fn trace_format_12_4_lists_every_familys_columns() {
        let doc = include_str!("../../../docs/TRACE_FORMAT.md");
        let sec = &doc[doc.find("### 12.4").expect("section 12.4")..];
        for f in FAMILIES {
            let line = doc_line(f);
            assert!(sec.contains(&line), "docs/TRACE_FORMAT.md 12.4 lacks\n{line}");
        }
    }
}
