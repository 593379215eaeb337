//! The bank's events, shaped as the Cosmos SDK's x/bank emits them.

use lantau_module_api::{event, Event};
use lantau_primitives::Address;

/// `coin_spent{spender, amount}`.
pub fn coin_spent(spender: &Address, amount: &str) -> Event {
    event("coin_spent", [("spender", spender.to_bech32()), ("amount", amount.to_string())])
}

/// `coin_received{receiver, amount}`.
pub fn coin_received(receiver: &Address, amount: &str) -> Event {
    event("coin_received", [("receiver", receiver.to_bech32()), ("amount", amount.to_string())])
}

/// `transfer{recipient, sender, amount}`.
pub fn transfer(sender: &Address, recipient: &Address, amount: &str) -> Event {
    event("transfer", [("recipient", recipient.to_bech32()), ("sender", sender.to_bech32()), ("amount", amount.to_string())])
}

/// `coinbase{minter, amount}` (mint).
pub fn coinbase(minter: &Address, amount: &str) -> Event {
    event("coinbase", [("minter", minter.to_bech32()), ("amount", amount.to_string())])
}

/// `burn{burner, amount}`.
pub fn burn(burner: &Address, amount: &str) -> Event {
    event("burn", [("burner", burner.to_bech32()), ("amount", amount.to_string())])
}
