//! `featurize`: the feature vectors a model is trained on, computed by the same code that
//! serves it. Training scripts (`models/*/train.py`) run it so that training and serving
//! never disagree on a feature.
//!
//! Reads one SMILES per line on stdin and writes one tab-separated line per input on stdout:
//! `ok`, the set fingerprint bits (comma-separated indices), then the descriptor values in the
//! order given; or `error` and the reason the SMILES could not be read.
//!
//! ```text
//! featurize --radius 2 --bits 2048 --descriptors logp,mol_weight < smiles.txt
//! ```

use chem::features::Featurizer;
use chem::fingerprint::Morgan;
use std::io::{BufRead, BufWriter, Write};
use std::process::ExitCode;

const USAGE: &str = "usage: featurize [--radius N] [--bits N] [--descriptors a,b,...] < smiles\n\
     --bits 0 leaves the fingerprint out; descriptors: ";

fn parse_args() -> Result<Featurizer, String> {
    let (mut radius, mut bits, mut codes) = (2u32, 2048usize, Vec::<String>::new());
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--radius" => radius = value()?.parse().map_err(|e| format!("--radius: {e}"))?,
            "--bits" => bits = value()?.parse().map_err(|e| format!("--bits: {e}"))?,
            "--descriptors" => {
                codes = value()?
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(str::to_owned)
                    .collect()
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let morgan = (bits > 0).then_some(Morgan { radius, bits });
    Featurizer::new(morgan, &codes)
}

fn main() -> ExitCode {
    let featurizer = match parse_args() {
        Ok(f) => f,
        Err(e) => {
            eprintln!(
                "featurize: {e}\n{USAGE}{}",
                chem::features::descriptor_codes().join(", ")
            );
            return ExitCode::from(2);
        }
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else {
            eprintln!("featurize: stdin is not UTF-8 text");
            return ExitCode::FAILURE;
        };
        let written = match chem::smiles::parse(line.trim()) {
            Ok(mol) => {
                let f = featurizer.features(&mol);
                let bits: Vec<String> = f
                    .fingerprint
                    .iter()
                    .flat_map(|fp| fp.on_bits())
                    .map(|i| i.to_string())
                    .collect();
                let mut fields = vec!["ok".to_owned(), bits.join(",")];
                fields.extend(f.descriptors.iter().map(|x| x.to_string()));
                writeln!(out, "{}", fields.join("\t"))
            }
            Err(e) => writeln!(out, "error\t{e}"),
        };
        if written.is_err() {
            return ExitCode::FAILURE;
        }
    }
    if out.flush().is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
