//! A tokio task tied to its handle: tokio's `JoinHandle` only detaches the task when dropped,
//! so work whose caller went away (a client that hung up, a command stopped) would run on.

/// A task that is aborted when this handle is dropped.
pub struct AbortOnDrop<T>(pub tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
