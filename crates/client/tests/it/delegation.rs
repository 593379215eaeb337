//! AgentPolicy and SubRoleBindings reads against a stub node.

use lantau_client::ClientError;
use lantau_proto::chain::compliance::v1::SubRole;
use serde_json::{json, Value};

use crate::stub::{addr, Stub};

fn policy_answer(parent: &str, sub: &str, daily: &str) -> Value {
    json!({
        "policy": {
            "parent": parent, "sub_addr": sub,
            "daily_cap": {"denom": "hkd.demo", "amount": daily},
            "per_tx_cap": {"denom": "hkd.demo", "amount": "20000"},
            "revoked": false
        },
        "window": {
            "parent": parent, "sub_addr": sub,
            "spent_last_24h": {"denom": "hkd.demo", "amount": "30000"},
            "window_start": "2026-11-21T10:00:00Z"
        }
    })
}

fn binding(parent: &str, sub: &str, role: &str) -> Value {
    json!({"parent": parent, "sub_addr": sub, "role": role, "label": "desk", "revoked_at": "1970-01-01T00:00:00Z"})
}

#[tokio::test]
async fn an_agent_policy_is_read_with_its_stored_window() {
    let (p, s) = (addr(1), addr(2));
    let stub = Stub::fixed(200, policy_answer(&p.to_bech32(), &s.to_bech32(), "100000")).await;
    let (policy, window) = stub.client().agent_policy(&p, &s).await.unwrap().unwrap();
    assert_eq!(stub.seen(), vec![format!("/chain/compliance/v1/agent_policy/{}/{}", p.to_bech32(), s.to_bech32())]);
    assert_eq!((policy.daily_cap.amount.0, policy.per_tx_cap.amount.0, policy.revoked), (100_000, 20_000, false));
    assert_eq!((window.spent_last_24h.amount.0, window.window_start.seconds), (30_000, 1_795_255_200));
}

#[tokio::test]
async fn no_agent_policy_is_none() {
    let stub = Stub::fixed(404, json!({"code": 5, "message": "no agent policy", "details": []})).await;
    assert!(stub.client().agent_policy(&addr(1), &addr(2)).await.unwrap().is_none());
}

#[tokio::test]
async fn a_malformed_amount_in_a_policy_is_a_decode_error() {
    let (p, s) = (addr(1), addr(2));
    for bad in ["-5", "1e5", "", "100000.00", "340282366920938463463374607431768211456"] {
        let stub = Stub::fixed(200, policy_answer(&p.to_bech32(), &s.to_bech32(), bad)).await;
        let err = stub.client().agent_policy(&p, &s).await.unwrap_err();
        assert!(matches!(err, ClientError::Decode(_)), "{bad:?}: {err}");
    }
}

#[tokio::test]
async fn a_policy_about_another_agent_is_a_decode_error() {
    let stub = Stub::fixed(200, policy_answer(&addr(1).to_bech32(), &addr(3).to_bech32(), "100000")).await;
    let err = stub.client().agent_policy(&addr(1), &addr(2)).await.unwrap_err();
    assert!(matches!(&err, ClientError::Decode(m) if m.contains("not")), "{err}");
}

#[tokio::test]
async fn sub_roles_are_listed_with_an_optional_role_filter() {
    let p = addr(1).to_bech32();
    let body = json!({
        "bindings": [binding(&p, &addr(2).to_bech32(), "SUB_ROLE_AGENT"), binding(&p, &addr(3).to_bech32(), "SUB_ROLE_AGENT")],
        "pagination": {"next_key": null, "total": "2"}
    });
    let stub = Stub::fixed(200, body).await;
    let all = stub.client().sub_roles(&addr(1), Some("SUB_ROLE_AGENT")).await.unwrap();
    assert_eq!(all.iter().map(|b| (b.sub_addr, b.role)).collect::<Vec<_>>(), vec![(addr(2), SubRole::Agent), (addr(3), SubRole::Agent)]);
    let all = stub.client().sub_roles(&addr(1), None).await.unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(stub.seen(), vec![format!("/chain/compliance/v1/sub_roles/{p}?role=SUB_ROLE_AGENT"), format!("/chain/compliance/v1/sub_roles/{p}")]);
}

#[tokio::test]
async fn sub_roles_reject_answers_that_are_not_the_complete_asked_set() {
    let p = addr(1).to_bech32();
    let paginated = json!({"bindings": [], "pagination": {"next_key": "AAE=", "total": "9"}});
    let err = Stub::fixed(200, paginated).await.client().sub_roles(&addr(1), None).await.unwrap_err();
    assert!(matches!(&err, ClientError::Decode(m) if m.contains("paginated")), "{err}");
    let foreign = json!({"bindings": [binding(&addr(9).to_bech32(), &addr(2).to_bech32(), "SUB_ROLE_AGENT")]});
    let err = Stub::fixed(200, foreign).await.client().sub_roles(&addr(1), None).await.unwrap_err();
    assert!(matches!(&err, ClientError::Decode(m) if m.contains("bound under")), "{err}");
    let other_role = json!({"bindings": [binding(&p, &addr(2).to_bech32(), "SUB_ROLE_REVIEWER")]});
    let err = Stub::fixed(200, other_role).await.client().sub_roles(&addr(1), Some("SUB_ROLE_AGENT")).await.unwrap_err();
    assert!(matches!(&err, ClientError::Decode(m) if m.contains("asked for")), "{err}");
}
