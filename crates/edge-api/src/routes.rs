//! The routes each interface serves, as data: components dispatch through these tables, and
//! the OpenAPI documents in `docs/openapi/` are tested against them, so a route cannot be
//! added to one without the other noticing.

/// One path an interface serves and the methods it answers there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The path template; `{name}` stands for exactly one path segment.
    pub path: &'static str,
    pub methods: &'static [&'static str],
}

impl Route {
    /// Whether `path` (without query string or trailing slash) fits this template.
    pub fn matches(&self, path: &str) -> bool {
        template_matches(self.path, path)
    }
}

/// Whether `path` fits `template`, where `{name}` stands for exactly one non-empty segment.
pub fn template_matches(template: &str, path: &str) -> bool {
    let mut want = template.split('/');
    let mut got = path.split('/');
    loop {
        match (want.next(), got.next()) {
            (None, None) => return true,
            (Some(w), Some(g)) if w.starts_with('{') && w.ends_with('}') => {
                if g.is_empty() {
                    return false;
                }
            }
            (Some(w), Some(g)) if w == g => {}
            _ => return false,
        }
    }
}

/// The route of `table` that `path` fits.
pub fn find(table: &'static [Route], path: &str) -> Option<&'static Route> {
    table.iter().find(|r| r.matches(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: [Route; 2] = [
        Route {
            path: "/registry",
            methods: &["GET"],
        },
        Route {
            path: "/heartbeat/{port}",
            methods: &["POST"],
        },
    ];

    #[test]
    fn templates_match_one_segment_per_parameter() {
        assert_eq!(find(&TABLE, "/registry").unwrap().path, "/registry");
        assert_eq!(
            find(&TABLE, "/heartbeat/5100").unwrap().path,
            "/heartbeat/{port}"
        );
        for miss in [
            "/heartbeat",
            "/heartbeat/",
            "/heartbeat/1/2",
            "/registry/x",
            "",
            "/",
        ] {
            assert!(find(&TABLE, miss).is_none(), "{miss}");
        }
    }
}
