//! The deployment rows are sent to: what it takes (from `/capabilities` and its own
//! `/openapi.json`), and the kinds of input a run sends it ([`Input`]).

use crate::files::MediaKind;
use anyhow::{Context, Result, bail};
use hyper::Method;
use serde_json::Value;
#[cfg(test)]
use serde_json::json;
use service_client::HttpClient;

/// What one run sends: the request's `input_type` and the `data` fields carrying its inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Text,
    Tabular,
    /// Pictures or sounds: files sent as base64, or URLs the model fetches.
    Media {
        kind: MediaKind,
        urls: bool,
    },
}

impl Input {
    pub fn input_type(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Tabular => "tabular",
            Self::Media { kind, .. } => kind.input_type(),
        }
    }

    /// The `data` field of one input, and of a batch of them.
    pub fn fields(self) -> (&'static str, &'static str) {
        match self {
            Self::Text => ("text", "texts"),
            Self::Tabular => ("features", "rows"),
            Self::Media {
                kind: MediaKind::Image,
                urls: false,
            } => ("image", "images"),
            Self::Media {
                kind: MediaKind::Image,
                urls: true,
            } => ("image_url", "image_urls"),
            Self::Media {
                kind: MediaKind::Audio,
                urls: false,
            } => ("audio", "audios"),
            Self::Media {
                kind: MediaKind::Audio,
                urls: true,
            } => ("audio_url", "audio_urls"),
        }
    }
}

/// The batch fields whose item limits are looked up in the deployment's document.
const BATCH_FIELDS: &[&str] = &[
    "texts",
    "rows",
    "images",
    "image_urls",
    "audios",
    "audio_urls",
];

/// What the deployment told us about itself.
#[derive(Debug, Clone)]
pub struct Target {
    pub url: String,
    pub model: String,
    /// The `input_types` of its capabilities (`text`, `tabular`, `image`, `audio`).
    pub input_types: Vec<String>,
    /// Most items one batch may hold, by batch field (`texts`, `images`, ...), from the
    /// deployment's document; a field not listed is not taken in batches (one per request).
    pub limits: Vec<(&'static str, usize)>,
    /// The feature names a tabular model documents, in order.
    pub features: Vec<String>,
    /// The result fields its capabilities list.
    pub output_fields: Vec<String>,
}

impl Target {
    /// The model at base URL `url` (`http://127.0.0.1:3000/models/molprop`): what it takes
    /// and answers, from its `/capabilities` and `/info`.
    pub async fn discover(client: &HttpClient, url: &str) -> Result<Self> {
        let url = url.trim_end_matches('/').to_owned();
        // The URL names the model, not one of its endpoints: `.../predict` is a common slip.
        if let Some(base) = edge_api::model::ROUTES
            .iter()
            .find_map(|r| url.strip_suffix(r.path))
        {
            bail!(
                "--url {url} names an endpoint; give the model's base URL, without `{}`: \
                 --url {base}",
                &url[base.len()..]
            );
        }
        let get = |path: &'static str| {
            let full = format!("{url}{path}");
            async move {
                let reply = client.send(Method::GET, &full, None, None).await.with_context(|| {
                    format!("cannot reach the model at {full}: is it running? (`runtime-host up` serves each model under /models/<name>)")
                })?;
                if reply.status != 200 {
                    bail!(
                        "{full} answered HTTP {}: {}",
                        reply.status,
                        reply.error_text()
                    );
                }
                reply.json::<Value>()
            }
        };
        let capabilities = get("/capabilities").await?;
        let model = capabilities["model"]
            .as_str()
            .unwrap_or("the model")
            .to_owned();
        let list = capabilities["capabilities"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut input_types: Vec<String> = Vec::new();
        for t in list
            .iter()
            .flat_map(|c| c["input_types"].as_array().into_iter().flatten())
            .filter_map(Value::as_str)
        {
            if !input_types.iter().any(|k| k == t) {
                input_types.push(t.to_owned());
            }
        }
        let mut output_fields: Vec<String> = Vec::new();
        for key in list.iter().flat_map(|c| {
            c["output_schema"]
                .as_object()
                .into_iter()
                .flat_map(|o| o.keys())
        }) {
            if !output_fields.contains(key) {
                output_fields.push(key.clone());
            }
        }
        // The document is optional (not every v1.2 deployment serves one): without it, one
        // input per request.
        let document = get("/openapi.json").await.unwrap_or(Value::Null);
        Ok(Self {
            url,
            model,
            input_types,
            limits: BATCH_FIELDS
                .iter()
                .filter_map(|f| Some((*f, max_items(&document, f)?)))
                .collect(),
            features: feature_names(&document),
            output_fields,
        })
    }

    /// Whether its capabilities list input type `t`.
    pub fn takes(&self, t: &str) -> bool {
        self.input_types.iter().any(|k| k == t)
    }

    /// The kind of file it takes, if it takes pictures or sounds.
    pub fn media(&self) -> Option<MediaKind> {
        if self.takes("image") {
            Some(MediaKind::Image)
        } else if self.takes("audio") {
            Some(MediaKind::Audio)
        } else {
            None
        }
    }

    /// Most items per request for this kind of input (1: no batches).
    pub fn max_batch(&self, input: Input) -> usize {
        let many = input.fields().1;
        self.limits
            .iter()
            .find(|(f, _)| *f == many)
            .map_or(1, |(_, n)| *n)
    }
}

/// The `maxItems` of a batch list `field` anywhere in the document.
fn max_items(document: &Value, field: &str) -> Option<usize> {
    match document {
        Value::Object(map) => {
            if let Some(max) = map
                .get("properties")
                .and_then(|p| p.get(field))
                .and_then(|f| f.get("maxItems"))
                .and_then(Value::as_u64)
            {
                return Some(max as usize);
            }
            map.values().find_map(|v| max_items(v, field))
        }
        Value::Array(list) => list.iter().find_map(|v| max_items(v, field)),
        _ => None,
    }
}

/// The properties of the first `features` object schema in the document (the schema may
/// offer the object beside other forms in `oneOf`/`anyOf`), in the model's own order: its
/// `required` list when that names them all (a JSON object's keys carry no order, and come
/// back sorted), else the properties' order.
fn feature_names(document: &Value) -> Vec<String> {
    fn object_form(schema: &Value) -> Option<Vec<String>> {
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            let required: Vec<String> = schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect();
            if required.len() == props.len() && required.iter().all(|n| props.contains_key(n)) {
                return Some(required);
            }
            return Some(props.keys().cloned().collect());
        }
        ["oneOf", "anyOf"]
            .iter()
            .filter_map(|k| schema.get(*k).and_then(Value::as_array))
            .flatten()
            .find_map(object_form)
    }
    fn find(v: &Value) -> Option<Vec<String>> {
        match v {
            Value::Object(map) => {
                if let Some(features) = map.get("properties").and_then(|p| p.get("features")) {
                    return object_form(features);
                }
                map.values().find_map(find)
            }
            Value::Array(list) => list.iter().find_map(find),
            _ => None,
        }
    }
    find(document).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_limits_and_features_come_from_the_document() {
        let doc = json!({"components": {"schemas": {"PredictionRequest": {"properties": {"data": {"anyOf": [
            {"properties": {"features": {"oneOf": [
                {"type": "object", "properties": {"a": {}, "b": {}}},
                {"type": "array"}
            ]}}},
            {"properties": {"rows": {"type": "array", "maxItems": 500}}}
        ]}}}}}});
        assert_eq!(max_items(&doc, "rows"), Some(500));
        assert_eq!(max_items(&doc, "texts"), None);
        assert_eq!(feature_names(&doc), vec!["a", "b"]);
        // The model's own order, from `required`, not the keys' sorted one.
        let doc = json!({"properties": {"features": {"type": "object",
            "properties": {"petal": {}, "sepal": {}}, "required": ["sepal", "petal"]}}});
        assert_eq!(feature_names(&doc), vec!["sepal", "petal"]);
    }
}
