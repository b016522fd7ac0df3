//! molprop: molecular properties from SMILES, served as a Lightweight AI Model Runtime
//! Interface 1.2 component through the model SDK. The chemistry is in the `chem` crate; this
//! crate is the request contract (`predict`) and the model's self-description (`content`).

mod content;
mod properties;
mod signature;

use model_sdk::{ApiError, ErrorCode, Example, InputType, Model, PredictError, PredictionRequest};
use properties::Property;
use serde_json::{Map, Value, json};

/// SMILES tokens accepted (spec 8: longer inputs are outside the validated scope).
const MAX_TOKENS: usize = 1024;

/// The model. The component serves it through the SDK; natively, the benchmark's reference
/// server (`bench/peers/molprop-native`) runs the very same code.
pub struct MolProp;

#[cfg(target_arch = "wasm32")]
#[spin_sdk::http_component]
async fn handle(req: spin_sdk::http::IncomingRequest, out: model_sdk::ResponseOutparam) {
    model_sdk::respond(out, model_sdk::serve(&MolProp, req).await);
}

/// The SMILES and the property code from `data`, or a 400.
fn read_request(data: &Map<String, Value>) -> Result<(String, String), ApiError> {
    model_sdk::input::only_fields(
        data,
        &["text", "smiles", "property"],
        "use text or smiles, and property",
    )?;
    let smiles = model_sdk::input::smiles(data)?;
    let tokens = chem::smiles::token_count(&smiles);
    if tokens > MAX_TOKENS {
        return Err(ApiError::new(
            ErrorCode::InputTooLong,
            format!("the SMILES has {tokens} tokens; at most {MAX_TOKENS} are accepted"),
        ));
    }
    let property = model_sdk::input::string_field(data, "property")?
        .unwrap_or("all")
        .to_owned();
    if property != "all" && properties::find(&property).is_none() {
        return Err(ApiError::invalid(
            "data.property",
            format!(
                "unknown property `{property}`; choose one of: {}",
                properties::codes().join(", ")
            ),
        ));
    }
    Ok((smiles, property))
}

fn one(p: &Property, mol: &chem::Molecule, smiles: &str) -> Value {
    let value = (p.compute)(&properties::Subject::new(mol));
    let in_range = properties::in_reliable_range(p, &value);
    let mut result = json!({
        "prediction": value,
        "property_type": p.code,
        "input": smiles,
        "unit": p.unit,
        "in_reliable_range": in_range,
    });
    if !in_range {
        result["warning"] = json!(format!(
            "{} is outside the reliable range of /acceptable_ranges",
            p.code
        ));
    }
    result
}

fn all(mol: &chem::Molecule, smiles: &str) -> Value {
    let mut outside = Vec::new();
    let subject = properties::Subject::new(mol);
    // Collected, not inserted one by one: a map collected from an iterator is sorted once
    // and built in one pass (serde_json's map is a BTreeMap; inserting was ~10 % of `all`
    // natively).
    let prediction: Map<String, Value> = properties::PROPERTIES
        .iter()
        .map(|p| {
            let value = (p.compute)(&subject);
            if !properties::in_reliable_range(p, &value) {
                outside.push(p.code);
            }
            (p.code.to_owned(), value)
        })
        .collect();
    let units: Map<String, Value> = properties::PROPERTIES
        .iter()
        .map(|p| (p.code.to_owned(), json!(p.unit)))
        .collect();
    let mut result = json!({
        "prediction": prediction,
        "property_type": "all",
        "input": smiles,
        "unit": "see units",
        "units": units,
        "in_reliable_range": outside.is_empty(),
    });
    if !outside.is_empty() {
        result["warning"] = json!(format!(
            "outside the reliable range of /acceptable_ranges: {}",
            outside.join(", ")
        ));
    }
    result
}

impl Model for MolProp {
    fn name(&self) -> &str {
        content::NAME
    }
    fn info(&self) -> model_sdk::ModelInfo {
        content::info()
    }
    fn capabilities(&self) -> model_sdk::Capabilities {
        content::capabilities()
    }
    fn acceptable_ranges(&self) -> model_sdk::AcceptableRanges {
        content::acceptable_ranges()
    }
    fn citation(&self) -> model_sdk::Citation {
        content::citation()
    }
    fn test_examples(&self) -> model_sdk::TestExamples {
        content::test_examples()
    }

    fn predict(
        &self,
        _input_type: InputType,
        data: &Map<String, Value>,
    ) -> Result<Value, PredictError> {
        let (smiles, property) = read_request(data)?;
        let mol = chem::smiles::parse(&smiles)
            .map_err(|e| PredictError::Failed(format!("invalid SMILES: {e}")))?;
        Ok(match properties::find(&property) {
            Some(p) => one(p, &mol, &smiles),
            None => all(&mol, &smiles),
        })
    }

    fn data_schema(&self) -> Value {
        let choices = properties::codes();
        let mut extra = Map::new();
        extra.insert(
            "property".into(),
            json!({
                "enum": choices.into_iter().map(Value::from).chain([Value::Null]).collect::<Vec<_>>(),
                "description": "The property to compute; `all` (the default, also for null) gives every one as an object.",
            }),
        );
        model_sdk::input::smiles_data_schema(MAX_TOKENS, extra)
    }

    fn signature(&self) -> model_sdk::oip::Signature {
        signature::signature()
    }

    fn example_request(&self, example: &Example) -> PredictionRequest {
        PredictionRequest {
            input_type: "text".into(),
            data: content::example_data(example),
        }
    }
}
