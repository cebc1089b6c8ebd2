//! The OS-specific parts of the developer tools: the client
//! ([`crate::client`]) and the config writer; the rest of this crate, and the
//! core, assume neither POSIX nor Windows.
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
//! * Configuration files (`mcp_config(write = TRUE)`, [`crate::config_file`]):
//!   on Unix a new file is created exclusively (`O_CREAT|O_EXCL`, which never
//!   follows a symbolic link, plus `O_NOFOLLOW` and `O_CLOEXEC`) with the
//!   final permission bits from the start, then given the original file's
//!   owner and group (`fchown`); [`FileFacts`] holds what identifies a version
//!   of a file (device, inode, size, modification time) and its link count.
//!   Windows: the file is created with `create_new` (which does not follow a
//!   link either) and inherits the directory's access control list; there is
//!   no owner to keep, the link count reads as 1 and the identity as 0, so
//!   the checks there rest on size, modification time and content.
//!
//! Kept to std and libc, as far back as rustc 1.63 where that costs nothing.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::path::Path;
use std::process::Command;

/// What identifies one version of a file, and what a replacement must keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileFacts {
    pub device: u64,
    pub inode: u64,
    pub size: u64,
    /// Modification time: seconds and nanoseconds since the epoch.
    pub modified: (i64, i64),
    /// Hard links (names) of the file.
    pub links: u64,
    /// Permission bits (Unix; Windows: 0o444 or 0o666 from the read-only flag).
    pub mode: u32,
    /// Owner and group (Unix only).
    pub owner: Option<(u32, u32)>,
}

#[cfg(unix)]
pub fn file_facts(meta: &Metadata) -> FileFacts {
    use std::os::unix::fs::MetadataExt;
    FileFacts {
        device: meta.dev(),
        inode: meta.ino(),
        size: meta.size(),
        modified: (meta.mtime(), meta.mtime_nsec()),
        links: meta.nlink(),
        mode: meta.mode() & 0o7777,
        owner: Some((meta.uid(), meta.gid())),
    }
}

#[cfg(not(unix))]
pub fn file_facts(meta: &Metadata) -> FileFacts {
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| (d.as_secs() as i64, i64::from(d.subsec_nanos())))
        .unwrap_or((0, 0));
    FileFacts {
        device: 0,
        inode: 0,
        size: meta.len(),
        modified,
        links: 1,
        mode: if meta.permissions().readonly() { 0o444 } else { 0o666 },
        owner: None,
    }
}

/// Create the file `path`, which must not exist (not even as a dangling
/// symbolic link), for writing. With `like`, the file gets its permission
/// bits from the start (never wider, whatever the umask) and its owner and
/// group; when the owner or group cannot be given, the new file is removed
/// and the error says which. Without, the usual mode for a new file (0666
/// less the umask).
#[cfg(unix)]
pub fn create_exclusive(path: &Path, like: Option<&FileFacts>) -> Result<File, CreateError> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mode = like.map(|f| f.mode).unwrap_or(0o666);
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode & 0o777)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(CreateError::Create)?;
    let like = match like {
        Some(like) => like,
        None => return Ok(file),
    };
    let fail = |e: CreateError| {
        let _ = std::fs::remove_file(path);
        e
    };
    let meta = file.metadata().map_err(|e| fail(CreateError::Create(e)))?;
    if let Some((uid, gid)) = like.owner {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != uid || meta.gid() != gid {
            std::os::unix::fs::fchown(&file, Some(uid), Some(gid)).map_err(|e| fail(CreateError::Owner(e)))?;
        }
    }
    // After fchown, which clears set-id bits; the umask may have narrowed the
    // bits at creation, never widened them.
    file.set_permissions(std::fs::Permissions::from_mode(mode)).map_err(|e| fail(CreateError::Create(e)))?;
    Ok(file)
}

#[cfg(not(unix))]
pub fn create_exclusive(path: &Path, _like: Option<&FileFacts>) -> Result<File, CreateError> {
    OpenOptions::new().write(true).create_new(true).open(path).map_err(CreateError::Create)
}

/// Why [`create_exclusive`] failed.
#[derive(Debug)]
pub enum CreateError {
    /// Creating the file or setting its mode.
    Create(io::Error),
    /// Giving it the owner and group.
    Owner(io::Error),
}

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
