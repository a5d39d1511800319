//! What a state machine hands back: its effects, in the order it chose them, and its trace
//! lines. A handler takes `(now, input, &mut Out)` and never touches the queue, the network or
//! an observer; the driver applies the effects (as stateright's `Out` and Kafka's
//! `CoordinatorResult` do). Trace lines are for people: they are formatted only when a trace
//! is kept, and nothing asserted or hashed depends on them.

pub struct Out<E> {
    effects: Vec<E>,
    logs: Vec<String>,
    logging: bool,
}

impl<E> Out<E> {
    /// `logging`: keep trace lines (`--trace`); otherwise [`log!`](crate::log) formats nothing.
    pub fn new(logging: bool) -> Self {
        Out {
            effects: Vec::new(),
            logs: Vec::new(),
            logging,
        }
    }

    pub fn push(&mut self, effect: E) {
        self.effects.push(effect);
    }

    pub fn logging(&self) -> bool {
        self.logging
    }

    /// A trace line (use [`log!`](crate::log), which formats only when logging).
    pub fn log_line(&mut self, line: String) {
        if self.logging {
            self.logs.push(line);
        }
    }

    /// Takes the effects and trace lines out, leaving the buffers (and their capacity) for the
    /// next handler.
    pub fn drain(&mut self) -> (std::vec::Drain<'_, E>, std::vec::Drain<'_, String>) {
        (self.effects.drain(..), self.logs.drain(..))
    }

    /// Takes the buffers themselves out, for a driver that needs itself mutably while it applies
    /// the effects; [`Out::give_back`] returns them, emptied, with their capacity.
    pub fn take(&mut self) -> (Vec<E>, Vec<String>) {
        (
            std::mem::take(&mut self.effects),
            std::mem::take(&mut self.logs),
        )
    }

    /// The buffers [`Out::take`] took, back for the next handler. Nothing may have been pushed
    /// meanwhile: it would be lost.
    pub fn give_back(&mut self, mut effects: Vec<E>, mut logs: Vec<String>) {
        debug_assert!(
            self.effects.is_empty() && self.logs.is_empty(),
            "effects pushed while the buffers were out"
        );
        effects.clear();
        logs.clear();
        self.effects = effects;
        self.logs = logs;
    }
}

/// `log!(out, "...", args)`: a trace line on `out` (anything with `logging()` and
/// `log_line(String)`), formatted only when the run keeps a trace.
#[macro_export]
macro_rules! log {
    ($out:expr, $($arg:tt)*) => {
        if $out.logging() {
            let line = format!($($arg)*);
            $out.log_line(line);
        }
    };
}
