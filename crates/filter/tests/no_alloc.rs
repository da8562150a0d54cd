//! Evaluating a compiled filter allocates nothing when the record hands out borrowed values.

use std::alloc::{GlobalAlloc, Layout, System};
use std::borrow::Cow;
use std::cell::Cell;

use ra_filter::{FieldValue, Filter, Record};

/// Counts allocations made by the current thread.
struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded unchanged to `System`; the counter has no effect on it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

struct Syscall<'a> {
    op: &'a str,
    path: Option<&'a [u8]>,
    uid: u32,
    ret: i64,
    ratio: f64,
}

impl Record for Syscall<'_> {
    fn get(&self, field: &str) -> Option<FieldValue<'_>> {
        Some(match field {
            "op" => FieldValue::Bytes(Cow::Borrowed(self.op.as_bytes())),
            "path" => FieldValue::Bytes(Cow::Borrowed(self.path?)),
            "uid" => FieldValue::UInt(self.uid.into()),
            "ret" => FieldValue::Int(self.ret),
            "ratio" => FieldValue::Float(self.ratio),
            _ => return None,
        })
    }
}

#[test]
fn evaluation_does_not_allocate() {
    let filters: Vec<Filter> = [
        r#"uid == 0 && path ~ "*.log" || op in {open, unlink}"#,
        r#"path ~ "/var/**/x*y?[a-z].log" && path !~ "**tmp**""#,
        r#"(ret >= 4K || ratio < 0.5) && !(op == close) && path != null"#,
        r#"op not in {read, pread, write} and uid > -1 and path"#,
        r#"path ~ "**.log" || path ~ "/tmp/**" || path ~ "exact""#,
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect();
    let records = [
        Syscall { op: "open", path: Some(b"/var/log/sub/xzy1q.log"), uid: 0, ret: 3, ratio: 0.1 },
        Syscall { op: "close", path: None, uid: 1000, ret: 0, ratio: 1.0 },
        Syscall { op: "unlink", path: Some(b"/tmp/a/b"), uid: 5, ret: 8192, ratio: 0.9 },
    ];
    // Warm up anything lazily initialized.
    let mut hits = 0;
    for f in &filters {
        for r in &records {
            hits += usize::from(f.matches(r));
        }
    }
    let before = ALLOCS.with(Cell::get);
    let mut hits2 = 0;
    for _ in 0..100 {
        for f in &filters {
            for r in &records {
                hits2 += usize::from(f.matches(r));
            }
        }
    }
    let allocs = ALLOCS.with(Cell::get) - before;
    assert_eq!(hits2, hits * 100);
    assert!(hits > 0 && hits < filters.len() * records.len(), "{hits}");
    assert_eq!(allocs, 0, "evaluation allocated {allocs} times");
}
