//! Windows: the C runtime's descriptors 0 and 1 (what R and C code write to and
//! read from), the Win32 standard handles (what Rust's `std::io` and child
//! processes use), and private copies of the real handles that child processes
//! do not inherit. Std only: the functions are declared here, so the module
//! builds with any toolchain for `x86_64-pc-windows-gnu` (down to rustc 1.63).
//!
//! The C runtime is whichever the final link uses (UCRT with Rtools 4.2 and
//! later, like R itself), so these descriptors are R's.

use std::ffi::{c_void, OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use super::Redirected;
use std::os::raw::{c_char, c_int};
use std::os::windows::io::{AsRawHandle, FromRawHandle, IntoRawHandle};

type Handle = *mut c_void;

const STD_INPUT_HANDLE: u32 = -10i32 as u32;
const STD_OUTPUT_HANDLE: u32 = -11i32 as u32;
const DUPLICATE_SAME_ACCESS: u32 = 0x0000_0002;
const O_RDONLY: c_int = 0x0000;
const O_WRONLY: c_int = 0x0001;
const O_NOINHERIT: c_int = 0x0080;
const O_BINARY: c_int = 0x8000;

#[link(name = "kernel32")]
extern "system" {
    fn GetStdHandle(which: u32) -> Handle;
    fn SetStdHandle(which: u32, handle: Handle) -> i32;
    fn GetCurrentProcess() -> Handle;
    fn DuplicateHandle(
        source_process: Handle,
        source: Handle,
        target_process: Handle,
        target: *mut Handle,
        access: u32,
        inherit: i32,
        options: u32,
    ) -> i32;
    fn GetConsoleMode(handle: Handle, mode: *mut u32) -> i32;
    fn CloseHandle(handle: Handle) -> i32;
}

extern "C" {
    fn _dup2(source: c_int, target: c_int) -> c_int;
    fn _close(fd: c_int) -> c_int;
    fn _get_osfhandle(fd: c_int) -> isize;
    fn _open_osfhandle(handle: isize, flags: c_int) -> c_int;
    fn _open(path: *const c_char, flags: c_int, ...) -> c_int;
    fn _setmode(fd: c_int, mode: c_int) -> c_int;
    fn fflush(stream: *mut c_void) -> c_int;
}

/// What `restore()` needs besides the protocol output.
pub(super) struct Saved {
    /// A private copy of the original stdin; `None` when there was none.
    stdin: Option<File>,
    /// Text/binary modes of descriptors 1 and 0 before (-1: unknown).
    out_mode: c_int,
    in_mode: c_int,
}

pub(super) fn flush_c_streams() {
    // SAFETY: fflush(NULL) flushes every open output stream.
    unsafe {
        fflush(std::ptr::null_mut());
    }
}

/// The OS handle behind C descriptor 0, 1 or 2, if it has one. (The C runtime
/// keeps these three descriptors open, with handle -2 when there is no
/// stream, so asking never trips its invalid-parameter handler.)
fn crt_handle(fd: c_int) -> Option<Handle> {
    // SAFETY: fd is 0, 1 or 2, which the C runtime always knows.
    let h = unsafe { _get_osfhandle(fd) };
    if h == -1 || h == -2 {
        None
    } else {
        Some(h as Handle)
    }
}

fn win_std_handle(which: u32) -> Option<Handle> {
    // SAFETY: GetStdHandle has no preconditions.
    let h = unsafe { GetStdHandle(which) };
    if h.is_null() || h as isize == -1 {
        None
    } else {
        Some(h)
    }
}

/// The real stream behind descriptor `fd`: the C runtime's view first (what R
/// uses), else the Win32 standard handle.
fn real_handle(fd: c_int, which: u32) -> Option<Handle> {
    crt_handle(fd).or_else(|| win_std_handle(which))
}

/// A private, non-inheritable copy of `handle`.
fn private_dup(handle: Handle) -> io::Result<File> {
    let mut copy: Handle = std::ptr::null_mut();
    // SAFETY: DuplicateHandle validates `handle`; on success `copy` is ours.
    let ok = unsafe {
        let me = GetCurrentProcess();
        DuplicateHandle(me, handle, me, &mut copy, 0, 0, DUPLICATE_SAME_ACCESS)
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `copy` is an open handle that nothing else owns.
    Ok(unsafe { File::from_raw_handle(copy) })
}

/// A new, non-inheritable C descriptor on the null device.
fn crt_null(flags: c_int) -> io::Result<c_int> {
    // SAFETY: a NUL-terminated path and plain flags.
    let fd = unsafe { _open(b"NUL\0".as_ptr() as *const c_char, flags | O_BINARY | O_NOINHERIT) };
    if fd < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(fd)
    }
}

/// Text or binary mode of descriptor 0 or 1, -1 if unknown.
fn crt_mode(fd: c_int) -> c_int {
    // SAFETY: _setmode on 0/1, set back at once; it returns the previous mode.
    unsafe {
        let mode = _setmode(fd, O_BINARY);
        if mode != -1 {
            _setmode(fd, mode);
        }
        mode
    }
}

/// Make C descriptor `fd` a copy of `handle` (in text/binary `mode` unless -1).
fn point_fd_at(fd: c_int, handle: Handle, mode: c_int) -> bool {
    let tmp = match private_dup(handle) {
        Ok(f) => f.into_raw_handle(),
        Err(_) => return false,
    };
    // SAFETY: the C runtime takes ownership of `tmp` with the new descriptor,
    // which _dup2 copies onto `fd` and which is closed right after.
    unsafe {
        let tmp_fd = _open_osfhandle(tmp as isize, 0);
        if tmp_fd < 0 {
            CloseHandle(tmp);
            return false;
        }
        let ok = _dup2(tmp_fd, fd) == 0;
        _close(tmp_fd);
        if ok && mode != -1 {
            _setmode(fd, mode);
        }
        ok
    }
}

/// Make the Win32 standard input and output handles follow descriptors 0 and 1
/// (the C runtime does it itself only in console programs).
fn sync_std_handles() {
    // SAFETY: SetStdHandle accepts any value, including null (no stream).
    unsafe {
        SetStdHandle(STD_OUTPUT_HANDLE, crt_handle(1).unwrap_or(std::ptr::null_mut()));
        SetStdHandle(STD_INPUT_HANDLE, crt_handle(0).unwrap_or(std::ptr::null_mut()));
    }
}

pub(super) fn redirect() -> io::Result<Redirected> {
    let out = real_handle(1, STD_OUTPUT_HANDLE)
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "the process has no standard output"))?;
    let output = private_dup(out)?;
    let (input, stdin, input_is_terminal) = match real_handle(0, STD_INPUT_HANDLE) {
        Some(h) => {
            let mut mode = 0u32;
            // SAFETY: GetConsoleMode fails (returns 0) on anything but a console.
            let console = unsafe { GetConsoleMode(h, &mut mode) } != 0;
            (private_dup(h)?, Some(private_dup(h)?), console)
        }
        // No standard input at all: the protocol sees end of file.
        None => (OpenOptions::new().read(true).open("NUL")?, None, false),
    };
    let out_mode = crt_mode(1);
    let in_mode = crt_mode(0);

    if let Err(e) = stdio_to_null() {
        point_fd_at(1, output.as_raw_handle(), out_mode);
        sync_std_handles();
        return Err(e);
    }
    sync_std_handles();
    Ok(Redirected { output, input, input_is_terminal, saved: Saved { stdin, out_mode, in_mode } })
}

/// Put descriptors 0 and 1 and the Win32 standard handles back. Descriptor 0
/// stays on the null device if the process started without a standard input.
pub(super) fn restore(saved: &mut Saved, output: &File) {
    point_fd_at(1, output.as_raw_handle(), saved.out_mode);
    if let Some(stdin) = saved.stdin.take() {
        point_fd_at(0, stdin.as_raw_handle(), saved.in_mode);
    }
    sync_std_handles();
}

/// Point descriptor 1 at stderr (the null device if there is none) and
/// descriptor 0 at the null device, keeping nothing of what they were; the
/// Win32 standard handles follow.
pub(super) fn detach() -> io::Result<()> {
    let moved = stdio_to_null();
    sync_std_handles();
    moved
}

/// Point descriptor 1 at stderr (the null device if there is none) and
/// descriptor 0 at the null device. The Win32 standard handles are left to
/// the caller (`sync_std_handles()`).
fn stdio_to_null() -> io::Result<()> {
    let null_in = crt_null(O_RDONLY)?;
    let null_out = if crt_handle(2).is_some() {
        None
    } else {
        match crt_null(O_WRONLY) {
            Ok(fd) => Some(fd),
            Err(e) => {
                // SAFETY: closing the descriptor opened above.
                unsafe { _close(null_in) };
                return Err(e);
            }
        }
    };
    // SAFETY: _dup2 between descriptors that are open (it can only fail in
    // DuplicateHandle, whose error is read at once); the temporary null
    // descriptors are closed afterwards.
    unsafe {
        let moved = if _dup2(null_out.unwrap_or(2), 1) != 0 || _dup2(null_in, 0) != 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        };
        _close(null_in);
        if let Some(fd) = null_out {
            _close(fd);
        }
        moved
    }
}

const CTRL_C_EVENT: u32 = 0;
const CTRL_BREAK_EVENT: u32 = 1;
/// How long a close, logoff or shutdown event may keep the process while
/// serving winds down: Windows ends it about 5 s after such an event.
const CLOSE_WAIT: std::time::Duration = std::time::Duration::from_millis(4500);

type ConsoleHandler = unsafe extern "system" fn(u32) -> i32;

#[link(name = "kernel32")]
extern "system" {
    fn SetConsoleCtrlHandler(handler: Option<ConsoleHandler>, add: i32) -> i32;
}

/// Nothing to keep: the handler is removed by name.
pub(super) struct SavedSignals;

/// Console control events run on a thread of their own. Ctrl-C and
/// Ctrl-Break while a tool's R code runs go on to the next handler (R's,
/// which interrupts the tool); otherwise they, and close, logoff and
/// shutdown, are stop requests. Windows ends the process once a handler for
/// the last three returns, so it waits while serving winds down.
unsafe extern "system" fn on_console_event(kind: u32) -> i32 {
    let interrupt = kind == CTRL_C_EVENT || kind == CTRL_BREAK_EVENT;
    if super::stop::on_signal(interrupt, interrupt) {
        return 0;
    }
    if !interrupt {
        let start = std::time::Instant::now();
        while super::stop::INSTALLED.load(std::sync::atomic::Ordering::SeqCst) && start.elapsed() < CLOSE_WAIT {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    1
}

/// R's thread (see `platform::RThread`): nothing to keep on Windows.
pub(super) struct RThread;

impl RThread {
    pub(super) fn current() -> RThread {
        RThread
    }

    /// Windows has no signal to interrupt one thread with: a cancelled tool
    /// function runs to its end there (its answer is dropped).
    pub(super) fn interrupt(&self) -> bool {
        false
    }
}

pub(super) fn catch_stop_signals() -> io::Result<SavedSignals> {
    // SAFETY: registers a handler with the signature Windows calls.
    if unsafe { SetConsoleCtrlHandler(Some(on_console_event), 1) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(SavedSignals)
}

pub(super) fn restore_stop_signals(_: &SavedSignals) {
    // SAFETY: removes the handler registered above.
    unsafe {
        SetConsoleCtrlHandler(Some(on_console_event), 0);
    }
}

/// Write `buf` to `file`, blocking until it takes some: Windows has no way
/// here to wait for a pipe to take more without writing, so a write to a
/// full pipe is not ended by a stop request (see the module documentation).
pub(super) fn write_when_ready(file: &File, buf: &[u8], _wait: std::time::Duration) -> io::Result<Option<usize>> {
    use std::io::Write;
    (&*file).write(buf).map(Some)
}

pub(super) fn open_append_nonblocking(path: &str) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

#[link(name = "kernel32")]
extern "system" {
    fn CreateEventW(attributes: *mut c_void, manual_reset: i32, initial_state: i32, name: *const u16) -> Handle;
    fn SetEvent(event: Handle) -> i32;
    fn WaitForMultipleObjects(count: u32, handles: *const Handle, wait_all: i32, milliseconds: u32) -> u32;
}

const WAIT_OBJECT_0: u32 = 0;
const INFINITE: u32 = 0xFFFF_FFFF;

/// What stops a blocked read of the protocol input. A console input waits
/// on its handle and on a manual-reset event that `wake` sets; a pipe or file
/// cannot be waited on so (a pipe handle is never signalled), so its reads
/// block until data or end of file, and `wake` reports that it cannot help.
pub(super) struct Wake {
    event: Handle,
    console: bool,
}

// SAFETY: an event handle may be used from any thread.
unsafe impl Send for Wake {}
// SAFETY: SetEvent and waits on the handle are thread-safe.
unsafe impl Sync for Wake {}

impl Wake {
    pub(super) fn new(input: &File) -> io::Result<Wake> {
        let mut mode = 0u32;
        // SAFETY: GetConsoleMode fails (returns 0) on anything but a console.
        let console = unsafe { GetConsoleMode(input.as_raw_handle() as Handle, &mut mode) } != 0;
        // SAFETY: an unnamed manual-reset event, not signalled, no attributes.
        let event = unsafe { CreateEventW(std::ptr::null_mut(), 1, 0, std::ptr::null()) };
        if event.is_null() {
            return Err(io::Error::last_os_error());
        }
        Ok(Wake { event, console })
    }

    pub(super) fn wake(&self) -> bool {
        // SAFETY: the event is open while `self` lives.
        unsafe { SetEvent(self.event) != 0 && self.console }
    }

    pub(super) fn read(&self, input: &mut File, buf: &mut [u8]) -> io::Result<usize> {
        use std::io::Read;
        if self.console {
            let handles = [input.as_raw_handle() as Handle, self.event];
            // SAFETY: both handles are open while `input` and `self` live.
            let r = unsafe { WaitForMultipleObjects(2, handles.as_ptr(), 0, INFINITE) };
            if r == WAIT_OBJECT_0 + 1 {
                return Ok(0);
            }
        }
        input.read(buf)
    }
}

impl Drop for Wake {
    fn drop(&mut self) {
        // SAFETY: the event was created by `new` and is closed once.
        unsafe { CloseHandle(self.event) };
    }
}

pub(super) fn os_string<E>(
    _native: impl FnOnce() -> Result<Vec<u8>, E>,
    utf8: impl FnOnce() -> Result<String, E>,
) -> Result<OsString, E> {
    utf8().map(OsString::from)
}

pub(super) fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

const FILE_TYPE_DISK: u32 = 1;
/// Handle values scanned: handles are multiples of 4, and a process with
/// R's few files open uses small ones.
const HANDLE_SCAN: usize = 1 << 16;

#[link(name = "kernel32")]
extern "system" {
    fn GetFileType(handle: Handle) -> u32;
    fn GetFinalPathNameByHandleW(handle: Handle, path: *mut u16, len: u32, flags: u32) -> u32;
}

/// The final path of a handle that is open on a file, without the `\\?\`
/// prefix Windows adds.
fn handle_path(handle: Handle) -> Option<PathBuf> {
    // SAFETY: GetFileType reads any handle value; one that is not open fails.
    if unsafe { GetFileType(handle) } != FILE_TYPE_DISK {
        return None;
    }
    let mut buf = vec![0u16; 1024];
    loop {
        // SAFETY: the buffer holds `len` UTF-16 units; the call writes at most
        // that many, or returns the size it needs.
        let n = unsafe { GetFinalPathNameByHandleW(handle, buf.as_mut_ptr(), buf.len() as u32, 0) } as usize;
        if n == 0 {
            return None;
        }
        if n < buf.len() {
            buf.truncate(n);
            break;
        }
        if n > 1 << 16 {
            return None;
        }
        buf = vec![0u16; n + 1];
    }
    let text = OsString::from_wide(&buf);
    let s = text.to_string_lossy().into_owned();
    let path = if let Some(rest) = s.strip_prefix("\\\\?\\UNC\\") {
        OsString::from(format!("\\\\{}", rest))
    } else if let Some(rest) = s.strip_prefix("\\\\?\\") {
        OsString::from(rest)
    } else {
        text
    };
    Some(PathBuf::from(path))
}

pub(super) fn open_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for value in (4..HANDLE_SCAN).step_by(4) {
        if let Some(path) = handle_path(value as Handle) {
            if path.is_file() && !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

pub(super) fn os_text(s: &OsStr) -> super::OsText {
    super::OsText::Utf8(s.to_string_lossy().into_owned())
}

// ---- private directories and local sockets (private.rs) ---------------------

/// Where private directories go: the user's temporary folder.
pub(super) fn temp_bases() -> Vec<std::path::PathBuf> {
    vec![std::env::temp_dir()]
}

/// A new directory (never over an existing path), checked to be a directory
/// and not a link. It has the permissions it inherits from the temporary
/// folder (a user's own, by default); no ACL of its own.
pub(super) fn create_private_dir(path: &std::path::Path) -> io::Result<()> {
    std::fs::create_dir(path)?;
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.file_type().is_dir() {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, format!("{} is not a directory", path.display())));
    }
    Ok(())
}

pub(super) type LocalListener = std::net::TcpListener;
pub(super) type LocalStream = std::net::TcpStream;

/// std has no named pipes: loopback TCP, which any local user can reach (the
/// token the caller checks is what keeps others out).
fn no_sessions() -> io::Error {
    io::Error::new(io::ErrorKind::Other, "live R sessions (mcp_session()) are not supported on Windows yet")
}

pub(super) fn check_private_dir(_path: &std::path::Path) -> io::Result<()> {
    Err(no_sessions())
}

pub(super) fn session_base() -> io::Result<std::path::PathBuf> {
    Err(no_sessions())
}

pub(super) fn write_private_file(_path: &std::path::Path, _temp: &std::path::Path, _bytes: &[u8]) -> io::Result<()> {
    Err(no_sessions())
}

pub(super) fn read_private_file(_path: &std::path::Path, _max: u64) -> io::Result<Vec<u8>> {
    Err(no_sessions())
}

pub(super) fn listen_at(_path: &std::path::Path) -> io::Result<LocalListener> {
    Err(no_sessions())
}

pub(super) fn connect_at(_path: &std::path::Path) -> io::Result<LocalStream> {
    Err(no_sessions())
}

pub(super) fn local_listen(_dir: &std::path::Path, _name: &str) -> io::Result<(LocalListener, String)> {
    let listener = LocalListener::bind(("127.0.0.1", 0))?;
    let port = listener.local_addr()?.port();
    Ok((listener, format!("tcp://127.0.0.1:{port}")))
}

/// Connect to what [`local_listen`] made, by its url (loopback only).
pub(super) fn local_connect(url: &str) -> io::Result<LocalStream> {
    let addr = url
        .strip_prefix("tcp://127.0.0.1:")
        .and_then(|port| port.parse::<u16>().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a loopback tcp:// url"))?;
    LocalStream::connect(("127.0.0.1", addr))
}

// ---- process identity (a pid and when its process started) ------------------

const PROCESS_TERMINATE: u32 = 0x0001;
const PROCESS_QUERY_LIMITED_INFORMATION: u32 = 0x1000;

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct FileTime {
    low: u32,
    high: u32,
}

#[link(name = "kernel32")]
extern "system" {
    fn OpenProcess(access: u32, inherit: i32, pid: u32) -> Handle;
    fn GetProcessTimes(
        process: Handle,
        creation: *mut FileTime,
        exit: *mut FileTime,
        kernel: *mut FileTime,
        user: *mut FileTime,
    ) -> i32;
    fn TerminateProcess(process: Handle, code: u32) -> i32;
}

/// An open process handle, closed when dropped.
struct ProcessHandle(Handle);

impl Drop for ProcessHandle {
    fn drop(&mut self) {
        // SAFETY: the handle came from OpenProcess and is closed once.
        unsafe {
            CloseHandle(self.0);
        }
    }
}

fn open_process(pid: u32, access: u32) -> Option<ProcessHandle> {
    // SAFETY: OpenProcess takes plain values and returns null on failure.
    let h = unsafe { OpenProcess(access, 0, pid) };
    if h.is_null() {
        None
    } else {
        Some(ProcessHandle(h))
    }
}

/// The creation time of an open process (100 ns units since 1601).
fn creation_time(process: &ProcessHandle) -> Option<u64> {
    let (mut creation, mut exit, mut kernel, mut user) = Default::default();
    // SAFETY: four FILETIME out-pointers to locals, and a handle with
    // PROCESS_QUERY_LIMITED_INFORMATION.
    let ok = unsafe { GetProcessTimes(process.0, &mut creation, &mut exit, &mut kernel, &mut user) };
    let creation: FileTime = creation;
    if ok == 0 {
        None
    } else {
        Some((u64::from(creation.high) << 32) | u64::from(creation.low))
    }
}

pub(super) fn process_start(pid: u32) -> Option<u64> {
    creation_time(&open_process(pid, PROCESS_QUERY_LIMITED_INFORMATION)?)
}

/// Terminate `pid` if it is still the process created at `start`: the
/// handle pins the process from the check to the termination.
pub(super) fn kill_process(pid: u32, start: Option<u64>) -> io::Result<bool> {
    let process = match open_process(pid, PROCESS_TERMINATE | PROCESS_QUERY_LIMITED_INFORMATION) {
        Some(p) => p,
        None => return Ok(false),
    };
    if start.is_some() && creation_time(&process) != start {
        return Ok(false);
    }
    // SAFETY: a handle opened with PROCESS_TERMINATE.
    if unsafe { TerminateProcess(process.0, 1) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(true)
}

/// Not guarded on Windows (see `console_stdin_guard` in mod.rs).
pub(super) fn console_stdin_guard(_enter: bool) -> io::Result<bool> {
    Ok(false)
}
