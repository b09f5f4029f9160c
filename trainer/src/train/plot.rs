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

/// An SVG line chart of `series` with axis labels and ticks.
pub fn line_chart(title: &str, x_label: &str, series: &[Series]) -> String {
    let (w, h, left, right, top, bottom) = (720.0, 420.0, 70.0, 170.0, 40.0, 50.0);
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let (mut x0, mut x1) = bounds(all.iter().map(|p| p.0));
    let (mut y0, mut y1) = bounds(all.iter().map(|p| p.1));
    if x1 <= x0 {
        x0 -= 0.5;
        x1 += 0.5;
    }
    if y1 <= y0 {
        y0 -= 0.5;
        y1 += 0.5;
    }
    let pad = (y1 - y0) * 0.05;
    let (y0, y1) = (y0 - pad, y1 + pad);
    let pw = w - left - right;
    let ph = h - top - bottom;
    let sx = |x: f64| left + (x - x0) / (x1 - x0) * pw;
    let sy = |y: f64| top + (1.0 - (y - y0) / (y1 - y0)) * ph;
    let mut s = String::new();
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
        let fx = x0 + (x1 - x0) * k as f64 / 4.0;
        let fy = y0 + (y1 - y0) * k as f64 / 4.0;
        let _ = writeln!(
            s,
            r##"<line x1="{0:.1}" y1="{1}" x2="{0:.1}" y2="{2}" stroke="#eee"/><text x="{0:.1}" y="{3}" text-anchor="middle">{4}</text>"##,
            sx(fx),
            top,
            top + ph,
            top + ph + 16.0,
            tick(fx)
        );
        let _ = writeln!(
            s,
            r##"<line x1="{0}" y1="{1:.1}" x2="{2}" y2="{1:.1}" stroke="#eee"/><text x="{3}" y="{4:.1}" text-anchor="end">{5}</text>"##,
            left,
            sy(fy),
            left + pw,
            left - 6.0,
            sy(fy) + 4.0,
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
    for (i, series) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let pts: Vec<String> = series
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
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
        let ly = top + 14.0 + 18.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="{color}" stroke-width="3"/><text x="{3}" y="{4}">{5}</text>"#,
            left + pw + 12.0,
            ly,
            left + pw + 32.0,
            left + pw + 38.0,
            ly + 4.0,
            escape(series.name)
        );
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
