//! Bar charts as SVG text: a figure per workload (category), one bar per document (group)
//! side by side, each group in the style its lines have in the report's other charts. Every
//! bar is a `<g class="bar">` carrying its category, group and value, as the line charts'
//! points carry theirs.

use std::fmt::Write;

use super::svg::{LEFT, Map, PLOT_H, PLOT_W, Scale, TOP, esc, num, style};

/// A bar chart: for each category, one bar per group.
#[derive(Debug, Clone)]
pub struct Bars {
    /// The title.
    pub title: String,
    /// The vertical axis' label, with its unit.
    pub y_label: String,
    /// The categories along the bottom (workloads), in order.
    pub categories: Vec<String>,
    /// Each group (document): its name, its style, and its value in each category (None:
    /// not measured, no bar).
    pub groups: Vec<(String, usize, Vec<Option<f64>>)>,
}

/// Room under the plot for category labels on one line.
const LABEL_H: f64 = 30.0;
/// A label's width per character (12 px Helvetica, a little wide), and the angle a turned
/// label runs down to the left at.
const CHAR_W: f64 = 7.0;
const TURN_DEG: f64 = 30.0;

impl Bars {
    /// Whether there is a bar to draw.
    pub fn is_empty(&self) -> bool {
        self.groups.iter().all(|g| g.2.iter().all(Option::is_none))
    }

    fn width(&self) -> f64 {
        let longest = self.groups.iter().map(|g| g.0.chars().count()).max().unwrap_or(0);
        (LEFT + PLOT_W + 20.0 + 34.0 + longest as f64 * 7.0 + 12.0).ceil()
    }

    /// The width of each category's slot.
    fn slot(&self) -> f64 {
        PLOT_W / self.categories.len().max(1) as f64
    }

    /// Whether a category's name is wider than its slot, so turned.
    fn turned(&self, category: &str) -> bool {
        category.chars().count() as f64 * CHAR_W > self.slot()
    }

    /// How far a turned label reaches left of its slot's middle and down from its top.
    fn reach(category: &str) -> (f64, f64) {
        let (w, a) = (category.chars().count() as f64 * CHAR_W, TURN_DEG.to_radians());
        (w * a.cos(), w * a.sin())
    }

    /// Room left of the chart for the turned labels that reach past its left edge (the first
    /// categories' long names: "outstanding=32 · ..." was cut).
    fn left_pad(&self) -> f64 {
        let slot = self.slot();
        let past = self.categories.iter().enumerate().filter(|(_, c)| self.turned(c)).map(|(i, c)| {
            let middle = LEFT + (i as f64 + 0.5) * slot;
            Bars::reach(c).0 - middle
        });
        past.fold(0.0, f64::max).ceil() + if self.categories.iter().any(|c| self.turned(c)) { 4.0 } else { 0.0 }
    }

    fn height(&self) -> f64 {
        let turned = self.categories.iter().filter(|c| self.turned(c)).map(|c| 14.0 + Bars::reach(c).1 + 12.0);
        let labels = turned.fold(LABEL_H, f64::max).ceil();
        (TOP + PLOT_H + labels).max(TOP + 10.0 + self.groups.len() as f64 * 20.0 + 10.0)
    }

    /// The chart as a standalone SVG document (also valid inline in HTML).
    pub fn render(&self) -> String {
        let values: Vec<f64> = self.groups.iter().flat_map(|g| g.2.iter().flatten().copied()).collect();
        let y = Map::new(Scale::Linear, &values);
        let py = |v: f64| TOP + PLOT_H - y.frac(v) * PLOT_H;
        let mut s = String::new();
        let _ = write!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" class="chart bars" viewBox="{x} 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{t}" font-family="Helvetica, Arial, sans-serif" font-size="12"><title>{t}</title><rect x="{x}" width="100%" height="100%" fill="#fff"/><text x="{LEFT}" y="22" font-size="15" font-weight="bold">{t}</text>"##,
            t = esc(&self.title),
            x = -self.left_pad(),
            w = self.width() + self.left_pad(),
            h = self.height()
        );
        for (v, label) in y.ticks() {
            let _ = write!(
                s,
                r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{r}" y2="{yy:.1}" stroke="#ddd"/><text x="{tx}" y="{ty:.1}" text-anchor="end">{l}</text>"##,
                yy = py(v),
                r = LEFT + PLOT_W,
                tx = LEFT - 6.0,
                ty = py(v) + 4.0,
                l = esc(&label)
            );
        }
        let _ = write!(
            s,
            r##"<rect class="plot" x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{PLOT_H}" fill="none" stroke="#444"/><text transform="translate(18,{cy}) rotate(-90)" text-anchor="middle" font-size="13">{yl}</text>"##,
            cy = TOP + PLOT_H / 2.0,
            yl = esc(&self.y_label)
        );
        let slot = self.slot();
        let bar = slot * 0.8 / self.groups.len().max(1) as f64;
        for (c, category) in self.categories.iter().enumerate() {
            let x0 = LEFT + c as f64 * slot + slot * 0.1;
            for (g, (name, st, vals)) in self.groups.iter().enumerate() {
                let Some(v) = vals.get(c).copied().flatten() else { continue };
                let (colour, _) = style(*st);
                let (x, top) = (x0 + g as f64 * bar, py(v));
                let _ = write!(
                    s,
                    r##"<g class="bar" data-category="{cat}" data-series="{n}" data-y="{v}"><title>{n}, {cat}: {vv}</title><rect x="{x:.1}" y="{top:.1}" width="{bw:.1}" height="{bh:.1}" fill="{colour}" stroke="#000" stroke-width="0.5"/></g>"##,
                    cat = esc(category),
                    n = esc(name),
                    vv = num(v),
                    bw = bar.max(1.0),
                    bh = (TOP + PLOT_H - top).max(0.0)
                );
            }
            // The category's name under its bars, turned to fit a narrow slot.
            let (cx, cy) = (LEFT + (c as f64 + 0.5) * slot, TOP + PLOT_H + 14.0);
            let turn = self.turned(category);
            let _ = write!(
                s,
                r##"<text x="{cx:.1}" y="{cy}" text-anchor="{a}"{t}>{l}</text>"##,
                a = if turn { "end" } else { "middle" },
                t = if turn { format!(r#" transform="rotate(-30 {cx:.1} {cy})""#) } else { String::new() },
                l = esc(category)
            );
        }
        let lx = LEFT + PLOT_W + 20.0;
        for (i, (name, st, _)) in self.groups.iter().enumerate() {
            let (colour, _) = style(*st);
            let ly = TOP + 10.0 + i as f64 * 20.0;
            let _ = write!(
                s,
                r##"<g class="legend"><rect x="{lx}" y="{ry}" width="24" height="12" fill="{colour}" stroke="#000" stroke-width="0.5"/><text x="{tx}" y="{ty}">{n}</text></g>"##,
                ry = ly - 6.0,
                tx = lx + 34.0,
                ty = ly + 4.0,
                n = esc(name)
            );
        }
        s.push_str("</svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (data-y, height) of every bar, in order.
    fn bars(svg: &str) -> Vec<(f64, f64)> {
        svg.split(r#"class="bar" "#)
            .skip(1)
            .map(|rest| {
                let attr = |k: &str| {
                    let t = &rest[rest.find(&format!("{k}=\"")).unwrap() + k.len() + 2..];
                    t[..t.find('"').unwrap()].parse::<f64>().unwrap()
                };
                (attr("data-y"), attr("height"))
            })
            .collect()
    }

    #[test]
    fn bar_heights_are_proportional_to_values_and_missing_ones_are_not_drawn() {
        let b = Bars {
            title: "IOPS".into(),
            y_label: "IOPS".into(),
            categories: vec!["oltp-8k".into(), "random-read-4k".into()],
            groups: vec![("A".into(), 0, vec![Some(1000.0), Some(3000.0)]), ("B".into(), 1, vec![Some(2500.0), None])],
        };
        let drawn = bars(&b.render());
        assert_eq!(drawn.iter().map(|d| d.0).collect::<Vec<_>>(), [1000.0, 2500.0, 3000.0]);
        for (v, h) in &drawn {
            assert!((h / v - drawn[0].1 / drawn[0].0).abs() < 1e-3, "{drawn:?}");
        }
    }

    /// Every turned label lies inside the chart: the first of six long names reached past its
    /// left edge ("outstanding=32 · 4K; 75% Read; 100% random" lost its start).
    #[test]
    fn turned_labels_fit_inside_the_chart() {
        let categories: Vec<String> =
            [1, 2, 4, 8, 16, 32].iter().map(|n| format!("outstanding={n} · 4K; 75% Read; 100% random")).collect();
        let b = Bars {
            title: "IOPS".into(),
            y_label: "IOPS".into(),
            groups: vec![("A".into(), 0, vec![Some(1.0); categories.len()])],
            categories,
        };
        let svg = b.render();
        let view: Vec<f64> = {
            let t = &svg[svg.find("viewBox=\"").unwrap() + 9..];
            t[..t.find('"').unwrap()].split(' ').map(|v| v.parse().unwrap()).collect()
        };
        let (left, bottom) = (view[0], view[3]);
        for (i, c) in b.categories.iter().enumerate() {
            assert!(b.turned(c), "{c} is turned");
            // The label's far end, as rotate(-30) about its anchor (the slot's middle) puts it.
            let (cx, cy) = (LEFT + (i as f64 + 0.5) * b.slot(), TOP + PLOT_H + 14.0);
            let w = c.chars().count() as f64 * 7.0;
            let (x, y) = (cx - w * 30f64.to_radians().cos(), cy + w * 30f64.to_radians().sin());
            assert!(x >= left && y <= bottom, "{c}: ends at ({x:.0}, {y:.0}), the chart from x {left} to y {bottom}");
        }
    }
}
