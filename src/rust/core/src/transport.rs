//! stdio transport: newline-delimited messages in, one line per response out.

use std::io::{self, BufRead, Write};

/// Lines longer than this keep their buffer only until the next read.
const KEEP_BUFFER_BYTES: usize = 1 << 20;

/// Reads newline-delimited messages of any length; the final line may lack
/// its newline (input that ends mid-line is still handled).
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R) -> Self {
        LineReader { inner, buf: Vec::with_capacity(4096) }
    }

    /// The next line without its `\n`, or `None` at end of input.
    pub fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        if self.buf.capacity() > KEEP_BUFFER_BYTES {
            self.buf = Vec::with_capacity(4096);
        }
        self.buf.clear();
        loop {
            match self.inner.read_until(b'\n', &mut self.buf) {
                Ok(0) if self.buf.is_empty() => return Ok(None),
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        let line = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
        Ok(Some(line))
    }
}

/// Writes one response line with a single `write_all`, then flushes.
pub fn write_line<W: Write>(out: &mut W, line: &str) -> io::Result<()> {
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    out.write_all(&bytes)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lines_of_any_length_and_a_final_partial_line() {
        let long = "x".repeat(3 << 20);
        let input = format!("a\r\n\n{long}\nend");
        let mut r = LineReader::new(io::Cursor::new(input.into_bytes()));
        assert_eq!(r.next_line().unwrap().unwrap(), b"a\r");
        assert_eq!(r.next_line().unwrap().unwrap(), b"");
        assert_eq!(r.next_line().unwrap().unwrap().len(), 3 << 20);
        assert_eq!(r.next_line().unwrap().unwrap(), b"end");
        assert!(r.next_line().unwrap().is_none());
    }
}
