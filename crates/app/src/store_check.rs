//! The app store's corruption policy at open (docs/decisions.md, "The corruption policy").
//! Before the store (`lantau_store`) opens a home, this opens it read-only with RocksDB's
//! paranoid checks and reads every key of every column family with block checksums verified: a
//! damaged store (garbage in an SST file, a truncated or deleted one, a missing MANIFEST or
//! CURRENT) is refused with one clear message, before anything can answer from it. RocksDB
//! meets a damaged block only when something reads it, and reads a missing MANIFEST as an empty
//! store, so the check has to come first and has to read everything.

use std::path::Path;

use rocksdb::{IteratorMode, Options, ReadOptions, DB};

/// Read-ahead of the verification's sequential scans.
const READAHEAD: usize = 2 << 20;

/// What a verification read.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Verified {
    /// Live SST files.
    pub(crate) files: usize,
    /// Their bytes.
    pub(crate) bytes: u64,
    /// Keys read (every column family).
    pub(crate) keys: u64,
    /// Milliseconds taken.
    pub(crate) ms: f64,
}

/// Verifies the store at `path`: `Ok(None)` when there is none yet (a new store), what was read
/// when every block of it reads back with its checksum, a description of the damage otherwise
/// (RocksDB's messages name the file, and for a bad block its offset).
pub(crate) fn verify(path: &Path) -> Result<Option<Verified>, String> {
    let started = crate::stopwatch::Stopwatch::start();
    let names: Vec<String> = match std::fs::read_dir(path) {
        Ok(dir) => dir
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("its directory cannot be listed: {e}"))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("its directory cannot be listed: {e}")),
    };
    let has = |f: &dyn Fn(&str) -> bool| names.iter().any(|n| f(n));
    if !has(&|n| n == "CURRENT") {
        // No CURRENT and nothing RocksDB wrote: a new store. Files without CURRENT: RocksDB
        // would create a new, empty store over them (the chain would start again at genesis).
        if has(&|n| n.starts_with("MANIFEST-") || n.ends_with(".sst") || n.ends_with(".log")) {
            return Err("its CURRENT file (which names the MANIFEST that lists the store's files) is missing".into());
        }
        return Ok(None);
    }
    let current = std::fs::read_to_string(path.join("CURRENT")).map_err(|e| format!("its CURRENT file cannot be read: {e}"))?;
    let manifest = current.trim_end();
    if !manifest.starts_with("MANIFEST-") || manifest.contains('/') {
        return Err(format!("its CURRENT file does not name a MANIFEST (it holds {:?})", current.escape_debug().to_string()));
    }
    if !has(&|n| n == manifest) {
        return Err(format!("its MANIFEST ({manifest}, named by CURRENT), the list of the store's files, is missing"));
    }
    let mut opts = Options::default();
    opts.create_if_missing(false);
    opts.set_paranoid_checks(true);
    opts.set_skip_checking_sst_file_sizes_on_db_open(false);
    let columns = DB::list_cf(&opts, path).map_err(|e| e.to_string())?;
    let db = DB::open_cf_for_read_only(&opts, path, &columns, false).map_err(|e| e.to_string())?;
    let live = db.live_files().map_err(|e| e.to_string())?;
    let bytes = live.iter().map(|f| u64::try_from(f.size).unwrap_or(u64::MAX)).fold(0u64, u64::saturating_add);
    let mut keys = 0u64;
    for name in &columns {
        let cf = db.cf_handle(name).ok_or_else(|| format!("its column family {name} does not open"))?;
        let mut ro = ReadOptions::default();
        ro.set_verify_checksums(true);
        ro.fill_cache(false);
        ro.set_readahead_size(READAHEAD);
        for item in db.iterator_cf_opt(cf, ro, IteratorMode::Start) {
            item.map_err(|e| format!("reading its column family {name}: {e}"))?;
            keys = keys.saturating_add(1);
        }
    }
    Ok(Some(Verified { files: live.len(), bytes, keys, ms: started.ms() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_store_is_new_and_a_store_without_current_is_damaged() {
        let dir = tempfile::tempdir().unwrap();
        assert!(verify(&dir.path().join("none")).unwrap().is_none());
        assert!(verify(dir.path()).unwrap().is_none(), "an empty directory is a new store");
        std::fs::write(dir.path().join("000007.sst"), b"x").unwrap();
        assert!(verify(dir.path()).unwrap_err().contains("CURRENT"));
    }

    #[test]
    fn garbage_in_a_written_store_is_found() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = DB::open_default(dir.path()).unwrap();
            for i in 0..20_000u32 {
                db.put(i.to_be_bytes(), [7u8; 100]).unwrap();
            }
            db.flush().unwrap();
        }
        let v = verify(dir.path()).unwrap().unwrap();
        assert_eq!(v.keys, 20_000);
        let sst = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension().is_some_and(|e| e == "sst")).unwrap();
        let mut bytes = std::fs::read(&sst).unwrap();
        let mid = bytes.len() / 3;
        for b in &mut bytes[mid..mid + 4096] {
            *b ^= 0x5a;
        }
        std::fs::write(&sst, bytes).unwrap();
        let e = verify(dir.path()).unwrap_err();
        assert!(e.contains("Corruption") && e.contains(".sst"), "{e}");
    }
}
