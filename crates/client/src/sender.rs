//! Signing and sending as a wallet does: the next sequence as the node sees it, the gas limit
//! from a simulation, one broadcast, then confirmation by the transaction query. The CLI, the
//! onboarding portal's faucets and registrar, and the reviewers' console all send through here.

use std::time::Duration;

use cosmos_sdk_proto::Any;
use lantau_crypto::SecretKey;

use crate::rest::{Broadcast, ClientError, RestClient, TxResponse};
use crate::tx::{SignerData, TxBuilder};

/// The gas limit of a transaction whose simulation the node refused (a gate, a frozen
/// account...): it is broadcast anyway, so the admission verdict is what the caller sees, and a
/// refused transaction costs nothing.
pub const AUTO_GAS_FALLBACK: u64 = 400_000;

/// `simulated x AUTO_GAS_NUM / AUTO_GAS_DEN` (CosmJS's "auto": x 1.3).
const AUTO_GAS_NUM: u64 = 13;
const AUTO_GAS_DEN: u64 = 10;

/// Resolves the signer data of `key`'s account (the node's next sequence, counting what it
/// admitted and has not committed: consecutive sends without waiting each get their own).
pub async fn signer_data(client: &RestClient, key: &SecretKey) -> Result<SignerData, ClientError> {
    let chain_id = client.chain_id().await?;
    let addr = key.address();
    let (account_number, sequence) =
        client.next_sequence(&addr).await?.ok_or_else(|| ClientError::Decode(format!("account {} does not exist on chain", addr.to_bech32())))?;
    Ok(SignerData { chain_id, account_number, sequence })
}

/// The gas limit a wallet would set for `b`: its simulation x 1.3, or [`AUTO_GAS_FALLBACK`]
/// when the node refuses to simulate it (HTTP 400).
pub async fn auto_gas(client: &RestClient, b: &TxBuilder, key: &SecretKey, signer: &SignerData) -> Result<u64, ClientError> {
    let probe = b.clone().gas(200_000).fee(0).sign(key, signer);
    match client.simulate(&probe).await {
        Ok(sim) => Ok(sim.saturating_mul(AUTO_GAS_NUM) / AUTO_GAS_DEN),
        Err(ClientError::Api { status: 400, .. }) => Ok(AUTO_GAS_FALLBACK),
        Err(e) => Err(e),
    }
}

/// What sending gave.
#[derive(Debug, Clone)]
pub enum Sent {
    /// Refused at admission (never included): the broadcast's verdict.
    Refused(Broadcast),
    /// Included in a block; `code` 0 means it executed successfully.
    Included(TxResponse),
}

impl Sent {
    /// The transaction hash (upper-case hex).
    pub fn txhash(&self) -> &str {
        match self {
            Sent::Refused(b) => &b.txhash,
            Sent::Included(r) => &r.txhash,
        }
    }

    /// True when included and successful.
    pub fn is_success(&self) -> bool {
        matches!(self, Sent::Included(r) if r.code == 0)
    }

    /// `(code, codespace, raw_log)` of a refusal or a failure in the block.
    pub fn failure(&self) -> Option<(u32, &str, &str)> {
        match self {
            Sent::Refused(b) => Some((b.code, &b.codespace, &b.raw_log)),
            Sent::Included(r) if r.code != 0 => Some((r.code, &r.codespace, &r.raw_log)),
            Sent::Included(_) => None,
        }
    }
}

/// A key that sends one transaction at a time: the sequence is read, the transaction signed
/// and broadcast under a lock, so concurrent callers (a faucet's requests) never sign the same
/// sequence; confirmation runs outside the lock.
#[derive(Debug)]
pub struct Sender {
    client: RestClient,
    key: SecretKey,
    lock: tokio::sync::Mutex<()>,
    timeout: Duration,
}

impl Sender {
    /// A sender of `key` through `client`, confirming within `timeout`.
    pub fn new(client: RestClient, key: SecretKey, timeout: Duration) -> Self {
        Self { client, key, lock: tokio::sync::Mutex::new(()), timeout }
    }

    /// The key's address.
    pub fn address(&self) -> lantau_primitives::Address {
        self.key.address()
    }

    /// The REST client.
    pub fn client(&self) -> &RestClient {
        &self.client
    }

    /// Signs `messages` (gas by simulation), broadcasts (SYNC), and when admitted waits for
    /// inclusion. A confirmation timeout is [`ClientError::Timeout`]: neither failure nor success.
    pub async fn send(&self, messages: Vec<Any>, memo: &str) -> Result<Sent, ClientError> {
        self.send_tx(TxBuilder::new(messages).memo(memo)).await
    }

    /// Like [`Sender::send`] for a built transaction (extension options, a memo…); its gas
    /// limit is replaced by the simulation's.
    pub async fn send_tx(&self, mut b: TxBuilder) -> Result<Sent, ClientError> {
        let broadcast = {
            let _one_at_a_time = self.lock.lock().await;
            let signer = signer_data(&self.client, &self.key).await?;
            b.gas_limit = auto_gas(&self.client, &b, &self.key, &signer).await?;
            let bytes = b.sign(&self.key, &signer);
            self.client.broadcast(&bytes, "BROADCAST_MODE_SYNC").await?
        };
        if broadcast.code != 0 {
            return Ok(Sent::Refused(broadcast));
        }
        let r = self.client.wait_for_tx(&broadcast.txhash, self.timeout, Duration::from_millis(100)).await?;
        Ok(Sent::Included(r))
    }
}
