//! A folder of kernel programs for the tests that check a library of them
//! (the idioms, the scan skeletons): every file loads, and is a kernel
//! program.

use progress_litmus::kernel::load::{load_all, Item, NamedProgram};
use std::path::Path;

/// The kernel programs under `dir`, in the loader's order.
pub fn kernel_programs(dir: &Path) -> Vec<NamedProgram> {
    let (items, errors) = load_all(&[dir.to_path_buf()]);
    assert!(errors.is_empty(), "{errors:?}");
    items
        .into_iter()
        .map(|i| match i {
            Item::Kernel(p) => p,
            Item::Axb(t) => panic!("{}: not a kernel program", t.name),
        })
        .collect()
}
