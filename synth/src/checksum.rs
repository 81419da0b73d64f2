//! FNV-1a, 64 bits: the checksum of a journal line ([`crate::enumerate::checkpoint`],
//! the `synth find` journal) and of a shard's tests ([`crate::enumerate::shard`]).
//! Not a security measure (the checks of every test read back are): it
//! catches edits, truncation and bit rot cheaply.

/// FNV-1a, 64 bits, fed piece by piece (a shard's tests are too many to
/// gather into one buffer first).
#[derive(Clone, Copy, Debug)]
pub struct Fnv64(pub u64);

impl Default for Fnv64 {
    fn default() -> Fnv64 {
        Fnv64(0xcbf29ce484222325)
    }
}

impl Fnv64 {
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x100000001b3);
        }
    }
}
