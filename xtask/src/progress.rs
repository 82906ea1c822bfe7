//! A counter for long runs (`conformance`, `security`, `explore`): on a terminal, one line
//! that counts up (done, total, failures, elapsed time), with only the lines worth reading
//! printed above it; otherwise every line, plainly, as a log.

use std::io::{IsTerminal as _, Write as _};
use std::sync::Mutex;
use std::time::Instant;

pub(crate) struct Progress {
    label: String,
    total: usize,
    live: bool,
    started: Instant,
    state: Mutex<(usize, usize)>,
}

impl Progress {
    /// A counter of `total` steps, live when both standard output and standard error are a
    /// terminal.
    pub(crate) fn new(label: &str, total: usize) -> Self {
        let live = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
        Self {
            label: label.to_owned(),
            total,
            live,
            started: Instant::now(),
            state: Mutex::new((0, 0)),
        }
    }

    /// One step done, with its line. `notable` lines (failures, skips) are always printed;
    /// on a terminal the others only move the counter.
    pub(crate) fn step(&self, line: &str, notable: bool, failed: bool) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.0 += 1;
        if failed {
            state.1 += 1;
        }
        if !self.live {
            println!("{line}");
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K");
        if notable {
            println!("{line}");
        }
        let _ = write!(
            err,
            "{} {}/{} ({} failed) {:.0}s",
            self.label,
            state.0,
            self.total,
            state.1,
            self.started.elapsed().as_secs_f64()
        );
        let _ = err.flush();
    }

    /// Take the counter off the terminal.
    pub(crate) fn finish(&self) {
        if self.live {
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
        }
    }
}
