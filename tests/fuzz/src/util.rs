// SPDX-License-Identifier: GPL-2.0
//! Small helpers shared by the fuzz checks: a byte reader that never fails (missing
//! bytes read as zero) and a deterministic chunking generator.

/// Reads fixed-size values from the fuzzer's bytes; past the end everything is zero.
pub struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    /// Starts reading at the beginning of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Input { data, pos: 0 }
    }

    /// Whether every byte was consumed.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// Next byte (0 past the end).
    pub fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos = self.pos.saturating_add(1);
        b
    }

    /// Next big-endian u16.
    pub fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.u8(), self.u8()])
    }

    /// Next big-endian u32.
    pub fn u32(&mut self) -> u32 {
        u32::from_be_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    /// Next big-endian u64.
    pub fn u64(&mut self) -> u64 {
        (u64::from(self.u32()) << 32) | u64::from(self.u32())
    }

    /// Up to `n` next bytes (fewer at the end).
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let start = self.pos.min(self.data.len());
        let end = start.saturating_add(n).min(self.data.len());
        self.pos = self.pos.saturating_add(n);
        &self.data[start..end]
    }

    /// All remaining bytes.
    pub fn rest(&mut self) -> &'a [u8] {
        let start = self.pos.min(self.data.len());
        self.pos = self.data.len();
        &self.data[start..]
    }
}

/// xorshift64*: a tiny deterministic generator for chunk sizes.
pub struct Rng(u64);

impl Rng {
    /// Seeds the generator (any seed, zero included).
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// Next value.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Splits `len` bytes into chunk sizes chosen by `seed`: 0 means one chunk; otherwise
/// sizes are 1..=4*seed, so small seeds give byte-by-byte feeding.
pub fn chunks(len: usize, seed: u8) -> Vec<usize> {
    if seed == 0 {
        return vec![len];
    }
    let mut rng = Rng::new(u64::from(seed));
    let max = usize::from(seed) * 4;
    let mut v = Vec::new();
    let mut left = len;
    while left > 0 {
        let n = (1 + (rng.next_u64() as usize) % max).min(left);
        v.push(n);
        left -= n;
    }
    v
}

/// Deterministic payload bytes for message `id`.
pub fn pattern(id: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u64).wrapping_mul(31).wrapping_add(id.wrapping_mul(7)) as u8)
        .collect()
}
