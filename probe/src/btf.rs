//! The running kernel's own type information (`/sys/kernel/btf/vmlinux`):
//! struct member offsets and enum values, so that the probe's kprobes can
//! follow pointers (a memcg to its cgroup to its id) and name the stat
//! items on any kernel build, without a table per release.
//!
//! The format is the kernel's BPF Type Format (Documentation/bpf/btf.rst):
//! a header, a type section (one record per type, numbered from 1), and a
//! string section. Only what the probe needs is read: structs and unions
//! with their members, typedefs and qualifiers to see through, and enums.

/// One type record, reduced to what the lookups need.
#[derive(Clone, Debug)]
enum Ty {
    /// A struct or union: its name and members (name, type id, bit offset).
    Composite {
        name: String,
        members: Vec<(String, u32, u32)>,
    },
    /// A typedef, `const`, `volatile`, `restrict` or type tag: the type it
    /// stands for.
    Alias(u32),
    /// An enum (32 or 64 bit): its members' names and values.
    Enum(Vec<(String, i64)>),
    /// Anything else.
    Other,
}

/// The kernel's BTF, parsed.
pub struct Btf {
    /// Type id `i` is `types[i]` (id 0 is `void`).
    types: Vec<Ty>,
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    b.get(off..off + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn str_at(strings: &[u8], off: u32) -> String {
    let s = strings.get(off as usize..).unwrap_or(&[]);
    let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    String::from_utf8_lossy(&s[..end]).into_owned()
}

impl Btf {
    /// Read and parse `/sys/kernel/btf/vmlinux`.
    pub fn load() -> Result<Btf, String> {
        let path = "/sys/kernel/btf/vmlinux";
        let data = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        Btf::parse(&data).map_err(|e| format!("{path}: {e}"))
    }

    /// Parse BTF data (little-endian, as on x86-64).
    pub fn parse(data: &[u8]) -> Result<Btf, String> {
        let magic = data.get(0..2).ok_or("truncated header")?;
        if magic != [0x9f, 0xeb] {
            return Err("not little-endian BTF (magic 0xeb9f)".into());
        }
        let hdr_len = u32_at(data, 4).ok_or("truncated header")? as usize;
        let field = |i: usize| u32_at(data, 8 + 4 * i).map(|v| v as usize);
        let (type_off, type_len, str_off, str_len) = (
            field(0).ok_or("truncated header")?,
            field(1).ok_or("truncated header")?,
            field(2).ok_or("truncated header")?,
            field(3).ok_or("truncated header")?,
        );
        let body = data.get(hdr_len..).ok_or("truncated body")?;
        let tsec = body
            .get(type_off..type_off + type_len)
            .ok_or("type section out of range")?;
        let strings = body
            .get(str_off..str_off + str_len)
            .ok_or("string section out of range")?;
        let mut types = vec![Ty::Other];
        let mut p = 0usize;
        while p + 12 <= tsec.len() {
            let name_off = u32_at(tsec, p).unwrap_or(0);
            let info = u32_at(tsec, p + 4).unwrap_or(0);
            let size_or_type = u32_at(tsec, p + 8).unwrap_or(0);
            let vlen = (info & 0xffff) as usize;
            let kind = (info >> 24) & 0x1f;
            let kflag = info >> 31 == 1;
            p += 12;
            let ty = match kind {
                // struct, union: members of 12 bytes.
                4 | 5 => {
                    let mut members = Vec::with_capacity(vlen);
                    for i in 0..vlen {
                        let m = p + 12 * i;
                        let name = str_at(strings, u32_at(tsec, m).unwrap_or(0));
                        let t = u32_at(tsec, m + 4).unwrap_or(0);
                        let raw = u32_at(tsec, m + 8).unwrap_or(0);
                        // With kind_flag, the low 24 bits are the bit offset
                        // and the high 8 the bitfield size.
                        let bits = if kflag { raw & 0xff_ffff } else { raw };
                        members.push((name, t, bits));
                    }
                    p += 12 * vlen;
                    Ty::Composite {
                        name: str_at(strings, name_off),
                        members,
                    }
                }
                // enum: 8 bytes a member (name, signed 32-bit value).
                6 => {
                    let mut vals = Vec::with_capacity(vlen);
                    for i in 0..vlen {
                        let m = p + 8 * i;
                        let name = str_at(strings, u32_at(tsec, m).unwrap_or(0));
                        let v = u32_at(tsec, m + 4).unwrap_or(0) as i32 as i64;
                        vals.push((name, v));
                    }
                    p += 8 * vlen;
                    Ty::Enum(vals)
                }
                // enum64: 12 bytes a member (name, low and high 32 bits).
                19 => {
                    let mut vals = Vec::with_capacity(vlen);
                    for i in 0..vlen {
                        let m = p + 12 * i;
                        let name = str_at(strings, u32_at(tsec, m).unwrap_or(0));
                        let lo = u32_at(tsec, m + 4).unwrap_or(0) as u64;
                        let hi = u32_at(tsec, m + 8).unwrap_or(0) as u64;
                        vals.push((name, (hi << 32 | lo) as i64));
                    }
                    p += 12 * vlen;
                    Ty::Enum(vals)
                }
                // typedef, volatile, const, restrict, type tag.
                8..=11 | 18 => Ty::Alias(size_or_type),
                // int, var, decl tag: 4 more bytes.
                1 | 14 | 17 => {
                    p += 4;
                    Ty::Other
                }
                // array: 12 more bytes.
                3 => {
                    p += 12;
                    Ty::Other
                }
                // func proto: 8 bytes a parameter; datasec: 12 a variable.
                13 => {
                    p += 8 * vlen;
                    Ty::Other
                }
                15 => {
                    p += 12 * vlen;
                    Ty::Other
                }
                // ptr, fwd, func, float: nothing more.
                2 | 7 | 12 | 16 => Ty::Other,
                k => return Err(format!("unknown BTF kind {k} at type {}", types.len())),
            };
            types.push(ty);
        }
        Ok(Btf { types })
    }

    fn resolve(&self, mut id: u32) -> u32 {
        for _ in 0..16 {
            match self.types.get(id as usize) {
                Some(Ty::Alias(t)) => id = *t,
                _ => break,
            }
        }
        id
    }

    /// The byte offset of `member` in `struct name` (the first struct of
    /// that name with members), looking through anonymous structs and
    /// unions; `member` may be a path (`css.cgroup`).
    pub fn offset(&self, name: &str, member: &str) -> Option<u32> {
        let id = self.types.iter().position(
            |t| matches!(t, Ty::Composite { name: n, members } if n == name && !members.is_empty()),
        )? as u32;
        let mut at = id;
        let mut total = 0u32;
        for part in member.split('.') {
            let (bits, t) = self.find_member(at, part)?;
            total += bits;
            at = self.resolve(t);
        }
        total.is_multiple_of(8).then_some(total / 8)
    }

    /// (bit offset, type id) of `member` in composite `id`.
    fn find_member(&self, id: u32, member: &str) -> Option<(u32, u32)> {
        let Some(Ty::Composite { members, .. }) = self.types.get(self.resolve(id) as usize) else {
            return None;
        };
        for (name, t, bits) in members {
            if name == member {
                return Some((*bits, *t));
            }
        }
        // Anonymous members: look inside.
        for (name, t, bits) in members {
            if name.is_empty() {
                if let Some((b, ty)) = self.find_member(*t, member) {
                    return Some((bits + b, ty));
                }
            }
        }
        None
    }

    /// The value of enumerator `name`, in whichever enum has it.
    pub fn enum_value(&self, name: &str) -> Option<i64> {
        self.types.iter().find_map(|t| match t {
            Ty::Enum(vals) => vals.iter().find(|(n, _)| n == name).map(|(_, v)| *v),
            _ => None,
        })
    }
}
