//! [`DirStore`]: content objects in a directory, one file per digest
//! (`<dir>/<first two hex digits>/<64 hex digits>`). A [`BlobSink`] for scans and a
//! [`ContentSource`] for restores, so a manifest plus its store is a complete copy of a tree.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::entry::{Digest, CHUNK_BYTES};
use crate::error::{BoxError, Error, Result};
use crate::restore::{ChunkFn, ContentSource};
use crate::scan::BlobSink;

/// A directory of content objects.
pub struct DirStore {
    root: PathBuf,
    /// The object being written: its digest, the temporary file and its path.
    open: Option<(Digest, File, PathBuf)>,
}

fn serr<'a>(path: &'a Path, call: &'static str) -> impl FnOnce(io::Error) -> Error + 'a {
    move |source| Error::Store { path: path.to_path_buf(), call, source }
}

impl DirStore {
    /// Open (creating it if needed) the store at `root`.
    pub fn open(root: &Path) -> Result<DirStore> {
        crate::private::create_dir_all(root).map_err(serr(root, "mkdir"))?;
        Ok(DirStore { root: root.to_path_buf(), open: None })
    }

    /// Where the object for `d` lives.
    pub fn object_path(&self, d: &Digest) -> PathBuf {
        let h = d.to_hex();
        self.root.join(&h[..2]).join(&h)
    }

    /// Whether the store holds `d`.
    pub fn contains(&self, d: &Digest) -> bool {
        self.object_path(d).is_file()
    }

    fn file_for(&mut self, d: &Digest) -> Result<&File> {
        if self.open.as_ref().is_none_or(|(od, _, _)| od != d) {
            let tmp = self.root.join(format!(".tmp-{}-{}", d.to_hex(), std::process::id()));
            // Contents of the scanned tree: private, as traces are.
            let _ = fs::remove_file(&tmp);
            let f = crate::private::create_new(&tmp).map_err(serr(&tmp, "open"))?;
            self.open = Some((*d, f, tmp));
        }
        Ok(&self.open.as_ref().expect("just opened").1)
    }
}

impl BlobSink for DirStore {
    fn wants(&mut self, d: &Digest, _size: u64) -> bool {
        !self.contains(d)
    }

    fn chunk(&mut self, d: &Digest, offset: u64, data: &[u8]) -> Result<(), BoxError> {
        let f = self.file_for(d)?;
        f.write_all_at(data, offset).map_err(|source| Error::Store {
            path: self.root.clone(),
            call: "pwrite",
            source,
        })?;
        Ok(())
    }

    fn finish(&mut self, d: &Digest, size: u64) -> Result<(), BoxError> {
        self.file_for(d)?.set_len(size).map_err(serr(&self.root, "ftruncate"))?;
        let Some((_, _, tmp)) = self.open.take() else { return Ok(()) };
        let dst = self.object_path(d);
        if let Some(dir) = dst.parent() {
            crate::private::create_dir_all(dir).map_err(serr(dir, "mkdir"))?;
        }
        fs::rename(&tmp, &dst).map_err(serr(&dst, "rename"))?;
        Ok(())
    }
}

impl ContentSource for DirStore {
    fn for_each_chunk(&mut self, f: &mut ChunkFn<'_>) -> Result<()> {
        let mut buf = vec![0u8; CHUNK_BYTES];
        let mut subdirs: Vec<PathBuf> = fs::read_dir(&self.root)
            .map_err(serr(&self.root, "readdir"))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().is_some_and(|n| n.len() == 2) && p.is_dir())
            .collect();
        subdirs.sort();
        for sub in subdirs {
            for obj in fs::read_dir(&sub).map_err(serr(&sub, "readdir"))? {
                let obj = obj.map_err(serr(&sub, "readdir"))?.path();
                let Some(d) = obj.file_name().and_then(|n| n.to_str()).and_then(Digest::from_hex)
                else {
                    continue;
                };
                let file = File::open(&obj).map_err(serr(&obj, "open"))?;
                let mut off = 0u64;
                loop {
                    let n = file.read_at(&mut buf, off).map_err(serr(&obj, "pread"))?;
                    if n == 0 {
                        break;
                    }
                    if buf[..n].iter().any(|&b| b != 0) {
                        f(&d, off, &buf[..n])?;
                    }
                    off += n as u64;
                }
            }
        }
        Ok(())
    }
}
