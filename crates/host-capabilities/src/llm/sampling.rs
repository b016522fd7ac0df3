//! Choosing the next token from the network's logits, with every parameter of Spin's
//! `inferencing-params`, in llama.cpp's order: the repeat penalty on recent tokens, then top-k,
//! then the temperature, then top-p (nucleus), then a draw. A temperature of 0 is greedy
//! decoding: the most likely token, no randomness.

use rand::Rng;

/// Spin's `inferencing-params`, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub max_tokens: u32,
    pub repeat_penalty: f32,
    pub repeat_penalty_last_n: u32,
    pub temperature: f32,
    pub top_k: u32,
    pub top_p: f32,
}

impl Default for Params {
    /// Spin's defaults for a call that gives none (`factor-llm`'s host, Spin 4.0.2).
    fn default() -> Self {
        Self {
            max_tokens: 100,
            repeat_penalty: 1.1,
            repeat_penalty_last_n: 64,
            temperature: 0.8,
            top_k: 40,
            top_p: 0.9,
        }
    }
}

impl Params {
    /// Refuses values that have no meaning; `max_tokens` is checked against the model's limits
    /// where the prompt is known.
    pub fn check(&self) -> Result<(), String> {
        let finite = |v: f32, name: &str| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(format!("{name} must be a finite number"))
            }
        };
        finite(self.temperature, "temperature")?;
        finite(self.top_p, "top-p")?;
        finite(self.repeat_penalty, "repeat-penalty")?;
        if self.temperature < 0.0 {
            return Err(format!(
                "temperature {} is negative; 0 is greedy decoding",
                self.temperature
            ));
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            return Err(format!("top-p {} is outside (0, 1]", self.top_p));
        }
        if self.repeat_penalty <= 0.0 {
            return Err(format!(
                "repeat-penalty {} must be above 0 (1 is none)",
                self.repeat_penalty
            ));
        }
        Ok(())
    }
}

/// The next token after `logits`, given the tokens so far (`history`, prompt included).
pub fn next_token(logits: &mut [f32], history: &[u32], params: &Params, rng: &mut impl Rng) -> u32 {
    penalize_repeats(logits, history, params);
    if params.temperature == 0.0 {
        return super::llama::argmax(logits);
    }
    let mut candidates: Vec<(u32, f32)> = logits
        .iter()
        .enumerate()
        .map(|(i, &l)| (i as u32, l))
        .collect();
    let by_logit = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1);
    let k = match params.top_k {
        0 => candidates.len(),
        k => (k as usize).min(candidates.len()),
    };
    if k < candidates.len() {
        candidates.select_nth_unstable_by(k - 1, by_logit);
        candidates.truncate(k);
    }
    candidates.sort_unstable_by(by_logit);
    // Softmax at the temperature, from the largest logit (no overflow).
    let top = candidates[0].1;
    let mut total = 0.0f64;
    for c in candidates.iter_mut() {
        c.1 = (((c.1 - top) / params.temperature) as f64).exp() as f32;
        total += c.1 as f64;
    }
    // The smallest set of most likely tokens whose probability reaches top-p.
    let mut kept = 0.0f64;
    let mut keep = candidates.len();
    for (i, c) in candidates.iter().enumerate() {
        kept += c.1 as f64 / total;
        if kept >= params.top_p as f64 {
            keep = i + 1;
            break;
        }
    }
    candidates.truncate(keep);
    let total: f64 = candidates.iter().map(|c| c.1 as f64).sum();
    let mut draw = rng.random::<f64>() * total;
    for c in &candidates {
        draw -= c.1 as f64;
        if draw <= 0.0 {
            return c.0;
        }
    }
    candidates[candidates.len() - 1].0
}

/// llama.cpp's repeat penalty: each distinct token among the last `n` has its logit divided by
/// the penalty when positive, multiplied when negative (less likely either way).
fn penalize_repeats(logits: &mut [f32], history: &[u32], params: &Params) {
    if params.repeat_penalty == 1.0 || params.repeat_penalty_last_n == 0 {
        return;
    }
    let recent = &history[history
        .len()
        .saturating_sub(params.repeat_penalty_last_n as usize)..];
    let mut seen = recent.to_vec();
    seen.sort_unstable();
    seen.dedup();
    for id in seen {
        if let Some(l) = logits.get_mut(id as usize) {
            *l = if *l > 0.0 {
                *l / params.repeat_penalty
            } else {
                *l * params.repeat_penalty
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn params(temperature: f32, top_k: u32, top_p: f32) -> Params {
        Params {
            temperature,
            top_k,
            top_p,
            repeat_penalty: 1.0,
            ..Params::default()
        }
    }

    #[test]
    fn temperature_zero_is_the_most_likely_token() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let mut logits = vec![0.1, 3.0, 2.9, -1.0];
        assert_eq!(
            next_token(&mut logits, &[], &params(0.0, 40, 0.9), &mut rng),
            1
        );
    }

    #[test]
    fn top_k_one_and_a_tiny_top_p_leave_one_choice() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..50 {
            let mut logits = vec![0.0, 1.0, 5.0, 4.9];
            assert_eq!(
                next_token(&mut logits, &[], &params(1.5, 1, 1.0), &mut rng),
                2
            );
            let mut logits = vec![0.0, 1.0, 5.0, 4.9];
            assert_eq!(
                next_token(&mut logits, &[], &params(1.5, 0, 0.01), &mut rng),
                2
            );
        }
    }

    #[test]
    fn a_draw_follows_the_probabilities() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let mut counts = [0usize; 2];
        for _ in 0..4000 {
            // Logits ln(3) and 0: probabilities 3/4 and 1/4 at temperature 1.
            let mut logits = vec![3f32.ln(), 0.0];
            counts[next_token(&mut logits, &[], &params(1.0, 0, 1.0), &mut rng) as usize] += 1;
        }
        let share = counts[0] as f64 / 4000.0;
        assert!((share - 0.75).abs() < 0.03, "{share}");
    }

    #[test]
    fn the_repeat_penalty_turns_greedy_away_from_a_recent_token() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let p = Params {
            temperature: 0.0,
            repeat_penalty: 1.5,
            repeat_penalty_last_n: 2,
            ..Params::default()
        };
        let mut logits = vec![2.0, 1.8, -1.0];
        assert_eq!(next_token(&mut logits, &[0], &p, &mut rng), 1);
        assert!((logits[0] - 2.0 / 1.5).abs() < 1e-6);
        // Outside the last n tokens, no penalty.
        let mut logits = vec![2.0, 1.8, -1.0];
        assert_eq!(next_token(&mut logits, &[0, 2, 2], &p, &mut rng), 0);
        assert!(
            (logits[2] + 1.5).abs() < 1e-6,
            "negative logits are multiplied"
        );
    }

    #[test]
    fn meaningless_values_are_refused() {
        for bad in [
            Params {
                temperature: -1.0,
                ..Params::default()
            },
            Params {
                temperature: f32::NAN,
                ..Params::default()
            },
            Params {
                top_p: 0.0,
                ..Params::default()
            },
            Params {
                top_p: 1.5,
                ..Params::default()
            },
            Params {
                repeat_penalty: 0.0,
                ..Params::default()
            },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
        assert!(Params::default().check().is_ok());
    }
}
