//! The message handler contract.

use std::future::Future;

use cnidarium::StateWrite;

use crate::ctx::ExecCtx;
use crate::error::TxError;

/// A message a module handles.
///
/// Checks have fixed homes: `check_stateless` holds every check that needs no state (it runs
/// before signature verification is charged and may run in parallel); `check_and_execute`
/// reads state, checks, and writes. A handler writes only after all of its checks passed, or
/// runs on a throwaway overlay that the caller discards on error.
pub trait MsgHandler {
    /// Checks that need no state: address and amount syntax, non-empty fields.
    fn check_stateless(&self) -> Result<(), TxError>;

    /// Checks against state and applies the message.
    fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> impl Future<Output = Result<(), TxError>> + Send;
}
