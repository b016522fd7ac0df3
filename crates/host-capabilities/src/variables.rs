//! Application variables, given to components through `wasi:config/store` the way Spin does:
//! from `SPIN_VARIABLE_<NAME>` in the environment, overridden by `--variable name=value`.

use crate::bindings::wasi::config::store;
use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::sync::Arc;
use wasmtime::component::{HasData, Linker};

/// Prefix Spin's environment-variable provider reads.
const ENV_PREFIX: &str = "SPIN_VARIABLE_";

#[derive(Debug, Clone, Default)]
pub struct Variables {
    values: Arc<BTreeMap<String, String>>,
}

/// Spin's rule: lower-case ASCII letters, digits and underscores, starting with a letter.
pub fn validate_name(name: &str) -> Result<()> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        bail!(
            "invalid variable name `{name}`: use lower-case letters, digits and underscores, starting with a letter"
        );
    }
    Ok(())
}

impl Variables {
    /// Collects variables from `env` (pairs of name and value) and `assignments`
    /// (`name=value`, taking precedence).
    pub fn from_sources<I>(env: I, assignments: &[String]) -> Result<Self>
    where
        I: IntoIterator<Item = (String, String)>,
    {
        let mut values = BTreeMap::new();
        for (k, v) in env {
            if let Some(name) = k.strip_prefix(ENV_PREFIX) {
                let name = name.to_ascii_lowercase();
                if validate_name(&name).is_ok() {
                    values.insert(name, v);
                }
            }
        }
        for a in assignments {
            let Some((name, value)) = a.split_once('=') else {
                bail!("`--variable {a}` must be of the form name=value");
            };
            validate_name(name)?;
            values.insert(name.to_owned(), value.to_owned());
        }
        Ok(Self {
            values: Arc::new(values),
        })
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Names (never values: some are secrets), for the startup log.
    pub fn names(&self) -> Vec<&str> {
        self.values.keys().map(String::as_str).collect()
    }
}

pub struct ConfigCtx<'a>(pub &'a Variables);

struct ConfigData;
impl HasData for ConfigData {
    type Data<'a> = ConfigCtx<'a>;
}

pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> ConfigCtx<'_>,
) -> wasmtime::Result<()> {
    store::add_to_linker::<T, ConfigData>(linker, get)
}

impl store::Host for ConfigCtx<'_> {
    fn get(&mut self, key: String) -> wasmtime::Result<Result<Option<String>, store::Error>> {
        Ok(Ok(self.0.get(&key).map(str::to_owned)))
    }

    fn get_all(&mut self) -> wasmtime::Result<Result<Vec<(String, String)>, store::Error>> {
        Ok(Ok(self
            .0
            .values
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_environment() {
        let env = vec![
            (
                "SPIN_VARIABLE_CHAT_ADMIN_TOKEN".to_owned(),
                "from-env".to_owned(),
            ),
            ("SPIN_VARIABLE_OTHER".to_owned(), "x".to_owned()),
            ("PATH".to_owned(), "/bin".to_owned()),
        ];
        let v = Variables::from_sources(env, &["chat_admin_token=from-flag".into()]).unwrap();
        assert_eq!(v.get("chat_admin_token"), Some("from-flag"));
        assert_eq!(v.get("other"), Some("x"));
        assert_eq!(v.get("path"), None);
    }

    #[test]
    fn bad_assignments_are_refused() {
        assert!(Variables::from_sources(vec![], &["novalue".into()]).is_err());
        assert!(Variables::from_sources(vec![], &["Bad-Name=1".into()]).is_err());
        let v = Variables::from_sources(vec![], &["empty=".into(), "eq=a=b".into()]).unwrap();
        assert_eq!(v.get("empty"), Some(""));
        assert_eq!(v.get("eq"), Some("a=b"));
    }
}
