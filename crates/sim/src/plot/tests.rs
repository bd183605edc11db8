//! Tests of the plots: their SVG and PNG output.

use super::*;

#[test]
fn nice_steps() {
    assert_eq!(nice_step(0.9), 1.0);
    assert_eq!(nice_step(1.5), 2.0);
    assert_eq!(nice_step(3.0), 5.0);
    assert_eq!(nice_step(4100.0), 5000.0);
    assert_eq!(nice_step(0.0), 1.0);
    assert_eq!(nice_step(f64::NAN), 1.0);
}

#[test]
fn log_ticks_label_decades() {
    let a = Axis::log("BER", 1e-7, 1e-3);
    let t = a.ticks();
    let labels: Vec<String> = t
        .iter()
        .filter(|(_, major)| *major)
        .map(|(v, _)| tick_label(*v, true))
        .collect();
    assert_eq!(labels, ["1e-7", "1e-6", "1e-5", "1e-4", "1e-3"]);
    assert_eq!(t.len(), 4 * 9 + 1);
}

#[test]
fn svg_is_well_formed_and_skips_bad_points() {
    let panel = Panel {
        title: "t <&>".into(),
        x: Axis::log("x", 1e-7, 1e-3),
        y: Axis::linear("y", 0.0, 100.0),
        series: vec![Series {
            marker: Marker::Dot,
            ..Series::line(
                "a",
                "#1f77b4",
                vec![
                    (1e-7, 10.0),
                    (f64::NAN, 5.0),
                    (1e-5, 50.0),
                    (1e-3, 500.0),
                    (0.0, 1.0),
                ],
            )
        }],
        notes: vec!["note".into()],
    };
    let s = svg("title", &[panel.clone(), panel]);
    assert!(s.starts_with("<svg"));
    assert!(s.ends_with("</svg>\n"));
    assert!(s.contains("t &lt;&amp;&gt;"));
    assert!(!s.contains("NaN") && !s.contains("inf"));
    assert!(!s.contains("error-bar"));
    let mut with_bars = panel_with_bars();
    let bars = svg("bars", std::slice::from_ref(&with_bars));
    assert_eq!(bars.matches("class=\"error-bar\"").count(), 2, "{bars}");
    // A bar whose x cannot be shown is skipped.
    with_bars.series[0].bars.push((-1.0, 1.0, 2.0));
    assert_eq!(
        svg("bars", &[with_bars])
            .matches("class=\"error-bar\"")
            .count(),
        2
    );
    assert_eq!(s.matches("<svg").count(), 1);
    // Degenerate axes still render.
    let bad = Panel {
        title: String::new(),
        x: Axis::log("x", -1.0, f64::NAN),
        y: Axis::linear("y", 5.0, 5.0),
        series: vec![],
        notes: vec![],
    };
    assert!(!svg("", &[bad]).contains("NaN"));
}

fn panel_with_bars() -> Panel {
    Panel {
        title: "bars".into(),
        x: Axis::log("x", 1e-7, 1e-3),
        y: Axis::log("y", 1.0, 1000.0),
        series: vec![Series {
            bars: vec![(1e-6, 10.0, 20.0), (1e-4, 0.0, 5.0)],
            ..Series::line("a", "#1f77b4", vec![(1e-6, 15.0), (1e-4, 2.0)])
        }],
        notes: vec![],
    }
}

/// The PNG of a plot decodes, has the SVG's size times the scale, is white behind the plot
/// and has text drawn in it (dark pixels where only a title is).
#[test]
fn png_has_the_svg_size_and_text() {
    let renderer = PngRenderer::new().expect("system fonts (Debian: fonts-dejavu-core)");
    let panel = Panel {
        title: "panel".into(),
        x: Axis::log("bit error rate", 1e-7, 1e-3),
        y: Axis::linear("goodput", 0.0, 10.0),
        series: vec![Series::line("a", "#1f77b4", vec![(1e-7, 1.0), (1e-3, 9.0)])],
        notes: vec![],
    };
    let doc = svg("Title text", &[panel]);
    for (scale, w, h) in [(1.0, 900, 460), (0.5, 450, 230)] {
        let png = renderer.render(&doc, scale).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let image = tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert_eq!((image.width(), image.height()), (w, h), "scale {scale}");
    }
    // Text only: the title's glyphs must be drawn, which needs a font.
    let text = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"40\" \
                font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\
                <rect width=\"200\" height=\"40\" fill=\"white\"/>\
                <text x=\"10\" y=\"28\" font-size=\"20\">goodput</text></svg>";
    let image = tiny_skia::Pixmap::decode_png(&renderer.render(text, 1.0).unwrap()).unwrap();
    let dark = image.pixels().iter().filter(|p| p.red() < 128).count();
    assert!(dark > 50, "no text drawn ({dark} dark pixels)");
    assert!(renderer.render("not svg", 1.0).is_err());
    assert!(renderer.render(text, 0.0).is_err());
}
