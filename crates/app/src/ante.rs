//! The ante checks: everything a transaction must pass before its messages run.
//!
//! Run at admission (CheckTx, on the check overlay), again at execution (FinalizeBlock, on the
//! block overlay: a proposer can put anything in a block), and in simulation (without signature
//! verification). Order: size gas → timeout → account → public key → sequence → signature
//! (committing to the chain id and account number) → fee payment → key set and sequence bump.
//! All writes happen last, on an overlay the caller discards on error.

use base64::Engine as _;
use cnidarium::StateWrite;
use lantau_auth::{AuthRead, AuthWrite};
use lantau_bank::BankWrite;
use lantau_module_api::{event, gas, BlockCtx, Event, GasMeter, SdkError, TxError};
use lantau_primitives::{Coin, NATIVE_DENOM};

use crate::sigcache::SigCache;
use crate::tx::DecodedTx;

/// Where the ante runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Admission.
    Check,
    /// Block execution.
    Deliver,
    /// Gas estimation: no signature verification.
    Simulate,
}

pub use lantau_bank::fee_collector;

/// Verifies the signature of `tx` for `chain_id` and `account_number`, using and feeding the
/// cache. Pure apart from the cache.
pub(crate) fn verify_signature(tx: &DecodedTx, pubkey: &[u8; 33], chain_id: &str, account_number: u64, sigs: &SigCache) -> Result<(), TxError> {
    if tx.verified_for.get().is_some_and(|v| v.account_number == account_number && v.pubkey == *pubkey && v.chain_id == chain_id) {
        return Ok(());
    }
    let verified = || {
        let _ = tx.verified_for.set(crate::tx::VerifiedFor { chain_id: chain_id.to_string(), account_number, pubkey: *pubkey });
    };
    let digest = lantau_crypto::keccak256(&tx.sign_doc_bytes(chain_id, account_number));
    let key = SigCache::key(&digest, pubkey, &tx.signature);
    if sigs.contains(&key) {
        verified();
        return Ok(());
    }
    let fail = |why: String| -> TxError {
        SdkError::Unauthorized(format!(
            "signature verification failed ({why}); please verify account number ({account_number}), sequence ({}) and chain-id ({chain_id})",
            tx.sequence
        ))
        .into()
    };
    // A 65-byte signature pins V: the key recovered from it must be this key. Comparing the
    // recovered key's compressed bytes skips parsing (decompressing) `pubkey`; any other
    // outcome takes the full path below, which gives the same verdict and message as ever.
    if tx.signature.len() == 65 {
        if let Ok(recovered) = lantau_crypto::recover_public_key(&digest, &tx.signature) {
            if recovered.to_compressed() == *pubkey {
                sigs.insert(key);
                verified();
                return Ok(());
            }
        }
    }
    let pk = lantau_crypto::PublicKey::from_compressed(pubkey).map_err(|e| fail(e.to_string()))?;
    pk.verify_digest(&digest, &tx.signature).map_err(|e| fail(e.to_string()))?;
    sigs.insert(key);
    verified();
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn run<S: StateWrite + Send + Sync>(
    state: &mut S,
    tx: &DecodedTx,
    block: &BlockCtx,
    gas: &GasMeter,
    sigs: &SigCache,
    mode: Mode,
    mut events: Option<&mut Vec<Event>>,
) -> Result<(), TxError> {
    // An Ethereum transaction pays for its bytes, its signature and this ante's reads and
    // writes (its account, its fee) in the EVM's intrinsic gas, as in Cosmos EVM: Ethereum's
    // schedule prices a plain transfer at 21,000 whatever the chain's own schedule charges for
    // the same store work, and wallets sign plain transfers with exactly that.
    let eth = tx.eth_hash.is_some();
    let unmetered = GasMeter::infinite();
    let gas = if eth { &unmetered } else { gas };
    // An Ethereum transaction naming its sender without a signature (a dev chain's
    // impersonated account) runs only where genesis allows it; anywhere else it is an invalid
    // signature, refused before anything is written.
    let mut impersonated = false;
    if eth {
        let chain = lantau_evm::EvmRead::evm_chain_id(&*state).await?;
        if let Some(crate::msg::Msg::Evm(m)) = tx.msgs.first() {
            m.eth_tx().check_chain(chain)?;
            impersonated = m.eth_tx().impersonated();
        }
        if impersonated && !lantau_evm::EvmRead::impersonation_allowed(&*state).await? {
            return Err(lantau_evm::EvmError::Signature("invalid signature: s is zero (an impersonated sender, which only a dev chain runs)".into()).into());
        }
    } else {
        gas.consume((tx.size as u64).saturating_mul(gas::TX_SIZE_PER_BYTE), "txSize")?;
    }
    if tx.timeout_height != 0 && block.height > tx.timeout_height {
        return Err(SdkError::TxTimeoutHeight(format!("block height: {}, timeout height: {}", block.height, tx.timeout_height)).into());
    }
    let signer = tx.signer;
    let mut acct = state.account(gas, &signer).await?.ok_or_else(|| SdkError::UnknownAddress(format!("account {signer} does not exist")))?;

    let stored: Option<[u8; 33]> =
        if acct.pub_key.is_empty() { None } else { Some(acct.pub_key.as_ref().try_into().map_err(|_| SdkError::Internal("corrupt stored pubkey".into()))?) };
    let pubkey = match (stored, tx.pubkey) {
        (Some(s), Some(t)) if s != t => return Err(SdkError::InvalidPubKey(format!("pubkey does not match the one stored for {signer}")).into()),
        (Some(s), _) => Some(s),
        (None, Some(t)) => Some(t),
        // An impersonated sender proves no key (and records none).
        (None, None) if impersonated => None,
        (None, None) => return Err(SdkError::InvalidPubKey(format!("account {signer} has no public key yet: include it in the signer info")).into()),
    };

    if tx.sequence != acct.sequence {
        return Err(SdkError::WrongSequence(format!("account sequence mismatch, expected {}, got {}", acct.sequence, tx.sequence)).into());
    }

    if !eth {
        gas.consume(gas::SIG_VERIFY, "ante verify: eth_secp256k1")?;
    }
    if mode != Mode::Simulate && !eth {
        let pubkey = pubkey.ok_or_else(|| SdkError::InvalidPubKey(format!("account {signer} has no public key")))?;
        verify_signature(tx, &pubkey, &block.chain_id, acct.account_number, sigs)?;
    }

    // A simulation without a fee still pays the floor for its gas limit, so the estimate
    // includes the fee payment the real transaction will make.
    let fee_amount = if mode == Mode::Simulate && tx.fee.is_zero() { lantau_primitives::min_fee(tx.gas_limit) } else { tx.fee };
    if !fee_amount.is_zero() {
        let fee = [Coin::new(NATIVE_DENOM, fee_amount)];
        state
            .transfer_plain(gas, &signer, &fee_collector(), &fee, events.as_deref_mut())
            .await
            .map_err(|e| e.wrap(format!("{} is smaller than {}: insufficient funds to pay fee", signer, fee[0])))?;
        if let Some(events) = events.as_deref_mut() {
            events.push(event("tx", [("fee", fee[0].to_string()), ("fee_payer", signer.to_bech32())]));
        }
    }

    if let (None, Some(pk)) = (stored, pubkey) {
        acct.pub_key = pk.to_vec().into();
    }
    acct.sequence = acct.sequence.checked_add(1).ok_or_else(|| SdkError::Internal("sequence overflow".into()))?;
    state.put_account(gas, &acct)?;
    // Where the caller discards the events (admission) none is built.
    let Some(events) = events else { return Ok(()) };
    events.push(event("tx", [("acc_seq", format!("{}/{}", signer.to_bech32(), tx.sequence))]));
    // An included Ethereum transaction is found by its hash (its receipt) whatever follows:
    // the ante's events stay even when the EVM then refuses to run it (Cosmos EVM's ante
    // emits the same).
    if let Some(h) = tx.eth_hash {
        events.push(event("ethereum_tx", [("ethereumTxHash", format!("0x{}", const_hex::encode(h)))]));
    }
    events.push(event("tx", [("signature", base64::engine::general_purpose::STANDARD.encode(&tx.signature))]));
    Ok(())
}
