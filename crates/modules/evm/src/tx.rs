//! Signed Ethereum transactions: decoding (EIP-2718: legacy with EIP-155, EIP-2930, EIP-1559),
//! the stateless checks, and sender recovery with libsecp256k1 (remembered per transaction, so
//! a node recovers each sender once however often the bytes are checked).
//!
//! Everything here is pure: no state, no clock. Nothing outside this crate sees an alloy type.

use alloy_consensus::{Transaction as _, TxEnvelope};
use alloy_eips::eip2718::Decodable2718 as _;
use lantau_primitives::{Address, MIN_GAS_PRICE};

use crate::error::EvmError;

/// The base fee: fixed at the chain's gas price floor (1 gwei), never adjusted by demand.
pub const BASE_FEE: u128 = MIN_GAS_PRICE;

/// A decoded, signature-checked Ethereum transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EthTx {
    /// keccak256 of the EIP-2718 bytes: the hash a wallet holds.
    pub hash: [u8; 32],
    /// The EIP-2718 bytes.
    pub raw: Vec<u8>,
    /// The recovered sender.
    pub from: Address,
    /// The sender's compressed public key (recovered with the sender).
    pub pubkey: [u8; 33],
    /// The EIP-2718 type: 0 legacy, 1 EIP-2930, 2 EIP-1559.
    pub tx_type: u8,
    /// The chain id the signature commits to.
    pub chain_id: u64,
    /// The nonce: the sender's account sequence.
    pub nonce: u64,
    /// The gas limit.
    pub gas_limit: u64,
    /// `gasPrice` (legacy, 2930) or `maxFeePerGas` (1559).
    pub max_fee_per_gas: u128,
    /// `maxPriorityFeePerGas` (1559 only).
    pub max_priority_fee_per_gas: Option<u128>,
    /// The callee; `None` deploys a contract.
    pub to: Option<Address>,
    /// The value in `alantau` (wei): 32 bytes big-endian.
    pub value: [u8; 32],
    /// The calldata (or the init code).
    pub input: Vec<u8>,
    /// The access list: (address, storage keys).
    pub access_list: Vec<(Address, Vec<[u8; 32]>)>,
    /// The ECDSA signature (r, s, y parity), as the JSON-RPC shows it.
    pub signature: ([u8; 32], [u8; 32], bool),
}

impl EthTx {
    /// Whether the transaction carries no signature but names its sender (s = 0, r the
    /// sender's address): what a dev chain's `eth_sendTransaction` makes for an impersonated
    /// account. Only a chain whose genesis allows impersonation runs it.
    pub fn impersonated(&self) -> bool {
        self.signature.1 == [0; 32]
    }

    /// The price per gas the sender pays with the base fee fixed at [`BASE_FEE`]:
    /// `gasPrice`, or `min(maxFeePerGas, BASE_FEE + maxPriorityFeePerGas)`.
    pub fn effective_gas_price(&self) -> u128 {
        match self.max_priority_fee_per_gas {
            Some(tip) => self.max_fee_per_gas.min(BASE_FEE.saturating_add(tip)),
            None => self.max_fee_per_gas,
        }
    }

    /// The fee paid up front: gas limit × effective gas price.
    pub fn max_fee(&self) -> u128 {
        u128::from(self.gas_limit).saturating_mul(self.effective_gas_price())
    }

    /// The value as an amount of `alantau`, when it fits (any balance does).
    pub fn value_u128(&self) -> Option<u128> {
        let (high, low) = self.value.split_at(16);
        if high.iter().any(|b| *b != 0) {
            return None;
        }
        let mut a = [0u8; 16];
        a.copy_from_slice(low);
        Some(u128::from_be_bytes(a))
    }

    /// Refuses a signature for another chain.
    pub fn check_chain(&self, chain_id: u64) -> Result<(), EvmError> {
        if self.chain_id != chain_id {
            return Err(EvmError::WrongChainId { got: self.chain_id, want: chain_id });
        }
        Ok(())
    }

    /// The hash as a wallet prints it: `0x` and lower-case hex.
    pub fn hash_hex(&self) -> String {
        const_hex::encode_prefixed(self.hash)
    }

    /// The address a deployment deploys to (`CREATE` by the sender at its nonce), as the
    /// receipt's `contractAddress` names it whatever the outcome; `None` for a call.
    pub fn created_address(&self) -> Option<Address> {
        match self.to {
            Some(_) => None,
            None => Some(Address(alloy_primitives::Address::from(self.from.0).create(self.nonce).0 .0)),
        }
    }
}

/// How many recovered senders are remembered.
const SENDER_MEMO: usize = 65_536;

type Recovered = (Address, [u8; 33]);

fn memo() -> &'static parking_lot::Mutex<std::collections::BTreeMap<[u8; 32], Recovered>> {
    static MEMO: std::sync::OnceLock<parking_lot::Mutex<std::collections::BTreeMap<[u8; 32], Recovered>>> = std::sync::OnceLock::new();
    MEMO.get_or_init(Default::default)
}

/// The largest init code a deployment may carry (EIP-3860: twice EIP-170's code size).
pub const MAX_INITCODE_SIZE: usize = revm::primitives::eip3860::MAX_INITCODE_SIZE;

/// What the EVM checks before it runs a transaction and needs no state: the init code size and
/// the gas the transaction must carry before its first instruction, under the chain's rules
/// ([`crate::exec::SPEC`]).
fn check_intrinsic(env: &TxEnvelope) -> Result<(), EvmError> {
    let create = env.to().is_none();
    let input = env.input();
    if create && input.len() > MAX_INITCODE_SIZE {
        return Err(EvmError::InitCodeTooLarge { size: input.len(), limit: MAX_INITCODE_SIZE });
    }
    let (accounts, slots) = env.access_list().map_or((0u64, 0u64), |l| (l.0.len() as u64, l.0.iter().map(|i| i.storage_keys.len() as u64).sum()));
    let need = revm::context_interface::cfg::gas::calculate_initial_tx_gas(crate::exec::SPEC, input, create, accounts, slots, 0, None);
    let intrinsic = need.initial_regular_gas.saturating_add(need.initial_state_gas);
    let gas = env.gas_limit();
    if gas < intrinsic {
        return Err(EvmError::IntrinsicGas(format!("gas {gas}, minimum needed {intrinsic}")));
    }
    if gas < need.floor_gas {
        return Err(EvmError::FloorDataGas { gas, needed: need.floor_gas });
    }
    Ok(())
}

/// Decodes EIP-2718 bytes, checks what needs no state and recovers the sender. The chain id
/// is checked by [`EthTx::check_chain`] (the ante knows the chain's).
///
/// Refused: bytes that do not decode or have trailing data; types other than 0, 1, 2 (blob and
/// set-code transactions); a legacy transaction without EIP-155 replay protection; a high-S
/// signature; a gas limit of zero; a fee per gas under the 1 gwei floor; a priority fee over
/// the fee cap; a deployment whose init code is over EIP-3860's limit; a gas limit under the
/// intrinsic gas or EIP-7623's calldata floor. geth refuses each of these at submission: the
/// EVM would refuse to run them, so none may be included.
pub fn decode(raw: &[u8]) -> Result<EthTx, EvmError> {
    let env = TxEnvelope::decode_2718_exact(raw).map_err(|e| EvmError::Decode(e.to_string()))?;
    let tx_type = match &env {
        TxEnvelope::Legacy(_) => 0u8,
        TxEnvelope::Eip2930(_) => 1,
        TxEnvelope::Eip1559(_) => 2,
        TxEnvelope::Eip4844(_) => return Err(EvmError::UnsupportedType(3)),
        TxEnvelope::Eip7702(_) => return Err(EvmError::UnsupportedType(4)),
    };
    let signed_chain = env.chain_id().ok_or(EvmError::NotReplayProtected)?;
    if env.gas_limit() == 0 {
        return Err(EvmError::IntrinsicGas("gas limit is zero".into()));
    }
    check_intrinsic(&env)?;
    let max_fee = env.max_fee_per_gas();
    if max_fee < BASE_FEE {
        return Err(EvmError::FeeTooLow { got: max_fee, floor: BASE_FEE });
    }
    let tip = env.max_priority_fee_per_gas();
    if let Some(t) = tip {
        if t > max_fee {
            return Err(EvmError::TipAboveFeeCap { tip: t, cap: max_fee });
        }
    }
    let sig = env.signature();
    let (r, s) = (sig.r().to_be_bytes::<32>(), sig.s().to_be_bytes::<32>());
    let hash: [u8; 32] = env.tx_hash().0;
    let recovered = memo().lock().get(&hash).copied();
    let (from, pubkey) = match recovered {
        Some(v) => v,
        // No signature has s = 0: the form of an impersonated sender on a dev chain, r the
        // sender's address (the ante refuses it on any other chain).
        None if s == [0; 32] => {
            let Some(addr) = r.strip_prefix(&[0u8; 12]) else {
                return Err(EvmError::Signature("invalid signature: s is zero and r is not an address".into()));
            };
            let mut a = [0u8; 20];
            a.copy_from_slice(addr);
            (Address(a), [0; 33])
        }
        None => {
            let mut rsv = [0u8; 65];
            rsv[..32].copy_from_slice(&r);
            rsv[32..64].copy_from_slice(&s);
            rsv[64] = u8::from(sig.v());
            let digest = env.signature_hash().0;
            let pk = lantau_crypto::recover_public_key(&digest, &rsv).map_err(|e| EvmError::Signature(e.to_string()))?;
            let v = (pk.address(), pk.to_compressed());
            let mut m = memo().lock();
            if m.len() >= SENDER_MEMO {
                m.clear();
            }
            m.insert(hash, v);
            v
        }
    };
    Ok(EthTx {
        hash,
        raw: raw.to_vec(),
        from,
        pubkey,
        tx_type,
        chain_id: signed_chain,
        nonce: env.nonce(),
        gas_limit: env.gas_limit(),
        max_fee_per_gas: max_fee,
        max_priority_fee_per_gas: tip,
        to: env.to().map(|a| Address(a.0 .0)),
        value: env.value().to_be_bytes::<32>(),
        input: env.input().to_vec(),
        access_list: env
            .access_list()
            .map(|l| l.0.iter().map(|i| (Address(i.address.0 .0), i.storage_keys.iter().map(|k| k.0).collect())).collect())
            .unwrap_or_default(),
        signature: (r, s, sig.v()),
    })
}

/// The transaction `eth_sendTransaction` makes for an impersonated `from` on a dev chain: an
/// EIP-1559 transaction whose signature is the sender's marker (r = the address, s = 0), as
/// [`EthTx::impersonated`] reads it.
#[allow(clippy::too_many_arguments)]
pub fn impersonated_raw(
    chain_id: u64,
    from: &Address,
    nonce: u64,
    gas_limit: u64,
    max_fee_per_gas: u128,
    max_priority_fee_per_gas: u128,
    to: Option<&Address>,
    value: [u8; 32],
    input: &[u8],
) -> Vec<u8> {
    use alloy_consensus::{SignableTransaction as _, TxEip1559};
    use alloy_eips::eip2718::Encodable2718 as _;
    use alloy_primitives::{Address as EA, Bytes, Signature, TxKind, U256};
    let tx = TxEip1559 {
        chain_id,
        nonce,
        gas_limit,
        max_fee_per_gas,
        max_priority_fee_per_gas,
        to: match to {
            Some(t) => TxKind::Call(EA::from(t.0)),
            None => TxKind::Create,
        },
        value: U256::from_be_bytes(value),
        access_list: Default::default(),
        input: Bytes::copy_from_slice(input),
    };
    let mut r = [0u8; 32];
    r[12..].copy_from_slice(&from.0);
    let sig = Signature::new(U256::from_be_bytes(r), U256::ZERO, false);
    alloy_consensus::TxEnvelope::from(tx.into_signed(sig)).encoded_2718()
}
