//! Charts as SVG text: axes with units, one series per line, each with its own colour,
//! marker and dash so a chart stays readable printed in black and white.
//!
//! Every plotted point is a `<g class="pt">` carrying its values (`data-x`, `data-y`) next to
//! its position, so tests (and readers of the SVG) can check that what is drawn is what was
//! given.

use std::fmt::Write;

use crate::format::thousands;
use crate::units::format_size;

/// How values map onto an axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// From zero (or the smallest value, if negative) up.
    Linear,
    /// Linear from zero, for counts: whole-number ticks only.
    Count,
    /// Linear from zero, a percentage: the axis stops at 100 unless a value is above it.
    Percent,
    /// Powers of two, ticks labelled as sizes (512, 4K, 1M).
    Log2Size,
    /// Powers of two, ticks labelled as numbers (1, 2, 4, 8).
    Log2,
    /// Powers of ten.
    Log10,
    /// Percentiles spread by their nines: 50, 90, 99, 99.9 equally apart.
    Nines,
}

/// One axis.
#[derive(Debug, Clone)]
pub struct Axis {
    /// The label, with the unit: "Average response time (ms)".
    pub label: String,
    /// The scale.
    pub scale: Scale,
}

/// One line of points, drawn in the order given.
#[derive(Debug, Clone)]
pub struct Series {
    /// The legend's name.
    pub name: String,
    /// The style (colour, marker, dash), chosen per name for the whole report.
    pub style: usize,
    /// (x, y) values.
    pub points: Vec<(f64, f64)>,
}

/// A line across the plot at one value, e.g. a response-time limit.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Where, in axis values.
    pub value: f64,
    /// What it is.
    pub label: String,
}

/// A point singled out, e.g. the maximum found under a limit.
#[derive(Debug, Clone)]
pub struct Mark {
    /// Where, in axis values.
    pub x: f64,
    /// Where, in axis values.
    pub y: f64,
    /// What it is.
    pub label: String,
}

/// A chart.
#[derive(Debug, Clone)]
pub struct Chart {
    /// The title.
    pub title: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// The lines.
    pub series: Vec<Series>,
    /// Vertical rules (at x values).
    pub x_rules: Vec<Rule>,
    /// Marked points.
    pub marks: Vec<Mark>,
    /// Values the axes must span besides those drawn: the other parts' of a chart split into
    /// small multiples, so all the parts share their scales.
    pub span: Vec<(f64, f64)>,
}

/// Colour-blind-safe colours (Okabe and Ito), darkest first.
const COLOURS: [&str; 7] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#000000", "#E69F00", "#56B4E9"];
/// Dash patterns, cycled with the colours so that no two of the first 21 styles look alike.
const DASHES: [&str; 3] = ["", "7 4", "2 3"];

const HEIGHT: f64 = 420.0;
pub(super) const LEFT: f64 = 84.0;
pub(super) const TOP: f64 = 40.0;
pub(super) const PLOT_W: f64 = 440.0;
pub(super) const PLOT_H: f64 = 310.0;

/// A marker's path centred on 0,0.
fn marker(style: usize) -> &'static str {
    match style % 6 {
        0 => "M-4,0a4,4 0 1,0 8,0a4,4 0 1,0 -8,0Z", // circle
        1 => "M-3.6,-3.6h7.2v7.2h-7.2Z",            // square
        2 => "M0,-4.6L4.2,3.4H-4.2Z",               // triangle
        3 => "M0,-5L5,0L0,5L-5,0Z",                 // diamond
        4 => "M0,4.6L4.2,-3.4H-4.2Z",               // triangle down
        _ => "M-4,-4L4,4M-4,4L4,-4",                // cross
    }
}

/// Open markers on odd colours: a second cue besides shape in black and white.
fn filled(style: usize) -> bool {
    style % 6 != 5 && (style / 6) % 2 == 0
}

/// Escapes text for XML and HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A number for a tick or a tooltip: thousands separators, no needless decimals.
pub fn num(v: f64) -> String {
    if v.abs() >= 1000.0 {
        let s = thousands(v.abs());
        if v < 0.0 { format!("-{s}") } else { s }
    } else if v == v.trunc() {
        format!("{v:.0}")
    } else {
        // Two decimals from 1 up; three significant digits below (0.000123), not four
        // decimals of noise or a bare "0.".
        let digits = if v.abs() >= 1.0 { 2 } else { (2 - v.abs().log10().floor() as i32).max(1) as usize };
        let s = format!("{v:.digits$}");
        s.trim_end_matches('0').trim_end_matches('.').into()
    }
}

/// A linear axis' tick: millions as `40M` (ten digits and separators would run into the
/// axis' label), the rest as [`num`].
fn tick(v: f64) -> String {
    if v.abs() >= 1e6 { format!("{}M", num(v / 1e6)) } else { num(v) }
}

/// The mapping of one axis: values to 0..1.
pub(super) struct Map {
    scale: Scale,
    lo: f64,
    hi: f64,
}

fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).max(1e-9).log10()
}

impl Map {
    pub(super) fn new(scale: Scale, values: &[f64]) -> Map {
        let vals: Vec<f64> = values.iter().copied().filter(|v| v.is_finite() && plottable(scale, *v)).collect();
        let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (min, max) = if vals.is_empty() { (1.0, 1.0) } else { (min, max) };
        let (lo, hi) = match scale {
            Scale::Linear | Scale::Count | Scale::Percent => {
                let lo = if min < 0.0 { -nice_ceil(-min) } else { 0.0 };
                let hi = if max <= 0.0 { 1.0 } else { nice_ceil(max * 1.05) };
                let hi = match scale {
                    Scale::Count => hi.ceil(),
                    Scale::Percent if max <= 100.0 => hi.min(100.0),
                    _ => hi,
                };
                (lo, hi)
            }
            Scale::Log2Size | Scale::Log2 => (min.log2().floor(), max.log2().ceil().max(min.log2().floor() + 1.0)),
            Scale::Log10 => (min.log10().floor(), max.log10().ceil().max(min.log10().floor() + 1.0)),
            Scale::Nines => (nines(50.0).min(nines(min)), nines(max).max(nines(99.0))),
        };
        Map { scale, lo, hi }
    }

    fn t(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear | Scale::Count | Scale::Percent => v,
            Scale::Log2Size | Scale::Log2 => v.log2(),
            Scale::Log10 => v.log10(),
            Scale::Nines => nines(v),
        }
    }

    /// 0..1 along the axis.
    pub(super) fn frac(&self, v: f64) -> f64 {
        (self.t(v) - self.lo) / (self.hi - self.lo)
    }

    /// Tick values and their labels.
    pub(super) fn ticks(&self) -> Vec<(f64, String)> {
        match self.scale {
            Scale::Linear | Scale::Count | Scale::Percent => {
                let mut step = nice_step((self.hi - self.lo) / 6.0);
                if self.scale == Scale::Count {
                    step = step.max(1.0);
                }
                let n = ((self.hi - self.lo) / step + 1e-9).floor() as i64;
                (0..=n).map(|i| self.lo + i as f64 * step).map(|v| (v, tick(v))).collect()
            }
            Scale::Log2Size | Scale::Log2 => {
                let span = (self.hi - self.lo) as i64;
                let every = (span / 10 + 1).max(1);
                (self.lo as i64..=self.hi as i64)
                    .filter(|e| (e - self.lo as i64) % every == 0)
                    .map(|e| {
                        let v = 2f64.powi(e as i32);
                        let label =
                            if v >= 1.0 && self.scale == Scale::Log2Size { format_size(v as u64) } else { num(v) };
                        (v, label)
                    })
                    .collect()
            }
            Scale::Log10 => {
                (self.lo as i64..=self.hi as i64).map(|e| 10f64.powi(e as i32)).map(|v| (v, num(v))).collect()
            }
            Scale::Nines => [50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 99.9999]
                .into_iter()
                .filter(|&p| nines(p) <= self.hi + 1e-9 && nines(p) >= self.lo - 1e-9)
                // Every nine shown: 99.999, never rounded to 100.
                .map(|p| (p, p.to_string()))
                .collect(),
        }
    }
}

fn plottable(scale: Scale, v: f64) -> bool {
    match scale {
        Scale::Linear | Scale::Count | Scale::Percent => true,
        Scale::Log2Size | Scale::Log2 | Scale::Log10 => v > 0.0,
        Scale::Nines => (0.0..100.0).contains(&v),
    }
}

/// 1, 2 or 5 times a power of ten, at least `v`.
fn nice_ceil(v: f64) -> f64 {
    let step = nice_step(v / 6.0);
    (v / step).ceil() * step
}

/// A tick step of 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let p = 10f64.powf(raw.max(1e-12).log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * p).find(|s| *s >= raw).unwrap_or(10.0 * p)
}

/// The style of series `style`: (colour, dash).
pub fn style(style: usize) -> (&'static str, &'static str) {
    (COLOURS[style % COLOURS.len()], DASHES[(style / COLOURS.len()) % DASHES.len()])
}

impl Chart {
    /// Whether there is anything to draw.
    pub fn is_empty(&self) -> bool {
        self.series.iter().all(|s| s.points.is_empty())
    }

    /// The chart as small multiples of at most `most` series each (a chart of more is a
    /// tangle), numbered in their titles, all on the same scales; the marks go with the
    /// series whose points they mark.
    pub fn split(self, most: usize) -> Vec<Chart> {
        if self.series.len() <= most {
            return vec![self];
        }
        let parts = self.series.len().div_ceil(most);
        let span: Vec<(f64, f64)> = self.series.iter().flat_map(|s| s.points.iter().copied()).collect();
        self.series
            .chunks(most)
            .enumerate()
            .map(|(i, series)| {
                let on = |m: &&Mark| series.iter().any(|s| s.points.contains(&(m.x, m.y)));
                Chart {
                    title: format!("{} ({} of {parts})", self.title, i + 1),
                    series: series.to_vec(),
                    marks: self.marks.iter().filter(on).cloned().collect(),
                    span: span.clone(),
                    ..self.clone()
                }
            })
            .collect()
    }

    /// Width: the plot and a legend as wide as its longest name (Helvetica at 12 px averages
    /// under 7 px a character).
    fn width(&self) -> f64 {
        let longest = self.series.iter().map(|s| s.name.chars().count()).max().unwrap_or(0);
        (LEFT + PLOT_W + 20.0 + 34.0 + longest as f64 * 7.0 + 12.0).max(LEFT + PLOT_W + 60.0).ceil()
    }

    /// Height: the plot and its axis labels, or the legend if that is longer.
    fn height(&self) -> f64 {
        HEIGHT.max(TOP + 10.0 + self.series.len() as f64 * 20.0 + 10.0)
    }

    /// The chart as a standalone SVG document (also valid inline in HTML).
    pub fn render(&self) -> String {
        let xs: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .chain(self.x_rules.iter().map(|r| r.value))
            .chain(self.marks.iter().map(|m| m.x))
            .chain(self.span.iter().map(|p| p.0))
            .collect();
        let ys: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .chain(self.marks.iter().map(|m| m.y))
            .chain(self.span.iter().map(|p| p.1))
            .collect();
        let plot = Plot { x: Map::new(self.x.scale, &xs), y: Map::new(self.y.scale, &ys) };
        let mut s = String::new();
        self.frame(&mut s, &plot);
        self.rules(&mut s, &plot);
        self.lines(&mut s, &plot);
        self.marks(&mut s, &plot);
        self.legend(&mut s);
        s.push_str("</svg>");
        s
    }

    /// The title, the plot's box, its grid with tick labels and the axis labels.
    fn frame(&self, s: &mut String, plot: &Plot) {
        let _ = write!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{t}" font-family="Helvetica, Arial, sans-serif" font-size="12"><title>{t}</title><rect width="100%" height="100%" fill="#fff"/><text x="{LEFT}" y="22" font-size="15" font-weight="bold">{t}</text>"##,
            t = esc(&self.title),
            w = self.width(),
            h = self.height()
        );
        let _ = write!(
            s,
            r##"<rect class="plot" x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{PLOT_H}" fill="none" stroke="#444"/>"##
        );
        for (v, label) in plot.x.ticks() {
            let x = plot.px(v);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{b}" stroke="#ddd"/><text x="{x:.1}" y="{ty}" text-anchor="middle">{l}</text>"##,
                b = TOP + PLOT_H,
                ty = TOP + PLOT_H + 16.0,
                l = esc(&label)
            );
        }
        for (v, label) in plot.y.ticks() {
            let y = plot.py(v);
            let _ = write!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{r}" y2="{y:.1}" stroke="#ddd"/><text x="{tx}" y="{ty:.1}" text-anchor="end">{l}</text>"##,
                r = LEFT + PLOT_W,
                tx = LEFT - 6.0,
                ty = y + 4.0,
                l = esc(&label)
            );
        }
        let _ = write!(
            s,
            r##"<text x="{cx}" y="{y}" text-anchor="middle" font-size="13">{xl}</text><text transform="translate(18,{cy}) rotate(-90)" text-anchor="middle" font-size="13">{yl}</text>"##,
            cx = LEFT + PLOT_W / 2.0,
            y = TOP + PLOT_H + 40.0,
            cy = TOP + PLOT_H / 2.0,
            xl = esc(&self.x.label),
            yl = esc(&self.y.label)
        );
    }

    /// Vertical rules at marked x values (a limit, a theoretical maximum).
    fn rules(&self, s: &mut String, plot: &Plot) {
        for r in self.x_rules.iter().filter(|r| plottable(self.x.scale, r.value)) {
            let x = plot.px(r.value);
            let _ = write!(
                s,
                r##"<g class="rule" data-x="{v}"><line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{b}" stroke="#000" stroke-width="1.5" stroke-dasharray="10 3 2 3"/><text x="{tx:.1}" y="{ty}" font-size="11">{l}</text></g>"##,
                v = r.value,
                b = TOP + PLOT_H,
                tx = x + 4.0,
                ty = TOP + 12.0,
                l = esc(&r.label)
            );
        }
    }

    /// Each series: its line, then its markers over it.
    fn lines(&self, s: &mut String, plot: &Plot) {
        for series in &self.series {
            let (colour, dash) = style(series.style);
            let pts: Vec<(f64, f64)> = series
                .points
                .iter()
                .copied()
                .filter(|&(x, y)| plottable(self.x.scale, x) && plottable(self.y.scale, y))
                .collect();
            let _ = write!(s, r##"<g class="series" data-name="{}">"##, esc(&series.name));
            if pts.len() > 1 {
                let path: Vec<String> =
                    pts.iter().map(|&(x, y)| format!("{:.1},{:.1}", plot.px(x), plot.py(y))).collect();
                let _ = write!(
                    s,
                    r##"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/>"##,
                    path.join(" ")
                );
            }
            let fill = if filled(series.style) { colour } else { "#fff" };
            for &(x, y) in &pts {
                let _ = write!(
                    s,
                    r##"<g class="pt" data-x="{x}" data-y="{y}" transform="translate({:.2},{:.2})"><title>{n}: {xv}, {yv}</title><path d="{m}" fill="{fill}" stroke="{colour}" stroke-width="1.5"/></g>"##,
                    plot.px(x),
                    plot.py(y),
                    n = esc(&series.name),
                    xv = num(x),
                    yv = num(y),
                    m = marker(series.style)
                );
            }
            s.push_str("</g>");
        }
    }

    /// Circled points with a label (the maximum IOPS within a response-time limit).
    fn marks(&self, s: &mut String, plot: &Plot) {
        for m in self.marks.iter().filter(|m| plottable(self.x.scale, m.x) && plottable(self.y.scale, m.y)) {
            let (x, y) = (plot.px(m.x), plot.py(m.y));
            let _ = write!(
                s,
                r##"<g class="mark" data-x="{}" data-y="{}"><circle cx="{x:.1}" cy="{y:.1}" r="9" fill="none" stroke="#000" stroke-width="2"/><text x="{tx:.1}" y="{ty:.1}" font-size="11" font-weight="bold">{l}</text></g>"##,
                m.x,
                m.y,
                tx = (x + 12.0).min(LEFT + PLOT_W - 150.0),
                ty = (y - 12.0).max(TOP + 26.0),
                l = esc(&m.label)
            );
        }
    }

    /// The legend, right of the plot.
    fn legend(&self, s: &mut String) {
        let lx = LEFT + PLOT_W + 20.0;
        for (i, series) in self.series.iter().enumerate() {
            let (colour, dash) = style(series.style);
            let y = TOP + 10.0 + i as f64 * 20.0;
            let fill = if filled(series.style) { colour } else { "#fff" };
            let _ = write!(
                s,
                r##"<g class="legend"><line x1="{lx}" y1="{y}" x2="{l2}" y2="{y}" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/><path transform="translate({mx},{y})" d="{m}" fill="{fill}" stroke="{colour}" stroke-width="1.5"/><text x="{tx}" y="{ty}">{n}</text></g>"##,
                l2 = lx + 28.0,
                mx = lx + 14.0,
                m = marker(series.style),
                tx = lx + 34.0,
                ty = y + 4.0,
                n = esc(&series.name)
            );
        }
    }
}

/// Where values land in the plot's box, in SVG pixels.
struct Plot {
    x: Map,
    y: Map,
}

impl Plot {
    fn px(&self, v: f64) -> f64 {
        LEFT + self.x.frac(v) * PLOT_W
    }

    fn py(&self, v: f64) -> f64 {
        TOP + PLOT_H - self.y.frac(v) * PLOT_H
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(scale: Scale, points: Vec<(f64, f64)>) -> Chart {
        Chart {
            title: "t".into(),
            x: Axis { label: "x".into(), scale },
            y: Axis { label: "y".into(), scale: Scale::Linear },
            series: vec![Series { name: "s".into(), style: 0, points }],
            x_rules: vec![],
            marks: vec![],
            span: vec![],
        }
    }

    /// (translate x, translate y) of every point, in order.
    fn positions(svg: &str) -> Vec<(f64, f64)> {
        svg.split(r#"class="pt""#)
            .skip(1)
            .map(|rest| {
                let t = &rest[rest.find("translate(").unwrap() + 10..];
                let (x, t) = t.split_once(',').unwrap();
                (x.parse().unwrap(), t[..t.find(')').unwrap()].parse().unwrap())
            })
            .collect()
    }

    #[test]
    fn linear_heights_are_proportional_to_values() {
        let svg = chart(Scale::Linear, vec![(1.0, 114.0), (2.0, 229.0), (3.0, 340.0), (4.0, 460.0)]).render();
        let pos = positions(&svg);
        let base = TOP + PLOT_H;
        let ratio: Vec<f64> = pos.iter().zip([114.0, 229.0, 340.0, 460.0]).map(|(p, v)| (base - p.1) / v).collect();
        for r in &ratio {
            assert!((r - ratio[0]).abs() < 0.01, "{ratio:?}");
        }
        // x from zero: 1..4 equally apart.
        assert!(((pos[1].0 - pos[0].0) - (pos[3].0 - pos[2].0)).abs() < 0.02);
    }

    #[test]
    fn log2_sizes_double_at_equal_steps() {
        let svg = chart(Scale::Log2Size, vec![(512.0, 1.0), (4096.0, 2.0), (32768.0, 3.0)]).render();
        let pos = positions(&svg);
        assert!(((pos[1].0 - pos[0].0) - (pos[2].0 - pos[1].0)).abs() < 0.02, "{pos:?}");
        assert!(svg.contains(">4K</text>") && svg.contains(">32K</text>"), "size ticks");
    }

    #[test]
    fn nines_put_each_nine_equally_apart() {
        let svg = chart(Scale::Nines, vec![(90.0, 1.0), (99.0, 2.0), (99.9, 3.0), (99.999, 4.0)]).render();
        let pos = positions(&svg);
        assert!(((pos[1].0 - pos[0].0) - (pos[2].0 - pos[1].0)).abs() < 0.05, "{pos:?}");
        assert!(svg.contains(">99.999</text>") && !svg.contains(">100</text>"), "each nine labelled as it is");
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(num(1234567.0), "1,234,567");
        assert_eq!(num(20.0), "20");
        assert_eq!(num(0.5), "0.5");
        assert_eq!(num(0.0931), "0.0931");
        assert_eq!(num(12.3456), "12.35");
        assert_eq!(num(0.00001), "0.00001", "a log axis tick is never a bare 0.");
        assert_eq!(num(0.000123456), "0.000123");
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(1.2), 2.0);
        assert_eq!(nice_ceil(483.0), 500.0);
        assert_eq!(tick(40_000_000.0), "40M");
        assert_eq!(tick(2_500_000.0), "2.5M");
        assert_eq!(tick(400_000.0), "400,000");
    }

    #[test]
    fn text_is_escaped() {
        let mut c = chart(Scale::Linear, vec![(1.0, 1.0)]);
        c.series[0].name = "a<b & \"c\"".into();
        assert!(c.render().contains("a&lt;b &amp; &quot;c&quot;"));
    }
}
