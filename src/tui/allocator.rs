//! How the workbench asks the allocator to give freed memory back: the TUI holds every
//! capture's row for the whole session while the engine's batches come and go, so memory
//! the engine freed and mimalloc kept for a second (its default purge delay, 1,000 ms) is
//! what its peak is made of (BENCHMARKS.md, "Session 15: mimalloc without transparent huge
//! pages": 1M captures, 154-163 MB at the default, 149-151 MB at 10 ms, the load as fast).

/// The purge delay the workbench sets, in milliseconds.
pub const PURGE_DELAY_MS: std::ffi::c_long = 10;

/// `mi_option_purge_delay`'s index in mimalloc 3's `mi_option_e` (`mimalloc.h` of
/// `libmimalloc-sys` 0.1.49, pinned by `Cargo.lock`); the test
/// `the_option_set_is_mimallocs_purge_delay` checks it by its default (1,000, which no
/// other option of that version has).
#[cfg(feature = "mimalloc")]
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

// the crate that links mimalloc's C library, where these two functions are
#[cfg(feature = "mimalloc")]
extern crate mimalloc as _;

#[cfg(feature = "mimalloc")]
unsafe extern "C" {
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// Sets mimalloc's purge delay to [`PURGE_DELAY_MS`] for the process, unless the user set
/// `MIMALLOC_PURGE_DELAY` (then theirs stands). Does nothing in a build without the
/// `mimalloc` feature; harmless where mimalloc is linked but not the global allocator.
/// Call it before the workbench starts its threads.
pub fn return_freed_memory_sooner() {
    #[cfg(feature = "mimalloc")]
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: mimalloc's documented option API; the option index is checked by a test
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) }
    }
}

/// mimalloc's purge delay now, in milliseconds (`None` without the `mimalloc` feature).
pub fn purge_delay_ms() -> Option<std::ffi::c_long> {
    #[cfg(feature = "mimalloc")]
    {
        // SAFETY: reads one option; no other effect
        Some(unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) })
    }
    #[cfg(not(feature = "mimalloc"))]
    None
}

#[cfg(test)]
mod tests {
    #[cfg(feature = "mimalloc")]
    #[test]
    fn the_option_set_is_mimallocs_purge_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // only the purge delay defaults to 1,000 in this mimalloc (no test here sets it
        // before this one: the workbench's tests do not call `return_freed_memory_sooner`)
        assert_eq!(super::purge_delay_ms(), Some(1000));
        super::return_freed_memory_sooner();
        assert_eq!(super::purge_delay_ms(), Some(super::PURGE_DELAY_MS));
    }
}
