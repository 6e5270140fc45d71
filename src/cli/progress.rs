//! Progress on stderr, drawn one way for every command: the one spinner (a terminal only), and
//! the listener of the step events of `setup` and `reset` (a spinner per step on a terminal,
//! plain lines otherwise: a line when a step starts and ends, and its news at most every 10 s,
//! so a CI log shows a long wait without filling up).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use super::output::eprint;
use crate::plan::{Event, Listener};

/// How often a plain (non-terminal) log repeats a running step's news.
const NEWS_EVERY: Duration = Duration::from_secs(10);

/// A spinner saying `msg` (with the time it has run when `elapsed`), ticking on its own.
pub fn spinner(msg: &str, elapsed: bool) -> ProgressBar {
    let template = if elapsed {
        "{spinner} {msg} ({elapsed})"
    } else {
        "{spinner} {msg}"
    };
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// Draws the steps of a command that changes the cluster.
pub struct Steps {
    tty: bool,
    bar: Option<ProgressBar>,
    /// When a plain log last showed the running step's news.
    news_at: Option<Instant>,
}

impl Steps {
    pub fn new() -> Steps {
        Steps {
            tty: std::io::stderr().is_terminal(),
            bar: None,
            news_at: None,
        }
    }
}

impl Listener<()> for Steps {
    fn on(&mut self, event: Event<'_, ()>) {
        match event {
            Event::StepStarted(msg) => {
                self.news_at = Some(Instant::now());
                if self.tty {
                    self.bar = Some(spinner(msg, true));
                } else {
                    eprint(&format!("… {msg}\n"));
                }
            }
            Event::StepNews(text) => match &self.bar {
                Some(pb) => pb.set_message(text.to_string()),
                None if self.news_at.is_none_or(|at| at.elapsed() >= NEWS_EVERY) => {
                    self.news_at = Some(Instant::now());
                    eprint(&format!("  {text}\n"));
                }
                None => {}
            },
            Event::StepDone(msg) => match self.bar.take() {
                Some(pb) => pb.finish_with_message(format!("✔ {msg}")),
                None => eprint(&format!("✔ {msg}\n")),
            },
            Event::StepFailed(msg) => {
                if let Some(pb) = self.bar.take() {
                    pb.abandon_with_message(format!("✘ {msg}"));
                }
            }
            Event::Note(line) => eprint(&format!("{line}\n")),
            _ => {}
        }
    }
}
