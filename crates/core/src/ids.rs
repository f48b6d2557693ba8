//! Identifier and secret generation: CUID-shaped ids, bearer tokens and their hashes.

use std::sync::atomic::{AtomicU32, Ordering};

use rand::Rng;
use sha2::{Digest, Sha256};

const BASE36: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
static COUNTER: AtomicU32 = AtomicU32::new(0);

fn push_base36(out: &mut String, mut value: u64, width: usize) {
    let mut buf = vec![b'0'; width];
    for slot in buf.iter_mut().rev() {
        *slot = BASE36[(value % 36) as usize];
        value /= 36;
    }
    out.extend(buf.into_iter().map(char::from));
}

/// A new CUID-shaped id: `c` + 24 lowercase base-36 characters
/// (8 time, 4 counter, 12 random), so gateways' `c[a-z0-9]{20,30}` finds it.
pub fn new_id() -> String {
    let millis = chrono::Utc::now().timestamp_millis().max(0) as u64;
    let count = COUNTER.fetch_add(1, Ordering::Relaxed) as u64;
    let mut rng = rand::rng();
    let mut id = String::with_capacity(25);
    id.push('c');
    push_base36(&mut id, millis, 8);
    push_base36(&mut id, count % 36u64.pow(4), 4);
    push_base36(&mut id, rng.random::<u64>() % 36u64.pow(6), 6);
    push_base36(&mut id, rng.random::<u64>() % 36u64.pow(6), 6);
    id
}

/// The shape [`is_cuid`] accepts, as a regular expression (the API
/// document states it on every id).
pub const CUID_PATTERN: &str = r"^c[a-z0-9]{20,30}$";

/// The reference's task id check: [`CUID_PATTERN`].
pub fn is_cuid(value: &str) -> bool {
    let bytes = value.as_bytes();
    (21..=31).contains(&bytes.len())
        && bytes[0] == b'c'
        && bytes[1..]
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// A new random bearer token (256 bits, hex) with a readable prefix.
pub fn new_token(prefix: &str) -> String {
    let bytes: [u8; 32] = rand::rng().random();
    format!("{prefix}{}", hex::encode(bytes))
}

/// The stored form of a token: hex SHA-256. Tokens are never stored in clear.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Constant-time equality for secrets of possibly different lengths.
pub fn secure_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_cuid_shaped_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let id = new_id();
            assert_eq!(id.len(), 25, "{id}");
            assert!(is_cuid(&id), "{id}");
            assert!(seen.insert(id));
        }
    }

    #[test]
    fn cuid_check_matches_reference_regex() {
        assert!(is_cuid("cabcdefghij0123456789"));
        assert!(!is_cuid("Cabcdefghij0123456789"));
        assert!(!is_cuid("cabc"));
        assert!(!is_cuid("cabcdefghij0123456789-"));
        assert!(!is_cuid(&format!("c{}", "a".repeat(31))));
        assert!(!is_cuid("xabcdefghij0123456789"));
    }

    #[test]
    fn secure_eq_compares() {
        assert!(secure_eq(b"abc", b"abc"));
        assert!(!secure_eq(b"abc", b"abd"));
        assert!(!secure_eq(b"abc", b"abcd"));
    }
}
