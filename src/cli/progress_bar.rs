//! The progress bar on standard error: bytes, rate and ETA, drawn only on a
//! terminal and only for inputs large enough to take a noticeable time. It
//! fits the terminal's width: the name is cut short where it would not.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use treehash::Progress;

/// Inputs smaller than this finish before a bar would be worth drawing; a
/// stream, whose length is unknown, shows its spinner once it has passed it.
const MIN_BAR_BYTES: u64 = 256 << 20;

/// One input's progress bar, hidden until the input proves large enough.
pub struct InputProgress {
    bar: ProgressBar,
    name: String,
    enabled: bool,
    /// A stream's spinner is waiting for [`MIN_BAR_BYTES`].
    waiting: AtomicBool,
}

impl InputProgress {
    /// A bar for `name`, drawn only if `wanted` and standard error is a terminal.
    pub fn new(name: &str, wanted: bool) -> Self {
        let bar = ProgressBar::hidden();
        bar.set_message(name.to_string());
        InputProgress {
            bar,
            name: name.to_string(),
            enabled: wanted && std::io::stderr().is_terminal(),
            waiting: AtomicBool::new(false),
        }
    }

    fn show(&self) {
        self.bar
            .set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
        self.bar.enable_steady_tick(Duration::from_millis(250));
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for InputProgress {
    fn start(&self, total: Option<u64>) {
        if !self.enabled {
            return;
        }
        let style = match total {
            Some(len) if len >= MIN_BAR_BYTES => {
                self.bar.set_length(len);
                ProgressStyle::with_template(
                    "{wide_msg:.bold} [{bar:20}] {bytes}/{total_bytes} {binary_bytes_per_sec} \
                     ETA {eta}",
                )
            }
            Some(_) => return,
            // A stream: its length is unknown, so a spinner with the bytes so far.
            None => ProgressStyle::with_template(
                "{spinner} {wide_msg:.bold} {bytes} {binary_bytes_per_sec} {elapsed}",
            ),
        };
        if let Ok(style) = style {
            self.bar.set_style(style.progress_chars("=> "));
        }
        if total.is_some() {
            self.show();
        } else {
            self.waiting.store(true, Ordering::Relaxed);
        }
    }

    fn advance(&self, bytes: u64) {
        self.bar.inc(bytes);
        if self.bar.position() >= MIN_BAR_BYTES && self.waiting.swap(false, Ordering::Relaxed) {
            self.show();
        }
    }

    /// The name, then each engine's share and rate: `big.iso cpu 31% 20 GB/s, gpu0 69% 45 GB/s`.
    fn engines(&self, shares: &[treehash::EngineShare]) {
        let total: u64 = shares.iter().map(|s| s.bytes).sum::<u64>().max(1);
        let parts: Vec<String> = shares
            .iter()
            .map(|s| {
                let secs = s.busy.as_secs_f64().max(1e-9);
                let share = 100 * s.bytes / total;
                format!(
                    "{} {share}% {:.0} GB/s",
                    s.engine,
                    s.bytes as f64 / secs / 1e9
                )
            })
            .collect();
        self.bar
            .set_message(format!("{} {}", self.name, parts.join(", ")));
    }
}
