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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

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

/// The stop bell (see `stop::watch_stop_requests`): how many times it rang.
/// The console handler runs on a thread of its own, so it may lock.
// Global because the console handler rings it (it gets no data).
static BELL: std::sync::Mutex<u64> = std::sync::Mutex::new(0);
static BELL_RUNG: std::sync::Condvar = std::sync::Condvar::new();

/// Returns how many times the bell rang so far: a new watcher waits for
/// rings after that.
pub(super) fn open_stop_bell() -> io::Result<u64> {
    Ok(*BELL.lock().unwrap_or_else(|e| e.into_inner()))
}

pub(super) fn ring_stop_bell() {
    let mut rings = BELL.lock().unwrap_or_else(|e| e.into_inner());
    *rings += 1;
    BELL_RUNG.notify_all();
}

/// Wait until the bell rang more than `seen` times (and say how often).
pub(super) fn wait_stop_bell(seen: &mut u64) -> bool {
    let mut rings = BELL.lock().unwrap_or_else(|e| e.into_inner());
    while *rings == *seen {
        rings = BELL_RUNG.wait(rings).unwrap_or_else(|e| e.into_inner());
    }
    *seen = *rings;
    true
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
/// and not a link (see [`check_private_dir`]). It has the permissions it inherits from the temporary
/// folder (a user's own, by default); no ACL of its own.
pub(super) fn create_private_dir(path: &std::path::Path) -> io::Result<()> {
    std::fs::create_dir(path)?;
    check_private_dir(path)
}

pub(super) type LocalListener = std::net::TcpListener;
/// The workers' doorbell and progress relay: loopback TCP, which any local
/// user can reach (the token the caller checks is what keeps others out).
pub(super) type LocalStream = std::net::TcpStream;

impl super::TokenRead for LocalStream {
    fn wait_reads(&self, wait: Option<Duration>) -> io::Result<()> {
        self.set_nonblocking(false)?;
        self.set_read_timeout(wait)
    }

    fn read_some(&self, buf: &mut [u8]) -> io::Result<usize> {
        io::Read::read(&mut &*self, buf)
    }
}

const FILE_ATTRIBUTE_REPARSE_POINT: u32 = 0x0000_0400;
const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;

/// A symbolic link, a junction or another reparse point.
fn is_reparse_point(meta: &std::fs::Metadata) -> bool {
    use std::os::windows::fs::MetadataExt;
    meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0
}

fn refused(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} is not {} (a link, a junction, another reparse point or another kind of file)",
            path.display(),
            what
        ),
    )
}

/// A directory, not a reparse point. Its access list is the one it
/// inherits (in a user's own folders: that user, the administrators and the
/// system).
pub(super) fn check_private_dir(path: &Path) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.file_type().is_dir() || is_reparse_point(&meta) {
        return Err(refused(path, "a directory of its own"));
    }
    Ok(())
}

/// `%LOCALAPPDATA%\mcplite\sessions` (the temporary folder's when
/// LOCALAPPDATA is unset): a user's own folder, which other users cannot
/// enter by default.
pub(super) fn session_base() -> io::Result<PathBuf> {
    let base = match std::env::var_os("LOCALAPPDATA") {
        Some(d) if Path::new(&d).is_absolute() => PathBuf::from(d),
        _ => std::env::temp_dir(),
    };
    let ours = base.join("mcplite");
    match create_private_dir(&ours) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => check_private_dir(&ours)?,
        other => other?,
    }
    Ok(ours.join("sessions"))
}

/// Write `bytes` to a new file next to `path` (created exclusively: never an
/// existing file or link), then move it over `path` (std's rename is
/// `MoveFileExW` with `MOVEFILE_REPLACE_EXISTING`). A `path` that is a
/// reparse point is refused.
pub(super) fn write_private_file(path: &Path, temp: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_file() || is_reparse_point(&meta) {
            return Err(refused(path, "a regular file"));
        }
    }
    let mut file = OpenOptions::new().write(true).create_new(true).open(temp)?;
    let written = file.write_all(bytes).and_then(|_| file.sync_all());
    drop(file);
    let written = written.and_then(|_| std::fs::rename(temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(temp);
    }
    written
}

/// Read at most `max` bytes of `path`, a regular file: a reparse point is
/// opened as itself (never followed) and refused.
pub(super) fn read_private_file(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::windows::fs::OpenOptionsExt;
    let file = OpenOptions::new().read(true).custom_flags(FILE_FLAG_OPEN_REPARSE_POINT).open(path)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() || is_reparse_point(&meta) {
        return Err(refused(path, "a regular file"));
    }
    let mut out = Vec::new();
    file.take(max).read_to_end(&mut out)?;
    Ok(out)
}

// ---- the live session's link: a named pipe ------------------------------------

/// Every session pipe's name starts so; the rest is `<user>-<random>`.
const PIPE_PREFIX: &str = r"\\.\pipe\mcplite-";
/// Each direction's buffer of a pipe instance.
const PIPE_BUFFER: u32 = 64 << 10;
/// How long `connect_at` waits while every instance of the pipe is busy.
const CONNECT_WAIT: Duration = Duration::from_secs(5);

const PIPE_ACCESS_DUPLEX: u32 = 0x0000_0003;
const FILE_FLAG_FIRST_PIPE_INSTANCE: u32 = 0x0008_0000;
const FILE_FLAG_OVERLAPPED: u32 = 0x4000_0000;
const PIPE_TYPE_BYTE_READMODE_BYTE_WAIT: u32 = 0;
const PIPE_REJECT_REMOTE_CLIENTS: u32 = 0x0000_0008;
const PIPE_UNLIMITED_INSTANCES: u32 = 255;
const GENERIC_READ: u32 = 0x8000_0000;
const GENERIC_WRITE: u32 = 0x4000_0000;
const OPEN_EXISTING: u32 = 3;
const SECURITY_SQOS_PRESENT: u32 = 0x0010_0000;
const SECURITY_IDENTIFICATION: u32 = 0x0001_0000;
const FILE_ALL_ACCESS: u32 = 0x001F_01FF;
const TOKEN_QUERY: u32 = 0x0008;
const TOKEN_USER_CLASS: u32 = 1;
const ACL_REVISION: u32 = 2;
const SECURITY_DESCRIPTOR_REVISION: u32 = 1;
const WAIT_TIMEOUT: u32 = 0x0000_0102;
const ERROR_BROKEN_PIPE: i32 = 109;
const ERROR_PIPE_BUSY: i32 = 231;
const ERROR_NO_DATA: i32 = 232;
const ERROR_PIPE_NOT_CONNECTED: i32 = 233;
const ERROR_PIPE_CONNECTED: i32 = 535;
const ERROR_OPERATION_ABORTED: i32 = 995;
const ERROR_IO_PENDING: i32 = 997;

#[repr(C)]
struct Overlapped {
    internal: usize,
    internal_high: usize,
    offset: u32,
    offset_high: u32,
    event: Handle,
}

#[repr(C)]
struct SecurityAttributes {
    length: u32,
    descriptor: *mut c_void,
    inherit: i32,
}

#[link(name = "kernel32")]
extern "system" {
    fn CreateNamedPipeW(
        name: *const u16,
        open_mode: u32,
        pipe_mode: u32,
        max_instances: u32,
        out_buffer: u32,
        in_buffer: u32,
        default_timeout: u32,
        attributes: *const SecurityAttributes,
    ) -> Handle;
    fn ConnectNamedPipe(pipe: Handle, overlapped: *mut Overlapped) -> i32;
    fn DisconnectNamedPipe(pipe: Handle) -> i32;
    fn WaitNamedPipeW(name: *const u16, milliseconds: u32) -> i32;
    fn CreateFileW(
        name: *const u16,
        access: u32,
        share: u32,
        attributes: *const SecurityAttributes,
        disposition: u32,
        flags: u32,
        template: Handle,
    ) -> Handle;
    fn ReadFile(file: Handle, buf: *mut c_void, len: u32, read: *mut u32, overlapped: *mut Overlapped) -> i32;
    fn WriteFile(file: Handle, buf: *const c_void, len: u32, written: *mut u32, overlapped: *mut Overlapped) -> i32;
    fn GetOverlappedResult(file: Handle, overlapped: *const Overlapped, transferred: *mut u32, wait: i32) -> i32;
    fn CancelIoEx(file: Handle, overlapped: *const Overlapped) -> i32;
}

#[link(name = "advapi32")]
extern "system" {
    fn OpenProcessToken(process: Handle, access: u32, token: *mut Handle) -> i32;
    fn GetTokenInformation(token: Handle, class: u32, info: *mut c_void, len: u32, returned: *mut u32) -> i32;
    fn IsValidSid(sid: *mut c_void) -> i32;
    fn GetLengthSid(sid: *mut c_void) -> u32;
    fn InitializeAcl(acl: *mut c_void, len: u32, revision: u32) -> i32;
    fn AddAccessAllowedAce(acl: *mut c_void, revision: u32, mask: u32, sid: *mut c_void) -> i32;
    fn InitializeSecurityDescriptor(descriptor: *mut c_void, revision: u32) -> i32;
    fn SetSecurityDescriptorDacl(descriptor: *mut c_void, present: i32, acl: *mut c_void, defaulted: i32) -> i32;
}

fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(Some(0)).collect()
}

fn milliseconds(wait: Option<Duration>) -> u32 {
    match wait {
        None => INFINITE,
        Some(d) => d.as_millis().min(u128::from(INFINITE - 1)) as u32,
    }
}

fn owned(handle: Handle) -> io::Result<std::os::windows::io::OwnedHandle> {
    if handle.is_null() || handle as isize == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a handle just returned by the system, which nothing else owns.
    Ok(unsafe { std::os::windows::io::OwnedHandle::from_raw_handle(handle) })
}

/// An unnamed manual-reset event, not signalled.
fn new_event() -> io::Result<std::os::windows::io::OwnedHandle> {
    // SAFETY: no attributes and no name.
    owned(unsafe { CreateEventW(std::ptr::null_mut(), 1, 0, std::ptr::null()) })
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A pipe name of ours: `\\.\pipe\mcplite-` then letters, digits and dashes.
fn is_session_pipe(name: &str) -> bool {
    name.len() < 256
        && name.starts_with(PIPE_PREFIX)
        && name[PIPE_PREFIX.len()..].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn session_pipe_name(path: &Path) -> io::Result<Vec<u16>> {
    match path.to_str() {
        Some(name) if is_session_pipe(name) => Ok(wide(name)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not the name of a session's pipe", path.display()),
        )),
    }
}

pub(super) fn session_socket(_dir: &Path, _pid: u32) -> PathBuf {
    let user: String =
        std::env::var("USERNAME").unwrap_or_default().chars().filter(|c| c.is_ascii_alphanumeric()).take(32).collect();
    let user = if user.is_empty() { "user".to_string() } else { user };
    PathBuf::from(format!("{}{}-{}", PIPE_PREFIX, user, &super::random_token()[..16]))
}

/// The pipe name the registration holds (its name is random, so only the
/// registration knows it), if it is one of ours.
pub(super) fn registered_socket(_dir: &Path, _pid: u32, registered: &str) -> Option<PathBuf> {
    if is_session_pipe(registered) {
        Some(PathBuf::from(registered))
    } else {
        None
    }
}

/// A security descriptor whose access list grants this user everything and
/// no one else anything (no entry for administrators or the system either).
struct UserOnly {
    descriptor: Vec<u64>,
    /// The access list, which `descriptor` points to.
    _acl: Vec<u64>,
}

/// This process's TOKEN_USER (the user's SID, pointing into the buffer).
fn token_user() -> io::Result<Vec<u64>> {
    let mut token: Handle = std::ptr::null_mut();
    // SAFETY: this process's pseudo-handle and an out-pointer to a local.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let token = owned(token)?;
    let mut len = 0u32;
    // SAFETY: no buffer: asks for the size only.
    unsafe { GetTokenInformation(token.as_raw_handle(), TOKEN_USER_CLASS, std::ptr::null_mut(), 0, &mut len) };
    if len == 0 || len > 1 << 16 {
        return Err(io::Error::last_os_error());
    }
    let mut user = vec![0u64; (len as usize + 7) / 8];
    // SAFETY: the buffer holds `len` bytes, aligned for TOKEN_USER.
    let ok = unsafe {
        GetTokenInformation(token.as_raw_handle(), TOKEN_USER_CLASS, user.as_mut_ptr() as *mut c_void, len, &mut len)
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(user)
}

impl UserOnly {
    fn new() -> io::Result<UserOnly> {
        let user = token_user()?;
        // SAFETY: a TOKEN_USER starts with its SID pointer (into `user`).
        let sid = unsafe { *(user.as_ptr() as *const *mut c_void) };
        // SAFETY: IsValidSid reads the SID, in `user`, which is alive.
        if sid.is_null() || unsafe { IsValidSid(sid) } == 0 {
            return Err(io::Error::new(io::ErrorKind::Other, "this process's token names no valid user"));
        }
        // SAFETY: a valid SID (checked above).
        let sid_len = unsafe { GetLengthSid(sid) };
        // ACL header (8 bytes), the ACE's header and mask (8), the SID; whole DWORDs.
        let acl_len = (16 + sid_len + 3) & !3;
        let mut acl = vec![0u64; (acl_len as usize + 7) / 8];
        // SECURITY_DESCRIPTOR: 40 bytes on 64-bit Windows, 20 on 32-bit.
        let mut descriptor = vec![0u64; 8];
        let acl_ptr = acl.as_mut_ptr() as *mut c_void;
        let descriptor_ptr = descriptor.as_mut_ptr() as *mut c_void;
        // SAFETY: `acl` holds `acl_len` bytes and `descriptor` 64, both
        // 8-byte aligned; the SID is valid and copied into the ACE. The
        // descriptor keeps a pointer to `acl`'s heap buffer, which moves
        // with the Vec and lives as long as the `UserOnly`.
        let ok = unsafe {
            InitializeAcl(acl_ptr, acl_len, ACL_REVISION) != 0
                && AddAccessAllowedAce(acl_ptr, ACL_REVISION, FILE_ALL_ACCESS, sid) != 0
                && InitializeSecurityDescriptor(descriptor_ptr, SECURITY_DESCRIPTOR_REVISION) != 0
                && SetSecurityDescriptorDacl(descriptor_ptr, 1, acl_ptr, 0) != 0
        };
        if !ok {
            return Err(io::Error::last_os_error());
        }
        Ok(UserOnly { descriptor, _acl: acl })
    }
}

/// A session's named pipe: the instance that waits for the next client.
pub(super) struct SessionListener {
    name: Vec<u16>,
    security: UserOnly,
    waiting: std::sync::Mutex<Option<std::os::windows::io::OwnedHandle>>,
}

/// A new instance of the pipe `name`: the first one (`first`) fails if the
/// name exists already (no other process, of this user or another, can have
/// made it before), later ones are refused to a process without this
/// user's rights on the pipe. Remote clients are refused.
fn pipe_instance(name: &[u16], security: &UserOnly, first: bool) -> io::Result<std::os::windows::io::OwnedHandle> {
    let attributes = SecurityAttributes {
        length: std::mem::size_of::<SecurityAttributes>() as u32,
        descriptor: security.descriptor.as_ptr() as *mut c_void,
        inherit: 0,
    };
    let first = if first { FILE_FLAG_FIRST_PIPE_INSTANCE } else { 0 };
    // SAFETY: a NUL-terminated name; the attributes and the descriptor
    // (with its access list) are alive for the call, which copies them.
    owned(unsafe {
        CreateNamedPipeW(
            name.as_ptr(),
            PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | first,
            PIPE_TYPE_BYTE_READMODE_BYTE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
            PIPE_UNLIMITED_INSTANCES,
            PIPE_BUFFER,
            PIPE_BUFFER,
            0,
            &attributes,
        )
    })
}

pub(super) fn listen_at(path: &Path) -> io::Result<SessionListener> {
    let name = session_pipe_name(path)?;
    let security = UserOnly::new()?;
    let first = pipe_instance(&name, &security, true)?;
    Ok(SessionListener { name, security, waiting: std::sync::Mutex::new(Some(first)) })
}

/// Wait until a client connects to `pipe`.
fn await_client(pipe: &std::os::windows::io::OwnedHandle) -> io::Result<()> {
    let event = new_event()?;
    let mut ov = Overlapped { internal: 0, internal_high: 0, offset: 0, offset_high: 0, event: event.as_raw_handle() };
    // SAFETY: `ov` and its event stay alive until the operation has ended
    // (GetOverlappedResult below waits for that).
    let started = unsafe { ConnectNamedPipe(pipe.as_raw_handle(), &mut ov) };
    if started == 0 {
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            // Connected between the instance's creation and now; or came
            // and went (its reads see the end).
            Some(ERROR_PIPE_CONNECTED) | Some(ERROR_NO_DATA) => return Ok(()),
            Some(ERROR_IO_PENDING) => {}
            _ => return Err(e),
        }
    }
    let mut done = 0u32;
    // SAFETY: waits until the pending operation on `ov` has ended.
    if unsafe { GetOverlappedResult(pipe.as_raw_handle(), &ov, &mut done, 1) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub(super) fn session_accept(listener: &SessionListener) -> io::Result<SessionStream> {
    let mut waiting = lock(&listener.waiting);
    let pipe = match waiting.take() {
        Some(p) => p,
        None => pipe_instance(&listener.name, &listener.security, false)?,
    };
    let connected = await_client(&pipe);
    // The next instance before this one is handed over, so the name never
    // lapses (a client meanwhile finds every instance busy, and waits).
    *waiting = pipe_instance(&listener.name, &listener.security, false).ok();
    connected.and_then(|_| SessionStream::new(pipe, true))
}

/// Connect to a session's pipe (waiting while every instance is busy). The
/// session gets an identification-level token only: it cannot act as this
/// process's user.
pub(super) fn connect_at(path: &Path) -> io::Result<SessionStream> {
    let name = session_pipe_name(path)?;
    let deadline = std::time::Instant::now() + CONNECT_WAIT;
    loop {
        // SAFETY: a NUL-terminated name, no attributes, no template.
        let handle = unsafe {
            CreateFileW(
                name.as_ptr(),
                GENERIC_READ | GENERIC_WRITE,
                0,
                std::ptr::null(),
                OPEN_EXISTING,
                FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION,
                std::ptr::null_mut(),
            )
        };
        let e = match owned(handle) {
            Ok(pipe) => return SessionStream::new(pipe, false),
            Err(e) => e,
        };
        match (e.raw_os_error(), deadline.checked_duration_since(std::time::Instant::now())) {
            (Some(ERROR_PIPE_BUSY), Some(left)) => {
                // SAFETY: a NUL-terminated name.
                unsafe { WaitNamedPipeW(name.as_ptr(), milliseconds(Some(left)).max(1)) };
            }
            _ => return Err(e),
        }
    }
}

/// One end of a session's pipe, shared by its clones.
struct Pipe {
    handle: std::os::windows::io::OwnedHandle,
    /// The session's end (it can disconnect the client).
    server: bool,
    /// Set by `shutdown`: ends every wait on this pipe, now and later.
    closed: std::os::windows::io::OwnedHandle,
    is_closed: AtomicBool,
    read_timeout: std::sync::Mutex<Option<Duration>>,
    write_timeout: std::sync::Mutex<Option<Duration>>,
}

/// A connected named pipe with what the session code uses of a socket:
/// reads and writes through `&` (overlapped, so one thread can read while
/// another writes), timeouts, `try_clone`, `shutdown`.
pub struct SessionStream {
    pipe: Arc<Pipe>,
}

impl SessionStream {
    fn new(handle: std::os::windows::io::OwnedHandle, server: bool) -> io::Result<SessionStream> {
        Ok(SessionStream {
            pipe: Arc::new(Pipe {
                handle,
                server,
                closed: new_event()?,
                is_closed: AtomicBool::new(false),
                read_timeout: std::sync::Mutex::new(None),
                write_timeout: std::sync::Mutex::new(None),
            }),
        })
    }

    pub fn try_clone(&self) -> io::Result<SessionStream> {
        Ok(SessionStream { pipe: Arc::clone(&self.pipe) })
    }

    pub fn set_read_timeout(&self, wait: Option<Duration>) -> io::Result<()> {
        *lock(&self.pipe.read_timeout) = checked_timeout(wait)?;
        Ok(())
    }

    pub fn set_write_timeout(&self, wait: Option<Duration>) -> io::Result<()> {
        *lock(&self.pipe.write_timeout) = checked_timeout(wait)?;
        Ok(())
    }

    /// Ends both directions whatever `how` says: reads see the end, writes
    /// fail, blocked ones included; the session's end also disconnects the
    /// client (which then sees the end). A client's end is released when its
    /// last clone is dropped.
    pub fn shutdown(&self, _how: std::net::Shutdown) -> io::Result<()> {
        self.pipe.is_closed.store(true, Ordering::SeqCst);
        // SAFETY: an event handle owned by the pipe.
        unsafe { SetEvent(self.pipe.closed.as_raw_handle()) };
        // SAFETY: a pipe handle owned by `self`; pending operations on it
        // fail and are then finished by their own threads.
        if self.pipe.server && unsafe { DisconnectNamedPipe(self.pipe.handle.as_raw_handle()) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// One overlapped read (`write` false) or write of up to `len` bytes at
    /// `buf`, waiting up to the direction's timeout or until `shutdown`.
    fn transfer(&self, write: bool, buf: *mut u8, len: usize) -> io::Result<usize> {
        let pipe = &*self.pipe;
        if pipe.is_closed.load(Ordering::SeqCst) {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "the link was shut down"));
        }
        let wait = *lock(if write { &pipe.write_timeout } else { &pipe.read_timeout });
        let event = new_event()?;
        let mut ov =
            Overlapped { internal: 0, internal_high: 0, offset: 0, offset_high: 0, event: event.as_raw_handle() };
        let handle = pipe.handle.as_raw_handle();
        let len = len.min(PIPE_BUFFER as usize) as u32;
        // SAFETY: `buf` holds `len` bytes; it and `ov` stay alive until the
        // operation has ended: nothing returns between here and the
        // GetOverlappedResult that waits for that, unless the operation
        // never started.
        let started = unsafe {
            if write {
                WriteFile(handle, buf as *const c_void, len, std::ptr::null_mut(), &mut ov)
            } else {
                ReadFile(handle, buf as *mut c_void, len, std::ptr::null_mut(), &mut ov)
            }
        };
        if started == 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(ERROR_IO_PENDING) {
                return Err(e);
            }
        }
        let handles = [event.as_raw_handle(), pipe.closed.as_raw_handle()];
        // SAFETY: both handles are open for the call.
        let waited = unsafe { WaitForMultipleObjects(2, handles.as_ptr(), 0, milliseconds(wait)) };
        if waited != WAIT_OBJECT_0 {
            // SAFETY: cancels this operation only (`ov` is alive); one that
            // has ended already is not affected.
            unsafe { CancelIoEx(handle, &ov) };
        }
        let mut done = 0u32;
        // SAFETY: waits until the operation has ended (done or cancelled);
        // after this nothing refers to `buf` or `ov`.
        if unsafe { GetOverlappedResult(handle, &ov, &mut done, 1) } != 0 {
            return Ok(done as usize);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(ERROR_OPERATION_ABORTED) if waited == WAIT_TIMEOUT => {
                Err(io::Error::new(io::ErrorKind::TimedOut, "the pipe timed out"))
            }
            Some(ERROR_OPERATION_ABORTED) => Err(io::Error::new(io::ErrorKind::BrokenPipe, "the link was shut down")),
            _ => Err(e),
        }
    }

    fn read_pipe(&self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        match self.transfer(false, buf.as_mut_ptr(), buf.len()) {
            // The other end is gone or this one was shut down: the end.
            Err(e)
                if matches!(e.raw_os_error(), Some(ERROR_BROKEN_PIPE | ERROR_PIPE_NOT_CONNECTED | ERROR_NO_DATA))
                    || self.pipe.is_closed.load(Ordering::SeqCst) =>
            {
                Ok(0)
            }
            got => got,
        }
    }

    fn write_pipe(&self, buf: &[u8]) -> io::Result<usize> {
        // A zero-byte write would reach the reader as a zero-byte read (the end).
        if buf.is_empty() {
            return Ok(0);
        }
        self.transfer(true, buf.as_ptr() as *mut u8, buf.len())
    }
}

fn checked_timeout(wait: Option<Duration>) -> io::Result<Option<Duration>> {
    if wait == Some(Duration::ZERO) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "cannot set a 0 duration timeout"));
    }
    Ok(wait)
}

impl io::Read for &SessionStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.read_pipe(buf)
    }
}

impl io::Read for SessionStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.read_pipe(buf)
    }
}

impl io::Write for &SessionStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_pipe(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl io::Write for SessionStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_pipe(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl AsRawHandle for SessionStream {
    fn as_raw_handle(&self) -> std::os::windows::io::RawHandle {
        self.pipe.handle.as_raw_handle()
    }
}

impl super::TokenRead for SessionStream {
    fn wait_reads(&self, wait: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(wait)
    }

    fn read_some(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.read_pipe(buf)
    }
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
