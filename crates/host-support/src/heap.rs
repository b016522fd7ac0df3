//! How the process's C heap (glibc malloc, which Rust's allocator uses) holds memory.
//!
//! glibc gives threads their own arenas (up to 8 per core) and keeps memory freed in an arena
//! for that arena's next allocations. `up` runs tokio workers, blocking-pool threads and the
//! compiler's threads, so what one of them freed (a component's bytes, the compiler's working
//! memory) stayed resident in its arena for good: 13 molprop + 12 solubility in one `up`
//! measured 147 MiB VmRSS with the default and 107 MiB with two arenas.

/// Caps the arenas at two. Must run before any other thread starts (first thing in `main`):
/// a thread picks its arena on its first allocation. Two keep the tokio workers of a
/// two-core machine from contending on one lock, and each thread's cache (tcache) serves
/// most small allocations without taking an arena lock at all.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes a tuning parameter of the allocator; called before any
    // thread but this one exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Returns free memory of the arenas to the operating system. Compiling a large component
/// (the ONNX model component) spreads cranelift's working memory over the heap; glibc keeps
/// it after it is freed, and a model deployment stayed at 500 MiB resident before serving
/// anything. After a trim it holds what it uses.
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}
