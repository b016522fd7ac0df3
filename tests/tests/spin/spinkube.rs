//! `deploy/spinkube/edge-app.yaml` (issue 47 §4) against the SpinApp custom resource's schema
//! and against the app it deploys: every field is one the resource defines, of its type, with
//! what it requires; the secrets it names are in the file with the keys it reads; the runtime
//! config is Spin's, with the stores on Redis; the variables and the health checks' paths are
//! the app's own (`spin.toml`).
//!
//! The schema is the part of `openAPIV3Schema` of `config/crd/bases/core.spinkube.dev_spinapps.yaml`
//! in github.com/spinkube/spin-operator (commit 90d14cc) that the manifest's fields fall under,
//! written out below as JSON; the operator itself is not part of this repository. A field outside
//! it would be pruned by Kubernetes without a word (structural schemas drop unknown fields), so
//! here it is an error.

use e2e_tests::{test_python, workspace_root};
use serde_json::{Value, json};

/// A string for Kubernetes' `x-kubernetes-int-or-string` quantities.
const QUANTITY: &str = "quantity";

/// What the operator's CRD says of the fields the manifest uses (see the module's comment).
fn spinapp_schema() -> Value {
    let secret_ref = json!({"type": "object", "required": ["key"], "properties": {
        "key": {"type": "string"}, "name": {"type": "string"}, "optional": {"type": "boolean"}}});
    let probe = json!({"type": "object", "properties": {
        "httpGet": {"type": "object", "required": ["path"], "properties": {
            "path": {"type": "string"},
            "httpHeaders": {"type": "array", "items": {"type": "object",
                "required": ["name", "value"],
                "properties": {"name": {"type": "string"}, "value": {"type": "string"}}}}}},
        "failureThreshold": {"type": "integer"}, "initialDelaySeconds": {"type": "integer"},
        "periodSeconds": {"type": "integer"}, "successThreshold": {"type": "integer"},
        "timeoutSeconds": {"type": "integer"}}});
    let quantities = json!({"type": "object", "additionalProperties": {"type": QUANTITY}});
    json!({"type": "object", "required": ["apiVersion", "kind", "metadata", "spec"], "properties": {
        "apiVersion": {"type": "string", "enum": ["core.spinkube.dev/v1alpha1"]},
        "kind": {"type": "string", "enum": ["SpinApp"]},
        "metadata": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "namespace": {"type": "string"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}}}},
        "spec": {"type": "object", "required": ["executor", "image"], "properties": {
            "image": {"type": "string"},
            "executor": {"type": "string"},
            "replicas": {"type": "integer"},
            "enableAutoscaling": {"type": "boolean"},
            "components": {"type": "array", "items": {"type": "string"}},
            "runtimeConfig": {"type": "object", "properties": {
                "loadFromSecret": {"type": "string"}}},
            "variables": {"type": "array", "items": {"type": "object", "required": ["name"],
                "properties": {
                    "name": {"type": "string"}, "value": {"type": "string"},
                    "valueFrom": {"type": "object", "properties": {
                        "secretKeyRef": secret_ref.clone(),
                        "configMapKeyRef": secret_ref}}}}},
            "checks": {"type": "object", "properties": {"liveness": probe.clone(), "readiness": probe}},
            "resources": {"type": "object", "properties": {
                "limits": quantities.clone(), "requests": quantities}}}}}})
}

/// Every way `value` at `at` breaks `schema`.
fn check(value: &Value, schema: &Value, at: &str, problems: &mut Vec<String>) {
    let ok = match schema["type"].as_str() {
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        Some("string") => value.is_string(),
        Some("integer") => value.is_i64() || value.is_u64(),
        Some("boolean") => value.is_boolean(),
        Some(QUANTITY) => value.is_u64() || value.as_str().is_some_and(is_quantity),
        other => panic!("the schema names no type this check knows at {at}: {other:?}"),
    };
    if !ok {
        problems.push(format!("{at}: expected {}, got {value}", schema["type"]));
        return;
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        problems.push(format!("{at}: {value} is not one of {allowed:?}"));
    }
    for name in schema["required"].as_array().into_iter().flatten() {
        if value.get(name.as_str().unwrap()).is_none() {
            problems.push(format!("{at}: `{}` is required", name.as_str().unwrap()));
        }
    }
    if let Some(fields) = value.as_object() {
        for (name, v) in fields {
            let at = format!("{at}.{name}");
            match (
                schema["properties"].get(name),
                schema.get("additionalProperties"),
            ) {
                (Some(field), _) | (None, Some(field)) => check(v, field, &at, problems),
                (None, None) => problems.push(format!("{at}: no such field in the SpinApp schema")),
            }
        }
    }
    if let Some(items) = value.as_array() {
        for (i, item) in items.iter().enumerate() {
            check(item, &schema["items"], &format!("{at}[{i}]"), problems);
        }
    }
}

/// Kubernetes' quantity form: a decimal number, then a binary or decimal suffix if any.
fn is_quantity(text: &str) -> bool {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &text[digits.len()..];
    let number = digits.strip_prefix(['+', '-']).unwrap_or(digits);
    let well_formed = !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        && number.matches('.').count() <= 1
        && number != ".";
    let suffixes = [
        "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E",
    ];
    well_formed && suffixes.contains(&suffix)
}

/// The manifest's documents, read by PyYAML (the tests' Python tools).
fn documents() -> Option<Vec<Value>> {
    let venv = test_python("the SpinKube manifest")?;
    let file = workspace_root().join("deploy/spinkube/edge-app.yaml");
    let out = std::process::Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "import json, sys, yaml; json.dump(list(yaml.safe_load_all(open(sys.argv[1]))), sys.stdout)",
        ])
        .arg(&file)
        .output()
        .expect("running the tests' Python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("PyYAML's JSON"))
}

#[test]
fn the_schema_check_finds_what_kubernetes_would_drop_or_refuse() {
    let schema = spinapp_schema();
    let mut problems = Vec::new();
    let wrong = json!({"apiVersion": "core.spinkube.dev/v1alpha1", "kind": "SpinApp",
        "metadata": {"name": "x"},
        "spec": {"image": "r/x:1", "replicas": "2", "runtimeconfig": {},
                 "resources": {"limits": {"memory": "1 GB"}},
                 "variables": [{"value": "v"}]}});
    check(&wrong, &schema, "SpinApp", &mut problems);
    let said = problems.join("\n");
    for expected in [
        "`executor` is required",
        "spec.replicas: expected \"integer\"",
        "spec.runtimeconfig: no such field",
        "spec.resources.limits.memory",
        "spec.variables[0]: `name` is required",
    ] {
        assert!(said.contains(expected), "{expected}:\n{said}");
    }
    assert!(is_quantity("250m") && is_quantity("1Gi") && is_quantity("2"));
    assert!(!is_quantity("1 GB") && !is_quantity("Gi") && !is_quantity("1.2.3"));
}

#[test]
fn the_spinkube_manifest_fits_the_spinapp_schema_and_the_app() {
    let Some(documents) = documents() else {
        return;
    };
    let of_kind =
        |kind: &str| -> Vec<&Value> { documents.iter().filter(|d| d["kind"] == kind).collect() };
    let [app] = of_kind("SpinApp")[..] else {
        panic!("one SpinApp: {documents:?}");
    };
    let mut problems = Vec::new();
    check(app, &spinapp_schema(), "SpinApp", &mut problems);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        app["spec"]["replicas"].as_u64().unwrap() >= 2,
        "replicas share the store"
    );

    let secret = |name: &str, key: &str| -> String {
        let found = of_kind("Secret")
            .into_iter()
            .find(|s| s["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("Secret {name} is not in the file"));
        found["stringData"][key]
            .as_str()
            .unwrap_or_else(|| panic!("Secret {name} has no key {key}"))
            .to_owned()
    };
    // The runtime config: under the one key SpinKube reads, Spin's format, stores on Redis.
    let config_secret = app["spec"]["runtimeConfig"]["loadFromSecret"]
        .as_str()
        .unwrap();
    let config: toml::Table =
        toml::from_str(&secret(config_secret, "runtime-config.toml")).unwrap();
    let default = &config["key_value_store"]["default"];
    assert_eq!(default["type"].as_str(), Some("redis"));
    assert!(default["url"].as_str().unwrap().starts_with("redis://"));

    // Variables are the app's, from secrets in the file; checks probe the app's routes.
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(workspace_root().join("spin.toml")).unwrap())
            .unwrap();
    let declared = manifest["variables"].as_table().unwrap();
    for variable in app["spec"]["variables"].as_array().unwrap() {
        let name = variable["name"].as_str().unwrap();
        assert!(
            declared.contains_key(name),
            "spin.toml declares no variable {name}"
        );
        let from = &variable["valueFrom"]["secretKeyRef"];
        secret(
            from["name"].as_str().unwrap(),
            from["key"].as_str().unwrap(),
        );
    }
    let routes: Vec<&str> = manifest["trigger"]["http"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["route"].as_str().unwrap())
        // The console's catch-all would "serve" any path.
        .filter(|route| *route != "/...")
        .collect();
    for probe in ["liveness", "readiness"] {
        let path = app["spec"]["checks"][probe]["httpGet"]["path"]
            .as_str()
            .unwrap();
        let routed = routes.iter().any(|route| match route.strip_suffix("/...") {
            Some(prefix) => path.starts_with(&format!("{prefix}/")),
            None => path == *route,
        });
        assert!(
            routed,
            "{probe} probes {path}, which no route of spin.toml serves"
        );
    }
}
