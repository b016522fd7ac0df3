//! Prints the Wildman-Crippen atom type of every atom (hydrogens last, in order of their heavy
//! atom) for each SMILES on standard input: `SMILES<TAB>type type ...`. A diagnostic for
//! comparing with other implementations.

use std::io::BufRead;

fn main() {
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let smiles = line.trim();
        match chem::smiles::parse(smiles) {
            Ok(m) => {
                let types: Vec<&str> = chem::crippen::atom_types(&m)
                    .into_iter()
                    .map(|t| t.unwrap_or("?"))
                    .collect();
                println!("{smiles}\t{}", types.join(" "));
            }
            Err(e) => println!("{smiles}\terror: {e}"),
        }
    }
}
