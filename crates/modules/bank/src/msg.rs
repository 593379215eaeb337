//! Bank messages, validated from their Cosmos SDK protobuf form.

use cosmos_sdk_proto::cosmos::bank::v1beta1 as pb;
use cosmos_sdk_proto::cosmos::base::v1beta1::Coin as PbCoin;
use lantau_module_api::{SdkError, TxError};
use lantau_primitives::{Address, Amount, Coin, Denom};

use lantau_compliance::gates::Fact;

use crate::error::BankError;

/// Validates a list of coins as the SDK's `Coins.Validate` does: each denom valid, each amount
/// positive, denoms sorted and unique, at least one coin.
pub fn coins_from_proto(coins: &[PbCoin]) -> Result<Vec<Coin>, TxError> {
    if coins.is_empty() {
        return Err(SdkError::InvalidCoins("empty coins".into()).into());
    }
    let mut out: Vec<Coin> = Vec::with_capacity(coins.len());
    for c in coins {
        let denom = Denom::new(&c.denom).map_err(|e| SdkError::InvalidCoins(e.to_string()))?;
        let amount: Amount = c.amount.parse().map_err(|_| SdkError::InvalidCoins(format!("invalid amount {:?} for {}", c.amount, c.denom)))?;
        if amount.is_zero() {
            return Err(SdkError::InvalidCoins(format!("0{}: amount must be positive", c.denom)).into());
        }
        if let Some(prev) = out.last() {
            if prev.denom.as_str() >= denom.as_str() {
                return Err(SdkError::InvalidCoins(format!("denoms must be sorted and unique: {} then {}", prev.denom, denom)).into());
            }
        }
        out.push(Coin::new(denom.as_str(), amount));
    }
    Ok(out)
}

/// Renders coins as the SDK does: `100alantau,5hkd.demo`.
pub fn coins_to_string(coins: &[Coin]) -> String {
    coins.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")
}

fn parse_addr(s: &str, field: &str) -> Result<Address, TxError> {
    Address::from_bech32(s).map_err(|e| SdkError::InvalidAddress(format!("{field}: {e}")).into())
}

/// A validated `MsgSend`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendMsg {
    /// The debited account; the message's signer.
    pub from: Address,
    /// The credited account.
    pub to: Address,
    /// What moves.
    pub amount: Vec<Coin>,
}

impl SendMsg {
    /// Validates the protobuf message (stateless checks).
    pub fn from_proto(m: &pb::MsgSend) -> Result<Self, TxError> {
        Ok(Self { from: parse_addr(&m.from_address, "from_address")?, to: parse_addr(&m.to_address, "to_address")?, amount: coins_from_proto(&m.amount)? })
    }
}

/// A validated `MsgMultiSend`: one input (one signer per transaction), any number of outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiSendMsg {
    /// The single input.
    pub from: Address,
    /// Its coins.
    pub input: Vec<Coin>,
    /// The outputs.
    pub outputs: Vec<(Address, Vec<Coin>)>,
}

impl MultiSendMsg {
    /// Validates the protobuf message: exactly one input, at least one output, and the sum of
    /// the outputs equal to the input, denom by denom.
    pub fn from_proto(m: &pb::MsgMultiSend) -> Result<Self, TxError> {
        let input = match m.inputs.as_slice() {
            [] => return Err(BankError::NoInputs.into()),
            [one] => one,
            _ => return Err(BankError::MultipleSenders.into()),
        };
        if m.outputs.is_empty() {
            return Err(BankError::NoOutputs.into());
        }
        let from = parse_addr(&input.address, "inputs[0].address")?;
        let input_coins = coins_from_proto(&input.coins)?;
        let mut outputs = Vec::with_capacity(m.outputs.len());
        let mut totals: std::collections::BTreeMap<String, Amount> = Default::default();
        for (i, o) in m.outputs.iter().enumerate() {
            let to = parse_addr(&o.address, &format!("outputs[{i}].address"))?;
            let coins = coins_from_proto(&o.coins)?;
            for c in &coins {
                let t = totals.entry(c.denom.clone()).or_default();
                *t = t.checked_add(c.amount).map_err(|_| SdkError::InvalidCoins("output sum overflows".into()))?;
            }
            outputs.push((to, coins));
        }
        let input_map: std::collections::BTreeMap<String, Amount> = input_coins.iter().map(|c| (c.denom.clone(), c.amount)).collect();
        if input_map != totals {
            return Err(BankError::InputOutputMismatch(format!(
                "inputs {} != outputs {}",
                coins_to_string(&input_coins),
                totals.iter().map(|(d, a)| format!("{a}{d}")).collect::<Vec<_>>().join(",")
            ))
            .into());
        }
        Ok(Self { from, input: input_coins, outputs })
    }
}

/// The compliance facts of `coins` moving `from` → `to`: one per stablecoin (`hkd.`) amount,
/// in coin order. The bank's handlers take exactly one proof of screening per fact.
fn facts_of(from: &Address, to: &Address, coins: &[Coin], msg_index: usize, out: &mut Vec<Fact>) {
    for c in coins.iter().filter(|c| c.is_stablecoin()) {
        out.push(Fact { from: *from, to: *to, amount: c.clone(), msg_index });
    }
}

impl SendMsg {
    /// The stablecoin movements this message makes.
    pub fn facts(&self, msg_index: usize) -> Vec<Fact> {
        let mut out = Vec::new();
        facts_of(&self.from, &self.to, &self.amount, msg_index, &mut out);
        out
    }
}

impl MultiSendMsg {
    /// The stablecoin movements this message makes: each output's, in output order.
    pub fn facts(&self, msg_index: usize) -> Vec<Fact> {
        let mut out = Vec::new();
        for (to, coins) in &self.outputs {
            facts_of(&self.from, to, coins, msg_index, &mut out);
        }
        out
    }
}
