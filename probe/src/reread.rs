//! Files a scenario rereads from offset 0, opened before it enters its
//! memcgs so that a read allocates nothing there.

use crate::sys::cstr;

/// An open file reread from offset 0 (no allocation in the caller's memcg
/// after the first read).
pub(crate) struct Reread {
    pub(crate) fd: i32,
}

impl Reread {
    pub(crate) fn open(path: &str) -> Result<Self, String> {
        let p = cstr(path);
        // SAFETY: valid path.
        let fd = unsafe { libc::open(p.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(format!("open {path}: {}", std::io::Error::last_os_error()));
        }
        Ok(Reread { fd })
    }
    pub(crate) fn read<'a>(&self, buf: &'a mut [u8]) -> &'a [u8] {
        // SAFETY: fd is open; buf is writable for its length.
        unsafe {
            libc::lseek(self.fd, 0, libc::SEEK_SET);
            let mut len = 0usize;
            loop {
                let n = libc::read(
                    self.fd,
                    buf[len..].as_mut_ptr() as *mut libc::c_void,
                    buf.len() - len,
                );
                if n <= 0 {
                    break;
                }
                len += n as usize;
                if len == buf.len() {
                    break;
                }
            }
            &buf[..len]
        }
    }
}

impl Drop for Reread {
    fn drop(&mut self) {
        // SAFETY: fd is ours.
        unsafe { libc::close(self.fd) };
    }
}

/// The value of `key` in a `name value` file.
pub(crate) fn field(text: &[u8], key: &str) -> u64 {
    for line in text.split(|&b| b == b'\n') {
        let mut it = line.split(|&b| b == b' ');
        if it.next() == Some(key.as_bytes()) {
            if let Some(v) = it.next() {
                return std::str::from_utf8(v)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
            }
        }
    }
    0
}
