//! Every message type the chain accepts: [`Msg`], generated from the module list
//! (`crate::modules`), one variant per module, each module decoding its own type URLs.

pub use crate::modules::Msg;
pub use lantau_bank::{MSG_MULTI_SEND, MSG_SEND};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod classification {
    use super::*;
    use cosmos_sdk_proto::Any;
    use lantau_bank::SendMsg;
    use lantau_primitives::Address;
    use prost::Message as _;

    /// Deny by default: every message type our schemas declare (`chain.*` `Msg…`, not its
    /// response) is recognised by [`Msg::from_any`], so it is either gated (it projects facts)
    /// or explicitly moves no stablecoin (the exhaustive match in [`Msg::facts`]). A new message
    /// declared without a decoder fails here rather than being accepted silently or refused
    /// as unknown.
    #[test]
    fn every_declared_message_is_recognised_and_classified() {
        let fds = prost_types::FileDescriptorSet::decode(lantau_proto::FILE_DESCRIPTOR_SET).unwrap();
        let mut seen = 0;
        for file in fds.file.iter().filter(|f| f.package().starts_with("chain.")) {
            for m in file.message_type.iter().filter(|m| m.name().starts_with("Msg") && !m.name().ends_with("Response")) {
                let url = format!("/{}.{}", file.package(), m.name());
                let any = Any { type_url: url.clone(), value: vec![] };
                if let Err(e) = Msg::from_any(&any) {
                    assert!(!e.log.contains("unable to resolve type URL"), "{url} is declared but not recognised: {}", e.log);
                }
                seen += 1;
            }
        }
        assert!(seen >= 20, "only {seen} messages declared?");
        // The recognised shapes are the only ones that project facts.
        let a = Address([1; 20]);
        let coin = lantau_primitives::Coin::new("hkd.demo", 5u128);
        let send = Msg::Bank(lantau_bank::BankMsg::Send(SendMsg { from: a, to: a, amount: vec![coin.clone()] }));
        assert_eq!(send.facts(0).len(), 1);
    }
}
