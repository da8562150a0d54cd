//! Extent buffers used again: a reader takes the buffer it reads an extent into from a
//! [`BufPool`], and the buffer goes back to the pool when the last slice of the decoded extent
//! ([`crate::Extent::shared_bytes`]) is dropped, on whatever thread that happens.
//!
//! Reading each extent into fresh memory made the kernel zero a new page for every page read:
//! on a 115 MB trace, a tenth of a compile's CPU time went to zeroing pages the process had
//! just freed on another thread. The pool is bounded: at most [`POOL_BUFFERS`] buffers and
//! [`POOL_BYTES`] of capacity are kept; others are freed.

use std::sync::{Arc, Mutex};

use bytes::Bytes;

/// Buffers kept at most.
pub(crate) const POOL_BUFFERS: usize = 8;
/// Capacity kept at most, in bytes.
pub(crate) const POOL_BYTES: usize = 64 << 20;

#[derive(Debug, Default)]
pub(crate) struct BufPool {
    spare: Mutex<Vec<Vec<u8>>>,
}

impl BufPool {
    /// A buffer of `len` bytes for the caller to overwrite whole: the smallest kept one that
    /// holds `len`, else a new one. A kept buffer keeps its old bytes (only its part beyond its
    /// last length is zeroed): zeroing all of it again cost a compile ~2% of its CPU.
    pub(crate) fn take(&self, len: usize) -> Vec<u8> {
        let found = {
            let mut spare = self.spare.lock().unwrap_or_else(|p| p.into_inner());
            spare
                .iter()
                .enumerate()
                .filter(|(_, v)| v.capacity() >= len)
                .min_by_key(|(_, v)| v.capacity())
                .map(|(i, _)| i)
                .map(|i| spare.swap_remove(i))
        };
        // A new buffer has room to spare: the next extents of a type are about as large, and
        // one a little larger than every kept buffer would not fit otherwise.
        let mut v = found.unwrap_or_else(|| Vec::with_capacity(len.saturating_add(len / 8)));
        if v.len() >= len {
            v.truncate(len);
        } else {
            v.resize(len, 0);
        }
        v
    }

    /// An empty buffer with room for `cap` bytes, for the caller to append to (a section
    /// decompressed into it): the smallest kept one that holds `cap`, else a new one.
    pub(crate) fn take_empty(&self, cap: usize) -> Vec<u8> {
        let mut v = self.take(0);
        v.clear();
        v.reserve(cap);
        v
    }

    /// Keep `v` for a later [`BufPool::take`]. Beyond the bounds the smallest buffers go
    /// (a small one is no use for the large extents of a busy call type).
    fn give(&self, v: Vec<u8>) {
        if v.capacity() == 0 || v.capacity() > POOL_BYTES {
            return;
        }
        let mut spare = self.spare.lock().unwrap_or_else(|p| p.into_inner());
        spare.push(v);
        let mut kept: usize = spare.iter().map(Vec::capacity).sum();
        while spare.len() > POOL_BUFFERS || kept > POOL_BYTES {
            let Some((i, _)) = spare.iter().enumerate().min_by_key(|(_, v)| v.capacity()) else {
                break;
            };
            kept -= spare.swap_remove(i).capacity();
        }
    }
}

/// `v` as shared bytes that return it to `pool` once the last slice is dropped.
pub(crate) fn shared(v: Vec<u8>, pool: &Arc<BufPool>) -> Bytes {
    Bytes::from_owner(Pooled { v, pool: Arc::clone(pool) })
}

struct Pooled {
    v: Vec<u8>,
    pool: Arc<BufPool>,
}

impl AsRef<[u8]> for Pooled {
    fn as_ref(&self) -> &[u8] {
        &self.v
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        self.pool.give(std::mem::take(&mut self.v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_extent_buffer_is_taken_again_and_the_pool_stays_bounded() {
        let pool = Arc::new(BufPool::default());
        let v = pool.take(1000);
        assert_eq!(v.len(), 1000);
        let mut v = v;
        v.fill(7);
        let ptr = v.as_ptr();
        let b = shared(v, &pool);
        let slice = b.slice(10..20);
        drop(b);
        // A slice still holds it.
        assert!(pool.spare.lock().unwrap().is_empty());
        drop(slice);
        let again = pool.take(500);
        assert_eq!(again.as_ptr(), ptr, "the same allocation comes back");
        assert_eq!(again.len(), 500);
        drop(shared(again, &pool));
        // Taken again for more than its last length: the old bytes, then zeros.
        let longer = pool.take(1100);
        assert_eq!(longer.as_ptr(), ptr);
        assert!(longer[..500].iter().all(|&b| b == 7) && longer[500..].iter().all(|&b| b == 0));
        drop(longer);
        // Bounded in count and bytes, keeping the largest.
        for _ in 0..POOL_BUFFERS + 4 {
            drop(shared(vec![1u8; 16], &pool));
        }
        assert_eq!(pool.spare.lock().unwrap().len(), POOL_BUFFERS);
        drop(shared(vec![1u8; 4096], &pool));
        let caps = |p: &BufPool| {
            let mut c: Vec<usize> = p.spare.lock().unwrap().iter().map(Vec::capacity).collect();
            c.sort_unstable();
            c
        };
        assert_eq!(caps(&pool).len(), POOL_BUFFERS);
        assert_eq!(caps(&pool).last(), Some(&4096), "a larger buffer displaces a small one");
        drop(shared(vec![2u8; POOL_BYTES - 4096], &pool));
        let total: usize = caps(&pool).iter().sum();
        assert!(total <= POOL_BYTES, "{total} bytes kept");
        assert!(caps(&pool).contains(&(POOL_BYTES - 4096)));
        drop(shared(vec![3u8; POOL_BYTES + 1], &pool));
        assert!(!caps(&pool).contains(&(POOL_BYTES + 1)), "too large to keep");
    }
}
