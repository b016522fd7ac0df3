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

/// `model` with its inputs fixed to `rows` rows of the feeds' types and widths.
pub fn with_rows(
    mut model: InferenceModel,
    feeds: &[Feed],
    rows: TDim,
) -> TractResult<InferenceModel> {
    for (i, f) in feeds.iter().enumerate() {
        let (dt, width) = match f {
            Feed::Matrix { datum, width } => (*datum, *width),
            Feed::Column { datum, .. } => (*datum, 1),
        };
        model = model.with_input_fact(
            i,
            InferenceFact::dt_shape(dt, [rows.clone(), width.to_dim()]),
        )?;
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
        let (datum, width, cells): (DatumType, usize, Vec<&Cell>) = match self {
            Feed::Matrix { datum, width } => {
                (*datum, *width, rows.iter().flat_map(|r| r.iter()).collect())
            }
            Feed::Column { feature, datum } => {
                (*datum, 1, rows.iter().map(|r| &r[*feature]).collect())
            }
        };
        if cells.len() != rows.len() * width {
            return Err(format!(
                "{} values for {} rows of {width}",
                cells.len(),
                rows.len()
            ));
        }
        let shape = [rows.len(), width];
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
                tract_ndarray::Array2::from_shape_vec(shape, v)
                    .map(Tensor::from)
                    .map_err(|e| TractError::msg(e.to_string()))
            }
        };
        tensor.map_err(|e| e.to_string())
    }
}
