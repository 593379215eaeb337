//! The portal's challenge: a Sign-In with Ethereum (EIP-4361) message that the wallet signs
//! with `personal_sign` (EIP-191), so MetaMask and any Ethereum library sign it with the key
//! that signs the account's Cosmos transactions.
//!
//! The portal writes the message and keeps it (by nonce); an application must bring back the
//! exact text it was given, so nothing is parsed from a signed message except the nonce that
//! finds the stored one. The signature must recover the address the challenge was issued to.

use lantau_primitives::Address;

/// The statement line of the portal's challenges.
pub(crate) const STATEMENT: &str =
    "Apply for a Lantau test-network identity. Signing proves that you control this address; it costs nothing and sends no transaction.";

/// The statement line of the compliance desk's sign-in.
pub(crate) const DESK_STATEMENT: &str =
    "Sign in to the Lantau compliance desk. Signing proves that you control this address; it costs nothing and sends no transaction.";

/// The fields of one challenge.
#[derive(Debug, Clone)]
pub(crate) struct Challenge<'a> {
    /// The portal's domain (`host:port`), the message's first word and its URI's authority.
    pub domain: &'a str,
    /// URI scheme of the portal (`http` or `https`).
    pub scheme: &'a str,
    pub address: &'a Address,
    /// What signing means (one line).
    pub statement: &'a str,
    /// The path of the URI (`/kyc/apply`).
    pub path: &'a str,
    pub chain_id: u64,
    pub nonce: &'a str,
    pub issued_at: &'a str,
    pub expires_at: &'a str,
}

impl Challenge<'_> {
    /// The EIP-4361 text.
    pub(crate) fn message(&self) -> String {
        format!(
            "{domain} wants you to sign in with your Ethereum account:\n{address}\n\n{statement}\n\nURI: {scheme}://{domain}{path}\nVersion: 1\nChain ID: {chain}\nNonce: {nonce}\nIssued At: {issued}\nExpiration Time: {expires}",
            domain = self.domain,
            statement = self.statement,
            path = self.path,
            address = self.address.to_hex(),
            scheme = self.scheme,
            chain = self.chain_id,
            nonce = self.nonce,
            issued = self.issued_at,
            expires = self.expires_at,
        )
    }
}

/// Issues a challenge for `address` (EIP-4361 text with a fresh nonce, good for `ttl`), keeps
/// it in `store`, forgets those expired a day ago; answers `{nonce, message, issued_at,
/// expires_at}`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn issue(
    store: &crate::store::Store,
    domain: &str,
    scheme: &str,
    statement: &str,
    path: &str,
    chain_id: u64,
    address: &Address,
    ttl: std::time::Duration,
) -> Result<serde_json::Value, crate::store::StoreError> {
    let now = time::OffsetDateTime::now_utc().replace_nanosecond(0).unwrap_or_else(|_| time::OffsetDateTime::now_utc());
    let expires = now + ttl;
    let nonce = crate::random_hex(16);
    let (issued_at, expires_at) = (crate::rfc3339(now), crate::rfc3339(expires));
    let message = Challenge { domain, scheme, address, statement, path, chain_id, nonce: &nonce, issued_at: &issued_at, expires_at: &expires_at }.message();
    let stored = crate::store::StoredChallenge { address: address.to_bech32(), message: message.clone(), expires_unix: expires.unix_timestamp(), used: false };
    store.put_challenge(&nonce, &stored)?;
    // Challenges expired a day ago go (a later replay of one is refused as unknown).
    if let Err(e) = store.forget_challenges_expired_before(now.unix_timestamp() - 86_400, 256) {
        tracing::warn!(error = ?e, "could not prune expired challenges");
    }
    Ok(serde_json::json!({"nonce": nonce, "message": message, "issued_at": issued_at, "expires_at": expires_at}))
}

/// What a signed challenge proves: the address it was issued to, once the message is the one
/// issued with its nonce (still live at `now_unix`) and the signature recovers that address.
/// Returns the nonce and the address; `store_error` words the store's refusals.
pub(crate) fn check_signed(
    store: &crate::store::Store,
    message: &str,
    signature: &str,
    now_unix: i64,
    store_error: fn(crate::store::StoreError) -> crate::ApiError,
) -> Result<(String, Address), crate::ApiError> {
    use axum::http::StatusCode;
    let nonce = nonce_of(message).ok_or_else(|| {
        crate::ApiError::invalid("the message is not a challenge of this service (no single `Nonce:` line): sign the challenge you were given, unchanged")
    })?;
    let c = store.live_challenge(nonce, now_unix).map_err(store_error)?;
    if c.message != message {
        return Err(crate::ApiError::invalid("the message differs from the challenge issued with this nonce: sign the challenge text unchanged"));
    }
    let addr = Address::from_bech32(&c.address).map_err(|e| crate::ApiError::invalid_address(&c.address, e))?;
    verify(message, signature, &addr).map_err(|e| {
        let why = match e {
            SignatureProblem::Encoding => "the signature must be 0x followed by 130 hex digits (r, s, v)".to_string(),
            SignatureProblem::Unrecoverable(w) => format!("the signature recovers no key ({w})"),
            SignatureProblem::OtherSigner(a) => format!("the signature was made by {}, not by {} to whom the challenge was issued", a.to_hex(), addr.to_hex()),
        };
        crate::ApiError::new(StatusCode::UNAUTHORIZED, "bad_signature", format!("the challenge's signature does not prove control of the address: {why}"))
    })?;
    Ok((nonce.to_string(), addr))
}

/// The nonce line of a message, if it has exactly one.
pub(crate) fn nonce_of(message: &str) -> Option<&str> {
    let mut found = message.lines().filter_map(|l| l.strip_prefix("Nonce: "));
    let n = found.next()?;
    found.next().is_none().then_some(n)
}

/// The digest `personal_sign` signs: keccak256("\x19Ethereum Signed Message:\n" ‖ len ‖ message).
pub fn personal_digest(message: &str) -> [u8; 32] {
    let mut data = format!("\x19Ethereum Signed Message:\n{}", message.len()).into_bytes();
    data.extend_from_slice(message.as_bytes());
    lantau_crypto::keccak256(&data)
}

/// Why a signature does not prove the address.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SignatureProblem {
    /// Not `0x` + 130 hex digits.
    Encoding,
    /// It does not recover a key (bad recovery byte, high S, not on the curve).
    Unrecoverable(String),
    /// It recovers another address.
    OtherSigner(Address),
}

/// Checks that `signature` (hex `r ‖ s ‖ v`, v 27/28 or 0/1) over `message` was made by `expected`.
pub(crate) fn verify(message: &str, signature: &str, expected: &Address) -> Result<(), SignatureProblem> {
    let body = signature.strip_prefix("0x").unwrap_or(signature);
    let sig = hex::decode(body).map_err(|_| SignatureProblem::Encoding)?;
    if sig.len() != 65 {
        return Err(SignatureProblem::Encoding);
    }
    let signer = lantau_crypto::recover_address(&personal_digest(message), &sig).map_err(|e| SignatureProblem::Unrecoverable(e.to_string()))?;
    if &signer == expected {
        Ok(())
    } else {
        Err(SignatureProblem::OtherSigner(signer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(key: &lantau_crypto::SecretKey, message: &str) -> String {
        let mut sig = key.sign_digest(&personal_digest(message));
        sig[64] += 27;
        format!("0x{}", const_hex::encode(sig))
    }

    #[test]
    fn a_challenge_reads_as_eip_4361_and_its_signature_proves_the_address() {
        let key = lantau_crypto::SecretKey::from_hex("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318").unwrap();
        let addr = key.address();
        let c = Challenge {
            domain: "127.0.0.1:8080",
            scheme: "http",
            address: &addr,
            statement: STATEMENT,
            path: "/kyc/apply",
            chain_id: 852,
            nonce: "abcdef0123456789",
            issued_at: "2026-11-24T12:00:00Z",
            expires_at: "2026-11-24T12:10:00Z",
        };
        let m = c.message();
        let lines: Vec<&str> = m.lines().collect();
        assert_eq!(lines[0], "127.0.0.1:8080 wants you to sign in with your Ethereum account:");
        assert_eq!(lines[1], addr.to_hex());
        assert_eq!(lines[2], "");
        assert_eq!(lines[3], STATEMENT);
        assert_eq!(
            &lines[5..],
            [
                "URI: http://127.0.0.1:8080/kyc/apply",
                "Version: 1",
                "Chain ID: 852",
                "Nonce: abcdef0123456789",
                "Issued At: 2026-11-24T12:00:00Z",
                "Expiration Time: 2026-11-24T12:10:00Z"
            ]
        );
        assert_eq!(nonce_of(&m), Some("abcdef0123456789"));

        let sig = sign(&key, &m);
        assert_eq!(verify(&m, &sig, &addr), Ok(()));
        // v as 0/1 too (some libraries), without 0x.
        let mut raw = hex::decode(&sig[2..]).unwrap();
        raw[64] -= 27;
        assert_eq!(verify(&m, &const_hex::encode(&raw), &addr), Ok(()));
        // Another text, another key, garbage.
        assert!(matches!(verify(&format!("{m} "), &sig, &addr), Err(SignatureProblem::OtherSigner(_))));
        let other = lantau_crypto::SecretKey::from_hex(&"11".repeat(32)).unwrap();
        assert!(matches!(verify(&m, &sign(&other, &m), &addr), Err(SignatureProblem::OtherSigner(_))));
        assert_eq!(verify(&m, "0x1234", &addr), Err(SignatureProblem::Encoding));
        assert!(matches!(verify(&m, &format!("0x{}", "00".repeat(65)), &addr), Err(SignatureProblem::Unrecoverable(_))));
    }

    #[test]
    fn a_message_with_two_nonce_lines_has_no_nonce() {
        assert_eq!(nonce_of("Nonce: a\nNonce: b"), None);
        assert_eq!(nonce_of("no nonce here"), None);
    }

    #[test]
    fn the_personal_digest_matches_a_known_vector() {
        // keccak256("\x19Ethereum Signed Message:\n11hello world"), as ethers/viem hashMessage.
        assert_eq!(const_hex::encode(personal_digest("hello world")), "d9eba16ed0ecae432b71fe008c98cc872bb4cc214d3220a36f365326cf807d68");
    }
}
