//! A component Winch cannot compile: its one route runs a relaxed-SIMD instruction
//! (`f32x4.relaxed_madd`), a proposal wasmtime 48's Winch refuses and Cranelift compiles.
//! The host must serve it from Cranelift's code and say why (`tests/tests/host/tiers.rs`).
//!
//! `GET /?x=N` answers `{"madd": N * 2 + 1}`, computed by that instruction on N taken from
//! the request, so the compiler cannot leave it out.

use core::arch::wasm32::{f32x4, f32x4_extract_lane, f32x4_relaxed_madd, f32x4_splat};
use spin_sdk::http::{Request, Response};
use spin_sdk::http_component;

#[http_component]
fn handle(req: Request) -> Response {
    let x = req
        .query()
        .split('&')
        .find_map(|pair| pair.strip_prefix("x="))
        .and_then(|x| x.parse::<f32>().ok());
    let Some(x) = x else {
        return json(
            400,
            r#"{"error":"bad_request","message":"give ?x=<number>"}"#.into(),
        );
    };
    json(200, format!(r#"{{"madd":{}}}"#, madd(x)))
}

/// `x * 2 + 1` by relaxed SIMD.
fn madd(x: f32) -> f32 {
    #[target_feature(enable = "relaxed-simd")]
    fn lane(x: f32) -> f32 {
        let sum = f32x4_relaxed_madd(f32x4_splat(x), f32x4(2.0, 2.0, 2.0, 2.0), f32x4_splat(1.0));
        f32x4_extract_lane::<0>(sum)
    }
    // Safe to call on WebAssembly: a host without relaxed SIMD refuses the whole component
    // when it validates it, so this never runs where the instruction is missing.
    lane(x)
}

fn json(status: u16, body: String) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(body)
        .build()
}
