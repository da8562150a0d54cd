//! The output chain every trace writer of the toolkit shares (`record` with either backend,
//! and `fs`): compression, and (issue 19) sealing and encryption. One set of flags, turned
//! into [`dataseries::WriterOptions`] in one place.

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use dataseries::{Compression, WriterOptions};
use ra_trace::key::Key;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Compress {
    /// Store extents uncompressed.
    None,
    /// LZ4 (DataSeries mode 6, readable by the C++ library): fast, about 2-4x smaller on text
    /// and zeros; an extent that does not shrink is stored raw.
    Lz4,
    /// zlib level 6 (mode 2): smaller than lz4, several times more CPU.
    Zlib,
    /// bzip2 (mode 3): smallest, slowest.
    Bz2,
}

impl Compress {
    fn mode(self) -> Compression {
        match self {
            Compress::None => Compression::None,
            Compress::Lz4 => Compression::Lz4,
            Compress::Zlib => Compression::Zlib,
            Compress::Bz2 => Compression::Bz2,
        }
    }
}

/// Flags of the output chain.
#[derive(Args, Debug, Clone)]
pub struct ChainArgs {
    /// Compression of the trace's extents, on two background threads. Standard DataSeries
    /// modes only; each section is stored raw when compressing does not shrink it.
    #[arg(long, value_enum, default_value_t = Compress::None, alias = "compression")]
    pub compress: Compress,
    /// Seal the trace with the key in KEYFILE (`reanimator keygen`): a keyed MAC chain over
    /// every extent, so that `reanimator verify` finds any modified, dropped, duplicated,
    /// reordered or cut extent. The trace stays an ordinary DataSeries file.
    #[arg(long, value_name = "KEYFILE")]
    pub seal: Option<std::path::PathBuf>,
    /// Encrypt the trace with the key in KEYFILE (XChaCha20-Poly1305 over 1 MiB chunks):
    /// without the key it shows its size and nothing else. `info`, `dump`, `replay`,
    /// `verify` and the other readers take `--key KEYFILE`. Compression and sealing apply
    /// before encryption.
    #[arg(long, value_name = "KEYFILE")]
    pub encrypt: Option<std::path::PathBuf>,
}

impl ChainArgs {
    /// The DataSeries writer settings these flags ask for (reads the key file).
    pub fn writer_options(&self) -> Result<WriterOptions> {
        let mut o = WriterOptions::uncompressed();
        if self.compress != Compress::None {
            o.compression = vec![self.compress.mode()];
        }
        let serial = Key::serial().context("no random serial number for the trace")?;
        if let Some(path) = &self.seal {
            let key = Key::load(path).context("--seal")?;
            o.seal = Some(key.seal_options(serial));
        }
        if let Some(path) = &self.encrypt {
            let key = Key::load(path).context("--encrypt")?;
            o.encrypt = Some(key.encrypt_options(serial));
        }
        Ok(o)
    }
}
