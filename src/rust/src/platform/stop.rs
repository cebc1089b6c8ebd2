//! Requests to stop serving (signals, console events), kept apart from R's
//! own interrupt flag: while the server waits or runs its own R code, such a
//! request only counts here, so R never sees an interrupt it would raise in
//! the wrong place; while a tool's R code runs in this process, an interrupt
//! is handed on to R's handler instead (it interrupts that tool), and a
//! termination request does both.
//!
//! Everything a handler touches is a lock-free atomic, so the handlers are
//! async-signal-safe and may run on any thread.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

/// How deep in R code run for a tool this process is (0: not in a tool).
// Global because the signal handlers read it (they get no data).
static FOR_TOOL: AtomicUsize = AtomicUsize::new(0);
/// Stop requests since the handlers were installed, and how many of them
/// asked to terminate (SIGTERM, SIGHUP; close, logoff, shutdown).
// Global because the signal handlers write them (they get no data).
static REQUESTS: AtomicU32 = AtomicU32::new(0);
static TERMINATIONS: AtomicU32 = AtomicU32::new(0);
/// An interrupt was handed on to R's handler since the last look.
// Global because the signal handler writes it.
static FORWARDED: AtomicBool = AtomicBool::new(false);
/// Whether the handlers are installed.
// Global because signal dispositions are process-wide (one installation).
pub(super) static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Cancellation of the tool's own function in this process: each run of a
/// tool's function gets a number (`CLOSURE`: the one running now, 0: none).
/// A cancellation records the number it is for (`CANCEL_FOR`) and sends the
/// R thread a SIGINT; the handler hands that interrupt to R only while the
/// same run goes on (never to another call, never to the server's own R
/// code), and never counts it as a stop request. `CANCEL_FORWARDED` says
/// which run got it, so R drops it if the run ends before R acts on it.
// Global because the signal handler reads them (it gets no data).
static NEXT_CLOSURE: AtomicUsize = AtomicUsize::new(1);
static CLOSURE: AtomicUsize = AtomicUsize::new(0);
static CANCEL_FOR: AtomicUsize = AtomicUsize::new(0);
static CANCEL_FORWARDED: AtomicUsize = AtomicUsize::new(0);

/// What the OS-specific handler does with a signal or event. `interrupt`:
/// SIGINT or Ctrl-C/Ctrl-Break (else a termination request); `can_forward`:
/// whether the caller can hand an interrupt to R's handler. Returns whether
/// it must (a tool's R code runs).
pub(super) fn on_signal(interrupt: bool, can_forward: bool) -> bool {
    if interrupt {
        let run = CANCEL_FOR.swap(0, Ordering::SeqCst);
        if run != 0 {
            // The SIGINT a cancellation sent (or one that came with it).
            let forward = can_forward && CLOSURE.load(Ordering::SeqCst) == run;
            if forward {
                CANCEL_FORWARDED.store(run, Ordering::SeqCst);
            }
            return forward;
        }
    }
    let for_tool = FOR_TOOL.load(Ordering::SeqCst) > 0;
    let forward = for_tool && can_forward;
    // An interrupt during a tool is for that tool only.
    if !(interrupt && forward) {
        REQUESTS.fetch_add(1, Ordering::SeqCst);
    }
    if !interrupt {
        TERMINATIONS.fetch_add(1, Ordering::SeqCst);
    }
    if forward {
        FORWARDED.store(true, Ordering::SeqCst);
    }
    if !(interrupt && forward) {
        // After the counts: the watcher's wake-up finds them.
        super::imp::ring_stop_bell();
    }
    forward
}

/// Calls its function whenever a stop request arrives, from a thread of its
/// own that sleeps on the stop bell (the handlers ring it after counting the
/// request; a signal handler can do little more than write a byte), until
/// dropped. So a server that waits for input needs no timer to notice a
/// signal.
pub struct StopWatch {
    quit: std::sync::Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

pub fn watch_stop_requests(wake: Box<dyn Fn() + Send>) -> std::io::Result<StopWatch> {
    // Rings from here on count (Windows counts them; unix's pipe keeps them).
    let mut seen = super::imp::open_stop_bell()?;
    let quit = std::sync::Arc::new(AtomicBool::new(false));
    let quitting = quit.clone();
    let thread = std::thread::Builder::new().name("mcplite-stop".into()).spawn(move || {
        while super::imp::wait_stop_bell(&mut seen) && !quitting.load(Ordering::SeqCst) {
            wake();
        }
    })?;
    Ok(StopWatch { quit, thread: Some(thread) })
}

impl Drop for StopWatch {
    fn drop(&mut self) {
        self.quit.store(true, Ordering::SeqCst);
        super::imp::ring_stop_bell();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// While alive, SIGINT, SIGTERM and SIGHUP (on Windows: the console's
/// Ctrl-C, Ctrl-Break, close, logoff and shutdown events) are stop requests
/// (see the module documentation); dropping it puts the previous handlers
/// back. Only one can be alive at a time.
pub struct StopSignals {
    saved: super::imp::SavedSignals,
}

impl StopSignals {
    pub fn install() -> std::io::Result<StopSignals> {
        if INSTALLED.swap(true, Ordering::SeqCst) {
            return Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "stop signals are already caught"));
        }
        REQUESTS.store(0, Ordering::SeqCst);
        TERMINATIONS.store(0, Ordering::SeqCst);
        FORWARDED.store(false, Ordering::SeqCst);
        match super::imp::catch_stop_signals() {
            Ok(saved) => Ok(StopSignals { saved }),
            Err(e) => {
                INSTALLED.store(false, Ordering::SeqCst);
                Err(e)
            }
        }
    }
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        super::imp::restore_stop_signals(&self.saved);
        INSTALLED.store(false, Ordering::SeqCst);
    }
}

/// How many stop requests arrived since [`StopSignals::install`], and how
/// many of those asked to terminate.
pub fn stop_requests() -> (u32, u32) {
    (REQUESTS.load(Ordering::SeqCst), TERMINATIONS.load(Ordering::SeqCst))
}

/// Marks R code run for a tool (the tool itself, converting its result):
/// while one is alive, an interrupt goes to R's handler. Nests.
pub struct ForTool(());

impl ForTool {
    pub fn enter() -> ForTool {
        FOR_TOOL.fetch_add(1, Ordering::SeqCst);
        ForTool(())
    }

    /// Leaves; returns whether an interrupt was handed to R during the
    /// outermost one (R may still hold it: the caller makes R drop it, so it
    /// interrupts nothing later).
    pub fn leave(self) -> bool {
        let outermost = FOR_TOOL.fetch_sub(1, Ordering::SeqCst) == 1;
        std::mem::forget(self);
        outermost && FORWARDED.swap(false, Ordering::SeqCst)
    }
}

impl Drop for ForTool {
    fn drop(&mut self) {
        FOR_TOOL.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The tool's own function starts running (R/invoke.R, `tool_closure()`).
pub fn closure_enter() {
    let run = NEXT_CLOSURE.fetch_add(1, Ordering::SeqCst);
    CLOSURE.store(run, Ordering::SeqCst);
}

/// It ended; returns whether a cancellation's interrupt was handed to R
/// during it (R may still hold it: the caller makes R drop it, so it does
/// not interrupt the server's own R code that follows).
pub fn closure_leave() -> bool {
    let run = CLOSURE.swap(0, Ordering::SeqCst);
    run != 0 && CANCEL_FORWARDED.compare_exchange(run, 0, Ordering::SeqCst, Ordering::SeqCst).is_ok()
}

/// Interrupt the tool function running now (from another thread): false
/// when none runs or the platform cannot (Windows: the function runs to its
/// end, and its answer is dropped).
pub fn cancel_closure(r_thread: &super::RThread) -> bool {
    let run = CLOSURE.load(Ordering::SeqCst);
    if run == 0 || !INSTALLED.load(Ordering::SeqCst) {
        return false;
    }
    CANCEL_FOR.store(run, Ordering::SeqCst);
    r_thread.0.interrupt()
}
