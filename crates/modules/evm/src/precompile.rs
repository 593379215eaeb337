//! The extended ERC-20 precompile: one per stablecoin token pair, at the pair's address, on the
//! same ledger as the bank balance.
//!
//! A call decodes into one typed enum, [`Call`]; its single match ([`Call::spec`]) gives the
//! gas, the mutability and the handler. Views answer from the bank and the denom record.
//! `transferWithTravelRule` opens the same screening session as a Cosmos transaction
//! ([`lantau_compliance::screening::Session`]: the one gate chain, with `msg.sender` as the
//! debited party), moves the balance through the bank's one chokepoint with the token the
//! session holds for it, and closes the session, which records the audit rows, flags and
//! anchor exactly as on the Cosmos path.
//!
//! Decided (`docs/decisions.md`, "EVM path"): `transfer` reverts and tells the caller to use
//! the Travel Rule method; `approve` and `transferFrom` revert (an allowance would let a
//! spender move a holder's balance under a screening of someone else); `allowance` answers 0.

use alloy_primitives::{Address as EthAddress, U256};
use alloy_sol_types::{SolCall, SolError, SolEvent, SolInterface};
use cnidarium::StateWrite;
use lantau_bank::{BankRead, BankWrite, Leg};
use lantau_compliance::screening::Session;
use lantau_compliance::TravelRulePayload;
use lantau_module_api::{BlockCtx, Event, Fact, GasMeter, TxError};
use lantau_primitives::{Address, Coin};
use prost::Message as _;

// The stablecoin's extended ERC-20 interface, from the one ABI file the client crate's
// calldata builders are generated from too.
alloy_sol_types::sol!("../../../abi/IStablecoin.sol");

/// The revert reason of the disabled `transfer`.
pub const TRANSFER_DISABLED: &str = "transfer is disabled for this stablecoin: use transferWithTravelRule(address,uint256,bytes) with a Travel Rule payload";
/// The revert reason of `approve` and `transferFrom`.
pub const ALLOWANCES_DISABLED: &str = "allowances are not supported: only the holder moves its balance, with transferWithTravelRule";

/// Whether a call may change state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutability {
    /// Reads only: allowed under STATICCALL and DELEGATECALL.
    View,
    /// Writes: refused under STATICCALL, DELEGATECALL and CALLCODE.
    NonPayable,
}

/// One decoded call of the precompile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// `name()`.
    Name,
    /// `symbol()`.
    Symbol,
    /// `decimals()`.
    Decimals,
    /// `totalSupply()`.
    TotalSupply,
    /// `balanceOf(address)`.
    BalanceOf(Address),
    /// `allowance(address,address)`: always 0.
    Allowance,
    /// `transfer(address,uint256)`: disabled.
    Transfer,
    /// `approve(address,uint256)`: disabled.
    Approve,
    /// `transferFrom(address,address,uint256)`: disabled.
    TransferFrom,
    /// `transferWithTravelRule(address,uint256,bytes)`.
    TransferWithTravelRule {
        /// The recipient.
        to: Address,
        /// The amount in base units (checked against the 128-bit ledger at decode).
        amount: U256,
        /// The protobuf-serialised Travel Rule payload.
        payload: Vec<u8>,
    },
    /// `redeem(uint256,bytes)`: a redemption request (`chain.stablecoin.v1.MsgRequestRedemption`).
    Redeem {
        /// The amount in base units.
        amount: U256,
        /// Where the fiat goes (UTF-8).
        payout_ref: Vec<u8>,
    },
}

/// Gas of a view: a storage read's worth (the store reads are charged on top).
const VIEW_GAS: u64 = 2_600;
/// Gas of the gated transfer before its store work (the gate chain's and the bank's reads and
/// writes are charged on top, as the Cosmos path charges them): what an EVM call costs the
/// node beyond that work (revm's context and journal, the receipt, logs and their index rows),
/// fitted so that an EVM transfer costs the same block time per gas as a Cosmos one
/// (`docs/performance.md`, "The gas schedule").
const TRANSFER_GAS: u64 = 90_000;
/// Gas of a call that only reverts.
const REFUSED_GAS: u64 = 200;

/// Why a call does not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// Revert with this reason (ABI `Error(string)`).
    Revert(String),
    /// Out of gas: the frame halts.
    OutOfGas,
}

fn addr(a: EthAddress) -> Address {
    Address(a.0 .0)
}

impl Call {
    /// Decodes calldata; a short or malformed one is a revert with the reason.
    pub fn decode(input: &[u8]) -> Result<Self, CallError> {
        use IStablecoin::IStablecoinCalls as C;
        if input.len() < 4 {
            return Err(CallError::Revert(format!("calldata of {} bytes has no function selector", input.len())));
        }
        let call = C::abi_decode_validate(input).map_err(|e| CallError::Revert(format!("invalid calldata: {e}")))?;
        Ok(match call {
            C::name(_) => Call::Name,
            C::symbol(_) => Call::Symbol,
            C::decimals(_) => Call::Decimals,
            C::totalSupply(_) => Call::TotalSupply,
            C::balanceOf(c) => Call::BalanceOf(addr(c.account)),
            C::allowance(_) => Call::Allowance,
            C::transfer(_) => Call::Transfer,
            C::approve(_) => Call::Approve,
            C::transferFrom(_) => Call::TransferFrom,
            C::transferWithTravelRule(c) => Call::TransferWithTravelRule { to: addr(c.to), amount: c.amount, payload: c.payload.to_vec() },
            C::redeem(c) => Call::Redeem { amount: c.amount, payout_ref: c.payoutRef.to_vec() },
        })
    }

    /// The one dispatch table: base gas and mutability.
    pub fn spec(&self) -> (u64, Mutability) {
        match self {
            Call::Name | Call::Symbol | Call::Decimals | Call::TotalSupply | Call::BalanceOf(_) | Call::Allowance => (VIEW_GAS, Mutability::View),
            Call::Transfer | Call::Approve | Call::TransferFrom => (REFUSED_GAS, Mutability::NonPayable),
            Call::TransferWithTravelRule { .. } | Call::Redeem { .. } => (TRANSFER_GAS, Mutability::NonPayable),
        }
    }
}

/// ABI `Error(string)` revert data.
pub fn revert_data(reason: &str) -> Vec<u8> {
    alloy_sol_types::Revert::from(reason).abi_encode()
}

/// Decodes ABI `Error(string)` revert data.
pub fn revert_reason(data: &[u8]) -> Option<String> {
    alloy_sol_types::Revert::abi_decode(data).ok().map(|r| r.reason)
}

/// What the handler of a call produced.
#[derive(Debug, Default)]
pub struct Done {
    /// ABI-encoded return data.
    pub output: Vec<u8>,
    /// A `Transfer` log to emit: (from, to, amount).
    pub transfer_log: Option<(Address, Address, U256)>,
    /// The gate trace of a screened transfer (accepted or rejected).
    pub verdict: Option<lantau_compliance::gates::Verdict>,
}

/// Everything a call needs besides the store.
#[derive(Debug, Clone, Copy)]
pub struct CallCtx<'a> {
    /// The token's denom.
    pub denom: &'a str,
    /// `msg.sender`.
    pub caller: Address,
    /// The block.
    pub block: &'a BlockCtx,
    /// The Cosmos transaction hash the records cite (upper-case hex).
    pub tx_hash: &'a str,
}

/// Runs a decoded call on `state`, metering store work on `gas`. On `Err` the caller drops
/// `state` (the frame reverts); the verdict of a rejected transfer comes back in the error
/// path's `Done` so the trace is kept.
pub async fn execute<S: StateWrite + Send + Sync>(
    state: &mut S,
    gas: &GasMeter,
    call: &Call,
    cx: CallCtx<'_>,
    events: &mut Vec<Event>,
) -> Result<Done, (CallError, Option<lantau_compliance::gates::Verdict>)> {
    let store_err = |e: TxError| {
        if e.codespace == "sdk" && e.code == 11 {
            (CallError::OutOfGas, None)
        } else {
            (CallError::Revert(e.log), None)
        }
    };
    let word = |v: U256| v.to_be_bytes::<32>().to_vec();
    match call {
        Call::Name | Call::Symbol => {
            let rec = state.denom_record(gas, cx.denom).await.map_err(store_err)?;
            let display = rec.map(|r| r.display).unwrap_or_default();
            let s = if *call == Call::Name { format!("{display} stablecoin ({})", cx.denom) } else { display };
            Ok(Done { output: IStablecoin::nameCall::abi_encode_returns(&s), ..Default::default() })
        }
        Call::Decimals => {
            let rec = state.denom_record(gas, cx.denom).await.map_err(store_err)?;
            let d = rec.map(|r| r.decimals).unwrap_or(2);
            Ok(Done { output: word(U256::from(d)), ..Default::default() })
        }
        Call::TotalSupply => {
            let s = state.supply(gas, cx.denom).await.map_err(store_err)?;
            Ok(Done { output: word(U256::from(s.0)), ..Default::default() })
        }
        Call::BalanceOf(a) => {
            let b = state.balance(gas, a, cx.denom).await.map_err(store_err)?;
            Ok(Done { output: word(U256::from(b.0)), ..Default::default() })
        }
        Call::Allowance => Ok(Done { output: word(U256::ZERO), ..Default::default() }),
        Call::Transfer => Err((CallError::Revert(TRANSFER_DISABLED.into()), None)),
        Call::Approve | Call::TransferFrom => Err((CallError::Revert(ALLOWANCES_DISABLED.into()), None)),
        Call::Redeem { amount, payout_ref } => redeem(state, gas, cx, *amount, payout_ref, events).await,
        Call::TransferWithTravelRule { to, amount, payload } => {
            let amount_u128: u128 =
                (*amount).try_into().map_err(|_| (CallError::Revert(format!("amount {amount} exceeds the ledger's 128-bit range")), None))?;
            if amount_u128 == 0 {
                return Err((CallError::Revert("amount must be positive".into()), None));
            }
            let payload = TravelRulePayload::decode(payload.as_slice())
                .map_err(|e| (CallError::Revert(format!("the Travel Rule payload is not a chain.compliance.v1.TravelRulePayload: {e}")), None))?;
            let coin = Coin::new(cx.denom, amount_u128);
            let facts = vec![Fact { from: cx.caller, to: *to, amount: coin.clone(), msg_index: 0 }];
            // The precompile's transfer is the EVM form of a stablecoin MsgSend: the role gate
            // judges it as one (an agent key may make it within policy, a reviewer key not).
            let types = [lantau_bank::MSG_SEND];
            let mut session = Session::open(&*state, gas, cx.block, cx.caller, facts, Some(payload), &types, None).await.map_err(store_err)?;
            if let Some(rejection) = session.rejection().cloned() {
                return Err((CallError::Revert(rejection.log), Some(session.into_verdict())));
            }
            let leg = match session.take(&cx.caller, to, &coin) {
                Ok(t) => Leg::Screened(t),
                Err(e) => return Err((store_err(e).0, Some(session.into_verdict()))),
            };
            if let Err(e) = state.transfer(gas, vec![leg], events).await {
                return Err((store_err(e).0, Some(session.into_verdict())));
            }
            if let Err(e) = session.close(state, gas, cx.block, cx.tx_hash, events).await {
                return Err((store_err(e).0, Some(session.into_verdict())));
            }
            let verdict = session.into_verdict();
            Ok(Done {
                output: IStablecoin::transferWithTravelRuleCall::abi_encode_returns(&true),
                transfer_log: Some((cx.caller, *to, *amount)),
                verdict: Some(verdict),
            })
        }
    }
}

/// `redeem(uint256,bytes)`: the role gate judges it as the Cosmos message it stands for (a
/// sub-key may not redeem), then the stablecoin module's one request path runs.
async fn redeem<S: StateWrite + Send + Sync>(
    state: &mut S,
    gas: &GasMeter,
    cx: CallCtx<'_>,
    amount: U256,
    payout_ref: &[u8],
    events: &mut Vec<Event>,
) -> Result<Done, (CallError, Option<lantau_compliance::gates::Verdict>)> {
    let revert = |why: String| (CallError::Revert(why), None);
    let store_err = |e: TxError| if e.codespace == "sdk" && e.code == 11 { CallError::OutOfGas } else { CallError::Revert(e.log) };
    let units: u128 = amount.try_into().map_err(|_| revert(format!("amount {amount} exceeds the ledger's 128-bit range")))?;
    let payout_ref = std::str::from_utf8(payout_ref).map_err(|_| revert("payoutRef must be UTF-8 text".into()))?;
    let m = lantau_stablecoin::msg::RequestRedemption::new(cx.caller, cx.denom, &units.to_string(), payout_ref).map_err(|e| revert(e.log))?;
    let types = [lantau_stablecoin::msg::MSG_REQUEST_REDEMPTION];
    let session = Session::open(&*state, gas, cx.block, cx.caller, Vec::new(), None, &types, None).await.map_err(|e| (store_err(e), None))?;
    if let Some(rejection) = session.rejection().cloned() {
        return Err((CallError::Revert(rejection.log), Some(session.into_verdict())));
    }
    match lantau_stablecoin::handler::request_redemption(state, gas, cx.block, cx.tx_hash, &m, events).await {
        Ok(id) => Ok(Done {
            output: IStablecoin::redeemCall::abi_encode_returns(&U256::from(id)),
            transfer_log: Some((cx.caller, lantau_bank::redemption_escrow(), amount)),
            verdict: Some(session.into_verdict()),
        }),
        Err(e) => Err((store_err(e), Some(session.into_verdict()))),
    }
}

/// The `Transfer(from, to, amount)` log of `token` (the zero address for a mint's `from` or a
/// burn's `to`): how a stablecoin movement made outside the EVM (a bank send, a mint, a
/// seizure) is shown to Ethereum tooling, as the precompile's own transfers are.
pub fn transfer_event(token: &Address, from: &Address, to: &Address, amount: u128) -> crate::exec::EthLog {
    let (topics, data) = transfer_log(from, to, U256::from(amount));
    crate::exec::EthLog { address: *token, topics, data }
}

/// The `Transfer(address,address,uint256)` log's topics and data.
pub fn transfer_log(from: &Address, to: &Address, amount: U256) -> (Vec<[u8; 32]>, Vec<u8>) {
    let ev = IStablecoin::Transfer { from: EthAddress::from(from.0), to: EthAddress::from(to.0), value: amount };
    let topics = ev.encode_topics().into_iter().map(|t| t.0 .0).collect();
    (topics, ev.encode_data())
}

/// The selectors, for the documentation test and the CLI.
pub fn selector_of(signature: &str) -> [u8; 4] {
    let h = lantau_crypto::keccak256(signature.as_bytes());
    [h[0], h[1], h[2], h[3]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_are_the_spec_s() {
        assert_eq!(IStablecoin::transferWithTravelRuleCall::SELECTOR, [0x23, 0xec, 0x66, 0xfc]);
        assert_eq!(IStablecoin::transferCall::SELECTOR, [0xa9, 0x05, 0x9c, 0xbb]);
        assert_eq!(IStablecoin::decimalsCall::SELECTOR, [0x31, 0x3c, 0xe5, 0x67]);
        assert_eq!(IStablecoin::balanceOfCall::SELECTOR, [0x70, 0xa0, 0x82, 0x31]);
        assert_eq!(selector_of("transferWithTravelRule(address,uint256,bytes)"), [0x23, 0xec, 0x66, 0xfc]);
    }

    #[test]
    fn bad_calldata_reverts_with_a_reason() {
        assert!(matches!(Call::decode(&[0xa9, 0x05]), Err(CallError::Revert(r)) if r.contains("no function selector")));
        // The selector with a truncated argument.
        assert!(matches!(Call::decode(&[0x23, 0xec, 0x66, 0xfc, 0, 0]), Err(CallError::Revert(r)) if r.contains("invalid calldata")));
        assert!(matches!(Call::decode(&[1, 2, 3, 4]), Err(CallError::Revert(_))));
        let reason = revert_reason(&revert_data("no")).unwrap();
        assert_eq!(reason, "no");
    }
}
