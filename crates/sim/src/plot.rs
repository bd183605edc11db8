//! Minimal SVG line charts (no dependencies): linear or logarithmic axes, several series with
//! markers, dashes or steps, a legend, and several panels stacked in one image.
//!
//! Used for the draft-style goodput-versus-BER plots of `taroc reproduce` and the
//! congestion-window tracking plot of `taroc sim --cwnd-plot`. The output is plain SVG 1.1 that
//! browsers and `rsvg-convert` render; it is deterministic (same data, same bytes).
//! [`PngRenderer`] rasterises these SVGs to PNG (with `resvg`, text drawn in a system font).

use std::fmt::Write as _;
use std::sync::Arc;

use resvg::{tiny_skia, usvg};

/// One axis of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The axis title.
    pub label: String,
    /// Logarithmic (base 10) instead of linear.
    pub log: bool,
    /// Smallest value shown.
    pub min: f64,
    /// Largest value shown.
    pub max: f64,
}

impl Axis {
    /// A linear axis.
    pub fn linear(label: &str, min: f64, max: f64) -> Axis {
        Axis {
            label: label.into(),
            log: false,
            min,
            max,
        }
    }

    /// A logarithmic axis (both ends must be positive).
    pub fn log(label: &str, min: f64, max: f64) -> Axis {
        Axis {
            label: label.into(),
            log: true,
            min,
            max,
        }
    }

    /// A usable range: finite, increasing, positive on a log axis.
    fn range(&self) -> (f64, f64) {
        let (mut lo, mut hi) = (self.min, self.max);
        if self.log {
            lo = if lo.is_finite() && lo > 0.0 { lo } else { 1e-9 };
            hi = if hi.is_finite() && hi > lo {
                hi
            } else {
                lo * 10.0
            };
            (lo.log10(), hi.log10())
        } else {
            lo = if lo.is_finite() { lo } else { 0.0 };
            hi = if hi.is_finite() && hi > lo {
                hi
            } else {
                lo + 1.0
            };
            (lo, hi)
        }
    }

    /// Where `v` falls, 0 at `min` and 1 at `max` (None if it cannot be shown).
    fn fraction(&self, v: f64) -> Option<f64> {
        let (lo, hi) = self.range();
        let v = if self.log {
            if v.is_nan() || v <= 0.0 {
                return None;
            }
            v.log10()
        } else {
            v
        };
        v.is_finite().then(|| (v - lo) / (hi - lo))
    }

    /// Tick values and whether each gets a label and a grid line.
    fn ticks(&self) -> Vec<(f64, bool)> {
        let (lo, hi) = self.range();
        let mut ticks = Vec::new();
        if self.log {
            let first = lo.floor() as i32;
            let last = hi.ceil() as i32;
            for e in first..=last.min(first + 40) {
                for m in 1..10 {
                    let v = f64::from(m) * 10f64.powi(e);
                    let l = v.log10();
                    if l >= lo - 1e-9 && l <= hi + 1e-9 {
                        ticks.push((v, m == 1));
                    }
                }
            }
        } else {
            let step = nice_step((hi - lo) / 6.0);
            let mut v = (lo / step).ceil() * step;
            while v <= hi + step * 1e-9 && ticks.len() < 50 {
                ticks.push((if v.abs() < step * 1e-9 { 0.0 } else { v }, true));
                v += step;
            }
        }
        ticks
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag)
}

/// A tick label: plain numbers, or `1e-7` style for powers of ten on a log axis.
fn tick_label(v: f64, log: bool) -> String {
    if log && !(1e-2..1e5).contains(&v) {
        let e = v.log10().round() as i32;
        return format!("1e{e}");
    }
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// No markers.
    None,
    /// Filled circles.
    Dot,
    /// Hollow squares.
    Square,
}

/// One line of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// SVG color.
    pub color: String,
    /// Dashed line.
    pub dashed: bool,
    /// Markers at the points.
    pub marker: Marker,
    /// Draw as a staircase (the value holds until the next point), for traces.
    pub step: bool,
    /// Line width, px.
    pub width: f64,
    /// The points (x, y); non-finite or unshowable points break the line.
    pub points: Vec<(f64, f64)>,
    /// Error bars (x, low, high): a vertical line with caps from `low` to `high` at `x`.
    pub bars: Vec<(f64, f64, f64)>,
}

impl Series {
    /// A solid series without markers.
    pub fn line(label: &str, color: &str, points: Vec<(f64, f64)>) -> Series {
        Series {
            label: label.into(),
            color: color.into(),
            dashed: false,
            marker: Marker::None,
            step: false,
            width: 1.6,
            points,
            bars: Vec::new(),
        }
    }
}

/// One panel: axes, series, a title and notes under it.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Title above the plot area.
    pub title: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// The series, drawn in order.
    pub series: Vec<Series>,
    /// Lines of small text under the panel.
    pub notes: Vec<String>,
}

const WIDTH: f64 = 900.0;
const PANEL_HEIGHT: f64 = 430.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 210.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
const NOTE_LINE: f64 = 15.0;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Renders panels stacked top to bottom under an overall `title`, as an SVG document.
pub fn svg(title: &str, panels: &[Panel]) -> String {
    let heights: Vec<f64> = panels
        .iter()
        .map(|p| PANEL_HEIGHT + NOTE_LINE * p.notes.len() as f64)
        .collect();
    let total = 30.0 + heights.iter().sum::<f64>();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{total}\" \
         viewBox=\"0 0 {WIDTH} {total}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">"
    );
    let _ = writeln!(
        out,
        "<rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{total}\" fill=\"white\"/>"
    );
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"20\" font-size=\"15\" font-weight=\"bold\" text-anchor=\"middle\">{}</text>",
        WIDTH / 2.0,
        escape(title)
    );
    let mut top = 30.0;
    for (panel, h) in panels.iter().zip(&heights) {
        draw_panel(&mut out, panel, top);
        top += h;
    }
    out.push_str("</svg>\n");
    out
}

fn draw_panel(out: &mut String, p: &Panel, top: f64) {
    let (x0, x1) = (LEFT, WIDTH - RIGHT);
    let (y0, y1) = (top + TOP, top + PANEL_HEIGHT - BOTTOM);
    let px = |v: f64| p.x.fraction(v).map(|f| x0 + f * (x1 - x0));
    let py = |v: f64| p.y.fraction(v).map(|f| y1 - f * (y1 - y0));
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" font-size=\"13\" text-anchor=\"middle\">{}</text>",
        (x0 + x1) / 2.0,
        top + 24.0,
        escape(&p.title)
    );
    draw_grid(out, p, [x0, x1, y0, y1], &px, &py);
    let _ = writeln!(
        out,
        "<rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"black\"/>",
        x1 - x0,
        y1 - y0
    );
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
        (x0 + x1) / 2.0,
        y1 + 36.0,
        escape(&p.x.label)
    );
    let (lx, ly) = (20.0, (y0 + y1) / 2.0);
    let _ = writeln!(
        out,
        "<text x=\"{lx}\" y=\"{ly:.1}\" font-size=\"12\" text-anchor=\"middle\" \
         transform=\"rotate(-90 {lx} {ly:.1})\">{}</text>",
        escape(&p.y.label)
    );
    // Series, clipped to the plot area.
    let clip = format!("clip{}", top as u64);
    let _ = writeln!(
        out,
        "<clipPath id=\"{clip}\"><rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{:.1}\"/></clipPath>",
        x1 - x0,
        y1 - y0
    );
    let _ = writeln!(out, "<g clip-path=\"url(#{clip})\">");
    for s in &p.series {
        draw_series(out, s, &px, &py, y0, y1);
    }
    out.push_str("</g>\n");
    draw_legend(out, p, x1, y0);
    for (i, note) in p.notes.iter().enumerate() {
        let _ = writeln!(
            out,
            "<text x=\"{x0:.1}\" y=\"{:.1}\" font-size=\"10.5\" fill=\"#333333\">{}</text>",
            y1 + 52.0 + NOTE_LINE * i as f64,
            escape(note)
        );
    }
}

/// The grid lines and tick labels of panel `p`, whose plot area spans `[x0, x1, y0, y1]`.
fn draw_grid(
    out: &mut String,
    p: &Panel,
    [x0, x1, y0, y1]: [f64; 4],
    px: &dyn Fn(f64) -> Option<f64>,
    py: &dyn Fn(f64) -> Option<f64>,
) {
    for (v, major) in p.x.ticks() {
        let Some(x) = px(v) else { continue };
        let color = if major { "#cccccc" } else { "#eeeeee" };
        let _ = writeln!(
            out,
            "<line x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{y1:.1}\" stroke=\"{color}\"/>"
        );
        if major {
            let _ = writeln!(
                out,
                "<text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
                y1 + 16.0,
                tick_label(v, p.x.log)
            );
        }
    }
    for (v, major) in p.y.ticks() {
        let Some(y) = py(v) else { continue };
        let color = if major { "#cccccc" } else { "#eeeeee" };
        let _ = writeln!(
            out,
            "<line x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{x1:.1}\" y2=\"{y:.1}\" stroke=\"{color}\"/>"
        );
        if major {
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
                x0 - 6.0,
                y + 4.0,
                tick_label(v, p.y.log)
            );
        }
    }
}

/// The legend of panel `p`, right of its plot area (which ends at `x1` and starts at `y0`).
fn draw_legend(out: &mut String, p: &Panel, x1: f64, y0: f64) {
    let mut ly = y0 + 6.0;
    for s in &p.series {
        if s.label.is_empty() {
            continue;
        }
        let lx = x1 + 14.0;
        let _ = writeln!(
            out,
            "<line x1=\"{lx:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{}\" stroke-width=\"{}\"{}/>",
            lx + 28.0,
            s.color,
            s.width,
            dash(s)
        );
        marker(out, s, lx + 14.0, ly);
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>",
            lx + 34.0,
            ly + 4.0,
            escape(&s.label)
        );
        ly += 18.0;
    }
}

fn dash(s: &Series) -> &'static str {
    if s.dashed {
        " stroke-dasharray=\"6 4\""
    } else {
        ""
    }
}

fn marker(out: &mut String, s: &Series, x: f64, y: f64) {
    match s.marker {
        Marker::None => {}
        Marker::Dot => {
            let _ = writeln!(
                out,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.2\" fill=\"{}\"/>",
                s.color
            );
        }
        Marker::Square => {
            let _ = writeln!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"7\" height=\"7\" fill=\"white\" stroke=\"{}\" stroke-width=\"1.3\"/>",
                x - 3.5,
                y - 3.5,
                s.color
            );
        }
    }
}

fn draw_series(
    out: &mut String,
    s: &Series,
    px: &dyn Fn(f64) -> Option<f64>,
    py: &dyn Fn(f64) -> Option<f64>,
    y0: f64,
    y1: f64,
) {
    // Values beyond the axis are pinned just outside the area (clipped), so lines leave it
    // at the right angle instead of vanishing.
    let clamp = |y: f64| y.clamp(y0 - 5.0, y1 + 5.0);
    let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    let mut last: Option<(f64, f64)> = None;
    for &(x, y) in &s.points {
        match (px(x), py(y)) {
            (Some(x), Some(y)) => {
                let y = clamp(y);
                let run = runs.last_mut().expect("runs is never empty");
                if s.step {
                    if let Some((_, ly)) = last {
                        run.push((x, ly));
                    }
                }
                run.push((x, y));
                last = Some((x, y));
            }
            _ => {
                if runs.last().is_some_and(|r| !r.is_empty()) {
                    runs.push(Vec::new());
                }
                last = None;
            }
        }
    }
    for run in runs.iter().filter(|r| r.len() > 1) {
        let mut d = String::with_capacity(run.len() * 14);
        for (i, (x, y)) in run.iter().enumerate() {
            let _ = write!(d, "{}{x:.1},{y:.1}", if i == 0 { "M" } else { " L" });
        }
        let _ = writeln!(
            out,
            "<path d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" stroke-linejoin=\"round\"{}/>",
            s.color,
            s.width,
            dash(s)
        );
    }
    for &(x, low, high) in &s.bars {
        let Some(x) = px(x) else { continue };
        // A low end below a log axis (0) is drawn to the bottom edge.
        let (Some(top), Some(bottom)) = (py(high), py(low).or(Some(y1 + 5.0))) else {
            continue;
        };
        let (top, bottom) = (clamp(top), clamp(bottom));
        let _ = writeln!(
            out,
            "<path class=\"error-bar\" d=\"M{x:.1},{bottom:.1} L{x:.1},{top:.1} M{:.1},{bottom:.1} \
             L{:.1},{bottom:.1} M{:.1},{top:.1} L{:.1},{top:.1}\" fill=\"none\" stroke=\"{}\" \
             stroke-width=\"1\"/>",
            x - 3.0,
            x + 3.0,
            x - 3.0,
            x + 3.0,
            s.color
        );
    }
    if s.marker != Marker::None {
        for run in &runs {
            for &(x, y) in run {
                if (y0..=y1).contains(&y) {
                    marker(out, s, x, y);
                }
            }
        }
    }
}

/// The font families our SVGs ask for, in order of preference.
const FONT_FAMILIES: [&str; 3] = ["DejaVu Sans", "Helvetica", "Arial"];

/// Rasterises SVG documents to PNG, drawing text with the fonts installed on the system.
/// Loading the fonts takes a moment: make one renderer and reuse it.
#[derive(Debug)]
pub struct PngRenderer {
    options: usvg::Options<'static>,
}

impl PngRenderer {
    /// Loads the system's fonts. Fails with a message saying what to install if there are none,
    /// since text (titles, axes, legends) could not be drawn.
    pub fn new() -> Result<PngRenderer, String> {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        let family = {
            let has = |name: &str| {
                db.faces()
                    .any(|f| f.families.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)))
            };
            match FONT_FAMILIES.into_iter().find(|f| has(f)) {
                Some(f) => f.to_string(),
                // None of ours: any installed family will do.
                None => db
                    .faces()
                    .find_map(|f| f.families.first().map(|(n, _)| n.clone()))
                    .ok_or_else(|| {
                        "no fonts found on this system (searched /usr/share/fonts, \
                         /usr/local/share/fonts, ~/.fonts and ~/.local/share/fonts), so the \
                         plots' text cannot be drawn; install a TrueType font, e.g. Debian's \
                         fonts-dejavu-core (apt-get install fonts-dejavu-core)"
                            .to_string()
                    })?,
            }
        };
        db.set_sans_serif_family(&family);
        db.set_serif_family(&family);
        Ok(PngRenderer {
            options: usvg::Options {
                font_family: family,
                fontdb: Arc::new(db),
                ..usvg::Options::default()
            },
        })
    }

    /// Renders `svg` as a PNG `scale` times its size in SVG pixels (each dimension rounded up).
    pub fn render(&self, svg: &str, scale: f32) -> Result<Vec<u8>, String> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(format!("PNG scale must be positive, not {scale}"));
        }
        let tree = usvg::Tree::from_str(svg, &self.options)
            .map_err(|e| format!("cannot read the SVG: {e}"))?;
        let size = tree.size();
        let (w, h) = (
            (size.width() * scale).ceil() as u32,
            (size.height() * scale).ceil() as u32,
        );
        let mut pixmap = tiny_skia::Pixmap::new(w, h)
            .ok_or_else(|| format!("cannot make a {w}x{h} pixel image"))?;
        resvg::render(
            &tree,
            tiny_skia::Transform::from_scale(scale, scale),
            &mut pixmap.as_mut(),
        );
        pixmap
            .encode_png()
            .map_err(|e| format!("cannot encode the PNG: {e}"))
    }
}

#[cfg(test)]
mod tests;
