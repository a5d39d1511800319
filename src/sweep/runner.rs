//! Runs in parallel, results handed on in a fixed order. Workers take the next run from a
//! shared counter (parallelism only across independent runs; each run is single-threaded and
//! deterministic); the caller's `sink` sees result `i` only after every result before it, so
//! what it writes is the same bytes for any number of threads, and it writes as the runs
//! finish, not at the end (what `--resume` relies on after a kill).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// `work` on every item, over `threads` threads; `sink(i, result)` in item order, on the
/// calling thread. The first error from `sink` stops handing out work and is returned.
pub fn run_in_order<T, R, E>(
    items: &[T],
    threads: usize,
    work: impl Fn(&T) -> R + Sync,
    mut sink: impl FnMut(usize, R) -> Result<(), E>,
) -> Result<(), E>
where
    T: Sync,
    R: Send,
{
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let workers = threads.max(1).min(items.len().max(1));
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(usize, R)>();
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, stop, work) = (&next, &stop, &work);
            scope.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                if tx.send((i, work(item))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut pending: BTreeMap<usize, R> = BTreeMap::new();
        let mut due = 0;
        for (i, r) in rx {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&due) {
                if let Err(e) = sink(due, r) {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
                due += 1;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_item_order_for_any_thread_count() {
        let items: Vec<u64> = (0..200).collect();
        for threads in [1, 2, 3, 8] {
            let mut seen = Vec::new();
            run_in_order(
                &items,
                threads,
                |&x| {
                    // Uneven work, so completion order is not item order.
                    let spin = (x * 7919) % 5000;
                    std::hint::black_box((0..spin).fold(x, |a, b| a.wrapping_mul(31) ^ b));
                    x * 2
                },
                |i, r| {
                    seen.push((i, r));
                    Ok::<(), ()>(())
                },
            )
            .unwrap();
            let expected: Vec<(usize, u64)> = (0..200).map(|i| (i, i as u64 * 2)).collect();
            assert_eq!(seen, expected, "threads {threads}");
        }
    }

    #[test]
    fn a_sink_error_stops_the_work() {
        let items: Vec<u64> = (0..1_000).collect();
        let done = AtomicUsize::new(0);
        let r = run_in_order(
            &items,
            2,
            |&x| {
                done.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_millis(1));
                x
            },
            |i, _| if i == 3 { Err("closed") } else { Ok(()) },
        );
        assert_eq!(r, Err("closed"));
        assert!(done.load(Ordering::Relaxed) < 1_000);
        // Nothing to run: nothing handed on.
        let none: Vec<u64> = Vec::new();
        assert_eq!(run_in_order(&none, 4, |&x| x, |_, _| Err(())), Ok(()));
    }
}
