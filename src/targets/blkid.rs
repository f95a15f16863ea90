//! "Does this device hold data?" as libblkid answers it: the library `blkid`, `wipefs`,
//! `mount` and udev use, with every superblock and partition table it knows, backup headers
//! and bad checksums included. Probed the way `wipefs -n` lists signatures, so iogauge refuses
//! exactly what wipefs would show.
//!
//! libblkid (util-linux) is on every Linux system, but its headers are not: it is loaded at run
//! time (`libblkid.so.1`, whose ABI has been stable since 2009) so that building iogauge needs
//! nothing but Rust. Without the library no device can be called blank, and writes to block
//! devices need `--allow-write`.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::os::fd::RawFd;
use std::sync::OnceLock;

use libloading::Library;

use crate::error::{Result, runtime};

// From <blkid/blkid.h> (util-linux 2.38).
const BLKID_SUBLKS_LABEL: c_int = 1 << 1;
const BLKID_SUBLKS_UUID: c_int = 1 << 3;
const BLKID_SUBLKS_TYPE: c_int = 1 << 5;
const BLKID_SUBLKS_USAGE: c_int = 1 << 7;
const BLKID_SUBLKS_MAGIC: c_int = 1 << 9;
const BLKID_SUBLKS_BADCSUM: c_int = 1 << 10;
const BLKID_PARTS_FORCE_GPT: c_int = 1 << 1;
const BLKID_PARTS_MAGIC: c_int = 1 << 3;

type Probe = *mut c_void;

/// The functions iogauge calls, resolved once.
struct Blkid {
    new_probe: unsafe extern "C" fn() -> Probe,
    free_probe: unsafe extern "C" fn(Probe),
    set_device: unsafe extern "C" fn(Probe, c_int, i64, i64) -> c_int,
    enable_superblocks: unsafe extern "C" fn(Probe, c_int) -> c_int,
    set_superblocks_flags: unsafe extern "C" fn(Probe, c_int) -> c_int,
    enable_partitions: unsafe extern "C" fn(Probe, c_int) -> c_int,
    set_partitions_flags: unsafe extern "C" fn(Probe, c_int) -> c_int,
    do_probe: unsafe extern "C" fn(Probe) -> c_int,
    lookup_value: unsafe extern "C" fn(Probe, *const c_char, *mut *const c_char, *mut usize) -> c_int,
    /// Kept loaded for as long as the functions above are used (the whole process).
    _lib: Library,
}

fn blkid() -> Result<&'static Blkid> {
    static LIB: OnceLock<Result<Blkid>> = OnceLock::new();
    LIB.get_or_init(|| {
        // SAFETY: loading libblkid runs no initialisers with preconditions; each symbol below
        // is declared with the signature <blkid/blkid.h> gives it.
        unsafe {
            let lib = Library::new("libblkid.so.1").map_err(|e| runtime(format!("cannot load libblkid.so.1 ({e})")))?;
            macro_rules! f {
                ($name:literal) => {
                    *lib.get(concat!($name, "\0").as_bytes()).map_err(|e| runtime(format!("libblkid: {e}")))?
                };
            }
            Ok(Blkid {
                new_probe: f!("blkid_new_probe"),
                free_probe: f!("blkid_free_probe"),
                set_device: f!("blkid_probe_set_device"),
                enable_superblocks: f!("blkid_probe_enable_superblocks"),
                set_superblocks_flags: f!("blkid_probe_set_superblocks_flags"),
                enable_partitions: f!("blkid_probe_enable_partitions"),
                set_partitions_flags: f!("blkid_probe_set_partitions_flags"),
                do_probe: f!("blkid_do_probe"),
                lookup_value: f!("blkid_probe_lookup_value"),
                _lib: lib,
            })
        }
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// One signature libblkid found: a filesystem, RAID member, crypto volume, swap area (its
/// `TYPE`) or a partition table (`PTTYPE`), and where its magic is.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// What libblkid calls it: `ext4`, `swap`, `crypto_LUKS`, `linux_raid_member`, `gpt`...
    pub kind: String,
    /// A partition table (else a superblock).
    pub table: bool,
    /// Byte offset of its magic on the device.
    pub offset: Option<u64>,
}

impl std::fmt::Display for Signature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.table { "partition table" } else { "signature" };
        write!(f, "{} {what}", self.kind)?;
        if let Some(o) = self.offset {
            write!(f, " at offset {o:#x}")?;
        }
        Ok(())
    }
}

/// Every signature on the device open at `fd`, as `wipefs -n` lists them: superblocks (bad
/// checksums too, so a damaged primary header with an intact backup still counts) and
/// partition tables (GPT even behind a protective MBR). Reads only.
pub fn signatures(fd: RawFd) -> Result<Vec<Signature>> {
    let b = blkid()?;
    // SAFETY: the probe is created, used and freed here; libblkid reads through `fd`, which
    // the caller keeps open for the call, and the strings it returns live until the next
    // probe step, before which they are copied.
    unsafe {
        let pr = (b.new_probe)();
        if pr.is_null() {
            return Err(runtime("libblkid: cannot make a probe"));
        }
        let found = (|| {
            if (b.set_device)(pr, fd, 0, 0) != 0 {
                return Err(runtime("libblkid cannot read the device"));
            }
            (b.enable_superblocks)(pr, 1);
            (b.set_superblocks_flags)(
                pr,
                BLKID_SUBLKS_MAGIC
                    | BLKID_SUBLKS_TYPE
                    | BLKID_SUBLKS_USAGE
                    | BLKID_SUBLKS_LABEL
                    | BLKID_SUBLKS_UUID
                    | BLKID_SUBLKS_BADCSUM,
            );
            (b.enable_partitions)(pr, 1);
            (b.set_partitions_flags)(pr, BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT);
            let value = |name: &CStr| {
                let mut data: *const c_char = std::ptr::null();
                let ok = (b.lookup_value)(pr, name.as_ptr(), &mut data, std::ptr::null_mut()) == 0 && !data.is_null();
                ok.then(|| CStr::from_ptr(data).to_string_lossy().into_owned())
            };
            let mut found = Vec::new();
            // 0: a signature; 1: no more; negative: an error (an unreadable device).
            loop {
                match (b.do_probe)(pr) {
                    0 => {}
                    1 => break,
                    _ => return Err(runtime("libblkid could not read the whole device")),
                }
                let (kind, table, offset) = if let Some(t) = value(c"TYPE") {
                    (t, false, value(c"SBMAGIC_OFFSET"))
                } else if let Some(t) = value(c"PTTYPE") {
                    (t, true, value(c"PTMAGIC_OFFSET"))
                } else {
                    continue;
                };
                let offset = offset.and_then(|o| o.parse().ok());
                let sig = Signature { kind, table, offset };
                if !found.contains(&sig) {
                    found.push(sig);
                }
            }
            Ok(found)
        })();
        (b.free_probe)(pr);
        found
    }
}
