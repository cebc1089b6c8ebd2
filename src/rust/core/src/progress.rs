//! Progress notifications (`notifications/progress`, protocol README 7.4).
//!
//! A tool call whose request carried `_meta.progressToken` is *open* here
//! from the moment its tool starts until its answer is written (or it is
//! cancelled). The tool reports through a [`Reporter`]; a report never waits
//! for the client: it only records the latest value ([`Board::offer`]), and
//! the server's own progress thread ([`run_sender`]) writes it when the
//! call's rate window allows ([`MIN_INTERVAL`]). Values the client has not
//! taken yet (a full standard output) are coalesced: only the latest is kept.
//! The answer path takes a value still held back ([`Board::close`]) and
//! writes it just before the answer, under the same output lock, so nothing
//! for a call follows its answer.
//!
//! Lock order: the output, then the board. Reporters take only the board.

use crate::envelope::IdKey;
use crate::r::{describe, number1, string1, RType, RValue};
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// At most one notification per call in this interval (10 a second).
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// One progress report, already checked (finite, non-negative, `total` not
/// below `progress`).
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// `mcp_progress()`'s arguments as a [`Report`], or the argument at fault
/// and the message for the author (R raises it in the tool).
pub fn read_report<V: RValue>(progress: &V, total: &V, message: &V) -> Result<Report, (&'static str, String)> {
    // What the value is: the number itself when it is one (-1, Inf).
    let what = |v: &V| match number1(v) {
        Some(x) if x.is_infinite() => (if x > 0.0 { "Inf" } else { "-Inf" }).to_string(),
        Some(x) => x.to_string(),
        None => describe(v),
    };
    let number = |v: &V| number1(v).filter(|x| x.is_finite() && *x >= 0.0);
    let p = number(progress).ok_or_else(|| {
        ("progress", format!("`progress` must be a single non-negative finite number, not {}.", what(progress)))
    })?;
    let total = match total.rtype() {
        RType::Null => None,
        _ => Some(number(total).ok_or_else(|| {
            ("total", format!("`total` must be NULL or a single non-negative finite number, not {}.", what(total)))
        })?),
    };
    if let Some(t) = total.filter(|t| *t < p) {
        return Err(("total", format!("`total` ({t}) must not be smaller than `progress` ({p}).")));
    }
    let message = match message.rtype() {
        RType::Null => None,
        _ => Some(string1(message).ok_or_else(|| {
            ("message", format!("`message` must be NULL or a single string, not {}.", describe(message)))
        })?),
    };
    Ok(Report { progress: p, total, message })
}

/// Whether `progress` and `total` obey the rules [`read_report`] checks.
fn valid_numbers(progress: f64, total: Option<f64>) -> bool {
    let ok = |x: f64| x.is_finite() && x >= 0.0;
    ok(progress) && total.is_none_or(|t| ok(t) && t >= progress)
}

/// The line a worker sends the server for one report of the call the server
/// knows as `task` (the relay, see `?mcp_server`): JSON, never R
/// serialization, `{"task","progress","total","message"}` and a newline.
pub fn relay_line(task: u64, r: &Report) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + r.message.as_ref().map_or(0, String::len));
    out.extend_from_slice(b"{\"task\":");
    out.extend_from_slice(task.to_string().as_bytes());
    out.extend_from_slice(b",\"progress\":");
    write_number(&mut out, r.progress);
    if let Some(total) = r.total {
        out.extend_from_slice(b",\"total\":");
        write_number(&mut out, total);
    }
    if let Some(m) = &r.message {
        out.extend_from_slice(b",\"message\":");
        out.extend_from_slice(serde_json::Value::from(m.as_str()).to_string().as_bytes());
    }
    out.extend_from_slice(b"}\n");
    out
}

/// A relayed line (without its newline) read back with the core's JSON
/// reader: the task, and its report when the report obeys the rules of
/// [`read_report`] (`None` for one that does not: it is dropped, yet it
/// counts as received). `None` altogether for a line without a task.
pub fn read_relay_line(line: &[u8]) -> Option<(u64, Option<Report>)> {
    let doc = crate::json::Doc::parse(line.to_vec()).ok()?;
    let root = doc.root();
    let number = |key: &str| root.get(key).and_then(|v| v.number_text().and_then(|t| t.parse::<f64>().ok()));
    let task = root.get("task")?.number_text()?.parse::<u64>().ok()?;
    let report = (|| {
        let progress = number("progress")?;
        let total = match root.get("total") {
            None => None,
            Some(_) => Some(number("total")?),
        };
        let message = match root.get("message") {
            None => None,
            Some(m) => Some(m.as_str()?.to_string()),
        };
        valid_numbers(progress, total).then_some(Report { progress, total, message })
    })();
    Some((task, report))
}

/// What became of a report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Offer {
    /// Kept: sent now or when the call's window reopens (or replaced by a
    /// later value first).
    Accepted,
    /// Dropped: it does not exceed `last`, the latest value accepted.
    /// `first` is true the first time for this call (say so once).
    NotIncreasing { last: f64, first: bool },
    /// The call is not open (no token, answered, or cancelled): nothing to do.
    Inactive,
}

struct Call {
    /// The request's token, as the client wrote it (its JSON text).
    token: String,
    /// Whether the version carries `message` (not 2024-11-05).
    with_message: bool,
    last: Option<f64>,
    held: Option<Report>,
    sent_at: Option<Instant>,
    told_not_increasing: bool,
}

impl Call {
    fn line(&self, r: &Report) -> Vec<u8> {
        let mut out = Vec::with_capacity(96 + self.token.len());
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{");
        out.extend_from_slice(crate::wire::first::PROGRESS_TOKEN.as_bytes());
        out.extend_from_slice(self.token.as_bytes());
        out.extend_from_slice(b",\"progress\":");
        write_number(&mut out, r.progress);
        if let Some(total) = r.total {
            out.extend_from_slice(b",\"total\":");
            write_number(&mut out, total);
        }
        if let (true, Some(m)) = (self.with_message, &r.message) {
            out.extend_from_slice(b",\"message\":");
            out.extend_from_slice(serde_json::Value::from(m.as_str()).to_string().as_bytes());
        }
        out.extend_from_slice(b"}}");
        out
    }

    fn due(&self, now: Instant, interval: Duration) -> Result<(), Option<Instant>> {
        if self.held.is_none() {
            return Err(None);
        }
        match self.sent_at {
            Some(at) if now < at + interval => Err(Some(at + interval)),
            _ => Ok(()),
        }
    }
}

/// A finite number as JSON: integral values below 2^53 without a fraction.
fn write_number(out: &mut Vec<u8>, x: f64) {
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        out.extend_from_slice((x as i64).to_string().as_bytes());
    } else {
        out.extend_from_slice(serde_json::Value::from(x).to_string().as_bytes());
    }
}

/// The open calls and their rate windows: the pure state, with time passed
/// in, so its rules are tested without clocks.
pub struct Board {
    calls: HashMap<IdKey, Call>,
    interval: Duration,
    stopping: bool,
}

impl Board {
    pub fn new(interval: Duration) -> Board {
        Board { calls: HashMap::new(), interval, stopping: false }
    }

    /// Open a call (its tool is about to run) with the request's token.
    pub fn open(&mut self, key: IdKey, token: String, with_message: bool) {
        let call = Call { token, with_message, last: None, held: None, sent_at: None, told_not_increasing: false };
        self.calls.insert(key, call);
    }

    /// Record a report for a call; see [`Offer`]. Returns also whether the
    /// call held nothing before (the sender may be waiting without a deadline).
    pub fn offer(&mut self, key: &IdKey, report: Report) -> (Offer, bool) {
        let Some(call) = self.calls.get_mut(key) else { return (Offer::Inactive, false) };
        if let Some(last) = call.last.filter(|last| report.progress <= *last) {
            let first = !std::mem::replace(&mut call.told_not_increasing, true);
            return (Offer::NotIncreasing { last, first }, false);
        }
        call.last = Some(report.progress);
        let was_empty = call.held.replace(report).is_none();
        (Offer::Accepted, was_empty)
    }

    /// Whether some call may send now; else the earliest time one may
    /// (`None`: nothing is held).
    pub fn next_due(&self, now: Instant) -> Result<(), Option<Instant>> {
        let mut next: Option<Instant> = None;
        for call in self.calls.values() {
            match call.due(now, self.interval) {
                Ok(()) => return Ok(()),
                Err(Some(at)) => next = Some(next.map_or(at, |n| n.min(at))),
                Err(None) => {}
            }
        }
        Err(next)
    }

    /// The notification lines due now, each call's window restarted.
    pub fn take_due(&mut self, now: Instant) -> Vec<Vec<u8>> {
        let interval = self.interval;
        let mut lines = Vec::new();
        for call in self.calls.values_mut() {
            if call.due(now, interval).is_ok() {
                if let Some(r) = call.held.take() {
                    lines.push(call.line(&r));
                    call.sent_at = Some(now);
                }
            }
        }
        lines
    }

    /// The call is answered: it closes, and a value still held back is
    /// returned to be written just before the answer.
    pub fn close(&mut self, key: &IdKey) -> Option<Vec<u8>> {
        let call = self.calls.remove(key)?;
        call.held.as_ref().map(|r| call.line(r))
    }

    /// The call was cancelled: it closes and nothing more is sent for it.
    pub fn drop_call(&mut self, key: &IdKey) {
        self.calls.remove(key);
    }

    /// Close every call (the process is ending).
    pub fn close_all(&mut self) {
        self.calls.clear();
    }

    pub fn is_open(&self, key: &IdKey) -> bool {
        self.calls.contains_key(key)
    }
}

struct Shared {
    board: Mutex<Board>,
    wake: Condvar,
}

/// The board shared by reporters (the tool's thread), the service layer and
/// the progress thread.
#[derive(Clone)]
pub struct Progress(Arc<Shared>);

impl Default for Progress {
    fn default() -> Self {
        Progress::new(MIN_INTERVAL)
    }
}

impl Progress {
    pub fn new(interval: Duration) -> Progress {
        Progress(Arc::new(Shared { board: Mutex::new(Board::new(interval)), wake: Condvar::new() }))
    }

    pub fn board(&self) -> MutexGuard<'_, Board> {
        // A poisoned board is still a board.
        self.0.board.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Open a call and hand out its reporter.
    pub fn open(&self, key: IdKey, token: String, with_message: bool) -> Reporter {
        self.board().open(key.clone(), token, with_message);
        Reporter { progress: self.clone(), key }
    }

    /// Ends the progress thread (after it has written what it was writing).
    pub fn stop(&self) {
        self.board().stopping = true;
        self.0.wake.notify_all();
    }
}

/// What a running tool reports through: never waits for the client.
#[derive(Clone)]
pub struct Reporter {
    progress: Progress,
    key: IdKey,
}

impl Reporter {
    pub fn report(&self, report: Report) -> Offer {
        let (offer, was_empty) = self.progress.board().offer(&self.key, report);
        if was_empty {
            self.progress.0.wake.notify_all();
        }
        offer
    }

    pub fn key(&self) -> &IdKey {
        &self.key
    }

    /// Close every call: the process is ending, its last lines are answers.
    pub fn close_all(&self) {
        self.progress.board().close_all();
    }
}

/// The protocol output as the answer path and the progress thread share it:
/// once a write fails, nothing more is written.
pub struct Output<W> {
    pub writer: W,
    pub closed: bool,
}

impl<W: Write> Output<W> {
    /// Write lines that end with their newlines, in one write; false once
    /// the output is closed.
    pub fn write_lines(&mut self, lines: &[u8]) -> bool {
        if self.closed {
            return false;
        }
        if self.writer.write_all(lines).and_then(|_| self.writer.flush()).is_err() {
            self.closed = true;
        }
        !self.closed
    }

    /// Write one line (a newline is added); false once the output is closed.
    pub fn write_line(&mut self, line: &mut Vec<u8>) -> bool {
        if self.closed {
            return false;
        }
        line.push(b'\n');
        if self.writer.write_all(line).and_then(|_| self.writer.flush()).is_err() {
            self.closed = true;
        }
        line.pop();
        !self.closed
    }
}

pub fn lock_output<W>(out: &Mutex<Output<W>>) -> MutexGuard<'_, Output<W>> {
    out.lock().unwrap_or_else(|e| e.into_inner())
}

/// The progress thread: writes each held value when its call's window
/// reopens, until [`Progress::stop`]. Waits on the board, then takes the
/// output and the board again (lock order) to take what is due: a call
/// answered meanwhile has closed and sends nothing.
pub fn run_sender<W: Write>(progress: &Progress, out: &Mutex<Output<W>>) {
    loop {
        {
            let mut board = progress.board();
            loop {
                if board.stopping {
                    return;
                }
                let now = Instant::now();
                match board.next_due(now) {
                    Ok(()) => break,
                    Err(Some(at)) => {
                        board = progress.0.wake.wait_timeout(board, at - now).unwrap_or_else(|e| e.into_inner()).0;
                    }
                    Err(None) => board = progress.0.wake.wait(board).unwrap_or_else(|e| e.into_inner()),
                }
            }
        }
        let mut out = lock_output(out);
        let lines = progress.board().take_due(Instant::now());
        for mut line in lines {
            if !out.write_line(&mut line) {
                // Nothing can be written any more: drop what is held.
                progress.board().close_all();
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::IdKey;
    use std::sync::mpsc;

    fn key(n: i64) -> IdKey {
        let doc = crate::json::Doc::parse(n.to_string().into_bytes()).unwrap();
        IdKey::of(doc.root()).unwrap()
    }

    fn rep(p: f64) -> Report {
        Report { progress: p, total: None, message: None }
    }

    #[test]
    fn the_first_value_goes_at_once_then_one_per_window_keeping_the_latest() {
        let t0 = Instant::now();
        let mut b = Board::new(MIN_INTERVAL);
        b.open(key(1), "\"tok\"".into(), true);
        assert_eq!(b.offer(&key(1), rep(1.0)).0, Offer::Accepted);
        assert_eq!(b.next_due(t0), Ok(()));
        let lines = b.take_due(t0);
        assert_eq!(
            String::from_utf8(lines[0].clone()).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1}}"#
        );
        // Within the window: held, coalesced to the latest.
        for p in 2..1000 {
            assert_eq!(b.offer(&key(1), rep(p as f64)).0, Offer::Accepted);
        }
        let mid = t0 + MIN_INTERVAL / 2;
        assert_eq!(b.next_due(mid), Err(Some(t0 + MIN_INTERVAL)));
        assert!(b.take_due(mid).is_empty());
        let reopen = t0 + MIN_INTERVAL;
        let lines = b.take_due(reopen);
        assert_eq!(lines.len(), 1);
        assert!(String::from_utf8(lines[0].clone()).unwrap().contains("\"progress\":999}"));
        // Nothing held: nothing due, no deadline.
        assert_eq!(b.next_due(reopen + MIN_INTERVAL * 5), Err(None));
    }

    #[test]
    fn values_that_do_not_increase_are_dropped_and_said_once() {
        let mut b = Board::new(MIN_INTERVAL);
        b.open(key(1), "7".into(), true);
        b.offer(&key(1), rep(5.0));
        assert_eq!(b.offer(&key(1), rep(5.0)).0, Offer::NotIncreasing { last: 5.0, first: true });
        assert_eq!(b.offer(&key(1), rep(4.0)).0, Offer::NotIncreasing { last: 5.0, first: false });
        assert_eq!(b.offer(&key(1), rep(5.5)).0, Offer::Accepted);
    }

    #[test]
    fn close_returns_the_held_value_and_nothing_follows() {
        let t0 = Instant::now();
        let mut b = Board::new(MIN_INTERVAL);
        b.open(key(1), "1".into(), false);
        b.offer(&key(1), Report { progress: 1.0, total: Some(10.0), message: Some("a".into()) });
        b.take_due(t0);
        b.offer(&key(1), Report { progress: 2.5, total: Some(10.0), message: Some("b\"".into()) });
        let held = b.close(&key(1)).unwrap();
        // 2024-11-05 has no message.
        assert_eq!(
            String::from_utf8(held).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2.5,"total":10}}"#
        );
        assert_eq!(b.offer(&key(1), rep(3.0)).0, Offer::Inactive);
        assert!(b.take_due(t0 + MIN_INTERVAL * 3).is_empty());
        // A cancelled call sends nothing, not even what it held.
        b.open(key(2), "2".into(), true);
        b.offer(&key(2), rep(1.0));
        b.drop_call(&key(2));
        assert!(b.take_due(t0).is_empty());
        assert!(b.close(&key(2)).is_none());
    }

    #[test]
    fn messages_are_escaped_and_kept_where_the_version_has_them() {
        let mut b = Board::new(MIN_INTERVAL);
        b.open(key(1), "\"t\\u00e9\"".into(), true);
        b.offer(&key(1), Report { progress: 0.1, total: None, message: Some("é \"q\"\n".into()) });
        let line = String::from_utf8(b.close(&key(1)).unwrap()).unwrap();
        assert_eq!(
            line,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t\u00e9","progress":0.1,"message":"é \"q\"\n"}}"#
        );
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["params"]["message"], "é \"q\"\n");
    }

    #[test]
    fn relayed_lines_read_back_as_the_reports_they_were() {
        let reports = [
            Report { progress: 0.0, total: None, message: None },
            Report { progress: 2.5, total: Some(10.0), message: Some("é \"q\"\n\u{1}".into()) },
            Report { progress: 1e300, total: Some(1e300), message: Some(String::new()) },
            Report { progress: 9_007_199_254_740_993.0, total: None, message: Some("x".repeat(70_000)) },
        ];
        for (i, r) in reports.iter().enumerate() {
            let line = relay_line(i as u64 + 1, r);
            assert_eq!(line.last(), Some(&b'\n'));
            assert_eq!(line.iter().filter(|&&c| c == b'\n').count(), 1);
            let back = read_relay_line(&line[..line.len() - 1]).unwrap();
            assert_eq!(back, (i as u64 + 1, Some(r.clone())));
        }
    }

    #[test]
    fn relayed_lines_that_break_the_rules_count_but_carry_nothing() {
        for bad in [
            r#"{"task":3,"progress":-1}"#,
            r#"{"task":3,"progress":"1"}"#,
            r#"{"task":3}"#,
            r#"{"task":3,"progress":2,"total":1}"#,
            r#"{"task":3,"progress":1,"total":null}"#,
            r#"{"task":3,"progress":1,"message":7}"#,
            r#"{"task":3,"progress":1e999}"#,
        ] {
            assert_eq!(read_relay_line(bad.as_bytes()), Some((3, None)), "{bad}");
        }
        for junk in [r#"{"progress":1}"#, r#"{"task":-1,"progress":1}"#, r#"{"task":1.5}"#, "[]", "", "{", "\u{0}"] {
            assert_eq!(read_relay_line(junk.as_bytes()), None, "{junk}");
        }
    }

    /// A writer whose first write waits until the test lets it go, and which
    /// hands every line to the test.
    struct Gate {
        first: Option<mpsc::Receiver<()>>,
        entered: mpsc::Sender<()>,
        lines: mpsc::Sender<String>,
        buf: Vec<u8>,
    }

    impl Write for Gate {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if let Some(release) = self.first.take() {
                let _ = self.entered.send(());
                let _ = release.recv();
            }
            self.buf.extend_from_slice(b);
            while let Some(pos) = self.buf.iter().position(|&c| c == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                let _ = self.lines.send(String::from_utf8_lossy(&line[..line.len() - 1]).into_owned());
            }
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_client_that_does_not_read_gets_the_latest_value_and_reports_never_wait() {
        // No rate window: what is tested is the coalescing while a write waits.
        let progress = Progress::new(Duration::ZERO);
        let (release_tx, release_rx) = mpsc::channel();
        let (entered_tx, entered_rx) = mpsc::channel();
        let (lines_tx, lines_rx) = mpsc::channel();
        let out = Mutex::new(Output {
            writer: Gate { first: Some(release_rx), entered: entered_tx, lines: lines_tx, buf: Vec::new() },
            closed: false,
        });
        let reporter = progress.open(key(1), "\"k\"".into(), true);
        std::thread::scope(|s| {
            s.spawn(|| run_sender(&progress, &out));
            reporter.report(rep(1.0));
            // The sender is now blocked writing 1 (the client does not read).
            entered_rx.recv().unwrap();
            for p in 2..=100_000 {
                assert_eq!(reporter.report(rep(p as f64)), Offer::Accepted);
            }
            release_tx.send(()).unwrap();
            assert!(lines_rx.recv().unwrap().contains("\"progress\":1}"));
            // Everything reported while the write waited became one line: the latest.
            assert!(lines_rx.recv().unwrap().contains("\"progress\":100000}"));
            // The answer path: the output lock, then close; nothing follows.
            {
                let _out = lock_output(&out);
                assert!(progress.board().close(reporter.key()).is_none());
            }
            assert_eq!(reporter.report(rep(200_000.0)), Offer::Inactive);
            progress.stop();
        });
        assert!(lines_rx.try_recv().is_err());
    }

    #[test]
    fn a_value_held_back_is_sent_by_the_sender_when_the_window_reopens() {
        let progress = Progress::new(MIN_INTERVAL);
        let (lines_tx, lines_rx) = mpsc::channel();
        let (entered_tx, _entered_rx) = mpsc::channel();
        let out = Mutex::new(Output {
            writer: Gate { first: None, entered: entered_tx, lines: lines_tx, buf: Vec::new() },
            closed: false,
        });
        let reporter = progress.open(key(1), "3".into(), true);
        std::thread::scope(|s| {
            s.spawn(|| run_sender(&progress, &out));
            reporter.report(rep(1.0));
            assert!(lines_rx.recv().unwrap().contains("\"progress\":1}"));
            // Held by the window; nobody reports again, yet it arrives.
            reporter.report(rep(2.0));
            assert!(lines_rx.recv().unwrap().contains("\"progress\":2}"));
            progress.stop();
        });
    }
}
