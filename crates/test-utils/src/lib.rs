//! Test fixtures: a real node started in-process on a temporary home with loopback ports
//! chosen by the OS, the dev keys by name, and bounded polling helpers. Tests never sleep for a
//! fixed time waiting on the node: they poll with a deadline.

#![cfg_attr(test, allow(unused_crate_dependencies))]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

pub mod flows;

use std::future::Future;
use std::time::Duration;

use lantau_client::{RestClient, SignerData, TxBuilder};
use lantau_crypto::SecretKey;
use lantau_node::home::{init_home, InitOptions, DEV_ACCOUNT_NAMES, DEV_MNEMONIC};
use lantau_node::{start, RunningNode, StartOptions};
use lantau_primitives::Address;

/// A node running in this process for one test.
#[derive(Debug)]
pub struct TestNode {
    /// The running node.
    pub node: RunningNode,
    /// REST base URL.
    pub rest_url: String,
    /// CometBFT RPC base URL.
    pub rpc_url: String,
    /// The Ethereum JSON-RPC base URL (HTTP).
    pub eth_url: String,
    /// The Ethereum JSON-RPC WebSocket URL.
    pub eth_ws_url: String,
    /// The gRPC URL (`http://host:port`).
    pub grpc_url: String,
    /// A REST client.
    pub client: RestClient,
    /// The chain id.
    pub chain_id: String,
    /// Keep the home alive as long as the node.
    pub home: tempfile::TempDir,
}

impl TestNode {
    /// Starts a dev chain with a 100 ms block time.
    pub async fn start() -> anyhow::Result<Self> {
        Self::start_with(InitOptions::default(), 100).await
    }

    /// Starts a chain with these init options and block time.
    pub async fn start_with(opts: InitOptions, block_time_ms: u64) -> anyhow::Result<Self> {
        let home = tempfile::tempdir()?;
        init_home(home.path(), &opts)?;
        Self::start_in(home, block_time_ms).await
    }

    /// Starts a node on an existing, initialised home.
    pub async fn start_in(home: tempfile::TempDir, block_time_ms: u64) -> anyhow::Result<Self> {
        let node = start(
            home.path(),
            StartOptions {
                api_address: Some("127.0.0.1:0".into()),
                rpc_address: Some("127.0.0.1:0".into()),
                block_time_ms: Some(block_time_ms),
                json_rpc_address: Some("127.0.0.1:0".into()),
                json_rpc_ws_address: Some("127.0.0.1:0".into()),
                metrics_address: Some("127.0.0.1:0".into()),
                grpc_address: Some("127.0.0.1:0".into()),
            },
        )
        .await?;
        let rest_url = format!("http://{}", node.api_addr);
        let rpc_url = format!("http://{}", node.rpc_addr);
        let eth_url = format!("http://{}", node.eth_addr);
        let eth_ws_url = format!("ws://{}", node.eth_ws_addr);
        let grpc_url = format!("http://{}", node.grpc_addr);
        let client = RestClient::new(&rest_url);
        let chain_id = node.node.app().chain_id();
        Ok(Self { node, rest_url, rpc_url, eth_url, eth_ws_url, grpc_url, client, chain_id, home })
    }

    /// Stops the node, keeping the home (to restart on it).
    pub async fn stop(self) -> tempfile::TempDir {
        self.node.stop().await;
        self.home
    }

    /// Signs `builder` for `key` with its current account number and sequence.
    pub async fn sign(&self, key: &SecretKey, builder: &TxBuilder) -> anyhow::Result<Vec<u8>> {
        let (account_number, sequence) = self.client.account(&key.address()).await?.ok_or_else(|| anyhow::anyhow!("no account for {}", key.address()))?;
        Ok(builder.sign(key, &SignerData { chain_id: self.chain_id.clone(), account_number, sequence }))
    }

    /// Waits until the chain reaches `height` (bounded).
    pub async fn wait_for_height(&self, height: u64) -> anyhow::Result<()> {
        let app = self.node.node.app();
        poll(Duration::from_secs(30), || async { app.queries().last_height().await.map(|h| h >= height).unwrap_or(false) }).await
    }
}

/// The dev key with this role name (`alice`, `bob`, `governance`, ...).
pub fn dev_key(name: &str) -> SecretKey {
    let idx = DEV_ACCOUNT_NAMES.iter().position(|n| *n == name).unwrap_or_else(|| panic!("no dev account {name}"));
    lantau_crypto::secret_key_from_mnemonic(DEV_MNEMONIC, u32::try_from(idx).unwrap_or(0)).expect("dev mnemonic derives")
}

/// The dev address with this role name.
pub fn dev_addr(name: &str) -> Address {
    dev_key(name).address()
}

/// Polls `cond` every 20 ms until it holds or `timeout` passes.
pub async fn poll<F, Fut>(timeout: Duration, mut cond: F) -> anyhow::Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if cond().await {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!("condition not met within {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
