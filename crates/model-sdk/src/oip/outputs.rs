//! The answer's side of an inference: which outputs were asked for and how (JSON or binary),
//! each output's elements gathered from the items' v1.2 results, and the response body.

use super::OipError;
use super::datatype::Datatype;
use super::signature::{OutputSpec, Signature, Source};
use super::tensor::{Elements, number_json};
use super::wire::{self, InferRequest};
use serde::Serialize;
use serde::ser::SerializeSeq;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// An output to answer, where its values are, and whether in binary.
pub struct Wanted<'s> {
    pub spec: &'s OutputSpec,
    pub source: &'s Source,
    pub binary: bool,
}

/// The outputs asked for (all when none are named), each binary or JSON as asked.
pub fn wanted<'s>(
    signature: &'s Signature,
    request: &InferRequest,
) -> Result<Vec<Wanted<'s>>, OipError> {
    let all_binary =
        wire::flag(request.parameters.as_ref(), "binary_data_output")?.unwrap_or(false);
    let want = |spec: &'s OutputSpec, binary: bool| Wanted {
        spec,
        source: &spec.source,
        binary,
    };
    let Some(asked) = &request.outputs else {
        return Ok(signature
            .outputs
            .iter()
            .map(|s| want(s, all_binary))
            .collect());
    };
    let mut wanted: Vec<Wanted> = Vec::with_capacity(asked.len());
    for output in asked {
        let spec = signature
            .outputs
            .iter()
            .find(|s| s.name == output.name)
            .ok_or_else(|| {
                let names: Vec<&str> = signature.outputs.iter().map(|o| o.name.as_str()).collect();
                OipError::bad(format!(
                    "unexpected inference output '{}'; this model answers: {}",
                    output.name,
                    names.join(", ")
                ))
            })?;
        if wanted.iter().any(|w| w.spec.name == spec.name) {
            return Err(OipError::bad(format!(
                "output '{}' is asked for twice",
                spec.name
            )));
        }
        if output
            .parameters
            .as_ref()
            .is_some_and(|p| p.contains_key("classification"))
        {
            return Err(OipError::bad(format!(
                "output '{}' asks for the classification extension, which this server does not \
                 offer; ask for the output itself",
                spec.name
            )));
        }
        let binary = wire::flag(output.parameters.as_ref(), "binary_data")?.unwrap_or(all_binary);
        wanted.push(want(spec, binary));
    }
    Ok(wanted)
}

/// When one output alone is asked for and it has a cheaper request, makes each item that
/// request and reads the output where that request answers it.
pub fn narrow<'s>(
    mut wanted: Vec<Wanted<'s>>,
    items: &mut [Map<String, Value>],
) -> Vec<Wanted<'s>> {
    if let [only] = wanted.as_mut_slice()
        && let Some(alone) = &only.spec.alone
    {
        for data in items.iter_mut() {
            data.insert(alone.field.clone(), alone.value.clone());
        }
        only.source = &alone.source;
    }
    wanted
}

/// Output `wanted`'s elements across every item's results.
fn gather(wanted: &Wanted, results: &[Value]) -> Result<(Elements, Vec<i64>), OipError> {
    let spec = wanted.spec;
    let missing = |i: usize, pointer: &str| {
        OipError::new(
            500,
            format!(
                "output '{}': the model's answer for item {i} has no {} at {pointer:?}",
                spec.name,
                spec.datatype.name()
            ),
        )
    };
    let mut values: Vec<&Value> = Vec::new();
    let mut width: Option<usize> = None;
    for (i, result) in results.iter().enumerate() {
        let before = values.len();
        match wanted.source {
            Source::Pointers(pointers) => {
                for p in pointers {
                    values.push(lookup(result, p).ok_or_else(|| missing(i, p))?);
                }
            }
            Source::Pointer(p) => {
                let found = lookup(result, p).ok_or_else(|| missing(i, p))?;
                match (spec.item_shape.is_empty(), found) {
                    (true, v) => values.push(v),
                    (false, Value::Array(many)) => values.extend(many),
                    (false, _) => return Err(missing(i, p)),
                }
            }
        }
        let got = values.len() - before;
        if *width.get_or_insert(got) != got {
            return Err(OipError::new(
                500,
                format!("output '{}' has items of different lengths", spec.name),
            ));
        }
    }
    let width = width.unwrap_or(0);
    let wrong = |v: &Value| {
        OipError::new(
            500,
            format!(
                "output '{}': the model answered {v}, which is not a {} element",
                spec.name,
                spec.datatype.name()
            ),
        )
    };
    let elements = match spec.datatype {
        Datatype::Bool => Elements::Bool(
            values
                .iter()
                .map(|v| v.as_bool().ok_or_else(|| wrong(v)))
                .collect::<Result<_, _>>()?,
        ),
        Datatype::Bytes => Elements::Bytes(
            values
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.as_bytes().to_vec(),
                    other => other.to_string().into_bytes(),
                })
                .collect(),
        ),
        _ => Elements::Numbers(
            values
                .iter()
                .map(|v| v.as_f64().ok_or_else(|| wrong(v)))
                .collect::<Result<_, _>>()?,
        ),
    };
    let mut shape = vec![results.len() as i64];
    if !spec.item_shape.is_empty() {
        shape.push(width as i64);
    }
    Ok((elements, shape))
}

/// The response body: the JSON, then the binary outputs' data in order.
pub fn response(
    model_name: &str,
    version: &str,
    id: Option<&str>,
    wanted: &[Wanted],
    results: &[Value],
) -> Result<(Vec<u8>, Option<usize>), OipError> {
    let gathered: Vec<(Elements, Vec<i64>)> = wanted
        .iter()
        .map(|w| gather(w, results))
        .collect::<Result<_, _>>()?;
    let mut blobs: Vec<Vec<u8>> = Vec::new();
    let outputs: Vec<OutputHead> = wanted
        .iter()
        .zip(&gathered)
        .map(|(w, (elements, shape))| {
            let datatype = w.spec.datatype;
            let mut head = OutputHead {
                name: &w.spec.name,
                datatype: datatype.name(),
                shape,
                data: None,
                parameters: None,
            };
            if w.binary {
                let blob = elements.to_binary(datatype);
                head.parameters = Some(BinarySize {
                    binary_data_size: blob.len(),
                });
                blobs.push(blob);
            } else {
                head.data = Some(JsonData(elements, datatype));
            }
            head
        })
        .collect();
    let head = ResponseHead {
        model_name,
        model_version: version,
        id,
        outputs,
    };
    let mut body = serde_json::to_vec(&head)
        .map_err(|e| OipError::new(500, format!("could not serialise the answer: {e}")))?;
    if blobs.is_empty() {
        return Ok((body, None));
    }
    let header_length = body.len();
    blobs.iter().for_each(|b| body.extend_from_slice(b));
    Ok((body, Some(header_length)))
}

/// The response's JSON, written straight from the gathered elements: building it as a
/// `serde_json::Value` first cost more than the model for molprop's fourteen outputs.
#[derive(Serialize)]
struct ResponseHead<'a> {
    model_name: &'a str,
    model_version: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    outputs: Vec<OutputHead<'a>>,
}

#[derive(Serialize)]
struct OutputHead<'a> {
    name: &'a str,
    datatype: &'static str,
    shape: &'a [i64],
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<JsonData<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<BinarySize>,
}

#[derive(Serialize)]
struct BinarySize {
    binary_data_size: usize,
}

/// Elements as the flat JSON array of their datatype (see [`Elements::to_json`]).
struct JsonData<'a>(&'a Elements, Datatype);

impl Serialize for JsonData<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let JsonData(elements, datatype) = self;
        let mut seq = serializer.serialize_seq(Some(elements.len()))?;
        match elements {
            Elements::Bool(v) => v.iter().try_for_each(|b| seq.serialize_element(b))?,
            Elements::Bytes(v) => v
                .iter()
                .try_for_each(|b| seq.serialize_element(&String::from_utf8_lossy(b)))?,
            Elements::Numbers(v) => match datatype {
                Datatype::Fp64 => v.iter().try_for_each(|x| seq.serialize_element(x))?,
                _ => v
                    .iter()
                    .try_for_each(|x| seq.serialize_element(&number_json(*datatype, *x)))?,
            },
        }
        seq.end()
    }
}

/// The value at JSON pointer `pointer` (RFC 6901) in `value`: `Value::pointer` without an
/// allocation per token unless the token escapes `~` or `/`.
fn lookup<'v>(value: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(value);
    }
    let rest = pointer.strip_prefix('/')?;
    rest.split('/').try_fold(value, |target, token| {
        let token: Cow<str> = match token.contains('~') {
            true => Cow::Owned(token.replace("~1", "/").replace("~0", "~")),
            false => Cow::Borrowed(token),
        };
        match target {
            Value::Object(map) => map.get(token.as_ref()),
            Value::Array(list) => list.get(token.parse::<usize>().ok()?),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lookup_reads_what_value_pointer_reads() {
        let v = json!({"a": {"b/c": [1, {"d~e": true}]}, "": 2});
        for p in [
            "",
            "/a",
            "/a/b~1c",
            "/a/b~1c/0",
            "/a/b~1c/1/d~0e",
            "/",
            "/x",
            "/a/b~1c/9",
            "a",
        ] {
            assert_eq!(lookup(&v, p), v.pointer(p), "{p}");
        }
    }

    #[test]
    fn json_data_writes_each_datatype_as_to_json_does() {
        let cases = [
            (Elements::Numbers(vec![0.1, 2.0]), Datatype::Fp64),
            (Elements::Numbers(vec![0.1, 2.0]), Datatype::Fp32),
            (Elements::Numbers(vec![3.0, 250.0]), Datatype::Uint8),
            (Elements::Numbers(vec![-3.0, 7.0]), Datatype::Int64),
            (Elements::Bool(vec![true, false]), Datatype::Bool),
            (
                Elements::Bytes(vec![b"CCO".to_vec(), vec![0xff]]),
                Datatype::Bytes,
            ),
        ];
        for (elements, datatype) in cases {
            let written = serde_json::to_value(JsonData(&elements, datatype)).unwrap();
            assert_eq!(written, elements.to_json(datatype), "{datatype:?}");
        }
    }
}
