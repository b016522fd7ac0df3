//! Input no client should be able to break the model with: mutated SMILES, and headers only
//! Spin's own router may set.

use super::{molprop, predict};
use e2e_tests::{Client, temp_dir};
use hyper::Method;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn a_client_cannot_route_itself_with_spins_headers() {
    let dir = temp_dir();
    let h = molprop(dir.path());
    let c = Client::new();
    // What Spin's router would send for a component mounted at /models/molprop/...: from a
    // client it is ignored (the app port of `up` routes prefixes itself, tests/console.rs).
    let r = c
        .send(
            Method::GET,
            &h.url("/models/molprop/health"),
            None,
            &[("spin-path-info", "/health")],
        )
        .await;
    r.assert_error(404, "not_found");
}

#[tokio::test(flavor = "multi_thread")]
async fn mutated_smiles_never_break_the_service() {
    let dir = temp_dir();
    let h = molprop(dir.path());
    let c = Client::new();
    let seeds = [
        "CC(=O)Oc1ccccc1C(=O)O",
        "Cn1cnc2c1c(=O)n(C)c(=O)n2C",
        "[NH3+]CC[C@@H](C%12)C%12",
        "O=[N+]([O-])c1ccc(Cl)cc1.[Na+]",
    ];
    let alphabet: Vec<char> = "CNOSPFIclnos()[]=#$:/\\@+-.%0123456789Hh*Xx "
        .chars()
        .collect();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for i in 0..300 {
        let mut s: Vec<char> = seeds[i % seeds.len()].chars().collect();
        for _ in 0..1 + next(4) {
            let pos = next(s.len() + 1);
            match next(3) {
                0 if pos < s.len() => {
                    s.remove(pos);
                }
                1 => s.insert(pos, alphabet[next(alphabet.len())]),
                _ if pos < s.len() => s[pos] = alphabet[next(alphabet.len())],
                _ => {}
            }
        }
        let smiles: String = s.into_iter().collect();
        let (status, body) = predict(&c, &h, json!({"text": smiles})).await;
        assert!(
            status == 200 || status == 400,
            "{smiles:?} -> {status} {body}"
        );
        if status == 200 && body["success"] == false {
            assert!(
                body["error_message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty())
            );
        }
    }
    assert_eq!(c.get(&h.url("/health")).await.status, 200);
}
