//! The stdout guard: while the server runs, fd 1 points at stderr so nothing a
//! tool prints (R, C, child processes) can reach the protocol stream, which is
//! written through a private duplicate of the real stdout.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};

pub struct StdoutGuard {
    protocol: File,
    old_sigpipe: libc::sighandler_t,
}

/// Flush every C stdio stream so buffered tool output leaves before fds move.
pub fn flush_c_streams() {
    unsafe {
        libc::fflush(std::ptr::null_mut());
    }
}

impl StdoutGuard {
    pub fn install() -> io::Result<Self> {
        flush_c_streams();
        unsafe {
            let fd = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::dup2(2, 1) < 0 {
                let err = io::Error::last_os_error();
                libc::close(fd);
                return Err(err);
            }
            // A client that closes our stdout must end the loop with EPIPE,
            // not kill the process (R would turn SIGPIPE into an R error).
            let old_sigpipe = libc::signal(libc::SIGPIPE, libc::SIG_IGN);
            Ok(StdoutGuard { protocol: File::from_raw_fd(fd), old_sigpipe })
        }
    }

    pub fn protocol(&mut self) -> &mut File {
        &mut self.protocol
    }
}

impl Drop for StdoutGuard {
    fn drop(&mut self) {
        flush_c_streams();
        unsafe {
            libc::dup2(self.protocol.as_raw_fd(), 1);
            libc::signal(libc::SIGPIPE, self.old_sigpipe);
        }
    }
}
