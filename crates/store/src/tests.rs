//! The store against cnidarium's: the same blocks give the same root hashes, reads, scans and
//! proofs, and each opens what the other wrote.

use std::collections::BTreeMap;

use cnidarium::{StateDelta, StateRead, StateWrite};
use futures::StreamExt;

use crate::{Snapshot, Storage};

/// A deterministic generator (splitmix64).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One block's changes: verifiable keys put (`Some`) or deleted, and rows.
#[derive(Default, Clone)]
struct Block {
    keys: BTreeMap<String, Option<Vec<u8>>>,
    rows: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
}

fn block(g: &mut Gen, height: u64, key_space: u64, writes: u64, with_deletes: bool) -> Block {
    let mut b = Block::default();
    // Every block writes its height, as the app does.
    b.keys.insert("app/height".into(), Some(height.to_be_bytes().to_vec()));
    for _ in 0..writes {
        let k = g.below(key_space);
        let key = format!("{}/k{k:05}", ["bank", "kyc", "compliance/flag"][(k % 3) as usize]);
        let value = if with_deletes && g.below(5) == 0 { None } else { Some(vec![(g.next() & 0xff) as u8; 1 + g.below(80) as usize]) };
        b.keys.insert(key, value);
        let row = format!("rows/{:05}", g.below(key_space)).into_bytes();
        let row_value = if g.below(7) == 0 { None } else { Some(g.next().to_be_bytes().to_vec()) };
        b.rows.insert(row, row_value);
    }
    b
}

fn apply<S: StateWrite>(state: &mut S, b: &Block) {
    for (k, v) in &b.keys {
        match v {
            Some(v) => state.put_raw(k.clone(), v.clone()),
            None => state.delete(k.clone()),
        }
    }
    for (k, v) in &b.rows {
        match v {
            Some(v) => state.nonverifiable_put_raw(k.clone(), v.clone()),
            None => state.nonverifiable_delete(k.clone()),
        }
    }
}

async fn commit_ours(s: &Storage, b: &Block) -> [u8; 32] {
    let mut d = StateDelta::new(s.latest_snapshot());
    apply(&mut d, b);
    s.commit(d).await.unwrap().0
}

async fn commit_theirs(s: &cnidarium::Storage, b: &Block) -> [u8; 32] {
    let mut d = StateDelta::new(s.latest_snapshot());
    apply(&mut d, b);
    s.commit(d).await.unwrap().0
}

async fn scan<S: StateRead>(s: &S, prefix: &str) -> Vec<(String, Vec<u8>)> {
    s.prefix_raw(prefix).map(|r| r.unwrap()).collect().await
}

async fn scan_keys<S: StateRead>(s: &S, prefix: &str) -> Vec<String> {
    s.prefix_keys(prefix).map(|r| r.unwrap()).collect().await
}

async fn rows<S: StateRead>(s: &S, prefix: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    s.nonverifiable_prefix_raw(prefix).map(|r| r.unwrap()).collect().await
}

async fn range<S: StateRead>(s: &S, prefix: &[u8], from: &[u8], to: Option<&[u8]>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let stream = match to {
        Some(t) => s.nonverifiable_range_raw(Some(prefix), from.to_vec()..t.to_vec()).unwrap().boxed(),
        None => s.nonverifiable_range_raw(Some(prefix), from.to_vec()..).unwrap().boxed(),
    };
    stream.map(|r| r.unwrap()).collect().await
}

/// Everything a reader sees in a snapshot of ours and one of cnidarium's is the same.
async fn same_reads(ours: &Snapshot, theirs: &cnidarium::Snapshot, key_space: u64) {
    assert_eq!(ours.version(), theirs.version());
    assert_eq!(ours.root_hash().await.unwrap().0, theirs.root_hash().await.unwrap().0);
    same_view(ours, theirs, key_space, &RANGES).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocks_give_cnidarium_s_roots_reads_scans_and_proofs() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ours = Storage::load(a.path().to_path_buf()).await.unwrap();
    let theirs = cnidarium::Storage::load(b.path().to_path_buf(), vec![]).await.unwrap();
    assert_eq!(ours.latest_version(), u64::MAX);
    assert_eq!(ours.latest_snapshot().root_hash().await.unwrap().0, theirs.latest_snapshot().root_hash().await.unwrap().0);
    let mut g = Gen(7);
    let key_space = 120;
    for height in 0..24u64 {
        // Blocks with deletions take the tree's key-by-key path, the others its batch.
        let writes = 1 + g.below(60);
        let b = block(&mut g, height, key_space, writes, height % 3 == 2);
        let (r1, r2) = (commit_ours(&ours, &b).await, commit_theirs(&theirs, &b).await);
        assert_eq!(r1, r2, "height {height}");
        assert_eq!(ours.latest_version(), height);
        // Some versions are read across files, the others from memtables alone.
        if height % 6 == 5 {
            ours.flush().unwrap();
        }
        same_reads(&ours.latest_snapshot(), &theirs.latest_snapshot(), key_space).await;
    }
    // An older version still open reads as it was.
    let (o, t) = (ours.snapshot(20).unwrap(), theirs.snapshot(20).unwrap());
    same_reads(&o, &t, key_space).await;
    assert!(ours.snapshot(3).is_none(), "only the last ten versions stay open");

    // Proofs: the same bytes as cnidarium's, and they verify against the root.
    let snap = ours.latest_snapshot();
    let root = snap.root_hash().await.unwrap();
    let spec = jmt::ics23_spec();
    for k in 0..key_space {
        let key = format!("{}/k{k:05}", ["bank", "kyc", "compliance/flag"][(k % 3) as usize]);
        let (value, proof) = snap.get_with_proof(key.clone().into_bytes()).await.unwrap();
        let (their_value, their_proof) = theirs.latest_snapshot().get_with_proof(key.clone().into_bytes()).await.unwrap();
        assert_eq!(value, their_value);
        assert_eq!(vec![proof.clone()], their_proof.proofs, "{key}");
        match value {
            Some(v) => assert!(ics23::verify_membership::<ics23::HostFunctionsManager>(&proof, &spec, &root.0.to_vec(), key.as_bytes(), &v)),
            None => assert!(ics23::verify_non_membership::<ics23::HostFunctionsManager>(&proof, &spec, &root.0.to_vec(), key.as_bytes())),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_opens_what_the_other_wrote_and_goes_on_to_the_same_roots() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut g = Gen(11);
    let key_space = 80;
    let blocks: Vec<Block> = (0..12u64).map(|h| block(&mut g, h, key_space, 30, h % 4 == 1)).collect();
    // Directory a: cnidarium writes the first half, then this store the rest; b the other way.
    let mut roots_a = Vec::new();
    let mut roots_b = Vec::new();
    {
        let theirs = cnidarium::Storage::load(a.path().to_path_buf(), vec![]).await.unwrap();
        let ours = Storage::load(b.path().to_path_buf()).await.unwrap();
        for b in &blocks[..6] {
            roots_a.push(commit_theirs(&theirs, b).await);
            roots_b.push(commit_ours(&ours, b).await);
        }
        theirs.release().await;
        ours.release().await;
    }
    let ours = Storage::load(a.path().to_path_buf()).await.unwrap();
    let theirs = cnidarium::Storage::load(b.path().to_path_buf(), vec![]).await.unwrap();
    assert_eq!(ours.latest_version(), 5);
    assert_eq!(theirs.latest_version(), 5);
    same_reads(&ours.latest_snapshot(), &theirs.latest_snapshot(), key_space).await;
    for b in &blocks[6..] {
        roots_a.push(commit_ours(&ours, b).await);
        roots_b.push(commit_theirs(&theirs, b).await);
    }
    assert_eq!(roots_a, roots_b);
    same_reads(&ours.latest_snapshot(), &theirs.latest_snapshot(), key_space).await;
}

#[tokio::test]
async fn a_stale_or_out_of_order_commit_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::load(dir.path().to_path_buf()).await.unwrap();
    let b = block(&mut Gen(3), 0, 10, 5, false);
    let stale = StateDelta::new(s.latest_snapshot());
    commit_ours(&s, &b).await;
    let err = s.prepare_commit(stale).await.unwrap_err();
    assert!(err.to_string().contains("cannot be committed after version 0"), "{err}");

    let mut d = StateDelta::new(s.latest_snapshot());
    apply(&mut d, &block(&mut Gen(4), 1, 10, 5, false));
    let staged = s.prepare_commit(d).await.unwrap();
    assert_eq!(staged.version(), 1);
    commit_ours(&s, &block(&mut Gen(5), 1, 10, 5, false)).await;
    let root = s.latest_snapshot().root_hash().await.unwrap();
    let err = s.commit_batch(staged).unwrap_err();
    assert!(err.to_string().contains("cannot be written as version 2"), "{err}");
    assert_eq!(s.latest_version(), 1);
    assert_eq!(s.latest_snapshot().root_hash().await.unwrap(), root);
}

#[tokio::test]
async fn a_store_with_substores_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let theirs = cnidarium::Storage::load(dir.path().to_path_buf(), vec!["ibc".into()]).await.unwrap();
    theirs.release().await;
    let err = Storage::load(dir.path().to_path_buf()).await.unwrap_err();
    assert!(err.to_string().contains("substore-ibc-jmt") && err.to_string().contains("does not use"), "{err}");
}

/// Work a stopping runtime cancels before it began is `Stopping`, not a store failure: the
/// tree's update and a scan both say so, and a scan never ends as if there were no rows.
#[test]
fn work_a_stopping_runtime_cancels_is_stopping() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let s = rt.block_on(Storage::load(dir.path().to_path_buf())).unwrap();
    rt.block_on(commit_ours(&s, &block(&mut Gen(6), 0, 10, 5, false)));
    let snap = s.latest_snapshot();
    let base = snap.version();
    let handle = rt.handle().clone();
    rt.shutdown_background();

    let err = handle.block_on(s.prepare_changes(base, cnidarium::Cache::default(), Vec::new())).unwrap_err();
    assert!(err.downcast_ref::<crate::Stopping>().is_some(), "{err:#}");
    let first = handle.block_on(async { snap.prefix_raw("").next().await });
    let err = first.expect("the scan reports, not ends").unwrap_err();
    assert!(err.downcast_ref::<crate::Stopping>().is_some(), "{err:#}");
    let first = handle.block_on(async { snap.nonverifiable_prefix_raw(b"").next().await });
    assert!(first.expect("the scan reports, not ends").unwrap_err().downcast_ref::<crate::Stopping>().is_some());
    assert_eq!(s.latest_version(), base, "nothing was written");
}

/// A write staged in parts (the rows on one thread while the tree updates on another, then
/// joined; a large one given its room ahead) commits what the write staged at once does: the
/// same root and the same rows, in a batch of the same size.
#[tokio::test]
async fn a_write_staged_in_parts_is_the_write_staged_at_once() {
    let (a, b) = (crate::TempStorage::new().await.unwrap(), crate::TempStorage::new().await.unwrap());
    let mut g = Gen(11);
    for height in 0..3 {
        let blk = block(&mut g, height, 200, 60, height == 2);
        let mut extra: Vec<(Vec<u8>, Option<Vec<u8>>)> =
            (0..40u8).map(|i| (vec![b'x', i], if i % 7 == 0 { None } else { Some(vec![i; usize::from(i) * 3]) })).collect();
        // A write of over a megabyte is given its room ahead; the others grow.
        if height == 1 {
            extra.extend((0..200u16).map(|i| ([&b"y"[..], &i.to_be_bytes()].concat(), Some(vec![(i % 251) as u8; 8192]))));
        }
        let delta = |s: &Storage| {
            let mut d = StateDelta::new(s.latest_snapshot());
            apply(&mut d, &blk);
            d.flatten()
        };
        let (base, changes) = delta(&a);
        let at_once = a.prepare_changes(base.version(), changes, extra.clone()).await.unwrap();
        let (base, changes) = delta(&b);
        // The rows staged on one thread while the tree updates on another, then joined.
        let (staged_rows, tree) = std::thread::scope(|scope| {
            let staged_rows = scope.spawn(|| {
                let own = changes.nonverifiable_changes().iter().map(|(k, v)| (k.as_slice(), v.as_deref()));
                b.stage_rows(base.version(), changes.unwritten_changes().len(), own.chain(extra.iter().map(|(k, v)| (k.as_slice(), v.as_deref()))))
            });
            let tree = b.update_tree(base.version(), &changes).unwrap();
            (staged_rows.join().unwrap().unwrap(), tree)
        });
        assert_eq!(tree.root_hash(), at_once.root_hash(), "height {height}");
        let parts = b.staged(staged_rows, tree).unwrap();
        assert_eq!((parts.entries(), parts.bytes()), (at_once.entries(), at_once.bytes()));
        assert_eq!(a.commit_batch(at_once).unwrap(), b.commit_batch(parts).unwrap());
        let (sa, sb) = (a.latest_snapshot(), b.latest_snapshot());
        assert_eq!(rows(&sa, b"").await, rows(&sb, b"").await);
    }
}

/// The range reads compared (`from`, `to` under `rows/`).
const RANGES: [(&[u8], Option<&[u8]>); 5] =
    [(b"00010", Some(b"00050")), (b"00020", None), (b"", Some(b"")), (b"001", Some(b"0015")), (b"00150", Some(b"00150"))];

/// Everything two readers see is the same: point reads, scans, and the non-verifiable `ranges`
/// (cnidarium's delta panics on some: an empty end over a store holding rows past it, a delta
/// over a delta).
async fn same_view<A: StateRead, B: StateRead>(a: &A, b: &B, key_space: u64, ranges: &[(&[u8], Option<&[u8]>)]) {
    for k in 0..key_space {
        let key = format!("{}/k{k:05}", ["bank", "kyc", "compliance/flag"][(k % 3) as usize]);
        assert_eq!(a.get_raw(&key).await.unwrap(), b.get_raw(&key).await.unwrap(), "{key}");
        let row = format!("rows/{k:05}").into_bytes();
        assert_eq!(a.nonverifiable_get_raw(&row).await.unwrap(), b.nonverifiable_get_raw(&row).await.unwrap());
    }
    for prefix in ["", "bank/", "kyc/k0001", "compliance/", "nothing/"] {
        assert_eq!(scan(a, prefix).await, scan(b, prefix).await, "prefix {prefix}");
        assert_eq!(scan_keys(a, prefix).await, scan_keys(b, prefix).await, "prefix {prefix}");
    }
    for prefix in [&b""[..], b"rows/", b"rows/0001", b"zzz"] {
        assert_eq!(rows(a, prefix).await, rows(b, prefix).await);
    }
    for &(from, to) in ranges {
        assert_eq!(range(a, b"rows/", from, to).await, range(b, b"rows/", from, to).await);
    }
    let bad = a.nonverifiable_range_raw(Some(b"rows/"), b"9".to_vec()..b"1".to_vec()).is_err();
    assert_eq!(bad, b.nonverifiable_range_raw(Some(b"rows/"), b"9".to_vec()..b"1".to_vec()).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flat_delta_reads_scans_and_commits_as_a_state_delta() {
    let (a, b) = (crate::TempStorage::new().await.unwrap(), crate::TempStorage::new().await.unwrap());
    let mut g = Gen(23);
    let key_space = 300;
    for height in 0..5 {
        let mut delta = StateDelta::new(a.latest_snapshot());
        let mut flat = crate::FlatDelta::new(b.latest_snapshot());
        // Several transactions per block, each a delta of its own applied into the block's
        // layer, writing over and deleting what earlier ones (and earlier blocks) wrote.
        for _ in 0..6 {
            let tx = block(&mut g, height, key_space, 40, height > 0);
            let mut on_delta = StateDelta::new(&mut delta);
            apply(&mut on_delta, &tx);
            let mut on_flat = StateDelta::new(&mut flat);
            apply(&mut on_flat, &tx);
            same_view(&on_delta, &on_flat, key_space, &[]).await;
            on_delta.apply();
            on_flat.apply();
        }
        // The empty end is checked against the committed snapshot below.
        let ranges: Vec<_> = RANGES.into_iter().filter(|(_, to)| *to != Some(&b""[..])).collect();
        same_view(&delta, &flat, key_space, &ranges).await;
        let mut seen = Vec::new();
        for (from, to) in RANGES {
            seen.push(range(&flat, b"rows/", from, to).await);
        }
        let (base, changes) = delta.flatten();
        let (_, flat_changes) = flat.flatten();
        assert_eq!(changes.unwritten_changes(), crate::ChangeSet::unwritten_changes(&flat_changes));
        assert_eq!(changes.nonverifiable_changes(), crate::ChangeSet::nonverifiable_changes(&flat_changes));
        let staged = a.prepare_changes(base.version(), changes, Vec::new()).await.unwrap();
        let staged_rows =
            b.stage_rows(base.version(), 0, crate::ChangeSet::nonverifiable_changes(&flat_changes).iter().map(|(k, v)| (k.as_slice(), v.as_deref()))).unwrap();
        let flat_staged = b.staged(staged_rows, b.update_tree(base.version(), &flat_changes).unwrap()).unwrap();
        assert_eq!(staged.root_hash(), flat_staged.root_hash(), "height {height}");
        assert_eq!(a.commit_batch(staged).unwrap(), b.commit_batch(flat_staged).unwrap());
        // What the layer showed is what the store holds once it is committed.
        let committed = b.latest_snapshot();
        for ((from, to), seen) in RANGES.into_iter().zip(seen) {
            assert_eq!(range(&committed, b"rows/", from, to).await, seen, "{from:?}..{to:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_layer_reads_reverts_and_applies_as_a_state_delta() {
    let (a, b) = (crate::TempStorage::new().await.unwrap(), crate::TempStorage::new().await.unwrap());
    let key_space = 300;
    // A committed block below, so the layers write over and delete stored keys.
    let first = block(&mut Gen(5), 0, key_space, 200, false);
    commit_ours(&a, &first).await;
    commit_ours(&b, &first).await;
    let mut g = Gen(29);
    // The block's layer: a `StateDelta` on one side, the `FlatDelta` the app runs on the other.
    let mut delta = StateDelta::new(a.latest_snapshot());
    let mut flat = crate::FlatDelta::new(b.latest_snapshot());
    for round in 0..8u64 {
        // A transaction's layer on each, with the writes of a message; then a checkpoint (a
        // fork on cnidarium's side) and more writes, kept or rolled back.
        let mut on_delta = StateDelta::new(&mut delta);
        let mut on_layer = crate::Layer::new(&mut flat);
        let tx = block(&mut g, 1, key_space, 30, true);
        apply(&mut on_delta, &tx);
        apply(&mut on_layer, &tx);
        same_view(&on_delta, &on_layer, key_space, &[]).await;
        let kept = on_delta.fork();
        let at = on_layer.checkpoint();
        let call = block(&mut g, 1, key_space, 20, true);
        apply(&mut on_delta, &call);
        apply(&mut on_layer, &call);
        let inner_kept = on_delta.fork();
        let inner_at = on_layer.checkpoint();
        let inner = block(&mut g, 1, key_space, 10, true);
        apply(&mut on_delta, &inner);
        apply(&mut on_layer, &inner);
        same_view(&on_delta, &on_layer, key_space, &[]).await;
        match round % 3 {
            // Back past both calls.
            0 => {
                on_delta = kept;
                on_layer.revert(at);
            }
            // Back past the inner call only.
            1 => {
                on_delta = inner_kept;
                on_layer.revert(inner_at);
            }
            // Both kept.
            _ => {}
        }
        same_view(&on_delta, &on_layer, key_space, &[]).await;
        let after = block(&mut g, 1, key_space, 10, true);
        apply(&mut on_delta, &after);
        apply(&mut on_layer, &after);
        same_view(&on_delta, &on_layer, key_space, &[]).await;
        // A transaction that fails leaves nothing.
        if round == 5 {
            continue;
        }
        on_delta.apply();
        on_layer.apply();
    }
    same_view(&delta, &flat, key_space, &[]).await;
    let (_, changes) = delta.flatten();
    let (_, flat_changes) = flat.flatten();
    assert_eq!(changes.unwritten_changes(), crate::ChangeSet::unwritten_changes(&flat_changes));
    assert_eq!(changes.nonverifiable_changes(), crate::ChangeSet::nonverifiable_changes(&flat_changes));
}
