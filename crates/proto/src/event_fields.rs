//! A typed event's attributes: each top-level field of a message rendered as its own JSON
//! text, without building the whole message as a `serde_json::Value` first.
//!
//! The rendering is the one `serde_json::to_value(msg)` then `to_string()` of each entry gives:
//! the attributes in field-name order (a `serde_json` map orders its keys), a string, number,
//! boolean or null rendered straight away, and an object or array (whose nested keys the map
//! would order) through a `Value` as before. `tests::same_as_through_a_value` holds the two
//! paths equal for the kinds of field typed events carry.

use serde::ser::{self, Impossible, Serialize, SerializeStruct};

/// Why a value is not rendered here: it is not a struct (the caller falls back).
type Error = serde_json::Error;

fn not_a_struct() -> Error {
    ser::Error::custom("a typed event is a struct")
}

/// The rendering through a whole `serde_json::Value`: what a message that is not a struct
/// gets (no attributes unless it is a map), and the reference the fields' rendering is held to.
pub(crate) fn through_a_value<M: ?Sized + Serialize>(msg: &M) -> Vec<(String, String)> {
    match serde_json::to_value(msg) {
        Ok(serde_json::Value::Object(m)) => m.into_iter().map(|(k, v)| (k, v.to_string())).collect(),
        _ => Vec::new(),
    }
}

/// The serializer of a message's top level: a struct becomes its (field, JSON text) pairs.
pub(crate) struct Fields;

/// The fields of the struct being rendered.
pub(crate) struct Collect(Vec<(String, String)>);

impl SerializeStruct for Collect {
    type Ok = Vec<(String, String)>;
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        let mut text = serde_json::to_string(value)?;
        if text.starts_with(['{', '[']) {
            text = serde_json::to_value(value)?.to_string();
        }
        self.0.push((key.to_string(), text));
        Ok(())
    }

    fn end(mut self) -> Result<Self::Ok, Error> {
        self.0.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(self.0)
    }
}

macro_rules! refuse {
    ($($name:ident($($arg:ty),*);)*) => {
        $(fn $name(self, $(_: $arg),*) -> Result<Self::Ok, Error> { Err(not_a_struct()) })*
    };
}

impl ser::Serializer for Fields {
    type Ok = Vec<(String, String)>;
    type Error = Error;
    type SerializeSeq = Impossible<Self::Ok, Error>;
    type SerializeTuple = Impossible<Self::Ok, Error>;
    type SerializeTupleStruct = Impossible<Self::Ok, Error>;
    type SerializeTupleVariant = Impossible<Self::Ok, Error>;
    type SerializeMap = Impossible<Self::Ok, Error>;
    type SerializeStruct = Collect;
    type SerializeStructVariant = Impossible<Self::Ok, Error>;

    refuse! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_f32(f32);
        serialize_f64(f64);
        serialize_char(char);
        serialize_str(&str);
        serialize_bytes(&[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<Self::Ok, Error> {
        Err(not_a_struct())
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, _: &T) -> Result<Self::Ok, Error> {
        Err(not_a_struct())
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Result<Self::Ok, Error> {
        Err(not_a_struct())
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(not_a_struct())
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(not_a_struct())
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Error> {
        Err(not_a_struct())
    }

    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeTupleVariant, Error> {
        Err(not_a_struct())
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(not_a_struct())
    }

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Collect, Error> {
        Ok(Collect(Vec::with_capacity(len)))
    }

    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeStructVariant, Error> {
        Err(not_a_struct())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::compliance::v1 as compliance;
    use crate::chain::kyc::v1 as kyc;
    use crate::chain::stablecoin::v1 as stablecoin;

    fn check<M: Serialize>(msg: &M) {
        let direct = msg.serialize(Fields).expect("a message is a struct");
        assert_eq!(direct, through_a_value(msg));
        assert!(!direct.is_empty());
    }

    #[test]
    fn same_as_through_a_value() {
        // Every field set (none skipped), and each message at its defaults; enums, 64-bit
        // integers, nested messages and timestamps among them.
        let coin = || Some(cosmos_sdk_proto::cosmos::base::v1beta1::Coin { denom: "hkd.demo".into(), amount: "1250000".into() });
        check(&compliance::EventFlagEmitted {
            flag_id: "42".into(),
            status: compliance::FlagStatus::Emitted as i32,
            decorator: "velocity_gate".into(),
            subject: "lantau1qyqszqgpqyqszqgpqyqszqgpqyqszqgp2z4m9y".into(),
            vasp: "VASP-HK-0001".into(),
            tx_hash: "AB".repeat(32),
        });
        check(&compliance::EventFlagEmitted::default());
        check(&kyc::EventLevelChanged {
            address: "lantau1x".into(),
            previous_level: kyc::Level::RetailBasic as i32,
            level: kyc::Level::Blacklisted as i32,
            reason: "a \"quoted\" reason\n".into(),
            evidence_ref: "ref".into(),
        });
        check(&kyc::EventLevelChanged::default());
        check(&kyc::EventIdentityEnrolled { address: "lantau1y".into(), level: kyc::Level::Professional as i32, registrar: "lantau1z".into() });
        check(&stablecoin::EventRedemptionRequested {
            id: u64::MAX,
            holder: "lantau1h".into(),
            amount: coin(),
            payout_ref: "bank:123".into(),
            deadline: Some(crate::Timestamp { seconds: 1_767_225_600, nanos: 500_000_000 }),
        });
        check(&stablecoin::EventRedemptionRequested::default());
        check(&stablecoin::EventRedemptionPaid { id: 7, holder: "h".into(), amount: coin(), redeemer: "r".into(), payment_ref: "p".into() });
        check(&compliance::EventAgentPolicyUpdated { parent: "p".into(), sub_addr: "s".into(), daily_cap: coin(), per_tx_cap: None, revoked: true });
        check(&compliance::EventSanctionsUpdated {
            added_vasps: vec!["VASP-A".into(), "VASP-B".into()],
            removed_vasps: Vec::new(),
            added_addresses: vec!["lantau1a".into()],
            reason: "list update".into(),
            evidence_ref: "e".into(),
        });
        check(&stablecoin::EventPaused {
            issuer: "i".into(),
            denom: "hkd.demo".into(),
            authority: "a".into(),
            features: vec!["mint".into()],
            paused_features: vec!["mint".into(), "burn".into()],
        });
        // Not a struct: refused, so the caller falls back.
        assert!(7u64.serialize(Fields).is_err());
    }
}
