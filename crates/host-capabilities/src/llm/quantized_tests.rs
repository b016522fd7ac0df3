//! The block kernels against plain arithmetic, and a product of several rows against each row.

use super::*;
use rand::{Rng, SeedableRng};

fn random_blocks(kind: Kind, blocks: usize, rng: &mut impl Rng) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..blocks {
        out.extend(f16::from_f32(rng.random_range(0.001..0.1)).to_le_bytes());
        match kind {
            Kind::Q4_1 => {
                out.extend(f16::from_f32(rng.random_range(-0.5..0.5)).to_le_bytes());
                out.extend((0..16).map(|_| rng.random::<u8>()));
            }
            Kind::Q8_0 => out.extend((0..32).map(|_| rng.random_range(-127i8..=127) as u8)),
        }
    }
    out
}

fn dequantize(kind: Kind, w: &[u8]) -> Vec<f64> {
    let mut out = Vec::new();
    match kind {
        Kind::Q4_1 => {
            for b in w.chunks_exact(Q4_1_BYTES) {
                let (d, m) = (half_at(b, 0) as f64, half_at(b, 2) as f64);
                out.extend((0..16).map(|e| (b[4 + e] & 0xF) as f64 * d + m));
                out.extend((0..16).map(|e| (b[4 + e] >> 4) as f64 * d + m));
            }
        }
        Kind::Q8_0 => {
            for b in w.chunks_exact(Q8_0_BYTES) {
                out.extend((0..32).map(|e| b[2 + e] as i8 as f64 * half_at(b, 0) as f64));
            }
        }
    }
    out
}

#[test]
fn both_kernels_give_the_dequantized_product_to_float_precision() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    for kind in [Kind::Q4_1, Kind::Q8_0] {
        for _ in 0..200 {
            let blocks = 18;
            let w = random_blocks(kind, blocks, &mut rng);
            let x: Vec<f32> = (0..blocks * BLOCK)
                .map(|_| rng.random_range(-3.0..3.0))
                .collect();
            let sums: Vec<f32> = x.chunks_exact(BLOCK).map(|b| b.iter().sum()).collect();
            let exact: f64 = dequantize(kind, &w)
                .iter()
                .zip(&x)
                .map(|(w, x)| w * *x as f64)
                .sum();
            let size: f64 = dequantize(kind, &w)
                .iter()
                .zip(&x)
                .map(|(w, x)| (w * *x as f64).abs())
                .sum();
            let portable = match kind {
                Kind::Q4_1 => portable::dot_q4_1(&w, &x, &sums),
                Kind::Q8_0 => portable::dot_q8_0(&w, &x),
            };
            for got in [portable, dot(kind, &w, &x, &sums)] {
                assert!(
                    (got as f64 - exact).abs() <= size * 1e-6,
                    "{kind:?}: {got} vs {exact}"
                );
            }
        }
    }
}

#[test]
fn a_product_of_several_rows_is_each_row_alone() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let (n, k) = (70, 64);
    let bytes = random_blocks(Kind::Q4_1, n * k / BLOCK, &mut rng);
    let tensor = QTensor::new(
        candle_core::quantized::QStorage::from_data(
            std::borrow::Cow::Owned(bytes),
            &Device::Cpu,
            GgmlDType::Q4_1,
        )
        .unwrap(),
        (n, k),
    )
    .unwrap();
    let matrix = QuantMatrix::new(Arc::new(tensor)).unwrap();
    // Expanded for a prompt, the weights are candle's own expansion, value for value.
    let ours = matrix
        .expanded()
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f32>()
        .unwrap();
    let candle = matrix
        .tensor
        .dequantize(&Device::Cpu)
        .unwrap()
        .flatten_all()
        .unwrap();
    assert_eq!(ours, candle.to_vec1::<f32>().unwrap());
    let x: Vec<f32> = (0..3 * k).map(|_| rng.random_range(-1.0..1.0)).collect();
    let all = matrix
        .forward(&Tensor::from_vec(x.clone(), (3, k), &Device::Cpu).unwrap())
        .unwrap();
    for i in 0..3 {
        let one = Tensor::from_vec(x[i * k..(i + 1) * k].to_vec(), (1, k), &Device::Cpu).unwrap();
        let alone = matrix.forward(&one).unwrap().to_vec2::<f32>().unwrap();
        assert_eq!(all.to_vec2::<f32>().unwrap()[i], alone[0]);
    }
}
