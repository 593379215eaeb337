//! The compliance queries over gRPC (a plain HTTP/2 client, h2) and `abci_query` answer what
//! the REST routes answer for the same query: one router behind the three surfaces.

use lantau_primitives::Coin;
use lantau_proto::chain::compliance::v1 as cpb;
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use prost::Message as _;
use serde_json::Value;

use crate::support::{ok, send};

/// A gRPC status other than OK: its code and its (percent-decoded) message.
pub(crate) type Status = (u32, String);

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match (b[i], b.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok())) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One unary call on a fresh HTTP/2 connection: the response message, or the status.
pub(crate) async fn grpc(url: &str, method: &str, req: &impl prost::Message) -> Result<Vec<u8>, Status> {
    grpc_at(url, method, req, None).await
}

/// [`grpc`] at a height (the `x-cosmos-block-height` header).
pub(crate) async fn grpc_at(url: &str, method: &str, req: &impl prost::Message, height: Option<u64>) -> Result<Vec<u8>, Status> {
    let addr = url.trim_start_matches("http://");
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (client, conn) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let mut client = client.ready().await.unwrap();
    let mut request = http::Request::post(format!("{url}{method}")).header("content-type", "application/grpc").header("te", "trailers");
    if let Some(h) = height {
        request = request.header("x-cosmos-block-height", h.to_string());
    }
    let request = request.body(()).unwrap();
    let (answer, mut body_out) = client.send_request(request, false).unwrap();
    // One message: uncompressed, its length, its bytes.
    let msg = req.encode_to_vec();
    let mut frame = vec![0u8];
    frame.extend_from_slice(&u32::try_from(msg.len()).unwrap().to_be_bytes());
    frame.extend_from_slice(&msg);
    body_out.send_data(bytes::Bytes::from(frame), true).unwrap();
    let answer = answer.await.unwrap();
    assert_eq!(answer.status(), 200);
    let headers = answer.headers().clone();
    let mut body = answer.into_body();
    let mut data = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.unwrap();
        let _ = body.flow_control().release_capacity(chunk.len());
        data.extend_from_slice(&chunk);
    }
    let trailers = body.trailers().await.unwrap().unwrap_or_default();
    // A trailers-only answer (an error) carries the status in the headers.
    let get = |k: &str| trailers.get(k).or_else(|| headers.get(k)).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let code: u32 = get("grpc-status").parse().unwrap();
    if code != 0 {
        return Err((code, percent_decode(&get("grpc-message"))));
    }
    assert_eq!(data[0], 0, "uncompressed");
    let len = usize::try_from(u32::from_be_bytes(data[1..5].try_into().unwrap())).unwrap();
    assert_eq!(data.len(), 5 + len, "one message");
    Ok(data[5..].to_vec())
}

/// The same call through CometBFT's `abci_query`: the response bytes, or (code, log).
pub(crate) async fn abci(n: &TestNode, path: &str, req: &impl prost::Message) -> Result<Vec<u8>, (u64, String)> {
    abci_at(n, path, req, 0).await
}

/// [`abci`] at a height (0: the latest).
pub(crate) async fn abci_at(n: &TestNode, path: &str, req: &impl prost::Message, height: u64) -> Result<Vec<u8>, (u64, String)> {
    let url = format!("{}/abci_query?path=%22{path}%22&data=0x{}&height={height}", n.rpc_url, const_hex::encode(req.encode_to_vec()));
    let r = reqwest::get(url).await.unwrap().json::<Value>().await.unwrap()["result"]["response"].clone();
    match r["code"].as_u64() {
        Some(0) => Ok(base64::Engine::decode(&base64::engine::general_purpose::STANDARD, r["value"].as_str().unwrap_or_default()).unwrap()),
        c => Err((c.unwrap_or(u64::MAX), r["log"].as_str().unwrap_or_default().to_string())),
    }
}

/// A REST GET: status and body.
async fn rest(n: &TestNode, path: &str) -> (u16, Value) {
    let r = reqwest::get(format!("{}{path}", n.rest_url)).await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

/// A REST GET's body, as bytes (text).
async fn raw(n: &TestNode, path: &str) -> String {
    reqwest::get(format!("{}{path}", n.rest_url)).await.unwrap().text().await.unwrap()
}

/// A gRPC response as the gateway renders it (pbjson: proto names, defaults emitted), with
/// `null` for the unset message fields named (pbjson leaves them out).
fn json_of(m: &impl serde::Serialize, null_messages: &[&str]) -> Value {
    let mut v = serde_json::to_value(m).unwrap();
    for f in null_messages {
        v.as_object_mut().unwrap().entry(*f).or_insert(Value::Null);
    }
    v
}

/// Flags and SubRoleBindings: the list as REST renders it; the pagination tail has no next
/// key and the number of items as its total, on both surfaces.
fn assert_same_list(grpc_items: Value, page: Option<cosmos_sdk_proto::cosmos::base::query::v1beta1::PageResponse>, rest: &Value, field: &str) {
    assert_eq!(grpc_items, rest[field], "{field}: gRPC and REST differ");
    let page = page.expect("a pagination tail");
    assert!(page.next_key.is_empty());
    assert_eq!(page.total.to_string(), rest["pagination"]["total"].as_str().unwrap(), "{rest}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compliance_flags_report_and_tx_trace_answer_over_grpc_and_abci_query_as_over_rest() {
    let n = TestNode::start().await.unwrap();
    let (alice, issuer) = (dev_addr("alice"), dev_addr("issuer"));
    // A transfer at the Travel Rule threshold: the threshold gate raises a flag.
    let p = n.client.travel_rule_payload(&alice, &issuer).await.unwrap();
    let t = ok(&n, &dev_key("alice"), &send(&alice, &issuer, Coin::new("hkd.demo", 800_000u128)).travel_rule(&p)).await;
    let g = |method: &'static str| format!("/chain.compliance.v1.Query/{method}");

    // === Flags ===
    let vasp = lantau_node::home::DEV_ALICE_VASP;
    for (query, req) in [
        ("", cpb::QueryFlagsRequest::default()),
        (
            &*format!("?vasp={vasp}&status=FLAG_STATUS_EMITTED"),
            cpb::QueryFlagsRequest { vasp: vasp.into(), status: cpb::FlagStatus::Emitted as i32, ..Default::default() },
        ),
        (&*format!("?tx_hash={}", t.txhash.to_ascii_lowercase()), cpb::QueryFlagsRequest { tx_hash: t.txhash.to_ascii_lowercase(), ..Default::default() }),
        ("?status=FLAG_STATUS_RESOLVED_BLOCKED", cpb::QueryFlagsRequest { status: cpb::FlagStatus::ResolvedBlocked as i32, ..Default::default() }),
    ] {
        let (code, r) = rest(&n, &format!("/chain/compliance/v1/flags{query}")).await;
        assert_eq!(code, 200, "{r}");
        let bytes = grpc(&n.grpc_url, &g("Flags"), &req).await.unwrap();
        let resp = cpb::QueryFlagsResponse::decode(bytes.as_slice()).unwrap();
        assert_same_list(serde_json::to_value(&resp.flags).unwrap(), resp.pagination, &r, "flags");
        assert_eq!(abci(&n, &g("Flags"), &req).await.unwrap(), bytes, "abci_query answers the gRPC bytes");
    }
    let (_, all) = rest(&n, "/chain/compliance/v1/flags").await;
    let flags = all["flags"].as_array().unwrap();
    assert_eq!(flags.len(), 1, "{all}");
    assert_eq!(flags[0]["decorator"], "threshold");
    assert_eq!(flags[0]["tx_hash"], t.txhash);

    // === Report ===
    for (query, req) in [
        ("", cpb::QueryReportRequest::default()),
        (
            "?format=csv&period_start=2020-01-01T00:00:00Z",
            cpb::QueryReportRequest { period_start: Some(ts("2020-01-01T00:00:00Z")), format: "csv".into(), ..Default::default() },
        ),
        ("?period_end=2020-01-01T00:00:00Z", cpb::QueryReportRequest { period_end: Some(ts("2020-01-01T00:00:00Z")), ..Default::default() }),
    ] {
        let (code, r) = rest(&n, &format!("/chain/compliance/v1/report{query}")).await;
        assert_eq!(code, 200, "{r}");
        let bytes = grpc(&n.grpc_url, &g("Report"), &req).await.unwrap();
        let resp = cpb::QueryReportResponse::decode(bytes.as_slice()).unwrap();
        assert_eq!(json_of(&resp, &[]), r, "Report{query}: gRPC and REST differ");
        let names: Vec<&str> = resp.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["par_value_daily", "sanctions_hits", "threshold_flags", "review_closures"]);
    }
    let (_, r) = rest(&n, "/chain/compliance/v1/report").await;
    assert_eq!(r["sections"][2]["rows"][0]["cells"]["tx_hash"], t.txhash, "the flag is in threshold_flags: {r}");
    // The REST body is the gRPC response's JSON, byte for byte (object keys sorted, as every
    // REST answer writes them).
    let resp = cpb::QueryReportResponse::decode(grpc(&n.grpc_url, &g("Report"), &cpb::QueryReportRequest::default()).await.unwrap().as_slice()).unwrap();
    assert_eq!(raw(&n, "/chain/compliance/v1/report").await, serde_json::to_string(&json_of(&resp, &[])).unwrap());

    // === TxTrace: the node's ring buffer, any case, with or without 0x; found false is an answer ===
    let zeros = "00".repeat(32);
    for hash in [t.txhash.clone(), t.txhash.to_ascii_lowercase(), format!("0x{}", t.txhash), zeros.clone()] {
        let (code, r) = rest(&n, &format!("/chain/compliance/v1/tx_trace/{hash}")).await;
        assert_eq!(code, 200, "{r}");
        let req = cpb::QueryTxTraceRequest { tx_hash: hash.clone() };
        let bytes = grpc(&n.grpc_url, &g("TxTrace"), &req).await.unwrap();
        let resp = cpb::QueryTxTraceResponse::decode(bytes.as_slice()).unwrap();
        assert_eq!(json_of(&resp, &["trace"]), r, "TxTrace {hash}: gRPC and REST differ");
        assert_eq!(resp.found, hash != zeros);
        assert_eq!(abci(&n, &g("TxTrace"), &req).await.unwrap(), bytes, "abci_query answers the gRPC bytes");
    }
    let (_, r) = rest(&n, &format!("/chain/compliance/v1/tx_trace/{}", t.txhash)).await;
    assert_eq!(r["trace"]["results"].as_array().unwrap().len(), 7, "{r}");
    assert_eq!(r["trace"]["tx_hash"], t.txhash);
    assert_eq!(raw(&n, &format!("/chain/compliance/v1/tx_trace/{zeros}")).await, r#"{"found":false,"trace":null}"#);

    // === the same errors: code and text ===
    let (code, r) = rest(&n, "/chain/compliance/v1/tx_trace/xyz").await;
    assert_eq!((code, &r["code"]), (400, &serde_json::json!(3)), "{r}");
    let e = grpc(&n.grpc_url, &g("TxTrace"), &cpb::QueryTxTraceRequest { tx_hash: "xyz".into() }).await.unwrap_err();
    assert_eq!(e, (3, r["message"].as_str().unwrap().to_string()));
    let nobody = lantau_crypto::secret_key_from_mnemonic(lantau_node::home::DEV_MNEMONIC, 99).unwrap().address().to_bech32();
    let (code, r) = rest(&n, &format!("/chain/compliance/v1/sub_role_parent/{nobody}")).await;
    assert_eq!(code, 404, "{r}");
    let e = grpc(&n.grpc_url, &g("SubRoleParent"), &cpb::QuerySubRoleParentRequest { sub_addr: nobody.clone() }).await.unwrap_err();
    assert_eq!(e, (5, format!("no sub-role binding for {nobody}")));
    assert_eq!(r["message"], e.1);
    let (code, _) = abci(&n, &g("SubRoleParent"), &cpb::QuerySubRoleParentRequest { sub_addr: nobody }).await.unwrap_err();
    assert_eq!(code, 38, "NotFound in the SDK's ABCI code");

    // === the other compliance queries: the same content ===
    let (_, r) = rest(&n, "/chain/compliance/v1/sanctions").await;
    let resp =
        cpb::QuerySanctionsSetResponse::decode(grpc(&n.grpc_url, &g("SanctionsSet"), &cpb::QuerySanctionsSetRequest {}).await.unwrap().as_slice()).unwrap();
    assert_eq!(json_of(&resp, &[]), r);
    let (_, r) = rest(&n, &format!("/chain/compliance/v1/sub_roles/{}", issuer.to_bech32())).await;
    let req = cpb::QuerySubRoleBindingsRequest { parent: issuer.to_bech32(), ..Default::default() };
    let resp = cpb::QuerySubRoleBindingsResponse::decode(grpc(&n.grpc_url, &g("SubRoleBindings"), &req).await.unwrap().as_slice()).unwrap();
    assert_same_list(serde_json::to_value(&resp.bindings).unwrap(), resp.pagination, &r, "bindings");
    let (_, r) = rest(&n, &format!("/chain/compliance/v1/travel_rule/{}", t.txhash.to_ascii_lowercase())).await;
    let req = cpb::QueryTravelRulePayloadRequest { tx_hash: t.txhash.to_ascii_lowercase() };
    let resp = cpb::QueryTravelRulePayloadResponse::decode(grpc(&n.grpc_url, &g("TravelRulePayload"), &req).await.unwrap().as_slice()).unwrap();
    assert_eq!(json_of(&resp, &[]), r);
    // An upper-case hash is NotFound, as over REST.
    let e = grpc(&n.grpc_url, &g("TravelRulePayload"), &cpb::QueryTravelRulePayloadRequest { tx_hash: t.txhash.clone() }).await.unwrap_err();
    assert_eq!(e.0, 5, "{e:?}");
    n.stop().await;
}

fn ts(s: &str) -> lantau_proto::Timestamp {
    serde_json::from_value(Value::String(s.into())).unwrap()
}
