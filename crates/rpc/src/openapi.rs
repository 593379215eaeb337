//! The REST surface's OpenAPI 3.1 document, built from the routes themselves.
//!
//! Each REST handler carries a `#[utoipa::path]` declaration, and the router registers it
//! through `utoipa_axum::routes!` from that same declaration: a route exists on the server
//! exactly when it is in the document, with the method, path and parameters the handler reads.
//! Response bodies name their schemas:
//!
//! - the chain's own protobuf messages (`chain.*`, Cosmos EVM's `cosmos.evm.erc20.v1`) are
//!   generated here from the compiled descriptor set ([`lantau_proto::FILE_DESCRIPTOR_SET`]),
//!   following the JSON the node writes for them (pbjson: proto field names, defaults emitted,
//!   64-bit integers as strings, enums by name, bytes base64, timestamps RFC 3339);
//! - the Cosmos SDK shapes (tx responses, accounts, coins, blocks) are the types of [`shapes`],
//!   and each route's body a type beside its handler: one definition serialises the answer and
//!   documents it (`Serialize` + `ToSchema`).
//!
//! The document is served at `/openapi.json`, with Swagger UI (assets compiled into the binary)
//! at `/swagger`. CI runs schemathesis against a dev chain with this document: no 5xx, and
//! every response conforms to its declared schema.

use std::collections::BTreeMap;

use prost::Message as _;
use prost_types::field_descriptor_proto::{Label, Type as PbType};
use prost_types::{DescriptorProto, FileDescriptorSet};
use utoipa::openapi::schema::{AdditionalProperties, ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{OpenApi, Ref, RefOr};

/// The packages whose messages the REST surface renders: the chain's and Cosmos EVM's with
/// pbjson, `cosmos.base.v1beta1` (Coin) with cosmos-sdk-proto's serde (the same names).
const PROTO_PACKAGES: [&str; 3] = ["chain.", "cosmos.evm.erc20.", "cosmos.base.v1beta1."];

/// A reference to the generated schema of a protobuf message (for `schema_with`).
pub fn proto_ref<T: prost::Name>() -> Ref {
    Ref::from_schema_name(T::full_name())
}

/// A list of a protobuf message (for `schema_with`).
pub fn proto_list<T: prost::Name>() -> ArrayBuilder {
    ArrayBuilder::new().items(proto_ref::<T>())
}

/// A protobuf message that may be absent (`null`), as the gateway emits an unset message field.
pub fn proto_nullable<T: prost::Name>() -> OneOfBuilder {
    nullable(proto_ref::<T>().into())
}

fn nullable(s: RefOr<Schema>) -> OneOfBuilder {
    OneOfBuilder::new().item(s).item(ObjectBuilder::new().schema_type(SchemaType::Type(Type::Null)))
}

fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(SchemaType::Type(Type::String))
}

/// A decimal integer in a string: how the gateway writes 64-bit integers.
pub fn int_string() -> ObjectBuilder {
    string().pattern(Some("^-?[0-9]+$"))
}

struct Descriptors {
    /// Map-entry messages by full name: (key field, value field).
    map_entries: BTreeMap<String, (prost_types::FieldDescriptorProto, prost_types::FieldDescriptorProto)>,
    /// Enum value names by the enum's full name.
    enums: BTreeMap<String, Vec<String>>,
    /// Messages to describe, by full name.
    messages: BTreeMap<String, DescriptorProto>,
}

fn collect(prefix: &str, msgs: &[DescriptorProto], enums: &[prost_types::EnumDescriptorProto], d: &mut Descriptors) {
    for e in enums {
        let names = e.value.iter().map(|v| v.name().to_string()).collect();
        d.enums.insert(format!("{prefix}.{}", e.name()), names);
    }
    for m in msgs {
        let full = format!("{prefix}.{}", m.name());
        if m.options.as_ref().is_some_and(|o| o.map_entry()) {
            let key = m.field.iter().find(|f| f.number() == 1).cloned().unwrap_or_default();
            let value = m.field.iter().find(|f| f.number() == 2).cloned().unwrap_or_default();
            d.map_entries.insert(full.clone(), (key, value));
        } else {
            d.messages.insert(full.clone(), m.clone());
        }
        collect(&full, &m.nested_type, &m.enum_type, d);
    }
}

fn described(full_name: &str) -> bool {
    PROTO_PACKAGES.iter().any(|p| full_name.starts_with(p))
}

fn scalar(f: &prost_types::FieldDescriptorProto, d: &Descriptors) -> RefOr<Schema> {
    let type_name = f.type_name().trim_start_matches('.');
    match f.r#type() {
        PbType::Int64 | PbType::Uint64 | PbType::Sint64 | PbType::Fixed64 | PbType::Sfixed64 => int_string().into(),
        PbType::Int32 | PbType::Uint32 | PbType::Sint32 | PbType::Fixed32 | PbType::Sfixed32 => {
            ObjectBuilder::new().schema_type(SchemaType::Type(Type::Integer)).into()
        }
        PbType::Double | PbType::Float => ObjectBuilder::new().schema_type(SchemaType::Type(Type::Number)).into(),
        PbType::Bool => ObjectBuilder::new().schema_type(SchemaType::Type(Type::Boolean)).into(),
        PbType::String => string().into(),
        PbType::Bytes => string().format(Some(utoipa::openapi::SchemaFormat::Custom("byte".into()))).into(),
        PbType::Enum => match d.enums.get(type_name) {
            Some(names) => string().enum_values(Some(names.clone())).into(),
            None => string().into(),
        },
        PbType::Message | PbType::Group => match type_name {
            "google.protobuf.Timestamp" => string().format(Some(utoipa::openapi::SchemaFormat::Custom("date-time".into()))).into(),
            "google.protobuf.Duration" => string().into(),
            _ if described(type_name) && d.messages.contains_key(type_name) => Ref::from_schema_name(type_name).into(),
            // A message of a package this document does not describe (the gateway renders it
            // with its own crate's serde): any JSON object.
            _ => ObjectBuilder::new().schema_type(SchemaType::Type(Type::Object)).into(),
        },
    }
}

fn field(f: &prost_types::FieldDescriptorProto, d: &Descriptors) -> RefOr<Schema> {
    let type_name = f.type_name().trim_start_matches('.');
    if f.label() == Label::Repeated {
        if let Some((_, value)) = d.map_entries.get(type_name) {
            return ObjectBuilder::new()
                .schema_type(SchemaType::Type(Type::Object))
                .additional_properties(Some(AdditionalProperties::RefOr(scalar(value, d))))
                .into();
        }
        return ArrayBuilder::new().items(scalar(f, d)).into();
    }
    match f.r#type() {
        // An unset message field is left out, or written as null where the gateway emits it.
        PbType::Message if type_name != "google.protobuf.Timestamp" => nullable(scalar(f, d)).into(),
        _ => scalar(f, d),
    }
}

/// The schemas of every message of [`PROTO_PACKAGES`], by full name. pbjson with
/// `emit_fields` always writes scalar, enum, repeated and map fields (defaults included), so
/// those are required; message fields, oneof members and proto3 `optional` fields may be absent.
pub fn proto_schemas() -> BTreeMap<String, RefOr<Schema>> {
    let fds = FileDescriptorSet::decode(lantau_proto::FILE_DESCRIPTOR_SET).unwrap_or_default();
    let mut d = Descriptors { map_entries: BTreeMap::new(), enums: BTreeMap::new(), messages: BTreeMap::new() };
    for file in &fds.file {
        collect(file.package(), &file.message_type, &file.enum_type, &mut d);
    }
    let mut out = BTreeMap::new();
    for (name, m) in &d.messages {
        if !described(name) {
            continue;
        }
        let mut obj = ObjectBuilder::new().schema_type(SchemaType::Type(Type::Object)).description(Some(format!("`{name}`")));
        for f in &m.field {
            obj = obj.property(f.name(), field(f, &d));
            let is_message = f.r#type() == PbType::Message && f.label() != Label::Repeated;
            if !is_message && f.oneof_index.is_none() && !f.proto3_optional() {
                obj = obj.required(f.name());
            }
        }
        out.insert(name.clone(), obj.into());
    }
    out
}

/// Completes the document the routes produced: title, the protobuf schemas, the shared shapes.
pub fn finish(mut doc: OpenApi) -> OpenApi {
    doc.info.title = "Lantau REST (Cosmos gRPC-gateway JSON)".into();
    doc.info.version = env!("CARGO_PKG_VERSION").into();
    doc.info.description = Some(
        "The node's REST surface: the Cosmos SDK's standard routes (tx, auth, bank, node, tendermint) and the \
         chain's modules (`/chain/<module>/v1/...`). Errors are `{code, message, details}` with the gRPC code; \
         64-bit integers are strings."
            .into(),
    );
    doc.info.license = None;
    doc.info.contact = None;
    let components = doc.components.get_or_insert_with(Default::default);
    components.schemas.extend(proto_schemas());
    doc
}

/// The REST router's documentation routes: `/openapi.json` and Swagger UI at `/swagger`.
pub fn docs_router<S: Clone + Send + Sync + 'static>(doc: OpenApi) -> axum::Router<S> {
    axum::Router::from(utoipa_swagger_ui::SwaggerUi::new("/swagger").url("/openapi.json", doc))
}

pub mod shapes {
    //! The Cosmos gateway shapes of the REST surface: each type is what the handlers serialise
    //! and, from the same definition, the schema the document declares. [`crate::json`] builds
    //! them from the protobuf messages.

    use serde::Serialize;
    use serde_json::{Map, Value};
    use utoipa::ToSchema;

    /// The error body: a gRPC status, `{code, message, details}`.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct ErrorBody {
        /// The gRPC status code (3 InvalidArgument, 5 NotFound, 9 FailedPrecondition, 13 Internal).
        pub code: i32,
        /// What went wrong, and how to correct the request when it can be.
        pub message: String,
        /// Always empty.
        pub details: Vec<Value>,
    }

    /// `cosmos.base.v1beta1.Coin`: an amount (a decimal integer) of a denom.
    #[derive(Debug, Clone, Default, Serialize, ToSchema)]
    pub struct Coin {
        /// The denom (`alantau`, `hkd.demo`).
        pub denom: String,
        /// Base units, a decimal integer.
        #[schema(pattern = "^[0-9]+$")]
        pub amount: String,
    }

    /// A list's pagination tail: the next page's key (most lists are complete: null), the total as a string.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct PageResponse {
        /// The key of the next page (base64); null on the last page (most lists are complete).
        pub next_key: Option<String>,
        /// The number of entries.
        #[schema(pattern = "^[0-9]+$")]
        pub total: String,
    }

    /// An ABCI event attribute.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct EventAttribute {
        /// Key.
        pub key: String,
        /// Value.
        pub value: String,
        /// Indexed for search.
        pub index: bool,
    }

    /// An ABCI event.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct Event {
        /// The event type (`transfer`, `message`, `chain.compliance.v1.EventGateEvaluated`...).
        #[serde(rename = "type")]
        pub kind: String,
        /// Attributes.
        pub attributes: Vec<EventAttribute>,
    }

    /// A message or public key `Any` with its `@type`; known types expanded to their fields,
    /// others as `{"@type", "value": base64 protobuf}`.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct AnyJson {
        /// The type URL.
        #[serde(rename = "@type")]
        pub type_url: String,
        /// The message's own fields.
        #[serde(flatten)]
        #[schema(ignore)]
        pub fields: Map<String, Value>,
    }

    /// A signer's mode and sequence.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct SignerInfo {
        /// The signer's public key.
        pub public_key: Option<AnyJson>,
        /// `{"single": {"mode": "SIGN_MODE_DIRECT"}}`.
        #[schema(value_type = Option<Object>)]
        pub mode_info: Option<Value>,
        /// The signer's sequence.
        #[schema(pattern = "^[0-9]+$")]
        pub sequence: String,
    }

    /// The fee.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct Fee {
        /// Amount.
        pub amount: Vec<Coin>,
        /// Gas limit.
        #[schema(pattern = "^[0-9]+$")]
        pub gas_limit: String,
        /// Payer.
        pub payer: String,
        /// Granter.
        pub granter: String,
    }

    /// `AuthInfo`.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct AuthInfo {
        /// Signers.
        pub signer_infos: Vec<SignerInfo>,
        /// Fee.
        pub fee: Option<Fee>,
        /// Always null.
        #[schema(value_type = Option<Object>)]
        pub tip: Option<Value>,
    }

    /// `TxBody`.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct TxBody {
        /// Messages.
        pub messages: Vec<AnyJson>,
        /// Memo.
        pub memo: String,
        /// Timeout height.
        #[schema(pattern = "^[0-9]+$")]
        pub timeout_height: String,
        /// Extension options (the Travel Rule payload, Cosmos EVM's Ethereum envelope).
        pub extension_options: Vec<AnyJson>,
        /// Non-critical extension options.
        pub non_critical_extension_options: Vec<AnyJson>,
    }

    /// `cosmos.tx.v1beta1.Tx`.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct Tx {
        /// `/cosmos.tx.v1beta1.Tx` where the gateway packs it in an `Any` (a `TxResponse`'s
        /// `tx`); absent elsewhere.
        #[serde(rename = "@type", skip_serializing_if = "Option::is_none")]
        pub type_url: Option<String>,
        /// Body.
        pub body: TxBody,
        /// Auth info.
        pub auth_info: AuthInfo,
        /// Signatures, base64.
        pub signatures: Vec<String>,
    }

    /// `cosmos.base.abci.v1beta1.TxResponse`.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct TxResponse {
        /// The block height ("0" for a broadcast answer).
        #[schema(pattern = "^[0-9]+$")]
        pub height: String,
        /// The transaction hash, upper-case hex.
        pub txhash: String,
        /// The module that refused it ("" when accepted).
        pub codespace: String,
        /// 0 when accepted, else the module's code.
        pub code: u32,
        /// Result data, hex.
        pub data: String,
        /// The log (the refusal's reason).
        pub raw_log: String,
        /// Always empty (events carry everything).
        pub logs: Vec<Value>,
        /// Info.
        pub info: String,
        /// Gas limit.
        #[schema(pattern = "^[0-9]+$")]
        pub gas_wanted: String,
        /// Gas used.
        #[schema(pattern = "^[0-9]+$")]
        pub gas_used: String,
        /// The transaction (null in a broadcast answer or when its bytes do not decode).
        pub tx: Option<Tx>,
        /// The block time, RFC 3339 ("" in a broadcast answer).
        pub timestamp: String,
        /// The events.
        pub events: Vec<Event>,
    }

    /// `BaseAccount`.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct BaseAccount {
        /// `/cosmos.auth.v1beta1.BaseAccount`.
        #[serde(rename = "@type")]
        pub type_url: String,
        /// Bech32 address.
        pub address: String,
        /// The eth_secp256k1 key, null before the first transaction.
        pub pub_key: Option<AnyJson>,
        /// Account number.
        #[schema(pattern = "^[0-9]+$")]
        pub account_number: String,
        /// Sequence.
        #[schema(pattern = "^[0-9]+$")]
        pub sequence: String,
    }

    /// A denom unit of bank metadata.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct DenomUnit {
        /// Denom.
        pub denom: String,
        /// Exponent.
        pub exponent: u32,
        /// Aliases.
        pub aliases: Vec<String>,
    }

    /// Bank denom metadata.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct Metadata {
        /// Description.
        pub description: String,
        /// Units.
        pub denom_units: Vec<DenomUnit>,
        /// Base denom.
        pub base: String,
        /// Display denom.
        pub display: String,
        /// Name.
        pub name: String,
        /// Symbol.
        pub symbol: String,
        /// URI.
        pub uri: String,
        /// URI hash.
        pub uri_hash: String,
    }

    /// A block's part set header as the gateway writes it.
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct PartSetHeader {
        /// Number of parts.
        pub total: u32,
        /// Hash, base64.
        pub hash: String,
    }

    /// A block id as the gateway writes it (hashes base64).
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct BlockId {
        /// Hash, base64.
        pub hash: String,
        /// Part set header.
        pub part_set_header: PartSetHeader,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    fn document() -> Value {
        let (_, doc) = crate::rest::api_routes().split_for_parts();
        serde_json::to_value(super::finish(doc)).unwrap()
    }

    fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r);
                }
                m.values().for_each(|x| refs(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }

    #[test]
    fn every_route_is_documented_and_every_reference_resolves() {
        let doc = document();
        assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
        let paths = doc["paths"].as_object().unwrap();
        for p in [
            "/cosmos/tx/v1beta1/txs",
            "/cosmos/tx/v1beta1/txs/{hash}",
            "/cosmos/bank/v1beta1/balances/{address}",
            "/chain/compliance/v1/audit_log",
            "/chain/compliance/v1/agent_policy/{parent}/{sub_addr}",
            "/cosmos/evm/erc20/v1/token_pairs/{token}",
            "/cosmos/upgrade/v1beta1/current_plan",
            "/chain/group/v1/proposals_by_group/{address}",
            "/lantau/mempool/v1/forwarded",
        ] {
            assert!(paths.contains_key(p), "{p} is not documented");
        }
        assert!(paths["/cosmos/tx/v1beta1/txs"].get("post").is_some() && paths["/cosmos/tx/v1beta1/txs"].get("get").is_some());
        assert_eq!(paths.len(), 55, "{:?}", paths.keys().collect::<Vec<_>>());
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        let mut all = Vec::new();
        refs(&doc, &mut all);
        assert!(!all.is_empty());
        for r in all {
            let name = r.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("unexpected reference {r}"));
            assert!(schemas.contains_key(name), "{r} does not resolve");
        }
    }

    #[test]
    fn protobuf_messages_follow_the_json_the_node_writes() {
        let s = super::proto_schemas();
        let flag = serde_json::to_value(&s["chain.compliance.v1.Flag"]).unwrap();
        let props = &flag["properties"];
        // uint64 as a decimal string, an enum by name, a message that may be null, required scalars.
        assert_eq!(props["block_height"]["type"], "string", "{flag}");
        assert_eq!(props["block_height"]["pattern"], "^-?[0-9]+$");
        assert!(props["status"]["enum"].as_array().unwrap().iter().any(|v| v == "FLAG_STATUS_EMITTED"), "{flag}");
        assert!(props["amount"]["oneOf"].is_array(), "{flag}");
        assert_eq!(props["created_at"]["format"], "date-time");
        let required: Vec<&str> = flag["required"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
        assert!(required.contains(&"flag_id") && required.contains(&"status") && !required.contains(&"amount"), "{required:?}");
        assert!(s.contains_key("cosmos.base.v1beta1.Coin") && !s.contains_key("cosmos.base.query.v1beta1.PageRequest"));
        // A map is an object of its values, and its entry type is no schema of its own.
        let entry = serde_json::to_value(&s["chain.compliance.v1.AuditEntry"]).unwrap();
        assert_eq!(entry["properties"]["metadata"]["additionalProperties"]["type"], "string", "{entry}");
        assert!(!s.contains_key("chain.compliance.v1.AuditEntry.MetadataEntry"));
    }

    #[test]
    fn the_document_and_swagger_are_served() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let (_, doc) = crate::rest::api_routes().split_for_parts();
            let app: axum::Router = super::docs_router(super::finish(doc));
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move { axum::serve(listener, app).await });
            let c = reqwest::Client::new();
            let j: Value = c.get(format!("http://{addr}/openapi.json")).send().await.unwrap().json().await.unwrap();
            assert!(j["paths"].as_object().unwrap().len() > 30);
            let page = c.get(format!("http://{addr}/swagger/")).send().await.unwrap();
            assert_eq!(page.status(), 200);
            assert!(page.text().await.unwrap().contains("swagger-ui"));
            let init = c.get(format!("http://{addr}/swagger/swagger-initializer.js")).send().await.unwrap().text().await.unwrap();
            assert!(init.contains("/openapi.json"), "{init}");
        });
    }
}
