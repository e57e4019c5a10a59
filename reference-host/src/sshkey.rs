//! OpenSSH public keys, as `corral device add --key` reads them: a `.pub` file or one
//! `authorized_keys`-style line (`<type> <base64 blob> [comment]`), its fingerprint in the form
//! `ssh-keygen -lf` prints (`SHA256:` and the unpadded base64 of the blob's SHA-256, the form sshd
//! logs and a spawner passes to `serve --device`), and the `authorized_keys` line that makes the
//! key's connections run `corral serve` for that device.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use sha2::{Digest, Sha256};

/// One public key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    /// The key type (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`, ...).
    pub kind: String,
    /// The key blob, base64 as written.
    pub blob: String,
    /// The comment, if any.
    pub comment: Option<String>,
}

impl PublicKey {
    /// Reads the first key of `text` (a `.pub` file or a line); a readable error otherwise.
    pub fn parse(text: &str) -> Result<PublicKey, String> {
        // A private key (`-----BEGIN OPENSSH PRIVATE KEY-----`, or a PEM one) is the commonest
        // mistake: the `.pub` file beside it is what enrolment reads.
        if text.trim_start().starts_with("-----BEGIN") {
            let private = if text.contains("PRIVATE KEY") {
                "a private key"
            } else {
                "a PEM block, not an OpenSSH public key"
            };
            return Err(format!(
                "this is {private}: pass the public key, the `.pub` file beside it (for example \
                 ~/.ssh/id_ed25519.pub), or its one line `<type> <base64> [comment]`"
            ));
        }
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .ok_or("no public key in it")?;
        let mut fields = line.split_whitespace();
        let kind = fields.next().ok_or("no key type")?.to_owned();
        let blob = fields
            .next()
            .ok_or("no key after the type (expected `<type> <base64> [comment]`)")?
            .to_owned();
        let comment = {
            let rest: Vec<&str> = fields.collect();
            (!rest.is_empty()).then(|| rest.join(" "))
        };
        let bytes = STANDARD
            .decode(&blob)
            .map_err(|_| format!("the key after `{kind}` is not base64"))?;
        // The blob starts with its own type as an SSH string: a 4-byte length, then the name.
        let named = bytes
            .get(..4)
            .map(|n| u32::from_be_bytes([n[0], n[1], n[2], n[3]]) as usize)
            .and_then(|n| bytes.get(4..4 + n))
            .and_then(|name| std::str::from_utf8(name).ok());
        if named != Some(kind.as_str()) {
            return Err(format!("the key blob is not a `{kind}` key"));
        }
        Ok(PublicKey {
            kind,
            blob,
            comment,
        })
    }

    /// `SHA256:<unpadded base64 of the blob's SHA-256>`, as `ssh-keygen -lf` prints it.
    pub fn fingerprint(&self) -> String {
        let bytes = STANDARD
            .decode(&self.blob)
            .expect("the blob was checked when the key was read");
        format!("SHA256:{}", STANDARD_NO_PAD.encode(Sha256::digest(&bytes)))
    }

    /// The `authorized_keys` line that makes this key's connections run `corral serve` for it,
    /// and nothing else (`restrict`: no pty, no forwarding, no agent, no X11).
    pub fn authorized_keys_line(&self, corral: &str) -> String {
        let mut line = format!(
            "command=\"{corral} serve --stdio --device {}\",restrict {} {}",
            self.fingerprint(),
            self.kind,
            self.blob
        );
        if let Some(comment) = &self.comment {
            line.push(' ');
            line.push_str(comment);
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ed25519 key and the fingerprint `ssh-keygen -lf` printed for it.
    const KEY: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIvEAB0SjBWrQ6cO/cV1BfYgoCiOTBFJxvfHhA142n4X phone@example";
    const FINGERPRINT: &str = "SHA256:K90drbn+xhDcTEpRJcKOL5xcHqOS3Up+FM3wf2Du7z8";

    #[test]
    fn the_fingerprint_is_what_ssh_keygen_prints() {
        let key = PublicKey::parse(&format!("\n# a comment\n{KEY}\n")).unwrap();
        assert_eq!(key.kind, "ssh-ed25519");
        assert_eq!(key.comment.as_deref(), Some("phone@example"));
        assert_eq!(key.fingerprint(), FINGERPRINT);
    }

    #[test]
    fn the_authorized_keys_line_forces_serve_for_that_device() {
        let key = PublicKey::parse(KEY).unwrap();
        assert_eq!(
            key.authorized_keys_line("/usr/local/bin/corral"),
            format!(
                "command=\"/usr/local/bin/corral serve --stdio --device {FINGERPRINT}\",restrict {KEY}"
            )
        );
    }

    #[test]
    fn what_is_not_a_key_is_a_readable_error() {
        for (text, why) in [
            ("", "no public key"),
            ("ssh-ed25519", "no key after the type"),
            ("ssh-ed25519 !!!!", "not base64"),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
                "this is a private key: pass the public key, the `.pub` file",
            ),
            (
                "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n",
                "a PEM block, not an OpenSSH public key",
            ),
            (
                "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIIvEAB0SjBWrQ6cO/cV1BfYgoCiOTBFJxvfHhA142n4X",
                "not a `ssh-rsa` key",
            ),
        ] {
            let err = PublicKey::parse(text).unwrap_err();
            assert!(err.contains(why), "{text:?}: {err}");
        }
    }
}
