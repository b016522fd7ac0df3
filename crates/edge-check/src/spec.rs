//! The shapes `check` holds a deployment to: the project's OpenAPI documents
//! (`docs/openapi/`, the same files the end-to-end tests hold our services to), relaxed to
//! what the specification itself demands.
//!
//! Our documents are stricter than the specification in two places where it says "not
//! shown": they close every record (`additionalProperties: false`) and list our error codes.
//! Another implementation may add fields or name its codes differently and still conform,
//! so `check` drops both before judging; everything else (required fields, types, `const`
//! values such as `status: "ok"`, the `1.2.x` version pattern) stands as documented.

use openapi_contract::Contract;
use serde_json::{Value, json};

/// The documents of the three interfaces.
pub struct Spec {
    pub model: Contract,
    pub registry: Contract,
    pub chat: Contract,
}

impl Spec {
    pub fn load() -> Self {
        let relaxed = |name: &str, text: &str| {
            let mut doc: Value = serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("docs/openapi/{name}.json is not JSON: {e}"));
            relax(&mut doc);
            Contract::from_value(name, doc)
        };
        Self {
            model: relaxed("model", include_str!("../../../docs/openapi/model.json")),
            registry: relaxed(
                "registry",
                include_str!("../../../docs/openapi/registry.json"),
            ),
            chat: relaxed("chat", include_str!("../../../docs/openapi/chat.json")),
        }
    }
}

/// Opens every record to extra fields and lets `error_code` be any string (see the module
/// documentation).
fn relax(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if map.get("additionalProperties") == Some(&Value::Bool(false)) {
                map.remove("additionalProperties");
            }
            if let Some(code) = map
                .get_mut("properties")
                .and_then(|p| p.get_mut("error_code"))
            {
                *code = json!({"type": "string"});
            }
            map.values_mut().for_each(relax);
        }
        Value::Array(items) => items.iter_mut().for_each(relax),
        _ => {}
    }
}

/// Problems of `value` against the schema `name` of `contract`'s components.
pub fn schema_problems(contract: &Contract, name: &str, value: &Value) -> Vec<String> {
    let schema = json!({"$ref": format!("#/components/schemas/{name}")});
    match contract.validator(&schema) {
        Ok(validator) => validator
            .iter_errors(value)
            .map(|e| format!("{name} at {}: {e}", e.instance_path()))
            .collect(),
        Err(e) => vec![format!("{name} is not a usable schema: {e}")],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judges_by_the_specification_not_by_our_stricter_documents() {
        let spec = Spec::load();
        let ok = json!({"status": "ok", "model": "m", "version": "1.2.0", "extra": true});
        assert!(schema_problems(&spec.model, "Health", &ok).is_empty());
        let wrong = json!({"status": "fine", "model": "m", "version": "1.1.0"});
        assert_eq!(schema_problems(&spec.model, "Health", &wrong).len(), 2);
        let missing = json!({"status": "ok", "model": "m"});
        assert!(schema_problems(&spec.model, "Health", &missing)[0].contains("version"));

        let foreign_code = json!({"success": false, "error": "e", "error_code": "E_BAD"});
        assert!(schema_problems(&spec.registry, "ErrorBody", &foreign_code).is_empty());
        let not_an_error = json!({"success": true, "error": "e", "error_code": "x"});
        assert!(!schema_problems(&spec.chat, "ErrorBody", &not_an_error).is_empty());
    }
}
