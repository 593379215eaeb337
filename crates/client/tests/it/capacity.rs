//! Rule 9: the remaining capacity of an agent, from the stored window.

use lantau_client::compliance::AGENT_WINDOW_SECS;
use lantau_client::{remaining_capacity, AgentPolicy, AgentWindow, Capacity};
use lantau_primitives::Coin;
use lantau_proto::Timestamp;

use crate::stub::addr;

/// 2026-11-21T10:00:00Z.
const START: i64 = 1_795_255_200;

fn policy(daily: u128, per_tx: u128, revoked: bool) -> AgentPolicy {
    AgentPolicy { parent: addr(1), sub_addr: addr(2), daily_cap: Coin::new("hkd.demo", daily), per_tx_cap: Coin::new("hkd.demo", per_tx), revoked }
}

fn window(spent: u128, start: i64) -> AgentWindow {
    AgentWindow { parent: addr(1), sub_addr: addr(2), spent_last_24h: Coin::new("hkd.demo", spent), window_start: Timestamp { seconds: start, nanos: 0 } }
}

#[test]
fn an_agent_that_never_spent_has_the_full_envelope() {
    let c = remaining_capacity(&policy(100_000, 20_000, false), &window(0, 0), START);
    let expected =
        Capacity { denom: "hkd.demo".into(), daily_remaining: 100_000, per_tx_max: 20_000, window_reset: true, window_ends_at: None, revoked: false };
    assert_eq!(c, expected);
    // A zero window_start means never spent, however early `now` is.
    assert!(remaining_capacity(&policy(100_000, 20_000, false), &window(0, 0), 10).window_reset);
}

#[test]
fn a_partial_spend_in_a_live_window_reduces_the_daily_remainder() {
    let c = remaining_capacity(&policy(100_000, 20_000, false), &window(30_000, START), START + 3_600);
    assert_eq!((c.daily_remaining, c.per_tx_max, c.window_reset, c.window_ends_at), (70_000, 20_000, false, Some(START + AGENT_WINDOW_SECS)));
    // Near the cap, the per-transaction maximum is what is left of the day.
    let c = remaining_capacity(&policy(100_000, 20_000, false), &window(95_000, START), START + 3_600);
    assert_eq!((c.daily_remaining, c.per_tx_max), (5_000, 5_000));
}

#[test]
fn the_window_elapses_at_exactly_86400_seconds() {
    let p = policy(100_000, 20_000, false);
    let live = remaining_capacity(&p, &window(95_000, START), START + AGENT_WINDOW_SECS - 1);
    assert_eq!((live.daily_remaining, live.window_reset), (5_000, false));
    let elapsed = remaining_capacity(&p, &window(95_000, START), START + AGENT_WINDOW_SECS);
    assert_eq!((elapsed.daily_remaining, elapsed.per_tx_max, elapsed.window_reset, elapsed.window_ends_at), (100_000, 20_000, true, None));
}

#[test]
fn a_revoked_policy_has_no_capacity() {
    let c = remaining_capacity(&policy(100_000, 20_000, true), &window(0, 0), START);
    assert_eq!((c.daily_remaining, c.per_tx_max, c.revoked), (0, 0, true));
}

#[test]
fn arithmetic_saturates_instead_of_panicking() {
    // Spent above the cap (the cap was lowered after spending): nothing left, no underflow.
    let c = remaining_capacity(&policy(10_000, 5_000, false), &window(30_000, START), START + 1);
    assert_eq!((c.daily_remaining, c.per_tx_max), (0, 0));
    // Extreme values and clock skew (now before window_start, or far from it).
    let c = remaining_capacity(&policy(u128::MAX, u128::MAX, false), &window(u128::MAX, i64::MAX), i64::MIN);
    assert_eq!((c.daily_remaining, c.window_reset, c.window_ends_at), (0, false, Some(i64::MAX)));
    let c = remaining_capacity(&policy(u128::MAX, 1, false), &window(5, i64::MIN), i64::MAX);
    assert_eq!((c.daily_remaining, c.per_tx_max, c.window_reset), (u128::MAX, 1, true));
}

#[test]
fn the_node_shape_decodes_into_policy_and_window() {
    let policy: AgentPolicy = serde_json::from_value(serde_json::json!({
        "parent": addr(1).to_bech32(), "sub_addr": addr(2).to_bech32(),
        "daily_cap": {"denom": "hkd.demo", "amount": "100000"}, "per_tx_cap": {"denom": "hkd.demo", "amount": "20000"}, "revoked": false
    }))
    .unwrap();
    let window: AgentWindow = serde_json::from_value(serde_json::json!({
        "parent": addr(1).to_bech32(), "sub_addr": addr(2).to_bech32(),
        "spent_last_24h": {"denom": "hkd.demo", "amount": "0"}, "window_start": "1970-01-01T00:00:00Z"
    }))
    .unwrap();
    let c = remaining_capacity(&policy, &window, START);
    assert_eq!((c.daily_remaining, c.per_tx_max, c.window_reset), (100_000, 20_000, true));
}
