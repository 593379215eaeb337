//! BIP-39 English mnemonics and BIP-44 derivation on Ethereum's coin type (60).

use bip32::{DerivationPath, XPrv};
use bip39::{Language, Mnemonic};
use rand::RngCore;

use crate::keys::{KeyError, SecretKey};

/// The BIP-44 path prefix; account `i` is derived at `m/44'/60'/0'/0/{i}`.
pub const ETH_HD_PATH_PREFIX: &str = "m/44'/60'/0'/0";

/// Generates a fresh 24-word English mnemonic (256 bits of OS entropy).
pub fn generate_mnemonic() -> String {
    let mut entropy = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut entropy);
    // 32 bytes is a valid BIP-39 entropy length, so this never fails; `map_or` keeps it panic-free.
    Mnemonic::from_entropy_in(Language::English, &entropy).map_or_else(|_| String::new(), |m| m.to_string())
}

/// Derives the secret key at `m/44'/60'/0'/0/{account_index}` from a BIP-39 English phrase with
/// an empty passphrase (what MetaMask, Hardhat and Cosmos EVM do).
pub fn secret_key_from_mnemonic(phrase: &str, account_index: u32) -> Result<SecretKey, KeyError> {
    secret_key_from_mnemonic_at(phrase, &eth_hd_path(account_index))
}

/// The BIP-44 path of Ethereum account `account_index`: `m/44'/60'/0'/0/{account_index}`.
pub fn eth_hd_path(account_index: u32) -> String {
    format!("{ETH_HD_PATH_PREFIX}/{account_index}")
}

/// Derives the secret key at a BIP-32 path (`m/44'/60'/0'/0/3`) from a BIP-39 English phrase
/// with an empty passphrase.
pub fn secret_key_from_mnemonic_at(phrase: &str, hd_path: &str) -> Result<SecretKey, KeyError> {
    // English words are ASCII, so lower-casing and single-spacing is the full normalization.
    let normalized = phrase.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    let mnemonic = Mnemonic::parse_in_normalized(Language::English, &normalized).map_err(|e| KeyError::InvalidMnemonic(e.to_string()))?;
    let seed = mnemonic.to_seed_normalized("");
    let path: DerivationPath = hd_path.parse().map_err(|e: bip32::Error| KeyError::Derivation(e.to_string()))?;
    let xprv = XPrv::derive_from_path(seed, &path).map_err(|e| KeyError::Derivation(e.to_string()))?;
    SecretKey::from_bytes(&xprv.to_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PHRASE: &str = "test test test test test test test test test test test junk";

    #[test]
    fn hardhat_vectors() {
        let a0 = secret_key_from_mnemonic(PHRASE, 0).expect("derive 0");
        assert_eq!(a0.address().to_hex(), "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
        let a1 = secret_key_from_mnemonic(PHRASE, 1).expect("derive 1");
        assert_eq!(a1.address().to_hex(), "0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
        // Hardhat / anvil accounts #0 and #1.
        assert_eq!(a0.to_hex(), "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
        assert_eq!(a1.to_hex(), "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
        let messy = secret_key_from_mnemonic("  TEST test\ttest test test test test test test test test junk\n", 0);
        assert_eq!(messy, Ok(a0));
    }

    #[test]
    fn an_explicit_path_derives_like_its_index() {
        assert_eq!(eth_hd_path(3), "m/44'/60'/0'/0/3");
        let by_path = secret_key_from_mnemonic_at(PHRASE, "m/44'/60'/0'/0/3").expect("derive path");
        assert_eq!(Ok(by_path), secret_key_from_mnemonic(PHRASE, 3));
        assert!(matches!(secret_key_from_mnemonic_at(PHRASE, "m/44'/60'/zero"), Err(KeyError::Derivation(_))));
    }

    #[test]
    fn generate_and_reject() {
        let phrase = generate_mnemonic();
        assert_eq!(phrase.split(' ').count(), 24);
        assert!(secret_key_from_mnemonic(&phrase, 7).is_ok());
        assert!(matches!(secret_key_from_mnemonic("test test test", 0), Err(KeyError::InvalidMnemonic(_))));
        // Bad checksum.
        assert!(secret_key_from_mnemonic(&PHRASE.replace("junk", "test"), 0).is_err());
        // Hardened indices are outside the non-hardened range.
        assert!(matches!(secret_key_from_mnemonic(PHRASE, 1 << 31), Err(KeyError::Derivation(_))));
    }
}
