//! One transaction's layer of writes over the state below it, found by hash, that can be rolled
//! back to a checkpoint.
//!
//! A transaction runs in small layers: the ante's, its messages', a group proposal's, the EVM's
//! Cosmos effects (rolled back with the call frames that revert). cnidarium's `StateDelta` keeps
//! each layer's writes in `BTreeMap`s, forks by stacking layers, and on `apply` merges every
//! layer into a new `BTreeMap` (one insertion per write, then another per write into the state
//! below). A [`Layer`] keeps one map per kind of write; a read or a write is one hash and one
//! comparison; a [`Layer::checkpoint`] costs nothing until writes follow it, and then each write
//! notes what it replaced, so [`Layer::revert`] puts those back (an undo log, as an EVM's
//! journal does). [`Layer::apply`] writes the layer into the state below in key order, the order
//! a `StateDelta` applies in, so what the state below sees does not depend on the maps' seeds.
//!
//! Objects follow the writes (checkpointed, reverted, merged below on apply). Events recorded
//! into the layer are handed back by `apply`, as `StateDelta::apply` hands them back.

// The maps are iterated only to be sorted (`apply`, a prefix's matches), never into state.
#![allow(clippy::disallowed_types)]

use std::any::Any;
use std::ops::RangeBounds;

use anyhow::Result;
use cnidarium::{StateRead, StateWrite};
use futures::future::{Either, Ready};
use futures::stream::BoxStream;
use tendermint::abci;

use crate::flat::{in_range, keys_over, merged, object_over, object_type_over, read_over, Map, Objects, WriteList};

type Object = Option<Box<dyn Any + Send + Sync>>;

/// What a write replaced, for [`Layer::revert`] (`None`: the layer had no write of the key).
enum Undo {
    Verifiable(String, Option<Option<Vec<u8>>>),
    Nonverifiable(Vec<u8>, Option<Option<Vec<u8>>>),
    Object(&'static str, Option<Object>),
}

/// A point of a [`Layer`] to roll back to ([`Layer::revert`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoint {
    undo: usize,
    events: usize,
}

/// Writes over `S`, in hash maps, with checkpoints to roll back to.
pub struct Layer<S> {
    base: S,
    verifiable: Map<String>,
    nonverifiable: Map<Vec<u8>>,
    objects: Objects,
    events: Vec<abci::Event>,
    /// Whether writes note what they replace (from the first checkpoint on).
    journal: bool,
    undo: Vec<Undo>,
}

impl<S: std::fmt::Debug> std::fmt::Debug for Layer<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Layer")
            .field("base", &self.base)
            .field("verifiable", &self.verifiable.len())
            .field("nonverifiable", &self.nonverifiable.len())
            .field("objects", &self.objects.keys().collect::<Vec<_>>())
            .field("undo", &self.undo.len())
            .finish_non_exhaustive()
    }
}

/// A layer's writes in key order, taken out of it ([`Layer::into_changes`]) to be written
/// elsewhere ([`LayerChanges::apply_to`]).
#[derive(Default)]
pub struct LayerChanges {
    verifiable: WriteList<String>,
    nonverifiable: WriteList<Vec<u8>>,
    objects: Objects,
    events: Vec<abci::Event>,
}

impl std::fmt::Debug for LayerChanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LayerChanges")
            .field("verifiable", &self.verifiable.len())
            .field("nonverifiable", &self.nonverifiable.len())
            .field("objects", &self.objects.keys().collect::<Vec<_>>())
            .field("events", &self.events.len())
            .finish()
    }
}

impl LayerChanges {
    /// Writes the changes to `state` in key order (verifiable, then rows, then objects), then
    /// records the events there.
    pub fn apply_to<W: StateWrite>(self, state: &mut W) {
        let events = self.write_to(state);
        for e in events {
            state.record(e);
        }
    }

    /// The writes to `state`; the events handed back.
    fn write_to<W: StateWrite>(self, state: &mut W) -> Vec<abci::Event> {
        for (k, v) in self.verifiable {
            match v {
                Some(v) => state.put_raw(k, v),
                None => state.delete(k),
            }
        }
        for (k, v) in self.nonverifiable {
            match v {
                Some(v) => state.nonverifiable_put_raw(k, v),
                None => state.nonverifiable_delete(k),
            }
        }
        if !self.objects.is_empty() {
            state.object_merge(self.objects);
        }
        self.events
    }
}

fn sorted<K: Ord>(map: Map<K>) -> WriteList<K> {
    let mut v: Vec<_> = map.into_iter().collect();
    v.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    v
}

/// The writes of `map` under `prefix`, sorted.
fn under<K: AsRef<[u8]> + Ord + Clone>(map: &Map<K>, prefix: &[u8]) -> WriteList<K> {
    let mut v: Vec<_> = map.iter().filter(|(k, _)| k.as_ref().starts_with(prefix)).map(|(k, v)| (k.clone(), v.clone())).collect();
    v.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    v
}

impl<S: StateRead> Layer<S> {
    /// No writes yet over `base`.
    pub fn new(base: S) -> Self {
        Self { base, verifiable: Map::default(), nonverifiable: Map::default(), objects: Objects::new(), events: Vec::new(), journal: false, undo: Vec::new() }
    }

    /// The layer as it stands, to come back to with [`Layer::revert`]. Reverting to a
    /// checkpoint drops every later one.
    pub fn checkpoint(&mut self) -> Checkpoint {
        self.journal = true;
        Checkpoint { undo: self.undo.len(), events: self.events.len() }
    }

    /// Undoes every write, object and event since `to` was taken.
    pub fn revert(&mut self, to: Checkpoint) {
        while self.undo.len() > to.undo {
            match self.undo.pop() {
                Some(Undo::Verifiable(k, before)) => restore(&mut self.verifiable, k, before),
                Some(Undo::Nonverifiable(k, before)) => restore(&mut self.nonverifiable, k, before),
                Some(Undo::Object(k, before)) => match before {
                    Some(o) => {
                        self.objects.insert(k, o);
                    }
                    None => {
                        self.objects.remove(k);
                    }
                },
                None => break,
            }
        }
        self.events.truncate(to.events);
    }

    /// The state below and the layer's writes in key order.
    pub fn into_changes(self) -> (S, LayerChanges) {
        let Self { base, verifiable, nonverifiable, objects, events, .. } = self;
        (base, LayerChanges { verifiable: sorted(verifiable), nonverifiable: sorted(nonverifiable), objects, events })
    }

    fn object_write(&mut self, key: &'static str, value: Object) {
        let before = self.objects.insert(key, value);
        if self.journal {
            self.undo.push(Undo::Object(key, before));
        }
    }
}

fn restore<K: std::hash::Hash + Eq>(map: &mut Map<K>, key: K, before: Option<Option<Vec<u8>>>) {
    match before {
        Some(v) => {
            map.insert(key, v);
        }
        None => {
            map.remove(&key);
        }
    }
}

impl<S: StateWrite> Layer<S> {
    /// Writes the layer into the state below (in key order) and hands that state back, with
    /// the events recorded into the layer.
    pub fn apply(self) -> (S, Vec<abci::Event>) {
        let (mut base, changes) = self.into_changes();
        let events = changes.write_to(&mut base);
        (base, events)
    }
}

impl<S: StateRead> StateRead for Layer<S> {
    type GetRawFut = Either<Ready<Result<Option<Vec<u8>>>>, S::GetRawFut>;
    type PrefixRawStream = BoxStream<'static, Result<(String, Vec<u8>)>>;
    type PrefixKeysStream = BoxStream<'static, Result<String>>;
    type NonconsensusPrefixRawStream = BoxStream<'static, Result<(Vec<u8>, Vec<u8>)>>;
    type NonconsensusRangeRawStream = BoxStream<'static, Result<(Vec<u8>, Vec<u8>)>>;

    fn get_raw(&self, key: &str) -> Self::GetRawFut {
        read_over(self.verifiable.get(key), || self.base.get_raw(key))
    }

    fn nonverifiable_get_raw(&self, key: &[u8]) -> Self::GetRawFut {
        read_over(self.nonverifiable.get(key), || self.base.nonverifiable_get_raw(key))
    }

    fn object_get<T: Any + Send + Sync + Clone>(&self, key: &'static str) -> Option<T> {
        object_over(self.objects.get(key), || self.base.object_get(key))
    }

    fn object_type(&self, key: &'static str) -> Option<std::any::TypeId> {
        object_type_over(self.objects.get(key), || self.base.object_type(key))
    }

    fn prefix_raw(&self, prefix: &str) -> Self::PrefixRawStream {
        merged(under(&self.verifiable, prefix.as_bytes()), self.base.prefix_raw(prefix))
    }

    fn prefix_keys(&self, prefix: &str) -> Self::PrefixKeysStream {
        keys_over(&under(&self.verifiable, prefix.as_bytes()), self.base.prefix_keys(prefix))
    }

    fn nonverifiable_prefix_raw(&self, prefix: &[u8]) -> Self::NonconsensusPrefixRawStream {
        merged(under(&self.nonverifiable, prefix), self.base.nonverifiable_prefix_raw(prefix))
    }

    fn nonverifiable_range_raw(&self, prefix: Option<&[u8]>, range: impl RangeBounds<Vec<u8>>) -> Result<Self::NonconsensusRangeRawStream> {
        let p = prefix.unwrap_or_default();
        let writes = in_range(&under(&self.nonverifiable, p), p, &range)?;
        Ok(merged(writes, self.base.nonverifiable_range_raw(prefix, range)?))
    }
}

impl<S: StateRead> StateWrite for Layer<S> {
    fn put_raw(&mut self, key: String, value: Vec<u8>) {
        if self.journal {
            let before = self.verifiable.insert(key.clone(), Some(value));
            self.undo.push(Undo::Verifiable(key, before));
        } else {
            self.verifiable.insert(key, Some(value));
        }
    }

    fn delete(&mut self, key: String) {
        if self.journal {
            let before = self.verifiable.insert(key.clone(), None);
            self.undo.push(Undo::Verifiable(key, before));
        } else {
            self.verifiable.insert(key, None);
        }
    }

    fn nonverifiable_put_raw(&mut self, key: Vec<u8>, value: Vec<u8>) {
        if self.journal {
            let before = self.nonverifiable.insert(key.clone(), Some(value));
            self.undo.push(Undo::Nonverifiable(key, before));
        } else {
            self.nonverifiable.insert(key, Some(value));
        }
    }

    fn nonverifiable_delete(&mut self, key: Vec<u8>) {
        if self.journal {
            let before = self.nonverifiable.insert(key.clone(), None);
            self.undo.push(Undo::Nonverifiable(key, before));
        } else {
            self.nonverifiable.insert(key, None);
        }
    }

    fn object_put<T: Clone + Any + Send + Sync>(&mut self, key: &'static str, value: T) {
        self.object_write(key, Some(Box::new(value)));
    }

    fn object_delete(&mut self, key: &'static str) {
        self.object_write(key, None);
    }

    fn object_merge(&mut self, objects: Objects) {
        for (k, v) in objects {
            self.object_write(k, v);
        }
    }

    fn record(&mut self, event: abci::Event) {
        self.events.push(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cnidarium::StateDelta;
    use futures::TryStreamExt as _;

    #[tokio::test]
    async fn reverts_to_a_checkpoint_writes_objects_and_events() {
        let storage = crate::TempStorage::new().await.unwrap();
        let mut base = StateDelta::new(storage.latest_snapshot());
        base.put_raw("k".into(), b"0".to_vec());
        let mut l = Layer::new(&base);
        l.put_raw("k".into(), b"1".to_vec());
        l.object_put("o", 1u32);
        let first = l.checkpoint();
        l.put_raw("k".into(), b"2".to_vec());
        l.put_raw("n".into(), b"2".to_vec());
        l.nonverifiable_put_raw(b"r".to_vec(), b"2".to_vec());
        l.object_put("o", 2u32);
        l.object_put("p", 2u32);
        l.record(abci::Event::new("e", Vec::<abci::EventAttribute>::new()));
        let second = l.checkpoint();
        l.delete("k".into());
        assert_eq!(l.get_raw("k").await.unwrap(), None);
        l.revert(second);
        assert_eq!(l.get_raw("k").await.unwrap(), Some(b"2".to_vec()));
        assert_eq!(l.object_get::<u32>("o"), Some(2));
        let keys: Vec<String> = l.prefix_keys("").try_collect().await.unwrap();
        assert_eq!(keys, ["k", "n"]);
        l.revert(first);
        assert_eq!(l.get_raw("k").await.unwrap(), Some(b"1".to_vec()));
        assert_eq!(l.get_raw("n").await.unwrap(), None);
        assert_eq!(l.nonverifiable_get_raw(b"r").await.unwrap(), None);
        assert_eq!(l.object_get::<u32>("o"), Some(1));
        assert_eq!(l.object_get::<u32>("p"), None);
        // An object of another type reads as none.
        assert_eq!(l.object_get::<u64>("o"), None);
        let (_, changes) = l.into_changes();
        assert_eq!(changes.verifiable, [("k".to_string(), Some(b"1".to_vec()))]);
        assert!(changes.nonverifiable.is_empty());
        assert!(changes.events.is_empty());
        assert_eq!(changes.objects.len(), 1);
    }
}
