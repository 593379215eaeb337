//! The web faces' embedded database (RocksDB), one per service and home: the portal's
//! challenges and identity applications (with the applicants' personal data, which never goes
//! on chain), and the compliance desk's sign-in challenges, notes and attachments. One process
//! owns it; a lock makes each read-modify-write atomic.
//!
//! | key | value |
//! | --- | --- |
//! | `c/<nonce>` | a challenge (JSON) |
//! | `e/<expiry, unix seconds, 20 digits>/<nonce>` | the expiry index of challenges (empty) |
//! | `a/<id, 20 digits>` | an application with its IVMS101 record (JSON) |
//! | `x/<address, lower-case hex>` | the id of the address's latest application |
//! | `m/next_id` | the next application id |
//! | `n/<chain id>/<flag id, 20 digits>/<note sha256, hex>` | a note on a flag (JSON) |
//! | `f/<sha256, hex>` | an attachment's bytes |

use std::path::Path;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A challenge as issued.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct StoredChallenge {
    /// Bech32 address it was issued to.
    pub address: String,
    /// The exact EIP-4361 text.
    pub message: String,
    /// Unix seconds after which it is refused.
    pub expires_unix: i64,
    /// Set once an application used it.
    pub used: bool,
}

/// A note a person of the desk wrote on a flag (the escalation note whose hash the flag carries).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct StoredNote {
    /// The author's bech32 address (signed in).
    pub author: String,
    /// RFC 3339.
    pub at: String,
    /// The text.
    pub text: String,
    /// sha256 of the text, lower-case hex (what the chain records).
    pub hash: String,
    /// The attachments' names and sha256 (their bytes under `f/<sha256>`).
    #[serde(default)]
    pub attachments: Vec<AttachmentRef>,
}

/// An attachment of a note.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct AttachmentRef {
    /// The file's name as uploaded.
    pub name: String,
    /// sha256 of its bytes, lower-case hex.
    pub sha256: String,
    /// Its length.
    pub bytes: usize,
}

fn note_prefix(chain_id: &str, flag_id: u64) -> String {
    format!("n/{chain_id}/{flag_id:020}/")
}

/// Where an application stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    /// Waiting for an operator.
    Pending,
    /// The registrar's enrolment was committed.
    Enrolled,
    /// An operator refused it.
    Rejected,
    /// The enrolment transaction was refused or failed (`reason` says why).
    Failed,
}

impl Status {
    /// Parses the lower-case name.
    pub(crate) fn parse(s: &str) -> Option<Self> {
        serde_json::from_value(Value::String(s.to_string())).ok()
    }
}

/// An identity application.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Application {
    /// Decimal id.
    pub id: String,
    /// Bech32 address.
    pub address: String,
    /// EIP-55 hex address.
    pub hex_address: String,
    /// Where it stands.
    pub status: Status,
    /// The level it enrols at (`LEVEL_…`).
    pub level: String,
    /// The content hash of the IVMS101 record, the only trace of it on chain.
    pub ivms101_off_chain_ref: String,
    /// The enrolment transaction.
    pub tx_hash: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339 of the approval, rejection or failure.
    pub decided_at: Option<String>,
    /// Why it was rejected or failed.
    pub reason: Option<String>,
    /// The IVMS101 natural person (operator routes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<Value>,
}

impl Application {
    /// The public view: everything but the personal data.
    pub(crate) fn public(&self) -> Self {
        Self { person: None, ..self.clone() }
    }
}

/// Why a store operation did not happen.
#[derive(Debug)]
pub(crate) enum StoreError {
    NoChallenge,
    Used,
    Expired,
    AlreadyApplied(Box<Application>),
    NotFound,
    Db(String),
}

impl From<rocksdb::Error> for StoreError {
    fn from(e: rocksdb::Error) -> Self {
        StoreError::Db(e.to_string())
    }
}

/// The database.
pub(crate) struct Store {
    db: rocksdb::DB,
    lock: Mutex<()>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Store")
    }
}

fn expiry_key(expires_unix: i64, nonce: &str) -> String {
    format!("e/{:020}/{nonce}", expires_unix.max(0))
}

fn app_key(id: u64) -> String {
    format!("a/{id:020}")
}

impl Store {
    /// Opens (creating) the database at `path`.
    pub(crate) fn open(path: &Path) -> Result<Self, StoreError> {
        let mut opts = rocksdb::Options::default();
        opts.create_if_missing(true);
        Ok(Self { db: rocksdb::DB::open(&opts, path)?, lock: Mutex::new(()) })
    }

    fn get_json<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<Option<T>, StoreError> {
        match self.db.get(key.as_bytes())? {
            None => Ok(None),
            Some(b) => serde_json::from_slice(&b).map(Some).map_err(|e| StoreError::Db(format!("{key}: {e}"))),
        }
    }

    fn put_json<T: Serialize>(&self, key: &str, v: &T) -> Result<(), StoreError> {
        let b = serde_json::to_vec(v).map_err(|e| StoreError::Db(e.to_string()))?;
        self.db.put(key.as_bytes(), b)?;
        Ok(())
    }

    /// Keeps an issued challenge.
    pub(crate) fn put_challenge(&self, nonce: &str, c: &StoredChallenge) -> Result<(), StoreError> {
        let mut batch = rocksdb::WriteBatch::default();
        batch.put(format!("c/{nonce}"), serde_json::to_vec(c).map_err(|e| StoreError::Db(e.to_string()))?);
        batch.put(expiry_key(c.expires_unix, nonce), b"");
        self.db.write(batch)?;
        Ok(())
    }

    /// Deletes up to `most` challenges that expired before `before_unix` (oldest first).
    pub(crate) fn forget_challenges_expired_before(&self, before_unix: i64, most: usize) -> Result<usize, StoreError> {
        let _one = self.lock.lock();
        let mut batch = rocksdb::WriteBatch::default();
        let mut n = 0;
        for item in self.db.iterator(rocksdb::IteratorMode::From(b"e/", rocksdb::Direction::Forward)) {
            let (k, _) = item?;
            let Some(rest) = k.strip_prefix(b"e/") else { break };
            let text = String::from_utf8_lossy(rest).to_string();
            let Some((at, nonce)) = text.split_once('/') else { break };
            if at.parse::<i64>().map_or(true, |t| t >= before_unix) || n >= most {
                break;
            }
            batch.delete(&k);
            batch.delete(format!("c/{nonce}"));
            n += 1;
        }
        self.db.write(batch)?;
        Ok(n)
    }

    /// The challenge of `nonce`, unused and unexpired at `now_unix`.
    pub(crate) fn live_challenge(&self, nonce: &str, now_unix: i64) -> Result<StoredChallenge, StoreError> {
        let c: StoredChallenge = self.get_json(&format!("c/{nonce}"))?.ok_or(StoreError::NoChallenge)?;
        if c.used {
            return Err(StoreError::Used);
        }
        if now_unix >= c.expires_unix {
            return Err(StoreError::Expired);
        }
        Ok(c)
    }

    /// Marks `nonce` used: the challenge it names, unused and unexpired at `now_unix` (a sign-in).
    pub(crate) fn use_challenge(&self, nonce: &str, now_unix: i64) -> Result<StoredChallenge, StoreError> {
        let _one = self.lock.lock();
        let mut c = self.live_challenge(nonce, now_unix)?;
        c.used = true;
        self.put_json(&format!("c/{nonce}"), &c)?;
        Ok(c)
    }

    /// Keeps a note on flag `flag_id` of chain `chain_id`, with its attachments' bytes.
    pub(crate) fn put_note(&self, chain_id: &str, flag_id: u64, note: &StoredNote, files: &[Vec<u8>]) -> Result<(), StoreError> {
        let mut batch = rocksdb::WriteBatch::default();
        for (a, bytes) in note.attachments.iter().zip(files) {
            batch.put(format!("f/{}", a.sha256), bytes);
        }
        batch.put(
            format!("{}{}", note_prefix(chain_id, flag_id), note.hash.to_lowercase()),
            serde_json::to_vec(note).map_err(|e| StoreError::Db(e.to_string()))?,
        );
        self.db.write(batch)?;
        Ok(())
    }

    /// The notes kept on a flag, in hash order.
    pub(crate) fn notes(&self, chain_id: &str, flag_id: u64) -> Result<Vec<StoredNote>, StoreError> {
        let prefix = note_prefix(chain_id, flag_id);
        let mut out = Vec::new();
        for item in self.db.iterator(rocksdb::IteratorMode::From(prefix.as_bytes(), rocksdb::Direction::Forward)) {
            let (k, v) = item?;
            if !k.starts_with(prefix.as_bytes()) {
                break;
            }
            out.push(serde_json::from_slice(&v).map_err(|e| StoreError::Db(e.to_string()))?);
        }
        Ok(out)
    }

    /// An attachment's bytes.
    pub(crate) fn attachment(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.db.get(format!("f/{}", sha256.to_lowercase()).as_bytes())?)
    }

    /// Marks `nonce` used and records a new application for its address, in one step: a
    /// second use of the challenge, or an address with a pending or enrolled application,
    /// changes nothing.
    pub(crate) fn use_challenge_and_apply(&self, nonce: &str, now_unix: i64, mut app: Application) -> Result<Application, StoreError> {
        let _one = self.lock.lock();
        let mut c = self.live_challenge(nonce, now_unix)?;
        if let Some(existing) = self.by_address_locked(&app.hex_address)? {
            if matches!(existing.status, Status::Pending | Status::Enrolled) {
                return Err(StoreError::AlreadyApplied(Box::new(existing)));
            }
        }
        let next: u64 = self.get_json("m/next_id")?.unwrap_or(1);
        app.id = next.to_string();
        c.used = true;
        let mut batch = rocksdb::WriteBatch::default();
        let enc = |v: &dyn erased::Json| v.to_vec();
        batch.put(format!("c/{nonce}"), enc(&c)?);
        batch.put(app_key(next), enc(&app)?);
        batch.put(format!("x/{}", app.hex_address.to_lowercase()), enc(&next)?);
        batch.put("m/next_id", enc(&(next + 1))?);
        self.db.write(batch)?;
        Ok(app)
    }

    fn by_address_locked(&self, hex_address: &str) -> Result<Option<Application>, StoreError> {
        let Some(id): Option<u64> = self.get_json(&format!("x/{}", hex_address.to_lowercase()))? else {
            return Ok(None);
        };
        self.get_json(&app_key(id))
    }

    /// The latest application of an address.
    pub(crate) fn by_address(&self, hex_address: &str) -> Result<Option<Application>, StoreError> {
        self.by_address_locked(hex_address)
    }

    /// One application.
    pub(crate) fn get(&self, id: &str) -> Result<Application, StoreError> {
        let id: u64 = id.parse().map_err(|_| StoreError::NotFound)?;
        self.get_json(&app_key(id))?.ok_or(StoreError::NotFound)
    }

    /// Replaces an application (by its id).
    pub(crate) fn update(&self, app: &Application) -> Result<(), StoreError> {
        let id: u64 = app.id.parse().map_err(|_| StoreError::NotFound)?;
        let _one = self.lock.lock();
        self.put_json(&app_key(id), app)
    }

    /// Applications, oldest first, optionally of one status; at most `limit`.
    pub(crate) fn list(&self, status: Option<Status>, limit: usize) -> Result<Vec<Application>, StoreError> {
        let mut out = Vec::new();
        let iter = self.db.iterator(rocksdb::IteratorMode::From(b"a/", rocksdb::Direction::Forward));
        for item in iter {
            let (k, v) = item?;
            if !k.starts_with(b"a/") || out.len() >= limit {
                break;
            }
            let a: Application = serde_json::from_slice(&v).map_err(|e| StoreError::Db(e.to_string()))?;
            if status.is_none_or(|s| s == a.status) {
                out.push(a);
            }
        }
        Ok(out)
    }
}

mod erased {
    use super::StoreError;

    /// Serialises anything into a batch value.
    pub(super) trait Json {
        fn to_vec(&self) -> Result<Vec<u8>, StoreError>;
    }

    impl<T: serde::Serialize> Json for T {
        fn to_vec(&self) -> Result<Vec<u8>, StoreError> {
            serde_json::to_vec(self).map_err(|e| StoreError::Db(e.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(hex: &str) -> Application {
        Application {
            id: String::new(),
            address: "lantau1x".into(),
            hex_address: hex.into(),
            status: Status::Pending,
            level: "LEVEL_RETAIL_BASIC".into(),
            ivms101_off_chain_ref: "ivms101:sha256:00".into(),
            tx_hash: None,
            created_at: "2026-11-24T12:00:00Z".into(),
            decided_at: None,
            reason: None,
            person: Some(serde_json::json!({"naturalPerson": {}})),
        }
    }

    #[test]
    fn a_challenge_is_used_once_and_an_address_applies_once_while_pending_or_enrolled() {
        let dir = tempfile_dir();
        let s = Store::open(dir.path()).unwrap();
        let c = |addr: &str| StoredChallenge { address: addr.into(), message: "m".into(), expires_unix: 100, used: false };
        s.put_challenge("n1", &c("a")).unwrap();
        s.put_challenge("n2", &c("a")).unwrap();
        s.put_challenge("n3", &c("a")).unwrap();
        assert!(matches!(s.live_challenge("n1", 100), Err(StoreError::Expired)));
        assert!(matches!(s.live_challenge("nope", 1), Err(StoreError::NoChallenge)));
        let a = s.use_challenge_and_apply("n1", 50, app("0xAB")).unwrap();
        assert_eq!(a.id, "1");
        assert!(matches!(s.use_challenge_and_apply("n1", 50, app("0xCD")), Err(StoreError::Used)));
        // Same address (any case) while pending: refused, and n2 stays unused.
        assert!(matches!(s.use_challenge_and_apply("n2", 50, app("0xab")), Err(StoreError::AlreadyApplied(_))));
        assert!(s.live_challenge("n2", 50).is_ok());
        // Rejected: may apply again.
        let mut rejected = s.get("1").unwrap();
        rejected.status = Status::Rejected;
        s.update(&rejected).unwrap();
        assert_eq!(s.use_challenge_and_apply("n2", 50, app("0xab")).unwrap().id, "2");
        assert_eq!(s.list(None, 10).unwrap().len(), 2);
        assert_eq!(s.list(Some(Status::Pending), 10).unwrap().len(), 1);
        assert_eq!(s.by_address("0xAB").unwrap().unwrap().id, "2");
        assert!(s.get("1").unwrap().public().person.is_none());
        // Expired long ago: forgotten (then refused as unknown), the live one stays.
        s.put_challenge("old", &StoredChallenge { address: "a".into(), message: "m".into(), expires_unix: 5, used: false }).unwrap();
        assert_eq!(s.forget_challenges_expired_before(50, 10).unwrap(), 1, "n1..n3 expire at 100: only old is before 50");
        assert!(matches!(s.live_challenge("old", 1), Err(StoreError::NoChallenge)));
        assert!(s.live_challenge("n3", 1).is_ok());
        drop(s);
        // It survives a restart.
        let s = Store::open(dir.path()).unwrap();
        assert!(matches!(s.live_challenge("n1", 1), Err(StoreError::Used)));
        assert!(s.live_challenge("n3", 1).is_ok());
    }

    #[test]
    fn notes_are_kept_per_chain_and_flag_with_their_attachments_and_a_challenge_signs_in_once() {
        let dir = tempfile_dir();
        let s = Store::open(dir.path()).unwrap();
        let file = b"%PDF evidence".to_vec();
        let note = |text: &str| StoredNote {
            author: "lantau1r".into(),
            at: "2026-11-27T12:00:00Z".into(),
            text: text.into(),
            hash: const_hex::encode(lantau_crypto::sha256(text.as_bytes())),
            attachments: vec![AttachmentRef { name: "e.pdf".into(), sha256: const_hex::encode(lantau_crypto::sha256(&file)), bytes: file.len() }],
        };
        s.put_note("lantau-local-1", 7, &note("escalate"), std::slice::from_ref(&file)).unwrap();
        s.put_note("lantau-local-1", 70, &note("other flag"), std::slice::from_ref(&file)).unwrap();
        s.put_note("other-chain", 7, &note("other chain"), std::slice::from_ref(&file)).unwrap();
        assert_eq!(s.notes("lantau-local-1", 7).unwrap(), vec![note("escalate")]);
        assert_eq!(s.attachment(&note("x").attachments[0].sha256).unwrap(), Some(file));
        s.put_challenge("n", &StoredChallenge { address: "a".into(), message: "m".into(), expires_unix: 100, used: false }).unwrap();
        assert!(s.use_challenge("n", 50).is_ok());
        assert!(matches!(s.use_challenge("n", 50), Err(StoreError::Used)));
    }

    fn tempfile_dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }
}
