//! A directory-based keyring, like the Cosmos SDK's `--keyring-backend test|file`.
//!
//! Each key `<name>` is two files in the keyring directory:
//!
//! - `<name>.info.json`: public information only, `{name, address, hex_address, pubkey, backend}`.
//! - `<name>.key`: the secret. With [`KeyringBackend::Test`] it is plain JSON
//!   `{"private_key": "<hex>", "mnemonic": "..."}` (the mnemonic only when the key came from one);
//!   with [`KeyringBackend::File`] it is an Ethereum keystore v3 JSON (scrypt + aes-128-ctr)
//!   encrypted with the passphrase, and no mnemonic is stored.
//!
//! On unix the directory is created `0700` and files are written `0600`. A key can only be
//! decrypted by a keyring opened with the backend it was stored with.

use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::keys::{KeyError, SecretKey};
use crate::mnemonic::{generate_mnemonic, secret_key_from_mnemonic};

/// Where and how secrets are stored.
#[derive(Clone, PartialEq, Eq)]
pub enum KeyringBackend {
    /// Unencrypted JSON files; for development and tests only.
    Test,
    /// Ethereum keystore v3 files encrypted with `passphrase`.
    File {
        /// The passphrase that encrypts every key of this keyring.
        passphrase: String,
    },
}

impl KeyringBackend {
    /// The backend's name as recorded in info files: `"test"` or `"file"`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Test => "test",
            Self::File { .. } => "file",
        }
    }
}

impl fmt::Debug for KeyringBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Test => f.write_str("Test"),
            Self::File { .. } => f.write_str("File { passphrase: <redacted> }"),
        }
    }
}

/// Public information about a stored key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyInfo {
    /// The key's name in the keyring.
    pub name: String,
    /// Bech32 account address (`lantau1...`).
    pub address: String,
    /// EIP-55 hex address (`0x...`).
    pub hex_address: String,
    /// Hex of the 33-byte compressed public key.
    pub pubkey: String,
}

/// Errors from keyring operations.
#[derive(Debug, thiserror::Error)]
pub enum KeyringError {
    /// The name is not 1 to 64 characters of `[a-zA-Z0-9_-]`.
    #[error("invalid key name {0:?}: use 1-64 characters of [a-zA-Z0-9_-]")]
    InvalidName(String),
    /// A key with this name already exists.
    #[error("key {0:?} already exists")]
    Exists(String),
    /// No key with this name.
    #[error("key {0:?} not found")]
    NotFound(String),
    /// The passphrase does not decrypt the key.
    #[error("wrong passphrase")]
    WrongPassphrase,
    /// The key was stored by another backend than the one this keyring was opened with.
    #[error("key {name:?} is stored with the {stored:?} backend")]
    BackendMismatch {
        /// The key's name.
        name: String,
        /// The backend recorded in its info file.
        stored: String,
    },
    /// A key file is malformed or inconsistent with its info file.
    #[error("key {name:?} is corrupt: {reason}")]
    Corrupt {
        /// The key's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// Invalid key material (bad hex, bad mnemonic, ...).
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The keystore library failed.
    #[error("keystore: {0}")]
    Keystore(String),
    /// A filesystem error.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// The on-disk info file: [`KeyInfo`] plus the backend that holds the secret.
#[derive(Serialize, Deserialize)]
struct InfoFile {
    #[serde(flatten)]
    info: KeyInfo,
    backend: String,
}

/// The test backend's secret file.
#[derive(Serialize, Deserialize)]
struct TestKeyFile {
    private_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mnemonic: Option<String>,
}

/// A keyring rooted at a directory.
#[derive(Debug, Clone)]
pub struct Keyring {
    dir: PathBuf,
    backend: KeyringBackend,
}

impl Keyring {
    /// Opens (creating if needed, `0700` on unix) the keyring directory `dir`.
    pub fn open(dir: &Path, backend: KeyringBackend) -> Result<Self, KeyringError> {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir)?;
        Ok(Self { dir: dir.to_path_buf(), backend })
    }

    /// The keyring directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The backend this keyring was opened with.
    pub fn backend(&self) -> &KeyringBackend {
        &self.backend
    }

    /// Derives account `index` of `phrase` (see [`secret_key_from_mnemonic`]) and stores it.
    pub fn add_from_mnemonic(&self, name: &str, phrase: &str, index: u32) -> Result<KeyInfo, KeyringError> {
        check_name(name)?;
        let key = secret_key_from_mnemonic(phrase, index)?;
        let phrase = phrase.split_whitespace().collect::<Vec<_>>().join(" ");
        self.store(name, &key, Some(&phrase))
    }

    /// Generates a 24-word mnemonic, stores its account 0 and returns the mnemonic.
    pub fn add_new(&self, name: &str) -> Result<(KeyInfo, String), KeyringError> {
        check_name(name)?;
        let phrase = generate_mnemonic();
        let info = self.add_from_mnemonic(name, &phrase, 0)?;
        Ok((info, phrase))
    }

    /// Stores a raw private key given as hex (optional `0x`).
    pub fn import_private_key(&self, name: &str, hex: &str) -> Result<KeyInfo, KeyringError> {
        check_name(name)?;
        let key = SecretKey::from_hex(hex)?;
        self.store(name, &key, None)
    }

    /// All keys, sorted by name.
    pub fn list(&self) -> Result<Vec<KeyInfo>, KeyringError> {
        let mut out = Vec::new();
        for entry in fs::read_dir(&self.dir)? {
            let file_name = entry?.file_name();
            let Some(name) = file_name.to_str().and_then(|f| f.strip_suffix(".info.json")) else {
                continue;
            };
            if check_name(name).is_ok() {
                out.push(self.read_info(name)?.info);
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// The public information of key `name`.
    pub fn get(&self, name: &str) -> Result<KeyInfo, KeyringError> {
        check_name(name)?;
        Ok(self.read_info(name)?.info)
    }

    /// Loads (and with the file backend decrypts) the secret key `name`.
    pub fn secret(&self, name: &str) -> Result<SecretKey, KeyringError> {
        check_name(name)?;
        let info = self.read_info(name)?;
        if info.backend != self.backend.name() {
            return Err(KeyringError::BackendMismatch { name: name.into(), stored: info.backend });
        }
        let corrupt = |reason: String| KeyringError::Corrupt { name: name.into(), reason };
        let path = self.key_path(name);
        let key = match &self.backend {
            KeyringBackend::Test => {
                let file: TestKeyFile = serde_json::from_slice(&read(&path, name)?).map_err(|e| corrupt(e.to_string()))?;
                SecretKey::from_hex(&file.private_key).map_err(|e| corrupt(e.to_string()))?
            }
            KeyringBackend::File { passphrase } => {
                check_keystore(&read(&path, name)?).map_err(|r| corrupt(r.into()))?;
                let bytes = eth_keystore::decrypt_key(&path, passphrase).map_err(|e| match e {
                    eth_keystore::KeystoreError::MacMismatch => KeyringError::WrongPassphrase,
                    other => KeyringError::Keystore(other.to_string()),
                })?;
                SecretKey::from_bytes(&bytes).map_err(|e| corrupt(e.to_string()))?
            }
        };
        if key.address().to_bech32() != info.info.address {
            return Err(corrupt("secret does not match the stored address".into()));
        }
        Ok(key)
    }

    /// The secret key `name` as 64 hex digits without `0x`.
    pub fn export_private_key(&self, name: &str) -> Result<String, KeyringError> {
        Ok(self.secret(name)?.to_hex())
    }

    /// Removes key `name` (both its files).
    pub fn delete(&self, name: &str) -> Result<(), KeyringError> {
        check_name(name)?;
        match fs::remove_file(self.info_path(name)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(KeyringError::NotFound(name.into())),
            other => other?,
        }
        match fs::remove_file(self.key_path(name)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => Ok(other?),
        }
    }

    fn info_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.info.json"))
    }

    fn key_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.key"))
    }

    fn read_info(&self, name: &str) -> Result<InfoFile, KeyringError> {
        serde_json::from_slice(&read(&self.info_path(name), name)?).map_err(|e| KeyringError::Corrupt { name: name.into(), reason: e.to_string() })
    }

    /// Writes the secret file, then the info file; `name` must already be validated.
    fn store(&self, name: &str, key: &SecretKey, mnemonic: Option<&str>) -> Result<KeyInfo, KeyringError> {
        let info_path = self.info_path(name);
        if info_path.exists() {
            return Err(KeyringError::Exists(name.into()));
        }
        let key_path = self.key_path(name);
        let pubkey = key.public_key();
        let address = pubkey.address();
        let info_file = InfoFile {
            info: KeyInfo { name: name.into(), address: address.to_bech32(), hex_address: address.to_hex(), pubkey: const_hex::encode(pubkey.to_compressed()) },
            backend: self.backend.name().into(),
        };
        let info_json = to_json(&info_file)?;
        // Creating the key file exclusively (and 0600) first claims the name.
        let secret_json = match &self.backend {
            KeyringBackend::Test => to_json(&TestKeyFile { private_key: key.to_hex(), mnemonic: mnemonic.map(str::to_owned) })?,
            KeyringBackend::File { .. } => Vec::new(),
        };
        write_new(&key_path, &secret_json, name)?;
        let rest = || {
            if let KeyringBackend::File { passphrase } = &self.backend {
                // eth-keystore truncates and rewrites the file, which keeps its 0600 mode.
                let file_name = format!("{name}.key");
                let mut rng = rand::rngs::OsRng;
                eth_keystore::encrypt_key(&self.dir, &mut rng, key.to_bytes(), passphrase, Some(&file_name))
                    .map_err(|e| KeyringError::Keystore(e.to_string()))?;
            }
            write_new(&info_path, &info_json, name)
        };
        if let Err(e) = rest() {
            // Do not leave a secret behind without its info file. Best effort.
            let _ = fs::remove_file(&key_path);
            return Err(e);
        }
        Ok(info_file.info)
    }
}

/// Serializes to pretty JSON.
fn to_json<T: Serialize>(value: &T) -> Result<Vec<u8>, KeyringError> {
    serde_json::to_vec_pretty(value).map_err(|e| KeyringError::Keystore(e.to_string()))
}

/// Checks `[a-zA-Z0-9_-]{1,64}`.
fn check_name(name: &str) -> Result<(), KeyringError> {
    let ok = (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(KeyringError::InvalidName(name.into()))
    }
}

/// Reads a file, mapping "missing" to [`KeyringError::NotFound`].
fn read(path: &Path, name: &str) -> Result<Vec<u8>, KeyringError> {
    fs::read(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => KeyringError::NotFound(name.into()),
        _ => e.into(),
    })
}

/// Creates a new file (failing with [`KeyringError::Exists`] if present), `0600` on unix.
fn write_new(path: &Path, contents: &[u8], name: &str) -> Result<(), KeyringError> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(|e| match e.kind() {
        io::ErrorKind::AlreadyExists => KeyringError::Exists(name.into()),
        _ => e.into(),
    })?;
    file.write_all(contents)?;
    file.sync_all()?;
    Ok(())
}

/// Sanity-checks a keystore v3 JSON before handing it to `eth-keystore`, whose decryption
/// panics on short keys or IVs and would allocate whatever scrypt memory the file asks for.
fn check_keystore(json: &[u8]) -> Result<(), &'static str> {
    let v: serde_json::Value = serde_json::from_slice(json).map_err(|_| "not JSON")?;
    let crypto = v.get("crypto").or_else(|| v.get("Crypto")).ok_or("no crypto section")?;
    let hex_len = |s: Option<&serde_json::Value>| s.and_then(|s| s.as_str()).and_then(|s| hex::decode(s.trim_start_matches("0x")).ok()).map(|b| b.len());
    if hex_len(crypto.pointer("/cipherparams/iv")) != Some(16) {
        return Err("bad iv");
    }
    if hex_len(crypto.get("ciphertext")) != Some(32) {
        return Err("bad ciphertext");
    }
    let params = crypto.get("kdfparams").ok_or("no kdfparams")?;
    let num = |k: &str| params.get(k).and_then(|n| n.as_u64());
    if num("dklen") != Some(32) {
        return Err("bad dklen");
    }
    match crypto.get("kdf").and_then(|k| k.as_str()) {
        Some("scrypt") => {
            let sane =
                matches!(num("n"), Some(n) if n.is_power_of_two() && n <= 1 << 20) && matches!(num("r"), Some(1..=32)) && matches!(num("p"), Some(1..=16));
            if !sane {
                return Err("unsupported scrypt parameters");
            }
        }
        Some("pbkdf2") if matches!(num("c"), Some(1..=10_000_000)) => {}
        _ => return Err("unsupported kdf"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PHRASE: &str = "test test test test test test test test test test test junk";
    const HARDHAT0: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

    fn round_trip(backend: KeyringBackend) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("keyring");
        let kr = Keyring::open(&path, backend.clone()).expect("open");
        let alice = kr.add_from_mnemonic("alice", PHRASE, 0).expect("alice");
        assert_eq!(alice.hex_address, HARDHAT0);
        assert_eq!(alice.address, lantau_primitives::Address::from_hex(HARDHAT0).expect("hex").to_bech32());
        let (bob, phrase) = kr.add_new("bob").expect("bob");
        assert_eq!(phrase.split(' ').count(), 24);
        let carol_key = SecretKey::random();
        let carol = kr.import_private_key("carol", &format!("0x{}", carol_key.to_hex())).expect("carol");

        let names: Vec<_> = kr.list().expect("list").into_iter().map(|k| k.name).collect();
        assert_eq!(names, ["alice", "bob", "carol"]);
        assert_eq!(kr.get("bob").expect("get"), bob);
        assert_eq!(kr.secret("bob").expect("secret").address().to_bech32(), bob.address);
        assert_eq!(kr.secret("carol").expect("secret"), carol_key);
        assert_eq!(kr.export_private_key("carol").expect("export"), carol_key.to_hex());
        assert_eq!(carol.pubkey, const_hex::encode(carol_key.public_key().to_compressed()));

        // Info files hold no secrets; the mnemonic is kept only by the test backend.
        let info = fs::read_to_string(path.join("carol.info.json")).expect("info");
        assert!(!info.contains(&carol_key.to_hex()));
        let key_file = fs::read_to_string(path.join("bob.key")).expect("key");
        assert_eq!(key_file.contains(&phrase), backend == KeyringBackend::Test);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o700);
            assert_eq!(mode(&path.join("bob.key")), 0o600);
            assert_eq!(mode(&path.join("bob.info.json")), 0o600);
        }

        assert!(matches!(kr.add_new("alice"), Err(KeyringError::Exists(_))));
        assert!(matches!(kr.import_private_key("carol", &carol_key.to_hex()), Err(KeyringError::Exists(_))));
        for bad in ["", "a b", "../x", "é", &"x".repeat(65)] {
            assert!(matches!(kr.add_new(bad), Err(KeyringError::InvalidName(_))), "{bad:?}");
        }
        kr.delete("bob").expect("delete");
        assert!(matches!(kr.get("bob"), Err(KeyringError::NotFound(_))));
        assert!(matches!(kr.secret("bob"), Err(KeyringError::NotFound(_))));
        assert!(matches!(kr.delete("bob"), Err(KeyringError::NotFound(_))));
        assert_eq!(kr.list().expect("list").len(), 2);
        // Reopening sees the same keys.
        let again = Keyring::open(&path, backend).expect("reopen");
        assert_eq!(again.secret("alice").expect("alice").address().to_hex(), HARDHAT0);
    }

    #[test]
    fn test_backend_round_trip() {
        round_trip(KeyringBackend::Test);
    }

    #[test]
    fn file_backend_round_trip() {
        round_trip(KeyringBackend::File { passphrase: "correct horse".into() });
    }

    #[test]
    fn file_backend_wrong_passphrase_and_mismatch() {
        let dir = tempfile::tempdir().expect("tempdir");
        let good = KeyringBackend::File { passphrase: "right".into() };
        let kr = Keyring::open(dir.path(), good).expect("open");
        kr.add_from_mnemonic("k", PHRASE, 1).expect("add");
        let keystore: serde_json::Value = serde_json::from_slice(&fs::read(dir.path().join("k.key")).expect("read")).expect("json");
        assert_eq!(keystore["version"], 3);
        assert_eq!(keystore["crypto"]["cipher"], "aes-128-ctr");

        let wrong = Keyring::open(dir.path(), KeyringBackend::File { passphrase: "wrong".into() }).expect("open");
        assert!(matches!(wrong.secret("k"), Err(KeyringError::WrongPassphrase)));
        let test = Keyring::open(dir.path(), KeyringBackend::Test).expect("open");
        assert!(matches!(test.secret("k"), Err(KeyringError::BackendMismatch { .. })));
        assert_eq!(test.get("k").expect("get").hex_address, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8");

        // A truncated keystore is reported, not a panic.
        fs::write(dir.path().join("k.key"), br#"{"crypto":{"cipherparams":{"iv":"00"}}}"#).expect("write");
        assert!(matches!(kr.secret("k"), Err(KeyringError::Corrupt { .. })));
        assert!(!format!("{:?}", kr.backend()).contains("right"));
    }
}
