//! Everything that depends on the operating system lives here, behind one small
//! API; the rest of the crate must not assume POSIX or Windows.
//!
//! # Standard input and output while serving
//!
//! An MCP server over stdio owns its standard output (protocol messages only)
//! and its standard input (the client's messages). Tool code runs in the same
//! process and may print (R's `print()`, C's `printf`, child processes that
//! inherit the streams) or read standard input. [`StdioGuard`] keeps both
//! away from the protocol:
//!
//! * While the guard is alive, descriptor/handle 1 (stdout) points at stderr
//!   (at the null device if there is no stderr) and descriptor/handle 0 (stdin)
//!   at the null device, so tool output lands in the client's log and tool
//!   reads see end of file instead of stealing protocol input.
//! * The protocol reads and writes private duplicates of the real stdin and
//!   stdout, which child processes do not inherit (close-on-exec on unix, not
//!   inheritable on Windows): a tool's child process never holds the protocol
//!   pipes open and cannot write into them.
//! * Dropping the guard flushes C stdio, then puts descriptors 0 and 1 back
//!   (on Windows also the Win32 standard handles) and the previous SIGPIPE
//!   disposition (unix).
//!
//! Only one guard can be alive at a time; `install()` fails while another
//! one exists.
//!
//! A worker process (mirai daemon) may have been started before its server
//! installed the guard and so hold the real stdin and stdout; [`detach_stdio`]
//! points them at the null device and stderr for good.
//!
//! ```ignore
//! let mut guard = StdioGuard::install()?;            // flushes C stdio first
//! let input = guard.take_input().expect("first take"); // real stdin, for the reader thread
//! serve(BufReader::new(input), guard.output(), ...);  // real stdout
//! drop(guard);                                          // everything restored
//! ```
//!
//! # Implementations
//!
//! * `unix.rs` (uses `libc`): `fcntl(F_DUPFD_CLOEXEC)`, `dup2`, `/dev/null`.
//!   SIGPIPE is caught by a handler that does nothing, so a write to a closed
//!   stdout fails with `EPIPE` (ending the serve loop) instead of killing the
//!   process or running R's own handler, which raises an R error. A handler
//!   rather than `SIG_IGN`: an ignored signal stays ignored across `exec`, a
//!   handler does not, so child processes of tools keep the default SIGPIPE.
//! * `windows.rs` (std only: the C runtime and Win32 functions it needs are
//!   declared there, so it builds with any Rust toolchain for
//!   `x86_64-pc-windows-gnu`): the C runtime's `_dup2`/`_get_osfhandle` for
//!   descriptors 0 and 1, `SetStdHandle` for the Win32 standard handles that
//!   Rust's `std::io` and child processes use, `DuplicateHandle` without
//!   inheritance for the private copies, `NUL` as the null device.
//!
//! The reader thread must not outlive serving (blocked on a terminal, it
//! would take what the user types next at the R console):
//! [`stoppable_input`] wraps the protocol input so that another thread can
//! end a blocked read and wait until the reader has dropped it.
//!
//! # Stop requests
//!
//! [`StopSignals`] (stop.rs, with a handler in each OS file) makes SIGINT,
//! SIGTERM and SIGHUP, or on Windows the console's control events, requests
//! to stop serving that the service layer reads ([`stop_requests`]), except
//! that an interrupt while a tool's R code runs ([`ForTool`]) goes to R's own
//! handler and interrupts that tool. Unix chains to the handler that was
//! there (R's); Windows lets the next console handler (R's) see Ctrl-C.
//!
//! `tools/check-windows.sh` builds this module with a test program
//! (`tools/platform-check.rs`) for Linux and for Windows (run under wine).
//! This module must keep compiling with rustc 1.63 and std alone for that.

// `io::Error::other` needs Rust 1.74; this module also builds with 1.63
// (tools/check-windows.sh).
#![allow(clippy::io_other_error)]

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Private directories and local sockets for processes the server starts.
mod private;
pub use private::{random_token, LocalListener, LocalStream, PrivateDir};

/// When process `pid` started, in the OS's own unit: with the pid, it names
/// one process for good (a pid is reused, never with the same start).
/// `None` if there is no such process, or the OS gives no start time here.
pub fn process_start(pid: u32) -> Option<u64> {
    imp::process_start(pid)
}

/// Kill `pid` (SIGKILL; Windows: TerminateProcess) if it is still the
/// process that started at `start` (with `None`, whatever process has the
/// pid). `Ok(false)` when it is gone or is another process.
pub fn kill_process(pid: u32, start: Option<u64>) -> io::Result<bool> {
    imp::kill_process(pid, start)
}

/// Stop requests: signals and console events while serving.
mod stop;
pub use stop::{stop_requests, ForTool, StopSignals};

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use self::unix as imp;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use self::windows as imp;

/// What each OS's `redirect()` hands to the guard: the private copies of the
/// real stdout and stdin, and what its `restore()` needs.
struct Redirected {
    output: File,
    input: File,
    input_is_terminal: bool,
    saved: imp::Saved,
}

/// Flush every C stdio stream (`fflush(NULL)`), so that output a tool has
/// buffered leaves before descriptors move.
pub fn flush_c_streams() {
    imp::flush_c_streams();
}

/// Open `path` to append to it without ever waiting for another process: a
/// FIFO that nobody reads fails at once instead of blocking the open, and
/// later writes to a full pipe fail instead of blocking (unix: `O_NONBLOCK`,
/// which changes nothing for regular files; Windows has no such files).
pub fn open_append_nonblocking(path: &str) -> io::Result<File> {
    imp::open_append_nonblocking(path)
}

static ACTIVE: AtomicBool = AtomicBool::new(false);

/// For a process that serves no protocol but may have inherited a server's
/// protocol streams (a worker started before the server took them over):
/// flush C stdio, then point stdout at stderr and stdin at the null device
/// for good, so that nothing it or its child processes write reaches the
/// protocol and it no longer holds the protocol pipes open. Fails while a
/// guard is alive.
pub fn detach_stdio() -> io::Result<()> {
    if ACTIVE.load(Ordering::SeqCst) {
        return Err(io::Error::new(io::ErrorKind::Other, "this process is serving"));
    }
    flush_c_streams();
    imp::detach()
}

/// While alive, the process's stdout points at stderr and its stdin at the null
/// device; the protocol uses private, non-inheritable copies of the real ones.
/// See the module documentation.
pub struct StdioGuard {
    output: File,
    input: Option<File>,
    input_is_terminal: bool,
    saved: imp::Saved,
}

impl StdioGuard {
    /// Flush C stdio, take private copies of the real stdin and stdout, then
    /// point stdout at stderr and stdin at the null device (on unix, also
    /// catch SIGPIPE). Fails if another guard is alive or the process has no
    /// standard output; a process without standard input gets an input that is
    /// at end of file.
    pub fn install() -> io::Result<StdioGuard> {
        if ACTIVE.swap(true, Ordering::SeqCst) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "standard input and output are already redirected by another server",
            ));
        }
        flush_c_streams();
        match imp::redirect() {
            Ok(r) => Ok(StdioGuard {
                output: r.output,
                input: Some(r.input),
                input_is_terminal: r.input_is_terminal,
                saved: r.saved,
            }),
            Err(e) => {
                ACTIVE.store(false, Ordering::SeqCst);
                Err(e)
            }
        }
    }

    /// The real standard output: write protocol messages here.
    pub fn output(&mut self) -> &mut File {
        &mut self.output
    }

    /// The real standard input, for the protocol reader; `None` once taken.
    /// The reader may outlive the guard (it owns its copy).
    pub fn take_input(&mut self) -> Option<File> {
        self.input.take()
    }

    /// Whether the real standard input was a terminal (someone started the
    /// server by hand rather than through an MCP client).
    pub fn input_is_terminal(&self) -> bool {
        self.input_is_terminal
    }
}

impl Drop for StdioGuard {
    fn drop(&mut self) {
        flush_c_streams();
        imp::restore(&mut self.saved, &self.output);
        ACTIVE.store(false, Ordering::SeqCst);
    }
}

/// The protocol input for the reader thread, which another thread can stop
/// (see [`stoppable_input`]).
pub struct StoppableInput {
    file: File,
    wake: Arc<imp::Wake>,
    gone: Arc<Gone>,
}

/// Stops a [`StoppableInput`]'s reads from another thread.
pub struct InputStopper {
    wake: Arc<imp::Wake>,
    gone: Arc<Gone>,
}

/// Set when the input is dropped (its reader thread is ending).
#[derive(Default)]
struct Gone {
    done: Mutex<bool>,
    signal: Condvar,
}

/// Make `file` (the protocol's input) readable until stopped: a read blocked
/// on it returns end of file once [`InputStopper::stop`] is called. Without
/// this, a reader thread blocked on a terminal outlives the server and
/// swallows what the user types next at the R console.
///
/// Unix: the read waits in `select()` on the input and on a pipe the stopper
/// writes to. Windows: a console input waits on the console handle and an
/// event; a pipe or file input cannot be woken (its reader ends when the
/// client closes the pipe), and `stop` says so at once.
pub fn stoppable_input(file: File) -> io::Result<(StoppableInput, InputStopper)> {
    let wake = Arc::new(imp::Wake::new(&file)?);
    let gone = Arc::new(Gone::default());
    Ok((StoppableInput { file, wake: Arc::clone(&wake), gone: Arc::clone(&gone) }, InputStopper { wake, gone }))
}

fn lock_gone(gone: &Gone) -> std::sync::MutexGuard<'_, bool> {
    // A poisoned flag is still a flag.
    gone.done.lock().unwrap_or_else(|e| e.into_inner())
}

impl io::Read for StoppableInput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.wake.read(&mut self.file, buf)
    }
}

impl Drop for StoppableInput {
    fn drop(&mut self) {
        *lock_gone(&self.gone) = true;
        self.gone.signal.notify_all();
    }
}

impl InputStopper {
    /// Wake the reader and wait up to `within` for it to drop the input
    /// (closing its descriptor). True when the input is gone.
    pub fn stop(self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        let mut done = lock_gone(&self.gone);
        if *done {
            return true;
        }
        if !self.wake.wake() {
            return false;
        }
        while !*done {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            done = match self.gone.signal.wait_timeout(done, deadline - now) {
                Ok((guard, _)) => guard,
                Err(e) => e.into_inner().0,
            };
        }
        true
    }
}
