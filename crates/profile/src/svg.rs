//! SVG latency heat maps in Brendan Gregg's style: per key, x = interval, y = log2 bucket,
//! colour = operations (white → yellow → red), with the whole profile's histogram as bars
//! beside it; `<title>` elements give each cell's interval, bucket range and count.
//! [`HeatMaps`] accumulates, [`HeatMaps::layout`] computes the geometry, [`render`] only
//! writes it out.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::rows::{human, human_ns, short_ns, weighted, Weight};
use crate::text::clock;
use crate::{Hist, Interval, Key, Meta, BUCKETS};

/// How the SVG is drawn.
#[derive(Clone, Debug)]
pub struct SvgOptions {
    /// Draw at most this many keys (the largest total time first).
    pub top: usize,
    /// Local time's offset from UTC in seconds (cell titles show the clock).
    pub utc_offset_s: i64,
    /// Colour and bars by calls, or by the time they took (`--weight time`).
    pub weight: Weight,
}

impl Default for SvgOptions {
    fn default() -> Self {
        SvgOptions { top: 12, utc_offset_s: 0, weight: Weight::Count }
    }
}

#[derive(Default)]
struct KeyCells {
    total: Hist,
    /// (column, bucket, count) of the non-empty cells.
    cells: Vec<(u32, u8, u64)>,
}

/// What the heat maps need of a profile: one column per interval, non-empty cells per key.
pub struct HeatMaps {
    /// The profile's description (its scale, unit, grouping, target: the title and the axes
    /// come from it); set it before [`HeatMaps::add`], which bins by its scale.
    pub meta: Meta,
    opts: SvgOptions,
    /// (start_ns, end_ns, partial) per column.
    cols: Vec<(u64, u64, bool)>,
    keys: BTreeMap<Key, KeyCells>,
}

impl HeatMaps {
    /// Empty heat maps drawn with `opts`, for a profile of [`Meta::default`] until
    /// [`HeatMaps::meta`] is set.
    pub fn new(opts: SvgOptions) -> HeatMaps {
        HeatMaps { meta: Meta::default(), opts, cols: Vec::new(), keys: BTreeMap::new() }
    }

    /// Add one interval as the next column (intervals must come in time order); each key's
    /// whole-profile histogram grows by the interval's.
    pub fn add(&mut self, iv: &Interval) {
        let col = self.cols.len() as u32;
        self.cols.push((iv.start_ns, iv.end_ns, iv.partial));
        for (k, h) in &iv.hists {
            let kc = self.keys.entry(k.clone()).or_default();
            kc.total.merge(h);
            let values = weighted(h, self.meta.buckets, self.opts.weight);
            for (b, &c) in values.iter().enumerate() {
                if c > 0 {
                    kc.cells.push((col, b as u8, c));
                }
            }
        }
    }

    /// The geometry of the picture.
    pub fn layout(&self) -> Layout {
        let scale = self.meta.buckets;
        let unit = self.meta.unit();
        let time = self.opts.weight == Weight::Time;
        let show = |c: u64| if time { format!("{} of time", human_ns(c)) } else { c.to_string() };
        let axis = |v: u64| if unit == "ns" { short_ns(v) } else { human(v, unit) };
        let mut order: Vec<(&Key, &KeyCells)> = self.keys.iter().collect();
        order
            .sort_by(|a, b| b.1.total.total_ns.cmp(&a.1.total.total_ns).then_with(|| a.0.cmp(b.0)));
        let left_out = order.len().saturating_sub(self.opts.top);
        order.truncate(self.opts.top);
        let ncols = self.cols.len().max(1);
        let cell_w = (720 / ncols).clamp(2, 24) as u32;
        let heat_w = cell_w * ncols as u32;
        let (lo_b, hi_b) = order.iter().fold((BUCKETS - 1, 0), |(lo, hi), (_, kc)| {
            let f = kc.total.buckets.iter().position(|&c| c > 0).unwrap_or(lo);
            let l = kc.total.buckets.iter().rposition(|&c| c > 0).unwrap_or(hi);
            (lo.min(f), hi.max(l))
        });
        let (lo_b, hi_b) = if lo_b > hi_b { (0, 0) } else { (lo_b, hi_b) };
        let nrows = (hi_b - lo_b + 1) as u32;
        let origin = self.cols.first().map_or(0, |c| c.0);
        let width = (LEFT + heat_w + GAP + BAR_W + 90).max(640);
        let every = if self.meta.interval_ns == 0 {
            "one interval".to_string()
        } else {
            format!("intervals of {}", human_ns(self.meta.interval_ns))
        };
        let mut panels = Vec::new();
        let mut y = TOP;
        for (key, kc) in &order {
            let top = y + 18;
            let row_y = |b: usize| top + (hi_b - b) as u32 * CELL_H;
            let max_cell = kc.cells.iter().map(|c| c.2).max().unwrap_or(1);
            let cells = kc
                .cells
                .iter()
                .map(|&(col, b, c)| {
                    let (s, e, partial) = self.cols[col as usize];
                    let (blo, bhi) = scale.bounds(b as usize);
                    Rect {
                        x: LEFT + col * cell_w,
                        y: row_y(b as usize),
                        w: cell_w,
                        h: CELL_H,
                        fill: heat_colour(c, max_cell),
                        title: format!(
                            "{:.3} .. {:.3} s ({} .. {}{}): {blo} .. {bhi} {unit}: {}",
                            s.saturating_sub(origin) as f64 / 1e9,
                            e.saturating_sub(origin) as f64 / 1e9,
                            clock(s, self.opts.utc_offset_s),
                            clock(e, self.opts.utc_offset_s),
                            if partial { ", partial" } else { "" },
                            show(c)
                        ),
                    }
                })
                .collect();
            let totals = weighted(&kc.total, scale, self.opts.weight);
            let max_bar = totals.iter().copied().max().unwrap_or(1).max(1);
            let bars = (lo_b..=hi_b)
                .filter(|&b| totals[b] > 0)
                .map(|b| {
                    let c = totals[b];
                    let (blo, bhi) = scale.bounds(b);
                    Rect {
                        x: LEFT + heat_w + GAP,
                        y: row_y(b) + 1,
                        w: ((u128::from(c) * u128::from(BAR_W) / u128::from(max_bar)) as u32)
                            .max(1),
                        h: CELL_H - 2,
                        fill: (70, 110, 180),
                        title: format!("{blo} .. {bhi} {unit}: {} in the whole profile", show(c)),
                    }
                })
                .collect();
            let bar_labels: Vec<Label> = (lo_b..=hi_b)
                .filter(|&b| totals[b] > 0)
                .map(|b| {
                    let c = totals[b];
                    let w =
                        ((u128::from(c) * u128::from(BAR_W) / u128::from(max_bar)) as u32).max(1);
                    Label {
                        x: LEFT + heat_w + GAP + w + 3,
                        y: row_y(b) + CELL_H - 2,
                        text: if time { human_ns(c) } else { c.to_string() },
                        anchor: "start",
                    }
                })
                .collect();
            let row_labels: Vec<Label> = (lo_b..=hi_b)
                .map(|b| Label {
                    x: LEFT - 4,
                    y: row_y(b) + CELL_H - 2,
                    text: axis(scale.bounds(b).0),
                    anchor: "end",
                })
                .collect();
            let bottom = top + nrows * CELL_H;
            let step = ncols.div_ceil(6).max(1);
            let col_labels: Vec<Label> = (0..self.cols.len())
                .step_by(step)
                .map(|i| Label {
                    x: LEFT + i as u32 * cell_w,
                    y: bottom + 12,
                    text: format!("{:.0}s", self.cols[i].0.saturating_sub(origin) as f64 / 1e9),
                    anchor: "start",
                })
                .collect();
            let s = crate::rows::summary_in(&kc.total, scale);
            panels.push(Panel {
                heading: Label {
                    x: LEFT,
                    y: y + 13,
                    text: format!(
                        "{} {}{}: count {}, total {}, p50 {}, p99 {}, errors {}",
                        key.layer,
                        key.op,
                        if key.group.is_empty() {
                            String::new()
                        } else {
                            format!(" [{}]", key.group)
                        },
                        s.count,
                        human(s.total_ns, unit),
                        human(s.p50_ns, unit),
                        human(s.p99_ns, unit),
                        s.errors
                    ),
                    anchor: "start",
                },
                frame: Rect {
                    x: LEFT,
                    y: top,
                    w: heat_w,
                    h: nrows * CELL_H,
                    fill: (255, 255, 255),
                    title: String::new(),
                },
                cells,
                bars,
                labels: [row_labels, bar_labels, col_labels].into_iter().flatten().collect(),
            });
            y = bottom + 30;
        }
        Layout {
            width,
            height: y + 10,
            title: format!(
                "reanimator profile: {} ({}), {every}, by {}{}{}",
                self.meta.target,
                self.meta.source,
                self.meta.by,
                if self.meta.is_latency() {
                    String::new()
                } else {
                    format!(", {} ({unit})", self.meta.value)
                },
                if time { ", colour and bars: time spent (count x latency)" } else { "" }
            ),
            note: (left_out > 0).then(|| {
                format!("{left_out} more keys not shown (smaller total time; see --svg-top)")
            }),
            panels,
        }
    }
}

const LEFT: u32 = 70;
const TOP: u32 = 50;
const GAP: u32 = 24;
const BAR_W: u32 = 200;
const CELL_H: u32 = 12;

/// The computed picture. Coordinates and sizes are SVG user units (pixels), from the top
/// left corner.
pub struct Layout {
    /// The picture's width.
    pub width: u32,
    /// The picture's height.
    pub height: u32,
    /// The first line: what was profiled and how.
    pub title: String,
    /// A second, smaller line (keys left out, what the bars mean), if any.
    pub note: Option<String>,
    /// One panel per key (or pair of keys), top to bottom.
    pub panels: Vec<Panel>,
}

/// One key's (or pair's) part of the picture.
pub struct Panel {
    /// The line above the panel: the key and its figures.
    pub heading: Label,
    /// The heat map's area (white: no operations).
    pub frame: Rect,
    /// The heat map's cells, one per non-empty (interval, bucket); empty in the compare and
    /// correlation pictures.
    pub cells: Vec<Rect>,
    /// The bars: the whole profile's histogram beside a heat map, both sides' shares of
    /// calls in a comparison, the per-interval total times of a correlated pair.
    pub bars: Vec<Rect>,
    /// Axis and bar labels.
    pub labels: Vec<Label>,
}

/// A filled rectangle, with the tooltip the SVG's `<title>` gives it.
pub struct Rect {
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Width.
    pub w: u32,
    /// Height.
    pub h: u32,
    /// Fill colour, `(red, green, blue)`.
    pub fill: (u8, u8, u8),
    /// The tooltip (interval, bucket range, count); empty for none.
    pub title: String,
}

/// A line of text.
pub struct Label {
    /// The anchor point's x.
    pub x: u32,
    /// The baseline's y.
    pub y: u32,
    /// The text, unescaped ([`render`] escapes it).
    pub text: String,
    /// SVG's `text-anchor`: `start` (text right of `x`) or `end` (left of it).
    pub anchor: &'static str,
}

/// White → yellow → red by count on a log scale; any non-empty cell is at least pale yellow.
pub fn heat_colour(count: u64, max: u64) -> (u8, u8, u8) {
    if count == 0 {
        return (255, 255, 255);
    }
    let t = 0.25 + 0.75 * ((count as f64).ln_1p() / (max.max(1) as f64).ln_1p()).min(1.0);
    if t <= 0.5 {
        (255, 255, (255.0 * (1.0 - t / 0.5)).round() as u8)
    } else {
        (255, (255.0 * (1.0 - (t - 0.5) / 0.5)).round() as u8, 0)
    }
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            c if (c as u32) < 0x20 => o.push('?'),
            c => o.push(c),
        }
    }
    o
}

fn rect(s: &mut String, r: &Rect, stroke: &str) {
    let (cr, cg, cb) = r.fill;
    let _ = write!(
        s,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#{cr:02x}{cg:02x}{cb:02x}"{stroke}>"##,
        r.x, r.y, r.w, r.h
    );
    if !r.title.is_empty() {
        let _ = write!(s, "<title>{}</title>", esc(&r.title));
    }
    s.push_str("</rect>\n");
}

fn label(s: &mut String, l: &Label, size: u32) {
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" font-size="{size}" text-anchor="{}">{}</text>"#,
        l.x,
        l.y,
        l.anchor,
        esc(&l.text)
    );
}

/// The SVG document of a layout.
pub fn render(l: &Layout) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif">
<rect x="0" y="0" width="{w}" height="{h}" fill="#ffffff"/>"##,
        w = l.width,
        h = l.height
    );
    label(&mut s, &Label { x: 10, y: 20, text: l.title.clone(), anchor: "start" }, 14);
    if let Some(n) = &l.note {
        label(&mut s, &Label { x: 10, y: 38, text: n.clone(), anchor: "start" }, 11);
    }
    for p in &l.panels {
        label(&mut s, &p.heading, 12);
        rect(&mut s, &p.frame, r##" stroke="#999999" stroke-width="0.5""##);
        for c in p.cells.iter().chain(&p.bars) {
            rect(&mut s, c, "");
        }
        for t in &p.labels {
            label(&mut s, t, 9);
        }
    }
    s.push_str("</svg>\n");
    s
}

/// Two histograms of each key side by side (`profile compare --svg`): per key (differing
/// first, at most `top`), A's and B's share of calls per bucket as horizontal bars, A in blue
/// on the left, B in orange on the right, sharing the bucket rows.
pub fn comparison_layout(c: &crate::compare::Comparison, top: usize) -> Layout {
    let unit = c.a_meta.unit();
    let scale = c.a_meta.buckets;
    let axis = |v: u64| if unit == "ns" { short_ns(v) } else { human(v, unit) };
    // Room between the two sides for A's share labels.
    const SIDE_GAP: u32 = 56;
    let mut panels = Vec::new();
    let mut y = TOP;
    for k in c.keys.iter().take(top) {
        let rows = k.buckets.len() as u32;
        let head_y = y + 12;
        let top_y = y + 18;
        let maxs =
            k.buckets.iter().map(|b| b.a_share.max(b.b_share)).fold(0.0f64, f64::max).max(1e-9);
        let row_y = |i: usize| top_y + (rows - 1 - i as u32) * CELL_H;
        let mut bars = Vec::new();
        let mut labels = Vec::new();
        for (i, d) in k.buckets.iter().enumerate() {
            for (side, share, n, fill) in
                [(0u32, d.a_share, d.a, (70, 110, 180)), (1, d.b_share, d.b, (230, 130, 40))]
            {
                let w = ((share / maxs) * f64::from(BAR_W)).round() as u32;
                let x = LEFT + side * (BAR_W + SIDE_GAP);
                if n > 0 {
                    bars.push(Rect {
                        x,
                        y: row_y(i) + 1,
                        w: w.max(1),
                        h: CELL_H - 2,
                        fill,
                        title: format!(
                            "{}: {} .. {} {unit}: {n} calls, {:.1}%",
                            if side == 0 { "A" } else { "B" },
                            d.lo,
                            d.hi,
                            share * 100.0
                        ),
                    });
                    labels.push(Label {
                        x: x + w.max(1) + 3,
                        y: row_y(i) + CELL_H - 2,
                        text: format!("{:.1}%", share * 100.0),
                        anchor: "start",
                    });
                }
            }
            labels.push(Label {
                x: LEFT - 4,
                y: row_y(i) + CELL_H - 2,
                text: axis(scale.bounds(d.bucket).0),
                anchor: "end",
            });
        }
        let verdict = k.verdict.name();
        panels.push(Panel {
            heading: Label {
                x: LEFT,
                y: head_y,
                text: format!(
                    "{} {}{}: {verdict}; count {} -> {}, total {} -> {}, p {:.1e}, {:.1}% moved",
                    k.key.layer,
                    k.key.op,
                    if k.key.group.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", k.key.group)
                    },
                    k.sa.count,
                    k.sb.count,
                    human(k.sa.total_ns, unit),
                    human(k.sb.total_ns, unit),
                    k.test.p,
                    k.test.shift * 100.0
                ),
                anchor: "start",
            },
            frame: Rect {
                x: LEFT,
                y: top_y,
                w: 2 * BAR_W + SIDE_GAP,
                h: rows * CELL_H,
                fill: (255, 255, 255),
                title: String::new(),
            },
            cells: Vec::new(),
            bars,
            labels,
        });
        y = top_y + rows * CELL_H + 16;
    }
    Layout {
        // Wide enough for the headings (about 7 px a character at 12 px).
        width: (LEFT + 2 * BAR_W + SIDE_GAP + 80).max(980),
        height: y + 10,
        title: format!("reanimator profile compare: A {} (blue) vs B {} (orange)", c.a_name, c.b_name),
        note: Some(format!(
            "{} of {} keys differ (p < {:.1e} and >= {:.0}% of calls moved); bars: share of each side's calls",
            c.keys.iter().filter(|k| k.verdict == crate::compare::Verdict::Differs).count(),
            c.keys.len(),
            c.threshold,
            c.opts.min_shift * 100.0
        )),
        panels,
    }
}

/// Aligned series of correlated pairs (`--correlate ... --svg`): per pair two rows of bars
/// over the same interval axis, the total time of A's calls per interval above B's.
pub fn correlation_layout(m: &Meta, pairs: &[crate::correlate::Pair]) -> Layout {
    const ROW_H: u32 = 60;
    let n = pairs.iter().map(|p| p.starts.len()).max().unwrap_or(0) as u32;
    let col_w = (800 / n.max(1)).clamp(2, 24);
    let mut panels = Vec::new();
    let mut y = TOP;
    let name = |k: &Key| {
        format!(
            "{}:{}{}",
            k.layer,
            k.op,
            if k.group.is_empty() { String::new() } else { format!("@{}", k.group) }
        )
    };
    for p in pairs {
        let head_y = y + 12;
        let mut bars = Vec::new();
        let mut labels = Vec::new();
        for (row, s, fill) in [(0u32, &p.a, (70, 110, 180)), (1, &p.b, (230, 130, 40))] {
            let base = y + 18 + row * (ROW_H + 8);
            let max = s.total_ns.iter().copied().max().unwrap_or(0).max(1);
            for (i, &t) in s.total_ns.iter().enumerate() {
                let h = ((u128::from(t) * u128::from(ROW_H)) / u128::from(max)) as u32;
                if t > 0 {
                    bars.push(Rect {
                        x: LEFT + i as u32 * col_w,
                        y: base + ROW_H - h.max(1),
                        w: col_w.saturating_sub(1).max(1),
                        h: h.max(1),
                        fill,
                        title: format!(
                            "{}: interval {i}: {} calls, {} in total",
                            name(&s.key),
                            s.counts[i],
                            human_ns(t)
                        ),
                    });
                }
            }
            labels.push(Label {
                x: LEFT - 4,
                y: base + ROW_H / 2,
                text: if row == 0 { "A".into() } else { "B".into() },
                anchor: "end",
            });
            labels.push(Label { x: LEFT - 4, y: base + 9, text: human_ns(max), anchor: "end" });
        }
        let r = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:+.2}"));
        panels.push(Panel {
            heading: Label {
                x: LEFT,
                y: head_y,
                text: format!(
                    "A {} / B {}: r(count) {}, r(latency) {}, r(time) {}",
                    name(&p.a.key),
                    name(&p.b.key),
                    r(p.r_count),
                    r(p.r_latency),
                    r(p.r_time)
                ),
                anchor: "start",
            },
            frame: Rect {
                x: LEFT,
                y: y + 18,
                w: n.max(1) * col_w,
                h: 2 * ROW_H + 8,
                fill: (255, 255, 255),
                title: String::new(),
            },
            cells: Vec::new(),
            bars,
            labels,
        });
        y += 18 + 2 * ROW_H + 8 + 24;
    }
    Layout {
        width: LEFT + (n.max(1) * col_w).max(500) + 40,
        height: y + 10,
        title: format!("reanimator profile: correlation over time of {} ({})", m.target, m.source),
        note: Some("bars: total time of each key's calls per interval, on one time axis".into()),
        panels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_sit_where_their_counts_are() {
        let k = Key { layer: "syscall".into(), op: "read".into(), group: String::new() };
        let mut m = HeatMaps::new(SvgOptions::default());
        for i in 0..4u64 {
            let mut h = Hist::default();
            h.record(1000 << i, false);
            let iv = Interval {
                start_ns: i * 1_000_000_000,
                end_ns: (i + 1) * 1_000_000_000,
                hists: [(k.clone(), h)].into(),
                ..Interval::default()
            };
            m.add(&iv);
        }
        let l = m.layout();
        assert_eq!(l.panels.len(), 1);
        let p = &l.panels[0];
        assert_eq!(p.cells.len(), 4);
        // Later columns hold longer latencies: further right and higher up.
        assert!(p.cells[1].x > p.cells[0].x && p.cells[1].y < p.cells[0].y);
        assert!(
            p.cells[0].title.contains("512 .. 1023 ns: 1") || p.cells[0].title.contains("1024"),
            "{}",
            p.cells[0].title
        );
        let svg = render(&l);
        assert!(svg.contains("<title>"), "{svg}");
        assert_eq!(heat_colour(0, 5), (255, 255, 255));
        assert_eq!(heat_colour(5, 5), (255, 0, 0));
    }
}
