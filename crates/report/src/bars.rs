//! Bar charts as SVG: a [`Plot`] over sample sizes that holds a single size
//! is drawn as horizontal bars, one per line of the plot, instead of lines
//! with one x. Each bar is labelled on its left with the series' name (and
//! its line's style key, `udp p99`, `tcp subscriber`, when the plot has
//! several kinds of line) and at its end with its value; values start at
//! zero on a linear axis. Each bar is a `<rect class="bar">` with a
//! `<title>` tooltip; the names are the chart's `<g class="legend">`.

use crate::svg::{Axis, MT, Plot, Scale, Series, Style, W, binding_attr, esc, label, ticks};
use std::fmt::Write as _;

/// One bar.
struct Bar<'a> {
    name: String,
    value: f64,
    /// ` data-binding=".."` or empty.
    binding: String,
    color: &'a str,
    opacity: f64,
    tip: String,
}

const ROW: f64 = 28.0;
const BAR_H: f64 = 18.0;
const CHAR_W: f64 = 7.0;
const VALUE_W: f64 = 80.0;
const AXIS_H: f64 = 50.0;

/// A line's bar: its first drawable point.
fn bar<'a>(p: &'a Plot, s: &'a Series) -> Option<Bar<'a>> {
    let i = s.points.iter().position(|&(x, y)| p.drawable(x, y))?;
    let value = s.points[i].1;
    let kind = p.style_keys.iter().find(|k| k.style == s.style);
    let name = match kind {
        Some(k) => format!("{} {}", s.name, k.text),
        None => s.name.clone(),
    };
    let tip = s
        .markers
        .iter()
        .position(|&m| m == i)
        .and_then(|mi| s.tips.get(mi).cloned())
        .unwrap_or_else(|| format!("{name}: {}", label(p.y.unit, value)));
    Some(Bar {
        name,
        value,
        binding: binding_attr(s),
        color: &s.color,
        opacity: match s.style {
            Style::Solid => 1.0,
            Style::Dashed => 0.6,
            Style::Dotted => 0.35,
        },
        tip,
    })
}

/// The plot as a standalone SVG bar chart.
pub fn render(p: &Plot) -> String {
    let bars: Vec<Bar> = p.series.iter().filter_map(|s| bar(p, s)).collect();
    let longest = bars
        .iter()
        .map(|b| b.name.chars().count())
        .max()
        .unwrap_or(0);
    let x0 = (longest as f64 * CHAR_W + 24.0).clamp(110.0, W / 2.0);
    let x1 = W - VALUE_W;
    let (y0, y1) = (MT, MT + bars.len() as f64 * ROW + 8.0);
    let h = y1 + AXIS_H;
    let axis = Axis {
        label: p.y.label.clone(),
        scale: Scale::Linear,
        unit: p.y.unit,
    };
    let top = bars.iter().map(|b| b.value).fold(0.0, f64::max);
    let t = ticks(&axis, 0.0, top);
    let px = |v: f64| x0 + (v - t.lo) / (t.hi - t.lo).max(1e-12) * (x1 - x0);
    let mut s = p.open(h, W / 2.0);
    s.push_str("<g class=\"grid ticks\" fill=\"#333\">\n");
    for (v, l) in &t.major {
        let x = px(*v);
        let _ = writeln!(
            s,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{y0}\" y2=\"{y1}\" stroke=\"#dcdcdc\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            y1 + 17.0,
            esc(l)
        );
    }
    let _ = writeln!(
        s,
        "</g>\n<line x1=\"{x0}\" x2=\"{x0}\" y1=\"{y0}\" y2=\"{y1}\" stroke=\"#555\"/>\n<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\" fill=\"#222\">{}</text>",
        (x0 + x1) / 2.0,
        y1 + 38.0,
        esc(&axis.label)
    );
    let mut names = String::from("<g class=\"legend\">\n");
    for (i, b) in bars.iter().enumerate() {
        let y = y0 + 8.0 + i as f64 * ROW;
        let _ = writeln!(
            s,
            "<rect class=\"bar\" data-name=\"{}\"{} x=\"{x0}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{BAR_H}\" fill=\"{}\" fill-opacity=\"{}\"><title>{}</title></rect><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#222\">{}</text>",
            esc(&b.name),
            b.binding,
            px(b.value) - x0,
            b.color,
            b.opacity,
            esc(&b.tip),
            px(b.value) + 6.0,
            y + 13.0,
            esc(&label(p.y.unit, b.value))
        );
        let _ = writeln!(
            names,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#222\">{}</text>",
            x0 - 8.0,
            y + 13.0,
            esc(&b.name)
        );
    }
    names.push_str("</g>\n");
    s.push_str(&names);
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use crate::svg::{Axis, Plot, Scale, Series, Style, StyleKey, Unit};

    fn series(name: &str, style: Style, size: f64, v: f64) -> Series {
        Series {
            name: name.into(),
            legend: style == Style::Solid,
            binding: name.into(),
            color: "#1f77b4".into(),
            style,
            width: 2.0,
            opacity: 1.0,
            points: vec![(size, v)],
            markers: vec![0],
            tips: vec![format!("{name} tip")],
        }
    }

    fn plot(series: Vec<Series>, style_keys: Vec<StyleKey>) -> Plot {
        Plot {
            id: "t".into(),
            title: "Throughput at 1KiB".into(),
            x: Axis {
                label: "sample size (bytes)".into(),
                scale: Scale::Log,
                unit: Unit::Bytes,
            },
            y: Axis {
                label: "received samples per second".into(),
                scale: Scale::Log,
                unit: Unit::Number,
            },
            series,
            style_keys,
        }
    }

    #[test]
    fn one_size_is_a_bar_per_line() {
        let p = plot(
            vec![
                series("udp", Style::Solid, 1024.0, 21_000.0),
                series("tcp", Style::Solid, 1024.0, 600_000.0),
            ],
            vec![],
        );
        assert!(p.is_bars());
        let svg = p.render();
        assert_eq!(svg.matches("class=\"bar\"").count(), 2, "{svg}");
        assert!(!svg.contains("class=\"series\""), "{svg}");
        assert!(
            svg.contains("data-name=\"udp\" data-binding=\"udp\""),
            "{svg}"
        );
        assert!(svg.contains("<title>tcp tip</title>"), "{svg}");
        assert!(svg.contains(">600k</text>"), "{svg}");
        let legend = &svg[svg.find("class=\"legend\"").unwrap()..];
        assert!(legend.contains(">udp</text>") && legend.contains(">tcp</text>"));
    }

    #[test]
    fn secondary_lines_are_named_by_their_style_key() {
        let keys = vec![
            StyleKey::new("publisher", Style::Solid),
            StyleKey::new("subscriber", Style::Dashed),
        ];
        let p = plot(
            vec![
                series("udp", Style::Solid, 1024.0, 40.0),
                series("udp", Style::Dashed, 1024.0, 30.0),
            ],
            keys,
        );
        let svg = p.render();
        assert!(svg.contains(">udp publisher</text>"), "{svg}");
        assert!(svg.contains(">udp subscriber</text>"), "{svg}");
    }

    #[test]
    fn two_sizes_stay_lines() {
        let mut s = series("udp", Style::Solid, 64.0, 1.0);
        s.points.push((1024.0, 2.0));
        let p = plot(vec![s], vec![]);
        assert!(!p.is_bars());
        assert!(p.render().contains("class=\"series\""));
    }
}
