//! Key files of the authenticated UDP link, and the randomness it needs: new keys
//! (`taroc gateway genkey`) and sender ids, from the kernel's `/dev/urandom`.
//!
//! A key file holds 64 hexadecimal digits (32 bytes) and a newline. Only a regular file is
//! read as one, and at most [`MAX_KEY_FILE_BYTES`] of it; a key file that group or others may
//! read or write is read with a warning ([`permission_warning`]).

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

/// The longest key file read: a key file is 65 bytes (64 digits and a newline); anything much
/// longer is not one, and no more than this is ever read (`/dev/zero` included).
pub const MAX_KEY_FILE_BYTES: u64 = 1024;

/// What a file that is not a regular file is, for the message refusing it.
fn kind_of(file_type: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// The warning for a key file that group or others may read or write (`mode`'s permission
/// bits), naming it and its mode, or `None` if only its owner may (mode 600 or 400).
pub fn permission_warning(shown: &str, mode: u32) -> Option<String> {
    let (read, write) = (mode & 0o044 != 0, mode & 0o022 != 0);
    let what = match (read, write) {
        (false, false) => return None,
        (true, false) => "readable by group or others (they can forge frames with the key)",
        (false, true) => "writable by group or others (they can replace the key)",
        (true, true) => {
            "readable and writable by group or others (they can forge frames with the key, or \
             replace it)"
        }
    };
    Some(format!(
        "key file {shown} is {what}: mode {:03o}; `chmod 600 {shown}`",
        mode & 0o777
    ))
}

/// Reads the key in file `path`; also returns a warning if group or others may read or write
/// it ([`permission_warning`]: the key is a secret, and whoever can change it can take the
/// link, as ssh warns of a private key file). Only a regular file is read (a directory, FIFO,
/// device or socket is refused, a FIFO without waiting for a writer), at most
/// [`MAX_KEY_FILE_BYTES`] of it.
pub fn read(path: &Path) -> Result<(Key, Option<String>), Error> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let shown = path.display().to_string();
    let not_regular = |file_type: std::fs::FileType| {
        Error::new(format!(
            "key file {shown} is {}, not a regular file (a key file holds 64 hexadecimal \
             digits, as `taroc gateway genkey` writes)",
            kind_of(file_type)
        ))
    };
    let metadata =
        std::fs::metadata(path).map_err(|e| Error::io(format!("reading key file {shown}"), e))?;
    if !metadata.is_file() {
        return Err(not_regular(metadata.file_type()));
    }
    // Non-blocking, in case the path became a FIFO since: opening one would wait for a writer.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(format!("reading key file {shown}"), e))?;
    // What was opened is what is read: check it again.
    let metadata = file
        .metadata()
        .map_err(|e| Error::io(format!("reading key file {shown}"), e))?;
    if !metadata.is_file() {
        return Err(not_regular(metadata.file_type()));
    }
    let mut bytes = Vec::new();
    file.take(MAX_KEY_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(format!("reading key file {shown}"), e))?;
    if bytes.len() as u64 > MAX_KEY_FILE_BYTES {
        return Err(Error::new(format!(
            "key file {shown}: longer than {MAX_KEY_FILE_BYTES} bytes, too long for a key (64 \
             hexadecimal digits, as `taroc gateway genkey` writes)"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::new(format!(
            "key file {shown}: not text (a key file holds 64 hexadecimal digits, as `taroc \
             gateway genkey` writes)"
        ))
    })?;
    let key = Key::parse(&text).map_err(|e| Error::new(format!("key file {shown}: {e}")))?;
    let warning = permission_warning(&shown, metadata.permissions().mode());
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

    /// Only a regular file is read, and never more than a key file's worth: a directory, a
    /// device and a FIFO are refused at once, each named for what it is.
    #[test]
    fn only_a_regular_file_of_bounded_length_is_read() {
        let dir = std::env::temp_dir().join(format!("taroc-keyfile-kinds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = read(&dir).unwrap_err().to_string();
        assert!(
            e.contains("is a directory") && !e.contains("too long"),
            "{e}"
        );
        let e = read(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("/dev/zero is a character device"), "{e}");
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            // Opening a FIFO for reading would wait for a writer: refused without waiting.
            let (done, wait) = std::sync::mpsc::channel();
            let path = fifo.clone();
            std::thread::spawn(move || done.send(read(&path).map(|_| ())).unwrap());
            let e = wait
                .recv_timeout(std::time::Duration::from_secs(10))
                .expect("a FIFO is refused without blocking")
                .unwrap_err()
                .to_string();
            assert!(e.contains("is a FIFO"), "{e}");
        }
        // A regular file longer than the bound is refused, however long it claims to be.
        let long = dir.join("long");
        std::fs::write(&long, vec![b'0'; MAX_KEY_FILE_BYTES as usize + 1]).unwrap();
        let e = read(&long).unwrap_err().to_string();
        assert!(e.contains("too long"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Group or others able to read the key, or to write it, is worth a warning naming the
    /// file and its mode; the owner alone is not.
    #[test]
    fn keys_others_may_read_or_write_are_warned_of() {
        for mode in [0o600, 0o400, 0o700] {
            assert_eq!(permission_warning("k", mode), None, "{mode:o}");
        }
        for (mode, what) in [
            (0o640, "readable by group"),
            (0o604, "readable by group or others"),
            (0o620, "writable by group or others"),
            (0o602, "writable"),
            (0o666, "readable and writable"),
        ] {
            let warning = permission_warning("link.key", 0o100000 | mode).unwrap();
            assert!(
                warning.contains(what)
                    && warning.contains("link.key")
                    && warning.contains(&format!("mode {mode:03o}")),
                "{mode:o}: {warning}"
            );
        }
        // Read from a file, the warning comes with the key.
        let dir = std::env::temp_dir().join(format!("taroc-keyfile-mode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("key");
        let key = generate().unwrap();
        std::fs::write(&path, format(&key)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o620)).unwrap();
        let (read_key, warning) = read(&path).unwrap();
        assert_eq!(read_key, key);
        assert!(warning.unwrap().contains("writable"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
