//! Property tests: whatever the input, the core never panics and every output
//! is one valid JSON-RPC line of the right shape for its version.

#[path = "support/fuzz.rs"]
mod fuzz_support;

use fuzz_support::{mutate, run_and_check, seeds, Rng};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_break_the_server(lines in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 1..8)) {
        let lines: Vec<Vec<u8>> = lines.into_iter().map(|mut l| { l.retain(|b| *b != b'\n'); l }).collect();
        prop_assert_eq!(run_and_check(&lines), Ok(()));
    }

    #[test]
    fn mutated_valid_messages(seed in any::<u64>(), picks in prop::collection::vec(any::<prop::sample::Index>(), 1..12)) {
        let seeds = seeds();
        let mut rng = Rng(seed | 1);
        let lines: Vec<Vec<u8>> = picks
            .iter()
            .map(|ix| {
                let s = ix.get(&seeds).as_bytes();
                if rng.below(3) == 0 { s.to_vec() } else { mutate(s, &mut rng) }
            })
            .collect();
        prop_assert_eq!(run_and_check(&lines), Ok(()));
    }

    #[test]
    fn arbitrary_json_values(value in arb_json()) {
        let line = serde_json::to_vec(&value).unwrap_or_default();
        prop_assert_eq!(run_and_check(&[line]), Ok(()));
    }
}

fn arb_json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,20}".prop_map(Value::String),
        prop_oneof![Just("2.0"), Just("tools/call"), Just("initialize"), Just("2026-07-28"), Just("ping")]
            .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("jsonrpc"),
                        Just("id"),
                        Just("method"),
                        Just("params"),
                        Just("_meta"),
                        Just("name"),
                        Just("arguments"),
                        Just("protocolVersion"),
                        Just("io.modelcontextprotocol/protocolVersion"),
                        Just("io.modelcontextprotocol/clientCapabilities")
                    ]
                    .prop_map(String::from),
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

#[test]
fn every_seed_is_answered_correctly() {
    let lines: Vec<Vec<u8>> = seeds().into_iter().map(String::into_bytes).collect();
    assert_eq!(run_and_check(&lines), Ok(()));
}

#[test]
fn fifty_megabyte_message() {
    let big = "x".repeat(50 << 20);
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"text","arguments":{{"b":"{big}"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    );
    assert_eq!(run_and_check(&[line.into_bytes()]), Ok(()));
}
