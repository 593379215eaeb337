//! Ethereum transactions as a wallet builds them: signing with the chain's key type (the same
//! eth_secp256k1 key signs on both paths), the stablecoin precompile's calldata (generated from
//! `abi/IStablecoin.sol`, the file the chain's precompile is generated from), and the address a
//! deployment lands at.

use alloy_consensus::{SignableTransaction, TxEip1559, TxEip2930, TxEnvelope, TxLegacy};
use alloy_eips::eip2718::Encodable2718 as _;
use alloy_primitives::{Bytes, Signature, TxKind, U256};
use lantau_crypto::SecretKey;
use lantau_primitives::Address;

/// The fields a sender chooses.
#[derive(Debug, Clone, Default)]
pub struct Unsigned {
    /// The chain id signed; `None` makes a pre-EIP-155 legacy transaction (refused by the
    /// chain: for tests of that refusal).
    pub chain_id: Option<u64>,
    /// Nonce.
    pub nonce: u64,
    /// Gas limit.
    pub gas_limit: u64,
    /// `gasPrice` (legacy, 2930) or `maxFeePerGas` (1559).
    pub max_fee_per_gas: u128,
    /// `maxPriorityFeePerGas`: `Some` makes an EIP-1559 transaction.
    pub max_priority_fee_per_gas: Option<u128>,
    /// With an access list (and no priority fee): an EIP-2930 transaction.
    pub access_list: Option<Vec<(Address, Vec<[u8; 32]>)>>,
    /// Callee; `None` deploys.
    pub to: Option<Address>,
    /// Value in `alantau`.
    pub value: u128,
    /// Calldata or init code.
    pub input: Vec<u8>,
}

fn sign_hash(key: &SecretKey, hash: [u8; 32]) -> Signature {
    let rsv = key.sign_digest(&hash);
    let mut r = [0u8; 32];
    let mut s = [0u8; 32];
    r.copy_from_slice(&rsv[..32]);
    s.copy_from_slice(&rsv[32..64]);
    let v = rsv[64];
    Signature::new(U256::from_be_bytes(r), U256::from_be_bytes(s), v == 1 || v == 28)
}

/// Signs and returns the EIP-2718 bytes (what `eth_sendRawTransaction` takes).
pub fn sign(key: &SecretKey, u: &Unsigned) -> Vec<u8> {
    let to = match u.to {
        Some(a) => TxKind::Call(alloy_primitives::Address::from(a.0)),
        None => TxKind::Create,
    };
    let al = |l: &Vec<(Address, Vec<[u8; 32]>)>| {
        alloy_eips::eip2930::AccessList(
            l.iter()
                .map(|(a, keys)| alloy_eips::eip2930::AccessListItem {
                    address: alloy_primitives::Address::from(a.0),
                    storage_keys: keys.iter().map(|k| alloy_primitives::B256::from(*k)).collect(),
                })
                .collect(),
        )
    };
    let input = Bytes::from(u.input.clone());
    let value = U256::from(u.value);
    let env: TxEnvelope = match (u.max_priority_fee_per_gas, &u.access_list) {
        (Some(tip), list) => {
            let tx = TxEip1559 {
                chain_id: u.chain_id.unwrap_or(0),
                nonce: u.nonce,
                gas_limit: u.gas_limit,
                max_fee_per_gas: u.max_fee_per_gas,
                max_priority_fee_per_gas: tip,
                to,
                value,
                access_list: list.as_ref().map(al).unwrap_or_default(),
                input,
            };
            let sig = sign_hash(key, tx.signature_hash().0);
            tx.into_signed(sig).into()
        }
        (None, Some(list)) => {
            let tx = TxEip2930 {
                chain_id: u.chain_id.unwrap_or(0),
                nonce: u.nonce,
                gas_price: u.max_fee_per_gas,
                gas_limit: u.gas_limit,
                to,
                value,
                access_list: al(list),
                input,
            };
            let sig = sign_hash(key, tx.signature_hash().0);
            tx.into_signed(sig).into()
        }
        (None, None) => {
            let tx = TxLegacy { chain_id: u.chain_id, nonce: u.nonce, gas_price: u.max_fee_per_gas, gas_limit: u.gas_limit, to, value, input };
            let sig = sign_hash(key, tx.signature_hash().0);
            tx.into_signed(sig).into()
        }
    };
    env.encoded_2718()
}

alloy_sol_types::sol!("../../abi/IStablecoin.sol");

/// The calldata of `transferWithTravelRule(to, amount, payload)`.
pub fn transfer_with_travel_rule_calldata(to: &Address, amount: u128, payload: &[u8]) -> Vec<u8> {
    use alloy_sol_types::SolCall as _;
    IStablecoin::transferWithTravelRuleCall { to: alloy_primitives::Address::from(to.0), amount: U256::from(amount), payload: Bytes::from(payload.to_vec()) }
        .abi_encode()
}

/// The calldata of `redeem(amount, payoutRef)`: a redemption request.
pub fn redeem_calldata(amount: u128, payout_ref: &str) -> Vec<u8> {
    use alloy_sol_types::SolCall as _;
    IStablecoin::redeemCall { amount: U256::from(amount), payoutRef: Bytes::from(payout_ref.as_bytes().to_vec()) }.abi_encode()
}

/// The calldata of the plain ERC-20 `transfer(to, amount)` (which the precompile refuses).
pub fn transfer_calldata(to: &Address, amount: u128) -> Vec<u8> {
    use alloy_sol_types::SolCall as _;
    IStablecoin::transferCall { to: alloy_primitives::Address::from(to.0), amount: U256::from(amount) }.abi_encode()
}

/// The address a `CREATE` by `sender` at `nonce` deploys to: keccak256(rlp([sender, nonce]))[12..].
pub fn create_address(sender: &Address, nonce: u64) -> Address {
    Address(alloy_primitives::Address::from(sender.0).create(nonce).0 .0)
}
