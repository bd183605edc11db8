//! Key files of the authenticated UDP link, and the randomness it needs: new keys
//! (`taroc gateway genkey`) and sender ids, from the kernel's `/dev/urandom`.
//!
//! A key file holds 64 hexadecimal digits (32 bytes) and a newline.

use std::fs::File;
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use crate::auth::{Key, KEY_LEN};
use crate::Error;

/// Fills `buf` from the kernel's random source.
fn urandom(buf: &mut [u8]) -> Result<(), Error> {
    File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(buf))
        .map_err(|e| Error::io("reading /dev/urandom", e))
}

/// A new random key.
pub fn generate() -> Result<Key, Error> {
    let mut bytes = [0u8; KEY_LEN];
    urandom(&mut bytes)?;
    Ok(Key::from_bytes(bytes))
}

/// A random 64-bit number (a sender id).
pub fn random_u64() -> Result<u64, Error> {
    let mut bytes = [0u8; 8];
    urandom(&mut bytes)?;
    Ok(u64::from_be_bytes(bytes))
}

/// The text of a key file: the key in hexadecimal and a newline.
pub fn format(key: &Key) -> String {
    format!("{}\n", key.to_hex())
}

/// Reads the key in file `path`; also returns a warning if group or others may read it.
pub fn read(path: &Path) -> Result<(Key, Option<String>), Error> {
    let shown = path.display();
    let metadata =
        std::fs::metadata(path).map_err(|e| Error::io(format!("reading key file {shown}"), e))?;
    // A key file is 65 bytes: anything much longer is not one (and is not read into memory).
    if metadata.len() > 1024 {
        return Err(Error::new(format!(
            "key file {shown}: {} bytes is too long for a key (64 hexadecimal digits, as \
             `taroc gateway genkey` writes)",
            metadata.len()
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("reading key file {shown}"), e))?;
    let key = Key::parse(&text).map_err(|e| Error::new(format!("key file {shown}: {e}")))?;
    let mode = metadata.permissions().mode();
    let warning = (mode & 0o044 != 0).then(|| {
        format!(
            "key file {shown} is readable by group or others (mode {:o}); `chmod 600 {shown}`",
            mode & 0o777
        )
    });
    Ok((key, warning))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_random_and_files_round_trip_with_a_permission_warning() {
        let (a, b) = (generate().unwrap(), generate().unwrap());
        assert_ne!(a, b);
        assert_ne!(random_u64().unwrap(), random_u64().unwrap());
        let dir = std::env::temp_dir().join(format!("taroc-keyfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("key");
        std::fs::write(&path, format(&a)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read(&path).unwrap(), (a.clone(), None));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let (key, warning) = read(&path).unwrap();
        assert_eq!(key, a);
        assert!(warning.unwrap().contains("mode 640"));
        std::fs::write(&path, "not a key\n").unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("key file") && e.contains("hexadecimal"), "{e}");
        std::fs::write(&path, vec![b'0'; 4096]).unwrap();
        assert!(read(&path).unwrap_err().to_string().contains("too long"));
        let e = read(&dir.join("absent")).unwrap_err().to_string();
        assert!(e.contains("reading key file"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
