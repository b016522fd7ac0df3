//! `LabelEncoder`: maps each element through a table, keeping the input's shape.
//!
//! Opset 1 (`classes_strings`): a string becomes its position in the list (`default_int64`,
//! -1, when absent), an int64 the string at that position (`default_string`, "_Unused").
//! Opset 2 (`keys_*`, `values_*`: strings, int64s or floats): a key becomes its value, an
//! unknown element `default_*` ("_Unused", -1, -0.0), in the values' type.
//!
//! As onnxruntime: a key listed twice keeps its first value; a float key matches by value
//! (0.0 and -0.0 alike), NaN matching nothing.

use super::op::{MlOp, expanded};
use super::values::{shaped, slice};
use std::collections::HashMap;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    for newer in ["keys_tensor", "values_tensor", "default_tensor"] {
        if node.attribute.iter().any(|a| a.name == newer) {
            node.bail_attr(
                newer,
                "not supported (ai.onnx.ml opset 4); export with opset 2 or 3",
            )?;
        }
    }
    let default_int: i64 = node.get_attr_opt("default_int64")?.unwrap_or(-1);
    let default_string: String = node
        .get_attr_opt("default_string")?
        .unwrap_or_else(|| "_Unused".into());
    if let Some(classes) = node.get_attr_opt_vec::<String>("classes_strings")? {
        let (positions, _) = first_positions(classes.iter().cloned());
        return expanded(LabelEncoder::Classes {
            classes,
            positions,
            default_int,
            default_string,
        });
    }
    let keys = match (
        node.get_attr_opt_vec::<String>("keys_strings")?,
        node.get_attr_opt_vec::<i64>("keys_int64s")?,
        node.get_attr_opt_vec::<f32>("keys_floats")?,
    ) {
        (Some(k), None, None) => Keys::Strings(first_positions(k)),
        (None, Some(k), None) => Keys::Ints(first_positions(k)),
        (None, None, Some(k)) => Keys::Floats(first_positions(k.into_iter().map(float_key))),
        _ => node.bail_attr(
            "keys_strings",
            "exactly one of keys_strings, keys_int64s and keys_floats (or classes_strings)",
        )?,
    };
    let values = match (
        node.get_attr_opt_vec::<String>("values_strings")?,
        node.get_attr_opt_vec::<i64>("values_int64s")?,
        node.get_attr_opt_vec::<f32>("values_floats")?,
    ) {
        (Some(v), None, None) => Values::Strings(v, default_string),
        (None, Some(v), None) => Values::Ints(v, default_int),
        (None, None, Some(v)) => {
            Values::Floats(v, node.get_attr_opt("default_float")?.unwrap_or(-0.0))
        }
        _ => node.bail_attr(
            "values_strings",
            "exactly one of values_strings, values_int64s and values_floats",
        )?,
    };
    let (n_keys, n_values) = (keys.len(), values.len());
    node.expect_attr("values_strings", n_keys == n_values, || {
        format!("as many values as keys ({n_keys}), got {n_values}")
    })?;
    expanded(LabelEncoder::Table { keys, values })
}

/// A float key by its bits, -0.0 as 0.0; `None` for NaN, which matches nothing.
fn float_key(v: f32) -> Option<u32> {
    (!v.is_nan()).then_some(if v == 0.0 { 0 } else { v.to_bits() })
}

/// Each key's position, the first one where it is listed twice.
fn first_positions<K: std::hash::Hash + Eq>(
    keys: impl IntoIterator<Item = K>,
) -> (HashMap<K, usize>, usize) {
    let mut map = HashMap::new();
    let mut count = 0;
    for (i, k) in keys.into_iter().enumerate() {
        map.entry(k).or_insert(i);
        count += 1;
    }
    (map, count)
}

#[derive(Debug)]
enum Keys {
    Strings((HashMap<String, usize>, usize)),
    Ints((HashMap<i64, usize>, usize)),
    Floats((HashMap<Option<u32>, usize>, usize)),
}

impl Keys {
    fn len(&self) -> usize {
        match self {
            Keys::Strings((_, n)) | Keys::Ints((_, n)) | Keys::Floats((_, n)) => *n,
        }
    }

    /// Every element's key position (`None`: unknown).
    fn lookup(&self, x: &Tensor) -> TractResult<Vec<Option<usize>>> {
        let dt = x.datum_type();
        Ok(match self {
            Keys::Strings((map, _)) if dt == DatumType::String => slice::<String>(x)?
                .iter()
                .map(|k| map.get(k).copied())
                .collect(),
            Keys::Ints((map, _)) if dt == DatumType::I64 => slice::<i64>(x)?
                .iter()
                .map(|k| map.get(k).copied())
                .collect(),
            Keys::Floats((map, _)) if dt == DatumType::F32 => {
                let found = |&k: &f32| float_key(k).and_then(|k| map.get(&Some(k)).copied());
                slice::<f32>(x)?.iter().map(found).collect()
            }
            Keys::Strings(_) => {
                bail!("LabelEncoder: input of type {dt:?}; keys_strings needs string")
            }
            Keys::Ints(_) => bail!("LabelEncoder: input of type {dt:?}; keys_int64s needs int64"),
            Keys::Floats(_) => bail!("LabelEncoder: input of type {dt:?}; keys_floats needs float"),
        })
    }
}

#[derive(Debug)]
enum Values {
    Strings(Vec<String>, String),
    Ints(Vec<i64>, i64),
    Floats(Vec<f32>, f32),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::Strings(v, _) => v.len(),
            Values::Ints(v, _) => v.len(),
            Values::Floats(v, _) => v.len(),
        }
    }

    fn datum_type(&self) -> DatumType {
        match self {
            Values::Strings(..) => DatumType::String,
            Values::Ints(..) => DatumType::I64,
            Values::Floats(..) => DatumType::F32,
        }
    }

    fn pick(&self, shape: &[usize], found: &[Option<usize>]) -> TractResult<Tensor> {
        fn each<T: Datum + Clone>(values: &[T], default: &T, found: &[Option<usize>]) -> Vec<T> {
            let one = |at: &Option<usize>| at.map_or(default, |i| &values[i]).clone();
            found.iter().map(one).collect()
        }
        match self {
            Values::Strings(v, d) => shaped(shape, each(v, d, found)),
            Values::Ints(v, d) => shaped(shape, each(v, d, found)),
            Values::Floats(v, d) => shaped(shape, each(v, d, found)),
        }
    }
}

#[derive(Debug)]
enum LabelEncoder {
    /// Opset 1: strings to positions and back.
    Classes {
        classes: Vec<String>,
        /// Each class's first position, built once when parsed.
        positions: HashMap<String, usize>,
        default_int: i64,
        default_string: String,
    },
    /// Opset 2.
    Table { keys: Keys, values: Values },
}

impl MlOp for LabelEncoder {
    fn name(&self) -> &'static str {
        "LabelEncoder"
    }

    fn output_types(&self) -> TVec<Option<DatumType>> {
        match self {
            LabelEncoder::Classes { .. } => tvec![None],
            LabelEncoder::Table { values, .. } => tvec![Some(values.datum_type())],
        }
    }

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        let dt = match self {
            LabelEncoder::Table { values, .. } => values.datum_type(),
            LabelEncoder::Classes { .. } => match inputs[0].datum_type {
                DatumType::String => DatumType::I64,
                DatumType::I64 => DatumType::String,
                dt => bail!(
                    "LabelEncoder: input of type {dt:?}; classes_strings needs string or int64"
                ),
            },
        };
        Ok(tvec![dt.fact(inputs[0].shape.clone())])
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let x = &inputs[0];
        let out = match self {
            LabelEncoder::Table { keys, values } => values.pick(x.shape(), &keys.lookup(x)?)?,
            LabelEncoder::Classes {
                positions,
                default_int,
                ..
            } if x.datum_type() == DatumType::String => {
                let at = |s: &String| positions.get(s).map_or(*default_int, |&i| i as i64);
                shaped(x.shape(), slice::<String>(x)?.iter().map(at).collect())?
            }
            LabelEncoder::Classes {
                classes,
                default_string,
                ..
            } => {
                let at = |&i: &i64| usize::try_from(i).ok().and_then(|i| classes.get(i));
                let name = |i: &i64| at(i).unwrap_or(default_string).clone();
                shaped(x.shape(), slice::<i64>(x)?.iter().map(name).collect())?
            }
        };
        Ok(tvec![out.into_tvalue()])
    }
}

#[cfg(test)]
#[path = "label_encoder_tests.rs"]
mod tests;
