//! A directory only this user can enter, for the local sockets and temporary
//! files of processes the server starts (its workers): the file system keeps
//! every other local user out of what is inside, so a socket there accepts
//! only this user's processes. On Windows the directory has the default
//! permissions of its parent (a user's temporary folder), and local sockets
//! there are named pipes or loopback TCP, which the directory cannot guard
//! (see `?mcp_server`). Live sessions' registrations and links are here too
//! (`session_dir`, `SessionListener`; Windows: named pipes of this user).

use super::imp;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest name a caller puts inside the directory (a socket's file
/// name): the directory is chosen so that its path with such a name fits in
/// a Unix socket address (`sun_path`: 104 bytes on macOS, 108 on Linux).
pub const NAME_ROOM: usize = 16;
/// The longest Unix socket path (`sun_path` holds 104 bytes on macOS, with
/// its terminating NUL).
pub const SOCKET_PATH_MAX: usize = 103;

/// 32 hex digits no other process can guess: std's per-process random hash
/// keys (no RNG crate, and R's RNG is the user's).
pub fn random_token() -> String {
    let mut out = String::new();
    for i in 0..2u8 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u8(i);
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out
}

/// A fresh directory that only this user can enter (mode 0700 on unix),
/// created under the temporary directory (`TMPDIR`), or under /tmp when that
/// path is too long for sockets inside it. Removed with everything in it
/// when dropped, unless [`PrivateDir::keep`] hands it over.
pub struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    /// Create `<temp>/<prefix><16 hex digits>`. Fails rather than use a
    /// directory that already exists, is a link, or is not this user's.
    pub fn create(prefix: &str) -> io::Result<PrivateDir> {
        let mut last = io::Error::new(io::ErrorKind::Other, "no temporary directory is short enough for local sockets");
        for base in imp::temp_bases() {
            for _ in 0..8 {
                let name = format!("{prefix}{}", &random_token()[..16]);
                let path = base.join(name);
                if path.as_os_str().len() + 1 + NAME_ROOM > SOCKET_PATH_MAX {
                    break;
                }
                match imp::create_private_dir(&path) {
                    Ok(()) => return Ok(PrivateDir { path }),
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
                    Err(e) => {
                        last = e;
                        break;
                    }
                }
            }
        }
        Err(last)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path, no longer removed when this is dropped: the caller removes it.
    pub fn keep(self) -> PathBuf {
        let path = self.path.clone();
        std::mem::forget(self);
        path
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        // remove_dir_all does not follow symbolic links inside.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The directory where this user's live R sessions register
/// (`mcp_session()`): `MCPLITE_SESSION_DIR` if set, else unix
/// `/tmp/mcplite-<uid>`, Windows `%LOCALAPPDATA%\mcplite\sessions`; made
/// private if missing (unix: mode 0700), refused if it is a link (Windows:
/// any reparse point), or (unix) another user's or open to others.
pub fn session_dir() -> io::Result<PathBuf> {
    let dir = match std::env::var_os("MCPLITE_SESSION_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => imp::session_base()?,
    };
    match imp::create_private_dir(&dir) {
        Ok(()) => Ok(dir),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => imp::check_private_dir(&dir).map(|_| dir),
        Err(e) => Err(e),
    }
}

/// Where a session of process `pid` listens: unix, the socket `<pid>.sock`
/// in the session directory `dir`; Windows, a named pipe
/// `\\.\pipe\mcplite-<user>-<random>` (pipes have a namespace of their
/// own; a random name cannot be taken before the session creates it).
pub fn session_socket(dir: &Path, pid: u32) -> PathBuf {
    imp::session_socket(dir, pid)
}

/// The listening address of a registration found in `dir`, of process
/// `pid`, that says `registered`: unix, `<dir>/<pid>.sock` whatever the
/// file says; Windows, the pipe name it holds if it is one of ours.
pub fn registered_socket(dir: &Path, pid: u32, registered: &str) -> Option<PathBuf> {
    imp::registered_socket(dir, pid, registered)
}

/// Replace `path` (in a private directory) with `bytes`, atomically: a new
/// file of mode 0600 never opened through a link, renamed over it.
pub fn write_private_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".{}.tmp", &random_token()[..12]));
    imp::write_private_file(path, Path::new(&temp), bytes)
}

/// At most `max` bytes of `path`: refused if it is a link, not a regular
/// file, another user's, or open to others.
pub fn read_private_file(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    imp::read_private_file(path, max)
}

/// Connect to a [`SessionListener`] at `path` and send `token`.
pub fn connect_at(path: &Path, token: &[u8]) -> io::Result<SessionStream> {
    use std::io::Write;
    let mut stream = imp::connect_at(path)?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(token)?;
    stream.set_write_timeout(None)?;
    Ok(stream)
}

/// The listening side of a live session's link (see [`session_socket`]):
/// unix, a Unix socket of mode 0600 in the private session directory;
/// Windows, a named pipe whose first instance this process created and
/// whose access list lets only this user connect (or create instances),
/// remote clients refused.
pub struct SessionListener {
    listener: imp::SessionListener,
}

/// One end of a live session's link: unix a `UnixStream`; Windows a named
/// pipe with the same methods (read and write through `&`, `try_clone`,
/// timeouts, `shutdown`).
pub type SessionStream = imp::SessionStream;

impl SessionListener {
    /// Listen at `path`, made by [`session_socket`].
    pub fn bind_at(path: &Path) -> io::Result<SessionListener> {
        Ok(SessionListener { listener: imp::listen_at(path)? })
    }

    /// Wait for the next connection and hand it over unchecked: the caller
    /// checks its token with [`has_token`] on its own thread.
    pub fn accept_next(&self) -> io::Result<SessionStream> {
        imp::session_accept(&self.listener)
    }
}

/// What [`has_token`] needs of a connection (each OS implements it for its
/// local and session streams).
pub trait TokenRead {
    /// Blocking, with reads that give up after `wait` (`None`: never).
    fn wait_reads(&self, wait: Option<Duration>) -> io::Result<()>;
    fn read_some(&self, buf: &mut [u8]) -> io::Result<usize>;
}

/// A listener for local connections from this user's processes: unix, a
/// Unix socket `name` inside a [`PrivateDir`]; Windows, loopback TCP (std
/// has no named pipes), which every local user can reach.
pub struct LocalListener {
    listener: imp::LocalListener,
    url: String,
}

/// One accepted connection of a [`LocalListener`].
pub type LocalStream = imp::LocalStream;

impl LocalListener {
    /// `name` is at most [`NAME_ROOM`] bytes.
    pub fn bind(dir: &PrivateDir, name: &str) -> io::Result<LocalListener> {
        let (listener, url) = imp::local_listen(dir.path(), name)?;
        listener.set_nonblocking(true)?;
        Ok(LocalListener { listener, url })
    }

    /// The address, as nanonext's `stream(dial = )` takes it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The first connection before `deadline` that sends `token` within
    /// `per_connection` of being accepted (one that stays silent is dropped
    /// then, so it cannot hold the wait up), set non-blocking.
    pub fn accept_token(&self, token: &[u8], deadline: Instant, per_connection: Duration) -> io::Result<LocalStream> {
        while Instant::now() < deadline {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    let until = deadline.min(Instant::now() + per_connection);
                    if read_exactly(&stream, token.len(), until).as_deref() == Some(token) {
                        stream.set_nonblocking(true)?;
                        return Ok(stream);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(1)),
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(io::ErrorKind::TimedOut, "the connection did not arrive"))
    }
}

impl LocalListener {
    /// Wait for the next connection (the listener blocks from now on), and
    /// hand it over unchecked: the caller checks its token with
    /// [`has_token`] on its own thread.
    pub fn accept_next(&self) -> io::Result<LocalStream> {
        self.listener.set_nonblocking(false)?;
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => return Ok(stream),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Whether a connection sends `token` first, within `within`; it is left
/// blocking, without a read timeout.
pub fn has_token<S: TokenRead>(stream: &S, token: &[u8], within: Duration) -> bool {
    read_exactly(stream, token.len(), Instant::now() + within).as_deref() == Some(token)
}

/// Connect to a [`LocalListener`] by its [`LocalListener::url`] (from a
/// worker) and send `token`; the stream is blocking.
pub fn local_connect(url: &str, token: &[u8]) -> io::Result<LocalStream> {
    use std::io::Write;
    let mut stream = imp::local_connect(url)?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(token)?;
    stream.set_write_timeout(None)?;
    Ok(stream)
}

/// The first `n` bytes a connection sends, read before `deadline`.
fn read_exactly<S: TokenRead>(stream: &S, n: usize, deadline: Instant) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; n];
    let mut got = 0;
    while got < n {
        let left = deadline.checked_duration_since(Instant::now())?;
        stream.wait_reads(Some(left.max(Duration::from_millis(1)))).ok()?;
        match stream.read_some(&mut buf[got..]) {
            Ok(0) => return None,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    stream.wait_reads(None).ok()?;
    Some(buf)
}
