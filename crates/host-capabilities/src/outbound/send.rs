//! Where every outgoing request of an instance goes: checked against the component's rules,
//! then sent by wasmtime-wasi-http's own client, to an address that was checked.

use super::Outbound;
use super::address::{canonical, restricted};
use super::rules::default_port;
use http_body_util::BodyExt;
use hyper::http::{Request, Uri};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

/// How long a host name may take to resolve when the guest set no connect timeout.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

type Sent = Result<
    (
        hyper::Response<WasiBody>,
        Box<dyn Future<Output = Result<(), Error>> + Send>,
    ),
    Error,
>;

impl WasiHttpHooks for Outbound {
    fn send_request(
        &mut self,
        request: Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<dyn Future<Output = Sent> + Send> {
        let grant = self.clone();
        Box::new(async move {
            let request = grant.checked(request, options).await?;
            let (response, io) = wasmtime_wasi_http::default_send_request(request, options).await?;
            let io: Box<dyn Future<Output = Result<(), Error>> + Send> = Box::new(io);
            Ok((response.map(BodyExt::boxed_unsync), io))
        })
    }
}

impl Outbound {
    /// `request` if the rules admit it, aimed at an address that was checked; else the
    /// refusal ([`Outbound::deny`]).
    ///
    /// A host name is resolved here and each of its addresses checked. A plain `http`
    /// request then goes to the first admitted address itself (its `Host` header keeps the
    /// name), so a second resolution cannot hand the client another address (DNS
    /// rebinding). An `https` request keeps its name, which the client resolves again and
    /// may connect to any address of: so it is refused when any address the name resolves
    /// to here is refused, and beyond that its TLS handshake verifies the server's
    /// certificate against the name, which a service on a refused address (this machine, the
    /// private network) cannot present. A name that changes its answers between the two
    /// resolutions can still bring a connection and a ClientHello (no request) to one.
    async fn checked(
        &self,
        mut request: Request<WasiBody>,
        options: Option<RequestOptions>,
    ) -> Result<Request<WasiBody>, Error> {
        let uri = request.uri().clone();
        let scheme = uri.scheme_str().unwrap_or("https").to_ascii_lowercase();
        let authority = uri.authority().ok_or(Error::HttpRequestUriInvalid)?;
        // Host and port only: the authority may carry `user:password@`, which is no log's.
        let shown = &match authority.port_u16() {
            Some(port) => format!("{}:{port}", authority.host()),
            None => authority.host().to_owned(),
        };
        if self.is_none() {
            return Err(self.deny(shown, "the component is allowed no outbound hosts"));
        }
        let port = authority
            .port_u16()
            .or_else(|| default_port(&scheme))
            .ok_or(Error::HttpRequestUriInvalid)?;
        let host = authority.host();
        let literal = host.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
        if let Ok(ip) = literal.unwrap_or(host).parse::<IpAddr>() {
            let ip = canonical(ip);
            return match self.refusal(&scheme, ip, port, None) {
                Some(why) => Err(self.deny(shown, &why)),
                None => Ok(request),
            };
        }
        let name = host.to_ascii_lowercase();
        let name = name.strip_suffix('.').unwrap_or(&name);
        if !self.hosts.admits_name(&scheme, name, port) {
            return Err(self.deny(shown, "no allowed outbound host admits it"));
        }
        let wait = options
            .and_then(|o| o.connect_timeout)
            .unwrap_or(RESOLVE_TIMEOUT);
        let resolved = match tokio::time::timeout(wait, tokio::net::lookup_host((name, port))).await
        {
            Err(_) => return Err(Error::DnsTimeout),
            Ok(Err(e)) => {
                return Err(Error::DnsError {
                    rcode: Some(e.to_string()),
                    info_code: None,
                });
            }
            Ok(Ok(addrs)) => addrs.map(|a| canonical(a.ip())).collect::<Vec<_>>(),
        };
        let mut refused = None;
        let admitted = resolved.iter().copied().find(|ip| {
            match self.refusal(&scheme, *ip, port, Some(name)) {
                Some(why) => {
                    refused.get_or_insert(why);
                    false
                }
                None => true,
            }
        });
        let Some(ip) = admitted else {
            let why = refused.unwrap_or_else(|| format!("{name} resolves to no address"));
            return Err(self.deny(shown, &why));
        };
        if scheme != "http"
            && let Some(why) = resolved
                .iter()
                .find_map(|ip| self.refusal(&scheme, *ip, port, Some(name)))
        {
            return Err(self.deny(shown, &why));
        }
        if scheme == "http" {
            let pinned = Uri::builder()
                .scheme("http")
                .authority(SocketAddr::new(ip, port).to_string())
                .path_and_query(uri.path_and_query().map_or("/", |p| p.as_str()))
                .build()
                .map_err(|_| Error::HttpRequestUriInvalid)?;
            *request.uri_mut() = pinned;
        }
        Ok(request)
    }

    /// Why address `ip` is refused at `scheme` and `port`, if it is; `via` is the host name
    /// it was resolved from (whose rule already admitted it), `None` for an address written
    /// in the URL.
    fn refusal(&self, scheme: &str, ip: IpAddr, port: u16, via: Option<&str>) -> Option<String> {
        let to = match via {
            Some(name) => format!("{name} resolves to"),
            None => "it is".to_owned(),
        };
        match restricted(ip) {
            Some(kind) if !self.hosts.names_exactly(scheme, ip, port) => Some(format!(
                "{to} {kind} address {ip}, reached only where allowed_outbound_hosts names \
                 {scheme}://{} itself",
                SocketAddr::new(ip, port)
            )),
            Some(_) => None,
            None if via.is_some() || self.hosts.admits_address(scheme, ip, port) => None,
            None => Some("no allowed outbound host admits it".to_owned()),
        }
    }
}
