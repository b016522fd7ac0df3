//! Seeded values for a document's schemas, valid and invalid: the generator proposes, the
//! JSON Schema validator judges.

use e2e_tests::contract::Contract;
use serde_json::{Map, Value, json};

/// Every run sends the same requests.
const SEED: u64 = 0x5eed_0015;

/// splitmix64: small, seeded, good enough to spread cases.
pub struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    pub fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

/// Proposes values for schemas of one document.
pub struct Gen<'a> {
    contract: &'a Contract,
    pub rng: Rng,
}

impl<'a> Gen<'a> {
    /// A generator for `contract`'s schemas, from the fixed seed.
    pub fn new(contract: &'a Contract) -> Self {
        Self {
            contract,
            rng: Rng(SEED),
        }
    }

    fn deref<'s>(&'s self, mut s: &'s Value) -> &'s Value {
        while let Some(r) = s.get("$ref").and_then(Value::as_str) {
            s = self
                .contract
                .resolve(r)
                .expect("references resolve (tested elsewhere)");
        }
        s
    }

    fn pick<'v>(&mut self, items: &'v [Value]) -> &'v Value {
        &items[self.rng.below(items.len() as u64) as usize]
    }

    pub fn value(&mut self, schema: &Value, depth: u32) -> Value {
        let schema = self.deref(schema).clone();
        if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
            return self.pick(choices).clone();
        }
        if let Some(c) = schema.get("const") {
            return c.clone();
        }
        let kind = match &schema["type"] {
            Value::String(t) => t.clone(),
            Value::Array(ts) => {
                // Mostly the first (non-null) type; null now and then.
                let non_null: Vec<Value> = ts.iter().filter(|t| *t != "null").cloned().collect();
                if non_null.is_empty() || self.rng.below(5) == 0 {
                    self.pick(ts).as_str().unwrap_or("null").to_owned()
                } else {
                    self.pick(&non_null).as_str().unwrap().to_owned()
                }
            }
            _ if schema.get("properties").is_some() => "object".into(),
            _ => match schema.get("oneOf").or(schema.get("anyOf")) {
                Some(Value::Array(branches)) => {
                    let branch = self.pick(branches).clone();
                    return self.value(&branch, depth);
                }
                _ => "string".into(),
            },
        };
        match kind.as_str() {
            "null" => Value::Null,
            "boolean" => json!(self.rng.coin()),
            "integer" => {
                let lo = schema["minimum"].as_i64().unwrap_or(0);
                let hi = schema["maximum"]
                    .as_i64()
                    .unwrap_or(lo + 10_000)
                    .min(lo + 100_000);
                json!(lo + self.rng.below((hi - lo + 1) as u64) as i64)
            }
            "number" => json!(self.rng.below(100_000) as f64 / 100.0),
            "string" => json!(self.string(&schema)),
            "array" => {
                let lo = schema["minItems"].as_u64().unwrap_or(0);
                let hi = schema["maxItems"].as_u64().unwrap_or(3).min(lo + 3);
                let n = lo + self.rng.below(hi - lo + 1);
                let items = schema.get("items").cloned().unwrap_or(json!({}));
                Value::Array((0..n).map(|_| self.value(&items, depth + 1)).collect())
            }
            _ => self.object(&schema, depth),
        }
    }

    fn string(&mut self, schema: &Value) -> String {
        match schema["format"].as_str() {
            Some("uuid") => {
                let hex = format!("{:016x}{:016x}", self.rng.next(), self.rng.next());
                format!(
                    "{}-{}-4{}-a{}-{}",
                    &hex[..8],
                    &hex[8..12],
                    &hex[13..16],
                    &hex[17..20],
                    &hex[20..32]
                )
            }
            Some("date-time") => "2026-11-23T08:00:00Z".into(),
            _ => {
                const ALPHABET: &[u8] =
                    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
                let lo = schema["minLength"].as_u64().unwrap_or(0);
                let hi = schema["maxLength"].as_u64().unwrap_or(12).min(lo + 12);
                let n = lo.max(1) + self.rng.below(hi.saturating_sub(lo.max(1)) + 1);
                (0..n)
                    .map(|_| ALPHABET[self.rng.below(ALPHABET.len() as u64) as usize] as char)
                    .collect()
            }
        }
    }

    fn object(&mut self, schema: &Value, depth: u32) -> Value {
        let mut out = Map::new();
        let required: Vec<String> = schema["required"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(props) = schema["properties"].as_object() {
            for (name, prop) in props {
                if required.contains(name) || (depth < 3 && self.rng.coin()) {
                    out.insert(name.clone(), self.value(prop, depth + 1));
                }
            }
        }
        // anyOf/oneOf branches that require fields (a model's `data`): satisfy one.
        if let Some(Value::Array(branches)) = schema.get("anyOf").or(schema.get("oneOf")) {
            let branch = self.pick(branches).clone();
            for field in branch["required"].as_array().into_iter().flatten() {
                let field = field.as_str().unwrap();
                let prop = branch["properties"]
                    .get(field)
                    .or(schema["properties"].get(field))
                    .cloned()
                    .unwrap_or(json!({"type": "string"}));
                out.insert(field.to_owned(), self.value(&prop, depth + 1));
            }
        }
        Value::Object(out)
    }

    /// A change that should make `body` invalid against `schema` (the validator decides).
    pub fn break_body(&mut self, schema: &Value, body: &Value) -> Value {
        let schema = self.deref(schema).clone();
        let mut broken = body.clone();
        let Some(obj) = broken.as_object_mut() else {
            return json!("not an object");
        };
        let props: Vec<(String, Value)> = schema["properties"]
            .as_object()
            .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        match self.rng.below(4) {
            0 => {
                if let Some(req) = schema["required"].as_array().filter(|r| !r.is_empty()) {
                    obj.remove(self.pick(req).as_str().unwrap());
                }
            }
            1 if !props.is_empty() => {
                let (name, prop) = self.pick_pair(&props);
                let prop = self.deref(&prop).clone();
                let wrong = match prop["type"].as_str() {
                    Some("string") => json!(12345),
                    Some("integer" | "number") => json!("twelve"),
                    Some("array") => json!({"not": "a list"}),
                    Some("object") => json!(["not", "an", "object"]),
                    _ => json!({"nested": [true]}),
                };
                obj.insert(name, wrong);
            }
            2 => {
                obj.insert("no_such_field_in_the_document".into(), json!(1));
            }
            _ => {
                // A string past its maxLength, or below its minLength.
                for (name, prop) in &props {
                    let prop = self.deref(prop);
                    if let Some(max) = prop["maxLength"].as_u64().filter(|m| *m < 5000) {
                        obj.insert(name.clone(), json!("x".repeat(max as usize + 1)));
                        break;
                    }
                    if prop["minLength"].as_u64() == Some(1) {
                        obj.insert(name.clone(), json!(""));
                        break;
                    }
                }
            }
        }
        broken
    }

    fn pick_pair(&mut self, items: &[(String, Value)]) -> (String, Value) {
        items[self.rng.below(items.len() as u64) as usize].clone()
    }
}
