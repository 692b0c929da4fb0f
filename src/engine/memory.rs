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

/// Bytes per element while computing and writing: the f64 result plus a converted copy.
fn bytes_per_element(kind: ValueKind) -> u128 {
    match kind {
        ValueKind::Real => 8 + 8,
        ValueKind::Index => 4 + 4,
    }
}

/// Memory the system can give without swapping (`MemAvailable`), or `None` if unknown.
pub fn available_memory_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// When the system does not say, assume no more than this many bytes.
const FALLBACK_LIMIT_BYTES: u64 = 8 << 30;

impl TableSpec {
    /// Refuses a validated spec whose table would not fit in `available_bytes`.
    pub fn check_fits(&self, available_bytes: Option<u64>) -> Result<Vec<usize>, MemoryError> {
        let shape = self.shape().ok_or_else(|| MemoryError::Overflow {
            kind: self.kind_name(),
            options: self.size_options(),
        })?;
        let elements: u128 = shape.iter().map(|&n| n as u128).product();
        let needed = elements * bytes_per_element(self.value_kind());
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
