//! Who is calling, and what they may do with a registration (docs/DECISIONS.md "Registry
//! ownership").
//!
//! The native host tells the registry who sent a request in the [`HEADER`] header, vouched
//! for by the secret it also passes as `registry_maintenance_token` (it removes any such
//! header a client sends). Without that secret (under Spin) no caller is known, and the
//! rules for unknown callers apply.

use edge_api::error::{ApiError, ErrorCode};

/// The header the native host names the caller in.
pub const HEADER: &str = "runtime-host-caller";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// A process on the registry's machine; `related` holds it, its ancestors and its
    /// descendants.
    Local { related: Vec<u32> },
    /// Another machine, by address.
    Remote(String),
    /// Nobody vouches for the caller.
    Unknown,
}

/// What the host found the `process_id` of a registration to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claimed {
    Alive,
    Dead,
    System,
}

pub struct Identity {
    pub caller: Caller,
    pub claimed: Option<Claimed>,
    /// The user (uid) who made the connection of a registration on this machine, as the
    /// kernel knows the socket's owner: registrations count against that user as well as
    /// the process ([`Identity::user`]).
    pub user: Option<u32>,
}

impl Identity {
    /// The header's value, as the native host writes it: `<secret>; pids=1,2,3`,
    /// `<secret>; remote=ADDR` or `<secret>; unknown`, then `; claimed=alive|dead|system`
    /// when the request names a process, and `; uid=N` when the registering user is known.
    /// [`Identity::parse`] reads it back.
    pub fn header_value(&self, secret: &str) -> String {
        let who = match &self.caller {
            Caller::Local { related } => {
                let pids: Vec<String> = related.iter().map(u32::to_string).collect();
                format!("pids={}", pids.join(","))
            }
            Caller::Remote(addr) => format!("remote={addr}"),
            Caller::Unknown => "unknown".to_owned(),
        };
        let claim = match self.claimed {
            None => "",
            Some(Claimed::Alive) => "; claimed=alive",
            Some(Claimed::Dead) => "; claimed=dead",
            Some(Claimed::System) => "; claimed=system",
        };
        let user = self.user.map(|u| format!("; uid={u}")).unwrap_or_default();
        format!("{secret}; {who}{claim}{user}")
    }

    /// Reads the header's `value`, trusting it only when it carries the host's `secret`.
    pub fn parse(secret: Option<&str>, value: Option<&str>) -> Self {
        let unknown = Self {
            caller: Caller::Unknown,
            claimed: None,
            user: None,
        };
        let (Some(secret), Some(value)) = (secret, value) else {
            return unknown;
        };
        let mut parts = value.split(';').map(str::trim);
        if parts.next() != Some(secret) {
            return unknown;
        }
        let mut id = unknown;
        for part in parts {
            match part.split_once('=') {
                Some(("pids", list)) => {
                    let related = list.split(',').filter_map(|p| p.parse().ok()).collect();
                    id.caller = Caller::Local { related };
                }
                Some(("remote", addr)) => id.caller = Caller::Remote(addr.to_owned()),
                Some(("claimed", "alive")) => id.claimed = Some(Claimed::Alive),
                Some(("claimed", "dead")) => id.claimed = Some(Claimed::Dead),
                Some(("claimed", "system")) => id.claimed = Some(Claimed::System),
                Some(("uid", uid)) => id.user = uid.parse().ok(),
                _ => {}
            }
        }
        id
    }

    /// Whether the caller is process `pid` or related to it on this machine.
    pub fn is_related_to(&self, pid: u32) -> bool {
        matches!(&self.caller, Caller::Local { related } if related.contains(&pid))
    }

    /// Whether the caller may register `process_id`:
    /// - a known local caller: itself, an ancestor (not init) or a descendant;
    /// - anyone else: not init or a kernel thread, and (where the host can tell) a process
    ///   that is running on this machine.
    pub fn may_register(&self, process_id: u32) -> Result<(), ApiError> {
        let refuse = |why: String| Err(ApiError::new(ErrorCode::Forbidden, why));
        match &self.caller {
            Caller::Local { related } if related.contains(&process_id) => Ok(()),
            Caller::Local { related } => refuse(format!(
                "process_id {process_id} is not the calling process ({}), its parent or its \
                 child: a deployment registers its own process",
                related.first().copied().unwrap_or_default()
            )),
            _ if process_id <= 1 => refuse(format!(
                "process_id {process_id} is the system's init process, never a model \
                 deployment's; send the deployment's own process id"
            )),
            _ => match self.claimed {
                Some(Claimed::System) => refuse(format!(
                    "process_id {process_id} is a system process on the registry's machine"
                )),
                Some(Claimed::Dead) => refuse(format!(
                    "process_id {process_id} is not running on the registry's machine"
                )),
                _ => Ok(()),
            },
        }
    }

    /// Which user counts a registration against the per-user limit: `uid:<n>` for a
    /// registering connection of this machine whose owner the host found; `None` elsewhere
    /// (another machine counts as one holder already; under Spin nobody vouches).
    pub fn user(&self) -> Option<String> {
        match self.caller {
            Caller::Remote(_) => None,
            _ => self.user.map(|u| format!("uid:{u}")),
        }
    }

    /// Who counts against the per-process limit: a remote machine as a whole, else the
    /// registered process.
    pub fn holder(&self, process_id: u32) -> String {
        match &self.caller {
            Caller::Remote(addr) => format!("remote:{addr}"),
            _ => format!("pid:{process_id}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(related: &[u32]) -> Identity {
        Identity {
            caller: Caller::Local {
                related: related.to_vec(),
            },
            claimed: None,
            user: None,
        }
    }

    #[test]
    fn what_the_host_writes_the_registry_reads() {
        for id in [
            Identity {
                caller: Caller::Local {
                    related: vec![10, 9],
                },
                claimed: Some(Claimed::Alive),
                user: Some(1000),
            },
            Identity {
                caller: Caller::Remote("10.0.0.2".into()),
                claimed: Some(Claimed::Dead),
                user: None,
            },
            Identity {
                caller: Caller::Unknown,
                claimed: None,
                user: Some(0),
            },
        ] {
            let value = id.header_value("s3");
            let back = Identity::parse(Some("s3"), Some(&value));
            assert_eq!(
                (back.caller, back.claimed, back.user),
                (id.caller, id.claimed, id.user),
                "{value}"
            );
        }
    }

    #[test]
    fn the_header_counts_only_with_the_secret() {
        let value = Some("s3; pids=10,9; claimed=alive");
        let trusted = Identity::parse(Some("s3"), value);
        assert_eq!(
            trusted.caller,
            Caller::Local {
                related: vec![10, 9]
            }
        );
        assert_eq!(trusted.claimed, Some(Claimed::Alive));
        assert_eq!(
            Identity::parse(Some("other"), value).caller,
            Caller::Unknown
        );
        assert_eq!(
            Identity::parse(None, value).caller,
            Caller::Unknown,
            "under Spin"
        );
        let remote = Identity::parse(Some("s3"), Some("s3; remote=10.0.0.2"));
        assert_eq!(remote.caller, Caller::Remote("10.0.0.2".into()));
    }

    #[test]
    fn who_may_register_what() {
        let me = local(&[100, 90, 120]);
        assert!(me.may_register(100).is_ok());
        assert!(me.may_register(90).is_ok(), "the parent");
        assert!(me.may_register(120).is_ok(), "a child");
        assert_eq!(me.may_register(1).unwrap_err().code, ErrorCode::Forbidden);
        assert!(me.may_register(555).is_err(), "a stranger");
        assert!(
            local(&[1]).may_register(1).is_ok(),
            "init itself (a container)"
        );

        let mut remote = Identity {
            caller: Caller::Remote("10.0.0.2".into()),
            claimed: None,
            user: Some(7),
        };
        assert!(remote.may_register(4321).is_ok());
        assert!(remote.may_register(1).is_err());
        remote.claimed = Some(Claimed::Dead);
        assert!(remote.may_register(4321).is_err());
        assert_eq!(remote.holder(4321), "remote:10.0.0.2");
        assert_eq!(me.holder(100), "pid:100");
        assert_eq!(
            remote.user(),
            None,
            "a remote machine is one holder already"
        );
        let mut mine = local(&[100]);
        assert_eq!(mine.user(), None);
        mine.user = Some(1000);
        assert_eq!(mine.user().as_deref(), Some("uid:1000"));
    }
}
