//! `poslab check FILE --as permuted-from ORIGINAL --heads H [--kv-heads K]`: is FILE's weight
//! ORIGINAL's with the rows of each head reordered from one RoPE pair layout to the other, as
//! conversion scripts do for q_proj and k_proj? Both files are read a chunk at a time into a
//! fingerprint per row (16 bytes a row, whatever the file's size), and the rows compared
//! exactly; a mismatch names the heads and the cause ([`crate::check::permutation`]).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser};

use crate::check::permutation::{RowVerdict, judge_rows};
use crate::encoding::pair_permutation::Question;
use crate::import::StoredFloat;
use crate::import::tables::OpenedTable;
use crate::options::{
    CliError, ExpectedOptions, FileOptions, PermutationOptions, SizeOptions, flag,
};

const NOTES: &str = "\
FILE holds ORIGINAL's rows reordered within each head, so that a model written for one pair
layout computes the same scores under the other (Meta's interleaved weights to Hugging Face's
rotate_half: interleaved-to-half). Each row is compared exactly; where the files store
different float types, both are compared in the narrower one (a cast, as conversion scripts
make). Exit status 0: every row is where it should be; 1: a mismatch, with the heads that
differ and the cause where one is known; 2: bad input.

--tensor given once names the tensor of both files; given twice, FILE's then ORIGINAL's.

Examples:
  poslab check hf.safetensors --tensor model.layers.0.self_attn.q_proj.weight \\
      --as permuted-from consolidated.safetensors --tensor layers.0.attention.wq.weight --heads 32
  poslab check k_hf.npy --as permuted-from k_meta.npy --heads 32 --kv-heads 8";

/// `poslab check FILE --as permuted-from ORIGINAL`.
#[derive(Debug, Parser)]
#[command(
    name = "check",
    bin_name = "poslab check",
    about = "Check a weight permuted between RoPE's pair layouts against the original, row by row",
    after_help = NOTES,
    allow_negative_numbers = true,
    mut_arg("tensor", |a| a.action(clap::ArgAction::Append)
        .help("The tensor of a .safetensors file; twice: FILE's, then ORIGINAL's")),
    mut_arg("atol", |a| a.hide(true)),
    mut_arg("rtol", |a| a.hide(true)),
    mut_arg("seq", |a| a.hide(true)),
    mut_arg("dim", |a| a.hide(true)),
    mut_arg("head", |a| a.hide(true)),
    mut_arg("grid_h", |a| a.hide(true)),
    mut_arg("grid_w", |a| a.hide(true)),
    mut_arg("heads", |a| a.help("The model's query heads (num_attention_heads), 1 to 65536")),
    mut_arg("expected", |a| a.required(true).value_name("permuted-from")
        .value_parser(["permuted-from"]).allow_hyphen_values(false)
        .help("permuted-from: FILE is ORIGINAL's rows permuted between the pair layouts")),
)]
pub struct PermutedArgs {
    /// The permuted weight: .npy or .safetensors, [rows, columns] or a bias [rows]
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    #[command(flatten)]
    pub relation: ExpectedOptions,

    /// The original weight
    #[arg(value_name = "ORIGINAL")]
    pub original: PathBuf,

    #[command(flatten)]
    pub reading: FileOptions,

    #[command(flatten)]
    pub sizes: SizeOptions,

    #[command(flatten)]
    pub permutation: PermutationOptions,
}

/// Whether `args` (the program name first) ask for this check: `check ... --as permuted-from`.
pub(super) fn asks_for_it(args: &[OsString]) -> bool {
    args.get(1).is_some_and(|a| a == "check")
        && (args
            .windows(2)
            .any(|w| w[0] == "--as" && w[1] == "permuted-from")
            || args.iter().any(|a| a == "--as=permuted-from"))
}

/// Parses and runs the check; returns its exit status.
pub(super) fn run(args: Vec<OsString>) -> i32 {
    let matches = match PermutedArgs::command().try_get_matches_from(&args[1..]) {
        Ok(matches) => matches,
        Err(error) => return super::report_clap_error(&error),
    };
    match PermutedArgs::from_arg_matches(&matches) {
        Ok(parsed) => super::finish(check(&parsed, &matches)),
        Err(error) => super::report_clap_error(&error),
    }
}

/// The two files' tensors, and the verdict.
fn check(args: &PermutedArgs, matches: &ArgMatches) -> Result<i32, CliError> {
    for id in ["atol", "rtol", "seq", "dim", "head", "grid_h", "grid_w"] {
        if matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine) {
            return Err(CliError::usage(format!(
                "{} does not apply to --as permuted-from: rows are compared exactly; its options are --heads --kv-heads --head-dim --direction --tensor",
                flag(id)
            )));
        }
    }
    let question = args.permutation.question(args.sizes.heads)?;
    let tensors: Vec<&String> = matches
        .get_many::<String>("tensor")
        .map(Iterator::collect)
        .unwrap_or_default();
    if tensors.len() > 2 {
        return Err(CliError::usage(
            "--tensor is given at most twice: FILE's tensor, then ORIGINAL's",
        ));
    }
    let file_tensor = tensors.first().map(|t| t.as_str());
    let original_tensor = tensors.get(1).or(tensors.first()).map(|t| t.as_str());
    let open = |path: &PathBuf, tensor| {
        OpenedTable::open(path, tensor, 0).map_err(|e| CliError::usage(e.to_string()))
    };
    let permuted = open(&args.file, file_tensor)?;
    let original = open(&args.original, original_tensor)?;
    let describe = |path: &PathBuf, tensor: Option<&str>, table: &OpenedTable| {
        let kind = table.stored.map_or("integers", StoredFloat::name);
        match tensor {
            Some(name) => format!("{} ({name}, {:?}, {kind})", path.display(), table.shape),
            None => format!("{} ({:?}, {kind})", path.display(), table.shape),
        }
    };
    let permuted_name = describe(&args.file, file_tensor, &permuted);
    let original_name = describe(&args.original, original_tensor, &original);
    for (table, path) in [(&permuted, &args.file), (&original, &args.original)] {
        if table.shape.is_empty() || table.shape.len() > 2 {
            return Err(CliError::usage(format!(
                "{} has shape {:?}: a projection's weight is [rows, columns], its bias [rows]",
                path.display(),
                table.shape
            )));
        }
    }
    if permuted.shape != original.shape {
        return Err(CliError::usage(format!(
            "{} has shape {:?} where {} has {:?}: a permutation reorders rows and keeps the shape",
            args.file.display(),
            permuted.shape,
            args.original.display(),
            original.shape
        )));
    }
    let round_to = narrower(permuted.stored, original.stored);
    let values = permuted.len() + original.len();
    let working =
        super::progress::Working::new(format!("reading {values} values"), values < 1 << 24);
    let permuted_prints = permuted
        .row_prints(round_to)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let original_prints = original
        .row_prints(round_to)
        .map_err(|e| CliError::usage(e.to_string()))?;
    drop(working);
    let verdict = judge_rows(&original_prints, &permuted_prints, &question)
        .map_err(|e| CliError::usage(format!("{} {e}", args.file.display())))?;
    let text = report(
        &verdict,
        &question,
        &permuted_name,
        &original_name,
        round_to,
    );
    crate::table_args::output::print(&text)?;
    Ok(if verdict.matches { 0 } else { 1 })
}

/// The narrower of two stored float types, when they differ: the type a cast left.
fn narrower(a: Option<StoredFloat>, b: Option<StoredFloat>) -> Option<StoredFloat> {
    match (a, b) {
        (Some(a), Some(b)) if a != b => Some(if a.fraction_bits() < b.fraction_bits() {
            a
        } else {
            b
        }),
        _ => None,
    }
}

/// The verdict as printed.
fn report(
    verdict: &RowVerdict,
    question: &Question,
    permuted: &str,
    original: &str,
    round_to: Option<StoredFloat>,
) -> String {
    let mut text = if verdict.matches {
        format!(
            "MATCH: {permuted} is {original} permuted {}\n",
            question.direction.name()
        )
    } else {
        format!(
            "MISMATCH: {permuted} is not {original} permuted {}\n",
            question.direction.name()
        )
    };
    text.push_str(&verdict.details(question));
    if let Some(kind) = round_to {
        text.push_str(&format!(
            "  compared in {}: the wider file's values rounded to it, as a cast does\n",
            kind.name()
        ));
    }
    text
}

/// A user's permute function's outputs on random weights (Python's `assert_permutation`).
pub struct PermuteCase {
    pub query: ndarray::Array2<f64>,
    pub key: ndarray::Array2<f64>,
    pub permuted_query: ndarray::Array2<f64>,
    pub permuted_key: ndarray::Array2<f64>,
    pub heads: i64,
    pub kv_heads: Option<i64>,
    pub head_dim: i64,
    pub direction: String,
    pub seed: u64,
}

/// What `assert_permutation` found.
#[derive(Debug, Clone)]
pub struct PermuteReport {
    pub passes: bool,
    /// Query heads whose scores changed.
    pub wrong_heads: Vec<usize>,
    /// The largest change of a score, relative to |q_h| |k_g|.
    pub largest_change: f64,
    /// The position pairs (m, n) tried.
    pub positions: Vec<(u64, u64)>,
    /// Each cause the rows show, in words.
    pub causes: Vec<String>,
    pub text: String,
}

/// A score that changes by more than this part of |q| |k| is another score: an exact
/// permutation changes only the order of a sum (about 1e-16).
const SCORE_TOLERANCE: f64 = 1e-9;

/// The position pairs the scores are compared at: short, and past 100,000 (where a
/// permutation that swaps a slow pair with a fast one shows even when short prompts agree).
pub const SCORE_POSITIONS: [(u64, u64); 12] = [
    (0, 0),
    (1, 0),
    (7, 3),
    (31, 30),
    (127, 0),
    (1000, 999),
    (4095, 17),
    (8192, 8000),
    (65_536, 1),
    (100_000, 99_990),
    (100_001, 3),
    (131_071, 65_536),
];

/// The question `assert_permutation`'s arguments ask, each in its range (the options' own
/// refusals).
pub fn question_of(
    heads: i64,
    kv_heads: Option<i64>,
    head_dim: i64,
    direction: &str,
) -> Result<Question, CliError> {
    let direction = crate::encoding::pair_permutation::Direction::from_name(direction)
        .ok_or_else(|| {
            CliError::usage(format!(
                "direction={direction:?} is not allowed: use \"interleaved-to-half\" or \"half-to-interleaved\""
            ))
        })?;
    PermutationOptions {
        kv_heads,
        head_dim: Some(head_dim),
        direction,
    }
    .question(Some(heads))
}

/// Checks what a permute function returned: the scores under RoPE, original weights in the
/// direction's source layout against the permuted ones in its target layout, and, where they
/// differ, the rows of each projection for the cause.
pub fn check_permute_function(case: &PermuteCase) -> Result<PermuteReport, CliError> {
    let question = question_of(case.heads, case.kv_heads, case.head_dim, &case.direction)?;
    let direction = question.direction;
    let query_question = Question {
        kv_heads: None,
        ..question
    };
    for (given, returned, what) in [
        (&case.query, &case.permuted_query, "W_q"),
        (&case.key, &case.permuted_key, "W_k"),
    ] {
        if given.dim() != returned.dim() {
            return Err(CliError::usage(format!(
                "the function returned shape {:?} for {what} of shape {:?}: it must return the weight with its rows reordered",
                returned.shape(),
                given.shape()
            )));
        }
    }
    let mut random = crate::encoding::random::SplitMix64::new(case.seed);
    let hidden: Vec<f64> = (0..case.query.ncols())
        .map(|_| random.next_unit() * 2.0 - 1.0)
        .collect();
    let original = crate::check::permutation::Projections {
        query: case.query.view(),
        key: case.key.view(),
    };
    let permuted = crate::check::permutation::Projections {
        query: case.permuted_query.view(),
        key: case.permuted_key.view(),
    };
    let scores = crate::check::permutation::compare_scores(
        &original,
        &permuted,
        &question,
        &hidden,
        &SCORE_POSITIONS,
    )
    .map_err(CliError::usage)?;
    let wrong_heads: Vec<usize> = (0..scores.worst_per_head.len())
        .filter(|&h| {
            scores.worst_per_head[h].is_nan() || scores.worst_per_head[h] > SCORE_TOLERANCE
        })
        .collect();
    let largest_change = scores.worst_per_head.iter().copied().fold(0.0, f64::max);
    let passes = wrong_heads.is_empty();
    let heads = question.query_heads;
    let kv = question.heads();
    let head_dim = question
        .head_dim_of(case.key.nrows())
        .map_err(CliError::usage)?;
    let farthest = SCORE_POSITIONS.iter().map(|&(m, _)| m).max().unwrap_or(0);
    let mut text = if passes {
        format!(
            "the permutation keeps every score: {heads} query heads and {kv} kv heads of {head_dim}, {}, at {} position pairs up to {farthest} (largest change {largest_change:.1e} of |q||k|)\n",
            direction.name(),
            SCORE_POSITIONS.len()
        )
    } else {
        let mut line = format!(
            "the permutation changes the scores: query heads {} of {heads} differ",
            crate::check::permutation::ranges(&wrong_heads)
        );
        if let Some((h, m, n, before, after)) = scores.worst {
            line.push_str(&format!(
                " (head {h} at m = {m}, n = {n}: q·k {before:.6} in the {} layout with the original weights, {after:.6} in the {} layout with the permuted ones)",
                direction.from_layout().rope_name(),
                direction.to_layout().rope_name()
            ));
        }
        line.push('\n');
        line
    };
    let mut causes = Vec::new();
    if !passes {
        let prints = crate::import::prints_of_rows;
        for (given, returned, asked, what) in [
            (&case.query, &case.permuted_query, &query_question, "W_q"),
            (&case.key, &case.permuted_key, &question, "W_k"),
        ] {
            let verdict = judge_rows(&prints(given.view()), &prints(returned.view()), asked)
                .map_err(|e| CliError::usage(format!("{what} {e}")))?;
            if verdict.matches {
                text.push_str(&format!(
                    "  {what} ({} heads of {head_dim}): its rows are right\n",
                    asked.heads()
                ));
            } else {
                text.push_str(&format!("  {what}:\n"));
                for line in verdict.details(asked).lines() {
                    text.push_str(&format!("  {line}\n"));
                }
                if let Some(cause) = &verdict.cause {
                    causes.push(format!("{what}: {}", cause.sentence(asked, head_dim)));
                }
            }
        }
    }
    Ok(PermuteReport {
        passes,
        wrong_heads,
        largest_change,
        positions: SCORE_POSITIONS.to_vec(),
        causes,
        text,
    })
}
