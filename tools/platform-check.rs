//! Checks the platform layer (src/rust/src/platform) on the OS it is built
//! for: tools/check-windows.sh builds it for Linux (native) and for Windows
//! (x86_64-pc-windows-gnu, run under wine). Plain rustc, no cargo; must build
//! with rustc 1.63 and std alone on Windows (libc on unix, like the module).
//!
//! The program runs itself in roles, picked by the first argument:
//! * (none)  driver: starts a `subject` with piped stdin/stdout/stderr, plays
//!           the MCP client, and checks exactly what reached each pipe;
//! * driver-gui: the same with the subject from `platform-check-gui.exe`
//!           beside this program: the same source built as a Windows GUI
//!           program (`--cfg platform_check_gui`), like Rgui. (Microsoft's C
//!           runtime updates the Win32 standard handles in `_dup2` only in
//!           console programs, which is why the module sets them itself;
//!           wine's does it in GUI programs too, so under wine this run
//!           cannot show that the module's own `SetStdHandle` is needed.)
//! * subject: installs the guard and behaves like a server whose tools print,
//!           read stdin and start child processes; checks what it can see
//!           from inside and exits 1 with FAIL lines on stderr otherwise;
//! * child:   a tool's child process: reports on stdout what it read on stdin;
//! * linger:  a child process with no standard streams that outlives the
//!           subject, to show it does not hold the protocol pipes open.

#![cfg_attr(platform_check_gui, windows_subsystem = "windows")]

#[path = "../src/rust/src/platform/mod.rs"]
mod platform;

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::raw::{c_char, c_int};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

extern "C" {
    fn puts(s: *const c_char) -> c_int;
    fn system(command: *const c_char) -> c_int;
}

#[cfg(unix)]
mod os {
    use std::os::raw::{c_int, c_void};
    pub fn raw_write(fd: c_int, buf: &[u8]) -> isize {
        unsafe { libc::write(fd, buf.as_ptr() as *const c_void, buf.len()) as isize }
    }
    pub fn raw_read(fd: c_int, buf: &mut [u8]) -> isize {
        unsafe { libc::read(fd, buf.as_mut_ptr() as *mut c_void, buf.len()) as isize }
    }
    /// Is this file's descriptor closed in child processes?
    pub fn not_inherited(f: &std::fs::File) -> bool {
        use std::os::unix::io::AsRawFd;
        let flags = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFD) };
        flags >= 0 && flags & libc::FD_CLOEXEC != 0
    }
    pub fn shell_quote(s: &str) -> String {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(windows)]
mod os {
    use std::os::raw::{c_int, c_uint, c_void};
    extern "C" {
        fn _write(fd: c_int, buf: *const c_void, n: c_uint) -> c_int;
        fn _read(fd: c_int, buf: *mut c_void, n: c_uint) -> c_int;
    }
    #[link(name = "kernel32")]
    extern "system" {
        fn GetHandleInformation(handle: *mut c_void, flags: *mut u32) -> i32;
    }
    pub fn raw_write(fd: c_int, buf: &[u8]) -> isize {
        unsafe { _write(fd, buf.as_ptr() as *const c_void, buf.len() as c_uint) as isize }
    }
    pub fn raw_read(fd: c_int, buf: &mut [u8]) -> isize {
        unsafe { _read(fd, buf.as_mut_ptr() as *mut c_void, buf.len() as c_uint) as isize }
    }
    /// Is this file's handle kept from child processes?
    pub fn not_inherited(f: &std::fs::File) -> bool {
        use std::os::windows::io::AsRawHandle;
        let mut flags = 0u32;
        let ok = unsafe { GetHandleInformation(f.as_raw_handle(), &mut flags) };
        ok != 0 && flags & 1 == 0 // HANDLE_FLAG_INHERIT
    }
    pub fn shell_quote(s: &str) -> String {
        if s.contains(' ') {
            format!("\"{}\"", s)
        } else {
            s.to_string()
        }
    }
}

fn c_puts(s: &str) {
    let c = std::ffi::CString::new(s).unwrap();
    unsafe { puts(c.as_ptr()) };
}

fn c_system(command: &str) -> c_int {
    let c = std::ffi::CString::new(command).unwrap();
    unsafe { system(c.as_ptr()) }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let role = args.get(1).map(String::as_str).unwrap_or("driver");
    let code = match role {
        "driver" => driver(None),
        "driver-gui" => driver(Some("platform-check-gui.exe")),
        "subject" => subject(&args[2]),
        "child" => child(&args[2]),
        "linger" => linger(&args[2]),
        "detach" => detach(),
        "wait" => {
            std::thread::sleep(std::time::Duration::from_secs(60));
            0
        }
        _ => {
            eprintln!("unknown role {}", role);
            2
        }
    };
    std::process::exit(code);
}

// ---- roles -------------------------------------------------------------------

/// A tool's child process: says on stdout what it read on stdin.
fn child(tag: &str) -> i32 {
    let mut got = Vec::new();
    let _ = io::stdin().read_to_end(&mut got);
    println!("{} stdin={}", tag, got.len());
    0
}

/// A worker started with the protocol's pipes: lets go of them for good.
fn detach() -> i32 {
    println!("before-detach");
    let _ = io::stdout().flush();
    if let Err(e) = platform::detach_stdio() {
        eprintln!("detach failed: {}", e);
        return 1;
    }
    os::raw_write(1, b"after-detach-raw\n");
    println!("after-detach-println");
    c_puts("after-detach-puts");
    platform::flush_c_streams();
    let mut buf = [0u8; 8];
    let n = os::raw_read(0, &mut buf);
    eprintln!("detached-read={}", n);
    0
}

/// Sleeps, then creates the marker file; started with no standard streams.
fn linger(marker: &str) -> i32 {
    std::thread::sleep(Duration::from_secs(10));
    let _ = std::fs::write(marker, b"done");
    0
}

/// The protocol input's reader can be stopped while it waits (the driver
/// sends nothing until PONG): unix wakes a blocked read; Windows says at once
/// that a pipe cannot be woken (only a console can).
fn stoppable_input_checks(c: &mut Checks, input: std::fs::File) {
    let (mut input, stopper) = match platform::stoppable_input(input) {
        Ok(pair) => pair,
        Err(e) => return c.check(false, &format!("stoppable input: {}", e)),
    };
    let ended = stopper.input_ended();
    c.check(!ended.get(), "the input has not ended at first");
    let started = std::time::Instant::now();
    if cfg!(unix) {
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut b = [0u8; 1];
            let _ = tx.send(input.read(&mut b).unwrap_or(99));
        });
        std::thread::sleep(Duration::from_millis(50));
        c.check(stopper.stop(Duration::from_secs(5)), "a reader blocked on the input is stopped and drops it");
        c.check(rx.recv_timeout(Duration::from_secs(1)) == Ok(0), "... its read returns end of file");
        c.check(ended.get(), "... which counts as the end of input");
        c.check(reader.join().is_ok(), "... and its thread ends");
    } else {
        c.check(!stopper.stop(Duration::from_secs(5)), "a piped input says it cannot be woken");
        drop(input);
    }
    c.check(started.elapsed() < Duration::from_secs(2), "... at once");
}

struct Checks {
    failed: usize,
}

impl Checks {
    fn check(&mut self, ok: bool, what: &str) {
        if ok {
            eprintln!("ok   {}", what);
        } else {
            eprintln!("FAIL {}", what);
            self.failed += 1;
        }
    }
}

/// Stands in for R's SIGINT handler, which marks an interrupt and puts itself
/// back with signal() (so the platform layer must put its own back on top).
#[cfg(unix)]
static R_LIKE_INTERRUPTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[cfg(unix)]
extern "C" fn r_like_sigint(_: c_int) {
    R_LIKE_INTERRUPTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    unsafe { libc::signal(libc::SIGINT, r_like_sigint as extern "C" fn(c_int) as libc::sighandler_t) };
}

#[cfg(unix)]
fn stop_signal_checks(c: &mut Checks) {
    use std::sync::atomic::Ordering;
    let interrupts = || R_LIKE_INTERRUPTS.load(Ordering::SeqCst);
    unsafe { libc::signal(libc::SIGINT, r_like_sigint as extern "C" fn(c_int) as libc::sighandler_t) };
    let signals = match platform::StopSignals::install() {
        Ok(s) => s,
        Err(e) => {
            c.check(false, &format!("stop signals install: {}", e));
            return;
        }
    };
    c.check(platform::StopSignals::install().is_err(), "stop signals are caught once at a time");
    c.check(platform::stop_requests() == (0, 0), "no stop request at first");
    let (woke_tx, woke) = std::sync::mpsc::channel();
    let watch = platform::watch_stop_requests(Box::new(move || {
        let _ = woke_tx.send(());
    }));
    c.check(watch.is_ok(), "stop requests can be watched");
    unsafe { libc::raise(libc::SIGTERM) };
    c.check(platform::stop_requests() == (1, 1) && interrupts() == 0, "SIGTERM is a request to terminate, not an interrupt");
    c.check(woke.recv_timeout(std::time::Duration::from_secs(10)).is_ok(), "a stop request wakes its watcher (the stop bell)");
    drop(watch);
    unsafe { libc::raise(libc::SIGINT) };
    unsafe { libc::raise(libc::SIGHUP) };
    c.check(
        platform::stop_requests() == (3, 2) && interrupts() == 0,
        "SIGINT (a stop request) and SIGHUP (to terminate) outside a tool; R's handler never sees them",
    );
    let for_tool = platform::ForTool::enter();
    unsafe { libc::raise(libc::SIGINT) };
    c.check(platform::stop_requests() == (3, 2) && interrupts() == 1, "SIGINT during a tool goes to R's handler only");
    unsafe { libc::raise(libc::SIGINT) };
    c.check(
        platform::stop_requests() == (3, 2) && interrupts() == 2,
        "... again, though R's handler put itself back in between",
    );
    unsafe { libc::raise(libc::SIGTERM) };
    c.check(platform::stop_requests() == (4, 3) && interrupts() == 3, "SIGTERM during a tool interrupts it and stops");
    c.check(for_tool.leave(), "leaving the tool reports the interrupts handed to R");
    c.check(!platform::ForTool::enter().leave(), "... once");
    // A cancellation, from another thread, interrupts the tool's own
    // function on R's thread (this one), and is never a stop request.
    let r_thread = std::sync::Arc::new(platform::RThread::current());
    let before = interrupts();
    let requests = platform::stop_requests();
    c.check(!platform::cancel_closure(&r_thread), "no tool function runs: a cancellation interrupts nothing");
    platform::closure_enter();
    let canceller = std::sync::Arc::clone(&r_thread);
    let sent = std::thread::spawn(move || platform::cancel_closure(&canceller)).join().unwrap_or(false);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while interrupts() == before && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    c.check(
        sent && interrupts() == before + 1 && platform::stop_requests() == requests,
        "a cancellation hands R's handler an interrupt during the tool's function, not a stop request",
    );
    c.check(platform::closure_leave(), "leaving the function says it got one (R drops it if not acted on)");
    platform::closure_enter();
    c.check(!platform::closure_leave(), "... once: the next run got none");
    let before = interrupts();
    drop(signals);
    unsafe { libc::raise(libc::SIGINT) };
    c.check(interrupts() == before + 1, "dropped: SIGINT goes to R's handler again");
    unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
}

#[cfg(windows)]
fn stop_signal_checks(c: &mut Checks) {
    // Console control events cannot be raised for one process under wine;
    // this checks that the handler is registered and removed.
    match platform::StopSignals::install() {
        Ok(signals) => {
            c.check(platform::StopSignals::install().is_err(), "stop signals are caught once at a time");
            c.check(platform::stop_requests() == (0, 0), "no stop request at first");
            let watch = platform::watch_stop_requests(Box::new(|| {}));
            c.check(watch.is_ok(), "stop requests can be watched");
            // Dropping it wakes its thread and waits for it to end.
            drop(watch);
            c.check(!platform::ForTool::enter().leave(), "a tool with no Ctrl-C hands nothing to R");
            let r_thread = platform::RThread::current();
            platform::closure_enter();
            c.check(!platform::cancel_closure(&r_thread), "a cancellation cannot interrupt R's thread here");
            c.check(!platform::closure_leave(), "... and hands R nothing");
            drop(signals);
            c.check(platform::StopSignals::install().is_ok(), "dropped: they can be caught again");
        }
        Err(e) => c.check(false, &format!("stop signals install: {}", e)),
    }
}

/// The protocol output waits for a full pipe, even one whose file
/// description is non-blocking, and delivers every byte; a request to
/// terminate ends a write nobody reads.
#[cfg(unix)]
fn protocol_output_checks(c: &mut Checks) {
    use std::os::unix::io::{AsRawFd, FromRawFd};
    let pipe = || {
        let mut fds = [0 as c_int; 2];
        unsafe { libc::pipe(fds.as_mut_ptr()) };
        unsafe { (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1])) }
    };
    let data = vec![b'x'; 1 << 20];
    let (mut r, w) = pipe();
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    let reader = std::thread::spawn(move || {
        let mut got = 0usize;
        let mut buf = [0u8; 1000];
        loop {
            std::thread::sleep(Duration::from_micros(200));
            match r.read(&mut buf) {
                Ok(0) | Err(_) => return got,
                Ok(n) => got += n,
            }
        }
    });
    let mut out = platform::ProtocolOutput::new(w, platform::InputEnded::default(), Duration::from_secs(10), || {});
    c.check(out.write_all(&data).is_ok(), "a full non-blocking pipe is waited for, not taken as closed");
    drop(out);
    c.check(reader.join().ok() == Some(data.len()), "... and every byte arrives");

    let signals = platform::StopSignals::install();
    c.check(signals.is_ok(), "stop signals for the blocked write");
    let (_r, w) = pipe();
    let raiser = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(200));
        unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
    });
    let mut out = platform::ProtocolOutput::new(w, platform::InputEnded::default(), Duration::from_secs(3600), || {});
    let written = out.write_all(&data);
    c.check(
        written.is_err() && out.abandoned() == Some(platform::Abandoned::Terminate),
        "a request to terminate ends a write nobody reads",
    );
    let _ = raiser.join();
    drop(signals);
}

#[cfg(windows)]
fn protocol_output_checks(c: &mut Checks) {
    let path = std::env::temp_dir().join(format!("platform-check-output-{}", std::process::id()));
    let data = vec![b'x'; 1 << 20];
    match std::fs::File::create(&path) {
        Ok(f) => {
            let mut out = platform::ProtocolOutput::new(f, platform::InputEnded::default(), Duration::from_secs(10), || {});
            c.check(out.write_all(&data).is_ok() && out.flush().is_ok(), "the protocol output writes a file");
            c.check(out.abandoned().is_none(), "... and goes on writing");
            drop(out);
            c.check(std::fs::read(&path).map(|d| d.len()).ok() == Some(data.len()), "... every byte");
        }
        Err(e) => c.check(false, &format!("create the output file: {}", e)),
    }
    let _ = std::fs::remove_file(&path);
}

/// The trace file: appended to, and never waited on.
/// The console guard of a session call: fd 0 reads the null device while it
/// is on (Unix), and is what it was afterwards; entering twice or leaving
/// twice changes nothing. Windows: not guarded, nothing changes.
fn console_stdin_checks(c: &mut Checks) {
    let on = platform::console_stdin_guard(true);
    let again = platform::console_stdin_guard(true);
    #[cfg(unix)]
    {
        let mut buf = [0u8; 1];
        // SAFETY (test): reads at most one byte into `buf`.
        let n = unsafe { libc::read(0, buf.as_mut_ptr() as *mut libc::c_void, 1) };
        c.check(matches!(on, Ok(true)) && matches!(again, Ok(false)), "console stdin guard: on once");
        c.check(n == 0, "console stdin guard: fd 0 reads end of file");
    }
    #[cfg(windows)]
    c.check(matches!(on, Ok(false)) && matches!(again, Ok(false)), "console stdin guard: nothing on Windows");
    let off = platform::console_stdin_guard(false);
    let off_again = platform::console_stdin_guard(false);
    #[cfg(unix)]
    c.check(matches!(off, Ok(true)) && matches!(off_again, Ok(false)), "console stdin guard: off once");
    #[cfg(windows)]
    c.check(matches!(off, Ok(false)) && matches!(off_again, Ok(false)), "console stdin guard: off, nothing on Windows");
}

fn trace_file_checks(c: &mut Checks) {
    let path = std::env::temp_dir().join(format!("platform-check-trace-{}", std::process::id()));
    let p = path.to_string_lossy().to_string();
    let _ = std::fs::remove_file(&path);
    for line in ["a\n", "b\n"] {
        match platform::open_append_nonblocking(&p) {
            Ok(mut f) => c.check(f.write_all(line.as_bytes()).is_ok(), "the trace file takes a line"),
            Err(e) => c.check(false, &format!("open the trace file: {}", e)),
        }
    }
    c.check(std::fs::read_to_string(&path).ok().as_deref() == Some("a\nb\n"), "the trace file is appended to");
    let _ = std::fs::remove_file(&path);
    #[cfg(unix)]
    {
        let fifo = std::ffi::CString::new(format!("{}.fifo", p)).unwrap();
        if unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) } == 0 {
            let started = std::time::Instant::now();
            let opened = platform::open_append_nonblocking(&format!("{}.fifo", p));
            c.check(opened.is_err() && started.elapsed().as_secs() < 5, "a FIFO nobody reads fails at once");
            let _ = std::fs::remove_file(format!("{}.fifo", p));
        }
    }
}

/// The open files are named (how the glue finds the script R runs after a
/// setwd()), and strings for the OS are made from the form each OS takes.
fn open_file_checks(c: &mut Checks) {
    let dir = std::env::temp_dir().join(format!("platform-check-open-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("server.R");
    let other = dir.join("other.R");
    let _ = std::fs::write(&path, "1\n");
    let _ = std::fs::write(&other, "2\n");
    let canonical = std::fs::canonicalize(&path).ok();
    {
        let _open = std::fs::File::open(&path);
        let listed = platform::open_files();
        c.check(
            canonical.as_ref().map_or(false, |p| listed.iter().any(|l| platform::same_file(l, p))),
            &format!("an open file is named among the open files ({:?} in {:?})", canonical, listed),
        );
        c.check(!listed.iter().any(|l| platform::same_file(l, &other)), "a file that is not open is not named");
    }
    c.check(platform::same_file(&path, &path), "a file is the same file as itself");
    c.check(!platform::same_file(&path, &other), "two files are not the same file");
    c.check(!platform::same_file(&path, &dir.join("none.R")), "a missing file is not the same file");
    let made = platform::os_string(|| Ok::<_, ()>(b"caf\xc3\xa9".to_vec()), || Ok("caf\u{e9}".to_string()));
    c.check(made.as_ref().ok().and_then(|s| s.to_str()) == Some("caf\u{e9}"), "an OS string is made from its text");
    let back = match platform::os_text(std::ffi::OsStr::new("caf\u{e9}")) {
        platform::OsText::Native(b) => b,
        platform::OsText::Utf8(t) => t.into_bytes(),
    };
    c.check(back == "caf\u{e9}".as_bytes(), "an OS string comes back as its bytes");
    let _ = std::fs::remove_dir_all(&dir);
}

fn subject(marker: &str) -> i32 {
    let mut c = Checks { failed: 0 };
    let exe = std::env::current_exe().unwrap();
    let exe = exe.to_string_lossy().to_string();

    #[cfg(unix)]
    unsafe {
        // Like R, which has its own SIGPIPE handler: start from the default.
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    #[cfg(unix)]
    let sigpipe_before = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };

    stop_signal_checks(&mut c);
    trace_file_checks(&mut c);
    console_stdin_checks(&mut c);
    protocol_output_checks(&mut c);
    open_file_checks(&mut c);

    let mut guard = match platform::StdioGuard::install() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("FAIL install: {}", e);
            return 1;
        }
    };
    c.check(
        platform::StdioGuard::install().is_err(),
        "a second guard is refused while one is alive",
    );
    c.check(
        !guard.input_is_terminal(),
        "a piped stdin is not a terminal",
    );
    c.check(
        os::not_inherited(guard.output()),
        "the protocol output is not inherited by child processes",
    );

    // ---- what tool code does while the guard is alive ----
    c_puts("tool-c-puts"); // buffered in C stdio: the guard's drop must flush it
    os::raw_write(1, b"tool-raw-write\n");
    println!("tool-rust-println");
    let mut buf = [0u8; 64];
    let n = os::raw_read(0, &mut buf);
    c.check(
        n == 0,
        &format!("a C read of descriptor 0 sees end of file (got {})", n),
    );
    let n = io::stdin().read(&mut buf).map_err(|e| e.to_string());
    c.check(
        n == Ok(0),
        &format!("std::io::stdin() sees end of file (got {:?})", n),
    );
    let status = Command::new(&exe)
        .args(["child", "child-rust-command"])
        .status();
    c.check(
        status.map(|s| s.success()).unwrap_or(false),
        "a child started with std::process::Command ran",
    );
    let rc = c_system(&format!("{} child child-c-system", os::shell_quote(&exe)));
    c.check(
        rc == 0,
        &format!("a child started with C system() ran (status {})", rc),
    );
    let lingering = Command::new(&exe)
        .args(["linger", marker])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    c.check(lingering.is_ok(), "a lingering child started");

    #[cfg(unix)]
    {
        // A child of a tool gets the default SIGPIPE (a shell killing itself with it dies).
        let rc = c_system("kill -PIPE $$; echo 'sigpipe-was-ignored-in-child' >&2");
        let died = libc::WIFSIGNALED(rc) && libc::WTERMSIG(rc) == libc::SIGPIPE;
        c.check(
            died,
            &format!("child processes keep the default SIGPIPE (status {})", rc),
        );
        // Writing to a pipe nobody reads fails with EPIPE instead of killing us.
        let mut fds = [0 as c_int; 2];
        unsafe { libc::pipe(fds.as_mut_ptr()) };
        unsafe { libc::close(fds[0]) };
        let w = unsafe { libc::write(fds[1], b"x".as_ptr() as *const std::os::raw::c_void, 1) };
        let err = io::Error::last_os_error().raw_os_error();
        unsafe { libc::close(fds[1]) };
        c.check(
            w == -1 && err == Some(libc::EPIPE),
            "a write to a closed pipe fails with EPIPE",
        );
    }

    // ---- the protocol ----
    let input = guard.take_input();
    c.check(guard.take_input().is_none(), "the input can be taken once");
    let mut input = match input {
        Some(f) => f,
        None => {
            eprintln!("FAIL no protocol input");
            return 1;
        }
    };
    c.check(
        os::not_inherited(&input),
        "the protocol input is not inherited by child processes",
    );
    let line = read_line_unbuffered(&mut input);
    c.check(
        line == "PING\n",
        &format!("the protocol input is intact (got {:?})", line),
    );
    stoppable_input_checks(&mut c, input);
    let _ = guard
        .output()
        .write_all(format!("PONG {}", line).as_bytes());
    let _ = guard.output().flush();
    drop(guard);

    // ---- after the guard: everything is back ----
    os::raw_write(1, b"after-raw-write\n");
    println!("after-rust-println");
    c_puts("after-c-puts");
    platform::flush_c_streams();
    let mut fd0 = Vec::new();
    loop {
        let mut b = [0u8; 1];
        if os::raw_read(0, &mut b) != 1 {
            break;
        }
        fd0.push(b[0]);
        if b[0] == b'\n' {
            break;
        }
    }
    c.check(
        fd0 == b"AFTER\n",
        &format!(
            "descriptor 0 is the real stdin again (got {:?})",
            String::from_utf8_lossy(&fd0)
        ),
    );
    let mut rest = String::new();
    let _ = io::stdin().read_line(&mut rest);
    c.check(
        rest == "AFTER2\n",
        &format!(
            "std::io::stdin() reads the real stdin again (got {:?})",
            rest
        ),
    );
    #[cfg(unix)]
    {
        let now = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        c.check(now == sigpipe_before, "the SIGPIPE disposition is restored");
    }
    // A second guard works once the first is gone.
    match platform::StdioGuard::install() {
        Ok(mut g) => {
            let _ = g.output().write_all(b"second-guard\n");
            os::raw_write(1, b"second-guard-tool\n");
        }
        Err(e) => c.check(false, &format!("a second guard after the first: {}", e)),
    }
    os::raw_write(1, b"end\n");
    eprintln!("subject: {} failed", c.failed);
    if c.failed == 0 {
        0
    } else {
        1
    }
}

fn read_line_unbuffered(f: &mut std::fs::File) -> String {
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while let Ok(1) = f.read(&mut b) {
        line.push(b[0]);
        if b[0] == b'\n' {
            break;
        }
    }
    String::from_utf8_lossy(&line).into_owned()
}

fn driver(subject_program: Option<&str>) -> i32 {
    let mut c = Checks { failed: 0 };
    let mut exe = std::env::current_exe().unwrap();
    if let Some(name) = subject_program {
        exe.set_file_name(name);
    }
    let marker = std::env::temp_dir().join(format!("platform-check-linger-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let mut sub = match Command::new(&exe)
        .args(["subject", &marker.to_string_lossy()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("FAIL cannot start the subject: {}", e);
            return 1;
        }
    };
    let mut to_sub = sub.stdin.take().unwrap();
    let out = sub.stdout.take().unwrap();
    let mut err = sub.stderr.take().unwrap();
    // stdout is read line by line on a thread, so a hang becomes a timeout.
    let (tx, rx) = mpsc::channel::<Option<String>>();
    std::thread::spawn(move || {
        let mut out = BufReader::new(out);
        loop {
            let mut line = String::new();
            match out.read_line(&mut line) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(None);
                    break;
                }
                Ok(_) => {
                    let _ = tx.send(Some(line));
                }
            }
        }
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });

    let timeout = Duration::from_secs(60);
    let _ = to_sub.write_all(b"PING\n");
    let _ = to_sub.flush();
    let mut stdout_lines = Vec::new();
    match rx.recv_timeout(timeout) {
        Ok(Some(line)) => stdout_lines.push(line),
        other => {
            eprintln!(
                "FAIL no answer to PING on stdout ({:?}); killing the subject",
                other
            );
            let _ = sub.kill();
            eprintln!("{}", err_thread.join().unwrap_or_default());
            return 1;
        }
    }
    let _ = to_sub.write_all(b"AFTER\nAFTER2\n");
    drop(to_sub);
    let mut eof = false;
    while let Ok(item) = rx.recv_timeout(timeout) {
        match item {
            Some(line) => stdout_lines.push(line),
            None => {
                eof = true;
                break;
            }
        }
    }
    let lingering_done_at_eof = marker.exists();
    let status = sub.wait();
    let stderr = err_thread.join().unwrap_or_default();
    eprintln!(
        "---- subject stderr ----\n{}---- end of subject stderr ----",
        stderr
    );

    // Protocol lines are byte for byte; what C code writes through a descriptor
    // in text mode (Windows) ends lines with \r\n, so compare the rest without \r.
    let stdout: String = stdout_lines.concat();
    let expected =
        "PONG PING\nafter-raw-write\nafter-rust-println\nafter-c-puts\nsecond-guard\nend\n";
    c.check(eof, "stdout reached end of file");
    c.check(
        stdout.replace("\r\n", "\n") == expected,
        &format!("stdout carries the protocol bytes, then the restored output\n     got:      {:?}\n     expected: {:?}", stdout, expected),
    );
    for exact in ["PONG PING\n", "second-guard\n"] {
        c.check(
            stdout_lines.iter().any(|l| l == exact),
            &format!("protocol line {:?} is byte for byte", exact),
        );
    }
    c.check(
        !lingering_done_at_eof,
        "a lingering child process does not hold the protocol stdout open",
    );
    let stderr = stderr.replace("\r\n", "\n");
    for marker in [
        "tool-c-puts\n",
        "tool-raw-write\n",
        "tool-rust-println\n",
        "child-rust-command stdin=0\n",
        "child-c-system stdin=0\n",
        "second-guard-tool\n",
    ] {
        c.check(stderr.contains(marker), &format!("stderr has {:?}", marker));
    }
    c.check(
        stderr.contains("subject: 0 failed"),
        "the subject's own checks passed",
    );
    c.check(
        status.map(|s| s.success()).unwrap_or(false),
        "the subject exited with status 0",
    );
    let _ = std::fs::remove_file(&marker);

    // A worker that inherited the protocol pipes lets go of them.
    let detached = Command::new(&exe)
        .arg("detach")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            let keep_open = child.stdin.take();
            let out = child.wait_with_output();
            drop(keep_open);
            out
        });
    match detached {
        Ok(out) => {
            let stdout = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
            let stderr = String::from_utf8_lossy(&out.stderr).replace("\r\n", "\n");
            c.check(stdout == "before-detach\n", &format!("after detach_stdio() nothing reaches stdout (got {:?})", stdout));
            for marker in ["after-detach-raw\n", "after-detach-println\n", "after-detach-puts\n"] {
                c.check(stderr.contains(marker), &format!("after detach_stdio() stderr has {:?}", marker));
            }
            c.check(stderr.contains("detached-read=0"), "after detach_stdio() descriptor 0 reads end of file");
            c.check(out.status.success(), "the detached process exited with status 0");
        }
        Err(e) => c.check(false, &format!("cannot run the detach role: {}", e)),
    }

    if subject_program.is_none() {
        private_checks(&mut c, &exe);
        session_checks(&mut c);
    }

    println!(
        "platform-check ({}{}): {} failed",
        std::env::consts::OS,
        if subject_program.is_some() {
            ", GUI subject"
        } else {
            ""
        },
        c.failed
    );
    if c.failed == 0 {
        0
    } else {
        1
    }
}

// ---- private directories, local sockets, process identity ---------------------

#[cfg(unix)]
fn dial(url: &str) -> io::Result<std::os::unix::net::UnixStream> {
    std::os::unix::net::UnixStream::connect(url.trim_start_matches("ipc://"))
}

#[cfg(windows)]
fn dial(url: &str) -> io::Result<std::net::TcpStream> {
    std::net::TcpStream::connect(url.trim_start_matches("tcp://"))
}

/// The live sessions' directory, registration files and links: unix, a
/// private directory (mode 0700) with Unix sockets; Windows, a directory of
/// the user's that is no reparse point, with named pipes.
fn session_checks(c: &mut Checks) {
    let base = std::env::temp_dir().join(format!("pcs-{}", &platform::random_token()[..8]));
    let _ = std::fs::create_dir(&base);
    if cfg!(windows) {
        // The default place, under a LOCALAPPDATA of the check's own.
        std::env::set_var("LOCALAPPDATA", &base);
        std::env::remove_var("MCPLITE_SESSION_DIR");
        let dir = platform::session_dir();
        let want = base.join("mcplite").join("sessions");
        c.check(dir.as_ref().ok() == Some(&want), &format!("the session directory is LOCALAPPDATA\\mcplite\\sessions ({:?})", dir));
    }
    std::env::set_var("MCPLITE_SESSION_DIR", &base.join("given"));
    let dir = match platform::session_dir() {
        Ok(d) => d,
        Err(e) => return c.check(false, &format!("session directory: {}", e)),
    };
    c.check(dir.is_dir(), "MCPLITE_SESSION_DIR is made");
    c.check(platform::session_dir().ok().as_ref() == Some(&dir), "the session directory is found again");
    let file = dir.join("r.json");
    c.check(platform::write_private_file(&file, b"{\"a\":1}").is_ok(), "a registration is written");
    c.check(platform::write_private_file(&file, b"{\"a\":2}").is_ok(), "and replaced");
    let read = platform::read_private_file(&file, 100);
    c.check(read.as_deref().ok() == Some(&b"{\"a\":2}"[..]), "the registration reads back");
    let left: Vec<_> = std::fs::read_dir(&dir).map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect()).unwrap_or_default();
    c.check(left.len() == 1, &format!("no temporary file is left ({:?})", left));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dir).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
        c.check(mode == 0o700, &format!("the session directory has mode 0700 (got {:o})", mode));
        let mode = std::fs::metadata(&file).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
        c.check(mode == 0o600, &format!("the registration has mode 0600 (got {:o})", mode));
    }
    // Links: unix always; Windows if the system lets this user make them.
    let link = dir.join("l.json");
    let linked = base.with_extension("link");
    #[cfg(unix)]
    let made = std::os::unix::fs::symlink(&file, &link).and_then(|_| std::os::unix::fs::symlink(&dir, &linked));
    #[cfg(windows)]
    let made =
        std::os::windows::fs::symlink_file(&file, &link).and_then(|_| std::os::windows::fs::symlink_dir(&dir, &linked));
    // Wine 8 makes links that its own calls cannot look at (NotFound):
    // only a link the system reports as one tests the refusal.
    let made = made.and_then(|_| {
        let seen = |p: &std::path::Path| std::fs::symlink_metadata(p).map(|m| m.file_type().is_symlink()).unwrap_or(false);
        if seen(&link) && seen(&linked) {
            Ok(())
        } else {
            Err(io::Error::new(io::ErrorKind::Other, "the links made are not seen as links"))
        }
    });
    match made {
        Ok(()) => {
            c.check(platform::read_private_file(&link, 100).is_err(), "a registration that is a link is refused");
            // Unix replaces the link, Windows refuses it: the file it leads to stays.
            let _ = platform::write_private_file(&link, b"{}");
            let kept = std::fs::read(&file).ok();
            c.check(kept.as_deref() == Some(&b"{\"a\":2}"[..]), "a registration is never written through a link");
            std::env::set_var("MCPLITE_SESSION_DIR", &linked);
            c.check(platform::session_dir().is_err(), "a session directory that is a link is refused");
            std::env::set_var("MCPLITE_SESSION_DIR", &dir);
        }
        Err(e) => {
            c.check(cfg!(windows), &format!("symbolic links can be made ({})", e));
            eprintln!("note: no symbolic link here ({}): the refusal of links is not checked", e);
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644));
        c.check(platform::read_private_file(&file, 100).is_err(), "a registration open to others is refused");
        let open = base.with_extension("open");
        let _ = std::fs::create_dir(&open);
        let _ = std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755));
        std::env::set_var("MCPLITE_SESSION_DIR", &open);
        c.check(platform::session_dir().is_err(), "a session directory open to others is refused");
        let _ = std::fs::remove_dir(&open);
    }
    link_checks(c, &dir);
    let _ = std::fs::remove_file(&link);
    let _ = std::fs::remove_file(&linked);
    let _ = std::fs::remove_dir(&linked);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&base);
    std::env::remove_var("MCPLITE_SESSION_DIR");
}

/// The access list of a session's pipe, read back from a handle to it.
#[cfg(windows)]
mod pipe_dacl {
    use std::ffi::c_void;
    use std::io;
    use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};

    const SE_FILE_OBJECT: u32 = 1;
    const DACL_SECURITY_INFORMATION: u32 = 4;
    const TOKEN_QUERY: u32 = 8;
    const TOKEN_USER_CLASS: u32 = 1;
    const ACCESS_ALLOWED_ACE_TYPE: u8 = 0;
    const FILE_ALL_ACCESS: u32 = 0x001F_01FF;

    #[link(name = "advapi32")]
    extern "system" {
        fn GetSecurityInfo(
            handle: *mut c_void,
            kind: u32,
            what: u32,
            owner: *mut *mut c_void,
            group: *mut *mut c_void,
            dacl: *mut *mut c_void,
            sacl: *mut *mut c_void,
            descriptor: *mut *mut c_void,
        ) -> u32;
        fn GetAce(acl: *mut c_void, index: u32, ace: *mut *mut c_void) -> i32;
        fn EqualSid(a: *mut c_void, b: *mut c_void) -> i32;
        fn OpenProcessToken(process: *mut c_void, access: u32, token: *mut *mut c_void) -> i32;
        fn GetTokenInformation(token: *mut c_void, class: u32, info: *mut c_void, len: u32, returned: *mut u32) -> i32;
    }
    #[link(name = "kernel32")]
    extern "system" {
        fn GetCurrentProcess() -> *mut c_void;
        fn LocalFree(memory: *mut c_void) -> *mut c_void;
    }

    /// Whether the DACL of `pipe` is exactly one entry that allows this
    /// process's user everything.
    pub fn only_this_user(pipe: &impl AsRawHandle) -> io::Result<bool> {
        let mut token = std::ptr::null_mut();
        // SAFETY: this process's pseudo-handle and an out-pointer to a local.
        if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new handle nothing else owns.
        let token = unsafe { OwnedHandle::from_raw_handle(token) };
        let mut user = vec![0u64; 128];
        let mut len = 0u32;
        // SAFETY: the buffer holds 1024 bytes, aligned for TOKEN_USER.
        let ok = unsafe {
            GetTokenInformation(token.as_raw_handle(), TOKEN_USER_CLASS, user.as_mut_ptr() as *mut c_void, 1024, &mut len)
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a TOKEN_USER starts with its SID pointer (into `user`).
        let sid = unsafe { *(user.as_ptr() as *const *mut c_void) };
        let (mut dacl, mut descriptor) = (std::ptr::null_mut(), std::ptr::null_mut());
        let null = std::ptr::null_mut();
        // SAFETY: a handle opened with read access (READ_CONTROL) and out-pointers to locals.
        let err = unsafe {
            GetSecurityInfo(
                pipe.as_raw_handle(),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION,
                null,
                null,
                &mut dacl,
                null,
                &mut descriptor,
            )
        };
        if err != 0 {
            return Err(io::Error::from_raw_os_error(err as i32));
        }
        // A null DACL would let everyone in.
        let only = !dacl.is_null() && {
            // SAFETY: an ACL header: revision, padding, size (u16), ACE count (u16).
            let count = unsafe { *((dacl as *const u8).add(4) as *const u16) };
            let mut ace = std::ptr::null_mut();
            // SAFETY: the first ACE of the ACL the descriptor holds (alive until LocalFree).
            count == 1 && unsafe { GetAce(dacl, 0, &mut ace) } != 0 && {
                // SAFETY: an ACE header (type, flags, size), then for an
                // allow entry the mask (u32) and the SID.
                unsafe {
                    let ace = ace as *const u8;
                    *ace == ACCESS_ALLOWED_ACE_TYPE
                        && *(ace.add(4) as *const u32) == FILE_ALL_ACCESS
                        && EqualSid(ace.add(8) as *mut c_void, sid) != 0
                }
            }
        };
        // SAFETY: the descriptor GetSecurityInfo allocated, freed once.
        unsafe { LocalFree(descriptor) };
        Ok(only)
    }
}

/// Whether this runs under wine (its ntdll says its version).
#[cfg(windows)]
fn under_wine() -> bool {
    #[link(name = "kernel32")]
    extern "system" {
        fn GetModuleHandleW(name: *const u16) -> *mut std::ffi::c_void;
        fn GetProcAddress(module: *mut std::ffi::c_void, name: *const c_char) -> *mut std::ffi::c_void;
    }
    let ntdll: Vec<u16> = "ntdll.dll".encode_utf16().chain(Some(0)).collect();
    // SAFETY: a NUL-terminated name; ntdll is loaded in every process.
    let module = unsafe { GetModuleHandleW(ntdll.as_ptr()) };
    // SAFETY: a module handle (or null, which fails) and a NUL-terminated name.
    !module.is_null() && !unsafe { GetProcAddress(module, b"wine_get_version\0".as_ptr() as *const c_char) }.is_null()
}

/// The session link: listen, connect with a token, lines both ways, a
/// reader blocked on one thread while another writes, timeouts, shutdown.
fn link_checks(c: &mut Checks, dir: &std::path::Path) {
    use std::time::Instant;
    let sock = platform::session_socket(dir, std::process::id());
    let name = sock.to_string_lossy().into_owned();
    c.check(sock.as_os_str().len() <= platform::SOCKET_PATH_MAX, &format!("the link's address fits ({})", name));
    if cfg!(windows) {
        c.check(name.starts_with(r"\\.\pipe\mcplite-"), "the link is a named pipe");
        c.check(platform::session_socket(dir, 1) != sock, "pipe names are random");
        c.check(platform::registered_socket(dir, 1, &name) == Some(sock.clone()), "a registered pipe name is used");
        c.check(platform::registered_socket(dir, 1, r"C:\x\1.sock").is_none(), "a registered file path is not");
        c.check(platform::connect_at(&dir.join("r.json"), b"").is_err(), "connect_at opens no file");
    }
    let listener = match platform::SessionListener::bind_at(&sock) {
        Ok(l) => Arc::new(l),
        Err(e) => return c.check(false, &format!("session link: {}", e)),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&sock).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
        c.check(mode == 0o600, &format!("the session socket has mode 0600 (got {:o})", mode));
    }
    #[cfg(windows)]
    {
        if under_wine() {
            eprintln!("note: wine ignores FILE_FLAG_FIRST_PIPE_INSTANCE: a second listener on the pipe is not checked");
        } else {
            let second = platform::SessionListener::bind_at(&sock);
            c.check(second.is_err(), "a second listener on the same pipe is refused (first instance)");
        }
    }
    let token = platform::random_token();
    let client = platform::connect_at(&sock, token.as_bytes());
    let server = listener.accept_next();
    let (client, server): (platform::SessionStream, platform::SessionStream) = match (client, server) {
        (Ok(c), Ok(s)) => (c, s),
        (c1, s1) => return c.check(false, &format!("connect and accept ({:?}, {:?})", c1.err(), s1.err())),
    };
    #[cfg(windows)]
    match pipe_dacl::only_this_user(&client) {
        Ok(only) => c.check(only, "the pipe's access list has one entry: this user, allowed"),
        Err(e) => c.check(false, &format!("the pipe's access list cannot be read ({})", e)),
    }
    c.check(platform::has_token(&server, token.as_bytes(), Duration::from_secs(5)), "connect_at presents the token");
    let wrong = platform::connect_at(&sock, &[b'0'; 32]);
    let ok = listener.accept_next().map(|s| platform::has_token(&s, token.as_bytes(), Duration::from_secs(5)));
    c.check(wrong.is_ok() && matches!(ok, Ok(false)), "a wrong token is refused");
    let silent = platform::connect_at(&sock, b"");
    let started = Instant::now();
    let ok = listener.accept_next().map(|s| platform::has_token(&s, token.as_bytes(), Duration::from_millis(200)));
    c.check(silent.is_ok() && matches!(ok, Ok(false)), "a silent connection is refused");
    c.check(started.elapsed() < Duration::from_secs(10), "a silent connection is given up on");
    drop((wrong, silent));

    // Lines both ways, as the session code writes and reads them.
    let wrote = (&client).write_all(b"hello\n");
    let mut line = String::new();
    let read = BufReader::new(&server).read_line(&mut line);
    c.check(wrote.is_ok() && read.is_ok() && line == "hello\n", &format!("client to session ({:?})", line));
    let big = vec![b'x'; 300 << 10];
    let writer = server.try_clone().map(|s| {
        let big = big.clone();
        std::thread::spawn(move || (&s).write_all(&big).and_then(|_| (&s).write_all(b"\n")))
    });
    let mut back = Vec::new();
    let read = BufReader::new(&client).read_until(b'\n', &mut back);
    let wrote = writer.map(|t| t.join().ok());
    c.check(read.is_ok() && back.len() == big.len() + 1, &format!("a long line from the session ({} bytes)", back.len()));
    c.check(matches!(wrote, Ok(Some(Ok(())))), "written from another thread");

    // A read times out.
    let _ = client.set_read_timeout(Some(Duration::from_millis(100)));
    let started = Instant::now();
    let mut buf = [0u8; 8];
    let timed = (&client).read(&mut buf);
    c.check(timed.is_err() && started.elapsed() < Duration::from_secs(5), &format!("a read times out ({:?})", timed));
    let _ = client.set_read_timeout(None);

    // A reader blocked on one thread while another writes, then shutdown
    // ends it and the client sees the end.
    let reader = server.try_clone().map(|s| {
        std::thread::spawn(move || {
            let mut buf = [0u8; 8];
            (&s).read(&mut buf)
        })
    });
    let wrote = (&server).write_all(b"during\n");
    let mut line = String::new();
    let read = BufReader::new(&client).read_line(&mut line);
    c.check(wrote.is_ok() && read.is_ok() && line == "during\n", "a write while a read waits on another thread");
    let shut = server.shutdown(std::net::Shutdown::Both);
    let ended = reader.map(|t| t.join().ok());
    c.check(shut.is_ok() && matches!(ended, Ok(Some(Ok(0)))), &format!("shutdown ends a blocked read ({:?})", ended));
    let mut buf = [0u8; 8];
    c.check(matches!((&client).read(&mut buf), Ok(0)), "the client sees the end after shutdown");
    drop((client, server));

    // The other way: the client goes, the session's read sees the end.
    let client = platform::connect_at(&sock, b"");
    let server = listener.accept_next();
    if let (Ok(client), Ok(server)) = (client, server) {
        drop(client);
        let mut buf = [0u8; 8];
        c.check(matches!((&server).read(&mut buf), Ok(0)), "the session sees the end when the client goes");
    } else {
        c.check(false, "a connection after shutdown");
    }

    // A connection wakes a thread waiting in accept (how the session stops).
    let waiting = {
        let listener = Arc::clone(&listener);
        std::thread::spawn(move || listener.accept_next().is_ok())
    };
    let woke = platform::connect_at(&sock, b"");
    c.check(woke.is_ok() && waiting.join().unwrap_or(false), "a connection wakes the accepting thread");
    drop(woke);
    drop(listener);
    let gone = platform::connect_at(&sock, b"");
    c.check(
        matches!(&gone, Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused)),
        &format!("a link nobody listens on is refused or gone ({:?})", gone.err()),
    );
}

fn private_checks(c: &mut Checks, exe: &std::path::Path) {
    use std::time::Instant;
    let dir = match platform::PrivateDir::create("pc-") {
        Ok(d) => d,
        Err(e) => return c.check(false, &format!("private directory: {}", e)),
    };
    let path = dir.path().to_path_buf();
    c.check(path.is_dir(), "the private directory exists");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
        c.check(mode == 0o700, &format!("the private directory has mode 0700 (got {:o})", mode));
    }
    if let Ok(other) = platform::PrivateDir::create("pc-") {
        c.check(other.path() != path, "two private directories differ");
        let kept = other.keep();
        c.check(kept.is_dir(), "a kept private directory stays when let go");
        let _ = std::fs::remove_dir(&kept);
    }
    let listener = match platform::LocalListener::bind(&dir, "bell") {
        Ok(l) => l,
        Err(e) => return c.check(false, &format!("local listener: {}", e)),
    };
    let url = listener.url().to_string();
    c.check(url.starts_with(if cfg!(unix) { "ipc://" } else { "tcp://127.0.0.1:" }), &format!("listener url {}", url));
    let token = platform::random_token();
    c.check(token.len() == 32 && token != platform::random_token(), "tokens are 32 digits and differ");
    // A connection that stays silent and one with a wrong token come first:
    // each is dropped after its own short wait, and the right one is taken.
    let silent = dial(&url);
    let wrong = dial(&url).and_then(|mut s| s.write_all(&[b'0'; 32]).map(|_| s));
    let right = dial(&url).and_then(|mut s| s.write_all(token.as_bytes()).map(|_| s));
    c.check(silent.is_ok() && wrong.is_ok() && right.is_ok(), "three connections to the listener");
    let started = Instant::now();
    let got: io::Result<platform::LocalStream> =
        listener.accept_token(token.as_bytes(), Instant::now() + Duration::from_secs(20), Duration::from_millis(100));
    c.check(got.is_ok(), &format!("the connection with the token is accepted after a silent one ({:?})", got.err()));
    c.check(started.elapsed() < Duration::from_secs(10), "a silent connection does not hold the accept up");
    drop((silent, wrong, right));

    // The progress relay's way: local_connect() sends the token, the
    // accepting side checks each connection with has_token() on its own.
    match platform::LocalListener::bind(&dir, "progress") {
        Ok(relay) => {
            let right = platform::local_connect(relay.url(), token.as_bytes());
            c.check(right.is_ok(), &format!("local_connect reaches the listener ({:?})", right.as_ref().err()));
            let accepted = relay.accept_next();
            let ok = accepted.as_ref().map(|s| platform::has_token(s, token.as_bytes(), Duration::from_secs(5)));
            c.check(matches!(ok, Ok(true)), "a connection made by local_connect presents the token");
            let wrong = platform::local_connect(relay.url(), &[b'0'; 32]);
            let ok = relay.accept_next().map(|s| platform::has_token(&s, token.as_bytes(), Duration::from_secs(5)));
            c.check(wrong.is_ok() && matches!(ok, Ok(false)), "a wrong token is refused");
            let silent = platform::local_connect(relay.url(), b"");
            let started = Instant::now();
            let ok = relay.accept_next().map(|s| platform::has_token(&s, token.as_bytes(), Duration::from_millis(200)));
            c.check(silent.is_ok() && matches!(ok, Ok(false)), "a silent connection is refused");
            c.check(started.elapsed() < Duration::from_secs(10), "a silent connection is given up on");
            c.check(platform::local_connect("nonsense://x", b"").is_err(), "local_connect refuses another scheme");
            drop((right, wrong, silent, accepted));
        }
        Err(e) => c.check(false, &format!("second local listener: {}", e)),
    }

    // Killing by pid and start time.
    let me = std::process::id();
    c.check(platform::process_start(me).is_some() || !cfg!(any(target_os = "linux", windows)), "this process's start time");
    match Command::new(exe).arg("wait").spawn() {
        Ok(mut child) => {
            let pid = child.id();
            let start = platform::process_start(pid);
            if let Some(s) = start {
                let refused = platform::kill_process(pid, Some(s.wrapping_add(1)));
                c.check(matches!(refused, Ok(false)), &format!("a wrong start time is refused ({:?})", refused));
                c.check(matches!(child.try_wait(), Ok(None)), "the process with a wrong start time lives");
            }
            let killed = platform::kill_process(pid, start);
            c.check(matches!(killed, Ok(true)), &format!("the right start time kills ({:?})", killed));
            let _ = child.wait();
        }
        Err(e) => c.check(false, &format!("cannot start a process to kill: {}", e)),
    }
    drop(listener);
    drop(dir);
    c.check(!path.exists(), "the private directory is removed when dropped");
}
