//! Where a profile goes: every producer (the live profiler, offline profiles of traces,
//! `merge`) streams a [`Meta`] and then [`Interval`]s as they complete into a
//! [`ProfileSink`]; text and JSON are written per interval, the SVG at `finish`.

use std::io::{self, Write};

use crate::rows::Weight;
use crate::svg::{HeatMaps, SvgOptions};
use crate::text::{self, IntervalView, TextOptions};
use crate::{json, Interval, Meta, Profile};

/// The output side of a profile. Call `meta` once, then `interval` per completed interval in
/// time order, then `finish` once.
pub trait ProfileSink {
    /// The profile's description, before any interval: it says how to read the histograms
    /// (their scale and unit), so sinks take those from here.
    fn meta(&mut self, meta: &Meta) -> io::Result<()>;
    /// One completed interval; the streaming sinks write (and flush) it at once.
    fn interval(&mut self, iv: &Interval) -> io::Result<()>;
    /// The end of the profile: sinks that need every interval (the SVG) write now; the
    /// others flush.
    fn finish(&mut self) -> io::Result<()>;
}

/// bcc-style histograms (or `--table` lines), flushed after each interval so a live profile
/// shows each one as it completes.
pub struct TextSink<W: Write> {
    out: W,
    opts: TextOptions,
    /// The start of the first interval: times are shown relative to it.
    origin_ns: Option<u64>,
}

impl<W: Write> TextSink<W> {
    /// A sink writing to `out`; `opts.scale` and `opts.unit` are replaced by the profile's
    /// own at [`ProfileSink::meta`].
    pub fn new(out: W, opts: TextOptions) -> Self {
        TextSink { out, opts, origin_ns: None }
    }
}

impl<W: Write> ProfileSink for TextSink<W> {
    fn meta(&mut self, meta: &Meta) -> io::Result<()> {
        self.opts.scale = meta.buckets;
        self.opts.unit = meta.unit();
        text::write_meta(&mut self.out, meta)?;
        self.out.flush()
    }

    fn interval(&mut self, iv: &Interval) -> io::Result<()> {
        let origin = *self.origin_ns.get_or_insert(iv.start_ns);
        let view = IntervalView::new(iv, origin, &self.opts);
        if self.opts.table {
            text::write_table_interval(&mut self.out, &view)?;
        } else {
            text::write_interval(&mut self.out, &view)?;
        }
        self.out.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// JSON Lines (docs/PROFILE.md), one interval's lines at a time.
pub struct JsonSink<W: Write> {
    out: W,
    scale: crate::Scale,
    weight: Weight,
}

impl<W: Write> JsonSink<W> {
    /// A sink writing JSON Lines to `out`, bucket counts only (`Weight::Count`).
    pub fn new(out: W) -> Self {
        JsonSink { out, scale: crate::Scale::Log2, weight: Weight::Count }
    }

    /// With `Weight::Time`, every `hist` line also carries `time_buckets`.
    pub fn with_weight(out: W, weight: Weight) -> Self {
        JsonSink { weight, ..JsonSink::new(out) }
    }
}

impl<W: Write> ProfileSink for JsonSink<W> {
    fn meta(&mut self, meta: &Meta) -> io::Result<()> {
        self.scale = meta.buckets;
        // At once: a live profile's reader learns that the probes are attached.
        writeln!(self.out, "{}", json::meta_value(meta))?;
        self.out.flush()
    }

    fn interval(&mut self, iv: &Interval) -> io::Result<()> {
        for v in json::interval_values_in(iv, self.scale, self.weight) {
            writeln!(self.out, "{v}")?;
        }
        self.out.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The SVG heat maps, written at `finish`. Keeps per key its whole-profile histogram and its
/// non-empty cells (one column per interval: a very long run keeps one column per interval).
pub struct SvgSink<W: Write> {
    out: W,
    maps: HeatMaps,
}

impl<W: Write> SvgSink<W> {
    /// A sink that writes one SVG document to `out` at [`ProfileSink::finish`], nothing
    /// before.
    pub fn new(out: W, opts: SvgOptions) -> Self {
        SvgSink { out, maps: HeatMaps::new(opts) }
    }
}

impl<W: Write> ProfileSink for SvgSink<W> {
    fn meta(&mut self, meta: &Meta) -> io::Result<()> {
        self.maps.meta = meta.clone();
        Ok(())
    }

    fn interval(&mut self, iv: &Interval) -> io::Result<()> {
        self.maps.add(iv);
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        let svg = crate::svg::render(&self.maps.layout());
        self.out.write_all(svg.as_bytes())?;
        self.out.flush()
    }
}

/// Several sinks fed the same profile (text on stdout and an SVG, say).
#[derive(Default)]
pub struct Tee(pub Vec<Box<dyn ProfileSink + Send>>);

impl ProfileSink for Tee {
    fn meta(&mut self, meta: &Meta) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|s| s.meta(meta))
    }
    fn interval(&mut self, iv: &Interval) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|s| s.interval(iv))
    }
    fn finish(&mut self) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|s| s.finish())
    }
}

/// Keeps the whole profile in memory (tests, merge).
#[derive(Default)]
pub struct Collect(pub Profile);

impl ProfileSink for Collect {
    fn meta(&mut self, meta: &Meta) -> io::Result<()> {
        self.0.meta = meta.clone();
        Ok(())
    }
    fn interval(&mut self, iv: &Interval) -> io::Result<()> {
        self.0.intervals.push(iv.clone());
        Ok(())
    }
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Stream a whole profile into a sink.
pub fn emit(p: &Profile, sink: &mut dyn ProfileSink) -> io::Result<()> {
    sink.meta(&p.meta)?;
    for iv in &p.intervals {
        sink.interval(iv)?;
    }
    sink.finish()
}
