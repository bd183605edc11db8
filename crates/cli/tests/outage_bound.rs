//! The bound on an outage that the robust schemes hold by construction: once the link delivers
//! a flow's frames again, the decompressor refuses at most the frames up to the flow's next
//! periodic refresh (an IR frame after 512 compressed packets or 30 s since the last, sooner on
//! a link known to lose frames), whatever the link lost before. No rule without a reverse
//! channel can outlast a link that loses every repair frame, so the bound counts the frames the
//! link delivers in a row (a *refused run*, `taroc_sim::outage`), not the outage's whole length.
//!
//! `taroc eval` replays the project's twin captures (`captures/twins/`) and the shared Linux
//! captures (where they are beside the checkout) over links that lose 30% of their frames in
//! bursts of mean 50 and 300 (longer than the horizon a wide frame reaches: there only the
//! refresh ends a run; without it runs of 1,726 frames) and half of them at random; every
//! refused run of `taroc-plus-u` and `taroc-plus` must stay within the bound.

use std::path::PathBuf;

use taroc_cli::capture::CaptureReader;
use taroc_cli::eval::{evaluate, Options};
use taroc_core::Variant;

mod capture_dirs;
use capture_dirs::{capture_files, shared_dir};

/// The periodic refresh: an IR frame once this many packets went compressed.
const REFRESH_PACKETS: u64 = 512;
/// ... or once this long passed since the last IR frame (these captures' flows send more often
/// than once a second, so a run ends within about this long of its first frame).
const REFRESH_S: f64 = 30.0;

#[test]
fn no_refused_run_outlasts_the_periodic_refresh() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures/twins"));
    let mut files = capture_files(&dir);
    assert!(
        files.len() >= 8,
        "{} captures in {}",
        files.len(),
        dir.display()
    );
    files.extend(capture_files(&shared_dir().join("linux")));
    let variants: Vec<Variant> = ["taroc-plus-u", "taroc-plus"]
        .iter()
        .map(|name| Variant::by_name(name).expect("a scheme"))
        .collect();
    let models = [(0.3, Some(50.0)), (0.3, Some(300.0)), (0.5, None)];
    let mut longest = (0, 0.0);
    for path in &files {
        let bytes = std::fs::read(path).expect("a readable capture");
        for (loss, burst) in models {
            for seed in 1..=2 {
                let options = Options {
                    loss,
                    burst,
                    seed,
                    ..Options::default()
                };
                let mut reader =
                    CaptureReader::new(path.display().to_string(), &bytes[..]).expect("a capture");
                let results = evaluate(&mut reader, &variants, &options, |_| {}).expect("a run");
                for r in &results {
                    let (run, run_s) =
                        (r.outage.longest_refused_run, r.outage.longest_refused_run_s);
                    let at = format!(
                        "{} {} loss {loss} burst {burst:?} seed {seed}",
                        r.scheme,
                        path.display()
                    );
                    assert!(
                        run <= REFRESH_PACKETS,
                        "{run} frames refused in a row: {at}"
                    );
                    assert!(run_s <= REFRESH_S, "refused for {run_s} s in a row: {at}");
                    assert_eq!(r.incorrect_delivered, 0, "{at}");
                    longest = (longest.0.max(run), f64::max(longest.1, run_s));
                }
            }
        }
    }
    // The links broke flows for real: a bound no run came near would test nothing.
    assert!(longest.0 >= 5, "{longest:?}");
    println!(
        "longest refused run: {} frames, {:.1} s",
        longest.0, longest.1
    );
}
