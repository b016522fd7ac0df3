//! OpenAPI documents as executable contracts: find the operation a request hit and validate
//! the answer's body against the schema documented for its status. The end-to-end tests
//! hold the services to `docs/openapi/`; `runtime-host check` holds a model deployment to
//! the document it serves itself (`/openapi.json`).

use edge_api::routes::template_matches;
use serde_json::Value;
use std::collections::BTreeSet;

pub struct Contract {
    pub name: String,
    pub doc: Value,
}

impl Contract {
    /// Reads a document from a file.
    pub fn from_file(name: &str, path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let doc = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
        Ok(Self::from_value(name, doc))
    }

    /// A document already read (a model's `/openapi.json`, say).
    pub fn from_value(name: &str, doc: Value) -> Self {
        Self {
            name: name.to_owned(),
            doc,
        }
    }

    /// Every (path template, METHOD) the document describes.
    pub fn operations(&self) -> BTreeSet<(String, String)> {
        let mut ops = BTreeSet::new();
        for (path, item) in self.doc["paths"].as_object().expect("paths") {
            for method in item.as_object().expect("path item").keys() {
                if HTTP_METHODS.contains(&method.as_str()) {
                    ops.insert((path.clone(), method.to_uppercase()));
                }
            }
        }
        ops
    }

    /// The value a local `$ref` points at.
    pub fn resolve<'a>(&'a self, reference: &str) -> Option<&'a Value> {
        self.doc.pointer(reference.strip_prefix('#')?)
    }

    /// Follows `$ref`s until a value that is not one.
    fn deref<'a>(&'a self, mut v: &'a Value) -> &'a Value {
        while let Some(r) = v.get("$ref").and_then(Value::as_str) {
            v = self
                .resolve(r)
                .unwrap_or_else(|| panic!("{}: dangling $ref {r}", self.name));
        }
        v
    }

    /// A JSON Schema validator for `schema`, with the document's components beside it so
    /// `#/components/...` references resolve.
    pub fn validator(&self, schema: &Value) -> Result<jsonschema::Validator, String> {
        let mut root = schema.clone();
        if let Some(obj) = root.as_object_mut() {
            obj.insert("components".into(), self.doc["components"].clone());
        }
        jsonschema::draft202012::new(&root).map_err(|e| e.to_string())
    }

    /// Checks one answer: the operation is documented, its status is documented, and the
    /// body is valid against the schema for that status. `path` is without query string.
    pub fn check(&self, method: &str, path: &str, status: u16, body: &[u8]) -> Result<(), String> {
        let what = format!("{method} {path} -> {status}");
        let template = self
            .template_for(path)
            .ok_or(format!("{what}: no path of {}.json matches", self.name))?;
        let response = match self.doc["paths"][&template].get(method.to_lowercase()) {
            Some(op) => op["responses"]
                .get(status.to_string())
                .or_else(|| op["responses"].get("default"))
                .ok_or(format!("{what}: status {status} is not documented"))?,
            // Another method on a documented path: the 405 every path answers.
            None if status == 405 => self
                .resolve("#/components/responses/MethodNotAllowed")
                .ok_or(format!("{what}: no MethodNotAllowed response"))?,
            None => return Err(format!("{what}: {template} documents no {method}")),
        };
        let response = self.deref(response);
        let Some(schema) = response.pointer("/content/application~1json/schema") else {
            return if body.is_empty() {
                Ok(())
            } else {
                Err(format!("{what}: a body came back but none is documented"))
            };
        };
        let value: Value = serde_json::from_slice(body).map_err(|e| {
            format!(
                "{what}: body is not JSON ({e}): {}",
                String::from_utf8_lossy(body)
            )
        })?;
        let validator = self.validator(schema)?;
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("at {}: {e}", e.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!("{what}: {} in {value}", errors.join("; ")))
        }
    }

    fn template_for(&self, path: &str) -> Option<String> {
        self.doc["paths"]
            .as_object()?
            .keys()
            .find(|t| template_matches(t, path))
            .cloned()
    }
}

const HTTP_METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Every `$ref` anywhere in `v`.
pub fn references(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                match (k.as_str(), child) {
                    ("$ref", Value::String(r)) => out.push(r.clone()),
                    _ => references(child, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| references(i, out)),
        _ => {}
    }
}
