//! Checksums used by DSv1: zlib's adler32 and Bob Jenkins' 1996 lookup2 hash.

/// Standard adler32 (initial value 1) of `data`.
pub fn adler32(data: &[u8]) -> u32 {
    simd_adler32::adler32(&data)
}

/// adler32 of an on-disk extent: every byte except the adler field itself at `[16, 20)`.
pub(crate) fn extent_adler32(extent: &[u8]) -> u32 {
    let mut a = simd_adler32::Adler32::new();
    a.write(extent.get(..16).unwrap_or(extent));
    a.write(extent.get(20..).unwrap_or(&[]));
    a.finish()
}

#[inline(always)]
fn mix(mut a: u32, mut b: u32, mut c: u32) -> (u32, u32, u32) {
    // x - y - z written as x - (y + z): same value, shorter dependency chain.
    a = a.wrapping_sub(b.wrapping_add(c)) ^ (c >> 13);
    b = b.wrapping_sub(c.wrapping_add(a)) ^ (a << 8);
    c = c.wrapping_sub(a.wrapping_add(b)) ^ (b >> 13);
    a = a.wrapping_sub(b.wrapping_add(c)) ^ (c >> 12);
    b = b.wrapping_sub(c.wrapping_add(a)) ^ (a << 16);
    c = c.wrapping_sub(a.wrapping_add(b)) ^ (b >> 5);
    a = a.wrapping_sub(b.wrapping_add(c)) ^ (c >> 3);
    b = b.wrapping_sub(c.wrapping_add(a)) ^ (a << 10);
    c = c.wrapping_sub(a.wrapping_add(b)) ^ (b >> 15);
    (a, b, c)
}

#[inline(always)]
fn le32(b: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[..4]);
    u32::from_le_bytes(w)
}

/// Bob Jenkins' lookup2 `hash(k, length, initval)`, reading words little-endian regardless of
/// the host (the DataSeries `bjhash`).
pub fn bjhash(initval: u32, data: &[u8]) -> u32 {
    bjhash_core(GOLDEN, GOLDEN, initval, data, data.len())
}

const GOLDEN: u32 = 0x9e37_79b9;

/// `bjhash(initval, [0, 0, 0, 0] ++ data)` without building the concatenation (the variable
/// heap starts with 4 zero bytes that are not stored).
pub(crate) fn bjhash_zero_prefixed(initval: u32, data: &[u8]) -> u32 {
    if data.len() < 8 {
        let mut v = [0u8; 12];
        v[4..4 + data.len()].copy_from_slice(data);
        return bjhash(initval, &v[..4 + data.len()]);
    }
    let (a, b, c) = mix(
        GOLDEN,
        GOLDEN.wrapping_add(le32(&data[0..4])),
        initval.wrapping_add(le32(&data[4..8])),
    );
    bjhash_core(a, b, c, &data[8..], data.len() + 4)
}

/// The lookup2 loop and tail from a given state; `total_len` is the whole input's length.
#[inline(always)]
fn bjhash_core(mut a: u32, mut b: u32, mut c: u32, data: &[u8], total_len: usize) -> u32 {
    let mut chunks = data.chunks_exact(12);
    for k in &mut chunks {
        a = a.wrapping_add(le32(&k[0..4]));
        b = b.wrapping_add(le32(&k[4..8]));
        c = c.wrapping_add(le32(&k[8..12]));
        (a, b, c) = mix(a, b, c);
    }
    bjhash_tail(a, b, c, chunks.remainder(), total_len)
}

/// lookup2's last step: the length, the final 0-11 bytes, one more mix.
#[inline(always)]
fn bjhash_tail(mut a: u32, mut b: u32, mut c: u32, rest: &[u8], total_len: usize) -> u32 {
    // The length is added modulo 2^32, as the C code's `ub4` arithmetic does.
    c = c.wrapping_add(total_len as u32);
    for (j, &byte) in rest.iter().enumerate() {
        let v = u32::from(byte);
        match j {
            0..=3 => a = a.wrapping_add(v << (8 * j)),
            4..=7 => b = b.wrapping_add(v << (8 * (j - 4))),
            _ => c = c.wrapping_add(v << (8 * (j - 7))),
        }
    }
    mix(a, b, c).2
}

/// `bjhash(initval, data)` of several independent inputs at once: the same values as one
/// [`bjhash`] call each, faster when there are several. lookup2 is one long chain of
/// dependent operations per input, so one input leaves most of a core's execution units idle;
/// here up to eight inputs advance side by side in the lanes of SSE2 vectors (part of every
/// x86_64 CPU).
pub fn bjhash_many(inputs: &[(u32, &[u8])]) -> Vec<u32> {
    let lanes: Vec<Lane<'_>> = inputs
        .iter()
        .map(|&(iv, data)| Lane { st: [GOLDEN, GOLDEN, iv], data, total_len: data.len() })
        .collect();
    hash_lanes(&lanes)
}

/// [`bjhash_zero_prefixed`] of several independent inputs at once (the variable sections of
/// several extents), as [`bjhash_many`] does for [`bjhash`].
pub(crate) fn bjhash_many_zero_prefixed(inputs: &[(u32, &[u8])]) -> Vec<u32> {
    let mut out = vec![0u32; inputs.len()];
    let mut lanes = Vec::with_capacity(inputs.len());
    let mut at = Vec::with_capacity(inputs.len());
    for (i, &(iv, data)) in inputs.iter().enumerate() {
        if data.len() < 8 {
            out[i] = bjhash_zero_prefixed(iv, data);
            continue;
        }
        // The first block is the four zero bytes and the data's first eight.
        let (a, b, c) =
            mix(GOLDEN, GOLDEN.wrapping_add(le32(&data[0..4])), iv.wrapping_add(le32(&data[4..8])));
        lanes.push(Lane { st: [a, b, c], data: &data[8..], total_len: data.len() + 4 });
        at.push(i);
    }
    for (i, h) in at.into_iter().zip(hash_lanes(&lanes)) {
        out[i] = h;
    }
    out
}

/// One input of the lockstep hash: the state after the blocks already mixed, the rest of the
/// input, and the whole input's length (added in the last step).
#[derive(Clone, Copy)]
struct Lane<'a> {
    st: [u32; 3],
    data: &'a [u8],
    total_len: usize,
}

fn hash_lanes(lanes: &[Lane<'_>]) -> Vec<u32> {
    let mut out = Vec::with_capacity(lanes.len());
    for group in lanes.chunks(LANES) {
        out.extend(bjhash_group(group));
    }
    out
}

const LANES: usize = 8;

/// Up to [`LANES`] inputs: run every lane's full 12-byte blocks in lockstep rounds (a round
/// lasts as long as its shortest active lane; finished lanes then idle on zeros), then each
/// lane's tail alone. Once two lanes or fewer are left, the scalar loop is faster.
fn bjhash_group(group: &[Lane<'_>]) -> Vec<u32> {
    let n = group.len();
    let mut st = [[GOLDEN, GOLDEN, 0u32]; LANES];
    let mut blocks = [0usize; LANES];
    let mut done = [0usize; LANES];
    for (i, lane) in group.iter().enumerate() {
        st[i] = lane.st;
        blocks[i] = lane.data.len() / 12;
    }
    static IDLE: [u8; 12] = [0; 12];
    loop {
        let active: Vec<usize> = (0..n).filter(|&i| done[i] < blocks[i]).collect();
        if active.len() <= 2 {
            break;
        }
        let m = active.iter().map(|&i| blocks[i] - done[i]).min().unwrap_or(0);
        let mut lanes: [&[u8]; LANES] = [&IDLE; LANES];
        let mut step = [0usize; LANES];
        for &i in &active {
            lanes[i] = &group[i].data[done[i] * 12..(done[i] + m) * 12];
            step[i] = 12;
        }
        let mut next = st;
        mix_rounds(&mut next, &lanes, &step, m);
        for &i in &active {
            st[i] = next[i];
            done[i] += m;
        }
    }
    (0..n)
        .map(|i| {
            let lane = &group[i];
            let [a, b, c] = st[i];
            bjhash_core(a, b, c, &lane.data[done[i] * 12..], lane.total_len)
        })
        .collect()
}

/// `m` rounds of "add the next 12 bytes, mix" on every lane; lane `i` reads its block `k` at
/// `lanes[i][k * step[i]..]` (step 0: the same 12 bytes every round). Every lane holds at
/// least `(m - 1) * step + 12` bytes.
///
/// Two independent groups of four lanes, one SSE2 vector per state word each: two dependency
/// chains in flight, since one alone leaves the vector units waiting on latency.
#[cfg(target_arch = "x86_64")]
fn mix_rounds(st: &mut [[u32; 3]; LANES], lanes: &[&[u8]; LANES], step: &[usize; LANES], m: usize) {
    use std::arch::x86_64::*;

    /// `x - y - newest`, kept in this order: the compiler would otherwise turn it into
    /// `x - (y + newest)`, one more operation on the dependency chain (measured: 1.4x slower).
    #[inline(always)]
    fn sub_late(x: __m128i, newest: __m128i) -> __m128i {
        let mut r = x;
        // SAFETY: one SSE2 register instruction.
        unsafe {
            std::arch::asm!("psubd {r}, {n}", r = inout(xmm_reg) r, n = in(xmm_reg) newest,
                options(pure, nomem, nostack, preserves_flags));
        }
        r
    }

    if m == 0 {
        return;
    }
    for l in 0..LANES {
        assert!(lanes[l].len() >= (m - 1) * step[l] + 12, "lane {l} too short");
    }
    // The last block of each lane (and an idle lane's zeros), copied so that 16-byte loads
    // stay inside buffers.
    let mut last = [[0u8; 16]; LANES];
    for l in 0..LANES {
        let o = (m - 1) * step[l];
        last[l][..12].copy_from_slice(&lanes[l][o..o + 12]);
    }
    // SAFETY: SSE2 is part of the x86_64 baseline. Block k < m - 1 of a lane with step 12 reads
    // 16 bytes at 12k <= 12(m - 2) + 16 <= 12(m - 1) + 12 <= its length (asserted above);
    // idle lanes (step 0) and every last block read `last`.
    unsafe {
        let mut v = [[_mm_setzero_si128(); 3]; 2];
        for (g, vg) in v.iter_mut().enumerate() {
            for (w, x) in vg.iter_mut().enumerate() {
                let q = |l: usize| st[4 * g + l][w] as i32;
                *x = _mm_set_epi32(q(3), q(2), q(1), q(0));
            }
        }
        let mut p: [*const u8; LANES] =
            std::array::from_fn(
                |l| if step[l] == 0 { last[l].as_ptr() } else { lanes[l].as_ptr() },
            );
        for k in 0..m {
            if k == m - 1 {
                p = std::array::from_fn(|l| last[l].as_ptr());
            }
            for g in 0..2 {
                let q = &p[4 * g..4 * g + 4];
                let l0 = _mm_loadu_si128(q[0].cast());
                let l1 = _mm_loadu_si128(q[1].cast());
                let l2 = _mm_loadu_si128(q[2].cast());
                let l3 = _mm_loadu_si128(q[3].cast());
                let t0 = _mm_unpacklo_epi32(l0, l1);
                let t1 = _mm_unpacklo_epi32(l2, l3);
                let t2 = _mm_unpackhi_epi32(l0, l1);
                let t3 = _mm_unpackhi_epi32(l2, l3);
                let [mut a, mut b, mut c] = v[g];
                a = _mm_add_epi32(a, _mm_unpacklo_epi64(t0, t1));
                b = _mm_add_epi32(b, _mm_unpackhi_epi64(t0, t1));
                c = _mm_add_epi32(c, _mm_unpacklo_epi64(t2, t3));
                a = _mm_xor_si128(sub_late(_mm_sub_epi32(a, b), c), _mm_srli_epi32::<13>(c));
                b = _mm_xor_si128(sub_late(_mm_sub_epi32(b, c), a), _mm_slli_epi32::<8>(a));
                c = _mm_xor_si128(sub_late(_mm_sub_epi32(c, a), b), _mm_srli_epi32::<13>(b));
                a = _mm_xor_si128(sub_late(_mm_sub_epi32(a, b), c), _mm_srli_epi32::<12>(c));
                b = _mm_xor_si128(sub_late(_mm_sub_epi32(b, c), a), _mm_slli_epi32::<16>(a));
                c = _mm_xor_si128(sub_late(_mm_sub_epi32(c, a), b), _mm_srli_epi32::<5>(b));
                a = _mm_xor_si128(sub_late(_mm_sub_epi32(a, b), c), _mm_srli_epi32::<3>(c));
                b = _mm_xor_si128(sub_late(_mm_sub_epi32(b, c), a), _mm_slli_epi32::<10>(a));
                c = _mm_xor_si128(sub_late(_mm_sub_epi32(c, a), b), _mm_srli_epi32::<15>(b));
                v[g] = [a, b, c];
            }
            p = std::array::from_fn(|l| p[l].add(step[l]));
        }
        for (g, vg) in v.iter().enumerate() {
            let mut out = [[0u32; 4]; 3];
            for (w, x) in vg.iter().enumerate() {
                _mm_storeu_si128(out[w].as_mut_ptr().cast(), *x);
            }
            for l in 0..4 {
                st[4 * g + l] = [out[0][l], out[1][l], out[2][l]];
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn mix_rounds(st: &mut [[u32; 3]; LANES], lanes: &[&[u8]; LANES], step: &[usize; LANES], m: usize) {
    for (l, s) in st.iter_mut().enumerate() {
        let [mut a, mut b, mut c] = *s;
        for k in 0..m {
            let o = k * step[l];
            let d = &lanes[l][o..o + 12];
            a = a.wrapping_add(le32(&d[0..4]));
            b = b.wrapping_add(le32(&d[4..8]));
            c = c.wrapping_add(le32(&d[8..12]));
            (a, b, c) = mix(a, b, c);
        }
        *s = [a, b, c];
    }
}

/// `BobJenkinsHashMix3`: one `mix` round, returning `c` (used for the chained checksum).
pub fn mix3(a: u32, b: u32, c: u32) -> u32 {
    mix(a, b, c).2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adler_known() {
        assert_eq!(adler32(b""), 1);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    }

    #[test]
    fn many_matches_one_at_a_time() {
        let data: Vec<u8> =
            (0..5000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
        // Lanes of different lengths (shorter, longer, empty, not multiples of 12), in groups
        // of up to four and more than four.
        let cuts = [0usize, 1, 11, 12, 13, 100, 4999, 5000, 2048, 24, 36, 777];
        for k in 1..=cuts.len() {
            let inputs: Vec<(u32, &[u8])> =
                cuts[..k].iter().enumerate().map(|(i, &n)| (i as u32 * 7919, &data[..n])).collect();
            let want: Vec<u32> = inputs.iter().map(|&(iv, d)| bjhash(iv, d)).collect();
            assert_eq!(bjhash_many(&inputs), want, "{k} inputs");
        }
    }

    #[test]
    fn many_zero_prefixed_matches_one_at_a_time() {
        let data: Vec<u8> =
            (0..5000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
        let cuts = [0usize, 3, 7, 8, 9, 19, 20, 100, 4999, 5000, 2048, 24, 36, 777, 1, 4000];
        for k in 1..=cuts.len() {
            let inputs: Vec<(u32, &[u8])> = cuts[..k]
                .iter()
                .enumerate()
                .map(|(i, &n)| (i as u32 * 104_729, &data[..n]))
                .collect();
            let want: Vec<u32> =
                inputs.iter().map(|&(iv, d)| bjhash_zero_prefixed(iv, d)).collect();
            assert_eq!(bjhash_many_zero_prefixed(&inputs), want, "{k} inputs");
        }
    }

    #[test]
    fn zero_prefixed_matches_concatenation() {
        let data: Vec<u8> = (0..100u8).map(|i| i.wrapping_mul(91)).collect();
        for n in 0..data.len() {
            let mut cat = vec![0u8; 4];
            cat.extend_from_slice(&data[..n]);
            assert_eq!(bjhash_zero_prefixed(77, &data[..n]), bjhash(77, &cat), "n={n}");
        }
    }

    #[test]
    fn bjhash_lengths_do_not_panic() {
        let data: Vec<u8> = (0..40u8).collect();
        let mut seen = std::collections::HashSet::new();
        for n in 0..=data.len() {
            seen.insert(bjhash(1972, &data[..n]));
        }
        assert_eq!(seen.len(), data.len() + 1);
    }
}
