//! The console's files, compiled into the component, and how each is answered: its type, a
//! strong `ETag` (so a reload costs a 304, not the file), and headers that keep the page to
//! its own origin.

use guest_kit::http::Response;

pub struct Asset {
    pub name: &'static str,
    pub content_type: &'static str,
    pub body: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $type:expr) => {
        Asset {
            name: $name,
            content_type: $type,
            body: include_bytes!(concat!("../assets/", $name)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

static ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("console.css", "text/css; charset=utf-8"),
    asset!("favicon.svg", "image/svg+xml"),
    asset!("js/app.js", JS),
    asset!("js/api.js", JS),
    asset!("js/dom.js", JS),
    asset!("js/models.js", JS),
    asset!("js/deployments.js", JS),
    asset!("js/results.js", JS),
    asset!("js/structure.js", JS),
    asset!("js/charts.js", JS),
    asset!("js/quality.js", JS),
    asset!("js/traffic.js", JS),
    asset!("js/tryit.js", JS),
    asset!("js/media.js", JS),
    asset!("js/batch.js", JS),
    asset!("js/chats.js", JS),
    asset!("js/ask.js", JS),
];

/// Scripts and styles from this origin only, requests to this origin only, and no framing:
/// chat messages are shown as text, and this makes sure nothing in them could ever run.
/// Pictures and sounds may also come from `data:` (a file read in the page, an inline
/// example) and from http(s) URLs: only so that the Try-it form can show the picture or play
/// the sound at a URL the user typed, or at a URL example the user ran, beside the model's
/// answer (which URL is the user's to say, so no narrower list of hosts fits). Nothing loads
/// from a URL before the user presses a button: the examples list shows a URL example's
/// address as text (media.js `exampleThumbnail`), so a model directory cannot make a visitor's
/// browser fetch anything by being opened. Neither pictures nor sounds can run anything.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data: http: https:; \
     media-src 'self' data: http: https:; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

pub fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

/// FNV-1a over the file: stable across builds of the same file, which is all an ETag needs.
fn etag(body: &[u8]) -> String {
    let hash = body.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("\"{hash:016x}\"")
}

/// 200 with the file (no body for HEAD), or 304 when the client's copy is current.
pub fn respond(asset: &Asset, if_none_match: Option<&str>, head: bool) -> Response {
    let tag = etag(asset.body);
    let current =
        if_none_match.is_some_and(|v| v.split(',').any(|t| t.trim() == tag || t.trim() == "*"));
    let status = if current { 304 } else { 200 };
    let body = if current || head {
        Vec::new()
    } else {
        asset.body.to_vec()
    };
    let mut builder = Response::builder();
    builder
        .status(status)
        .header("content-type", asset.content_type)
        .header("etag", tag)
        // Revalidate every time: a new build must show at once, and a 304 is cheap.
        .header("cache-control", "no-cache")
        .header("x-content-type-options", "nosniff")
        .header("referrer-policy", "no-referrer")
        .header("content-security-policy", CONTENT_SECURITY_POLICY);
    builder.body(body).build()
}
