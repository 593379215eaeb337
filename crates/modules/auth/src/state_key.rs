//! Key layout of the auth module. Treated as a public API: changing a key is a state migration.

use lantau_primitives::Address;

/// `auth/acct/<lower-hex address>` → `StoredAccount` (protobuf).
pub fn account(addr: &Address) -> String {
    format!("auth/acct/{}", hex_lower(addr))
}

/// Prefix of every account key.
pub const ACCOUNT_PREFIX: &str = "auth/acct/";

/// `auth/next_account_number` → u64 big-endian: the number the next new account gets.
pub const NEXT_ACCOUNT_NUMBER: &str = "auth/next_account_number";

fn hex_lower(addr: &Address) -> String {
    let mut s = String::with_capacity(40);
    for b in addr.0 {
        s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        s.push(char::from(b"0123456789abcdef"[usize::from(b & 0x0f)]));
    }
    s
}
