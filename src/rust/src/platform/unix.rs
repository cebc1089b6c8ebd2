//! Unix: descriptors with `dup2`, private copies close-on-exec, SIGPIPE caught.

use std::fs::{File, OpenOptions};
use std::io;

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
