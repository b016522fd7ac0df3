//! Tensors as the Open Inference Protocol carries them: a datatype, a shape, and row-major
//! elements, written as a JSON array (flat or nested) or as raw little-endian bytes (Triton's
//! binary tensor data extension; a BYTES element as a 4-byte length and its bytes).

use super::datatype::Datatype;
use super::decimal::as_element;
pub use super::decimal::{widened_f16, widened_f32};
use serde_json::Value;

/// A tensor's elements, row-major. Every number type is read into `Numbers` (an `f64` holds
/// every value a model here takes exactly; INT64 and UINT64 beyond 2^53 are rounded).
#[derive(Debug, Clone, PartialEq)]
pub enum Elements {
    Bool(Vec<bool>),
    Numbers(Vec<f64>),
    Bytes(Vec<Vec<u8>>),
}

impl Elements {
    pub fn len(&self) -> usize {
        match self {
            Self::Bool(v) => v.len(),
            Self::Numbers(v) => v.len(),
            Self::Bytes(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn empty(datatype: Datatype) -> Self {
        match datatype {
            Datatype::Bool => Self::Bool(Vec::new()),
            Datatype::Bytes => Self::Bytes(Vec::new()),
            _ => Self::Numbers(Vec::new()),
        }
    }

    /// Reads the JSON `data` of a tensor: a flat or nested array of elements of `datatype`
    /// (a BYTES element is a string). `Err` says what is wrong, for a 400.
    pub fn from_json(datatype: Datatype, data: &Value) -> Result<Self, String> {
        let mut out = Self::empty(datatype);
        let mut stack = vec![data];
        // Depth-first, left to right: nested arrays read in row-major order.
        while let Some(value) = stack.pop() {
            match value {
                Value::Array(items) => stack.extend(items.iter().rev()),
                scalar => out.push_json(datatype, scalar)?,
            }
        }
        Ok(out)
    }

    fn push_json(&mut self, datatype: Datatype, value: &Value) -> Result<(), String> {
        let wrong = || format!("holds {value}, which is not a {} element", datatype.name());
        match self {
            Self::Bool(v) => v.push(value.as_bool().ok_or_else(wrong)?),
            Self::Bytes(v) => v.push(value.as_str().ok_or_else(wrong)?.as_bytes().to_vec()),
            Self::Numbers(v) => {
                let x = value.as_f64().ok_or_else(wrong)?;
                if !in_range(datatype, x) {
                    return Err(format!(
                        "holds {value}, outside the range of {}",
                        datatype.name()
                    ));
                }
                v.push(as_element(datatype, x));
            }
        }
        Ok(())
    }

    /// Reads `count` elements of `datatype` from raw little-endian bytes.
    pub fn from_binary(datatype: Datatype, bytes: &[u8], count: usize) -> Result<Self, String> {
        let Some(width) = datatype.width() else {
            return read_byte_strings(bytes, count).map(Self::Bytes);
        };
        // Checked: `count * width` can pass `usize` on wasm32 and wrap to the data's length.
        if count.checked_mul(width) != Some(bytes.len()) {
            return Err(format!(
                "has {} bytes of binary data; {count} {} elements take {}",
                bytes.len(),
                datatype.name(),
                count as u128 * width as u128
            ));
        }
        let chunks = bytes.chunks_exact(width);
        Ok(match datatype {
            Datatype::Bool => Self::Bool(bytes.iter().map(|b| *b != 0).collect()),
            _ => Self::Numbers(chunks.map(|c| number_from_le(datatype, c)).collect()),
        })
    }

    /// Writes the elements as raw little-endian bytes of `datatype` (BYTES elements each
    /// after its 4-byte length).
    pub fn to_binary(&self, datatype: Datatype) -> Vec<u8> {
        match self {
            Self::Bool(v) => v.iter().map(|b| u8::from(*b)).collect(),
            Self::Bytes(v) => {
                let mut out = Vec::with_capacity(v.iter().map(|b| b.len() + 4).sum());
                for b in v {
                    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                    out.extend_from_slice(b);
                }
                out
            }
            Self::Numbers(v) => {
                let mut out = Vec::with_capacity(v.len() * datatype.width().unwrap_or(8));
                v.iter().for_each(|x| number_to_le(datatype, *x, &mut out));
                out
            }
        }
    }

    /// The elements as a flat JSON array of `datatype` (a BYTES element as text, its bytes
    /// read as UTF-8 with replacement; an FP32 as its own shortest decimal).
    pub fn to_json(&self, datatype: Datatype) -> Value {
        match self {
            Self::Bool(v) => Value::from(v.clone()),
            Self::Bytes(v) => v
                .iter()
                .map(|b| Value::from(String::from_utf8_lossy(b).into_owned()))
                .collect(),
            Self::Numbers(v) => v.iter().map(|x| number_json(datatype, *x)).collect(),
        }
    }
}

/// A number as JSON in its datatype: integers as integers, an FP32 (or FP16) as the shortest
/// decimal that reads back as that float, an FP64 as itself.
pub fn number_json(datatype: Datatype, x: f64) -> Value {
    match datatype {
        Datatype::Fp16 => Value::from(widened_f16(half::f16::from_f64(x))),
        Datatype::Fp32 => Value::from(widened_f32(x as f32)),
        Datatype::Fp64 => Value::from(x),
        Datatype::Uint8 | Datatype::Uint16 | Datatype::Uint32 | Datatype::Uint64 => {
            Value::from(x as u64)
        }
        _ => Value::from(x as i64),
    }
}

fn in_range(datatype: Datatype, x: f64) -> bool {
    let integer = |min: f64, max: f64| x.fract() == 0.0 && (min..=max).contains(&x);
    match datatype {
        Datatype::Uint8 => integer(0.0, 255.0),
        Datatype::Uint16 => integer(0.0, 65535.0),
        Datatype::Uint32 => integer(0.0, 4294967295.0),
        Datatype::Uint64 => integer(0.0, 18446744073709551615.0),
        Datatype::Int8 => integer(-128.0, 127.0),
        Datatype::Int16 => integer(-32768.0, 32767.0),
        Datatype::Int32 => integer(-2147483648.0, 2147483647.0),
        Datatype::Int64 => integer(-9223372036854775808.0, 9223372036854775807.0),
        Datatype::Fp16 => x.is_nan() || x.abs() <= 65504.0 || x.is_infinite(),
        Datatype::Fp32 => x.is_nan() || x.abs() <= f64::from(f32::MAX) || x.is_infinite(),
        _ => true,
    }
}

fn number_from_le(datatype: Datatype, c: &[u8]) -> f64 {
    let a2 = || [c[0], c[1]];
    let a4 = || [c[0], c[1], c[2], c[3]];
    let a8 = || [c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]];
    match datatype {
        Datatype::Uint8 => f64::from(c[0]),
        Datatype::Int8 => f64::from(c[0] as i8),
        Datatype::Uint16 => f64::from(u16::from_le_bytes(a2())),
        Datatype::Int16 => f64::from(i16::from_le_bytes(a2())),
        Datatype::Fp16 => widened_f16(half::f16::from_le_bytes(a2())),
        Datatype::Uint32 => f64::from(u32::from_le_bytes(a4())),
        Datatype::Int32 => f64::from(i32::from_le_bytes(a4())),
        Datatype::Fp32 => widened_f32(f32::from_le_bytes(a4())),
        Datatype::Uint64 => u64::from_le_bytes(a8()) as f64,
        Datatype::Int64 => i64::from_le_bytes(a8()) as f64,
        Datatype::Fp64 => f64::from_le_bytes(a8()),
        Datatype::Bool | Datatype::Bytes => unreachable!("not a number type"),
    }
}

fn number_to_le(datatype: Datatype, x: f64, out: &mut Vec<u8>) {
    match datatype {
        Datatype::Uint8 => out.push(x as u8),
        Datatype::Int8 => out.push(x as i8 as u8),
        Datatype::Uint16 => out.extend_from_slice(&(x as u16).to_le_bytes()),
        Datatype::Int16 => out.extend_from_slice(&(x as i16).to_le_bytes()),
        Datatype::Fp16 => out.extend_from_slice(&half::f16::from_f64(x).to_le_bytes()),
        Datatype::Uint32 => out.extend_from_slice(&(x as u32).to_le_bytes()),
        Datatype::Int32 => out.extend_from_slice(&(x as i32).to_le_bytes()),
        Datatype::Fp32 => out.extend_from_slice(&(x as f32).to_le_bytes()),
        Datatype::Uint64 => out.extend_from_slice(&(x as u64).to_le_bytes()),
        Datatype::Int64 => out.extend_from_slice(&(x as i64).to_le_bytes()),
        Datatype::Fp64 | Datatype::Bool | Datatype::Bytes => {
            out.extend_from_slice(&x.to_le_bytes())
        }
    }
}

/// `count` BYTES elements, each a 4-byte little-endian length and that many bytes, filling
/// `bytes` exactly.
fn read_byte_strings(mut bytes: &[u8], count: usize) -> Result<Vec<Vec<u8>>, String> {
    let mut out = Vec::with_capacity(count.min(bytes.len() / 4 + 1));
    for i in 0..count {
        let Some((len, rest)) = bytes.split_first_chunk::<4>() else {
            return Err(format!(
                "ends inside the length of BYTES element {i} of {count}"
            ));
        };
        let len = u32::from_le_bytes(*len) as usize;
        if rest.len() < len {
            return Err(format!(
                "BYTES element {i} says {len} bytes, but {} remain",
                rest.len()
            ));
        }
        out.push(rest[..len].to_vec());
        bytes = &rest[len..];
    }
    if !bytes.is_empty() {
        return Err(format!(
            "has {} bytes left after its {count} BYTES elements",
            bytes.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oip::datatype::ALL;
    use serde_json::json;

    #[test]
    fn nested_and_flat_json_read_alike_in_row_major_order() {
        let flat = Elements::from_json(Datatype::Fp32, &json!([1, 2, 3, 4])).unwrap();
        let nested = Elements::from_json(Datatype::Fp32, &json!([[1, 2], [3, 4]])).unwrap();
        assert_eq!(flat, nested);
        assert_eq!(flat, Elements::Numbers(vec![1.0, 2.0, 3.0, 4.0]));
    }

    #[test]
    fn json_elements_of_the_wrong_type_or_range_are_refused() {
        assert!(Elements::from_json(Datatype::Bool, &json!([1])).is_err());
        assert!(Elements::from_json(Datatype::Bytes, &json!([1])).is_err());
        assert!(Elements::from_json(Datatype::Uint8, &json!([256])).is_err());
        assert!(Elements::from_json(Datatype::Int32, &json!([1.5])).is_err());
        assert!(Elements::from_json(Datatype::Fp32, &json!(["1"])).is_err());
        assert!(Elements::from_json(Datatype::Fp32, &json!([1e300])).is_err());
        assert!(Elements::from_json(Datatype::Fp64, &json!([1e300])).is_ok());
    }

    #[test]
    fn every_number_type_survives_binary_and_back() {
        for datatype in ALL.into_iter().filter(|d| d.is_number()) {
            let values = Elements::Numbers(vec![0.0, 1.0, 100.0, 5.5]);
            let values = if matches!(datatype, Datatype::Fp16 | Datatype::Fp32 | Datatype::Fp64) {
                values
            } else {
                Elements::Numbers(vec![0.0, 1.0, 100.0, 5.0])
            };
            let bytes = values.to_binary(datatype);
            assert_eq!(bytes.len(), 4 * datatype.width().unwrap(), "{datatype:?}");
            assert_eq!(
                Elements::from_binary(datatype, &bytes, 4).unwrap(),
                values,
                "{datatype:?}"
            );
        }
    }

    #[test]
    fn an_fp32_reads_as_the_decimal_a_client_wrote() {
        let bytes = 5.1f32.to_le_bytes();
        assert_eq!(
            Elements::from_binary(Datatype::Fp32, &bytes, 1).unwrap(),
            Elements::Numbers(vec![5.1])
        );
        assert_eq!(number_json(Datatype::Fp32, 0.1f32 as f64), json!(0.1));
    }

    #[test]
    fn byte_strings_are_length_prefixed_and_must_fill_the_data() {
        let strings = Elements::Bytes(vec![b"CCO".to_vec(), Vec::new(), vec![0, 255]]);
        let bytes = strings.to_binary(Datatype::Bytes);
        assert_eq!(&bytes[..7], &[3, 0, 0, 0, b'C', b'C', b'O']);
        assert_eq!(
            Elements::from_binary(Datatype::Bytes, &bytes, 3).unwrap(),
            strings
        );
        assert!(Elements::from_binary(Datatype::Bytes, &bytes, 2).is_err());
        assert!(Elements::from_binary(Datatype::Bytes, &bytes, 4).is_err());
        assert!(Elements::from_binary(Datatype::Bytes, &bytes[..5], 1).is_err());
        let lying = [255, 255, 255, 255, 1];
        assert!(Elements::from_binary(Datatype::Bytes, &lying, 1).is_err());
    }

    #[test]
    fn binary_data_of_the_wrong_length_is_refused() {
        assert!(Elements::from_binary(Datatype::Fp32, &[0; 7], 2).is_err());
        assert!(Elements::from_binary(Datatype::Fp64, &[0; 16], 2).is_ok());
    }
}
