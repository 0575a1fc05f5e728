//! Plots as SVG, generated here (no plotting library, no JavaScript):
//! line plots with linear, logarithmic and percentile axes, ticks, grid,
//! axis labels and a legend. Each data point is a `<circle class="pt">`
//! with a `<title>` tooltip; each line a `<polyline class="series">` with
//! `data-n` = its number of points (the browser test counts them); the
//! elements of a series of one binding carry `data-binding` (its color is
//! the binding's, [`crate::colors`]). A plot
//! over sample sizes that holds a single size is drawn as a bar chart
//! instead ([`crate::bars`]).

use pubsubperf_core::size::format_size;
use std::fmt::Write as _;

/// ` data-binding="udp"` of a series of one binding, else nothing.
pub(crate) fn binding_attr(s: &Series) -> String {
    if s.binding.is_empty() {
        String::new()
    } else {
        format!(" data-binding=\"{}\"", esc(&s.binding))
    }
}

/// How values map to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Linear, from 0 unless the data goes below.
    Linear,
    /// Base-10 logarithm (non-positive values are left out).
    Log,
}

/// What the values are: decides tick positions and labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Bytes: log ticks at powers of two, labels `64`, `1KiB`, `1MiB`.
    Bytes,
    /// Nanoseconds: labels `500 ns`, `10 µs`, `1 ms`.
    Nanos,
    /// Plain numbers: labels `100`, `10k`, `1M`.
    Number,
    /// Percent values: labels `25%`.
    Percent,
    /// Seconds: labels `1 s`.
    Seconds,
    /// Percentile axis: values are −log10(1 − p); labels `90%`, `99.9%`.
    Percentile,
}

/// One axis.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Axis title.
    pub label: String,
    /// Scale.
    pub scale: Scale,
    /// Unit.
    pub unit: Unit,
}

/// Line style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Solid line.
    Solid,
    /// Dashed line.
    Dashed,
    /// Dotted line.
    Dotted,
}

impl Style {
    fn dash(self) -> &'static str {
        match self {
            Style::Solid => "",
            Style::Dashed => " stroke-dasharray=\"7 4\"",
            Style::Dotted => " stroke-dasharray=\"2 3\"",
        }
    }
}

/// One line of a plot.
#[derive(Debug, Clone)]
pub struct Series {
    /// The series' name: its legend text, and with its style key the
    /// label of its bar in a bar chart.
    pub name: String,
    /// Listed in the legend (secondary lines of a series, such as its p99,
    /// are not).
    pub legend: bool,
    /// The binding the series measures (`data-binding` of its elements),
    /// or empty.
    pub binding: String,
    /// Stroke color.
    pub color: String,
    /// Line style.
    pub style: Style,
    /// Stroke width.
    pub width: f64,
    /// Stroke opacity (1 = opaque); secondary lines are lighter.
    pub opacity: f64,
    /// Points (x, y) in data units, in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Indices of `points` that get a marker (with tooltip).
    pub markers: Vec<usize>,
    /// Tooltip per marker (same length as `markers`), or empty for a default.
    pub tips: Vec<String>,
}

/// A legend entry that explains a line style (not a series).
#[derive(Debug, Clone)]
pub struct StyleKey {
    /// Text.
    pub text: String,
    /// Style.
    pub style: Style,
}

impl StyleKey {
    /// The key of `style`, saying `text`.
    pub fn new(text: &str, style: Style) -> StyleKey {
        StyleKey {
            text: text.into(),
            style,
        }
    }
}

/// A line plot.
#[derive(Debug, Clone)]
pub struct Plot {
    /// Identifier (file name stem, element id).
    pub id: String,
    /// Title.
    pub title: String,
    /// X axis.
    pub x: Axis,
    /// Y axis.
    pub y: Axis,
    /// Lines.
    pub series: Vec<Series>,
    /// Line-style explanations appended to the legend.
    pub style_keys: Vec<StyleKey>,
}

/// Width of every figure.
pub(crate) const W: f64 = 880.0;
const PLOT_H: f64 = 380.0;
const ML: f64 = 84.0;
const MR: f64 = 24.0;
/// Space above the plot area (the title).
pub(crate) const MT: f64 = 44.0;
const MB: f64 = 58.0;
const FONT: &str = "DejaVu Sans, Helvetica, Arial, sans-serif";

/// Escapes text for XML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn fmt_num(v: f64) -> String {
    let a = v.abs();
    let (d, suf) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    trim(d) + suf
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.to_string() }
}

/// A value with its unit, for tick labels and tooltips.
pub fn label(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Bytes => {
            if v >= 1.0 && v.fract() == 0.0 {
                format_size(v as usize)
            } else {
                trim(v)
            }
        }
        Unit::Nanos => {
            let a = v.abs();
            if a < 1e3 {
                format!("{} ns", trim(v))
            } else if a < 1e6 {
                format!("{} µs", trim(v / 1e3))
            } else if a < 1e9 {
                format!("{} ms", trim(v / 1e6))
            } else {
                format!("{} s", trim(v / 1e9))
            }
        }
        Unit::Number => fmt_num(v),
        Unit::Percent => format!("{}%", trim(v)),
        Unit::Seconds => format!("{} s", trim(v)),
        Unit::Percentile => percentile_label(1.0 - 10f64.powf(-v)),
    }
}

/// `99.9%` for 0.999; `0%` for 0.
pub fn percentile_label(p: f64) -> String {
    let pc = p * 100.0;
    if pc <= 0.0 {
        return "0%".into();
    }
    // Enough decimals to show the nines.
    for d in 0..8 {
        let s = format!("{pc:.d$}");
        if (s.parse::<f64>().unwrap_or(0.0) - pc).abs() < 1e-9 * 100.0 {
            return format!("{s}%");
        }
    }
    format!("{pc:.6}%")
}

/// The start of an SVG document `w` by `h` in the report's font: the
/// element (its class and id), title, white background and the heading
/// centered on `tx`.
pub(crate) fn open_svg(class: &str, id: &str, title: &str, w: f64, h: f64, tx: f64) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"{class}\" id=\"{id}\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" font-family=\"{FONT}\" font-size=\"12\" role=\"img\" aria-label=\"{title}\">\n<title>{title}</title>\n<rect width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>\n<text x=\"{tx}\" y=\"26\" font-size=\"16\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"#222\">{title}</text>\n",
        id = esc(id),
        title = esc(title),
    )
}

/// An axis' range (in scale units) and its ticks.
pub(crate) struct Ticks {
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    pub(crate) major: Vec<(f64, String)>,
    pub(crate) minor: Vec<f64>,
}

fn tr(scale: Scale, v: f64) -> f64 {
    match scale {
        Scale::Linear => v,
        Scale::Log => v.log10(),
    }
}

fn nice_step(span: f64, max_ticks: f64) -> f64 {
    let raw = span / max_ticks;
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if raw <= m * mag {
            return m * mag;
        }
    }
    10.0 * mag
}

/// The range and ticks of `axis` for data from `lo` to `hi`.
pub(crate) fn ticks(axis: &Axis, lo: f64, hi: f64) -> Ticks {
    match (axis.scale, axis.unit) {
        (Scale::Log, Unit::Bytes) => {
            let a = lo.log2().floor() as i32;
            let mut b = hi.log2().ceil() as i32;
            if b == a {
                b = a + 1;
            }
            let step = ((b - a) as f64 / 9.0).ceil().max(1.0) as i32;
            let a = a - a.rem_euclid(step);
            let mut major = Vec::new();
            let mut minor = Vec::new();
            let mut k = a;
            while k < b + step {
                let v = 2f64.powi(k);
                if (k - a) % step == 0 {
                    major.push((v.log10(), label(Unit::Bytes, v)));
                } else {
                    minor.push(v.log10());
                }
                k += 1;
            }
            let hi_t = major.last().map_or(2f64.powi(b).log10(), |m| m.0);
            Ticks {
                lo: 2f64.powi(a).log10(),
                hi: hi_t.max(hi.log10()),
                major,
                minor,
            }
        }
        (Scale::Log, unit) => {
            let a = lo.log10().floor() as i32;
            let mut b = hi.log10().ceil() as i32;
            if b == a {
                b = a + 1;
            }
            let decades = b - a;
            let mults: &[f64] = if decades <= 2 {
                &[1.0, 2.0, 5.0]
            } else {
                &[1.0]
            };
            let step = ((decades as f64) / 8.0).ceil().max(1.0) as i32;
            let mut major = Vec::new();
            let mut minor = Vec::new();
            for k in a..=b {
                for m in 1..10 {
                    let v = f64::from(m) * 10f64.powi(k);
                    if k == b && m > 1 {
                        break;
                    }
                    let is_major = (k - a) % step == 0 && mults.contains(&f64::from(m));
                    if is_major {
                        major.push((v.log10(), label(unit, v)));
                    } else {
                        minor.push(v.log10());
                    }
                }
            }
            // Trim to the data when whole decades would waste space (keep
            // one tick outside on each side).
            Ticks {
                lo: f64::from(a),
                hi: f64::from(b),
                major,
                minor,
            }
        }
        (Scale::Linear, Unit::Percentile) => {
            let b = hi.ceil().max(1.0);
            let major = (0..=b as i32)
                .map(|k| (f64::from(k), label(Unit::Percentile, f64::from(k))))
                .collect();
            Ticks {
                lo: 0.0,
                hi: b,
                major,
                minor: Vec::new(),
            }
        }
        (Scale::Linear, unit) => {
            let lo = lo.min(0.0);
            let hi = if hi <= lo { lo + 1.0 } else { hi };
            let step = nice_step(hi - lo, 6.0);
            let a = (lo / step).floor() * step;
            let b = (hi / step).ceil() * step;
            let mut major = Vec::new();
            let mut v = a;
            while v <= b + step * 1e-9 {
                major.push((v, label(unit, v)));
                v += step;
            }
            Ticks {
                lo: a,
                hi: b,
                major,
                minor: Vec::new(),
            }
        }
    }
}

impl Plot {
    /// True when some series has a point that can be drawn.
    pub fn has_data(&self) -> bool {
        self.series
            .iter()
            .any(|s| s.points.iter().any(|&(x, y)| self.drawable(x, y)))
    }

    /// True when the point can be drawn on the plot's scales.
    pub(crate) fn drawable(&self, x: f64, y: f64) -> bool {
        let ok = |a: &Axis, v: f64| v.is_finite() && (a.scale == Scale::Linear || v > 0.0);
        ok(&self.x, x) && ok(&self.y, y)
    }

    /// The distinct sample sizes of the drawable points, ascending (empty
    /// when x is not a sample size).
    pub fn sizes(&self) -> Vec<f64> {
        if self.x.unit != Unit::Bytes {
            return Vec::new();
        }
        let mut xs: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|&&(x, y)| self.drawable(x, y))
            .map(|p| p.0)
            .collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        xs
    }

    /// True when the plot is drawn as bars: its x axis would hold one size.
    pub fn is_bars(&self) -> bool {
        self.sizes().len() == 1
    }

    /// The start of the SVG document, `h` high: element, title, background
    /// and the heading centered on `tx`.
    pub(crate) fn open(&self, h: f64, tx: f64) -> String {
        open_svg("plot", &format!("plot-{}", self.id), &self.title, W, h, tx)
    }

    /// The plot as a standalone SVG document: lines, or bars when it holds
    /// a single sample size.
    pub fn render(&self) -> String {
        if self.is_bars() {
            return crate::bars::render(self);
        }
        // Legend layout: entries flow in rows under the plot.
        let mut entries: Vec<(String, String, Style, String)> = self
            .series
            .iter()
            .filter(|s| s.legend && !s.name.is_empty())
            .map(|s| (s.name.clone(), s.color.clone(), s.style, binding_attr(s)))
            .collect();
        entries.extend(
            self.style_keys
                .iter()
                .map(|k| (k.text.clone(), "#444".to_string(), k.style, String::new())),
        );
        let mut rows: Vec<Vec<(f64, usize)>> = vec![Vec::new()];
        let mut x = ML;
        for (i, (name, ..)) in entries.iter().enumerate() {
            let w = 34.0 + 7.0 * name.chars().count() as f64 + 18.0;
            if x + w > W - MR && !rows.last().is_some_and(Vec::is_empty) {
                rows.push(Vec::new());
                x = ML;
            }
            if let Some(r) = rows.last_mut() {
                r.push((x, i));
            }
            x += w;
        }
        let legend_h = if entries.is_empty() {
            0.0
        } else {
            rows.len() as f64 * 20.0 + 8.0
        };
        let h = MT + PLOT_H + MB + legend_h;
        let (x0, x1, y0, y1) = (ML, W - MR, MT, MT + PLOT_H);
        let mut s = self.open(h, (x0 + x1) / 2.0);
        // Data range over drawable points.
        let pts: Vec<(f64, f64)> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(|&(x, y)| self.drawable(x, y))
            .collect();
        if pts.is_empty() {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#888\">no data</text>\n</svg>\n",
                (x0 + x1) / 2.0,
                (y0 + y1) / 2.0
            );
            return s;
        }
        let (mut xmin, mut xmax, mut ymin, mut ymax) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in &pts {
            xmin = xmin.min(x);
            xmax = xmax.max(x);
            ymin = ymin.min(y);
            ymax = ymax.max(y);
        }
        let mut xt = ticks(&self.x, xmin, xmax);
        let yt = ticks(&self.y, ymin, ymax);
        // A little room left and right so that markers at the ends of the
        // data do not sit on the frame (ticks stay where they are).
        let pad = (xt.hi - xt.lo) * 0.025;
        xt.lo -= pad;
        xt.hi += pad;
        let px =
            |v: f64| x0 + (tr(self.x.scale, v) - xt.lo) / (xt.hi - xt.lo).max(1e-12) * (x1 - x0);
        let py =
            |v: f64| y1 - (tr(self.y.scale, v) - yt.lo) / (yt.hi - yt.lo).max(1e-12) * (y1 - y0);
        let pxt = |t: f64| x0 + (t - xt.lo) / (xt.hi - xt.lo).max(1e-12) * (x1 - x0);
        let pyt = |t: f64| y1 - (t - yt.lo) / (yt.hi - yt.lo).max(1e-12) * (y1 - y0);
        // Grid and ticks.
        s.push_str("<g class=\"grid\" stroke-width=\"1\">\n");
        for &t in &xt.minor {
            if t > xt.lo && t < xt.hi {
                let _ = writeln!(
                    s,
                    "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{y0}\" y2=\"{y1}\" stroke=\"#f0f0f0\"/>",
                    pxt(t)
                );
            }
        }
        for &t in &yt.minor {
            if t > yt.lo && t < yt.hi {
                let _ = writeln!(
                    s,
                    "<line x1=\"{x0}\" x2=\"{x1}\" y1=\"{0:.1}\" y2=\"{0:.1}\" stroke=\"#f0f0f0\"/>",
                    pyt(t)
                );
            }
        }
        for (t, _) in &xt.major {
            let _ = writeln!(
                s,
                "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{y0}\" y2=\"{y1}\" stroke=\"#dcdcdc\"/>",
                pxt(*t)
            );
        }
        for (t, _) in &yt.major {
            let _ = writeln!(
                s,
                "<line x1=\"{x0}\" x2=\"{x1}\" y1=\"{0:.1}\" y2=\"{0:.1}\" stroke=\"#dcdcdc\"/>",
                pyt(*t)
            );
        }
        s.push_str("</g>\n");
        let _ = writeln!(
            s,
            "<rect x=\"{x0}\" y=\"{y0}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#555\"/>",
            x1 - x0,
            y1 - y0
        );
        s.push_str("<g class=\"ticks\" fill=\"#333\">\n");
        // Thin out x labels that would overlap.
        let mut last_end = f64::MIN;
        for (t, l) in &xt.major {
            let x = pxt(*t);
            let half = 3.6 * l.chars().count() as f64;
            let _ = writeln!(
                s,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{y1}\" y2=\"{}\" stroke=\"#555\"/>",
                y1 + 5.0
            );
            if x - half > last_end + 4.0 {
                let _ = writeln!(
                    s,
                    "<text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                    y1 + 19.0,
                    esc(l)
                );
                last_end = x + half;
            }
        }
        let mut last_top = f64::MAX;
        for (t, l) in &yt.major {
            let y = pyt(*t);
            let _ = writeln!(
                s,
                "<line x1=\"{}\" x2=\"{x0}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#555\"/>",
                x0 - 5.0
            );
            if y < last_top - 14.0 {
                let _ = writeln!(
                    s,
                    "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                    x0 - 8.0,
                    y + 4.0,
                    esc(l)
                );
                last_top = y;
            }
        }
        s.push_str("</g>\n");
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\" fill=\"#222\">{}</text>",
            (x0 + x1) / 2.0,
            y1 + 42.0,
            esc(&self.x.label)
        );
        let _ = writeln!(
            s,
            "<text transform=\"translate(18,{}) rotate(-90)\" text-anchor=\"middle\" font-size=\"13\" fill=\"#222\">{}</text>",
            (y0 + y1) / 2.0,
            esc(&self.y.label)
        );
        // Series.
        let _ = writeln!(
            s,
            "<clipPath id=\"clip-{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath>",
            esc(&self.id),
            x0 - 4.0,
            y0 - 4.0,
            x1 - x0 + 8.0,
            y1 - y0 + 8.0
        );
        let _ = writeln!(s, "<g clip-path=\"url(#clip-{})\">", esc(&self.id));
        for se in &self.series {
            let drawn: Vec<(usize, f64, f64)> = se
                .points
                .iter()
                .enumerate()
                .filter(|(_, p)| self.drawable(p.0, p.1))
                .map(|(i, p)| (i, px(p.0), py(p.1)))
                .collect();
            if drawn.is_empty() {
                continue;
            }
            let coords: Vec<String> = drawn
                .iter()
                .map(|(_, x, y)| format!("{x:.1},{y:.1}"))
                .collect();
            let _ = writeln!(
                s,
                "<polyline class=\"series\" data-n=\"{}\" data-name=\"{}\"{} points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" stroke-opacity=\"{}\" stroke-linejoin=\"round\"{}/>",
                drawn.len(),
                esc(&se.name),
                binding_attr(se),
                coords.join(" "),
                se.color,
                se.width,
                se.opacity,
                se.style.dash()
            );
            for (mi, &i) in se.markers.iter().enumerate() {
                let Some(&(_, x, y)) = drawn.iter().find(|d| d.0 == i) else {
                    continue;
                };
                let (dx, dy) = se.points[i];
                let tip = se.tips.get(mi).cloned().unwrap_or_else(|| {
                    format!(
                        "{}: {}, {}",
                        se.name,
                        label(self.x.unit, dx),
                        label(self.y.unit, dy)
                    )
                });
                let fill = if se.style == Style::Solid {
                    se.color.as_str()
                } else {
                    "#fff"
                };
                let _ = writeln!(
                    s,
                    "<circle class=\"pt\"{} cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"{fill}\" stroke=\"{}\" stroke-width=\"1.5\"><title>{}</title></circle>",
                    binding_attr(se),
                    se.color,
                    esc(&tip)
                );
            }
        }
        s.push_str("</g>\n");
        // Legend.
        if !entries.is_empty() {
            s.push_str("<g class=\"legend\">\n");
            for (ri, row) in rows.iter().enumerate() {
                let y = y1 + MB + 6.0 + ri as f64 * 20.0;
                for &(x, i) in row {
                    let (name, col, style, binding) = &entries[i];
                    let _ = writeln!(
                        s,
                        "<line{binding} x1=\"{x}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" stroke=\"{col}\" stroke-width=\"2.5\"{}/><text x=\"{}\" y=\"{}\" fill=\"#222\">{}</text>",
                        x + 26.0,
                        style.dash(),
                        x + 32.0,
                        y + 4.0,
                        esc(name)
                    );
                }
            }
            s.push_str("</g>\n");
        }
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_labels() {
        assert_eq!(percentile_label(0.0), "0%");
        assert_eq!(percentile_label(0.9), "90%");
        assert_eq!(percentile_label(0.999), "99.9%");
        assert_eq!(percentile_label(0.999999), "99.9999%");
        assert_eq!(label(Unit::Percentile, 2.0), "99%");
    }

    #[test]
    fn tick_labels() {
        assert_eq!(label(Unit::Nanos, 10_000.0), "10 µs");
        assert_eq!(label(Unit::Nanos, 1_500_000.0), "1.5 ms");
        assert_eq!(label(Unit::Bytes, 1024.0), "1KiB");
        assert_eq!(label(Unit::Number, 250_000.0), "250k");
    }

    #[test]
    fn renders_points_and_skips_non_positive_on_log() {
        let p = Plot {
            id: "t".into(),
            title: "T <x>".into(),
            x: Axis {
                label: "size".into(),
                scale: Scale::Log,
                unit: Unit::Bytes,
            },
            y: Axis {
                label: "lat".into(),
                scale: Scale::Log,
                unit: Unit::Nanos,
            },
            series: vec![Series {
                name: "udp".into(),
                legend: true,
                binding: "udp".into(),
                color: crate::colors::binding_color("udp").into(),
                style: Style::Solid,
                width: 2.0,
                opacity: 1.0,
                points: vec![(64.0, 1000.0), (1024.0, 0.0), (4096.0, 3000.0)],
                markers: vec![0, 1, 2],
                tips: vec![],
            }],
            style_keys: vec![],
        };
        let svg = p.render();
        assert_eq!(svg.matches("class=\"pt\"").count(), 2);
        assert!(svg.contains("data-n=\"2\""));
        assert!(svg.contains("T &lt;x&gt;"));
        assert!(svg.contains(">1KiB<"));
        assert_eq!(
            svg.matches("data-binding=\"udp\"").count(),
            4,
            "line, two markers and the legend: {svg}"
        );
    }
}
