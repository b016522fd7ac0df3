//! Writes an HTML page of drawings of the SMILES given as arguments (or read from a file
//! with `--file F`), to look at them in a browser: `cargo run -p chem --example depict_debug`.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut page =
        String::from("<!doctype html><body style=\"display:flex;flex-wrap:wrap;gap:8px\">");
    for s in &args {
        match chem::smiles::parse(s) {
            Ok(mol) => page.push_str(&format!(
                "<figure style=\"border:1px solid #ccc;margin:0\">{}<figcaption style=\"font:10px sans-serif;max-width:300px;word-break:break-all\">{}</figcaption></figure>",
                chem::depict::to_svg(&mol, s),
                chem::depict::svg::escape(s)
            )),
            Err(e) => eprintln!("{s}: {e}"),
        }
    }
    page.push_str("</body>");
    print!("{page}");
}
