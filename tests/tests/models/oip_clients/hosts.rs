//! The clients against both hosts: `runtime-host up` (every model on its own port, and
//! every model again through the app port's `/v2/models/<name>/...`) and the real `spin up`
//! of the project's spin.toml (each model at its base URL, `/models/<name>`).

use super::{MODELS, Target, clients_agree_with_v1, oip_python};
use e2e_tests::Stack;
use e2e_tests::spin::SpinApp;

#[tokio::test(flavor = "multi_thread")]
async fn tritonclient_and_kserve_call_every_model_under_runtime_host_as_v1_2_answers() {
    let Some(python) = oip_python("the protocol's clients under runtime-host") else {
        return;
    };
    let stack = Stack::up(&[], 12);
    let mut targets = Vec::new();
    for model in MODELS {
        let port = stack.model_port(model).await;
        let own = format!("http://127.0.0.1:{port}");
        targets.push(Target {
            label: format!("{model} on its port {port}"),
            model: model.to_string(),
            oip: own.clone(),
            v1: own,
        });
    }
    for model in MODELS {
        targets.push(Target {
            label: format!("{model} at the app port"),
            model: model.to_string(),
            oip: stack.app(""),
            v1: stack.app(&format!("/models/{model}")),
        });
    }
    let compared = clients_agree_with_v1(&python, &targets).await;
    println!("runtime-host: {compared} client answers equal to v1.2's");
}

#[tokio::test(flavor = "multi_thread")]
async fn tritonclient_and_kserve_call_every_model_under_spin_as_v1_2_answers() {
    let Some(python) = oip_python("the protocol's clients under Spin") else {
        return;
    };
    let Some(app) = SpinApp::up("the protocol's clients under Spin", "unused") else {
        return;
    };
    let targets: Vec<Target> = MODELS
        .iter()
        .map(|model| {
            let base = app.url(&format!("/models/{model}"));
            Target {
                label: format!("{model} under Spin"),
                model: model.to_string(),
                oip: base.clone(),
                v1: base,
            }
        })
        .collect();
    let compared = clients_agree_with_v1(&python, &targets).await;
    println!("Spin: {compared} client answers equal to v1.2's");
}
