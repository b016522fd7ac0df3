//! How a row's cells become the graph's inputs: one matrix `[rows, width]` of the graph's
//! number type, or one column `[rows, 1]` per input, matched to the features by name (a
//! DataFrame export names its inputs after the columns), numbers or text as the graph takes
//! them.

use crate::inputs::{Cell, Reader};
use tract_onnx::prelude::*;
use tract_onnx::tract_hir::infer::Factoid;

#[derive(Debug)]
pub enum Feed {
    /// Every feature, in order, as one matrix.
    Matrix { datum: DatumType, width: usize },
    /// One feature (by its index in the row) as a column.
    Column { feature: usize, datum: DatumType },
    /// A picture's or a sound's values as one tensor `[rows, ...item]` (channels, height,
    /// width; or mels, frames), of floats.
    Tensor { datum: DatumType, item: Vec<usize> },
}

/// The input types a request's values can become.
const FED: [DatumType; 5] = [
    DatumType::F32,
    DatumType::F64,
    DatumType::I64,
    DatumType::I32,
    DatumType::String,
];

fn declared(fact: &InferenceFact) -> (Option<DatumType>, Option<usize>, usize) {
    let dims: Vec<_> = fact.shape.dims().collect();
    let width = (dims.len() == 2)
        .then(|| dims[1].concretize()?.as_i64())
        .flatten()
        .and_then(|w| usize::try_from(w).ok());
    (fact.datum_type.concretize(), width, dims.len())
}

/// The feeds of `model`'s inputs from the rows `reader` makes.
pub fn bind(
    model: &InferenceModel,
    reader: &Reader,
    describe_width: &str,
) -> Result<Vec<Feed>, String> {
    let width = reader.width();
    let inputs: Vec<(String, &InferenceFact)> = (0..model.inputs.len())
        .map(|i| {
            let name = model.node(model.inputs[i].node).name.clone();
            model
                .input_fact(i)
                .map(|f| (name, f))
                .map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;
    let datum = |name: &str, dt: Option<DatumType>| -> Result<DatumType, String> {
        let dt = dt.unwrap_or(DatumType::F32);
        if FED.contains(&dt) {
            Ok(dt)
        } else {
            Err(format!(
                "the graph's input `{name}` is of type {dt:?}; this component feeds numbers \
                 (float, double, int64, int32) or text"
            ))
        }
    };
    if let Some(item) = reader.shape() {
        return bind_tensor(&inputs, item, describe_width);
    }
    match &inputs[..] {
        [] => Err("the graph has no inputs".into()),
        [(name, fact)] if reader.names().is_none_or(|n| n.len() != 1 || n[0] != *name) => {
            let (dt, declared_width, _) = declared(fact);
            let dt = datum(name, dt)?;
            if dt == DatumType::String {
                return Err(format!(
                    "the graph's one input `{name}` takes text; a graph taking several \
                     features as one matrix must take numbers"
                ));
            }
            if let Some(declared) = declared_width
                && declared != width
            {
                return Err(format!(
                    "the graph's input takes {declared} values per row, but {describe_width} \
                     gives {width}"
                ));
            }
            Ok(vec![Feed::Matrix { datum: dt, width }])
        }
        _ => {
            let Some(names) = reader.names() else {
                return Err(format!(
                    "the graph has {} inputs; a featurized SMILES feeds exactly one",
                    inputs.len()
                ));
            };
            let graph_names: Vec<&str> = inputs.iter().map(|(n, _)| n.as_str()).collect();
            let mut problems = Vec::new();
            if let Some(missing) = names.iter().find(|n| !graph_names.contains(&n.as_str())) {
                problems.push(format!(
                    "feature `{missing}` of input.features is no input of the graph, whose \
                     inputs (one per feature) are: {}",
                    graph_names.join(", ")
                ));
            }
            let mut feeds = Vec::new();
            for (name, fact) in &inputs {
                let Some(feature) = names.iter().position(|n| n == name) else {
                    problems.push(format!(
                        "the graph's input `{name}` is none of input.features; list every \
                         input of the graph as a feature: {}",
                        graph_names.join(", ")
                    ));
                    continue;
                };
                let (dt, declared_width, rank) = declared(fact);
                let dt = match datum(name, dt) {
                    Ok(dt) => dt,
                    Err(why) => {
                        problems.push(why);
                        continue;
                    }
                };
                if rank != 2 || declared_width.is_some_and(|w| w != 1) {
                    problems.push(format!(
                        "the graph's input `{name}` is not one column ([N, 1]); a graph with \
                         several inputs takes one feature in each"
                    ));
                }
                match (dt == DatumType::String, reader.is_text(name)) {
                    (true, false) => problems.push(format!(
                        "the graph takes text for feature `{name}`: list it in \
                         input.categories with the values seen in training"
                    )),
                    (false, true) => problems.push(format!(
                        "input.categories lists `{name}`, but the graph takes numbers for it"
                    )),
                    _ => {}
                }
                feeds.push(Feed::Column { feature, datum: dt });
            }
            if problems.is_empty() {
                Ok(feeds)
            } else {
                Err(problems.join("\n"))
            }
        }
    }
}

/// The one input of a graph taking a picture or a sound: a matrix of one row per input (a
/// scikit-learn model on the flattened values), or a tensor of the item's shape (a network
/// taking `[N, C, H, W]`; a `[N, 1, mels, frames]` graph takes a spectrogram too).
fn bind_tensor(
    inputs: &[(String, &InferenceFact)],
    item: Vec<usize>,
    describe_width: &str,
) -> Result<Vec<Feed>, String> {
    let [(name, fact)] = inputs else {
        return Err(format!(
            "the graph has {} inputs; a picture or a sound feeds exactly one",
            inputs.len()
        ));
    };
    let datum = match fact.datum_type.concretize() {
        None | Some(DatumType::F32) => DatumType::F32,
        Some(DatumType::F64) => DatumType::F64,
        Some(other) => {
            return Err(format!(
                "the graph's input `{name}` is of type {other:?}; a picture or a sound is fed \
                 as float or double"
            ));
        }
    };
    let dims: Vec<Option<usize>> = fact
        .shape
        .dims()
        .map(|d| {
            d.concretize()
                .and_then(|d| d.as_i64())
                .and_then(|d| usize::try_from(d).ok())
        })
        .collect();
    let width: usize = item.iter().product();
    let agrees = |want: &[usize]| {
        dims.len() == want.len() + 1
            && dims[1..]
                .iter()
                .zip(want)
                .all(|(d, w)| d.is_none_or(|d| d == *w))
    };
    let mut with_one = vec![1];
    with_one.extend(&item);
    if dims.len() == 2 && dims[1].is_none_or(|w| w == width) {
        Ok(vec![Feed::Matrix { datum, width }])
    } else if agrees(&item) {
        Ok(vec![Feed::Tensor { datum, item }])
    } else if agrees(&with_one) {
        Ok(vec![Feed::Tensor {
            datum,
            item: with_one,
        }])
    } else {
        let theirs: Vec<String> = dims
            .iter()
            .map(|d| d.map_or("?".into(), |d| d.to_string()))
            .collect();
        Err(format!(
            "the graph's input `{name}` is [{}], but {describe_width} gives [N, {}] (or \
             [N, {width}] flat)",
            theirs.join(", "),
            item.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// `model` with its inputs fixed to `rows` rows of the feeds' types and widths.
pub fn with_rows(
    mut model: InferenceModel,
    feeds: &[Feed],
    rows: TDim,
) -> TractResult<InferenceModel> {
    for (i, f) in feeds.iter().enumerate() {
        let (dt, item) = match f {
            Feed::Matrix { datum, width } => (*datum, vec![*width]),
            Feed::Column { datum, .. } => (*datum, vec![1]),
            Feed::Tensor { datum, item } => (*datum, item.clone()),
        };
        let mut shape = vec![rows.clone()];
        shape.extend(item.iter().map(|d| d.to_dim()));
        model = model.with_input_fact(i, InferenceFact::dt_shape(dt, shape))?;
    }
    Ok(model)
}

/// `x` as an integer input of `datum` takes it: whole, and within what it holds exactly
/// (2^53 for int64, as a JSON number is a double; i32's range for int32).
fn whole(datum: DatumType, x: f64) -> Option<i64> {
    let limit = match datum {
        DatumType::I32 => f64::from(i32::MAX),
        _ => 2f64.powi(53),
    };
    (x.fract() == 0.0 && x.abs() <= limit).then_some(x as i64)
}

impl Feed {
    /// Whether `row` can be fed: a whole number (not missing) where the graph takes integers.
    /// A problem names the feature's position in the row and what is wrong, for a 400 naming
    /// the field; a request never reaches the graph with a value it cannot take.
    pub fn check(&self, row: &[Cell]) -> Result<(), (usize, String)> {
        let (datum, features) = match self {
            Feed::Matrix { datum, width } => (*datum, 0..*width),
            Feed::Column { feature, datum } => (*datum, *feature..*feature + 1),
            Feed::Tensor { .. } => return Ok(()),
        };
        if !matches!(datum, DatumType::I64 | DatumType::I32) {
            return Ok(());
        }
        for at in features {
            match row.get(at) {
                Some(Cell::Number(x)) if whole(datum, *x).is_some() => {}
                Some(Cell::Missing) => {
                    return Err((
                        at,
                        "must be a number: the model takes whole numbers here, and has no way \
                         to fill in a missing one"
                            .into(),
                    ));
                }
                _ => {
                    return Err((
                        at,
                        "must be a whole number (the model takes integers here)".into(),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The tensor of this input for `rows`.
    pub fn tensor(&self, rows: &[&[Cell]]) -> Result<Tensor, String> {
        let (datum, item, cells): (DatumType, &[usize], Vec<&Cell>) = match self {
            Feed::Matrix { datum, width } => (
                *datum,
                std::slice::from_ref(width),
                rows.iter().flat_map(|r| r.iter()).collect(),
            ),
            Feed::Column { feature, datum } => {
                (*datum, &[1], rows.iter().map(|r| &r[*feature]).collect())
            }
            Feed::Tensor { datum, item } => {
                (*datum, item, rows.iter().flat_map(|r| r.iter()).collect())
            }
        };
        let width: usize = item.iter().product();
        if cells.len() != rows.len() * width {
            return Err(format!(
                "{} values for {} rows of {width}",
                cells.len(),
                rows.len()
            ));
        }
        let mut shape = vec![rows.len()];
        shape.extend(item);
        let number = |c: &Cell| match c {
            Cell::Number(x) => Ok(*x),
            Cell::Missing => Ok(f64::NAN),
            Cell::Text(t) => Err(format!("the text {t:?} where the graph takes a number")),
        };
        let integer = |c: &Cell| {
            let x = number(c)?;
            whole(datum, x).ok_or_else(|| format!("{x} where the graph takes a whole number"))
        };
        let tensor = match datum {
            DatumType::F32 => {
                let v: Vec<f32> = cells
                    .iter()
                    .map(|c| number(c).map(|x| x as f32))
                    .collect::<Result<_, _>>()?;
                Tensor::from_shape(&shape, &v)
            }
            DatumType::F64 => {
                let v: Vec<f64> = cells.iter().map(|c| number(c)).collect::<Result<_, _>>()?;
                Tensor::from_shape(&shape, &v)
            }
            DatumType::I64 => {
                let v: Vec<i64> = cells.iter().map(|c| integer(c)).collect::<Result<_, _>>()?;
                Tensor::from_shape(&shape, &v)
            }
            DatumType::I32 => {
                let v: Vec<i32> = cells
                    .iter()
                    .map(|c| integer(c).and_then(|x| i32::try_from(x).map_err(|e| e.to_string())))
                    .collect::<Result<_, _>>()?;
                Tensor::from_shape(&shape, &v)
            }
            _ => {
                let v: Vec<String> = cells
                    .iter()
                    .map(|c| match c {
                        Cell::Text(t) => Ok(t.clone()),
                        other => Err(format!("{other:?} where the graph takes text")),
                    })
                    .collect::<Result<_, _>>()?;
                tract_ndarray::Array2::from_shape_vec([rows.len(), width], v)
                    .map(Tensor::from)
                    .map_err(|e| TractError::msg(e.to_string()))
            }
        };
        tensor.map_err(|e| e.to_string())
    }
}
