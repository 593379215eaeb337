//! Key layout of the auth module. Treated as a public API: changing a key is a state migration.

use lantau_primitives::Address;

/// `auth/acct/<lower-hex address>` → `StoredAccount` (protobuf).
pub fn account(addr: &Address) -> String {
    addr.key_under("auth/acct/")
}

/// Prefix of every account key.
pub const ACCOUNT_PREFIX: &str = "auth/acct/";

/// `auth/next_account_number` → u64 big-endian: the number the next new account gets.
pub const NEXT_ACCOUNT_NUMBER: &str = "auth/next_account_number";
