//! The signals the workbench answers (`docs/commands.md#signals`): SIGTERM, SIGINT, SIGHUP
//! and SIGQUIT end it, SIGTSTP stops it, SIGCONT resumes it. They arrive as [`Signal`]
//! messages on the event loop's channel (signal-hook's iterator, on a thread of its own), so
//! the loop, which owns the terminal, restores it before the process ends or stops, and
//! enters it again and redraws on resume. Without this, a signal's default action ends or
//! stops the process with the terminal left in raw mode, the alternate screen and mouse
//! reporting on.

/// A signal the event loop acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGTERM, SIGINT, SIGHUP or SIGQUIT (the number): restore the terminal, then end by
    /// the same signal (its default action), so the parent sees what ended the process.
    End(i32),
    /// SIGTSTP (Ctrl-Z in a shell that is not in raw mode, `kill -TSTP`): restore the
    /// terminal, then stop.
    Stop,
    /// SIGCONT (`fg`, `kill -CONT`): enter the terminal again and redraw the whole screen.
    Continue,
}

#[cfg(unix)]
pub use unix::{Signals, end, stop};

/// Set while an editor runs in the foreground (`e`): a SIGTSTP then stops the process at
/// once, as its default action would (the editor owns the terminal; vi's Ctrl-Z stops its
/// whole process group, this one included), and the SIGCONT that follows is not the
/// loop's to act on.
pub static EDITING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[cfg(unix)]
mod unix {
    use super::Signal;
    use signal_hook::consts::{SIGCONT, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGTSTP};

    /// The signals that end the workbench, each after the terminal is restored.
    const ENDING: [i32; 4] = [SIGTERM, SIGINT, SIGHUP, SIGQUIT];

    /// The registered signals: from now on they no longer take their default action but
    /// wait to be read ([`Signals::pending`] or [`Signals::forward`]).
    pub struct Signals(signal_hook::iterator::Signals);

    fn of(n: i32) -> Option<Signal> {
        match n {
            SIGTSTP => Some(Signal::Stop),
            SIGCONT => Some(Signal::Continue),
            n if ENDING.contains(&n) => Some(Signal::End(n)),
            _ => None,
        }
    }

    impl Signals {
        /// Registers SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGTSTP and SIGCONT.
        ///
        /// # Errors
        /// The handlers cannot be installed (the OS refused a `sigaction`).
        pub fn new() -> std::io::Result<Signals> {
            let mut all = ENDING.to_vec();
            all.extend([SIGTSTP, SIGCONT]);
            Ok(Signals(signal_hook::iterator::Signals::new(all)?))
        }

        /// The signals that arrived since the last call, without waiting.
        pub fn pending(&mut self) -> Vec<Signal> {
            self.0.pending().filter_map(of).collect()
        }

        /// Forwards every signal from now on as a message made by `msg`, on a thread of its
        /// own that ends when `send` returns false (the channel closed).
        ///
        /// # Errors
        /// The thread cannot be started.
        pub fn forward(
            mut self,
            send: impl Fn(Signal) -> bool + Send + 'static,
        ) -> std::io::Result<()> {
            std::thread::Builder::new()
                .name("verdict-signals".into())
                .spawn(move || {
                    for n in self.0.forever() {
                        let Some(s) = of(n) else { continue };
                        if super::EDITING.load(std::sync::atomic::Ordering::SeqCst) {
                            match s {
                                Signal::Stop => {
                                    stop();
                                    continue;
                                }
                                Signal::Continue => continue,
                                Signal::End(_) => {}
                            }
                        }
                        if !send(s) {
                            break;
                        }
                    }
                })?;
            Ok(())
        }
    }

    /// Ends the process by `signal`'s default action (the terminal already restored): the
    /// parent sees the process killed by that signal (a shell's `$?` is 128 + its number).
    /// Should the signal not end it, exits with 128 + its number.
    pub fn end(signal: i32) -> ! {
        let _ = signal_hook::low_level::emulate_default_handler(signal);
        std::process::exit(128 + signal)
    }

    /// Stops the process as SIGTSTP's default action would (the terminal already
    /// restored); returns once it is continued.
    pub fn stop() {
        let _ = signal_hook::low_level::emulate_default_handler(SIGTSTP);
    }
}
