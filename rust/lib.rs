//! aircher-mem's Rust core. `context` is plain Rust; the Python module below is a thin
//! binding over it, compiled only with the `python` feature.

mod atomic;
pub mod context;
pub mod error;
pub mod graph;
mod intern;
mod mapped;
pub mod prose;
pub mod retrieve;
pub mod tokens;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod testing;

pub use error::{Error, Result};

/// Returns the memory mimalloc holds free to the OS, on every rayon thread and this
/// one, after a build or load: a build frees most of what its parse allocated
/// (syntax trees, sources, tokens), spread over the worker threads' heaps, which keep
/// free pages until those threads allocate again (idle, they may never). Measured on
/// CPython's stdlib with `examples/graph_memory.rs`. A no-op for memory not
/// allocated by mimalloc (without the `python` feature Rust's allocator is the
/// system's; tree-sitter's always is mimalloc).
pub(crate) fn release_free_memory() {
    // SAFETY: mi_collect has no preconditions; it only returns free pages.
    rayon::broadcast(|_| unsafe { libmimalloc_sys::mi_collect(true) });
    // SAFETY: as above.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// mimalloc's `mi_option_allow_thp`: its place in `mi_option_t` (mimalloc.h of the
/// v3 sources that libmimalloc-sys 0.1.49, pinned in Cargo.toml, builds by
/// default), which the Rust bindings do not name.
const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;

/// Whether the user chose for mimalloc's transparent huge pages themselves
/// (`MIMALLOC_ALLOW_THP`, in either case, as mimalloc reads it).
fn thp_chosen() -> bool {
    std::env::var_os("MIMALLOC_ALLOW_THP").is_some()
        || std::env::var_os("mimalloc_allow_thp").is_some()
}

/// Stops mimalloc asking the kernel for transparent huge pages
/// (`madvise(MADV_HUGEPAGE)` on the memory it maps), unless the user chose
/// (`MIMALLOC_ALLOW_THP=1` asks again). mimalloc is set up first: set up with
/// the option off, it would turn huge pages off for the whole process
/// (`prctl(PR_SET_THP_DISABLE)`, which its children inherit), not only for its
/// own memory. Each huge page is 2 MiB zeroed at its
/// first touch, and where the kernel has none free it compacts memory to make one,
/// there and then: on the 2-core VM of benches/README.md a load of the Linux
/// kernel's store spent 5.5-9.8 s of system time against 2.6 s, 6.2-8.5 s of
/// wall time against 4.9-5.2 s. Run when the library is loaded, before any of its
/// memory is mapped: mimalloc reserves 1 GiB at its first allocation, and what
/// was asked for then stays.
#[cfg(target_os = "linux")]
extern "C" fn prefer_small_pages() {
    if !thp_chosen() {
        // SAFETY: mi_process_init runs once whoever calls it (mimalloc's own
        // loader calls it too); mi_option_set only stores the value.
        unsafe {
            libmimalloc_sys::mi_process_init();
            libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 0);
        }
    }
}

#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static PREFER_SMALL_PAGES: extern "C" fn() = prefer_small_pages;

/// `n` and the room kept beside it for what comes next (a sixteenth): the graph's
/// node and edge lists and a project's lexical index, after a build or a load.
/// Without it the first update copies their large arrays into fresh memory.
pub(crate) fn with_spare(n: usize) -> usize {
    n + n / 16
}

#[cfg(feature = "python")]
mod py;

#[cfg(feature = "python")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(feature = "python")]
#[pyo3::pymodule]
mod _core {
    use pyo3::prelude::*;

    #[pymodule_export]
    use crate::py::context::{
        PyContextItem, PyContextItemType, PyContextPolicy, PyContextWindow, PyPruneResult,
    };
    #[pymodule_export]
    use crate::py::graph::{
        outline, path_kind, read_project_file, relative_path, PyCodeHit, PyDefinition, PyGraphView,
        PyKnowledgeGraph, PyReference, PySearchParams,
    };
    #[pymodule_export]
    use crate::py::prose::{
        prose_content_words, prose_digests, prose_levels, prose_sentences, PyProseAnalysis,
    };
    #[pymodule_export]
    use crate::py::retrieve::{
        fuse, segment_sessions, similar_pairs, tokenize, PyLexicalIndex, PyVectorIndex,
    };
    #[pymodule_export]
    use crate::py::tokens::{sha256_hex, PyTokenEncoding};

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Whether the mapping holding `at` is advised for huge pages (`hg` among its
    /// `VmFlags` in /proc/self/smaps).
    fn advised_huge(at: usize) -> bool {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let mut inside = false;
        for line in smaps.lines() {
            let range = line
                .split_once(' ')
                .and_then(|(range, _)| range.split_once('-'));
            if let Some((start, end)) = range {
                let (start, end) = (
                    usize::from_str_radix(start, 16),
                    usize::from_str_radix(end, 16),
                );
                if let (Ok(start), Ok(end)) = (start, end) {
                    inside = start <= at && at < end;
                    continue;
                }
            }
            if inside {
                if let Some(flags) = line.strip_prefix("VmFlags:") {
                    return flags.split_whitespace().any(|flag| flag == "hg");
                }
            }
        }
        panic!("no mapping holds {at:#x}");
    }

    /// A block of 1 GiB that mimalloc maps afresh (after a small block, so that
    /// this thread's heap commits eagerly), never touched: free it with `mi_free`.
    fn fresh_block() -> *mut std::ffi::c_void {
        // SAFETY: plain allocations, the small one freed once.
        let block = unsafe {
            let small = libmimalloc_sys::mi_malloc(64);
            let block = libmimalloc_sys::mi_malloc(1 << 30);
            libmimalloc_sys::mi_free(small);
            block
        };
        assert!(!block.is_null());
        block
    }

    #[test]
    fn mimalloc_asks_for_huge_pages_only_when_the_user_does() {
        let thp = std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled");
        if thp_chosen() || !thp.exists() {
            eprintln!("skipped: MIMALLOC_ALLOW_THP set, or a kernel without huge pages");
            return;
        }
        // SAFETY: reading and setting an option has no preconditions.
        let on = unsafe { libmimalloc_sys::mi_option_is_enabled(MI_OPTION_ALLOW_THP) };
        assert!(!on, "turned off when the library was loaded");
        let off = fresh_block();
        // The option is the one that advises (its number is mimalloc's); the block
        // before is still held, so this one is mapped afresh too.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 1) };
        let on = fresh_block();
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 0) };
        let advised = (advised_huge(off as usize), advised_huge(on as usize));
        // SAFETY: both allocated above by mimalloc, freed once.
        unsafe {
            libmimalloc_sys::mi_free(off);
            libmimalloc_sys::mi_free(on);
        }
        assert_eq!(advised, (false, true));
    }

    #[test]
    fn the_process_keeps_its_huge_pages() {
        let status = std::fs::read_to_string("/proc/self/status").expect("status");
        match status.lines().find_map(|l| l.strip_prefix("THP_enabled:")) {
            Some(enabled) => assert_eq!(enabled.trim(), "1", "THP turned off for the process"),
            None => eprintln!("skipped: a kernel that does not say (THP_enabled)"),
        }
    }
}
