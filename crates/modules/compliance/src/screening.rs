//! Proof of screening: the values the bank's one transfer function demands before it moves a
//! stablecoin.
//!
//! - [`Screened`]: one stablecoin movement (sender, recipient, denom, amount) that the gate
//!   chain passed. Only [`crate::gates::run`] makes one (its constructor is private to this
//!   crate), one per fact of an accepted verdict; it is not `Clone`, and the bank consumes it
//!   by value, so a screened movement executes at most once.
//! - (Mint, burn and genesis balances are outside the gate chain: the bank makes their legs
//!   itself, for the issuer its denom record names, and audits mint and burn.)
//! - [`Session`]: one screening, the same on both paths (a Cosmos transaction's messages, the
//!   EVM precompile's transfer). [`Session::open`] runs the gate chain and holds the tokens of
//!   an accepted verdict; each movement takes its token ([`Session::take`] in the caller, or
//!   [`take`] in a message handler, once the session lent its tokens to the messages with
//!   [`Session::lend`]); [`Session::close`] fails when a screened movement was not executed
//!   (so the movements committed are exactly the ones the gates and audit rows describe),
//!   records the verdict's effects, and returns the verdict as a value.
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

use crate::error::ComplianceError;
use crate::gates::{Fact, GateInput, Verdict};
use crate::TravelRulePayload;

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

// === the session ===

/// One screening (see the module's notes). Not `Clone`: its tokens exist once.
#[derive(Debug)]
pub struct Session {
    facts: Vec<Fact>,
    payload: Option<TravelRulePayload>,
    verdict: Verdict,
    /// The tokens lent to message handlers, while they are.
    lent: Option<Pass>,
    /// The loan this session's replaced on the state (an enclosing session's, when this one
    /// screens a group proposal's messages inside a transaction): put back at the close.
    outer: Option<Pass>,
}

impl Session {
    /// Runs the gate chain over `facts` (reads only) and holds the verdict; a rejection is a
    /// verdict ([`Session::rejection`]), not an error. `reads` is the caller's read log, when
    /// it keeps one.
    #[allow(clippy::too_many_arguments)]
    pub async fn open<S: StateRead + Sync>(
        state: &S,
        gas: &GasMeter,
        block: &BlockCtx,
        signer: Address,
        facts: Vec<Fact>,
        payload: Option<TravelRulePayload>,
        msg_types: &[&str],
        reads: Option<&lantau_module_api::reads::ReadLog>,
    ) -> Result<Self, TxError> {
        let verdict = crate::gates::run(state, gas, block, GateInput { signer, facts: &facts, payload: payload.as_ref(), msg_types, reads }).await?;
        Ok(Self { facts, payload, verdict, lent: None, outer: None })
    }

    /// The Travel Rule payload the session screened with.
    pub fn payload(&self) -> Option<&TravelRulePayload> {
        self.payload.as_ref()
    }

    /// The verdict so far.
    pub fn verdict(&self) -> &Verdict {
        &self.verdict
    }

    /// The first blocking failure, when the chain rejected the movements.
    pub fn rejection(&self) -> Option<&TxError> {
        self.verdict.rejection.as_ref()
    }

    /// Adds a rejection of the caller's (a gate outside the chain); the session then holds no
    /// tokens.
    pub fn reject(&mut self, e: TxError) {
        if self.verdict.rejection.is_none() {
            self.verdict.rejection = Some(e);
            self.verdict.advisories.clear();
            self.verdict.agent_window = None;
            self.verdict.screened.clear();
        }
    }

    /// Ends the session without executing anything (admission, a rejection): the verdict.
    pub fn into_verdict(self) -> Verdict {
        self.verdict
    }

    /// Takes the token for exactly this movement; fails (code 27) when the gates did not
    /// screen it or its token was already taken.
    pub fn take(&mut self, from: &Address, to: &Address, coin: &Coin) -> Result<Screened, TxError> {
        take_from(&mut self.verdict.screened, from, to, coin)
    }

    /// Lends the tokens to the message handlers about to run on `state` (they take them with
    /// [`take`]); [`Session::close`] on the same state ends the loan.
    pub fn lend<S: StateWrite>(&mut self, state: &mut S) {
        let pass = Pass(Arc::new(Mutex::new(std::mem::take(&mut self.verdict.screened))));
        self.outer = state.object_get(PASS_KEY);
        state.object_put(PASS_KEY, pass.clone());
        self.lent = Some(pass);
    }

    /// Ends the session after the movements ran on `state`: every screened movement must have
    /// been executed (code 28 otherwise); then the verdict's effects are recorded (audit rows,
    /// flags with their events, velocity windows, an agent's window, the payload anchor).
    /// The verdict stays in the session ([`Session::into_verdict`]) whatever the outcome.
    pub async fn close<S: StateWrite + Send + Sync>(
        &mut self,
        state: &mut S,
        gas: &GasMeter,
        block: &BlockCtx,
        tx_hash: &str,
        events: &mut Vec<lantau_module_api::Event>,
    ) -> Result<(), TxError> {
        if let Some(pass) = self.lent.take() {
            match self.outer.take() {
                Some(outer) => state.object_put(PASS_KEY, outer),
                None => state.object_delete(PASS_KEY),
            }
            let left = std::mem::take(&mut *pass.0.lock().map_err(|_| internal("screen pass lock poisoned"))?);
            self.verdict.screened.extend(left);
        }
        if let Some(t) = self.verdict.screened.first() {
            return Err(ComplianceError::ScreenedNotExecuted(movement(&t.from, &t.to, &t.coin)).into());
        }
        crate::effects::record_verdict(state, gas, block, &self.facts, &self.verdict, self.payload.as_ref(), tx_hash, events).await
    }
}

const PASS_KEY: &str = "compliance/screen_pass";

/// The screened movements lent to one transaction's messages. Shared (`Arc`) because
/// cnidarium's object store clones what it hands out; the tokens themselves are never cloned.
#[derive(Debug, Clone, Default)]
struct Pass(Arc<Mutex<Vec<Screened>>>);

fn take_from(tokens: &mut Vec<Screened>, from: &Address, to: &Address, coin: &Coin) -> Result<Screened, TxError> {
    let i = tokens.iter().position(|t| t.is(from, to, coin)).ok_or_else(|| not_screened(from, to, coin))?;
    Ok(tokens.remove(i))
}

fn not_screened(from: &Address, to: &Address, coin: &Coin) -> TxError {
    ComplianceError::NotScreened(movement(from, to, coin)).into()
}

/// A movement as the errors name it.
fn movement(from: &Address, to: &Address, coin: &Coin) -> String {
    format!("{} {} from {} to {}", coin.amount, coin.denom, from.to_bech32(), to.to_bech32())
}

/// Takes, in a message handler, the token for exactly this movement from the session lent
/// to the messages running on `state`; fails (code 27) when the transaction's gates did not
/// screen it, or its token was already used.
pub fn take<S: StateRead>(state: &S, from: &Address, to: &Address, coin: &Coin) -> Result<Screened, TxError> {
    let pass: Pass = state.object_get(PASS_KEY).ok_or_else(|| not_screened(from, to, coin))?;
    let mut tokens = pass.0.lock().map_err(|_| internal("screen pass lock poisoned"))?;
    take_from(&mut tokens, from, to, coin)
}
