//! A table's specification written back as `poslab table`'s words reads back, through the
//! command line's own reader, to the same specification: every kind options describe, with
//! scalings, partial rotary widths, given frequencies, ALiBi's forms and windows.

mod common;

use poslab::engine::TableSpec;
use poslab::table_args::table_spec_from_words;
use poslab::table_args::words::table_words;

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_owned).collect()
}

fn assert_reads_back(spec: &TableSpec) -> Vec<String> {
    let written = table_words(spec).unwrap_or_else(|| panic!("no words for {spec:?}"));
    let read =
        table_spec_from_words(&written).unwrap_or_else(|e| panic!("{}: {e}", written.join(" ")));
    assert_eq!(&read, spec, "{}", written.join(" "));
    written
}

#[test]
fn every_kind_options_describe_reads_back_to_itself() {
    let mut written = 0;
    for spec in common::every_kind() {
        let from_an_array = matches!(
            spec,
            TableSpec::RopeApply { .. }
                | TableSpec::Rope2dMixed { .. }
                | TableSpec::PatchSimilarity(_)
                | TableSpec::SinCos2d(_)
                | TableSpec::Rope2dAxial(_)
                | TableSpec::SinCos2dResample { .. }
                | TableSpec::RopeAxes(_)
                | TableSpec::RopeCacheError(_)
                | TableSpec::RopeScoreDrift(_)
                | TableSpec::AtPositions(_)
        );
        if from_an_array {
            continue;
        }
        // The context lab's model carries a name and scaling of its own that options do
        // not: its table is compared by the values it computes.
        if let TableSpec::RopeUnseen(unseen) = &spec {
            let written = table_words(&spec).unwrap();
            let read = table_spec_from_words(&written).unwrap();
            let TableSpec::RopeUnseen(read) = read else {
                panic!("{written:?} reads as {read:?}")
            };
            assert_eq!(
                (read.seq, &read.freqs, read.model.head_dim, read.model.base),
                (
                    unseen.seq,
                    &unseen.freqs,
                    unseen.model.head_dim,
                    unseen.model.base
                )
            );
            continue;
        }
        assert_reads_back(&spec);
        written += 1;
    }
    assert!(written >= 20, "{written} kinds written");
}

#[test]
fn models_scalings_and_registered_kinds_read_back() {
    for text in [
        "rope-cos --seq 64 --dim 128 --base 500000 --layout half --scaling llama3 --factor 8 \
         --low-freq-factor 1 --high-freq-factor 4 --original-max-position-embeddings 8192",
        "rope-sin --seq 16 --dim 128 --start 4090 --scaling yarn --factor 4 \
         --original-max-position-embeddings 32768 --partial-rotary-factor 0.5",
        "rope-cos-sin --seq 8 --dim 64 --format pairs --scaling dynamic --factor 2 \
         --max-position-embeddings 4",
        "rope-angles --seq 8 --dim 8 --inv-freq 1,0.3792690190732249,0.14,0.0545559478116852",
        "rope-inv-freq --dim 8 --seq 9000 --scaling longrope --long-factor 1,2.5,3,4 \
         --short-factor 1,1,1.5,2 --original-max-position-embeddings 4096 \
         --max-position-embeddings 131072",
        "rope-attention-factor --dim 64 --scaling yarn --factor 32 --mscale 0.707 \
         --mscale-all-dim 0.707 --original-max-position-embeddings 4096",
        "alibi --heads 12 --seq 16 --mode symmetric --head 3",
        "alibi --heads 8 --seq 10 --form mpt",
        "alibi --heads 6 --seq 20 --queries 3 --zero-heads 2",
        "rope-permutation --heads 8 --head-dim 16 --direction half-to-interleaved",
        "rope-stretch --dim 128 --base 500000 --scaling llama3 --factor 8 --low-freq-factor 1 \
         --high-freq-factor 4 --original-max-position-embeddings 8192",
        "rope-stretch --dim 96 --rotary-dim 32 --scaling dynamic --factor 2 \
         --max-position-embeddings 2048 --seq 8192",
        "sinusoidal --seq 5 --dim 6 --max-period 10000 --layout split --spacing t2t --first cos \
         --scale 0.5",
        "t5-buckets --seq 12 --bidirectional false --num-buckets 16 --max-distance 64",
    ] {
        let spec = table_spec_from_words(&words(text)).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_reads_back(&spec);
    }
}

/// A table from an array has no words: the dialog then prints none rather than a wrong one.
#[test]
fn tables_from_arrays_have_no_words() {
    let input = ndarray::Array2::from_elem((4, 8), 0.5);
    let spec = TableSpec::RopeApply {
        input,
        layout: poslab::encoding::PairLayout::Half,
        base: 10_000.0,
        start: 0,
        freqs: Default::default(),
    };
    assert!(table_words(&spec).is_none());
}
