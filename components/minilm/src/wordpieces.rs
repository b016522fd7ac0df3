//! Counting a text's word pieces exactly as the model's tokenizer will, inside the component.
//!
//! The component decides which texts are too long, not the host: hosts differ (Spin's local
//! engine silently cuts every text at 128 tokens, `runtime-host` refuses above 256, a cloud
//! host may do either), and a request must get the same answer on each. So the component
//! carries the model's vocabulary (`vocab.txt`: the 30,522 WordPiece entries of
//! bert-base-uncased that all-MiniLM-L6-v2 uses, Apache-2.0, in id order) and tokenizes with
//! the tokenizer's own settings: BERT normalization (cleanup, CJK spacing, lowercase, accents
//! stripped), BERT pre-tokenization (whitespace and punctuation), WordPiece with `##`.
//! A test checks the vocabulary against the installed model's `tokenizer.json`.

use std::sync::OnceLock;
use tokenizers::Tokenizer;
use tokenizers::models::wordpiece::WordPiece;
use tokenizers::normalizers::bert::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;

const VOCAB: &[u8] = include_bytes!("../vocab.txt");
/// `[CLS]` before the text and `[SEP]` after it.
const SPECIAL_TOKENS: usize = 2;

/// The tokenizer, built from the vocabulary once per instance (or once before the snapshot,
/// see `model_sdk::preinit!`).
pub fn tokenizer() -> &'static Tokenizer {
    static TOKENIZER: OnceLock<Tokenizer> = OnceLock::new();
    TOKENIZER.get_or_init(|| {
        let vocab = WordPiece::read_bytes(VOCAB).expect("vocab.txt is one entry per line");
        let model = WordPiece::builder()
            .vocab(vocab)
            .unk_token("[UNK]".into())
            .build()
            .expect("vocab.txt holds [UNK]");
        let mut tokenizer = Tokenizer::new(model);
        tokenizer
            .with_normalizer(Some(BertNormalizer::new(true, true, None, true)))
            .expect("no added tokens to normalize yet");
        tokenizer.with_pre_tokenizer(Some(BertPreTokenizer));
        tokenizer
    })
}

/// Tokens the model reads for `text`, `[CLS]` and `[SEP]` included.
pub fn count(text: &str) -> Result<usize, String> {
    tokenizer()
        .encode(text, false)
        .map(|e| e.len() + SPECIAL_TOKENS)
        .map_err(|e| format!("cannot tokenize: {e}"))
}
