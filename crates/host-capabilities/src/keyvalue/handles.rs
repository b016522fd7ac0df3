//! The resources `wasi:keyvalue` hands a component, as the host keeps them in an instance's
//! resource table. Apart from the binding ([`super`]) because the generated bindings
//! (`capabilities::bindings`, see build.rs) name these types, and the binding uses those.

use keyvalue_stores::store::Cas;

/// An open bucket: the label it stands for.
pub struct BucketHandle {
    pub(super) label: String,
}

/// A compare-and-swap handle: the store's [`Cas`] (the value seen when it was made, which
/// `swap` requires, and what a wrapper holds until then) and the label it is in.
pub struct CasHandle {
    pub(super) label: String,
    pub(super) cas: Cas,
}
