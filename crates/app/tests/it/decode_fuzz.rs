//! Property tests: decoding arbitrary or mutated bytes never panics and always answers a coded
//! error or a transaction; the checks never write on a rejection.

use lantau_app::{tx, AppConfig};
use lantau_client::{msg_send, SignerData, TxBuilder};
use lantau_crypto::SecretKey;
use lantau_primitives::{Coin, NATIVE_DENOM};
use proptest::prelude::*;

fn valid_tx() -> Vec<u8> {
    let k = SecretKey::from_bytes(&[3u8; 32]).unwrap();
    TxBuilder::new(vec![msg_send(&k.address(), &k.address(), &[Coin::new(NATIVE_DENOM, 5u128)])])
        .sign(&k, &SignerData { chain_id: "fuzz-1".into(), account_number: 0, sequence: 0 })
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let cfg = AppConfig::default();
        if let Err(e) = tx::decode(&bytes, &cfg) {
            prop_assert!(e.code != 0);
            prop_assert!(!e.codespace.is_empty());
        }
    }

    #[test]
    fn mutated_valid_transactions_never_panic(
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        let cfg = AppConfig::default();
        let mut bytes = valid_tx();
        for (pos, val) in flips {
            let i = pos % bytes.len();
            bytes[i] ^= val;
        }
        let keep = cut % (bytes.len() + 1);
        bytes.truncate(keep.max(1));
        let _ = tx::decode(&bytes, &cfg);
    }
}

#[test]
fn a_valid_transaction_decodes() {
    let d = tx::decode(&valid_tx(), &AppConfig::default()).unwrap();
    assert_eq!(d.sequence, 0);
    assert_eq!(d.msgs.len(), 1);
    assert_eq!(d.gas_limit, 200_000);
}
