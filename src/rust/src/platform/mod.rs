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
//! # Writing to a client that does not read
//!
//! [`ProtocolOutput`] writes the protocol's lines. A full standard output
//! (a pipe the client does not read, or one whose file description has
//! `O_NONBLOCK` set, where `write()` fails with `EAGAIN`) means wait, never
//! "closed": the write waits until the output can take more and goes on
//! from where it stopped, so a line is written whole. The wait ends early
//! only when serving stops (see [`Abandoned`]): at once on a request to
//! terminate (SIGTERM, SIGHUP; Windows' close, logoff and shutdown events),
//! and after the grace once the client has taken nothing for that long since
//! the end of input or a stop request (SIGINT). The rest of that line is
//! then never written, nor anything after it (the caller counts the output
//! as closed), so a half message is only ever the last bytes of the stream.
//!
//! Unix waits in `select()` for the output to take more, looking at the
//! stop requests at least every [`OUTPUT_TICK`], and writes at most
//! `PIPE_BUF` bytes at a time, which a pipe `select()` calls writable takes
//! without blocking even when the file description blocks. Windows writes
//! with a plain blocking `WriteFile`: a write blocked on a full pipe is not
//! ended by a stop there (the process is ended by the client's next step).
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
//! Each request also rings a stop bell ([`watch_stop_requests`]: a pipe the
//! unix handler writes a byte into, a condition variable on Windows, whose
//! handler runs on a thread of its own), so an idle server sleeps on its
//! inputs with no timer and still notices a signal at once.
//!
//! `tools/check-windows.sh` builds this module with a test program
//! (`tools/platform-check.rs`) for Linux and for Windows (run under wine).
//! This module must keep compiling with rustc 1.63 and std alone for that.

// `io::Error::other` needs Rust 1.74; this module also builds with 1.63
// (tools/check-windows.sh).
#![allow(clippy::io_other_error)]

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Private directories and local sockets for processes the server starts.
mod private;
pub use private::{
    connect_at, has_token, local_connect, random_token, read_private_file, registered_socket, session_dir,
    session_socket, write_private_file, LocalListener, LocalStream, PrivateDir, SessionListener, SessionStream,
    TokenRead, SOCKET_PATH_MAX,
};

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
pub use stop::{
    cancel_closure, closure_enter, closure_leave, stop_requests, watch_stop_requests, ForTool, StopSignals,
};

/// R's thread, the one a cancellation interrupts ([`cancel_closure`]): taken
/// on it by whoever serves, and handed to the thread that cancels.
pub struct RThread(imp::RThread);

impl RThread {
    /// The calling thread, which must be R's.
    pub fn current() -> RThread {
        RThread(imp::RThread::current())
    }
}

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

/// A string from R for the operating system (a path, a program argument,
/// an environment variable), as R's own file functions pass it: unix takes
/// the bytes of the session's native encoding (`native`), Windows wide
/// strings, made from the UTF-8 text (`utf8`). Only the one needed is made.
pub fn os_string<E>(
    native: impl FnOnce() -> Result<Vec<u8>, E>,
    utf8: impl FnOnce() -> Result<String, E>,
) -> Result<OsString, E> {
    imp::os_string(native, utf8)
}

/// A string from the operating system (a path) for R: the native
/// encoding's bytes on unix, UTF-8 on Windows (its wide strings, with any
/// unpaired surrogate replaced).
#[allow(dead_code)] // each OS makes one of the two
pub enum OsText {
    Native(Vec<u8>),
    Utf8(String),
}

/// [`OsText`] of `s`.
pub fn os_text(s: &OsStr) -> OsText {
    imp::os_text(s)
}

/// The regular files this process has open, as the operating system names
/// them now (absolute, symbolic links resolved); a file whose name no longer
/// leads to it (deleted, renamed) is left out. R keeps the script it runs
/// (`Rscript file`, `R -f file`) open while it reads it, so this names that
/// file whatever the working directory has become. Linux: the links in
/// `/proc/self/fd`; macOS: `fcntl(F_GETPATH)`; Windows: the final path of
/// each file handle (`GetFinalPathNameByHandleW`); empty where the OS cannot
/// tell.
pub fn open_files() -> Vec<PathBuf> {
    imp::open_files()
}

/// Whether two paths lead to the same file (unix: device and inode; Windows:
/// the same final path). False when either cannot be read.
pub fn same_file(a: &Path, b: &Path) -> bool {
    imp::same_file(a, b)
}

/// Whether a `StdioGuard` is alive. Global because descriptors 0 and 1 are
/// the process's: one guard at a time, whoever asks.
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
    ended: InputEnded,
}

/// Stops a [`StoppableInput`]'s reads from another thread.
pub struct InputStopper {
    wake: Arc<imp::Wake>,
    gone: Arc<Gone>,
    ended: InputEnded,
}

/// Whether a [`StoppableInput`] has reached the end of its input (or failed):
/// the client will send nothing more.
#[derive(Clone, Default)]
pub struct InputEnded(Arc<AtomicBool>);

impl InputEnded {
    pub fn get(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
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
    let ended = InputEnded::default();
    let input = StoppableInput { file, wake: Arc::clone(&wake), gone: Arc::clone(&gone), ended: ended.clone() };
    Ok((input, InputStopper { wake, gone, ended }))
}

fn lock_gone(gone: &Gone) -> std::sync::MutexGuard<'_, bool> {
    // A poisoned flag is still a flag.
    gone.done.lock().unwrap_or_else(|e| e.into_inner())
}

impl io::Read for StoppableInput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let got = self.wake.read(&mut self.file, buf);
        let ended = match &got {
            Ok(n) => *n == 0 && !buf.is_empty(),
            Err(e) => e.kind() != io::ErrorKind::Interrupted,
        };
        if ended {
            self.ended.0.store(true, Ordering::SeqCst);
        }
        got
    }
}

impl Drop for StoppableInput {
    fn drop(&mut self) {
        *lock_gone(&self.gone) = true;
        self.gone.signal.notify_all();
    }
}

impl InputStopper {
    /// Set once the input reaches its end (or fails).
    pub fn input_ended(&self) -> InputEnded {
        self.ended.clone()
    }

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

/// How often a write waiting for the client to read looks at the stop
/// requests (a signal that lands on another thread does not end the wait).
pub const OUTPUT_TICK: Duration = Duration::from_millis(50);

/// Why a [`ProtocolOutput`] stopped writing (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abandoned {
    /// A request to terminate came while the client was not reading.
    Terminate,
    /// After the end of input or a stop request, the client took nothing
    /// for the grace.
    NotRead,
}

/// The protocol output: waits while the client does not read, until serving
/// stops (see the module documentation).
pub struct ProtocolOutput {
    file: File,
    input_ended: InputEnded,
    grace: Duration,
    /// Called once, when a write first waits for the client within the grace.
    on_grace: fn(),
    graced: bool,
    /// Since when the client has taken nothing while serving stops.
    quiet_since: Option<Instant>,
    abandoned: Option<Abandoned>,
}

impl ProtocolOutput {
    /// Writes to `file` (a copy of the guard's output): waits for a client
    /// that does not read until a request to terminate comes, or, once
    /// `input_ended` or a stop request, until it has taken nothing for `grace`
    /// (`on_grace` is called the first time such a wait starts, to say so).
    pub fn new(file: File, input_ended: InputEnded, grace: Duration, on_grace: fn()) -> ProtocolOutput {
        ProtocolOutput { file, input_ended, grace, on_grace, graced: false, quiet_since: None, abandoned: None }
    }

    /// Why writing stopped, if it did; nothing is written from then on.
    pub fn abandoned(&self) -> Option<Abandoned> {
        self.abandoned
    }

    fn should_abandon(&mut self) -> Option<Abandoned> {
        let (requests, terminations) = stop_requests();
        if terminations > 0 {
            return Some(Abandoned::Terminate);
        }
        if requests > 0 || self.input_ended.get() {
            let since = *self.quiet_since.get_or_insert_with(Instant::now);
            if !self.graced {
                self.graced = true;
                (self.on_grace)();
            }
            if since.elapsed() >= self.grace {
                return Some(Abandoned::NotRead);
            }
        }
        None
    }
}

impl io::Write for ProtocolOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if let Some(why) = self.abandoned {
                let what = match why {
                    Abandoned::Terminate => "asked to terminate while the client was not reading",
                    Abandoned::NotRead => "the client stopped reading while the server stopped",
                };
                return Err(io::Error::new(io::ErrorKind::Other, what));
            }
            match imp::write_when_ready(&self.file, buf, OUTPUT_TICK)? {
                Some(n) => {
                    self.quiet_since = None;
                    return Ok(n);
                }
                None => self.abandoned = self.should_abandon(),
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        io::Write::flush(&mut &self.file)
    }
}

/// Point descriptor 0 at the null device (`enter`), or back at what it was.
/// A tool run in the user's live session must not read the terminal the
/// console reads (`file("stdin")` reads descriptor 0 directly). Returns
/// whether it changed anything: entering twice, or leaving without entering,
/// does nothing. Windows: does nothing (returns `false`).
pub fn console_stdin_guard(enter: bool) -> io::Result<bool> {
    imp::console_stdin_guard(enter)
}
