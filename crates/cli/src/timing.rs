//! `taroc eval --timing`: each scheme run several times over a capture, its compression and
//! decompression times reported as the median of the runs with their range, since one run's
//! figure swings with the machine's load.

use serde::Serialize;
use taroc_core::Variant;

use crate::capture::Capture;
use crate::eval::{self, Options};

/// A time over several runs: the median and the lowest and highest run, ns per packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Spread {
    /// The median of the runs (the mean of the middle two for an even count).
    pub median: f64,
    /// The lowest run.
    pub min: f64,
    /// The highest run.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (all zeros if there are none).
    pub fn of(values: &mut [f64]) -> Spread {
        if values.is_empty() {
            return Spread::default();
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let median = if n % 2 == 1 {
            values[n / 2]
        } else {
            (values[n / 2 - 1] + values[n / 2]) / 2.0
        };
        Spread {
            median,
            min: values[0],
            max: values[n - 1],
        }
    }

    /// `median (min-max)` with one decimal.
    pub fn text(&self) -> String {
        format!("{:.1} ({:.1}-{:.1})", self.median, self.min, self.max)
    }
}

/// One scheme's times over `runs` runs of a capture.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Timing {
    /// Runs measured.
    pub runs: u32,
    /// Compression, ns per packet offered.
    pub compress_ns_per_packet: Spread,
    /// Decompression, ns per frame handed to a decompressor.
    pub decompress_ns_per_packet: Spread,
}

/// Runs every scheme of `variants` `runs` times over `capture` (the same packets, impairments
/// and seed each time) and returns each one's times, in the order of `variants`.
pub fn measure(
    capture: &Capture,
    variants: &[Variant],
    options: &Options,
    runs: u32,
) -> Vec<Timing> {
    let prepared = eval::prepare(capture, options);
    variants
        .iter()
        .map(|variant| {
            let (mut compress, mut decompress) = (Vec::new(), Vec::new());
            for _ in 0..runs {
                if let Ok(r) = eval::run_scheme(capture, &prepared, variant, options) {
                    compress.push(r.compress_ns_per_packet);
                    decompress.push(r.decompress_ns_per_packet);
                }
            }
            Timing {
                runs: compress.len() as u32,
                compress_ns_per_packet: Spread::of(&mut compress),
                decompress_ns_per_packet: Spread::of(&mut decompress),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_range() {
        let s = Spread::of(&mut [56.0, 3735.0, 60.0, 58.0, 61.0]);
        assert_eq!((s.median, s.min, s.max), (60.0, 56.0, 3735.0));
        assert_eq!(Spread::of(&mut [1.0, 2.0, 4.0, 10.0]).median, 3.0);
        assert_eq!(Spread::of(&mut []), Spread::default());
        assert_eq!(s.text(), "60.0 (56.0-3735.0)");
    }

    #[test]
    fn every_scheme_is_timed_over_every_run() {
        let capture =
            crate::capture::parse(crate::BUILTIN_CAPTURE_NAME, crate::BUILTIN_CAPTURE).unwrap();
        let variants = Variant::all();
        let timings = measure(&capture, &variants, &Options::default(), 3);
        assert_eq!(timings.len(), variants.len());
        for t in &timings {
            assert_eq!(t.runs, 3);
            let c = t.compress_ns_per_packet;
            assert!(
                c.min <= c.median && c.median <= c.max && c.max > 0.0,
                "{t:?}"
            );
        }
    }
}
