//! What a deployment's instance pool reports to a scrape.

/// A deployment's instance pool as it is now (`InstancePool::stats`), as a scrape reads it:
/// instances alive and idle, requests waiting for one, instances made, requests served by an
/// instance that had served before, and whether its code is baseline code.
#[derive(Clone, Copy)]
pub struct PoolFigures {
    pub live: i64,
    pub idle: i64,
    pub waiting: i64,
    pub created: u64,
    pub reused: u64,
    pub baseline: bool,
}

impl PoolFigures {
    /// The figures of a deployment's newest server with those of an older one that drains
    /// beside it (an upgrade): instances and requests add up; the code is the newest's.
    pub fn with_draining(self, old: PoolFigures) -> PoolFigures {
        PoolFigures {
            live: self.live + old.live,
            idle: self.idle + old.idle,
            waiting: self.waiting + old.waiting,
            created: self.created + old.created,
            reused: self.reused + old.reused,
            baseline: self.baseline,
        }
    }
}
