//! `POST /v2/models/{name}/infer`: tensors in, the model's v1.2 batch, tensors out.

use super::datatype::Datatype;
use super::signature::{Binding, InputSpec, Signature};
use super::tensor::Elements;
use super::wire::{self, InferRequest, RequestInput};
use super::{OipError, outputs};
use crate::{Model, PredictError, batch};
use base64::Engine;
use serde_json::{Map, Value};
use std::time::{Duration, Instant};

/// An inference answered: the body and, when it holds binary data, the JSON header's length.
pub struct Answer {
    pub body: Vec<u8>,
    pub header_length: Option<usize>,
}

/// What `/metrics` counts of an inference that reached the model: items predicted, time in
/// the model, and why an item failed.
pub struct Ran<'a> {
    pub items: u64,
    pub elapsed: Duration,
    pub error: Option<&'a str>,
}

/// One input of the request, read and checked against its spec.
struct Read<'s> {
    spec: &'s InputSpec,
    elements: Elements,
    /// Elements per item.
    per_item: usize,
    /// Whether the elements came as binary data (a file is then raw bytes, not base64).
    binary: bool,
}

/// Runs an inference request on `model` as described by `signature`; `ran` is told of it
/// once the model has run (a request refused before is not a prediction).
pub fn run<M: Model>(
    model: &M,
    signature: &Signature,
    version: &str,
    body: &[u8],
    header_length: Option<&str>,
    ran: impl FnOnce(Ran),
) -> Result<Answer, OipError> {
    let wire::Body { request, binary } = wire::read(body, header_length)?;
    let (reads, n) = read_inputs(signature, &request, binary, model.max_batch())?;
    let wanted = outputs::wanted(signature, &request)?;
    let mut items: Vec<Map<String, Value>> =
        (0..n).map(|i| item(&reads, i)).collect::<Result<_, _>>()?;
    let wanted = outputs::narrow(wanted, &mut items);
    let started = Instant::now();
    let outcomes = model.predict_batch(signature.input_type, &items, started + batch::TIME_BUDGET);
    let elapsed = started.elapsed();
    let results = results(outcomes, n);
    ran(Ran {
        items: n as u64,
        elapsed,
        error: results.as_ref().err().map(|e| e.message.as_str()),
    });
    let (body, header_length) = outputs::response(
        model.name(),
        version,
        request.id.as_deref(),
        &wanted,
        &results?,
    )?;
    Ok(Answer {
        body,
        header_length,
    })
}

/// Every input of the signature, read from the request; and the batch size they share.
fn read_inputs<'s>(
    signature: &'s Signature,
    request: &InferRequest,
    mut binary: &[u8],
    max_batch: usize,
) -> Result<(Vec<Read<'s>>, usize), OipError> {
    let names = || {
        let names: Vec<&str> = signature.inputs.iter().map(|i| i.name.as_str()).collect();
        names.join(", ")
    };
    let mut reads: Vec<Read> = Vec::with_capacity(request.inputs.len());
    let mut batch: Option<usize> = None;
    for input in &request.inputs {
        let spec = signature
            .inputs
            .iter()
            .find(|s| s.name == input.name)
            .ok_or_else(|| {
                OipError::bad(format!(
                    "unexpected inference input '{}'; this model takes: {}",
                    input.name,
                    names()
                ))
            })?;
        if reads.iter().any(|r| r.spec.name == spec.name) {
            return Err(OipError::bad(format!(
                "input '{}' is sent twice",
                spec.name
            )));
        }
        let (n, per_item) = check_shape(spec, input)?;
        if let Some(first) = batch
            && first != n
        {
            return Err(OipError::bad(format!(
                "input '{}' holds {n} items where the others hold {first}: every input's first \
                 dimension is the batch",
                spec.name
            )));
        }
        batch = Some(n);
        let (elements, from_binary) = read_elements(spec, input, n * per_item, &mut binary)?;
        reads.push(Read {
            spec,
            elements,
            per_item,
            binary: from_binary,
        });
    }
    if !binary.is_empty() {
        return Err(OipError::bad(format!(
            "the body has {} bytes of binary data that no input's binary_data_size accounts for",
            binary.len()
        )));
    }
    if let Some(missing) = signature
        .inputs
        .iter()
        .find(|s| !reads.iter().any(|r| r.spec.name == s.name))
    {
        return Err(OipError::bad(format!(
            "input '{}' is missing; this model takes: {}",
            missing.name,
            names()
        )));
    }
    let n = batch.unwrap_or(0);
    if n == 0 || n > max_batch {
        return Err(OipError::bad(format!(
            "the batch holds {n} items; send 1 to {max_batch} per request"
        )));
    }
    Ok((reads, n))
}

/// The batch size and elements per item of `input`, whose shape must be the spec's with the
/// batch first (`[N, 1]` is taken for `[N]`).
fn check_shape(spec: &InputSpec, input: &RequestInput) -> Result<(usize, usize), OipError> {
    let expected: Vec<i64> = std::iter::once(-1)
        .chain(spec.item_shape.iter().copied())
        .collect();
    let fits = |shape: &[i64]| {
        shape.len() == expected.len()
            && shape.iter().all(|d| *d >= 0)
            && shape.iter().zip(&expected).all(|(d, e)| *e == -1 || d == e)
    };
    let shape: &[i64] = if !fits(&input.shape)
        && spec.item_shape.is_empty()
        && input.shape.len() == 2
        && input.shape[1] == 1
    {
        &input.shape[..1]
    } else {
        &input.shape
    };
    if !fits(shape) {
        return Err(OipError::bad(format!(
            "input '{}' has shape {:?}; this model takes {:?} (-1: any length)",
            spec.name, input.shape, expected
        )));
    }
    // Checked, not cast: on wasm32 `usize` is 32 bits, and `4294967297 as usize` is 1.
    let too_large = || OipError::bad(format!("input '{}' has too large a shape", spec.name));
    let dim = |d: &i64| usize::try_from(*d).map_err(|_| too_large());
    let n = dim(&shape[0])?;
    let per_item = shape[1..].iter().try_fold(1usize, |acc, d| {
        acc.checked_mul(dim(d)?).ok_or_else(too_large)
    })?;
    n.checked_mul(per_item).ok_or_else(too_large)?;
    Ok((n, per_item))
}

/// The elements of `input`, from its JSON `data` or from the binary data (advancing
/// `binary` past them); and whether they came as binary.
fn read_elements(
    spec: &InputSpec,
    input: &RequestInput,
    count: usize,
    binary: &mut &[u8],
) -> Result<(Elements, bool), OipError> {
    let name = &spec.name;
    let datatype = Datatype::parse(&input.datatype).ok_or_else(|| {
        OipError::bad(format!(
            "input '{name}' has datatype {:?}, which the protocol does not define",
            input.datatype
        ))
    })?;
    let compatible = match spec.datatype {
        Datatype::Bytes => datatype == Datatype::Bytes,
        Datatype::Bool => datatype == Datatype::Bool,
        _ => datatype.is_number(),
    };
    if !compatible {
        let takes = if spec.datatype.is_number() {
            "a number type (FP32, FP64, INT64, ...)".to_owned()
        } else {
            spec.datatype.name().to_owned()
        };
        return Err(OipError::bad(format!(
            "input '{name}' is {}; this model takes {takes}",
            datatype.name()
        )));
    }
    let bad = |why: String| OipError::bad(format!("input '{name}' {why}"));
    let size = wire::size(input.parameters.as_ref(), "binary_data_size")?;
    let (elements, from_binary) = match (size, &input.data) {
        (Some(_), Some(_)) => {
            return Err(bad("has both data and binary_data_size; send one".into()));
        }
        (None, None) => return Err(bad("has no data".into())),
        (Some(size), None) => {
            if size > binary.len() {
                return Err(bad(format!(
                    "says {size} bytes of binary data, but {} remain in the body",
                    binary.len()
                )));
            }
            let (mine, rest) = binary.split_at(size);
            *binary = rest;
            (
                Elements::from_binary(datatype, mine, count).map_err(bad)?,
                true,
            )
        }
        (None, Some(data)) => (Elements::from_json(datatype, data).map_err(bad)?, false),
    };
    if elements.len() != count {
        return Err(bad(format!(
            "holds {} elements; its shape {:?} says {count}",
            elements.len(),
            input.shape
        )));
    }
    Ok((elements, from_binary))
}

/// Item `i`'s v1.2 `data`, from every input.
fn item(reads: &[Read], i: usize) -> Result<Map<String, Value>, OipError> {
    let mut data = Map::new();
    for read in reads {
        let range = i * read.per_item..(i + 1) * read.per_item;
        let name = &read.spec.name;
        let text = |bytes: &[u8]| {
            String::from_utf8(bytes.to_vec())
                .map_err(|_| OipError::bad(format!("input '{name}' element {i} is not UTF-8 text")))
        };
        let value = |k: usize| -> Result<Value, OipError> {
            Ok(match &read.elements {
                Elements::Bool(v) => Value::from(v[k]),
                Elements::Numbers(v) => number(name, k, v[k])?,
                Elements::Bytes(v) => Value::from(text(&v[k])?),
            })
        };
        match &read.spec.binding {
            Binding::Text(field) => {
                data.insert(field.clone(), value(range.start)?);
            }
            Binding::File(field) => {
                // A signature's mistake, not the client's: a 500 saying so, not a trap.
                let Elements::Bytes(files) = &read.elements else {
                    return Err(OipError::new(
                        500,
                        format!(
                            "input '{name}' is bound to a file, but the model's signature \
                             makes it {}: a file input must be BYTES",
                            read.spec.datatype.name()
                        ),
                    ));
                };
                let file = &files[range.start];
                let value = if read.binary {
                    base64::engine::general_purpose::STANDARD.encode(file)
                } else {
                    text(file)?
                };
                data.insert(field.clone(), Value::from(value));
            }
            Binding::Row(field) => {
                let row: Vec<Value> = range.map(value).collect::<Result<_, _>>()?;
                data.insert(field.clone(), Value::from(row));
            }
            Binding::Member { object, key } => {
                let v = value(range.start)?;
                let object = data
                    .entry(object.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(members) = object {
                    members.insert(key.clone(), v);
                }
            }
        }
    }
    Ok(data)
}

/// Element `k` of input `name` as v1.2 JSON. JSON has no NaN or infinity, and
/// `Value::from` would make both `null`: right for a NaN, the tensors' mark of a value not
/// measured (v1.2's `null`), but an infinity would then be taken as missing and predicted on,
/// where `/predict` could never be sent it.
fn number(name: &str, k: usize, x: f64) -> Result<Value, OipError> {
    if x.is_infinite() {
        return Err(OipError::bad(format!(
            "input '{name}' element {k} is {x}; a model takes finite numbers (NaN for a value \
             not measured)"
        )));
    }
    Ok(Value::from(x))
}

/// Every item's v1.2 results; the first item without one fails the request, saying which.
fn results(outcomes: Vec<Result<Value, PredictError>>, n: usize) -> Result<Vec<Value>, OipError> {
    let mut outcomes = outcomes.into_iter();
    let mut results = Vec::with_capacity(n);
    for i in 0..n {
        let at = |m: &str| format!("item {i}: {m}");
        match outcomes.next() {
            Some(Ok(value)) => results.push(value),
            Some(Err(PredictError::Invalid(e))) => {
                let status = if e.status >= 500 { e.status } else { 400 };
                return Err(OipError::new(status, at(&e.message)));
            }
            Some(Err(PredictError::Failed(m))) => return Err(OipError::bad(at(&m))),
            Some(Err(PredictError::Fault(m))) => {
                return Err(OipError::new(500, at(&format!("prediction failed: {m}"))));
            }
            // Load, not a fault: the client may send fewer items or retry.
            None => return Err(OipError::new(503, at(&batch::not_computed()))),
        }
    }
    Ok(results)
}
