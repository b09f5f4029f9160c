//! Line plots as standalone SVG files (no font or drawing dependency): the loss curve and the
//! evaluation metrics over steps, rewritten at every checkpoint and at the end of a run.

use std::fmt::Write;

/// One named series of (x, y) points.
pub struct Series<'a> {
    /// Legend text.
    pub name: &'a str,
    /// Points, x ascending.
    pub points: Vec<(f64, f64)>,
}

const COLORS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
];

/// The plot area and the data range it shows.
struct Frame {
    width: f64,
    height: f64,
    left: f64,
    top: f64,
    plot_width: f64,
    plot_height: f64,
    x: (f64, f64),
    y: (f64, f64),
}

impl Frame {
    /// A 720x420 chart whose axes cover every finite point (5% margin on y).
    fn around(series: &[Series]) -> Self {
        let (width, height, left, right, top, bottom) = (720.0, 420.0, 70.0, 170.0, 40.0, 50.0);
        let all: Vec<(f64, f64)> = series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        let widen = |(lo, hi): (f64, f64)| {
            if hi <= lo {
                (lo - 0.5, hi + 0.5)
            } else {
                (lo, hi)
            }
        };
        let x = widen(bounds(all.iter().map(|p| p.0)));
        let (y0, y1) = widen(bounds(all.iter().map(|p| p.1)));
        let pad = (y1 - y0) * 0.05;
        Frame {
            width,
            height,
            left,
            top,
            plot_width: width - left - right,
            plot_height: height - top - bottom,
            x,
            y: (y0 - pad, y1 + pad),
        }
    }

    fn sx(&self, x: f64) -> f64 {
        self.left + (x - self.x.0) / (self.x.1 - self.x.0) * self.plot_width
    }

    fn sy(&self, y: f64) -> f64 {
        self.top + (1.0 - (y - self.y.0) / (self.y.1 - self.y.0)) * self.plot_height
    }

    /// The header, the plot box, the title and five ticks per axis.
    fn axes(&self, s: &mut String, title: &str, x_label: &str) {
        let (w, h, left, top) = (self.width, self.height, self.left, self.top);
        let (pw, ph) = (self.plot_width, self.plot_height);
        let _ = write!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="{}" y="24" font-size="15" text-anchor="middle">{}</text>
<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>
"##,
            left + pw / 2.0,
            escape(title)
        );
        for k in 0..=4 {
            let fx = self.x.0 + (self.x.1 - self.x.0) * k as f64 / 4.0;
            let fy = self.y.0 + (self.y.1 - self.y.0) * k as f64 / 4.0;
            let _ = writeln!(
                s,
                r##"<line x1="{0:.1}" y1="{1}" x2="{0:.1}" y2="{2}" stroke="#eee"/><text x="{0:.1}" y="{3}" text-anchor="middle">{4}</text>"##,
                self.sx(fx),
                top,
                top + ph,
                top + ph + 16.0,
                tick(fx)
            );
            let _ = writeln!(
                s,
                r##"<line x1="{0}" y1="{1:.1}" x2="{2}" y2="{1:.1}" stroke="#eee"/><text x="{3}" y="{4:.1}" text-anchor="end">{5}</text>"##,
                left,
                self.sy(fy),
                left + pw,
                left - 6.0,
                self.sy(fy) + 4.0,
                tick(fy)
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            left + pw / 2.0,
            h - 12.0,
            escape(x_label)
        );
    }

    /// Series `i`: its line (a dot when it has one point) and its legend entry.
    fn series(&self, s: &mut String, i: usize, series: &Series) {
        let color = COLORS[i % COLORS.len()];
        let pts: Vec<String> = series
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|&(x, y)| format!("{:.1},{:.1}", self.sx(x), self.sy(y)))
            .collect();
        if let [only] = pts.as_slice() {
            let (cx, cy) = only.split_once(',').unwrap_or(("0", "0"));
            let _ = writeln!(s, r#"<circle cx="{cx}" cy="{cy}" r="3" fill="{color}"/>"#);
        } else if !pts.is_empty() {
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{}"/>"#,
                pts.join(" ")
            );
        }
        let legend_x = self.left + self.plot_width;
        let ly = self.top + 14.0 + 18.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="{color}" stroke-width="3"/><text x="{3}" y="{4}">{5}</text>"#,
            legend_x + 12.0,
            ly,
            legend_x + 32.0,
            legend_x + 38.0,
            ly + 4.0,
            escape(series.name)
        );
    }
}

/// An SVG line chart of `series` with axis labels and ticks.
pub fn line_chart(title: &str, x_label: &str, series: &[Series]) -> String {
    let frame = Frame::around(series);
    let mut s = String::new();
    frame.axes(&mut s, title, x_label);
    for (i, one) in series.iter().enumerate() {
        frame.series(&mut s, i, one);
    }
    s.push_str("</svg>\n");
    s
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if lo.is_finite() {
        (lo, hi)
    } else {
        (0.0, 1.0)
    }
}

fn tick(v: f64) -> String {
    if v.abs() >= 1000.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
