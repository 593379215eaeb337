//! Proof of screening: the values the bank's one transfer function demands before it moves a
//! stablecoin.
//!
//! - [`Screened`]: one stablecoin movement (sender, recipient, denom, amount) that the gate
//!   chain passed. Only [`crate::gates::run`] makes one (its constructor is private to this
//!   crate), one per fact of an accepted verdict; it is not `Clone`, and the bank consumes it
//!   by value, so a screened movement executes at most once.
//! - [`Exempt`]: a stablecoin created or destroyed by its issuer (mint, burn), or allocated in
//!   genesis. Issuance exemptions are made only by [`exempt_issuance`], which appends the
//!   `mint` / `burn` audit row in the same call, so an exemption never goes unrecorded.
//! - The pass: between screening and message execution, the pipeline lends an accepted
//!   verdict's tokens to the transaction ([`open_pass`]); a handler that moves a stablecoin
//!   takes the token for exactly that movement ([`take`]); [`close_pass`] fails the
//!   transaction when a screened movement was not executed, so the movements a transaction
//!   commits are exactly the ones its gates and audit rows describe.
//!
//! A module that moves a stablecoin without going through the gate chain does not compile:
//!
//! ```compile_fail,E0451
//! use lantau_compliance::screening::Screened;
//! use lantau_primitives::{Address, Coin};
//! // The fields and the constructor are private to the compliance crate.
//! let forged = Screened { from: Address([1; 20]), to: Address([2; 20]), coin: Coin::new("hkd.demo", 5u128) };
//! ```
//!
//! ```compile_fail,E0624
//! use lantau_compliance::screening::Screened;
//! let forged = Screened::new(&lantau_compliance::gates::Fact {
//!     from: lantau_primitives::Address([1; 20]),
//!     to: lantau_primitives::Address([2; 20]),
//!     amount: lantau_primitives::Coin::new("hkd.demo", 5u128),
//!     msg_index: 0,
//! });
//! ```

use std::sync::{Arc, Mutex};

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{error::internal, BlockCtx, GasMeter, TxError};
use lantau_primitives::{Address, Coin};

use crate::audit::{AuditEntry, AuditWrite};
use crate::error::ComplianceError;
use crate::gates::Fact;

/// A stablecoin movement between two accounts that the gate chain passed.
#[derive(Debug, PartialEq, Eq)]
pub struct Screened {
    from: Address,
    to: Address,
    coin: Coin,
}

impl Screened {
    /// Only the gate chain calls this, for a fact of an accepted verdict.
    pub(crate) fn new(f: &Fact) -> Self {
        Self { from: f.from, to: f.to, coin: f.amount.clone() }
    }

    /// The debited account.
    pub fn from(&self) -> &Address {
        &self.from
    }

    /// The credited account.
    pub fn to(&self) -> &Address {
        &self.to
    }

    /// The stablecoin amount.
    pub fn coin(&self) -> &Coin {
        &self.coin
    }

    fn is(&self, from: &Address, to: &Address, coin: &Coin) -> bool {
        self.from == *from && self.to == *to && self.coin == *coin
    }
}

/// What an exemption allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExemptKind {
    /// The issuer creates coins in an account's balance.
    Mint,
    /// The issuer destroys coins from its own balance.
    Burn,
    /// A balance written by the genesis file.
    Genesis,
}

/// A stablecoin created or destroyed outside a transfer between accounts: the issuer's own
/// mint or burn, or a genesis allocation.
#[derive(Debug, PartialEq, Eq)]
pub struct Exempt {
    kind: ExemptKind,
    account: Address,
    coin: Coin,
}

impl Exempt {
    /// Mint, burn or genesis.
    pub fn kind(&self) -> ExemptKind {
        self.kind
    }

    /// The account credited (mint, genesis) or debited (burn).
    pub fn account(&self) -> &Address {
        &self.account
    }

    /// The amount.
    pub fn coin(&self) -> &Coin {
        &self.coin
    }
}

/// The issuer's mint (coins to `account`) or burn (coins from `account`, the issuer itself),
/// recorded as a `mint` / `burn` audit row (subject the issuer, counterparty the account)
/// before the exemption is handed out. The caller (the issuer's own message handler) has
/// already checked that `issuer` issues the denom.
#[allow(clippy::too_many_arguments)]
pub async fn exempt_issuance<S: StateWrite + Send + Sync>(
    state: &mut S,
    gas: &GasMeter,
    block: &BlockCtx,
    tx_hash: &str,
    kind: ExemptKind,
    issuer: &Address,
    account: &Address,
    coin: &Coin,
) -> Result<Exempt, TxError> {
    let tx_type = match kind {
        ExemptKind::Mint => "mint",
        ExemptKind::Burn => "burn",
        ExemptKind::Genesis => return Err(internal("a genesis allocation is not an issuance")),
    };
    state
        .append_audit(
            gas,
            block,
            AuditEntry {
                tx_type: tx_type.into(),
                subject: issuer.to_bech32(),
                counterparty: account.to_bech32(),
                amount: Some(lantau_module_api::pb_coin(coin)),
                tx_hash: tx_hash.to_string(),
                ..Default::default()
            },
        )
        .await?;
    Ok(Exempt { kind, account: *account, coin: coin.clone() })
}

/// A genesis balance: allowed only while the chain is being created (height 0). The genesis
/// file, which every validator signs off, is its record.
pub fn exempt_genesis(block: &BlockCtx, account: &Address, coin: &Coin) -> Result<Exempt, TxError> {
    if block.height != 0 {
        return Err(internal(format!("a genesis allocation at height {}", block.height)));
    }
    Ok(Exempt { kind: ExemptKind::Genesis, account: *account, coin: coin.clone() })
}

// === the pass ===

const PASS_KEY: &str = "compliance/screen_pass";

/// The screened movements lent to one transaction's messages. Shared (`Arc`) because
/// cnidarium's object store clones what it hands out; the tokens themselves are never cloned.
#[derive(Debug, Clone, Default)]
struct Pass(Arc<Mutex<Vec<Screened>>>);

/// Lends an accepted verdict's tokens to the messages about to run on `state`.
pub fn open_pass<S: StateWrite>(state: &mut S, tokens: Vec<Screened>) {
    state.object_put(PASS_KEY, Pass(Arc::new(Mutex::new(tokens))));
}

/// Takes the token for exactly this movement; fails (code 27) when the transaction's gates did
/// not screen it, or its token was already used.
pub fn take<S: StateRead>(state: &S, from: &Address, to: &Address, coin: &Coin) -> Result<Screened, TxError> {
    let not_screened =
        || -> TxError { ComplianceError::NotScreened(format!("{} {} from {} to {}", coin.amount, coin.denom, from.to_bech32(), to.to_bech32())).into() };
    let pass: Pass = state.object_get(PASS_KEY).ok_or_else(not_screened)?;
    let mut tokens = pass.0.lock().map_err(|_| internal("screen pass lock poisoned"))?;
    let i = tokens.iter().position(|t| t.is(from, to, coin)).ok_or_else(not_screened)?;
    Ok(tokens.remove(i))
}

/// Ends the loan: every screened movement must have been executed (code 28 otherwise).
pub fn close_pass<S: StateWrite>(state: &mut S) -> Result<(), TxError> {
    let pass: Option<Pass> = state.object_get(PASS_KEY);
    state.object_delete(PASS_KEY);
    let Some(pass) = pass else { return Ok(()) };
    let left = pass.0.lock().map_err(|_| internal("screen pass lock poisoned"))?;
    match left.first() {
        None => Ok(()),
        Some(t) => {
            Err(ComplianceError::ScreenedNotExecuted(format!("{} {} from {} to {}", t.coin.amount, t.coin.denom, t.from.to_bech32(), t.to.to_bech32())).into())
        }
    }
}

// === verdicts reached during execution ===

const VERDICTS_KEY: &str = "compliance/execution_verdicts";

/// Verdicts a message handler reached while it ran (the ERC-20 precompile screens inside the
/// EVM), handed to the pipeline so their traces are kept like every other.
#[derive(Debug, Clone, Default)]
struct Reported(Arc<Mutex<Vec<crate::gates::Verdict>>>);

/// Hands `verdicts` to the pipeline (appended to any reported before in this transaction).
pub fn report_verdicts<S: StateWrite>(state: &mut S, verdicts: Vec<crate::gates::Verdict>) {
    if verdicts.is_empty() {
        return;
    }
    let r: Reported = state.object_get(VERDICTS_KEY).unwrap_or_default();
    if let Ok(mut v) = r.0.lock() {
        v.extend(verdicts);
    }
    state.object_put(VERDICTS_KEY, r);
}

/// Takes the verdicts reported on `state` (empty when none).
pub fn take_reported<S: StateWrite>(state: &mut S) -> Vec<crate::gates::Verdict> {
    let r: Option<Reported> = state.object_get(VERDICTS_KEY);
    state.object_delete(VERDICTS_KEY);
    r.and_then(|r| r.0.lock().ok().map(|mut v| std::mem::take(&mut *v))).unwrap_or_default()
}
