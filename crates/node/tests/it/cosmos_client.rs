//! The Cosmos path driven by CosmJS (npm `@cosmjs/stargate`, `@cosmjs/proto-signing`: what
//! Keplr and most Cosmos web apps use): `tests/cosmos-client/client.mjs`, run as a child
//! process against this node's CometBFT RPC. It reads accounts, balances, supply and denom
//! metadata through `abci_query` with gRPC method paths, and signs (eth_secp256k1, SIGN_MODE_DIRECT)
//! and broadcasts a MsgSend and a gated stablecoin transfer with its Travel Rule extension
//! option; a refused transfer comes back with the compliance codespace.

use std::process::Command;

use lantau_test_utils::{dev_addr, dev_key, TestNode};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cosmjs_reads_accounts_and_balances_and_signs_and_broadcasts_gated_transfers() {
    let n = TestNode::start().await.unwrap();
    let (alice, issuer) = (dev_addr("alice"), dev_addr("issuer"));
    let nobody = lantau_crypto::secret_key_from_mnemonic(lantau_node::home::DEV_MNEMONIC, 99).unwrap().address();
    let payload = lantau_client::tx::travel_rule_option(&n.client.travel_rule_payload(&alice, &issuer).await.unwrap());
    let to_nobody = lantau_client::tx::travel_rule_option(&n.client.travel_rule_payload(&alice, &nobody).await.unwrap());

    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cosmos-client");
    assert!(
        dir.join("node_modules/@cosmjs/stargate").exists(),
        "CosmJS is not installed: run scripts/prereqs.sh (it installs tests/cosmos-client's npm packages)"
    );
    let out = Command::new("node")
        .arg(dir.join("client.mjs"))
        .env("RPC_URL", &n.rpc_url)
        .env("ALICE_KEY", dev_key("alice").to_hex())
        .env("MNEMONIC", lantau_node::home::DEV_MNEMONIC)
        .env("HD_PATH", format!("m/44'/60'/0'/0/{}", lantau_node::home::DEV_ACCOUNT_NAMES.iter().position(|a| *a == "alice").unwrap()))
        .env("BOB", dev_addr("bob").to_bech32())
        .env("ISSUER", issuer.to_bech32())
        .env("NOBODY", nobody.to_bech32())
        .env("PAYLOAD_TYPE_URL", &payload.type_url)
        .env("PAYLOAD_HEX", const_hex::encode(&payload.value))
        .env("PAYLOAD_NOBODY_HEX", const_hex::encode(&to_nobody.value))
        .output()
        .expect("node runs");
    assert!(out.status.success(), "client.mjs failed:\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let r: Value = serde_json::from_str(stdout.lines().last().unwrap_or("{}")).unwrap();
    eprintln!("client.mjs timings (ms since start): {}", r["ms"]);
    assert_eq!(r["chain_id"], n.chain_id);
    // What CosmJS sent is what the node recorded: the transfer's audit row, found by its hash.
    let hash = r["transfer"].as_str().unwrap();
    let log = n.client.query(&format!("/chain/compliance/v1/audit_log?tx_hash={}", hash.to_lowercase())).await.unwrap();
    assert!(log["entries"].as_array().is_some_and(|e| e.iter().any(|x| x["tx_type"] == "transfer")), "{log}");
    assert_eq!(r["refused"]["codespace"], "compliance", "{r}");
    n.stop().await;
}
