//! The guest's initramfs: an uncompressed newc cpio archive, which the
//! kernel unpacks as its root file system before it runs `/init`.
//!
//! Written here rather than by `cpio(1)`, which a fresh machine may lack,
//! and with the device node the kernel needs for `/dev/console` (it opens
//! it before `/init` runs, and the probe prints there), which an archive of
//! a directory made without root cannot hold. [`parse`] reads an archive
//! back (the tests check the writer with it).

/// The newc magic (no checksums).
const MAGIC: &[u8; 6] = b"070701";
/// Header bytes: the magic and 13 fields of 8 hex digits.
const HEADER: usize = 110;
/// The name of the last entry.
const TRAILER: &str = "TRAILER!!!";

/// `S_IFDIR`, `S_IFCHR`, `S_IFREG`: the file type bits of a mode.
pub const S_IFDIR: u32 = 0o040000;
/// A character device.
pub const S_IFCHR: u32 = 0o020000;
/// A regular file.
pub const S_IFREG: u32 = 0o100000;

/// One file of an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The path, relative (`dev/console`).
    pub name: String,
    /// Type and permission bits (`0o100755`).
    pub mode: u32,
    /// The device number of a device node (major, minor); (0, 0) otherwise.
    pub rdev: (u32, u32),
    /// The contents of a regular file.
    pub data: Vec<u8>,
}

impl Entry {
    /// A directory, mode 0755.
    pub fn dir(name: &str) -> Entry {
        Entry {
            name: name.into(),
            mode: S_IFDIR | 0o755,
            rdev: (0, 0),
            data: Vec::new(),
        }
    }

    /// A character device node, mode 0600.
    pub fn char_device(name: &str, major: u32, minor: u32) -> Entry {
        Entry {
            name: name.into(),
            mode: S_IFCHR | 0o600,
            rdev: (major, minor),
            data: Vec::new(),
        }
    }

    /// A regular file with permission bits `perm`.
    pub fn file(name: &str, perm: u32, data: Vec<u8>) -> Entry {
        Entry {
            name: name.into(),
            mode: S_IFREG | (perm & 0o7777),
            rdev: (0, 0),
            data,
        }
    }
}

fn pad4(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

fn header(out: &mut Vec<u8>, ino: u32, e: &Entry) {
    let nlink = if e.mode & 0o170000 == S_IFDIR { 2 } else { 1 };
    let fields = [
        ino,
        e.mode,
        0, // uid
        0, // gid
        nlink,
        0, // mtime
        e.data.len() as u32,
        0, // devmajor
        0, // devminor
        e.rdev.0,
        e.rdev.1,
        e.name.len() as u32 + 1,
        0, // check
    ];
    out.extend_from_slice(MAGIC);
    for f in fields {
        out.extend_from_slice(format!("{f:08x}").as_bytes());
    }
    out.extend_from_slice(e.name.as_bytes());
    out.push(0);
    pad4(out);
    out.extend_from_slice(&e.data);
    pad4(out);
}

/// The archive of `entries`, in order, and the trailer.
pub fn write(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.iter().map(|e| e.data.len() + 256).sum());
    for (i, e) in entries.iter().enumerate() {
        header(&mut out, i as u32 + 1, e);
    }
    let trailer = Entry {
        name: TRAILER.into(),
        mode: 0,
        rdev: (0, 0),
        data: Vec::new(),
    };
    header(&mut out, 0, &trailer);
    out
}

/// The entries of a newc archive, the trailer left out; an error names the
/// offset of the first thing that is not newc.
pub fn parse(bytes: &[u8]) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    let mut at = 0usize;
    loop {
        if !at.is_multiple_of(4) {
            return Err(format!("entry at offset {at} is not 4-byte aligned"));
        }
        let h = bytes
            .get(at..at + HEADER)
            .ok_or_else(|| format!("archive ends at offset {at} without {TRAILER}"))?;
        if &h[..6] != MAGIC {
            return Err(format!("no newc magic at offset {at}"));
        }
        let field = |i: usize| -> Result<u32, String> {
            let s = std::str::from_utf8(&h[6 + 8 * i..14 + 8 * i]).unwrap_or("");
            u32::from_str_radix(s, 16)
                .map_err(|_| format!("header field {i} at offset {at} is not hex: {s:?}"))
        };
        let (mode, size, rmaj, rmin, namesize) =
            (field(1)?, field(6)?, field(9)?, field(10)?, field(11)?);
        let name_at = at + HEADER;
        let name = bytes
            .get(name_at..name_at + namesize as usize)
            .filter(|n| n.last() == Some(&0))
            .ok_or_else(|| format!("bad name at offset {name_at}"))?;
        let name = String::from_utf8_lossy(&name[..name.len() - 1]).into_owned();
        let data_at = (name_at + namesize as usize).next_multiple_of(4);
        let data = bytes
            .get(data_at..data_at + size as usize)
            .ok_or_else(|| format!("{name}: data past the end of the archive"))?;
        at = (data_at + size as usize).next_multiple_of(4);
        if name == TRAILER {
            if at != bytes.len() {
                return Err(format!(
                    "{} bytes after the trailer (archive is {} bytes)",
                    bytes.len() - at,
                    bytes.len()
                ));
            }
            return Ok(out);
        }
        out.push(Entry {
            name,
            mode,
            rdev: (rmaj, rmin),
            data: data.to_vec(),
        });
    }
}

/// The guest's initramfs: `/dev/console` (5:1), the probe as `/init`, the
/// plan (`{"scenarios":[...]}`) and, if given, the scenario file that
/// replaces the probe's built-in one.
pub fn initrd(probe: &[u8], plan: &str, scenarios: Option<&str>) -> Vec<u8> {
    initrd_with(probe, plan, scenarios, None)
}

/// [`initrd`] with the C reproducer as `/bin/test_c12_skew`, if given.
pub fn initrd_with(
    probe: &[u8],
    plan: &str,
    scenarios: Option<&str>,
    reproducer: Option<&[u8]>,
) -> Vec<u8> {
    let mut entries = vec![
        Entry::dir("dev"),
        Entry::char_device("dev/console", 5, 1),
        // The reproducer's standard input (Command::output's default).
        Entry::char_device("dev/null", 1, 3),
        Entry::file("init", 0o755, probe.to_vec()),
        Entry::file("plan.json", 0o644, plan.as_bytes().to_vec()),
    ];
    if let Some(s) = scenarios {
        entries.push(Entry::file("scenarios.json", 0o644, s.as_bytes().to_vec()));
    }
    if let Some(r) = reproducer {
        entries.push(Entry::dir("bin"));
        entries.push(Entry::file("bin/test_c12_skew", 0o755, r.to_vec()));
    }
    write(&entries)
}
