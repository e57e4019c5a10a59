//! Cursor tokens: opaque to clients, authenticated by the host.
//!
//! A cursor addresses one event: a record (offset and length) and the event's index in it. The
//! token carries that position and the file's size when it was minted, and a MAC (HMAC-SHA256,
//! first 12 bytes) under a per-host secret over the position, the size, the pane, the file's
//! identity (device, inode) and the record's first and last bytes. So a token that was edited,
//! that names another pane or another file (replaced, rotated), or whose record is no longer
//! there (file truncated, rewritten in place) fails, while a file that only grew keeps every
//! cursor valid. The secret is 32 random bytes in `<runtime>/cursor.key` (0600), created once
//! and shared by every serve process of the host so a cursor survives a reconnect.

use std::io::{Read, Write};
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use schema::Cursor;
use sha2::Sha256;

use super::scan::Record;
use crate::files;

/// How many bytes of each end of a record the MAC covers.
pub const EDGE: u64 = 4096;

/// Version byte of the token layout.
const LAYOUT: u8 = 1;
/// Bytes of the MAC kept in a token.
const TAG: usize = 12;
/// The key file's name in the runtime dir.
const KEY_FILE: &str = "cursor.key";

/// Where an event is: its record and its index among the record's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub record: Record,
    pub part: u32,
}

/// What a cursor is bound to besides its position.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    /// The pane the cursor was minted for.
    pub pane: &'a str,
    /// The transcript file's device.
    pub dev: u64,
    /// The transcript file's inode.
    pub ino: u64,
}

/// A token's contents, before its MAC is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub position: Position,
    /// The file's size when the cursor was minted.
    pub minted_size: u64,
    tag: [u8; TAG],
}

/// The host's cursor secret.
#[derive(Clone)]
pub struct Keyring {
    key: [u8; 32],
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keyring(..)")
    }
}

impl Keyring {
    /// The secret in `runtime_dir`, created there (0600) when absent. Two processes racing to
    /// create it agree on one: the key is written to a private temp file and linked into place,
    /// which fails for the loser, who then reads the winner's.
    pub fn load_or_create(runtime_dir: &Path) -> std::io::Result<Keyring> {
        let path = runtime_dir.join(KEY_FILE);
        match read_key(&path) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            other => return other.map(|key| Keyring { key }),
        }
        let mut key = [0u8; 32];
        let mut nonce = [0u8; 8];
        for bytes in [&mut key[..], &mut nonce[..]] {
            getrandom::fill(bytes).map_err(|err| std::io::Error::other(err.to_string()))?;
        }
        let temp = runtime_dir.join(format!("{KEY_FILE}.{}.tmp", u64::from_le_bytes(nonce)));
        let mut file = files::create_new(&temp, 0o600)?;
        let written = file.write_all(&key).and_then(|()| file.sync_all());
        let linked = written.and_then(|()| std::fs::hard_link(&temp, &path));
        let _ = std::fs::remove_file(&temp);
        match linked {
            Ok(()) => Ok(Keyring { key }),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                read_key(&path).map(|key| Keyring { key })
            }
            Err(err) => Err(err),
        }
    }

    /// A keyring with a given secret (tests).
    #[cfg(test)]
    pub fn from_key(key: [u8; 32]) -> Keyring {
        Keyring { key }
    }

    fn tag(
        &self,
        binding: &Binding<'_>,
        minted_size: u64,
        position: Position,
        edges: &[u8],
    ) -> [u8; 32] {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .expect("HMAC takes a key of any length");
        mac.update(b"corral-cursor-1\0");
        mac.update(&(binding.pane.len() as u64).to_le_bytes());
        mac.update(binding.pane.as_bytes());
        for n in [
            binding.dev,
            binding.ino,
            minted_size,
            position.record.offset,
            position.record.len,
            u64::from(position.part),
        ] {
            mac.update(&n.to_le_bytes());
        }
        mac.update(edges);
        mac.finalize().into_bytes().into()
    }

    /// A token for `position`, minted now that the file is `size` bytes long. `edges` are the
    /// record's first and last bytes ([`super::scan::record_edges`]).
    pub fn mint(
        &self,
        binding: &Binding<'_>,
        size: u64,
        position: Position,
        edges: &[u8],
    ) -> Cursor {
        let tag = self.tag(binding, size, position, edges);
        let mut bytes = vec![LAYOUT];
        for n in [
            position.record.offset,
            position.record.len,
            u64::from(position.part),
            size,
        ] {
            put_varint(&mut bytes, n);
        }
        bytes.extend_from_slice(&tag[..TAG]);
        Cursor(URL_SAFE_NO_PAD.encode(bytes))
    }

    /// True when `decoded` was minted by this host for this binding over these record bytes.
    pub fn verify(&self, binding: &Binding<'_>, decoded: &Decoded, edges: &[u8]) -> bool {
        let tag = self.tag(binding, decoded.minted_size, decoded.position, edges);
        // Constant-time comparison of the kept prefix.
        tag[..TAG]
            .iter()
            .zip(decoded.tag.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }
}

fn read_key(path: &Path) -> std::io::Result<[u8; 32]> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    <[u8; 32]>::try_from(bytes.as_slice()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{} is not a 32-byte key", path.display()),
        )
    })
}

/// Reads a token's layout; `None` for anything that is not one (before any MAC check).
pub fn decode(cursor: &Cursor) -> Option<Decoded> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor.0.as_bytes()).ok()?;
    let (&layout, mut rest) = bytes.split_first()?;
    if layout != LAYOUT {
        return None;
    }
    let mut next = || take_varint(&mut rest);
    let (offset, len, part, minted_size) = (next()?, next()?, next()?, next()?);
    let tag: [u8; TAG] = rest.try_into().ok()?;
    let end = offset.checked_add(len)?;
    if end >= minted_size {
        // The record and its newline must have been inside the file when minted.
        return None;
    }
    Some(Decoded {
        position: Position {
            record: Record { offset, len },
            part: u32::try_from(part).ok()?,
        },
        minted_size,
        tag,
    })
}

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn take_varint(input: &mut &[u8]) -> Option<u64> {
    let mut n: u64 = 0;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = input.split_first()?;
        *input = rest;
        n |= u64::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(n);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding(pane: &str) -> Binding<'_> {
        Binding {
            pane,
            dev: 7,
            ino: 42,
        }
    }

    fn position() -> Position {
        Position {
            record: Record {
                offset: 1000,
                len: 250,
            },
            part: 2,
        }
    }

    #[test]
    fn a_minted_cursor_verifies_and_decodes_to_its_position() {
        let keys = Keyring::from_key([9; 32]);
        let cursor = keys.mint(&binding("%1"), 5000, position(), b"edges");
        let decoded = decode(&cursor).unwrap();
        assert_eq!(decoded.position, position());
        assert_eq!(decoded.minted_size, 5000);
        assert!(keys.verify(&binding("%1"), &decoded, b"edges"));
        assert!(
            cursor.0.len() < 40,
            "short enough for a window of 200: {}",
            cursor.0
        );
    }

    #[test]
    fn another_pane_file_key_or_record_content_fails() {
        let keys = Keyring::from_key([9; 32]);
        let cursor = keys.mint(&binding("%1"), 5000, position(), b"edges");
        let decoded = decode(&cursor).unwrap();
        assert!(!keys.verify(&binding("%2"), &decoded, b"edges"));
        let other_file = Binding {
            ino: 43,
            ..binding("%1")
        };
        assert!(!keys.verify(&other_file, &decoded, b"edges"));
        assert!(!keys.verify(&binding("%1"), &decoded, b"edgez"));
        assert!(!Keyring::from_key([8; 32]).verify(&binding("%1"), &decoded, b"edges"));
    }

    #[test]
    fn every_flipped_byte_of_a_token_fails() {
        let keys = Keyring::from_key([3; 32]);
        let cursor = keys.mint(&binding("%1"), 5000, position(), b"e");
        let raw = URL_SAFE_NO_PAD.decode(cursor.0.as_bytes()).unwrap();
        for at in 0..raw.len() {
            for bit in 0..8 {
                let mut bad = raw.clone();
                bad[at] ^= 1 << bit;
                let token = Cursor(URL_SAFE_NO_PAD.encode(&bad));
                let ok = decode(&token).is_some_and(|d| keys.verify(&binding("%1"), &d, b"e"));
                assert!(!ok, "byte {at} bit {bit}");
            }
        }
        for junk in ["", "!!", "AAAA", &cursor.0[..cursor.0.len() - 2]] {
            let ok =
                decode(&Cursor(junk.into())).is_some_and(|d| keys.verify(&binding("%1"), &d, b"e"));
            assert!(!ok, "{junk}");
        }
    }

    #[test]
    fn the_key_file_is_created_once_0600_and_shared() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let path = dir.path().to_owned();
                crate::threads::spawn(move || Keyring::load_or_create(&path).unwrap().key)
            })
            .collect();
        let keys: Vec<[u8; 32]> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert!(keys.windows(2).all(|w| w[0] == w[1]), "one key for all");
        let mode = std::fs::metadata(dir.path().join(KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temp files left");
        std::fs::write(dir.path().join(KEY_FILE), b"short").unwrap();
        assert!(Keyring::load_or_create(dir.path()).is_err());
    }
}
