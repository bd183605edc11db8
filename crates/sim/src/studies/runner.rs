//! Running a study's independent runs on worker threads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The worker threads of a study asked for `threads` (0: one per core).
pub fn threads(threads: usize) -> usize {
    match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Runs `run` on every job on `threads` workers (0: one per core; never more than there are
/// jobs), handing out the jobs in order; calls `progress(done)` after each (from the worker).
/// The results come back in the jobs' order, whatever order the runs end in.
pub fn run_all<J: Sync, R: Send>(
    jobs: &[J],
    threads: usize,
    progress: &(dyn Fn(usize) + Sync),
    run: impl Fn(&J) -> R + Sync,
) -> Vec<R> {
    let workers = self::threads(threads).min(jobs.len()).max(1);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new(jobs.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let result = run(job);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                progress(done.fetch_add(1, Ordering::Relaxed) + 1);
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_the_jobs_order() {
        let jobs: Vec<u64> = (0..50).collect();
        let seen = AtomicUsize::new(0);
        let squares = run_all(
            &jobs,
            3,
            &|_| {
                seen.fetch_add(1, Ordering::Relaxed);
            },
            |&j| {
                // Later jobs end first.
                std::thread::sleep(std::time::Duration::from_micros(50 - j));
                j * j
            },
        );
        assert_eq!(squares, jobs.iter().map(|j| j * j).collect::<Vec<_>>());
        assert_eq!(seen.into_inner(), 50);
        assert!(run_all(&[] as &[u8], 0, &|_| {}, |_| 0).is_empty());
    }
}
