//! Progress reports offered to a call's reporter, wherever the call runs (in
//! this process, relayed from a worker, forwarded from a live session): the
//! one place that tells the author about values that do not increase.

use mcplite_core::progress::{Offer, Report, Reporter};
use mcplite_core::telemetry::diag;

/// Offer a report of `tool`'s call, telling the author once per call about
/// values that do not increase.
pub fn offer_progress(reporter: &Reporter, tool: &str, report: Report) {
    if let Some(said) = offer(reporter, tool, report) {
        diag(&said);
    }
}

/// [`offer_progress`], giving back what to tell the author (for a caller
/// that holds a lock it must release first).
pub fn offer(reporter: &Reporter, tool: &str, report: Report) -> Option<String> {
    let progress = report.progress;
    match reporter.report(report) {
        Offer::NotIncreasing { last, first: true } => Some(format!(
            "mcplite: tool {tool}: mcp_progress({progress}) does not exceed the previous value ({last}); progress must increase, so it was dropped (said once per call)."
        )),
        _ => None,
    }
}
