//! Protocol core of mcplite: everything that does not need R.
//!
//! The R side is reached only through [`dispatch::ToolHost`], so every rule here
//! is testable with plain `cargo test`.

pub mod dispatch;
pub mod envelope;
pub mod projection;
pub mod result;
pub mod telemetry;
pub mod transport;
pub mod version;

pub use dispatch::{Handled, Observer, Server, ServerInfo, ToolHost};

use std::io::{self, BufRead, Write};

/// Serve until end of input: every line is handled in order and its response
/// written before the next line is read. `observer` brackets every valid
/// message (telemetry). A write failure (the client closed our stdout) ends
/// the loop quietly: nobody is left to answer.
pub fn serve<R: BufRead, W: Write>(
    input: R,
    output: &mut W,
    server: &mut Server,
    host: &mut dyn ToolHost,
    observer: &mut dyn Observer,
) -> io::Result<()> {
    let mut reader = transport::LineReader::new(input);
    while let Some(line) = reader.next_line()? {
        let handled = server.handle_line(line, host, observer);
        if let Some(response) = &handled.line {
            if transport::write_line(output, response).is_err() {
                break;
            }
        }
    }
    Ok(())
}
