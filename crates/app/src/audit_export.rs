//! The audit log taken away: an export of a time range of rows with everything needed to check
//! them offline against the chain, and the check.
//!
//! The log's rows are hash-chained (`head = sha256(head ‖ sha256(row))` from 32 zero bytes)
//! and the chain's head and row count are verifiable state, so the app hash commits to every
//! row. An export ([`AuditExport`]) carries:
//!
//! - one link per row from 1 to the anchor's count: the rows in the range whole (their
//!   protobuf bytes, the same row decoded for reading, and the chain head after it), every
//!   other row as its 32-byte digest (`sha256(row)`), so the chain can be recomputed without
//!   the rows outside the range;
//! - the anchor: the committed count and head at a height, each with its ICS-23 proof against
//!   that state's root, and the header of the next block, whose `app_hash` is that root.
//!
//! [`verify`] recomputes the chain from the links, checks each row's decoded fields against
//! its bytes, the chain's end against the proven head, the proofs against the header's app
//! hash, and the header's hash. It names the first row that breaks the chain. What it cannot
//! check offline is that the header is the chain's: it prints the header's hash and height
//! for the auditor to compare with any node they trust (`lantaud query block`).

use cnidarium::StateRead;
use futures::StreamExt;
use lantau_compliance::AuditEntry;
use prost::Message as _;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

/// The format tag of an export.
pub const FORMAT: &str = "lantau-audit-export/1";

/// An audit export (the JSON `lantaud audit export` writes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditExport {
    /// [`FORMAT`].
    pub format: String,
    /// The chain's id.
    pub chain_id: String,
    /// The range's start (RFC 3339), when one was given.
    pub from: Option<String>,
    /// The range's end (RFC 3339), when one was given.
    pub to: Option<String>,
    /// What the links are checked against.
    pub anchor: Anchor,
    /// One per row, sequences 1 to `anchor.audit_sequence`.
    pub links: Vec<Link>,
}

/// The committed state an export is checked against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Anchor {
    /// The height whose state the proofs are of.
    pub height: u64,
    /// The number of rows then (`compliance/audit_seq`).
    pub audit_sequence: u64,
    /// The chain head then (`compliance/audit_head`), hex.
    pub audit_head: String,
    /// The ICS-23 proof of `compliance/audit_seq` (protobuf `CommitmentProof`, hex).
    pub sequence_proof: String,
    /// The ICS-23 proof of `compliance/audit_head` (hex).
    pub head_proof: String,
    /// The header of block `height + 1` (CometBFT's JSON), whose `app_hash` is the root the
    /// proofs lead to.
    pub header: Option<serde_json::Value>,
}

/// A row of the chain: whole (in the range) or its digest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Link {
    /// A row in the range.
    Row {
        /// Its sequence.
        sequence: u64,
        /// Its protobuf bytes (`AuditEntry`), hex: what the chain hashes.
        row: String,
        /// The same row decoded (the REST shape), for reading; checked against `row`.
        entry: serde_json::Value,
        /// The chain head after it, hex.
        head: String,
    },
    /// A row outside the range: `sha256(row)`, hex.
    Digest {
        /// Its sequence.
        sequence: u64,
        /// sha256 of its bytes, hex.
        digest: String,
    },
}

/// The rows and the anchor's proofs of an export, built on the committed state after block
/// `anchor` (whose root is the `app_hash` of block `anchor + 1`'s header, which the caller
/// adds). Rows whose block time is in `[from, to]` (either bound optional) are whole.
pub(crate) async fn build(
    snap: &lantau_store::Snapshot,
    chain_id: String,
    anchor: u64,
    from: Option<time::OffsetDateTime>,
    to: Option<time::OffsetDateTime>,
) -> Result<AuditExport, AppError> {
    use lantau_audit::state_key as keys;
    let proven = |key: &str| {
        let key = key.as_bytes().to_vec();
        async move {
            let (value, proof) = snap.get_with_proof(key).await.map_err(AppError::store)?;
            let proof = const_hex::encode(proof.encode_to_vec());
            Ok::<_, AppError>((value, proof))
        }
    };
    let (seq, sequence_proof) = proven(keys::AUDIT_SEQ).await?;
    let (head, head_proof) = proven(keys::AUDIT_HEAD).await?;
    let (Some(seq), Some(head)) = (seq, head) else {
        return Err(AppError::Unavailable(format!("the audit log is empty at height {anchor}: nothing to export")));
    };
    let count = u64::from_be_bytes(seq.as_slice().try_into().map_err(|_| AppError::Corrupt { key: keys::AUDIT_SEQ, why: "not 8 bytes".into() })?);
    let fmt = |t: time::OffsetDateTime| t.format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
    let mut links = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    let mut chain = [0u8; 32];
    let mut rows = std::pin::pin!(snap.nonverifiable_prefix_raw(keys::AUDIT_ROW_PREFIX));
    while let Some(kv) = rows.next().await {
        let (_, bytes) = kv.map_err(AppError::store)?;
        let entry = AuditEntry::decode(bytes.as_slice()).map_err(|e| AppError::Corrupt { key: "compliance/audit/row", why: e.to_string() })?;
        if entry.sequence > count {
            break;
        }
        let expected = u64::try_from(links.len()).unwrap_or(u64::MAX).saturating_add(1);
        if entry.sequence != expected {
            return Err(AppError::Corrupt { key: "compliance/audit/row", why: format!("row {expected} missing (found {})", entry.sequence) });
        }
        chain = lantau_audit::chain_head(&chain, &bytes);
        let at = entry.block_time.as_ref().and_then(|t| time::OffsetDateTime::from_unix_timestamp(t.seconds).ok());
        let inside = at.is_some_and(|t| from.is_none_or(|f| t >= f) && to.is_none_or(|u| t <= u));
        links.push(if inside {
            Link::Row {
                sequence: entry.sequence,
                entry: serde_json::to_value(&entry).map_err(|e| AppError::Corrupt { key: "compliance/audit/row", why: e.to_string() })?,
                row: const_hex::encode(&bytes),
                head: const_hex::encode(chain),
            }
        } else {
            Link::Digest { sequence: entry.sequence, digest: const_hex::encode(lantau_crypto::sha256(&bytes)) }
        });
    }
    if u64::try_from(links.len()).unwrap_or(u64::MAX) != count || chain.as_slice() != head.as_slice() {
        return Err(AppError::Corrupt { key: keys::AUDIT_HEAD, why: "the stored rows do not chain to the committed head".into() });
    }
    Ok(AuditExport {
        format: FORMAT.into(),
        chain_id,
        from: from.map(fmt),
        to: to.map(fmt),
        anchor: Anchor { height: anchor, audit_sequence: count, audit_head: const_hex::encode(head), sequence_proof, head_proof, header: None },
        links,
    })
}

/// What a verified export holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The rows in the range (whole in the file).
    pub rows: usize,
    /// Their first and last sequences.
    pub sequences: Option<(u64, u64)>,
    /// The rows the chain holds in all.
    pub total: u64,
    /// The height of the block whose header carries the app hash (anchor + 1).
    pub header_height: u64,
    /// That header's hash (compare it with the chain's block at that height).
    pub header_hash: String,
    /// The app hash the proofs lead to.
    pub app_hash: String,
}

/// Checks an export offline: every row's fields against its bytes, the hash chain link by link
/// (naming the first row that breaks it), the chain's end against the proven head and count,
/// the proofs against the header's app hash. The header itself is the caller's to compare
/// with the chain ([`Verified::header_hash`]).
pub fn verify(x: &AuditExport) -> Result<Verified, String> {
    if x.format != FORMAT {
        return Err(format!("not an audit export of this format ({:?}, expected {FORMAT:?})", x.format));
    }
    let unhex32 = |s: &str, what: &str| -> Result<[u8; 32], String> {
        let b = hex::decode(s).map_err(|e| format!("{what}: {e}"))?;
        <[u8; 32]>::try_from(b.as_slice()).map_err(|_| format!("{what}: not 32 bytes"))
    };
    let mut chain = [0u8; 32];
    let (mut rows, mut first, mut last) = (0usize, None, None);
    for (i, link) in x.links.iter().enumerate() {
        let expected = u64::try_from(i).unwrap_or(u64::MAX).saturating_add(1);
        match link {
            Link::Digest { sequence, digest } => {
                if *sequence != expected {
                    return Err(format!("link {expected} carries sequence {sequence}: rows are missing or out of order"));
                }
                let d = unhex32(digest, &format!("row {sequence}'s digest"))?;
                chain = lantau_crypto::sha256(&[chain.as_slice(), d.as_slice()].concat());
            }
            Link::Row { sequence, row, entry, head } => {
                if *sequence != expected {
                    return Err(format!("link {expected} carries sequence {sequence}: rows are missing or out of order"));
                }
                let bytes = hex::decode(row).map_err(|e| format!("row {sequence}: its bytes are not hex: {e}"))?;
                let decoded = AuditEntry::decode(bytes.as_slice()).map_err(|e| format!("row {sequence}: its bytes are not an audit row: {e}"))?;
                if decoded.sequence != *sequence {
                    return Err(format!("row {sequence}: its bytes say sequence {}", decoded.sequence));
                }
                let shown = serde_json::to_value(&decoded).map_err(|e| e.to_string())?;
                if &shown != entry {
                    return Err(format!("row {sequence}: its fields were edited: they no longer match the row's bytes"));
                }
                chain = lantau_audit::chain_head(&chain, &bytes);
                if const_hex::encode(chain) != head.to_ascii_lowercase() {
                    return Err(format!("row {sequence} breaks the hash chain: its bytes (or an earlier row's) were changed"));
                }
                rows = rows.saturating_add(1);
                first = first.or(Some(*sequence));
                last = Some(*sequence);
            }
        }
    }
    let a = &x.anchor;
    let total = u64::try_from(x.links.len()).unwrap_or(u64::MAX);
    if total != a.audit_sequence {
        return Err(format!("the file links {total} rows but the chain held {} at height {}", a.audit_sequence, a.height));
    }
    let head = unhex32(&a.audit_head, "anchor audit_head")?;
    if chain != head {
        return Err(format!(
            "the rows do not reach the committed head: they chain to {}, the chain's head at height {} is {}",
            const_hex::encode(chain),
            a.height,
            a.audit_head
        ));
    }
    let header: tendermint::block::Header =
        serde_json::from_value(a.header.clone().ok_or("the export carries no block header")?).map_err(|e| format!("the block header: {e}"))?;
    if header.height.value() != a.height.saturating_add(1) {
        return Err(format!("the header is of block {}, not {} (the block after the anchor)", header.height, a.height.saturating_add(1)));
    }
    if header.chain_id.as_str() != x.chain_id {
        return Err(format!("the header is of chain {}, not {}", header.chain_id, x.chain_id));
    }
    let root = header.app_hash.as_bytes().to_vec();
    let spec = cnidarium::ics23_spec();
    use lantau_audit::state_key as keys;
    for (key, value, proof) in [(keys::AUDIT_SEQ, a.audit_sequence.to_be_bytes().to_vec(), &a.sequence_proof), (keys::AUDIT_HEAD, head.to_vec(), &a.head_proof)]
    {
        let bytes = hex::decode(proof).map_err(|e| format!("the proof of {key}: {e}"))?;
        let p = ics23::CommitmentProof::decode(bytes.as_slice()).map_err(|e| format!("the proof of {key}: {e}"))?;
        if !ics23::verify_membership::<ics23::HostFunctionsManager>(&p, &spec, &root, key.as_bytes(), &value) {
            return Err(format!("the proof of {key} does not lead to the app hash of block {}", header.height));
        }
    }
    Ok(Verified {
        rows,
        sequences: first.zip(last),
        total,
        header_height: header.height.value(),
        header_hash: header.hash().to_string(),
        app_hash: const_hex::encode_upper(&root),
    })
}
