//! Numbers as clients meant them: a float element read as the shortest decimal that gives
//! the same float, so an FP32 `0.1` (or an FP16 one) reaches the model as `0.1`, whichever
//! encoding carried it, and the answer equals `/predict`'s for the decimals a user wrote.

use super::datatype::Datatype;

/// `x` as the `f64` its shortest decimal reads as (`0.1f32` as `0.1`, not
/// `0.10000000149011612`): what a JSON client wrote for it.
pub fn widened_f32(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(f64::from(x))
}

/// A JSON number as an element of `datatype`: an FP16 or FP32 rounded to that precision and
/// read as its shortest decimal, as the same element in binary is. A numpy client writes an
/// FP32 `0.1` in JSON as `0.10000000149011612` and sends `0.1f32` in binary: both must reach
/// the model as `0.1`, or JSON and binary requests would get different answers.
pub(super) fn as_element(datatype: Datatype, x: f64) -> f64 {
    match datatype {
        Datatype::Fp16 => widened_f16(half::f16::from_f64(x)),
        Datatype::Fp32 => widened_f32(x as f32),
        _ => x,
    }
}

/// `x` as the `f64` of the shortest decimal that reads back as the same FP16 (`0.1`, not
/// `0.0999755859375`), as [`widened_f32`] does for an FP32. Five significant digits always
/// suffice for a half. Compared bit for bit, so a negative zero stays one.
pub fn widened_f16(x: half::f16) -> f64 {
    let exact = f64::from(x);
    if !x.is_finite() {
        return exact;
    }
    (0..5)
        .filter_map(|digits| format!("{exact:.digits$e}").parse::<f64>().ok())
        .find(|y| half::f16::from_f64(*y).to_bits() == x.to_bits())
        .unwrap_or(exact)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_half_reads_as_its_shortest_decimal_and_keeps_its_value() {
        let half = |x: f64| half::f16::from_f64(x);
        assert_eq!(widened_f16(half(0.1)), 0.1);
        assert_eq!(widened_f16(half(1000.7)), 1000.5);
        assert_eq!(widened_f16(half(-65504.0)), -65500.0);
        assert!(widened_f16(half(-0.0)).is_sign_negative());
        assert!(widened_f16(half::f16::NAN).is_nan());
        for bits in 0..=u16::MAX {
            let x = half::f16::from_bits(bits);
            if x.is_finite() {
                assert_eq!(half(widened_f16(x)).to_bits(), bits, "{bits:#x}");
            }
        }
    }
}
