//! ABCI events. The type is tendermint-rs's, so both consensus drivers pass it through as is.

pub use tendermint::abci::Event;

/// Builds an event whose attributes are all indexed (searchable), as the Cosmos SDK does.
pub fn event<K: Into<String>, V: Into<String>>(kind: &str, attrs: impl IntoIterator<Item = (K, V)>) -> Event {
    Event::new(kind, attrs.into_iter().map(|(k, v)| (k, v, true)))
}

/// A typed event as the Cosmos SDK emits one (`EmitTypedEvent`): the event type is the
/// message's full protobuf name (`chain.kyc.v1.EventLevelChanged`) and each attribute value is
/// the field's gRPC-gateway JSON (strings quoted, enums by name, 64-bit integers as quoted
/// strings). Attributes come in field-name order.
pub fn typed<M: prost::Name + serde::Serialize>(msg: &M) -> Event {
    let (kind, attrs) = lantau_proto::typed_event(msg);
    Event::new(kind, attrs.into_iter().map(|(k, v)| (k, v, true)))
}
