//! Unix: descriptors with `dup2`, private copies close-on-exec, SIGPIPE caught.

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::Redirected;
use std::os::unix::io::{AsRawFd, FromRawFd};

/// What `restore()` needs besides the protocol output.
pub(super) struct Saved {
    /// A private copy of the original fd 0; `None` when fd 0 was closed.
    stdin: Option<File>,
    sigpipe: libc::sigaction,
}

pub(super) fn flush_c_streams() {
    // SAFETY: fflush(NULL) flushes every open output stream.
    unsafe {
        libc::fflush(std::ptr::null_mut());
    }
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// A private copy of `fd`: numbered 3 or above, close-on-exec.
fn private_dup(fd: libc::c_int) -> io::Result<File> {
    // SAFETY: fcntl reports a bad fd as an error; on success the new fd is ours.
    let new = check(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) })?;
    // SAFETY: `new` is an open descriptor that nothing else owns.
    Ok(unsafe { File::from_raw_fd(new) })
}

/// The null device, as a private descriptor (never 0-2, even when one of those
/// was closed, so it can be the source of a `dup2` onto them).
fn null_device(write: bool) -> io::Result<File> {
    let f = OpenOptions::new().read(!write).write(write).open("/dev/null")?;
    private_dup(f.as_raw_fd())
}

fn is_open(fd: libc::c_int) -> bool {
    // SAFETY: F_GETFD only reads the descriptor flags.
    unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
}

extern "C" fn on_sigpipe(_: libc::c_int) {}

/// Catch SIGPIPE with a handler that does nothing; returns the previous action.
fn catch_sigpipe() -> io::Result<libc::sigaction> {
    // SAFETY: an all-zero sigaction is "default flags, empty mask"; the fields
    // set below make it a valid action, and `old` receives the current one.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigpipe as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        check(libc::sigaction(libc::SIGPIPE, &action, &mut old))?;
        Ok(old)
    }
}

fn set_sigpipe(action: &libc::sigaction) {
    // SAFETY: `action` was filled in by sigaction() itself.
    unsafe {
        libc::sigaction(libc::SIGPIPE, action, std::ptr::null_mut());
    }
}

pub(super) fn redirect() -> io::Result<Redirected> {
    let output = private_dup(1)?;
    let (input, stdin, input_is_terminal) = match private_dup(0) {
        Ok(input) => {
            let saved = private_dup(0)?;
            // SAFETY: isatty only inspects fd 0.
            let tty = unsafe { libc::isatty(0) } == 1;
            (input, Some(saved), tty)
        }
        // No standard input at all: the protocol sees end of file.
        Err(e) if e.raw_os_error() == Some(libc::EBADF) => (null_device(false)?, None, false),
        Err(e) => return Err(e),
    };
    let null_in = null_device(false)?;
    let null_out = if is_open(2) { None } else { Some(null_device(true)?) };
    let out_target = null_out.as_ref().map_or(2, |f| f.as_raw_fd());

    let sigpipe = catch_sigpipe()?;
    // SAFETY: dup2 onto fd 1 from an open descriptor.
    if let Err(e) = check(unsafe { libc::dup2(out_target, 1) }) {
        set_sigpipe(&sigpipe);
        return Err(e);
    }
    // SAFETY: as above, onto fd 0; on failure fd 1 goes back to the real stdout.
    if let Err(e) = check(unsafe { libc::dup2(null_in.as_raw_fd(), 0) }) {
        // SAFETY: dup2 from the private copy of the real stdout back onto fd 1.
        unsafe { libc::dup2(output.as_raw_fd(), 1) };
        set_sigpipe(&sigpipe);
        return Err(e);
    }
    Ok(Redirected { output, input, input_is_terminal, saved: Saved { stdin, sigpipe } })
}

/// Put fd 1, fd 0 and SIGPIPE back. fd 0 stays on the null device if the
/// process started without a standard input.
pub(super) fn restore(saved: &mut Saved, output: &File) {
    // SAFETY: dup2 from descriptors owned by the guard onto 0 and 1.
    unsafe {
        libc::dup2(output.as_raw_fd(), 1);
        if let Some(stdin) = saved.stdin.take() {
            libc::dup2(stdin.as_raw_fd(), 0);
        }
    }
    set_sigpipe(&saved.sigpipe);
}

/// Point fd 1 at stderr (the null device if there is none) and fd 0 at the
/// null device, keeping nothing of what they were.
pub(super) fn detach() -> io::Result<()> {
    let null_in = null_device(false)?;
    let null_out = if is_open(2) { None } else { Some(null_device(true)?) };
    let out_target = null_out.as_ref().map_or(2, |f| f.as_raw_fd());
    // SAFETY: dup2 onto 0 and 1 from descriptors that are open.
    unsafe {
        check(libc::dup2(out_target, 1))?;
        check(libc::dup2(null_in.as_raw_fd(), 0))?;
    }
    Ok(())
}

/// The signals that ask a server to stop.
const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The actions that were in place before [`catch_stop_signals`], in the
/// order of `STOP_SIGNALS`.
pub(super) struct SavedSignals {
    previous: [libc::sigaction; 3],
}

/// The previous SIGINT handler (R's) and its flags, for the handler to hand
/// interrupts on to: atomics, since a signal handler reads them. Written
/// before the handler is installed (the sigaction call orders them).
// Global because the signal handler reads them (it gets no data).
static PREVIOUS_SIGINT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static PREVIOUS_SIGINT_FLAGS: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Our action: `on_stop_signal` with its siginfo (to pass on), restarting
/// interrupted system calls (the reader thread's read()).
fn stop_action() -> libc::sigaction {
    // SAFETY: an all-zero sigaction is "no flags, empty mask"; the fields set
    // below make it a valid action. sigemptyset is async-signal-safe, so
    // this also runs inside the handler.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction =
            on_stop_signal as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART | libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        action
    }
}

extern "C" fn on_stop_signal(sig: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    use std::sync::atomic::Ordering;
    if !super::stop::on_signal(sig == libc::SIGINT, true) {
        return;
    }
    // A tool's R code runs: R's own SIGINT handler marks the interrupt,
    // which R raises at its next check. A request to terminate raises a
    // SIGINT, which comes back here and takes the same path as one sent.
    if sig != libc::SIGINT {
        // SAFETY: raise() is async-signal-safe.
        unsafe { libc::raise(libc::SIGINT) };
        return;
    }
    let previous = PREVIOUS_SIGINT.load(Ordering::SeqCst);
    let flags = PREVIOUS_SIGINT_FLAGS.load(Ordering::SeqCst);
    if previous == libc::SIG_DFL || previous == libc::SIG_IGN {
        return;
    }
    // SAFETY: `previous` is the handler sigaction() reported for SIGINT,
    // called with the arguments its flags say it takes.
    unsafe {
        if flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = std::mem::transmute(previous);
            f(libc::SIGINT, info, context);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(previous);
            f(libc::SIGINT);
        }
        // R's handler puts itself back with signal(): ours goes back on top.
        let action = stop_action();
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
}

/// R's thread (see `platform::RThread`).
pub(super) struct RThread(libc::pthread_t);

// SAFETY: a pthread_t only names a thread; pthread_kill() may be called
// with it from any thread.
unsafe impl Send for RThread {}
// SAFETY: as above: shared, it is only read, to name the thread.
unsafe impl Sync for RThread {}

impl RThread {
    pub(super) fn current() -> RThread {
        // SAFETY: pthread_self() has no preconditions.
        RThread(unsafe { libc::pthread_self() })
    }

    /// Send R's thread a SIGINT (our handler decides what it does). R's
    /// thread is the process's main thread and lives as long as the process.
    pub(super) fn interrupt(&self) -> bool {
        // SAFETY: the thread is alive (see above); SIGINT has our handler.
        unsafe { libc::pthread_kill(self.0, libc::SIGINT) == 0 }
    }
}

pub(super) fn catch_stop_signals() -> io::Result<SavedSignals> {
    use std::sync::atomic::Ordering;
    // SAFETY: zeroed sigactions are valid out-parameters; sigaction() fills
    // them with the current actions and installs ours, each checked.
    unsafe {
        let mut previous: [libc::sigaction; 3] = std::mem::zeroed();
        for (i, sig) in STOP_SIGNALS.iter().enumerate() {
            check(libc::sigaction(*sig, std::ptr::null(), &mut previous[i]))?;
        }
        PREVIOUS_SIGINT.store(previous[0].sa_sigaction, Ordering::SeqCst);
        PREVIOUS_SIGINT_FLAGS.store(previous[0].sa_flags, Ordering::SeqCst);
        let action = stop_action();
        for (i, sig) in STOP_SIGNALS.iter().enumerate() {
            if let Err(e) = check(libc::sigaction(*sig, &action, std::ptr::null_mut())) {
                for (j, earlier) in STOP_SIGNALS.iter().enumerate().take(i) {
                    libc::sigaction(*earlier, &previous[j], std::ptr::null_mut());
                }
                return Err(e);
            }
        }
        Ok(SavedSignals { previous })
    }
}

/// A pipe whose two ends are close-on-exec from the moment they exist where
/// the system can (pipe2), so that no child started by another thread in
/// between inherits them; macOS has no pipe2, so there the flag follows.
fn cloexec_pipe() -> io::Result<[libc::c_int; 2]> {
    let mut fds: [libc::c_int; 2] = [-1; 2];
    #[cfg(any(
        target_os = "linux",
        target_os = "android",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd",
        target_os = "dragonfly"
    ))]
    // SAFETY: pipe2() fills both descriptors of `fds` on success.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    #[cfg(not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd",
        target_os = "dragonfly"
    )))]
    // SAFETY: pipe() fills both descriptors on success; fcntl() sets a flag on
    // descriptors we own; on failure both are closed.
    unsafe {
        check(libc::pipe(fds.as_mut_ptr()))?;
        let flagged = check(libc::fcntl(fds[0], libc::F_SETFD, libc::FD_CLOEXEC))
            .and_then(|_| check(libc::fcntl(fds[1], libc::F_SETFD, libc::FD_CLOEXEC)));
        if let Err(e) = flagged {
            libc::close(fds[0]);
            libc::close(fds[1]);
            return Err(e);
        }
    }
    Ok(fds)
}

/// The stop bell (see `stop::watch_stop_requests`): a pipe the signal
/// handler writes a byte into and the watcher thread reads. Made once, kept
/// for the process's life (so the handler never writes to a descriptor that
/// was closed and reused); -1 until then.
// Global because the signal handler writes to it (it gets no data).
static BELL_READ: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);
static BELL_WRITE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);
static BELL_MADE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Makes the bell if it is not made yet. Returns 0 (see `wait_stop_bell`).
pub(super) fn open_stop_bell() -> io::Result<u64> {
    use std::sync::atomic::Ordering;
    let _made = BELL_MADE.lock().unwrap_or_else(|e| e.into_inner());
    if BELL_READ.load(Ordering::SeqCst) >= 0 {
        return Ok(0);
    }
    let fds = cloexec_pipe()?;
    // SAFETY: fcntl() only sets a flag on a descriptor we own (non-blocking
    // on the write end, so a full pipe never blocks the signal handler). On
    // failure both are closed.
    unsafe {
        if let Err(e) = check(libc::fcntl(fds[1], libc::F_SETFL, libc::O_NONBLOCK)) {
            libc::close(fds[0]);
            libc::close(fds[1]);
            return Err(e);
        }
    }
    BELL_WRITE.store(fds[1], Ordering::SeqCst);
    BELL_READ.store(fds[0], Ordering::SeqCst);
    Ok(0)
}

/// The calling thread's errno, read or written (the signal handler keeps
/// the interrupted code's errno as it was).
#[cfg(any(target_os = "linux", target_os = "emscripten"))]
fn errno_location() -> *mut libc::c_int {
    // SAFETY: returns the calling thread's errno; no preconditions.
    unsafe { libc::__errno_location() }
}
#[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd", target_os = "dragonfly"))]
fn errno_location() -> *mut libc::c_int {
    // SAFETY: returns the calling thread's errno; no preconditions.
    unsafe { libc::__error() }
}
#[cfg(any(target_os = "openbsd", target_os = "netbsd", target_os = "android"))]
fn errno_location() -> *mut libc::c_int {
    // SAFETY: returns the calling thread's errno; no preconditions.
    unsafe { libc::__errno() }
}
#[cfg(any(target_os = "solaris", target_os = "illumos"))]
fn errno_location() -> *mut libc::c_int {
    // SAFETY: returns the calling thread's errno; no preconditions.
    unsafe { libc::___errno() }
}
/// Elsewhere errno is not kept (null: nothing to keep).
#[cfg(not(any(
    target_os = "linux",
    target_os = "emscripten",
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "dragonfly",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "android",
    target_os = "solaris",
    target_os = "illumos"
)))]
fn errno_location() -> *mut libc::c_int {
    std::ptr::null_mut()
}

/// Ring the bell: async-signal-safe (an atomic load and write()).
pub(super) fn ring_stop_bell() {
    let fd = BELL_WRITE.load(std::sync::atomic::Ordering::SeqCst);
    if fd < 0 {
        return;
    }
    let errno = errno_location();
    // SAFETY: `errno` is null or this thread's errno, valid for the
    // thread's life; write() of one byte from a live local to a descriptor
    // that stays open for the process's life is async-signal-safe, and a
    // full pipe fails with EAGAIN (the watcher has a byte to read already).
    unsafe {
        let saved = if errno.is_null() { 0 } else { *errno };
        let byte = 1u8;
        libc::write(fd, (&byte as *const u8).cast(), 1);
        if !errno.is_null() {
            *errno = saved;
        }
    }
}

/// Wait until the bell rings (reads what is there); false if it cannot be
/// waited on. `_seen` is for Windows' bell.
pub(super) fn wait_stop_bell(_seen: &mut u64) -> bool {
    let fd = BELL_READ.load(std::sync::atomic::Ordering::SeqCst);
    if fd < 0 {
        return false;
    }
    let mut buf = [0u8; 64];
    loop {
        // SAFETY: reads at most `buf.len()` bytes into `buf`, from a
        // descriptor that stays open for the process's life.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 {
            return true;
        }
        if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        return false;
    }
}

pub(super) fn restore_stop_signals(saved: &SavedSignals) {
    // SAFETY: each action was filled in by sigaction() itself.
    unsafe {
        for (i, sig) in STOP_SIGNALS.iter().enumerate() {
            libc::sigaction(*sig, &saved.previous[i], std::ptr::null_mut());
        }
    }
}

pub(super) fn open_append_nonblocking(path: &str) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new().create(true).append(true).custom_flags(libc::O_NONBLOCK).open(path)
}

/// What stops a blocked read of the protocol input: a pipe (both ends
/// close-on-exec) that `wake` writes one byte to and `read` waits on beside
/// the input.
pub(super) struct Wake {
    read_end: File,
    write_end: File,
}

impl Wake {
    pub(super) fn new(_input: &File) -> io::Result<Wake> {
        let fds = cloexec_pipe()?;
        // SAFETY: both are open descriptors that nothing else owns.
        let (read_end, write_end) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
        Ok(Wake { read_end, write_end })
    }

    /// Make every read from now on return end of file. Both ends stay open
    /// while either side lives, so the write cannot fail with EPIPE.
    pub(super) fn wake(&self) -> bool {
        use std::io::Write;
        (&self.write_end).write_all(b"x").is_ok()
    }

    /// Read from `input` once it has data (or end of file), or return end of
    /// file once woken. `select()` rather than `poll()`: macOS's `poll()`
    /// does not work on terminals. A descriptor beyond `select()`'s range
    /// reads without waiting for a wake.
    pub(super) fn read(&self, input: &mut File, buf: &mut [u8]) -> io::Result<usize> {
        use std::io::Read;
        let (fd, wake) = (input.as_raw_fd(), self.read_end.as_raw_fd());
        if fd >= libc::FD_SETSIZE as libc::c_int || wake >= libc::FD_SETSIZE as libc::c_int {
            return input.read(buf);
        }
        loop {
            // SAFETY: a zeroed fd_set is valid; FD_ZERO/FD_SET/FD_ISSET are
            // given descriptors below FD_SETSIZE (checked above); select()
            // only reads and writes the set and may fail with EINTR.
            let (ready_input, ready_wake) = unsafe {
                let mut set: libc::fd_set = std::mem::zeroed();
                libc::FD_ZERO(&mut set);
                libc::FD_SET(fd, &mut set);
                libc::FD_SET(wake, &mut set);
                let r = libc::select(
                    fd.max(wake) + 1,
                    &mut set,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                );
                if r < 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    return Err(e);
                }
                (libc::FD_ISSET(fd, &set), libc::FD_ISSET(wake, &set))
            };
            if ready_wake {
                return Ok(0);
            }
            if ready_input {
                return input.read(buf);
            }
        }
    }
}

/// Write the start of `buf` (at most `PIPE_BUF` bytes) once `file` can take
/// it, waiting at most `wait`; `None` when it could not. A pipe that
/// `select()` calls writable has room for `PIPE_BUF` bytes, so the write
/// returns at once even on a blocking file description; on a non-blocking one
/// `EAGAIN` (another writer filled it first) is `None` too. A descriptor
/// beyond `select()`'s range is written to without waiting.
pub(super) fn write_when_ready(file: &File, buf: &[u8], wait: std::time::Duration) -> io::Result<Option<usize>> {
    use std::io::Write;
    let fd = file.as_raw_fd();
    if fd >= libc::FD_SETSIZE as libc::c_int {
        return (&*file).write(buf).map(Some);
    }
    let mut timeout =
        libc::timeval { tv_sec: wait.as_secs() as libc::time_t, tv_usec: wait.subsec_micros() as libc::suseconds_t };
    // SAFETY: a zeroed fd_set is valid; FD_ZERO/FD_SET/FD_ISSET are given a
    // descriptor below FD_SETSIZE (checked above); select() only reads and
    // writes the set and the timeout, and may fail with EINTR.
    let ready = unsafe {
        let mut set: libc::fd_set = std::mem::zeroed();
        libc::FD_ZERO(&mut set);
        libc::FD_SET(fd, &mut set);
        let r = libc::select(fd + 1, std::ptr::null_mut(), &mut set, std::ptr::null_mut(), &mut timeout);
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(None);
            }
            return Err(e);
        }
        libc::FD_ISSET(fd, &set)
    };
    if !ready {
        return Ok(None);
    }
    let chunk = &buf[..buf.len().min(libc::PIPE_BUF)];
    match (&*file).write(chunk) {
        Ok(n) => Ok(Some(n)),
        Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => Ok(None),
        Err(e) => Err(e),
    }
}

pub(super) fn os_string<E>(
    native: impl FnOnce() -> Result<Vec<u8>, E>,
    _utf8: impl FnOnce() -> Result<String, E>,
) -> Result<OsString, E> {
    native().map(OsString::from_vec)
}

pub(super) fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The open descriptors and the path the OS gives for each.
#[cfg(not(any(target_os = "macos", target_os = "ios")))]
fn descriptor_paths() -> Vec<(libc::c_int, PathBuf)> {
    let dir = match std::fs::read_dir("/proc/self/fd") {
        Ok(dir) => dir,
        Err(_) => return Vec::new(),
    };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let fd = entry.file_name().to_str().and_then(|n| n.parse::<libc::c_int>().ok());
        if let (Some(fd), Ok(path)) = (fd, std::fs::read_link(entry.path())) {
            out.push((fd, path));
        }
    }
    out
}

/// The open descriptors and the path the OS gives for each.
#[cfg(any(target_os = "macos", target_os = "ios"))]
fn descriptor_paths() -> Vec<(libc::c_int, PathBuf)> {
    // MAXPATHLEN on macOS: F_GETPATH writes at most this many bytes.
    const MAX_PATH: usize = 1024;
    // SAFETY: getdtablesize() only reads a process limit.
    let limit = unsafe { libc::getdtablesize() }.clamp(0, 1 << 16);
    let mut out = Vec::new();
    for fd in 0..limit {
        let mut buf = [0u8; MAX_PATH];
        // SAFETY: F_GETPATH writes a NUL-terminated path of at most
        // MAXPATHLEN bytes into the buffer; an fd that is not open fails.
        if unsafe { libc::fcntl(fd, libc::F_GETPATH, buf.as_mut_ptr()) } < 0 {
            continue;
        }
        let len = buf.iter().position(|&b| b == 0).unwrap_or(MAX_PATH);
        out.push((fd, PathBuf::from(OsString::from_vec(buf[..len].to_vec()))));
    }
    out
}

pub(super) fn open_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (fd, path) in descriptor_paths() {
        if !path.is_absolute() {
            continue;
        }
        // SAFETY: a zeroed stat buffer is valid; fstat fills it or fails.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above; an fd closed meanwhile fails.
        if unsafe { libc::fstat(fd, &mut st) } != 0 || (st.st_mode & libc::S_IFMT) != libc::S_IFREG {
            continue;
        }
        // The name must still lead to the open file.
        let same = std::fs::metadata(&path).map(|m| m.dev() == st.st_dev as u64 && m.ino() == st.st_ino as u64);
        if same.unwrap_or(false) && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

pub(super) fn os_text(s: &OsStr) -> super::OsText {
    super::OsText::Native(s.as_bytes().to_vec())
}

// ---- private directories and local sockets (private.rs) ---------------------

/// Where private directories go: the temporary directory, then /tmp (for
/// when the first is too long for socket paths).
pub(super) fn temp_bases() -> Vec<std::path::PathBuf> {
    let mut bases = vec![std::env::temp_dir()];
    let tmp = std::path::PathBuf::from("/tmp");
    if bases[0] != tmp {
        bases.push(tmp);
    }
    bases
}

/// mkdir with mode 0700 (never over an existing path or link), then check
/// what was made: a directory, not a link, owned by this user, open to no
/// one else (a umask can only remove bits).
pub(super) fn create_private_dir(path: &std::path::Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(path)?;
    check_private_dir(path)
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid() has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether file facts say: this user's, open to no one else (no group or
/// other permission bits), of the kind wanted. The one check of ownership and
/// permissions, for private directories and the files in them.
fn is_private(meta: &std::fs::Metadata, dir: bool) -> bool {
    let kind = if dir { meta.file_type().is_dir() } else { meta.file_type().is_file() };
    kind && meta.uid() == effective_uid() && meta.mode() & 0o077 == 0
}

/// A directory (not a link), this user's, open to no one else.
pub(super) fn check_private_dir(path: &std::path::Path) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if !is_private(&meta, true) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is not a private directory of this user (a link, another owner, or open to others)",
                path.display()
            ),
        ));
    }
    Ok(())
}

/// The per-user directory of live sessions when none is given: /tmp, not
/// TMPDIR (both sides must find the same directory, and socket paths must
/// stay short).
pub(super) fn session_base() -> io::Result<std::path::PathBuf> {
    Ok(std::path::PathBuf::from(format!("/tmp/mcplite-{}", effective_uid())))
}

/// Write `bytes` to a new file next to `path` (mode 0600, never through a
/// link: created exclusively, `O_NOFOLLOW`), then rename it over `path`.
pub(super) fn write_private_file(path: &std::path::Path, temp: &std::path::Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file =
        OpenOptions::new().write(true).create_new(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(temp)?;
    let written = file.write_all(bytes).and_then(|_| file.sync_all()).and_then(|_| std::fs::rename(temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(temp);
    }
    written
}

/// Read at most `max` bytes of `path`, which must be a regular file (not a
/// link: `O_NOFOLLOW`) of this user open to no one else.
pub(super) fn read_private_file(path: &std::path::Path, max: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path)?;
    if !is_private(&file.metadata()?, false) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is not a private file of this user", path.display()),
        ));
    }
    let mut out = Vec::new();
    file.take(max).read_to_end(&mut out)?;
    Ok(out)
}

/// A Unix socket at `path` (its directory is private), mode 0600 as well:
/// connecting needs write permission on the socket file.
pub(super) fn listen_at(path: &std::path::Path) -> io::Result<SessionListener> {
    use std::os::unix::fs::PermissionsExt;
    let listener = LocalListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

pub(super) fn connect_at(path: &std::path::Path) -> io::Result<SessionStream> {
    SessionStream::connect(path)
}

pub(super) fn session_socket(dir: &std::path::Path, pid: u32) -> std::path::PathBuf {
    dir.join(format!("{pid}.sock"))
}

/// By its name in the directory, not by the path the file holds.
pub(super) fn registered_socket(dir: &std::path::Path, pid: u32, _registered: &str) -> Option<std::path::PathBuf> {
    Some(session_socket(dir, pid))
}

pub(super) fn session_accept(listener: &SessionListener) -> io::Result<SessionStream> {
    loop {
        match listener.accept() {
            Ok((stream, _)) => return Ok(stream),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

pub(super) type LocalListener = std::os::unix::net::UnixListener;
pub(super) type LocalStream = std::os::unix::net::UnixStream;
/// The session link is a Unix socket too.
pub(super) type SessionListener = LocalListener;
pub(super) type SessionStream = LocalStream;

impl super::TokenRead for LocalStream {
    fn wait_reads(&self, wait: Option<std::time::Duration>) -> io::Result<()> {
        self.set_nonblocking(false)?;
        self.set_read_timeout(wait)
    }

    fn read_some(&self, buf: &mut [u8]) -> io::Result<usize> {
        io::Read::read(&mut &*self, buf)
    }
}

pub(super) fn local_listen(dir: &std::path::Path, name: &str) -> io::Result<(LocalListener, String)> {
    let path = dir.join(name);
    let listener = LocalListener::bind(&path)?;
    Ok((listener, format!("ipc://{}", path.display())))
}

/// Connect to what [`local_listen`] made, by its url.
pub(super) fn local_connect(url: &str) -> io::Result<LocalStream> {
    let path =
        url.strip_prefix("ipc://").ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not an ipc:// url"))?;
    LocalStream::connect(path)
}

// ---- process identity (a pid and when its process started) ------------------

/// When `pid` started: clock ticks since boot (/proc/<pid>/stat, field 22).
#[cfg(target_os = "linux")]
pub(super) fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: the
    // fields after it start after its last ')'. Field 3 is index 0 there.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// When `pid` started: microseconds since the epoch (proc_pidinfo).
#[cfg(target_os = "macos")]
pub(super) fn process_start(pid: u32) -> Option<u64> {
    let pid = libc::c_int::try_from(pid).ok()?;
    // SAFETY: an all-zero proc_bsdinfo is a valid value of this plain C
    // struct; proc_pidinfo writes at most `size` bytes into it.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: the buffer is `info`, `size` bytes long.
    let got =
        unsafe { libc::proc_pidinfo(pid, libc::PROC_PIDTBSDINFO, 0, &mut info as *mut _ as *mut libc::c_void, size) };
    if got != size {
        return None;
    }
    Some(info.pbi_start_tvsec.saturating_mul(1_000_000).saturating_add(info.pbi_start_tvusec))
}

/// Elsewhere the start time is not read: the caller falls back to the pid.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub(super) fn process_start(_pid: u32) -> Option<u64> {
    None
}

/// SIGKILL `pid` if it is still the process that started at `start`.
/// Linux: through a pidfd, which pins the process from before the check to
/// the signal, so a pid reused in between is never signalled.
#[cfg(target_os = "linux")]
pub(super) fn kill_process(pid: u32, start: Option<u64>) -> io::Result<bool> {
    let raw = libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    // SAFETY: pidfd_open(pid, 0) takes two integers; on success the new
    // descriptor is ours (and close-on-exec).
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, raw, 0) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::ENOSYS) {
            return kill_checked(pid, start);
        }
        return if e.raw_os_error() == Some(libc::ESRCH) { Ok(false) } else { Err(e) };
    }
    // SAFETY: `fd` is an open descriptor nothing else owns.
    let pidfd = unsafe { File::from_raw_fd(fd as libc::c_int) };
    if start.is_some() && process_start(pid) != start {
        return Ok(false);
    }
    // SAFETY: pidfd_send_signal(fd, sig, NULL, 0) on a pidfd we hold.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::ESRCH) { Ok(false) } else { Err(e) };
    }
    Ok(true)
}

#[cfg(not(target_os = "linux"))]
pub(super) fn kill_process(pid: u32, start: Option<u64>) -> io::Result<bool> {
    kill_checked(pid, start)
}

/// Check the start time, then kill(): a pid reused between the two (a
/// window of microseconds) would be signalled.
fn kill_checked(pid: u32, start: Option<u64>) -> io::Result<bool> {
    let raw = libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    if start.is_some() && process_start(pid) != start {
        return Ok(false);
    }
    // SAFETY: kill() takes two integers and reports failure in errno.
    if unsafe { libc::kill(raw, libc::SIGKILL) } < 0 {
        let e = io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::ESRCH) { Ok(false) } else { Err(e) };
    }
    Ok(true)
}

/// The private copy of descriptor 0 while the console guard is on.
// Global because descriptor 0 is the process's, and the guard is put on and
// taken off by separate `.Call`s (`rust_console_guard()`).
static CONSOLE_STDIN: std::sync::Mutex<Option<File>> = std::sync::Mutex::new(None);

pub(super) fn console_stdin_guard(enter: bool) -> io::Result<bool> {
    let mut saved = CONSOLE_STDIN.lock().unwrap_or_else(|e| e.into_inner());
    if enter {
        if saved.is_some() || !is_open(0) {
            return Ok(false);
        }
        let copy = private_dup(0)?;
        let null_in = null_device(false)?;
        // SAFETY: dup2 onto fd 0 from a descriptor that is open.
        check(unsafe { libc::dup2(null_in.as_raw_fd(), 0) })?;
        *saved = Some(copy);
        Ok(true)
    } else {
        match saved.take() {
            None => Ok(false),
            Some(copy) => {
                // SAFETY: dup2 from the guard's own copy of the original fd 0.
                check(unsafe { libc::dup2(copy.as_raw_fd(), 0) })?;
                Ok(true)
            }
        }
    }
}
