//! The OpenAI client the language-model API's tests drive (tests/tests/models/llm_api/): the
//! `openai` Python package in a virtual environment of its own, installed once and kept until
//! its pin changes.

use crate::python_env;
use std::path::Path;

/// Where the client is installed, and its pin.
const VENV: &str = "target/test-python-openai";
const REQUIREMENTS: &str = "tests/python/openai-requirements.txt";

/// Makes sure the client is here; `false` (announced loudly, naming the tests skipped) when
/// it cannot be.
pub fn ensure(root: &Path) -> bool {
    let made = python_env::pinned(root, VENV, REQUIREMENTS, "bin/python", "the OpenAI client");
    let Err(why) = made else { return true };
    eprintln!(
        "\nxtask: ************************************************************\n\
         xtask: SKIPPING the OpenAI client's tests (tests/tests/models/llm_api/): {why}\n\
         xtask: ************************************************************\n"
    );
    false
}
