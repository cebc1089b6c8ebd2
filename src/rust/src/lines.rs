//! Newline-delimited lines from a local connection of this user's own
//! processes (the workers' progress relay, both ends of the live-session
//! link): one reader, so every channel ends the same way on a line that is
//! too long or cut off.

use std::io::{BufRead, BufReader, Read};

/// Hands each line of `stream` (without its newline) to `each` until the
/// stream ends or fails, a line is longer than `max` bytes or cut off by the
/// end of the stream, or `each` returns false.
pub fn read_lines(stream: impl Read, max: u64, mut each: impl FnMut(&[u8]) -> bool) {
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader).take(max + 1).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        // Too long, or cut off by the end of the connection.
        if line.pop() != Some(b'\n') || !each(&line) {
            return;
        }
    }
}
