//! A test-only module wired through the one module list (`crate::modules`, under
//! `#[cfg(test)]`) and nowhere else: its genesis section, its message and its query work
//! with no other edit in the app. It also screens its own messages with a gate of its own
//! (`gate`, called by the screening under `#[cfg(test)]`) that reads a key no rule of any
//! other module names, so a test can show that the recheck notices a write to it.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use cnidarium::{StateRead, StateWrite};
use cosmos_sdk_proto::Any;
use lantau_module_api::{store, BlockCtx, ExecCtx, Fact, GasMeter, Module, ModuleMsg, MsgHandler, QueryError, TxError};
use lantau_primitives::Address;
use serde::{Deserialize, Serialize};

const COUNTER: &str = "probe/counter";
/// Present: the probe's gate refuses every `MsgBump`.
const GATE_CLOSED: &str = "probe/gate_closed";
const MSG_BUMP: &str = "/lantau.probe.v1.MsgBump";
const QUERY_COUNTER: &str = "/lantau.probe.v1.Query/Counter";

/// `lantau.probe.v1.MsgBump { signer = 1; by = 2; close = 3; }`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct MsgBump {
    /// Who signs.
    #[prost(string, tag = "1")]
    pub signer: String,
    /// How much to add.
    #[prost(uint64, tag = "2")]
    pub by: u64,
    /// Also close the probe's gate.
    #[prost(bool, tag = "3")]
    pub close: bool,
}

/// `lantau.probe.v1.QueryCounterResponse { value = 1; }`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct QueryCounterResponse {
    /// The counter.
    #[prost(uint64, tag = "1")]
    pub value: u64,
}

/// The probe's genesis section: where its counter starts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeGenesis {
    /// The counter's first value.
    pub start: u64,
}

/// The probe's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bump {
    signer: Address,
    by: u64,
    close: bool,
}

async fn counter<S: StateRead + Sync>(state: &S, gas: &GasMeter) -> Result<u64, TxError> {
    Ok(match store::get(state, gas, COUNTER).await? {
        Some(b) => u64::from_be_bytes(b.as_slice().try_into().map_err(lantau_module_api::error::internal)?),
        None => 0,
    })
}

impl MsgHandler for Bump {
    fn check_stateless(&self) -> Result<(), TxError> {
        Ok(())
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        let v = counter(state, ctx.gas).await?.saturating_add(self.by);
        store::put(state, ctx.gas, COUNTER.into(), v.to_be_bytes().to_vec())?;
        if self.close {
            store::put(state, ctx.gas, GATE_CLOSED.into(), vec![1])?;
        }
        ctx.emit(lantau_module_api::event("probe_bumped", [("value", v.to_string())]));
        Ok(())
    }
}

impl ModuleMsg for Bump {
    fn type_url(&self) -> &'static str {
        MSG_BUMP
    }
    fn signer(&self) -> Address {
        self.signer
    }
    fn facts(&self, _msg_index: usize) -> Vec<Fact> {
        Vec::new()
    }
}

/// The probe's gate: a transaction carrying a `MsgBump` is refused (codespace `probe`, code
/// 2) once the gate is closed. Reads nothing for other transactions.
pub(crate) async fn gate<S: StateRead + Sync>(
    state: &S,
    gas: &GasMeter,
    tx: &crate::DecodedTx,
    session: &mut lantau_compliance::screening::Session,
) -> Result<(), TxError> {
    if session.rejection().is_some() || !tx.msgs.iter().any(|m| m.type_url() == MSG_BUMP) {
        return Ok(());
    }
    if store::get(state, gas, GATE_CLOSED).await?.is_some() {
        session.reject(TxError { codespace: "probe", code: 2, log: "the probe's gate is closed".into() });
    }
    Ok(())
}

/// The probe module.
pub struct Probe;

impl Module for Probe {
    const NAME: &'static str = "probe";
    type Genesis = ProbeGenesis;
    type Msg = Bump;

    /// Version 2 multiplies the counter by ten: the upgrade tests' migration.
    const STATE_VERSION: u64 = 2;

    fn default_genesis() -> ProbeGenesis {
        ProbeGenesis::default()
    }

    async fn migrate<S: StateWrite + Send + Sync>(state: &mut S, from: u64, gas: &GasMeter, _block: &BlockCtx) -> Result<(), TxError> {
        if from != 1 {
            return Err(lantau_module_api::error::internal(format!("the probe has no migration from state version {from}")));
        }
        let v = counter(state, gas).await?.saturating_mul(10);
        store::put(state, gas, COUNTER.into(), v.to_be_bytes().to_vec())
    }

    async fn init_genesis<S: StateWrite + Send + Sync>(state: &mut S, g: &ProbeGenesis, _block: &BlockCtx) -> Result<(), TxError> {
        store::put(state, &GasMeter::infinite(), COUNTER.into(), g.start.to_be_bytes().to_vec())
    }

    fn decode(any: &Any) -> Option<Result<Bump, TxError>> {
        (any.type_url == MSG_BUMP).then(|| {
            let m: MsgBump = lantau_module_api::decode_any(any)?;
            Ok(Bump { signer: lantau_module_api::parse_address(&m.signer, "signer")?, by: m.by, close: m.close })
        })
    }

    async fn query<S: StateRead + Sync>(state: &S, method: &str, _request: &[u8]) -> Option<Result<Vec<u8>, QueryError>> {
        if method != QUERY_COUNTER {
            return None;
        }
        Some(counter(state, &GasMeter::infinite()).await.map(|value| prost::Message::encode_to_vec(&QueryCounterResponse { value })).map_err(QueryError::from))
    }
}

/// Helpers of the tests that run a whole app with the probe in its module list.
#[cfg(test)]
pub(crate) mod kit {
    use std::sync::Arc;

    use lantau_client::{SignerData, TxBuilder};
    use tendermint::abci::{request, types::CommitInfo};

    use super::*;
    use crate::{App, AppConfig, NoHook};

    /// The chain id of the kit's chains.
    pub(crate) const CHAIN_ID: &str = "probe-1";

    /// Opens the app at `dir` with `cfg`.
    pub(crate) async fn open(dir: &std::path::Path, cfg: AppConfig) -> Result<App, crate::AppError> {
        App::load(dir.to_path_buf(), cfg, Arc::new(NoHook)).await
    }

    /// A new chain from genesis `g` in a temporary directory.
    pub(crate) async fn start_with(cfg: AppConfig, g: &crate::AppGenesis) -> (tempfile::TempDir, App) {
        let dir = tempfile::tempdir().unwrap();
        let app = open(dir.path(), cfg).await.unwrap();
        app.init_chain(request::InitChain {
            time: tendermint::Time::from_unix_timestamp(1_700_000_000, 0).unwrap(),
            chain_id: CHAIN_ID.into(),
            consensus_params: tendermint::consensus::Params {
                block: tendermint::block::Size { max_bytes: 4_194_304, max_gas: -1, time_iota_ms: 1 },
                evidence: tendermint::evidence::Params {
                    max_age_num_blocks: 100_000,
                    max_age_duration: tendermint::evidence::Duration(std::time::Duration::from_secs(172_800)),
                    max_bytes: 1_048_576,
                },
                validator: tendermint::consensus::params::ValidatorParams { pub_key_types: vec![tendermint::public_key::Algorithm::Ed25519] },
                version: None,
                abci: Default::default(),
            },
            validators: vec![],
            app_state_bytes: serde_json::to_vec(g).unwrap().into(),
            initial_height: 1u32.into(),
        })
        .await
        .unwrap();
        (dir, app)
    }

    /// A new chain with the default configuration.
    pub(crate) async fn start(g: &crate::AppGenesis) -> (tempfile::TempDir, App) {
        start_with(AppConfig::default(), g).await
    }

    /// `key`'s transaction of `msgs` at `sequence`.
    pub(crate) async fn sign(app: &App, key: &lantau_crypto::SecretKey, sequence: u64, msgs: Vec<Any>) -> Vec<u8> {
        use lantau_auth::AuthRead;
        let account_number = app.snapshot().account(&GasMeter::infinite(), &key.address()).await.unwrap().unwrap().account_number;
        TxBuilder::new(msgs).gas(400_000).sign(key, &SignerData { chain_id: CHAIN_ID.into(), account_number, sequence })
    }

    /// `key`'s `MsgBump` (by 1) at `sequence`.
    pub(crate) async fn bump(app: &App, key: &lantau_crypto::SecretKey, sequence: u64, close: bool) -> Vec<u8> {
        let any = Any { type_url: MSG_BUMP.into(), value: prost::Message::encode_to_vec(&MsgBump { signer: key.address().to_bech32(), by: 1, close }) };
        sign(app, key, sequence, vec![any]).await
    }

    /// FinalizeBlock at `height` (5 s of block time apart).
    pub(crate) async fn try_block(app: &App, height: u32, txs: Vec<Vec<u8>>) -> Result<tendermint::abci::response::FinalizeBlock, crate::AppError> {
        app.finalize_block(request::FinalizeBlock {
            txs: txs.into_iter().map(Into::into).collect(),
            decided_last_commit: CommitInfo { round: Default::default(), votes: vec![] },
            misbehavior: vec![],
            hash: tendermint::Hash::Sha256([height as u8; 32]),
            height: height.into(),
            time: tendermint::Time::from_unix_timestamp(1_700_000_000 + i64::from(height) * 5, 0).unwrap(),
            next_validators_hash: tendermint::Hash::None,
            proposer_address: tendermint::account::Id::new([1; 20]),
        })
        .await
    }

    /// FinalizeBlock at `height`, which must succeed.
    pub(crate) async fn block(app: &App, height: u32, txs: Vec<Vec<u8>>) -> tendermint::abci::response::FinalizeBlock {
        try_block(app, height, txs).await.unwrap()
    }

    /// The probe's counter in the latest state.
    pub(crate) async fn counter_now(app: &App) -> u64 {
        counter(&app.snapshot(), &GasMeter::infinite()).await.unwrap()
    }

    /// Funded keys, the first one governance.
    pub(crate) fn genesis(keys: &[&lantau_crypto::SecretKey]) -> crate::AppGenesis {
        let mut g = crate::AppGenesis { evm_chain_id: 852, ..Default::default() };
        for k in keys {
            g.bank.balances.push(lantau_bank::genesis::Balance {
                address: k.address(),
                coins: vec![lantau_primitives::Coin::new(lantau_primitives::NATIVE_DENOM, 10u128.pow(24))],
            });
        }
        g.authority.governance = Some(keys[0].address());
        g
    }
}

#[cfg(test)]
mod tests {
    use lantau_client::{SignerData, TxBuilder};
    use tendermint::abci::{request, types::CommitInfo};

    use super::kit::*;
    use super::*;

    // A gate that reads a key nothing else names (the probe's): the recheck, the checks of a
    // proposal and CometBFT's recheck all notice a block that writes it and nothing else the
    // waiting transaction read, and keep the verdict after a block that does not.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_to_a_key_only_a_gate_reads_makes_every_recheck_path_screen_again() {
        let a = lantau_crypto::SecretKey::from_bytes(&[7; 32]).unwrap();
        let b = lantau_crypto::SecretKey::from_bytes(&[8; 32]).unwrap();
        let (_dir, app) = start(&genesis(&[&a, &b])).await;
        // The embedded engine's way: admission keeps a footprint; the rebuild rechecks with it.
        let waiting = bump(&app, &a, 0, false).await;
        let mut kept = None;
        let out = app
            .check_tx_admit(&waiting, |d, fp| {
                kept = Some((d.clone(), fp));
                Ok(())
            })
            .await;
        assert!(out.result.is_ok(), "{:?}", out.result);
        let (tx, fp) = kept.unwrap();

        // A block that writes what the waiting transaction did not read: replayed.
        let r = block(&app, 1, vec![bump(&app, &b, 0, false).await]).await;
        assert!(r.tx_results[0].code.is_ok(), "{}", r.tx_results[0].log);
        app.commit_keeping_check_state().await.unwrap();
        let mut rebuild = app.begin_check_rebuild().await.unwrap();
        let fp = app.recheck(&mut rebuild, &tx, &fp).await.unwrap();
        assert_eq!(rebuild.counts(), (1, 0), "nothing it read changed: replayed");
        app.finish_check_rebuild(rebuild, Vec::new).await;

        // A block that writes only the probe's gate key (and the other signer's account).
        let r = block(&app, 2, vec![bump(&app, &b, 1, true).await]).await;
        assert!(r.tx_results[0].code.is_ok(), "{}", r.tx_results[0].log);
        app.commit_keeping_check_state().await.unwrap();
        let mut rebuild = app.begin_check_rebuild().await.unwrap();
        let e = app.recheck(&mut rebuild, &tx, &fp).await.unwrap_err();
        assert_eq!((e.codespace, e.code), ("probe", 2), "{}", e.log);
        assert_eq!(rebuild.counts(), (0, 1), "screened again");
        app.finish_check_rebuild(rebuild, Vec::new).await;

        // A proposal of it, verified with its footprint, drops it.
        app.offer_decoded([(tx.clone(), fp.clone())]);
        let p = app
            .prepare_proposal(request::PrepareProposal {
                max_tx_bytes: 1 << 20,
                txs: vec![waiting.clone().into()],
                local_last_commit: None,
                misbehavior: vec![],
                height: 3u32.into(),
                time: tendermint::Time::from_unix_timestamp(1_700_000_015, 0).unwrap(),
                next_validators_hash: tendermint::Hash::None,
                proposer_address: tendermint::account::Id::new([1; 20]),
            })
            .await;
        assert!(p.txs.is_empty(), "the proposal verified it on the new state");
        app.release().await;

        // CometBFT's way: CheckTx New, then Recheck after each commit.
        let (_dir, app) = start(&genesis(&[&a, &b])).await;
        let check = |kind, tx: &Vec<u8>| app.check_tx(request::CheckTx { tx: tx.clone().into(), kind });
        assert!(check(request::CheckTxKind::New, &waiting).await.code.is_ok());
        block(&app, 1, vec![bump(&app, &b, 0, false).await]).await;
        app.commit().await.unwrap();
        let r = check(request::CheckTxKind::Recheck, &waiting).await;
        assert!(r.code.is_ok(), "{}", r.log);
        block(&app, 2, vec![bump(&app, &b, 1, true).await]).await;
        app.commit().await.unwrap();
        let r = check(request::CheckTxKind::Recheck, &waiting).await;
        assert_eq!((r.codespace.as_str(), r.code.value()), ("probe", 2), "{}", r.log);
        app.release().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_module_in_the_list_gets_genesis_routing_and_a_query() {
        let key = lantau_crypto::SecretKey::from_bytes(&[7; 32]).unwrap();
        let mut g = crate::AppGenesis { evm_chain_id: 852, ..Default::default() };
        g.bank.balances.push(lantau_bank::genesis::Balance {
            address: key.address(),
            coins: vec![lantau_primitives::Coin::new(lantau_primitives::NATIVE_DENOM, 10u128.pow(24))],
        });
        g.authority.governance = Some(key.address());
        g.probe.start = 5;
        let json = serde_json::to_value(&g).unwrap();
        assert_eq!(json["probe"], serde_json::json!({"start": 5}), "the section is in the genesis file");

        let (_dir, app) = start(&g).await;
        // Genesis.
        let value = |bytes: Vec<u8>| <QueryCounterResponse as prost::Message>::decode(bytes.as_slice()).unwrap().value;
        assert_eq!(value(app.queries().grpc_query(0, QUERY_COUNTER, &[]).await.unwrap()), 5);

        // Routing: a signed MsgBump is decoded by the probe and executed by it.
        let any = Any { type_url: MSG_BUMP.into(), value: prost::Message::encode_to_vec(&MsgBump { signer: key.address().to_bech32(), by: 3, close: false }) };
        let tx = TxBuilder::new(vec![any]).gas(200_000).sign(&key, &SignerData { chain_id: "probe-1".into(), account_number: 0, sequence: 0 });
        assert!(app.check_tx_bytes(&tx).await.result.is_ok());
        let r = app
            .finalize_block(request::FinalizeBlock {
                txs: vec![tx.into()],
                decided_last_commit: CommitInfo { round: Default::default(), votes: vec![] },
                misbehavior: vec![],
                hash: tendermint::Hash::Sha256([1; 32]),
                height: 1u32.into(),
                time: tendermint::Time::from_unix_timestamp(1_700_000_005, 0).unwrap(),
                next_validators_hash: tendermint::Hash::None,
                proposer_address: tendermint::account::Id::new([1; 20]),
            })
            .await
            .unwrap();
        app.commit().await.unwrap();
        let res = &r.tx_results[0];
        assert!(res.code.is_ok(), "{}", res.log);
        let module = res
            .events
            .iter()
            .find(|e| e.kind == "message")
            .unwrap()
            .attributes
            .iter()
            .find(|a| a.key_str().unwrap() == "module")
            .unwrap()
            .value_str()
            .unwrap()
            .to_string();
        assert_eq!(module, "probe");
        assert!(res.events.iter().any(|e| e.kind == "probe_bumped"));

        // The query, through the list.
        assert_eq!(value(app.queries().grpc_query(0, QUERY_COUNTER, &[]).await.unwrap()), 8);
        assert!(matches!(app.queries().grpc_query(0, "/lantau.nothing.v1.Query/X", &[]).await, Err(QueryError::InvalidArgument(_))));
        assert!(crate::modules::MODULE_NAMES.contains(&"probe"));
        app.release().await;
    }
}
