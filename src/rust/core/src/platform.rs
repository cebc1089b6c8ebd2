//! The OS-specific parts of the client ([`crate::client`]); the rest of the
//! core assumes neither POSIX nor Windows.
//!
//! * SIGPIPE is blocked in the client's writer thread on Unix: a host process
//!   may turn SIGPIPE into an error that unwinds the wrong thread (R does), and
//!   a write to a server that has exited must fail with EPIPE instead.
//! * A server starts in a process group of its own on Unix (`setpgid(0, 0)`
//!   in the child, through `CommandExt::process_group`), so the terminal's
//!   Ctrl-C, which goes to the foreground group, reaches the R session and
//!   not the server, and so that closing the client can end every process
//!   the server started (`killpg`), including background children that would
//!   otherwise keep the client's pipes open and outlive the session.
//! * Windows: not done yet. The server starts as before (in the console's
//!   process group, without a job object); its background children are not
//!   ended on close. The functions below do nothing there.
//!
//! Kept to std and libc, as far back as rustc 1.63 where that costs nothing.

use std::process::Command;

/// Block SIGPIPE in the calling thread (Unix; nothing elsewhere).
#[cfg(unix)]
pub fn block_sigpipe_in_this_thread() {
    // SAFETY: plain libc calls on a local, zero-initialised signal set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

#[cfg(not(unix))]
pub fn block_sigpipe_in_this_thread() {}

/// Make the command's process the leader of a new process group, whose id is
/// then its pid.
#[cfg(unix)]
pub fn own_process_group(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
}

#[cfg(not(unix))]
pub fn own_process_group(_cmd: &mut Command) {}

#[cfg(unix)]
fn group_id(leader: u32) -> Option<libc::pid_t> {
    // Never 0 (the caller's own group) or 1, or a negative number (every process).
    libc::pid_t::try_from(leader).ok().filter(|&g| g > 1)
}

/// Whether any process of the group that `leader` (a child started with
/// [`own_process_group`]) leads still exists.
#[cfg(unix)]
pub fn process_group_alive(leader: u32) -> bool {
    match group_id(leader) {
        Some(pgid) => {
            // SAFETY: signal 0 only checks for existence; pgid > 1.
            let r = unsafe { libc::killpg(pgid, 0) };
            // EPERM: a member exists that this process may not signal.
            r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
        }
        None => false,
    }
}

#[cfg(not(unix))]
pub fn process_group_alive(_leader: u32) -> bool {
    false
}

/// End every process of the group `leader` leads (SIGKILL).
#[cfg(unix)]
pub fn end_process_group(leader: u32) {
    if let Some(pgid) = group_id(leader) {
        // SAFETY: a plain signal to a process group other than ours (pgid > 1,
        // and the child was made leader of a new group when it started).
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}

#[cfg(not(unix))]
pub fn end_process_group(_leader: u32) {}
