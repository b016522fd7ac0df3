//! The OpenAPI documents in `docs/openapi/` against the real components: each document is
//! well-formed OpenAPI 3.1, lists exactly the routes the component's route table serves, and
//! every answer recorded from the real services over HTTP validates against its schema.

mod chat;
mod onnx;
mod recorder;
mod registry_and_model;

use e2e_tests::contract::references;
use edge_api::routes::Route;
use std::collections::BTreeSet;

const DOCUMENTS: [&str; 3] = ["chat", "model", "registry"];

fn route_table(name: &str) -> &'static [Route] {
    match name {
        "chat" => &edge_api::chat::ROUTES,
        "model" => &edge_api::model::ROUTES,
        "registry" => &edge_api::registry::ROUTES,
        _ => unreachable!(),
    }
}

#[test]
fn documents_are_openapi_3_1_and_every_reference_resolves() {
    for name in DOCUMENTS {
        let c = e2e_tests::contract::load(name);
        let version = c.doc["openapi"].as_str().unwrap_or_default();
        assert!(version.starts_with("3.1."), "{name}: openapi {version}");
        assert_eq!(c.doc["info"]["version"], "1.2.0", "{name}");
        let mut refs = Vec::new();
        references(&c.doc, &mut refs);
        assert!(!refs.is_empty(), "{name}");
        for r in &refs {
            assert!(c.resolve(r).is_some(), "{name}: dangling $ref {r}");
        }
        for (schema_name, schema) in c.doc["components"]["schemas"].as_object().unwrap() {
            c.validator(schema)
                .unwrap_or_else(|e| panic!("{name}: schema {schema_name} is invalid: {e}"));
        }
        let mut ids = BTreeSet::new();
        for (path, method) in c.operations() {
            let op = &c.doc["paths"][&path][method.to_lowercase()];
            let id = op["operationId"].as_str().unwrap_or_default();
            assert!(
                ids.insert(id.to_owned()),
                "{name}: operationId {id:?} repeats"
            );
            let statuses: Vec<&String> = op["responses"].as_object().unwrap().keys().collect();
            assert!(
                statuses.iter().any(|s| s.starts_with('2')),
                "{name}: {method} {path} documents no success: {statuses:?}"
            );
            for segment in path.split('/').filter(|s| s.starts_with('{')) {
                let param = segment.trim_matches(|c| c == '{' || c == '}');
                let declared = op["parameters"]
                    .as_array()
                    .is_some_and(|ps| ps.iter().any(|p| p["name"] == param && p["in"] == "path"));
                assert!(declared, "{name}: {method} {path} does not declare {param}");
            }
        }
    }
}

#[test]
fn every_route_a_component_serves_is_documented_and_nothing_else() {
    for name in DOCUMENTS {
        let served: BTreeSet<(String, String)> = route_table(name)
            .iter()
            .flat_map(|r| r.methods.iter().map(|m| (r.path.to_owned(), m.to_string())))
            .collect();
        let documented = e2e_tests::contract::load(name).operations();
        let missing: Vec<_> = served.difference(&documented).collect();
        let extra: Vec<_> = documented.difference(&served).collect();
        assert!(missing.is_empty(), "{name}.json lacks {missing:?}");
        assert!(extra.is_empty(), "{name}.json documents unserved {extra:?}");
    }
}
