//! The components' global allocator: small blocks freed by a request are kept, by size, for
//! the next allocation of that size, in front of the system allocator (wasi-libc's dlmalloc).
//!
//! Why: a `/predict` on molprop makes about 190 allocations and frees (molecules, rings,
//! JSON), and dlmalloc with Rust's layers in front of it spent about 72,000 of the guest's
//! 430,000 instructions on them (callgrind, `edge-bench --only instructions`). A general
//! allocator does no better (Talc and rlsf measured the same as dlmalloc); what a request
//! needs is the block of the size it just freed, which a list per size hands back in a few
//! instructions. Measured: molprop `/predict` logp 532,600 -> 484,000 instructions, `all`
//! 703,300 -> 618,000, `/health` 92,300 -> 85,500 (docs/BENCHMARKS.md, issue 27).
//!
//! Limits, so that keeping blocks never costs a later request its memory: only blocks of up
//! to [`LARGEST`] bytes (alignment up to [`GRAIN`]) are kept, and at most [`KEEP_BYTES`] in
//! all; anything else goes back to the system allocator at once, where it can be reused for
//! any size. WebAssembly components here are single-threaded (no `atomics`), which is what
//! makes the unsynchronised lists sound; the allocator is installed only there.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ptr;

/// Sizes are rounded up to a multiple of this, which is also the largest alignment kept.
pub const GRAIN: usize = 8;
/// Largest block kept for reuse.
pub const LARGEST: usize = 512;
/// Bytes kept in the lists at most; a block freed beyond that goes back to the system.
pub const KEEP_BYTES: usize = 64 << 10;

const CLASSES: usize = LARGEST / GRAIN;

/// Every component's allocator.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: SmallBlocks = SmallBlocks::new();

/// Hands every kept block back to the system allocator. Called before an instance is
/// snapshotted, so that every instance starts with empty lists: blocks kept by the
/// initialization lie scattered over the snapshot's shared heap, and handing them out again
/// would write to (and so copy) pages of the shared image that the system allocator, which
/// coalesces them, need not touch.
pub fn release_kept() {
    #[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
    ALLOCATOR.release();
}

/// The allocator. A freed block of a kept size is pushed on its size's list (the list's link
/// is written into the block itself) and handed out again by the next allocation of that
/// size.
pub struct SmallBlocks {
    state: UnsafeCell<Lists>,
}

struct Lists {
    heads: [*mut u8; CLASSES],
    kept: usize,
}

// SAFETY: only installed (and so only shared) where the program has a single thread: the
// WebAssembly components, built without `atomics`.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
unsafe impl Sync for SmallBlocks {}

impl Default for SmallBlocks {
    fn default() -> Self {
        Self::new()
    }
}

impl SmallBlocks {
    pub const fn new() -> Self {
        Self {
            state: UnsafeCell::new(Lists {
                heads: [ptr::null_mut(); CLASSES],
                kept: 0,
            }),
        }
    }

    /// Hands every kept block back to the system allocator.
    pub fn release(&self) {
        // SAFETY: single-threaded (see `Sync`); every block on a list is a freed block of
        // its class, allocated from the system with `block_layout`.
        unsafe {
            let lists = &mut *self.state.get();
            for (class, head) in lists.heads.iter_mut().enumerate() {
                while !head.is_null() {
                    let block = *head;
                    *head = block.cast::<*mut u8>().read();
                    System.dealloc(block, block_layout(class));
                }
            }
            lists.kept = 0;
        }
    }

    /// Bytes now kept in the lists.
    pub fn kept_bytes(&self) -> usize {
        // SAFETY: single-threaded (see `Sync`); no reference into the lists is held.
        unsafe { (*self.state.get()).kept }
    }
}

/// The list a layout's blocks are kept on, if they are kept.
#[inline]
fn class_of(layout: &Layout) -> Option<usize> {
    (layout.size() <= LARGEST && layout.align() <= GRAIN)
        .then(|| layout.size().saturating_sub(1) / GRAIN)
}

/// A block the lists do not have: a kept size gets its class's whole block, so that it can
/// be kept when it is freed.
#[cold]
#[inline(never)]
unsafe fn alloc_from_system(layout: Layout) -> *mut u8 {
    match class_of(&layout) {
        Some(class) => unsafe { System.alloc(block_layout(class)) },
        None => unsafe { System.alloc(layout) },
    }
}

/// A block not kept (not a kept size, or the lists are full) goes back to the system.
#[cold]
#[inline(never)]
unsafe fn dealloc_to_system(block: *mut u8, layout: Layout) {
    match class_of(&layout) {
        Some(class) => unsafe { System.dealloc(block, block_layout(class)) },
        None => unsafe { System.dealloc(block, layout) },
    }
}

/// What the system allocator is asked for (and given back) for a block of `class`.
#[inline]
fn block_layout(class: usize) -> Layout {
    // SAFETY: a non-zero multiple of GRAIN, a power of two, far below isize::MAX.
    unsafe { Layout::from_size_align_unchecked((class + 1) * GRAIN, GRAIN) }
}

// SAFETY: every block handed out is at least the layout's size and alignment (a kept block
// is `block_layout` of its class, which covers every layout of that class); a block is on a
// list only after it was freed, and leaves the list before it is handed out again.
unsafe impl GlobalAlloc for SmallBlocks {
    // `alloc` and `dealloc` are the fast paths only (a kept block handed out or kept): the
    // rest is in functions of their own, so that the fast path stays a few instructions
    // without the frame and saved registers the system allocator's calls need.
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if let Some(class) = class_of(&layout) {
            // SAFETY: single-threaded (see `Sync`); the block on a list is a freed one of
            // this class, whose first word links to the next.
            unsafe {
                let lists = &mut *self.state.get();
                let head = lists.heads[class];
                if !head.is_null() {
                    lists.heads[class] = head.cast::<*mut u8>().read();
                    lists.kept -= block_layout(class).size();
                    return head;
                }
            }
        }
        unsafe { alloc_from_system(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        if let Some(class) = class_of(&layout) {
            // SAFETY: as in `alloc`; the block is at least a pointer wide (GRAIN).
            unsafe {
                let lists = &mut *self.state.get();
                let size = block_layout(class).size();
                if lists.kept + size <= KEEP_BYTES {
                    block.cast::<*mut u8>().write(lists.heads[class]);
                    lists.heads[class] = block;
                    lists.kept += size;
                    return;
                }
            }
        }
        unsafe { dealloc_to_system(block, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if class_of(&layout).is_none() {
            return unsafe { System.alloc_zeroed(layout) };
        }
        unsafe {
            let block = self.alloc(layout);
            if !block.is_null() {
                ptr::write_bytes(block, 0, layout.size());
            }
            block
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size` with this alignment is a valid layout.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (class_of(&layout), class_of(&new_layout)) {
            // The block already is that size.
            (Some(old), Some(new)) if old == new => block,
            (None, None) => unsafe { System.realloc(block, layout, new_size) },
            _ => unsafe {
                let moved = self.alloc(new_layout);
                if !moved.is_null() {
                    ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                    self.dealloc(block, layout);
                }
                moved
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn a_freed_block_is_handed_out_again_for_the_same_size() {
        let a = SmallBlocks::new();
        unsafe {
            let first = a.alloc(layout(24, 8));
            a.dealloc(first, layout(24, 8));
            assert_eq!(a.kept_bytes(), 24);
            // 17..=24 bytes share the block; another size does not get it.
            let other = a.alloc(layout(32, 8));
            assert_ne!(other, first);
            let again = a.alloc(layout(17, 4));
            assert_eq!(again, first);
            assert_eq!(a.kept_bytes(), 0);
            a.dealloc(again, layout(17, 4));
            a.dealloc(other, layout(32, 8));
        }
    }

    #[test]
    fn large_or_overaligned_blocks_are_not_kept() {
        let a = SmallBlocks::new();
        unsafe {
            for l in [layout(LARGEST + 1, 8), layout(64, 16), layout(1 << 20, 8)] {
                let block = a.alloc(l);
                assert!(!block.is_null());
                assert_eq!(block as usize % l.align(), 0);
                a.dealloc(block, l);
                assert_eq!(a.kept_bytes(), 0, "{l:?} was kept");
            }
        }
    }

    #[test]
    fn no_more_than_the_limit_is_kept() {
        let a = SmallBlocks::new();
        let l = layout(LARGEST, 8);
        let count = KEEP_BYTES / LARGEST + 10;
        unsafe {
            let blocks: Vec<*mut u8> = (0..count).map(|_| a.alloc(l)).collect();
            for &b in &blocks {
                a.dealloc(b, l);
            }
        }
        assert_eq!(a.kept_bytes(), KEEP_BYTES);
    }

    #[test]
    fn released_blocks_go_back_to_the_system() {
        let a = SmallBlocks::new();
        unsafe {
            let blocks: Vec<*mut u8> = (1..=LARGEST)
                .step_by(7)
                .map(|n| a.alloc(layout(n, 1)))
                .collect();
            for (i, &b) in blocks.iter().enumerate() {
                a.dealloc(b, layout(1 + 7 * i, 1));
            }
            assert!(a.kept_bytes() > 0);
            a.release();
            assert_eq!(a.kept_bytes(), 0);
            // Nothing is handed out from the released lists: a new block is a fresh one.
            let fresh = a.alloc(layout(8, 8));
            assert!(!fresh.is_null());
            a.dealloc(fresh, layout(8, 8));
        }
    }

    #[test]
    fn zeroed_blocks_are_zero_even_when_reused() {
        let a = SmallBlocks::new();
        unsafe {
            let dirty = a.alloc(layout(40, 8));
            ptr::write_bytes(dirty, 0xAB, 40);
            a.dealloc(dirty, layout(40, 8));
            let zeroed = a.alloc_zeroed(layout(40, 8));
            assert_eq!(zeroed, dirty);
            assert!(
                std::slice::from_raw_parts(zeroed, 40)
                    .iter()
                    .all(|&b| b == 0)
            );
            a.dealloc(zeroed, layout(40, 8));
        }
    }

    #[test]
    fn realloc_keeps_the_contents_across_sizes() {
        let a = SmallBlocks::new();
        unsafe {
            let mut block = a.alloc(layout(3, 1));
            ptr::copy_nonoverlapping(b"abc".as_ptr(), block, 3);
            let mut size = 3;
            // Within a class, into another, beyond the kept sizes and back.
            for new_size in [7, 100, 4000, 9000, 300, 2] {
                block = a.realloc(block, layout(size, 1), new_size);
                assert!(!block.is_null());
                let kept = std::slice::from_raw_parts(block, 3.min(new_size));
                assert_eq!(kept, &b"abc"[..3.min(new_size)]);
                size = new_size;
            }
            a.dealloc(block, layout(size, 1));
        }
    }

    #[test]
    fn blocks_handed_out_at_once_do_not_overlap() {
        let a = SmallBlocks::new();
        let l = layout(16, 8);
        unsafe {
            let blocks: Vec<*mut u8> = (0..64).map(|_| a.alloc(l)).collect();
            for (i, &b) in blocks.iter().enumerate() {
                ptr::write_bytes(b, i as u8, 16);
            }
            for (i, &b) in blocks.iter().enumerate() {
                assert!(
                    std::slice::from_raw_parts(b, 16)
                        .iter()
                        .all(|&x| x == i as u8)
                );
            }
            for &b in &blocks {
                a.dealloc(b, l);
            }
            // Handed out again, still distinct.
            let again: std::collections::HashSet<usize> =
                (0..64).map(|_| a.alloc(l) as usize).collect();
            assert_eq!(again.len(), 64);
        }
    }
}
