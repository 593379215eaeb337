//! Genesis validation of carried-in reserve attestations: a chain refuses to start on a record
//! the reserve module's own messages could never have produced.

use cosmos_sdk_proto::cosmos::base::v1beta1::Coin;
use lantau_app::AppGenesis;
use lantau_crypto::SecretKey;
use lantau_proto::chain::reserve::v1::{Attestation, AttestationState, Params};

use crate::compliance_props::{genesis, key, new_chain, DENOM};

fn with_reserve(keys: &[SecretKey], auditors: Vec<String>, attestations: Vec<Attestation>) -> Vec<u8> {
    let mut g: AppGenesis = serde_json::from_slice(&genesis(keys)).unwrap();
    g.reserve.params = Some(Params { auditors, ..Default::default() });
    g.reserve.attestations = attestations;
    serde_json::to_vec(&g).unwrap()
}

fn attested(keys: &[SecretKey], id: u64, auditor: usize) -> Attestation {
    let coin = |a: &str| Some(Coin { denom: DENOM.into(), amount: a.into() });
    let t = Some(lantau_proto::timestamp(time::OffsetDateTime::from_unix_timestamp(1_690_000_000).unwrap()));
    Attestation {
        id,
        issuer: keys[0].address().to_bech32(),
        state: AttestationState::Attested as i32,
        circulation: coin("100"),
        reserve_market_value: coin("101"),
        random_day: t,
        submitted_at: t,
        submitted_height: 0,
        auditor: keys[auditor].address().to_bech32(),
        attested_at: t,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_genesis_attestation_is_kept_and_a_malformed_one_refuses_the_chain() {
    let keys: Vec<SecretKey> = (0..7).map(key).collect();
    let auditor = keys[5].address().to_bech32();
    let (_d, _app, init) = new_chain("g-1", with_reserve(&keys, vec![auditor.clone()], vec![attested(&keys, 1, 5), attested(&keys, 4, 5)])).await;
    init.unwrap();

    let cases: Vec<(&str, Vec<String>, Vec<Attestation>)> = vec![
        ("not a registered auditor", vec![], vec![attested(&keys, 1, 5)]),
        ("strictly ascending", vec![auditor.clone()], vec![attested(&keys, 2, 5), attested(&keys, 2, 5)]),
        ("strictly ascending", vec![auditor.clone()], vec![attested(&keys, 0, 5)]),
        ("other than the issuer", vec![keys[0].address().to_bech32()], vec![attested(&keys, 1, 0)]),
        ("issues no stablecoin", vec![auditor.clone()], vec![Attestation { issuer: keys[1].address().to_bech32(), ..attested(&keys, 1, 5) }]),
        (
            "must be an amount of",
            vec![auditor.clone()],
            vec![Attestation { circulation: Some(Coin { denom: "alantau".into(), amount: "1".into() }), ..attested(&keys, 1, 5) }],
        ),
        ("state must be", vec![auditor.clone()], vec![Attestation { state: AttestationState::Submitted as i32, ..attested(&keys, 1, 5) }]),
    ];
    for (want, auditors, atts) in cases {
        let (_d, _app, init) = new_chain("g-1", with_reserve(&keys, auditors, atts)).await;
        let err = init.expect_err(want).to_string();
        assert!(err.contains(want), "{want}: {err}");
    }
}
