//! The protocol's datatypes and their binary form (Triton's binary tensor data extension:
//! little-endian elements, a BYTES element as a 4-byte length and its bytes), enough for
//! the checker to send zeros and to read any answer back as JSON values it can compare.
//! Written apart from the model SDK's codec on purpose: the checker judges servers, ours
//! among them, and a reading of the wire format shared with the server would pass the
//! server's own mistakes. Half-precision floats come from the `half` crate.

use serde_json::{Value, json};

/// The 13 datatypes the protocol names.
pub const DATATYPES: [&str; 13] = [
    "BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64", "FP16",
    "FP32", "FP64", "BYTES",
];

/// Bytes per element; `None` for BYTES (each element says its own length) and for a name
/// that is not a datatype.
pub fn width(datatype: &str) -> Option<usize> {
    Some(match datatype {
        "BOOL" | "UINT8" | "INT8" => 1,
        "UINT16" | "INT16" | "FP16" => 2,
        "UINT32" | "INT32" | "FP32" => 4,
        "UINT64" | "INT64" | "FP64" => 8,
        _ => return None,
    })
}

/// The zero of `datatype` as a JSON element (`false` for BOOL).
pub fn zero(datatype: &str) -> Value {
    match datatype {
        "BOOL" => json!(false),
        "FP16" | "FP32" | "FP64" => json!(0.0),
        _ => json!(0),
    }
}

/// `values` (flat JSON elements of a number or BOOL tensor) in binary form.
pub fn encode(datatype: &str, values: &[Value]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for v in values {
        let f = v
            .as_f64()
            .or_else(|| v.as_bool().map(f64::from))
            .ok_or_else(|| format!("{datatype} element {v} is not a number"))?;
        match datatype {
            "BOOL" | "UINT8" => out.push(f as u8),
            "INT8" => out.push(f as i8 as u8),
            "UINT16" => out.extend((f as u16).to_le_bytes()),
            "INT16" => out.extend((f as i16).to_le_bytes()),
            "UINT32" => out.extend((f as u32).to_le_bytes()),
            "INT32" => out.extend((f as i32).to_le_bytes()),
            "UINT64" => out.extend((f as u64).to_le_bytes()),
            "INT64" => out.extend((f as i64).to_le_bytes()),
            "FP16" => out.extend(half::f16::from_f64(f).to_le_bytes()),
            "FP32" => out.extend((f as f32).to_le_bytes()),
            "FP64" => out.extend(f.to_le_bytes()),
            other => return Err(format!("{other} cannot be sent as numbers")),
        }
    }
    Ok(out)
}

/// The elements of a binary `datatype` tensor, as JSON values (BYTES as text where it is
/// UTF-8, else as an array of byte values).
pub fn decode(datatype: &str, bytes: &[u8]) -> Result<Vec<Value>, String> {
    if datatype == "BYTES" {
        return decode_bytes(bytes);
    }
    let w = width(datatype).ok_or_else(|| format!("unknown datatype {datatype}"))?;
    if !bytes.len().is_multiple_of(w) {
        return Err(format!(
            "{} bytes of {datatype} are not whole {w}-byte elements",
            bytes.len()
        ));
    }
    let value = |c: &[u8]| -> Value {
        let a = |n: usize| -> [u8; 8] {
            let mut b = [0u8; 8];
            b[..n].copy_from_slice(c);
            b
        };
        match datatype {
            "BOOL" => json!(c[0] != 0),
            "UINT8" => json!(c[0]),
            "INT8" => json!(c[0] as i8),
            "UINT16" => json!(u16::from_le_bytes([c[0], c[1]])),
            "INT16" => json!(i16::from_le_bytes([c[0], c[1]])),
            "FP16" => json!(half::f16::from_le_bytes([c[0], c[1]]).to_f64()),
            "UINT32" => json!(u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            "INT32" => json!(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            "FP32" => json!(f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64),
            "UINT64" => json!(u64::from_le_bytes(a(8))),
            "INT64" => json!(i64::from_le_bytes(a(8))),
            _ => json!(f64::from_le_bytes(a(8))),
        }
    };
    Ok(bytes.chunks(w).map(value).collect())
}

fn decode_bytes(mut bytes: &[u8]) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let Some((len, rest)) = bytes.split_first_chunk::<4>() else {
            return Err("a BYTES element's 4-byte length is cut short".into());
        };
        let len = u32::from_le_bytes(*len) as usize;
        if rest.len() < len {
            return Err(format!(
                "a BYTES element says {len} bytes, {} are left",
                rest.len()
            ));
        }
        let (element, rest) = rest.split_at(len);
        out.push(match std::str::from_utf8(element) {
            Ok(text) => json!(text),
            Err(_) => json!(element),
        });
        bytes = rest;
    }
    Ok(out)
}

/// The elements of a JSON tensor's `data`, flat in row-major order (it may be nested).
pub fn flatten(data: &Value) -> Vec<Value> {
    match data {
        Value::Array(items) => items.iter().flat_map(flatten).collect(),
        other => vec![other.clone()],
    }
}

/// Whether two elements are the same value: numbers within what the narrower of JSON's
/// text and `datatype`'s width keeps, anything else exactly.
pub fn same(datatype: &str, a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => {
            let tolerance = match datatype {
                "FP16" => 1e-3,
                "FP32" => 1e-6,
                _ => 1e-12,
            };
            x == y || (x - y).abs() <= tolerance * x.abs().max(y.abs())
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_go_to_binary_and_back() {
        for datatype in DATATYPES.iter().filter(|d| **d != "BYTES") {
            let last = if *datatype == "BOOL" { 1 } else { 3 };
            let values = [json!(0), json!(1), json!(last)];
            let bytes = encode(datatype, &values).unwrap();
            assert_eq!(bytes.len(), 3 * width(datatype).unwrap(), "{datatype}");
            let back = decode(datatype, &bytes).unwrap();
            for (a, b) in values.iter().zip(&back) {
                let b = b.as_bool().map(|t| json!(t as u8)).unwrap_or(b.clone());
                assert!(same(datatype, a, &b), "{datatype}: {a} vs {b}");
            }
        }
        let half = encode("FP16", &[json!(-2.5)]).unwrap();
        assert_eq!(decode("FP16", &half).unwrap(), [json!(-2.5)]);
    }

    #[test]
    fn bytes_elements_carry_their_lengths_and_a_cut_one_is_found() {
        let mut bytes = 2u32.to_le_bytes().to_vec();
        bytes.extend(b"hi");
        bytes.extend(0u32.to_le_bytes());
        assert_eq!(decode("BYTES", &bytes).unwrap(), [json!("hi"), json!("")]);
        assert!(decode("BYTES", &bytes[..5]).is_err());
        assert!(decode("FP32", &[0, 0, 0]).is_err());
    }

    #[test]
    fn nested_data_flattens_row_major() {
        assert_eq!(
            flatten(&json!([[1, 2], [3, 4]])),
            [json!(1), json!(2), json!(3), json!(4)]
        );
    }
}
