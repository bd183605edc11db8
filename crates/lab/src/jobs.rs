//! Runs independent cells (bench cells, disturbance runs) a few at a time on scoped threads, each
//! in its own network namespaces, stopping early on the first error or on SIGINT/SIGTERM.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use taroc_gateway::Error;

/// Runs `run(i, &cells[i])` for every cell, `jobs` at a time, calling `on_record` as each
/// finishes (in completion order); returns the results in cell order, or the first error (the
/// running cells finish, no new one starts), or "interrupted" once a signal arrived.
pub fn run_cells<C: Sync, R: Send>(
    cells: &[C],
    jobs: usize,
    run: impl Fn(usize, &C) -> Result<R, Error> + Sync,
    mut on_record: impl FnMut(&R),
) -> Result<Vec<R>, Error> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    let mut results: Vec<Option<R>> = (0..cells.len()).map(|_| None).collect();
    let mut first_error = None;
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, cells.len().max(1)) {
            let tx = tx.clone();
            let (next, run) = (&next, &run);
            scope.spawn(move || loop {
                if taroc_gateway::signal::STOP.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(cell) = cells.get(i) else { break };
                if tx.send((i, run(i, cell))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (i, result) in rx {
            match result {
                Ok(record) => {
                    on_record(&record);
                    results[i] = Some(record);
                }
                Err(e) => {
                    // Stop handing out cells; the running ones finish.
                    next.store(usize::MAX / 2, Ordering::Relaxed);
                    first_error.get_or_insert(e);
                }
            }
        }
    });
    match first_error {
        Some(e) => Err(e),
        None if taroc_gateway::signal::STOP.load(Ordering::Relaxed) => {
            Err(Error::new("interrupted"))
        }
        None => Ok(results.into_iter().flatten().collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_cell_order_and_the_first_error_wins() {
        let cells: Vec<u64> = (0..20).collect();
        let mut seen = 0;
        let out = run_cells(&cells, 4, |i, &c| Ok(c * 10 + i as u64), |_| seen += 1).unwrap();
        assert_eq!(out, (0..20).map(|c| c * 11).collect::<Vec<_>>());
        assert_eq!(seen, 20);
        let failed = run_cells(
            &cells,
            3,
            |_, &c| {
                if c == 5 {
                    Err(Error::new("cell 5"))
                } else {
                    Ok(c)
                }
            },
            |_| {},
        );
        assert_eq!(failed.unwrap_err().to_string(), "cell 5");
    }
}
