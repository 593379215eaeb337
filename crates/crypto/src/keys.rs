//! secp256k1 secret and public keys, digest signing, verification and public-key recovery.

use std::fmt;
use std::sync::OnceLock;

use lantau_primitives::Address;
use secp256k1::ecdsa::{RecoverableSignature, RecoveryId, Signature};
use secp256k1::{All, Message, Secp256k1};

use crate::keccak256;

/// `n / 2` for the secp256k1 group order `n`, big-endian. A signature's `S` must not exceed it.
const HALF_ORDER: [u8; 32] = [
    0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4, 0x50, 0x1d, 0xdf, 0xe9,
    0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0,
];

/// The process-wide libsecp256k1 context (creating one is expensive).
fn secp() -> &'static Secp256k1<All> {
    static CTX: OnceLock<Secp256k1<All>> = OnceLock::new();
    CTX.get_or_init(Secp256k1::new)
}

/// Errors building keys from bytes, hex or mnemonics.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The input is not valid hex.
    #[error("invalid hex")]
    InvalidHex,
    /// Not 32 bytes, zero, or not below the curve order.
    #[error("invalid secret key")]
    InvalidSecretKey,
    /// Not a valid 33-byte compressed or 65-byte uncompressed point.
    #[error("invalid public key")]
    InvalidPublicKey,
    /// The phrase is not a valid BIP-39 English mnemonic.
    #[error("invalid mnemonic: {0}")]
    InvalidMnemonic(String),
    /// BIP-32 derivation failed.
    #[error("key derivation failed: {0}")]
    Derivation(String),
}

/// Errors verifying a signature or recovering its signer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// The signature is neither 64 (`R || S`) nor 65 (`R || S || V`) bytes long.
    #[error("invalid signature length {0}, expected 64 or 65")]
    Length(usize),
    /// `S` is above `n / 2`; only low-`S` signatures are accepted (no malleability).
    #[error("signature S value is not in the lower half of the curve order")]
    HighS,
    /// The signature does not verify, is malformed, or does not match the key.
    #[error("invalid signature")]
    Invalid,
    /// `V` is not one of 0, 1, 27, 28.
    #[error("invalid recovery id {0}")]
    BadRecoveryId(u8),
    /// The public key bytes are not a valid secp256k1 point.
    #[error("invalid public key")]
    BadPublicKey,
}

/// A secp256k1 secret key. Its `Debug` output never shows the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretKey(secp256k1::SecretKey);

impl SecretKey {
    /// Parses 32 big-endian bytes (must be non-zero and below the curve order).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, KeyError> {
        let arr: &[u8; 32] = bytes.try_into().map_err(|_| KeyError::InvalidSecretKey)?;
        secp256k1::SecretKey::from_byte_array(arr).map(Self).map_err(|_| KeyError::InvalidSecretKey)
    }

    /// Parses 64 hex digits, with or without a `0x` prefix.
    pub fn from_hex(s: &str) -> Result<Self, KeyError> {
        let s = s.trim();
        let s = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
        let bytes = hex::decode(s).map_err(|_| KeyError::InvalidHex)?;
        Self::from_bytes(&bytes)
    }

    /// Generates a fresh key from the operating system's randomness.
    pub fn random() -> Self {
        Self(secp256k1::SecretKey::new(&mut rand::rngs::OsRng))
    }

    /// The 32 secret bytes.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.0.secret_bytes()
    }

    /// The secret as 64 lowercase hex digits, without `0x`.
    pub fn to_hex(&self) -> String {
        const_hex::encode(self.to_bytes())
    }

    /// The matching public key.
    pub fn public_key(&self) -> PublicKey {
        PublicKey(self.0.public_key(secp()))
    }

    /// The Ethereum-style address of this key.
    pub fn address(&self) -> Address {
        self.public_key().address()
    }

    /// Signs a 32-byte digest, returning `R || S || V` with low `S` and `V` in `{0, 1}`.
    pub fn sign_digest(&self, digest: &[u8; 32]) -> [u8; 65] {
        let msg = Message::from_digest(*digest);
        let (recid, rs) = secp().sign_ecdsa_recoverable(&msg, &self.0).serialize_compact();
        let mut out = [0u8; 65];
        out[..64].copy_from_slice(&rs);
        // The recovery id is 0..=3 and libsecp256k1 yields 0 or 1 in practice.
        out[64] = i32::from(recid) as u8;
        out
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(<redacted>)")
    }
}

/// A secp256k1 public key, 33-byte compressed on the wire.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PublicKey(secp256k1::PublicKey);

impl PublicKey {
    /// Parses a 33-byte compressed key; a 65-byte uncompressed key is accepted too.
    pub fn from_compressed(bytes: &[u8]) -> Result<Self, KeyError> {
        if bytes.len() != 33 && bytes.len() != 65 {
            return Err(KeyError::InvalidPublicKey);
        }
        secp256k1::PublicKey::from_slice(bytes).map(Self).map_err(|_| KeyError::InvalidPublicKey)
    }

    /// The 33-byte compressed encoding.
    pub fn to_compressed(&self) -> [u8; 33] {
        self.0.serialize()
    }

    /// The 65-byte uncompressed encoding (`0x04 || X || Y`).
    pub fn to_uncompressed(&self) -> [u8; 65] {
        self.0.serialize_uncompressed()
    }

    /// The address: last 20 bytes of `keccak256(X || Y)`.
    pub fn address(&self) -> Address {
        let hash = keccak256(&self.to_uncompressed()[1..]);
        let mut out = [0u8; 20];
        out.copy_from_slice(&hash[12..]);
        Address(out)
    }

    /// Verifies `sig` over `digest` for this key; see [`verify_digest`] for the accepted forms.
    pub fn verify_digest(&self, digest: &[u8; 32], sig: &[u8]) -> Result<(), SignatureError> {
        let msg = Message::from_digest(*digest);
        match sig.len() {
            64 => {
                check_low_s(sig)?;
                let s = Signature::from_compact(sig).map_err(|_| SignatureError::Invalid)?;
                secp().verify_ecdsa(&msg, &s, &self.0).map_err(|_| SignatureError::Invalid)
            }
            65 => {
                // Recovery both checks the signature and pins V: the key recovered with the
                // given V must be this key, so a flipped V is rejected.
                if recover_inner(&msg, sig)? == self.0 {
                    Ok(())
                } else {
                    Err(SignatureError::Invalid)
                }
            }
            n => Err(SignatureError::Length(n)),
        }
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", const_hex::encode(self.to_compressed()))
    }
}

/// Rejects a signature whose `S` (bytes 32..64) is above `n / 2`.
fn check_low_s(sig: &[u8]) -> Result<(), SignatureError> {
    match sig.get(32..64) {
        // Big-endian byte arrays of equal length compare like the numbers they encode.
        Some(s) if s > &HALF_ORDER[..] => Err(SignatureError::HighS),
        Some(_) => Ok(()),
        None => Err(SignatureError::Length(sig.len())),
    }
}

/// Recovers the signer of a 65-byte signature, enforcing low `S` and `V` in {0, 1, 27, 28}.
fn recover_inner(msg: &Message, sig: &[u8]) -> Result<secp256k1::PublicKey, SignatureError> {
    if sig.len() != 65 {
        return Err(SignatureError::Length(sig.len()));
    }
    let v = sig[64];
    let recid = match v {
        0 | 1 => v,
        27 | 28 => v - 27,
        _ => return Err(SignatureError::BadRecoveryId(v)),
    };
    check_low_s(sig)?;
    let recid = RecoveryId::try_from(i32::from(recid)).map_err(|_| SignatureError::BadRecoveryId(v))?;
    let rsig = RecoverableSignature::from_compact(&sig[..64], recid).map_err(|_| SignatureError::Invalid)?;
    secp().recover_ecdsa(msg, &rsig).map_err(|_| SignatureError::Invalid)
}

/// Verifies a signature over a 32-byte digest.
///
/// `pubkey` is a 33-byte compressed (or 65-byte uncompressed) key. `sig` is either 64 bytes
/// `R || S`, or 65 bytes `R || S || V` with `V` in `{0, 1, 27, 28}`; any other length fails with
/// [`SignatureError::Length`]. A high `S` fails with [`SignatureError::HighS`] before any curve
/// work. When `V` is present it is not ignored: the key recovered with it must equal `pubkey`,
/// otherwise [`SignatureError::Invalid`].
pub fn verify_digest(pubkey: &[u8], digest: &[u8; 32], sig: &[u8]) -> Result<(), SignatureError> {
    PublicKey::from_compressed(pubkey).map_err(|_| SignatureError::BadPublicKey)?.verify_digest(digest, sig)
}

/// Recovers the public key that made a 65-byte `R || S || V` signature over `digest`.
///
/// `V` may be 0, 1, 27 or 28; high-`S` signatures are rejected (as Ethereum does for
/// transactions since EIP-2).
pub fn recover_public_key(digest: &[u8; 32], sig: &[u8]) -> Result<PublicKey, SignatureError> {
    recover_inner(&Message::from_digest(*digest), sig).map(PublicKey)
}

/// Recovers the address that made a 65-byte `R || S || V` signature over `digest`.
///
/// Same rules as [`recover_public_key`].
pub fn recover_address(digest: &[u8; 32], sig: &[u8]) -> Result<Address, SignatureError> {
    recover_public_key(digest, sig).map(|pk| pk.address())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> SecretKey {
        // Hardhat / anvil account #0.
        SecretKey::from_hex("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80").expect("valid key")
    }

    #[test]
    fn address_and_hex() {
        let k = key();
        assert_eq!(k.address().to_hex(), "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
        assert_eq!(SecretKey::from_hex(&k.to_hex()), Ok(k.clone()));
        assert_eq!(SecretKey::from_bytes(&k.to_bytes()), Ok(k.clone()));
        assert!(!format!("{k:?}").contains(&k.to_hex()));
        let pk = k.public_key();
        assert_eq!(PublicKey::from_compressed(&pk.to_compressed()), Ok(pk));
        assert_eq!(PublicKey::from_compressed(&pk.to_uncompressed()), Ok(pk));
        assert_eq!(PublicKey::from_compressed(&[2u8; 32]), Err(KeyError::InvalidPublicKey));
        assert_eq!(SecretKey::from_bytes(&[0u8; 32]), Err(KeyError::InvalidSecretKey));
        assert_eq!(SecretKey::from_bytes(&[1u8; 31]), Err(KeyError::InvalidSecretKey));
        assert_eq!(SecretKey::from_hex("zz"), Err(KeyError::InvalidHex));
        assert_ne!(SecretKey::random(), SecretKey::random());
    }

    #[test]
    fn sign_verify_recover() {
        let k = SecretKey::random();
        let pk = k.public_key().to_compressed();
        let digest = keccak256(b"sign doc");
        let sig = k.sign_digest(&digest);
        assert!(sig[64] <= 1);
        assert_eq!(verify_digest(&pk, &digest, &sig), Ok(()));
        assert_eq!(verify_digest(&pk, &digest, &sig[..64]), Ok(()));
        let mut eth = sig;
        eth[64] += 27;
        assert_eq!(verify_digest(&pk, &digest, &eth), Ok(()));
        assert_eq!(recover_address(&digest, &sig), Ok(k.address()));
        assert_eq!(recover_address(&digest, &eth), Ok(k.address()));

        // Tampered digest, wrong key, flipped V.
        let other = keccak256(b"other");
        assert_eq!(verify_digest(&pk, &other, &sig), Err(SignatureError::Invalid));
        assert_eq!(verify_digest(&pk, &other, &sig[..64]), Err(SignatureError::Invalid));
        let wrong = SecretKey::random().public_key().to_compressed();
        assert_eq!(verify_digest(&wrong, &digest, &sig), Err(SignatureError::Invalid));
        let mut flipped = sig;
        flipped[64] ^= 1;
        assert_eq!(verify_digest(&pk, &digest, &flipped), Err(SignatureError::Invalid));
        assert_ne!(recover_address(&digest, &flipped), Ok(k.address()));

        // Bad lengths, V and keys.
        for n in [0, 1, 63, 66, 130] {
            let long = vec![0u8; n];
            assert_eq!(verify_digest(&pk, &digest, &long), Err(SignatureError::Length(n)));
        }
        assert_eq!(recover_address(&digest, &sig[..64]), Err(SignatureError::Length(64)));
        let mut bad_v = sig;
        bad_v[64] = 2;
        assert_eq!(verify_digest(&pk, &digest, &bad_v), Err(SignatureError::BadRecoveryId(2)));
        assert_eq!(verify_digest(&pk[..32], &digest, &sig), Err(SignatureError::BadPublicKey));
        assert_eq!(verify_digest(&pk, &digest, &[0u8; 64]), Err(SignatureError::Invalid));
    }

    #[test]
    fn high_s_rejected() {
        let k = key();
        let pk = k.public_key().to_compressed();
        let digest = keccak256(b"malleable");
        let sig = k.sign_digest(&digest);
        // s' = n - s, computed as the negation of s taken as a scalar; V flips with it.
        let s = secp256k1::SecretKey::from_byte_array(&sig[32..64].try_into().expect("32 bytes")).expect("s in range");
        let mut high = sig;
        high[32..64].copy_from_slice(&s.negate().secret_bytes());
        high[64] ^= 1;
        assert_eq!(verify_digest(&pk, &digest, &high), Err(SignatureError::HighS));
        assert_eq!(verify_digest(&pk, &digest, &high[..64]), Err(SignatureError::HighS));
        assert_eq!(recover_address(&digest, &high), Err(SignatureError::HighS));
    }
}
