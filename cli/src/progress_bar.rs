//! The progress bar on standard error: bytes, rate and ETA, drawn only on a
//! terminal and only for inputs large enough to take a noticeable time. It
//! fits the terminal's width: the name is cut short where it would not.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use treehash::Progress;

/// Inputs smaller than this finish before a bar would be worth drawing; a
/// sequential input, whose length is unknown, shows its spinner once it has
/// passed it.
const MIN_BAR_BYTES: u64 = 256 << 20;

/// One input's progress bar, hidden until the input proves large enough.
pub struct InputProgress {
    bar: ProgressBar,
    name: String,
    enabled: bool,
    /// A sequential input's spinner is waiting for [`MIN_BAR_BYTES`].
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
            // A sequential input: its length is unknown, so a spinner with the
            // bytes so far.
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

/// Lists of at least this many inputs show a bar even when their bytes are
/// few: opening and closing that many files takes a noticeable time.
const MIN_BAR_FILES: usize = 10_000;

/// The progress of a run over its inputs. One input has its own bar
/// ([`InputProgress`]); a list has one bar for all of its files: files and
/// bytes done out of the total, drawn once the list proves large enough.
/// The total of a list named on the command line is added up on a thread
/// of its own, so that a long list starts hashing at once; a list read as
/// it is checked (`-c`) has none, and shows files and bytes so far.
pub struct ListProgress {
    single: Option<InputProgress>,
    bar: ProgressBar,
    enabled: bool,
    files_done: Arc<AtomicUsize>,
    /// The bar is drawn, or about to be (by the thread adding up the total).
    shown: Arc<AtomicBool>,
}

impl ListProgress {
    /// The progress of hashing `files`, drawn only if `wanted` and standard
    /// error is a terminal.
    pub fn new(files: &[std::path::PathBuf], wanted: bool) -> Self {
        if let [only] = files {
            let single = InputProgress::new(&only.display().to_string(), wanted);
            let len = std::fs::metadata(only)
                .ok()
                .filter(|m| m.is_file() && !treehash::input::is_stdin_name(only))
                .map(|m| m.len());
            single.start(len);
            return ListProgress {
                single: Some(single),
                ..Self::unknown(false)
            };
        }
        let progress = Self::unknown(wanted);
        if progress.enabled {
            // Drawn with the total once it is known, unless the bytes or
            // files so far showed the bar first.
            let (bar, files, count) = (progress.bar.clone(), files.to_vec(), files.len());
            let (done, shown) = (progress.files_done.clone(), progress.shown.clone());
            // Without the thread (refused by the system) the bar has no total.
            let _ = std::thread::Builder::new().spawn(move || {
                let total: u64 = files
                    .iter()
                    .filter_map(|f| std::fs::metadata(f).ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
                    .sum();
                bar.set_length(total);
                if (total >= MIN_BAR_BYTES || count >= MIN_BAR_FILES)
                    && !shown.swap(true, Ordering::Relaxed)
                {
                    draw(&bar, done, Some(count));
                }
            });
        }
        progress
    }

    /// The progress of a list whose length is not known in advance.
    pub fn unknown(wanted: bool) -> Self {
        ListProgress {
            single: None,
            bar: ProgressBar::hidden(),
            enabled: wanted && std::io::stderr().is_terminal(),
            files_done: Arc::default(),
            shown: Arc::default(),
        }
    }

    /// One more input is done.
    pub fn input_done(&self) {
        let done = self.files_done.fetch_add(1, Ordering::Relaxed) + 1;
        if done >= MIN_BAR_FILES {
            self.show_as_it_goes();
        }
    }

    /// Draws the bar, with files and bytes so far, if it is not yet.
    fn show_as_it_goes(&self) {
        if self.enabled && !self.shown.swap(true, Ordering::Relaxed) {
            draw(&self.bar, self.files_done.clone(), None);
        }
    }

    /// Runs `f` (which writes to the terminal) with the bar out of its way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.single {
            Some(single) => single.bar.suspend(f),
            None => self.bar.suspend(f),
        }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        match &self.single {
            Some(single) => single.finish(),
            None => self.bar.finish_and_clear(),
        }
    }
}

/// Draws a list's bar: files done (of `count`, when known), bytes and rate,
/// and with a total of bytes, a bar and the time left.
fn draw(bar: &ProgressBar, done: Arc<AtomicUsize>, count: Option<usize>) {
    let template = match count {
        Some(_) => "{files} [{bar:20}] {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta}",
        None => "{spinner} {files} {bytes} {binary_bytes_per_sec} {elapsed}",
    };
    let files = move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
        let done = done.load(Ordering::Relaxed);
        let _ = match count {
            Some(count) => write!(w, "{done}/{count} files"),
            None => write!(w, "{done} files"),
        };
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> ").with_key("files", files));
    }
    bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
    bar.enable_steady_tick(Duration::from_millis(250));
}

impl Progress for ListProgress {
    fn advance(&self, bytes: u64) {
        match &self.single {
            Some(single) => single.advance(bytes),
            None => {
                self.bar.inc(bytes);
                if self.bar.position() >= MIN_BAR_BYTES {
                    self.show_as_it_goes();
                }
            }
        }
    }

    fn engines(&self, shares: &[treehash::EngineShare]) {
        if let Some(single) = &self.single {
            single.engines(shares);
        }
    }
}
