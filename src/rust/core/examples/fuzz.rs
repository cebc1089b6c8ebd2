//! Long-running fuzz driver for the protocol core (no R):
//!   tools/cargo.sh run --release -p mcplite-core --example fuzz -- [seconds] [seed]
//! Feeds random bytes and mutated valid messages of every protocol version
//! through the server and checks every answer; stops at the first violation
//! (exit 1) or after the time budget (exit 0), printing what it tried.

#[path = "../tests/support/fuzz.rs"]
mod fuzz_support;

use fuzz_support::{mutate, run_and_check, seeds, Rng};
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(60);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_1234_abcd_ef01);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let seeds = seeds();
    let mut rng = Rng(seed | 1);
    let (mut sessions, mut lines_tried) = (0u64, 0u64);
    while Instant::now() < deadline {
        let n = 1 + rng.below(10);
        let lines: Vec<Vec<u8>> = (0..n)
            .map(|_| match rng.below(5) {
                0 => (0..rng.below(300)).map(|_| (rng.next() & 0xff) as u8).filter(|b| *b != b'\n').collect(),
                1 => seeds[rng.below(seeds.len())].clone().into_bytes(),
                _ => {
                    let mut s = seeds[rng.below(seeds.len())].clone().into_bytes();
                    for _ in 0..1 + rng.below(3) {
                        s = mutate(&s, &mut rng);
                    }
                    s
                }
            })
            .collect();
        if let Err(e) = run_and_check(&lines) {
            println!("violation after {sessions} sessions (seed {seed}): {e}");
            std::process::exit(1);
        }
        sessions += 1;
        lines_tried += n as u64;
    }
    println!("fuzz: {sessions} sessions, {lines_tried} lines, 0 violations in {seconds} s (seed {seed})");
}
