//! ABCI events. The type is tendermint-rs's, so both consensus drivers pass it through as is.

pub use tendermint::abci::Event;

/// Builds an event whose attributes are all indexed (searchable), as the Cosmos SDK does.
pub fn event<K: Into<String>, V: Into<String>>(
    kind: &str,
    attrs: impl IntoIterator<Item = (K, V)>,
) -> Event {
    Event::new(kind, attrs.into_iter().map(|(k, v)| (k, v, true)))
}
