//! The output chain every trace writer of the toolkit shares (`record` with either backend,
//! and `fs`): compression, and (issue 19) sealing and encryption. One set of flags, turned
//! into [`dataseries::WriterOptions`] in one place.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use dataseries::{Compression, WriterOptions};
use ra_trace::key::Key;
use ra_trace::Destination;

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

/// `--key` of the commands that read traces (info, dump, replay, compile, profile, export,
/// diff).
#[derive(Args, Debug, Clone, Default)]
pub struct ReadKeyArgs {
    /// The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an
    /// encrypted trace, and checks the seal of every trace read (the whole trace once, when
    /// opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops
    /// the command with one line and exit status 1; a trace that is not sealed (unless
    /// encrypted with the key) is refused the same way. A trace cut before its final seal is
    /// read up to its last seal, with a note.
    #[arg(long, value_name = "KEYFILE")]
    pub key: Option<PathBuf>,
}

/// Flags of the output chain.
#[derive(Args, Debug, Clone)]
pub struct ChainArgs {
    /// Compression of the trace's extents, on two background threads. Standard DataSeries
    /// modes only; each section is stored raw when compressing does not shrink it. lz4 by
    /// default: it costs nothing measurable on data that does not compress and shrinks
    /// traces of text, zeros and repeated buffers 17-100x, which is disk traffic a
    /// full-buffer recorder saves (docs/PERFORMANCE.md, record-chain). `none` for readers
    /// without lz4 (DataSeries builds before lz4 support).
    #[arg(long, value_enum, default_value_t = Compress::Lz4, alias = "compression")]
    pub compress: Compress,
    /// Seal the trace with the key in KEYFILE (`reanimator keygen`): a keyed MAC chain over
    /// every extent, so that `reanimator verify` finds any modified, dropped, duplicated,
    /// reordered or cut extent. The trace stays an ordinary DataSeries file.
    #[arg(long, value_name = "KEYFILE")]
    pub seal: Option<std::path::PathBuf>,
    /// Encrypt the trace with the key in KEYFILE (AES-256-GCM over 1 MiB chunks):
    /// without the key it shows its size and nothing else. `info`, `dump`, `replay`,
    /// `verify` and the other readers take `--key KEYFILE`. Compression and sealing apply
    /// before encryption.
    #[arg(long, value_name = "KEYFILE")]
    pub encrypt: Option<std::path::PathBuf>,
}

/// Flags of a trace streamed to a collector (`record` and `fs`; `anonymize` writes a file).
#[derive(Args, Debug, Clone)]
pub struct NetArgs {
    /// With `-o tcp://HOST:PORT`: when the collector fails (connection lost, collector
    /// killed, no acknowledgement for 30 s), go on writing here: a trace holding everything
    /// the collector did not acknowledge (`reanimator collect --join` puts the two parts
    /// together). Without it such a failure stops the recording.
    #[arg(long, value_name = "FILE")]
    pub spill: Option<PathBuf>,
    /// With `-o tcp://`: bytes sent and not yet acknowledged by the collector, at most (K, M,
    /// G suffixes), or one extent if that is larger; the trace writer waits beyond
    /// (backpressure).
    #[arg(long, value_name = "SIZE", value_parser = crate::record::parse_size, default_value = "64M")]
    pub net_buffer: u64,
}

impl ChainArgs {
    /// The DataSeries writer settings these flags ask for (reads the key file).
    pub fn writer_options(&self) -> Result<WriterOptions> {
        self.writer_options_for(&Destination::File(PathBuf::new()))
    }

    /// The writer settings for a trace sent to `dest`: a stream to a collector with a host key
    /// (`--key`) is sealed with that key, which the collector checks the seal under.
    pub fn writer_options_for(&self, dest: &Destination) -> Result<WriterOptions> {
        let mut o = WriterOptions::uncompressed();
        if self.compress != Compress::None {
            o.compression = vec![self.compress.mode()];
        }
        let serial = Key::serial().context("no random serial number for the trace")?;
        let host_key = match dest {
            Destination::Tcp(t) => t.auth.as_ref(),
            Destination::File(_) | Destination::Stdout => None,
        };
        if let Some(path) = &self.seal {
            let key = Key::load(path).context("--seal")?;
            if host_key.is_some_and(|h| *h != key) {
                anyhow::bail!(
                    "--seal {}: a stream to a collector with --key is sealed with the host key \
                     (the collector checks the seal under it); leave out --seal, or give the host \
                     key",
                    path.display()
                );
            }
            o.seal = Some(key.seal_options(serial));
        } else if let Some(k) = host_key {
            o.seal = Some(k.seal_options(serial));
        }
        if let Some(path) = &self.encrypt {
            let key = Key::load(path).context("--encrypt")?;
            o.encrypt = Some(key.encrypt_options(serial));
        }
        Ok(o)
    }
}

impl NetArgs {
    /// Where `-o OUTPUT` sends the trace: a file, or `tcp://HOST:PORT[/LABEL]` (a collector,
    /// `reanimator collect`), with these network settings, the chain `chain` (not every part
    /// of which can be streamed) and its `--key`: a host key (`reanimator keygen
    /// --host`) the sender authenticates with.
    pub fn destination(
        &self,
        chain: &ChainArgs,
        output: &Path,
        key: Option<&Key>,
    ) -> anyhow::Result<Destination> {
        let d = Destination::parse(output.as_os_str()).map_err(|e| anyhow::anyhow!("-o {e}"))?;
        match d {
            Destination::File(_) if self.spill.is_some() => {
                anyhow::bail!(
                    "--spill needs -o tcp://HOST:PORT (a file output has nothing to spill)"
                )
            }
            Destination::File(p) => Ok(Destination::File(p)),
            Destination::Stdout if self.spill.is_some() => {
                anyhow::bail!(
                    "--spill needs -o tcp://HOST:PORT (standard output has nothing to spill)"
                )
            }
            Destination::Stdout if std::io::IsTerminal::is_terminal(&std::io::stdout()) => {
                anyhow::bail!(
                    "-o -: standard output is a terminal; pipe it to a reader (`| reanimator dump \
                     -`) or give -o FILE"
                )
            }
            Destination::Stdout => Ok(Destination::Stdout),
            Destination::Tcp(_) if chain.encrypt.is_some() => anyhow::bail!(
                "--encrypt with -o tcp:// is not supported yet (the collector frames DataSeries \
                 extents, an encrypted trace is a stream of chunks): write the encrypted trace to \
                 a file, or stream it sealed (--seal) without --encrypt"
            ),
            Destination::Tcp(mut t) => {
                if self.net_buffer < 1 << 20 {
                    anyhow::bail!("--net-buffer {}: at least 1M", self.net_buffer);
                }
                t.spill = self.spill.clone();
                t.buffer_bytes = usize::try_from(self.net_buffer).unwrap_or(usize::MAX);
                if let Some(k) = key {
                    if k.host().is_none() {
                        anyhow::bail!(
                            "--key: with -o tcp:// the sender authenticates with a host key, and \
                             this is a master key (which only the collector holds); make a host \
                             key on the collecting host with `reanimator keygen --host NAME --from \
                             MASTER FILE`"
                        );
                    }
                    t.auth = Some(k.clone());
                }
                Ok(Destination::Tcp(t))
            }
        }
    }
}

/// The summary of a network output: `tcp://H:P (N MB acknowledged by the collector, file F)`,
/// and what went to the spill file.
pub fn net_summary(r: &ra_trace::NetReport) -> String {
    let mut s = format!(
        "tcp://{} ({:.1} MB acknowledged by the collector, its file {})",
        r.addr,
        r.acked as f64 / 1e6,
        r.remote_name
    );
    if let Some((p, from)) = &r.spill {
        s.push_str(&format!(
            ", {} in the spill file {}",
            if *from == 0 { "the whole trace" } else { "the rest" },
            p.display()
        ));
    }
    s
}

/// What became of a network trace, for the `--json` summaries: where it went, the bytes the
/// collector acknowledged, its file there, and the spill file if one was used.
pub fn net_json(r: &ra_trace::NetReport) -> serde_json::Value {
    serde_json::json!({
        "destination": format!("tcp://{}", r.addr),
        "acknowledged_bytes": r.acked,
        "collector_file": r.remote_name,
        "spill": r.spill.as_ref().map(|(p, from)| serde_json::json!({
            "path": p.display().to_string(),
            "from_byte": from,
        })),
    })
}
