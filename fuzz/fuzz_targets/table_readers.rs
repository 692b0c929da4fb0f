//! Every file reader on arbitrary bytes: a message or a table, never a panic, a hang or a huge
//! allocation. The first byte picks the reader.
#![no_main]

use libfuzzer_sys::fuzz_target;
use poslab::import::tables::{TableFormat, parse_table};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let _ = match selector % 5 {
        0 => parse_table(bytes, TableFormat::Npy, None),
        1 => parse_table(bytes, TableFormat::Csv, None),
        2 => parse_table(bytes, TableFormat::Safetensors, None),
        3 => parse_table(bytes, TableFormat::Safetensors, Some("t")),
        _ => poslab::import::parse_npy_f64(bytes),
    };
});
