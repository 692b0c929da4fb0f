//! Refusing, before any allocation, a table that would not fit in memory.

use super::{TableSpec, ValueKind};

/// A table that does not fit in the memory this machine has available.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MemoryError {
    #[error("{kind} table has more elements than memory can address; reduce {options}")]
    Overflow {
        kind: &'static str,
        options: &'static str,
    },
    #[error(
        "{kind} table of shape {shape:?} needs {needed} of memory, more than the {available} \
         available; reduce {options}"
    )]
    TooLarge {
        kind: &'static str,
        shape: Vec<usize>,
        needed: String,
        available: String,
        options: &'static str,
    },
}

impl MemoryError {
    /// What does not fit, without the options to reduce (for a table the user did not ask
    /// for by its options: one of identify's hypotheses).
    pub fn without_advice(&self) -> String {
        match self {
            MemoryError::Overflow { kind, .. } => {
                format!("{kind} table has more elements than memory can address")
            }
            MemoryError::TooLarge {
                kind,
                shape,
                needed,
                available,
                ..
            } => format!(
                "{kind} table of shape {shape:?} needs {needed} of memory, more than the {available} available"
            ),
        }
    }
}

/// Bytes per element while computing and writing: the f64 result plus a converted copy.
fn bytes_per_element(kind: ValueKind) -> u128 {
    match kind {
        ValueKind::Real => 8 + 8,
        ValueKind::Index => 4 + 4,
    }
}

/// Memory this process can still allocate, or `None` if nothing says: the least of what the
/// system can give without swapping (`MemAvailable`), what the address-space limit
/// (`ulimit -v`, RLIMIT_AS) leaves, and what the memory limits of the process's cgroups
/// (`memory.max`, or cgroup v1's `memory.limit_in_bytes`) leave.
pub fn available_memory_bytes() -> Option<u64> {
    [
        system_available(),
        address_space_left(),
        cgroup_left(),
        web_page_memory_left(),
    ]
    .into_iter()
    .flatten()
    .min()
}

/// On the web, what a wasm32 page's memory may still grow by: it addresses 4 GiB at most
/// (browsers may refuse less, which the allocation then says).
fn web_page_memory_left() -> Option<u64> {
    #[cfg(target_arch = "wasm32")]
    {
        let in_use = core::arch::wasm32::memory_size(0) as u64 * 65_536;
        Some((1u64 << 32).saturating_sub(in_use))
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        None
    }
}

/// `MemAvailable` of `/proc/meminfo`.
fn system_available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    kib_field(&meminfo, "MemAvailable:")
}

/// A `Name:   123 kB` line's value in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The soft address-space limit less the address space in use (`VmSize`): every allocation
/// counts against it, touched or not.
fn address_space_left() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    // "Max address space   <soft>   <hard>   bytes"
    let limit: u64 = line.split_whitespace().nth(3)?.parse().ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used = kib_field(&status, "VmSize:").unwrap_or(0);
    Some(limit.saturating_sub(used))
}

/// The least room left under the memory limit of the process's cgroup and its ancestors.
fn cgroup_left() -> Option<u64> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut least: Option<u64> = None;
    let mut consider = |left: Option<u64>| {
        if let Some(left) = left {
            least = Some(least.map_or(left, |l| l.min(left)));
        }
    };
    for line in membership.lines() {
        // "hierarchy-id:controllers:path"; cgroup v2 has id 0 and no controllers.
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let (roots, limit_file, usage_file): (&[&str], _, _) =
            if id == "0" && controllers.is_empty() {
                (
                    &["/sys/fs/cgroup", "/sys/fs/cgroup/unified"],
                    "memory.max",
                    "memory.current",
                )
            } else if controllers.split(',').any(|c| c == "memory") {
                (
                    &["/sys/fs/cgroup/memory"],
                    "memory.limit_in_bytes",
                    "memory.usage_in_bytes",
                )
            } else {
                continue;
            };
        for root in roots {
            // The cgroup itself, then each ancestor up to the root of the mount.
            let mut dir = std::path::PathBuf::from(format!("{root}{path}"));
            loop {
                consider(room_under(&dir, limit_file, usage_file));
                if dir.as_os_str().len() <= root.len() || !dir.pop() {
                    break;
                }
            }
        }
    }
    least
}

/// `limit - usage` in `dir`, when `dir` sets a limit (`max`, or cgroup v1's near-2^63 value,
/// means none).
fn room_under(dir: &std::path::Path, limit_file: &str, usage_file: &str) -> Option<u64> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let limit: u64 = read(limit_file)?.trim().parse().ok()?;
    if limit >= 1 << 62 {
        return None;
    }
    let usage: u64 = read(usage_file)
        .and_then(|u| u.trim().parse().ok())
        .unwrap_or(0);
    Some(limit.saturating_sub(usage))
}

/// When the system does not say, assume no more than this many bytes.
const FALLBACK_LIMIT_BYTES: u64 = 8 << 30;

impl TableSpec {
    /// Refuses a validated spec whose table would not fit in `available_bytes`.
    pub fn check_fits(&self, available_bytes: Option<u64>) -> Result<Vec<usize>, MemoryError> {
        self.check_streams(available_bytes, usize::MAX)
    }

    /// Refuses a validated spec whose table, written block by block (`values_in_flight`
    /// values held at once: a block being computed and one being written), would not fit in
    /// `available_bytes`; a table streamed to a file needs its blocks in memory, not itself.
    pub fn check_streams(
        &self,
        available_bytes: Option<u64>,
        values_in_flight: usize,
    ) -> Result<Vec<usize>, MemoryError> {
        let shape = self.shape().ok_or_else(|| MemoryError::Overflow {
            kind: self.kind_name(),
            options: self.size_options(),
        })?;
        let elements: u128 = shape.iter().map(|&n| n as u128).product();
        let held = elements.min(values_in_flight as u128);
        let needed = held * bytes_per_element(self.value_kind());
        let available = available_bytes.unwrap_or(FALLBACK_LIMIT_BYTES);
        if needed > available as u128 || needed > isize::MAX as u128 {
            return Err(MemoryError::TooLarge {
                kind: self.kind_name(),
                shape,
                needed: human_bytes(needed),
                available: human_bytes(available as u128),
                options: self.size_options(),
            });
        }
        Ok(shape)
    }
}

/// `1536` → `"1.5 KiB"`.
pub fn human_bytes(bytes: u128) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
