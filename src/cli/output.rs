//! The one way out to the terminal: everything mcpenv prints, data or
//! status, text or JSON, success or error, passes through a [`Shield`] that
//! masks every secret this run knows of and escapes any control or bidi
//! character still raw in rendered text. Commands render into a buffer and
//! hand it here, so a new output cannot forget either rule.

use std::io::{self, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::check::EnvSources;
use crate::display;
use crate::layered::Inventory;
use crate::redact::Redactor;

/// What this run knows must never be printed whole.
#[derive(Debug, Default)]
pub struct Shield {
    redactor: Mutex<Redactor>,
    learned_inventory: AtomicBool,
    learned_sources: AtomicBool,
}

impl Shield {
    /// A shield that already knows the secrets among the command line's
    /// words (a mistyped `-e TOKEN:ghp_…` is masked in its usage error).
    pub fn for_arguments(words: &[String]) -> Self {
        let shield = Self::default();
        shield.learn(|redactor| redactor.learn_words(words));
        shield
    }

    /// Teaches the redactor something.
    pub fn learn(&self, teach: impl FnOnce(&mut Redactor)) {
        teach(&mut self.redactor());
    }

    /// Learns every secret `scan` finds in every scope.
    pub fn learn_inventory(&self, inventory: &Inventory) {
        self.redactor().learn_inventory(inventory);
        self.learned_inventory.store(true, Ordering::Relaxed);
    }

    /// Learns the secrets among the values of `.env`, `.env.local`, the
    /// user's store, `.env.example`, Claude Code's settings `env` and the
    /// environment.
    pub fn learn_sources(&self, sources: &EnvSources) {
        self.redactor().learn_sources(sources);
        self.learned_sources.store(true, Ordering::Relaxed);
    }

    /// Learns what a use case read.
    pub fn learn_read(&self, read: &crate::ops::Read) {
        self.learn_inventory(&read.inventory);
        if let Some(sources) = &read.sources {
            self.learn_sources(sources);
        }
    }

    /// Whether the configuration and the env files were learned already.
    pub fn knows_world(&self) -> (bool, bool) {
        (
            self.learned_inventory.load(Ordering::Relaxed),
            self.learned_sources.load(Ordering::Relaxed),
        )
    }

    /// Rendered text made safe: secrets masked, stray controls escaped.
    pub fn clean(&self, rendered: &str) -> String {
        let masked = self.redactor().mask_text(rendered).into_owned();
        display::escape_stray(&masked).into_owned()
    }

    /// A JSON document with every secret masked (strings stay exact
    /// otherwise: JSON escaping makes controls inert).
    pub fn clean_json(&self, value: &mut Value) {
        self.redactor().mask_json(value);
    }

    fn redactor(&self) -> std::sync::MutexGuard<'_, Redactor> {
        // A panic while holding the lock leaves a redactor that is still
        // whole (learning only appends), so a poisoned lock is used as is.
        self.redactor
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Where rendered text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Data.
    Stdout,
    /// Everything else.
    Stderr,
}

/// Renders with `write` into a buffer, cleans it with `shield` (unless
/// `reveal`: the command exists to print values, as `env` does), and writes
/// it to `stream` through anstream, which drops colour where it is off.
pub fn write(
    shield: &Shield,
    stream: Stream,
    reveal: bool,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut buffer = Vec::new();
    write(&mut buffer)?;
    if buffer.is_empty() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&buffer);
    let cleaned = if reveal {
        text.into_owned()
    } else {
        shield.clean(&text)
    };
    match stream {
        Stream::Stdout => {
            let mut out = anstream::stdout().lock();
            out.write_all(cleaned.as_bytes())?;
            out.flush()
        }
        Stream::Stderr => {
            let mut err = anstream::stderr().lock();
            err.write_all(cleaned.as_bytes())?;
            err.flush()
        }
    }
}

/// Writes `value` to stdout as pretty JSON with every secret masked.
pub fn write_json(shield: &Shield, mut value: Value, reveal: bool) -> io::Result<()> {
    if !reveal {
        shield.clean_json(&mut value);
    }
    let mut out = io::BufWriter::new(io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, &value)?;
    writeln!(out)?;
    out.flush()
}

/// Writes one compact JSON line (JSON Lines) with every secret masked.
pub fn write_json_line(shield: &Shield, mut value: Value) -> io::Result<()> {
    shield.clean_json(&mut value);
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, &value)?;
    writeln!(out)?;
    out.flush()
}
