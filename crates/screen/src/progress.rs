//! Progress on standard error: a bar with rows per second and time left on a terminal, a
//! plain line every few seconds otherwise (a log or a CI job shows progress, not escape codes).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

pub struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    done: u64,
    /// Rows already written by an earlier run (resumed): not counted in the rate.
    resumed: u64,
    started: Instant,
    last_line: Instant,
    quiet: bool,
    every: Duration,
}

impl Progress {
    pub fn new(total: u64, resumed: u64, quiet: bool, every: Duration) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:40.cyan/blue} {pos}/{len} rows  {rate}  {elapsed_precise} elapsed, {eta} left",
                )
                .expect("a valid template")
                // indicatif's own {per_sec} prints four decimals of rows per second.
                .with_key("rate", |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.0} rows/s", state.per_sec());
                })
                .progress_chars("##-"),
            );
            bar.set_position(resumed);
            bar.reset_eta();
            bar
        });
        Self {
            bar,
            total,
            done: resumed,
            resumed,
            started: Instant::now(),
            last_line: Instant::now(),
            quiet,
            every,
        }
    }

    pub fn advance(&mut self, rows: u64) {
        self.done += rows;
        if let Some(bar) = &self.bar {
            bar.set_position(self.done);
            return;
        }
        if !self.quiet && self.last_line.elapsed() >= self.every {
            self.last_line = Instant::now();
            eprintln!("{}", self.line());
        }
    }

    /// `12,000 of 100,000 rows (12%), 3,400 rows/s, about 26 s left`.
    fn line(&self) -> String {
        let rate = self.rate();
        let left = self.total.saturating_sub(self.done);
        let eta = if rate > 0.0 {
            format!(", about {:.0} s left", left as f64 / rate)
        } else {
            String::new()
        };
        let share = if self.total > 0 {
            100.0 * self.done as f64 / self.total as f64
        } else {
            100.0
        };
        format!(
            "{} of {} rows ({share:.0}%), {:.0} rows/s{eta}",
            self.done, self.total, rate
        )
    }

    /// Rows per second in this run.
    pub fn rate(&self) -> f64 {
        (self.done - self.resumed) as f64 / self.started.elapsed().as_secs_f64().max(1e-9)
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
