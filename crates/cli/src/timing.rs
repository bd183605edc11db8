//! `taroc eval --timing`: each scheme run several times over a capture, its compression and
//! decompression times reported as the median of the runs with their range, since one run's
//! figure swings with the machine's load.

use serde::Serialize;

use crate::eval::SchemeResult;

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

/// Each scheme's times over `runs` runs: `run(i)` evaluates the capture for the `i`-th time
/// (from 0; the same packets, impairments and seed each time) and returns the results in the
/// order of the schemes. Fails as the first failed run does.
pub fn measure(
    runs: u32,
    mut run: impl FnMut(u32) -> Result<Vec<SchemeResult>, String>,
) -> Result<Vec<Timing>, String> {
    let mut times: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
    for i in 0..runs {
        let results = run(i)?;
        times.resize_with(results.len(), Default::default);
        for ((compress, decompress), result) in times.iter_mut().zip(&results) {
            compress.push(result.compress_ns_per_packet);
            decompress.push(result.decompress_ns_per_packet);
        }
    }
    Ok(times
        .into_iter()
        .map(|(mut compress, mut decompress)| Timing {
            runs: compress.len() as u32,
            compress_ns_per_packet: Spread::of(&mut compress),
            decompress_ns_per_packet: Spread::of(&mut decompress),
        })
        .collect())
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
        let variants = taroc_core::Variant::all();
        let options = crate::eval::Options::default();
        let mut runs = Vec::new();
        let timings = measure(3, |run| {
            runs.push(run);
            let file = crate::BUILTIN_CAPTURE;
            let mut reader = crate::capture::CaptureReader::new("builtin", file).unwrap();
            crate::eval::evaluate(&mut reader, &variants, &options, |_| {})
        })
        .unwrap();
        assert_eq!(runs, [0, 1, 2]);
        assert_eq!(timings.len(), variants.len());
        for t in &timings {
            assert_eq!(t.runs, 3);
            let c = t.compress_ns_per_packet;
            assert!(
                c.min <= c.median && c.median <= c.max && c.max > 0.0,
                "{t:?}"
            );
        }
        let failed = measure(3, |run| match run {
            0 => Ok(Vec::new()),
            _ => Err("cut".to_string()),
        });
        assert_eq!(failed.unwrap_err(), "cut");
    }
}
