//! A counting global allocator for the tests that measure what a call allocates
//! (`tests/hostile_alloc.rs`, `tests/cli_memory_inspect.rs`). A test includes it with
//! `#[path = "common/counting_alloc.rs"] mod counting_alloc;`, which installs it as that
//! test's global allocator.
//!
//! It wraps `System` and counts the bytes requested by the thread under measurement: the
//! peak of live bytes and the total of every allocation (a `realloc` counts its new size in
//! full, and for the peak the old block is freed only after the new one is counted, as when
//! the allocator copies). Measurements take a lock, so they run one at a time whatever the
//! test threads, and allocations of other threads are not counted.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static TOTAL: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// True on the thread under measurement, while it is measured.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

/// True while [`measure_all_threads`] measures: every thread's allocations count.
static ALL_THREADS: AtomicBool = AtomicBool::new(false);

fn counting() -> bool {
    ALL_THREADS.load(Relaxed) || COUNTING.try_with(Cell::get).unwrap_or(false)
}

fn grow(n: usize) {
    let live = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(live, Relaxed);
    TOTAL.fetch_add(n, Relaxed);
}

fn shrink(n: usize) {
    let _ = LIVE.fetch_update(Relaxed, Relaxed, |l| Some(l.saturating_sub(n)));
}

// SAFETY: every call is forwarded to `System` unchanged; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() && counting() {
            grow(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() && counting() {
            grow(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        if counting() {
            shrink(layout.size());
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() && counting() {
            grow(new_size);
            shrink(layout.size());
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Held while measuring: one measurement at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Bytes allocated by one measured call.
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// Most bytes live at once.
    pub peak: usize,
    /// Every byte allocated, reallocations counted at their new size.
    pub total: usize,
}

/// Runs `f` (which must drop what it allocates) on this thread and counts its allocations.
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, Usage) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    LIVE.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    TOTAL.store(0, Relaxed);
    COUNTING.with(|c| c.set(true));
    let r = f();
    COUNTING.with(|c| c.set(false));
    let usage = Usage {
        peak: PEAK.load(Relaxed),
        total: TOTAL.load(Relaxed),
    };
    (r, usage)
}

/// [`measure`], counting the allocations of every thread of the process while `f` runs (the
/// threads `f` starts included). Only for a test file with a single test: any other test
/// running meanwhile would be counted too.
pub fn measure_all_threads<R>(f: impl FnOnce() -> R) -> (R, Usage) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    LIVE.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    TOTAL.store(0, Relaxed);
    ALL_THREADS.store(true, Relaxed);
    let r = f();
    ALL_THREADS.store(false, Relaxed);
    let usage = Usage {
        peak: PEAK.load(Relaxed),
        total: TOTAL.load(Relaxed),
    };
    (r, usage)
}
