//! The standard Cosmos REST routes wallets and explorers call, in their upstream shapes
//! (answered through the app's one query router, heights by `x-cosmos-block-height`), and CORS
//! on every HTTP surface: any origin on a dev chain, none on a home that lists none.

use lantau_node::home::{init_home, InitOptions};
use lantau_primitives::Coin;
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use serde_json::Value;

use crate::support::{ok, send};

async fn get(url: &str) -> (u16, Value) {
    let r = reqwest::get(url).await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_rest_routes_answer_in_their_upstream_shapes() {
    let n = TestNode::start().await.unwrap();
    let (alice, issuer) = (dev_addr("alice"), dev_addr("issuer"));
    let p = n.client.travel_rule_payload(&alice, &issuer).await.unwrap();
    let t = ok(&n, &dev_key("alice"), &send(&alice, &issuer, Coin::new("hkd.demo", 77u128)).travel_rule(&p)).await;
    let u = |path: &str| format!("{}{path}", n.rest_url);

    let (s, v) = get(&u("/cosmos/bank/v1beta1/supply")).await;
    assert_eq!(s, 200, "{v}");
    assert!(v["supply"].as_array().unwrap().iter().any(|c| c["denom"] == "hkd.demo"), "{v}");
    assert!(v["pagination"]["total"].as_str().is_some(), "{v}");
    let (s, v) = get(&u("/cosmos/bank/v1beta1/denoms_metadata")).await;
    assert_eq!(s, 200, "{v}");
    let hkd = v["metadatas"].as_array().unwrap().iter().find(|m| m["base"] == "hkd.demo").cloned().unwrap();
    assert!(hkd["denom_units"].as_array().unwrap().iter().any(|u| u["exponent"] == 2), "{hkd}");
    let (s, v) = get(&u("/cosmos/bank/v1beta1/denoms_metadata/alantau")).await;
    assert_eq!((s, v["metadata"]["display"].clone()), (200, Value::from("lantau")), "{v}");
    let (s, v) = get(&u("/cosmos/bank/v1beta1/denoms_metadata/nope")).await;
    assert_eq!(s, 404, "{v}");
    let (s, v) = get(&u(&format!("/cosmos/bank/v1beta1/spendable_balances/{}", alice.to_bech32()))).await;
    assert_eq!(s, 200, "{v}");
    assert!(v["balances"].as_array().unwrap().iter().any(|c| c["denom"] == "hkd.demo"), "{v}");
    let (s, v) = get(&u("/cosmos/bank/v1beta1/spendable_balances/lantau1nothing")).await;
    assert_eq!(s, 400, "{v}");
    let (s, v) = get(&u("/cosmos/bank/v1beta1/params")).await;
    assert_eq!((s, v["params"]["default_send_enabled"].clone()), (200, Value::Bool(true)), "{v}");
    let (s, v) = get(&u("/cosmos/auth/v1beta1/params")).await;
    assert_eq!((s, v["params"]["max_memo_characters"].clone()), (200, Value::from("256")), "{v}");
    let (s, v) = get(&u("/cosmos/base/node/v1beta1/config")).await;
    assert_eq!((s, v["minimum_gas_price"].clone()), (200, Value::from("1000000000.000000000000000000alantau")), "{v}");
    let (s, v) = get(&u(&format!("/cosmos/tx/v1beta1/txs/block/{}", t.height))).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["block"]["header"]["height"], t.height, "{v}");
    assert!(v["txs"].as_array().unwrap().iter().any(|x| x["body"]["messages"][0]["to_address"] == issuer.to_bech32()), "{v}");

    // A height: the supply at height 1 is the genesis supply.
    let at = |h: &str| reqwest::Client::new().get(u("/cosmos/bank/v1beta1/supply")).header("x-cosmos-block-height", h.to_string()).send();
    let r = at("1").await.unwrap();
    assert_eq!(r.status(), 200);
    let r = at("99999").await.unwrap();
    assert_eq!(r.status(), 400, "a future height");
    n.stop().await;
}

async fn preflight(url: &str) -> reqwest::Response {
    reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, url)
        .header("origin", "https://wallet.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_allows_any_origin_on_a_dev_chain_and_none_when_the_config_lists_none() {
    let n = TestNode::start().await.unwrap();
    for url in
        [format!("{}/cosmos/tx/v1beta1/txs", n.rest_url), n.rpc_url.clone(), n.eth_url.clone(), format!("{}/cosmos.bank.v1beta1.Query/Balance", n.grpc_url)]
    {
        let r = preflight(&url).await;
        assert!(r.status().is_success(), "{url}: {}", r.status());
        assert_eq!(r.headers().get("access-control-allow-origin").map(|v| v.to_str().unwrap()), Some("*"), "{url}: {:?}", r.headers());
    }
    let r = reqwest::Client::new().get(format!("{}/cosmos/bank/v1beta1/supply", n.rest_url)).header("origin", "https://wallet.example").send().await.unwrap();
    assert_eq!(r.headers().get("access-control-allow-origin").map(|v| v.to_str().unwrap()), Some("*"));
    n.stop().await;

    // A home whose config lists no origin: no CORS headers (browsers refuse the call).
    let home = tempfile::tempdir().unwrap();
    init_home(home.path(), &InitOptions::default()).unwrap();
    let path = home.path().join("config/config.toml");
    let mut cfg = lantau_node::config::NodeConfig::load(&path).unwrap();
    assert_eq!(cfg.cors_allowed_origins, vec!["*".to_string()], "a dev home allows any origin");
    cfg.cors_allowed_origins.clear();
    cfg.save(&path).unwrap();
    let n = TestNode::start_in(home, 100).await.unwrap();
    let r = preflight(&format!("{}/cosmos/tx/v1beta1/txs", n.rest_url)).await;
    assert!(r.headers().get("access-control-allow-origin").is_none(), "{:?}", r.headers());
    assert_eq!(lantau_node::config::NodeConfig::default().cors_allowed_origins, Vec::<String>::new(), "production default: none");
    n.stop().await;
}

/// CometBFT's `genesis`, `blockchain` and `commit` on the embedded engine, in CometBFT's shapes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cometbft_genesis_blockchain_and_commit_answer_on_the_embedded_engine() {
    let n = TestNode::start().await.unwrap();
    n.wait_for_height(3).await.unwrap();
    let rpc = |m: &str| {
        let url = format!("{}/{m}", n.rpc_url);
        async move { reqwest::get(url).await.unwrap().json::<Value>().await.unwrap() }
    };
    let g = rpc("genesis").await;
    assert_eq!(g["result"]["genesis"]["chain_id"], n.chain_id, "{g}");
    assert_eq!(g["result"]["genesis"]["validators"].as_array().unwrap().len(), 1, "{g}");
    assert!(g["result"]["genesis"]["app_state"]["bank"].is_object(), "{g}");
    assert!(g["result"]["genesis"]["consensus_params"]["block"]["max_bytes"].is_string(), "{g}");
    let b = rpc("blockchain?minHeight=1&maxHeight=3").await;
    let metas = b["result"]["block_metas"].as_array().unwrap_or_else(|| panic!("{b}"));
    let heights: Vec<&str> = metas.iter().map(|m| m["header"]["height"].as_str().unwrap()).collect();
    assert_eq!(heights, ["3", "2", "1"], "newest first");
    assert!(b["result"]["last_height"].as_str().unwrap().parse::<u64>().unwrap() >= 3);
    let c = rpc("commit?height=2").await;
    assert_eq!(c["result"]["signed_header"]["header"]["height"], "2", "{c}");
    assert_eq!(c["result"]["signed_header"]["commit"]["block_id"], metas[1]["block_id"], "{c}");
    assert_eq!(c["result"]["canonical"], true, "{c}");
    let bad = rpc("blockchain?minHeight=5&maxHeight=2").await;
    assert!(bad["error"].is_object(), "{bad}");
    n.stop().await;
}

/// Every module's queries answer through `abci_query` by gRPC method path, protobuf in and out
/// (the router REST and gRPC share); a missing record is NotFound in the SDK's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn module_queries_answer_through_abci_query_by_grpc_path() {
    use prost::Message as _;
    let n = TestNode::start().await.unwrap();
    let q = |path: &str, data: Vec<u8>| {
        let url = format!("{}/abci_query?path=%22{path}%22&data=0x{}", n.rpc_url, const_hex::encode(data));
        async move { reqwest::get(url).await.unwrap().json::<Value>().await.unwrap()["result"]["response"].clone() }
    };
    let b64 = |v: &Value| base64::Engine::decode(&base64::engine::general_purpose::STANDARD, v.as_str().unwrap_or_default()).unwrap();
    let alice = dev_addr("alice").to_bech32();
    let r = q("/chain.kyc.v1.Query/Identity", lantau_proto::chain::kyc::v1::QueryIdentityRequest { address: alice.clone() }.encode_to_vec()).await;
    let id = lantau_proto::chain::kyc::v1::QueryIdentityResponse::decode(b64(&r["value"]).as_slice()).unwrap().identity.unwrap();
    assert_eq!(id.address, alice);
    let r = q("/chain.reserve.v1.Query/Params", vec![]).await;
    assert_eq!(r["code"], 0, "{r}");
    assert!(lantau_proto::chain::reserve::v1::QueryParamsResponse::decode(b64(&r["value"]).as_slice()).unwrap().params.is_some());
    let r = q(
        "/chain.reserve.v1.Query/LatestAttestation",
        lantau_proto::chain::reserve::v1::QueryLatestAttestationRequest { issuer: dev_addr("issuer").to_bech32() }.encode_to_vec(),
    )
    .await;
    assert_eq!(r["code"], 0, "{r}");
    let r = q("/chain.compliance.v1.Query/Params", vec![]).await;
    assert!(lantau_proto::chain::compliance::v1::QueryParamsResponse::decode(b64(&r["value"]).as_slice()).unwrap().params.is_some(), "{r}");
    let r = q("/chain.stablecoin.v1.Query/Denoms", vec![]).await;
    assert!(!lantau_proto::chain::stablecoin::v1::QueryDenomsResponse::decode(b64(&r["value"]).as_slice()).unwrap().denoms.is_empty(), "{r}");
    let nobody = lantau_crypto::secret_key_from_mnemonic(lantau_node::home::DEV_MNEMONIC, 99).unwrap().address().to_bech32();
    let r = q("/chain.kyc.v1.Query/Identity", lantau_proto::chain::kyc::v1::QueryIdentityRequest { address: nobody }.encode_to_vec()).await;
    assert_eq!(r["code"], 38, "{r}");
    assert!(r["log"].as_str().unwrap().starts_with("rpc error: code = NotFound desc = "), "{r}");
    let r = q("/cosmos.evm.erc20.v1.Query/TokenPair", lantau_proto::erc20::QueryTokenPairRequest { token: "hkd.demo".into() }.encode_to_vec()).await;
    let pair = lantau_proto::erc20::QueryTokenPairResponse::decode(b64(&r["value"]).as_slice()).unwrap().token_pair.unwrap();
    assert_eq!(pair.denom, "hkd.demo", "{r}");
    let r = q("/cosmos.evm.erc20.v1.Query/TokenPair", lantau_proto::erc20::QueryTokenPairRequest { token: pair.erc20_address.clone() }.encode_to_vec()).await;
    assert_eq!(r["code"], 0, "by address: {r}");
    let r = q("/cosmos.staking.v1beta1.Query/Validators", vec![]).await;
    assert_eq!(r["code"], 6, "{r}");
    n.stop().await;
}
