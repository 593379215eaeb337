//! SubRoleParent, rule 7: only the handler's exact NotFound answer proves a primary key, and
//! everything else is unknown.

use lantau_client::ParentAnswer;
use lantau_proto::chain::compliance::v1::SubRole;
use serde_json::{json, Value};

use crate::stub::{addr, Canned, Stub};

fn path_of(a: &str) -> String {
    format!("/chain/compliance/v1/sub_role_parent/{a}")
}

fn not_found_for(a: &str) -> Value {
    json!({"code": 5, "message": format!("no sub-role binding for {a}"), "details": []})
}

fn bound(parent: &str, sub: &str, revoked_at: &str) -> Value {
    json!({
        "parent": parent,
        "binding": {"parent": parent, "sub_addr": sub, "role": "SUB_ROLE_AGENT", "label": "till 3", "revoked_at": revoked_at}
    })
}

async fn ask_fixed(status: u16, body: Value, a: &str) -> ParentAnswer {
    let stub = Stub::fixed(status, body).await;
    let answer = stub.client().sub_role_parent(a).await;
    assert_eq!(stub.seen(), vec![path_of(a)]);
    answer
}

fn assert_unknown(answer: &ParentAnswer, why_contains: &str) {
    let why = answer.unknown_reason().unwrap_or_else(|| panic!("expected Unknown, got {answer:?}"));
    assert!(why.contains(why_contains), "reason {why:?} should mention {why_contains:?}");
    assert!(!answer.is_primary_key() && !answer.is_sub_key());
}

#[tokio::test]
async fn the_handlers_exact_not_found_proves_a_primary_key() {
    let a = addr(1).to_bech32();
    let answer = ask_fixed(404, not_found_for(&a), &a).await;
    assert_eq!(answer, ParentAnswer::PrimaryKey);
    assert!(answer.is_primary_key() && !answer.is_unknown());
}

#[tokio::test]
async fn the_exact_message_is_matched_against_the_string_as_queried() {
    // A hex query is echoed as hex: the message must name the very string put in the path.
    let hex = addr(1).to_hex();
    assert_eq!(ask_fixed(404, not_found_for(&hex), &hex).await, ParentAnswer::PrimaryKey);
    let bech = addr(1).to_bech32();
    assert_unknown(&ask_fixed(404, not_found_for(&bech), &hex).await, "not the handler's");
}

#[tokio::test]
async fn a_proxy_not_found_echoing_the_path_is_unknown() {
    let a = addr(1).to_bech32();
    let body = json!({"code": 5, "message": format!("Not Found: {}", path_of(&a)), "details": []});
    assert_unknown(&ask_fixed(404, body, &a).await, "proxy");
    let body = json!({"code": 5, "message": format!("no sub-role binding for {}", path_of(&a)), "details": []});
    assert_unknown(&ask_fixed(404, body, &a).await, "proxy");
}

#[tokio::test]
async fn a_not_found_about_another_address_is_unknown() {
    let a = addr(1).to_bech32();
    assert_unknown(&ask_fixed(404, not_found_for(&addr(2).to_bech32()), &a).await, "not the handler's");
}

#[tokio::test]
async fn a_not_found_whose_message_only_contains_the_text_is_unknown() {
    let a = addr(1).to_bech32();
    let body = json!({"code": 5, "message": format!("no sub-role binding for {a}."), "details": []});
    assert_unknown(&ask_fixed(404, body, &a).await, "not the handler's");
}

#[tokio::test]
async fn a_not_found_with_another_code_or_details_is_unknown() {
    let a = addr(1).to_bech32();
    let msg = format!("no sub-role binding for {a}");
    assert_unknown(&ask_fixed(404, json!({"code": 3, "message": msg, "details": []}), &a).await, "not 5");
    assert_unknown(&ask_fixed(404, json!({"code": "5", "message": msg, "details": []}), &a).await, "not 5");
    assert_unknown(&ask_fixed(404, json!({"code": 5, "message": msg}), &a).await, "details");
    assert_unknown(&ask_fixed(404, json!({"code": 5, "message": msg, "details": [{"@type": "x"}]}), &a).await, "details");
}

#[tokio::test]
async fn an_html_not_found_is_unknown() {
    let a = addr(1).to_bech32();
    let stub = Stub::start(|_| Canned::raw(404, "text/html", "<html><body><h1>404 Not Found</h1></body></html>")).await;
    assert_unknown(&stub.client().sub_role_parent(&a).await, "without a JSON body");
}

#[tokio::test]
async fn a_not_found_reached_through_a_redirect_is_unknown() {
    let a = addr(1).to_bech32();
    let exact = not_found_for(&a);
    let stub = Stub::start(move |path| {
        if path == "/moved" {
            Canned::json(404, &exact)
        } else {
            Canned { status: 302, headers: vec![("location", "/moved".into())], body: String::new() }
        }
    })
    .await;
    assert_unknown(&stub.client().sub_role_parent(&a).await, "redirect");
    assert_eq!(stub.seen(), vec![path_of(&a), "/moved".to_string()]);
}

#[tokio::test]
async fn a_bound_address_is_a_sub_key_with_its_parent() {
    let (p, s) = (addr(1).to_bech32(), addr(2).to_bech32());
    let answer = ask_fixed(200, bound(&p, &s, "1970-01-01T00:00:00Z"), &s).await;
    let ParentAnswer::SubKey { parent, binding, active } = &answer else { panic!("expected SubKey, got {answer:?}") };
    assert_eq!((*parent, binding.sub_addr, binding.role, binding.label.as_str(), *active), (addr(1), addr(2), SubRole::Agent, "till 3", true));
    assert!(answer.is_sub_key() && answer.is_active_sub_key() && binding.is_active());
    assert_eq!(answer.parent(), Some(&addr(1)));
}

#[tokio::test]
async fn a_revoked_binding_is_a_sub_key_that_is_not_active() {
    let (p, s) = (addr(1).to_bech32(), addr(2).to_bech32());
    let answer = ask_fixed(200, bound(&p, &s, "2026-11-21T10:00:05Z"), &s).await;
    assert!(answer.is_sub_key() && !answer.is_active_sub_key());
    assert_eq!(answer.binding().unwrap().revoked_at.seconds, 1_795_255_205);
}

#[tokio::test]
async fn an_empty_parent_is_unknown() {
    let s = addr(2).to_bech32();
    let mut body = bound(&addr(1).to_bech32(), &s, "1970-01-01T00:00:00Z");
    body["parent"] = json!("");
    assert_unknown(&ask_fixed(200, body, &s).await, "empty parent");
    assert_unknown(&ask_fixed(200, json!({"parent": "", "binding": null}), &s).await, "empty parent");
}

#[tokio::test]
async fn an_unreadable_or_inconsistent_binding_is_unknown() {
    let (p, s) = (addr(1).to_bech32(), addr(2).to_bech32());
    assert_unknown(&ask_fixed(200, json!({"parent": p}), &s).await, "without a binding");
    let mut body = bound(&p, &s, "1970-01-01T00:00:00Z");
    body["binding"]["role"] = json!("SUB_ROLE_UNSPECIFIED");
    assert_unknown(&ask_fixed(200, body, &s).await, "unreadable binding");
    let body = bound(&p, &addr(3).to_bech32(), "1970-01-01T00:00:00Z");
    assert_unknown(&ask_fixed(200, body, &s).await, "not the queried");
    let mut body = bound(&p, &s, "1970-01-01T00:00:00Z");
    body["parent"] = json!(addr(4).to_bech32());
    assert_unknown(&ask_fixed(200, body, &s).await, "names parent");
}

#[tokio::test]
async fn a_server_error_is_unknown() {
    let a = addr(1).to_bech32();
    assert_unknown(&ask_fixed(500, json!({"code": 13, "message": "internal", "details": []}), &a).await, "HTTP 500");
}

#[tokio::test]
async fn malformed_json_is_unknown() {
    let a = addr(1).to_bech32();
    let truncated = format!("{{\"code\":5,\"message\":\"no sub-role binding for {a}\"");
    let stub = Stub::start(move |_| Canned::raw(404, "application/json", &truncated)).await;
    assert_unknown(&stub.client().sub_role_parent(&a).await, "without a JSON body");
    let stub = Stub::start(|_| Canned::raw(200, "application/json", "{\"parent\": \"lantau1")).await;
    assert_unknown(&stub.client().sub_role_parent(&a).await, "malformed JSON");
}

#[tokio::test]
async fn a_refused_connection_is_unknown() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let client = lantau_client::RestClient::new(format!("http://127.0.0.1:{port}"));
    assert_unknown(&client.sub_role_parent(&addr(1).to_bech32()).await, "transport");
}

#[tokio::test]
async fn a_string_that_is_not_an_address_is_unknown_without_asking() {
    let stub = Stub::fixed(404, not_found_for("nobody")).await;
    assert_unknown(&stub.client().sub_role_parent("nobody").await, "not asked");
    assert_unknown(&stub.client().sub_role_parent("").await, "not asked");
    assert!(stub.seen().is_empty());
}
