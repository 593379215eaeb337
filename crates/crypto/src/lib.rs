//! Lantau key material: Cosmos EVM `eth_secp256k1` keys, signatures, BIP-39 mnemonics and a
//! directory-based keyring.
//!
//! # Conventions
//!
//! - Keys are secp256k1 (libsecp256k1 through the `secp256k1` crate, one shared context).
//! - The [`Address`] of a key is the last 20 bytes of `keccak256` of the 64-byte uncompressed
//!   public key (without the `0x04` prefix), exactly like Ethereum.
//! - Public keys travel as 33-byte compressed points.
//! - Signatures are made over a 32-byte digest supplied by the caller (for Cosmos transactions,
//!   `keccak256(sign_doc_bytes)`) and are 65 bytes `R || S || V` with `V` in `{0, 1}` and a
//!   low `S`. Verification also accepts the 64-byte `R || S` form and `V` in `{27, 28}`, and
//!   rejects high-`S` signatures.
//!
//! # Layout
//!
//! - [`keys`]: [`SecretKey`], [`PublicKey`], [`verify_digest`], [`recover_address`] and their errors.
//! - [`mnemonic`]: BIP-39 phrase generation and BIP-44 derivation at `m/44'/60'/0'/0/{index}`.
//! - [`keyring`]: named keys on disk, with an unencrypted `test` backend and an encrypted `file`
//!   backend (Ethereum keystore v3).
//! - [`keccak256`] and [`sha256`]: hashing helpers.

pub mod keyring;
pub mod keys;
pub mod mnemonic;

pub use keyring::{KeyInfo, Keyring, KeyringBackend, KeyringError};
pub use keys::{recover_address, recover_public_key, verify_digest, KeyError, PublicKey, SecretKey, SignatureError};
pub use lantau_primitives::Address;
pub use mnemonic::{eth_hd_path, generate_mnemonic, secret_key_from_mnemonic, secret_key_from_mnemonic_at, ETH_HD_PATH_PREFIX};

use sha2::Digest as _;

/// Keccak-256 (the original Keccak padding used by Ethereum, not NIST SHA3-256).
pub fn keccak256(data: &[u8]) -> [u8; 32] {
    sha3::Keccak256::digest(data).into()
}

/// SHA-256.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    sha2::Sha256::digest(data).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_vectors() {
        assert_eq!(const_hex::encode(keccak256(b"")), "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
        assert_eq!(const_hex::encode(sha256(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
