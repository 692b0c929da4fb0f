//! What each of the older table kinds reads (those written into [`TableSpec`]'s own
//! variants): the options it takes ([`options_of`]), and, for a kind whose reading is more
//! than a few lines, the function that reads them (through [`Reader`]) into its table's
//! specification.

use super::super::reader::Reader;
use super::super::*;

// The RoPE kinds' options beyond the textbook ones; a scaling's own parameters (--factor
// and the rest) are checked against the scaling chosen in check_options_apply.
const ROTARY: &str = "rotary_dim";
const FACTOR: &str = "partial_rotary_factor";
const SCALING: &str = "scaling";
const SINUSOIDAL: &[&str] = &[
    "seq",
    "dim",
    "base",
    "max_period",
    "start",
    "layout",
    "spacing",
    "first",
    "scale",
    "dtype",
];
const SINUSOIDAL_OPTIONS: &[&str] = &[
    "seq",
    "dim",
    "base",
    "max_period",
    "start",
    "positions",
    "position_scale",
    "layout",
    "spacing",
    "first",
    "scale",
    "dtype",
    "arith",
    "freq_form",
];
const DOT_DECAY_OPTIONS: &[&str] = &[
    "seq",
    "dim",
    "base",
    "max_period",
    "start",
    "layout",
    "spacing",
    "first",
    "scale",
    "anchor",
    "dtype",
];
const ROPE_INV_FREQ_OPTIONS: &[&str] = &[
    "dim",
    "base",
    "seq",
    "dtype",
    "arith",
    "freq_form",
    ROTARY,
    "inv_freq",
    FACTOR,
    SCALING,
];
const ROPE_ATTENTION_FACTOR_OPTIONS: &[&str] =
    &["dim", "base", "dtype", ROTARY, "inv_freq", FACTOR, SCALING];
const ROPE_ANGLES_OPTIONS: &[&str] = &[
    "seq",
    "dim",
    "base",
    "start",
    "positions",
    "position_scale",
    "dtype",
    "arith",
    "freq_form",
    ROTARY,
    "inv_freq",
    FACTOR,
    SCALING,
];
const ROPE_COS_OPTIONS: &[&str] = &[
    "seq",
    "dim",
    "base",
    "start",
    "positions",
    "position_scale",
    "layout",
    "dtype",
    "arith",
    "freq_form",
    ROTARY,
    "inv_freq",
    FACTOR,
    SCALING,
];
const ROPE_AXES_OPTIONS: &[&str] = &[
    "ids",
    "grid",
    "theta",
    "base",
    "axes_dim",
    "mrope_section",
    "dim",
    "values",
    "layout",
    "dtype",
    "arith",
    "freq_form",
];
const ROPE_COS_SIN_OPTIONS: &[&str] = &[
    "seq",
    "dim",
    "base",
    "start",
    "positions",
    "position_scale",
    "format",
    "dtype",
    "arith",
    "freq_form",
    ROTARY,
    "inv_freq",
    FACTOR,
    SCALING,
];
const ROPE_UNSEEN_OPTIONS: &[&str] = &[
    "seq",
    "dim",
    "base",
    "train_len",
    "dtype",
    ROTARY,
    FACTOR,
    SCALING,
];
const ROPE_APPLY_OPTIONS: &[&str] = &[
    "input",
    "layout",
    "base",
    "start",
    "positions",
    "position_scale",
    "dtype",
    "arith",
    "freq_form",
    ROTARY,
    "inv_freq",
    FACTOR,
    SCALING,
];
const ALIBI_SLOPES_OPTIONS: &[&str] = &[
    "heads",
    "seq",
    "train_len",
    "slope_scaling",
    "dtype",
    "arith",
];
const ALIBI_OPTIONS: &[&str] = &[
    "heads",
    "seq",
    "queries",
    "zero_heads",
    "mode",
    "form",
    "head",
    "train_len",
    "slope_scaling",
    "dtype",
    "arith",
];
const ALIBI2D_OPTIONS: &[&str] = &["heads", "grid_h", "grid_w", "head", "dtype"];
const PATCH_DISTANCE_OPTIONS: &[&str] = &["grid_h", "grid_w", "metric", "dtype"];
const SIN_COS2D_OPTIONS: &[&str] = &[
    "grid_h",
    "grid_w",
    "dim",
    "base",
    "order",
    "raster",
    "prefix_rows",
    "position_scale",
    "dtype",
    "arith",
    "freq_form",
];
const SIN_COS2D_RESAMPLE_OPTIONS: &[&str] = &[
    "input",
    "from_grid",
    "grid_h",
    "grid_w",
    "prefix_rows",
    "mode",
    "antialias",
    "dim",
    "base",
    "order",
    "raster",
    "dtype",
];
const ROPE2D_AXIAL_OPTIONS: &[&str] = &[
    "grid_h",
    "grid_w",
    "dim",
    "theta",
    "values",
    "layout",
    "axis_order",
    "position_scale",
    "dtype",
];
const ROPE2D_MIXED_OPTIONS: &[&str] = &["grid_h", "grid_w", "freqs", "dtype"];
const T5_BUCKETS_OPTIONS: &[&str] = &["seq", "num_buckets", "max_distance", "bidirectional"];
const RELATIVE_CLIP_OPTIONS: &[&str] = &["seq", "max_relative"];
const BINARY_OPTIONS: &[&str] = &["seq", "dim", "start", "dtype"];
const ROPE_CACHE_ERROR_OPTIONS: &[&str] = &[
    "seq",
    "dim",
    "base",
    "start",
    "arith",
    "positions_in",
    "dtype",
    ROTARY,
    "inv_freq",
    FACTOR,
    SCALING,
];
const ROPE_SCORE_DRIFT_OPTIONS: &[&str] =
    &["seq", "dim", "base", "offset", "arith", "seed", "dtype"];

/// Which options each kind reads, by clap id (the field name). `output`, `backend` and
/// `verbose` apply to every kind.
pub(crate) fn options_of(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Sinusoidal => SINUSOIDAL_OPTIONS,
        Kind::Similarity => SINUSOIDAL,
        Kind::DotDecay => DOT_DECAY_OPTIONS,
        Kind::RopeInvFreq => ROPE_INV_FREQ_OPTIONS,
        Kind::RopeAttentionFactor => ROPE_ATTENTION_FACTOR_OPTIONS,
        Kind::RopeAngles => ROPE_ANGLES_OPTIONS,
        Kind::RopeCos | Kind::RopeSin => ROPE_COS_OPTIONS,
        Kind::RopeAxes => ROPE_AXES_OPTIONS,
        Kind::RopeCosSin => ROPE_COS_SIN_OPTIONS,
        Kind::RopeUnseen => ROPE_UNSEEN_OPTIONS,
        Kind::RopeApply => ROPE_APPLY_OPTIONS,
        Kind::AlibiSlopes => ALIBI_SLOPES_OPTIONS,
        Kind::Alibi => ALIBI_OPTIONS,
        Kind::Alibi2d => ALIBI2D_OPTIONS,
        Kind::PatchDistance => PATCH_DISTANCE_OPTIONS,
        Kind::SinCos2d => SIN_COS2D_OPTIONS,
        Kind::SinCos2dResample => SIN_COS2D_RESAMPLE_OPTIONS,
        Kind::Rope2dAxial => ROPE2D_AXIAL_OPTIONS,
        Kind::Rope2dMixed => ROPE2D_MIXED_OPTIONS,
        Kind::T5Buckets => T5_BUCKETS_OPTIONS,
        Kind::RelativeClip => RELATIVE_CLIP_OPTIONS,
        Kind::Binary => BINARY_OPTIONS,
        Kind::RopeCacheError => ROPE_CACHE_ERROR_OPTIONS,
        Kind::RopeScoreDrift => ROPE_SCORE_DRIFT_OPTIONS,
        // A registered kind's list is in its own module.
        _ => &[],
    }
}

/// rope-cache-error: the cos cache's error in a compute type.
pub(in crate::table_args) fn rope_cache_error(r: &Reader) -> Result<TableSpec, CliError> {
    let args = r.args;
    let dim = r.even_dim()?;
    let (seq, start, arith) = (r.seq()?, r.start()?, compute_type(args)?);
    // Positions cast to float16 overflow past its range; the cache computed "in"
    // float16 casts only the cosines, which it always holds.
    float16_holds_positions(
        start.saturating_add(seq as u64).saturating_sub(1),
        args.arithmetic.positions_in,
    )?;
    Ok(TableSpec::RopeCacheError(Box::new(
        crate::encoding::precision::CacheErrorParams {
            rope: RopeParams {
                seq,
                dim,
                base: args.sinusoidal.base(),
                start,
            },
            freqs: rope_frequencies(args, dim)?,
            arith,
            positions_in: args.arithmetic.positions_in,
        },
    )))
}

/// rope-score-drift: a score's drift in a compute type.
pub(in crate::table_args) fn rope_score_drift(r: &Reader) -> Result<TableSpec, CliError> {
    let args = r.args;
    let (seq, arith) = (r.seq()?, compute_type(args)?);
    let offset = args
        .arithmetic
        .offset
        .map(|d| non_negative("offset", d))
        .transpose()?
        .unwrap_or(0) as u64;
    Ok(TableSpec::RopeScoreDrift(
        crate::encoding::precision::ScoreDriftParams {
            seq,
            dim: r.even_dim()?,
            base: args.sinusoidal.base(),
            offset,
            arith,
            seed: args.arithmetic.seed,
        },
    ))
}

/// rope-unseen: the angles a scaling turns beyond those seen in training.
pub(in crate::table_args) fn rope_unseen(r: &Reader) -> Result<TableSpec, CliError> {
    let args = r.args;
    let dim = r.even_dim()?;
    let freqs = rope_frequencies(args, dim)?;
    let trained = args.alibi.train_len.ok_or_else(|| {
        CliError::usage("rope-unseen needs --train-len L, the length the model was trained on")
    })?;
    let trained = usize::try_from(trained)
        .ok()
        .filter(|&l| l >= 2)
        .ok_or_else(|| {
            CliError::usage(format!(
                "--train-len {trained} is not allowed: use 2 or more"
            ))
        })?;
    Ok(TableSpec::RopeUnseen(Box::new(UnseenParams {
        model: RopeModel {
            name: String::new(),
            head_dim: dim,
            base: args.sinusoidal.base(),
            rotary_dim: freqs.rotary_dim,
            trained,
            scaling: Default::default(),
        },
        freqs,
        seq: r.seq()?,
    })))
}

/// rope-apply: the `--input` array rotated.
pub(in crate::table_args) fn rope_apply(r: &Reader) -> Result<TableSpec, CliError> {
    let args = r.args;
    let layout = args.sinusoidal.layout.unwrap_or_default();
    // Check the cheap parameters before reading a possibly large file.
    encoding::check_base("base", args.sinusoidal.base())?;
    let start = r.start()?;
    let (input, named) = match (&args.handed_input, args.input.as_deref()) {
        (Some(input), _) => (input.clone(), "the array".to_owned()),
        (None, Some(path)) => (
            read_input_2d("input", path)?,
            format!("--input {}", path.display()),
        ),
        (None, None) => {
            return Err(CliError::usage(
                "--input is required for rope-apply: a [seq, dim] .npy array",
            ));
        }
    };
    encoding::rope::check_apply_shape(input.shape())
        .map_err(|e| CliError::usage(format!("{named} has shape {}: {}", e.value, e.allowed)))?;
    let freqs = rope_frequencies(args, input.ncols())?;
    Ok(TableSpec::RopeApply {
        input,
        layout,
        base: args.sinusoidal.base(),
        start,
        freqs,
    })
}

/// alibi --form bloom|mpt: one bias per key, as BLOOM and MPT store it.
pub(in crate::table_args) fn alibi_keys(r: &Reader) -> Result<TableSpec, CliError> {
    let args = r.args;
    if args.alibi.queries.is_some() || args.alibi.zero_heads != 0 {
        return Err(CliError::usage(
            "--queries and --zero-heads apply to --form relative: bloom and mpt store one bias per key for every query",
        ));
    }
    if alibi_mode(args)? == AlibiMode::Symmetric {
        return Err(CliError::usage(
            "--mode symmetric does not apply to --form bloom|mpt: those forms are causal (a decoder's mask hides later keys)",
        ));
    }
    Ok(TableSpec::AlibiKeys {
        heads: r.heads()?,
        seq: r.seq()?,
        form: args.alibi.form,
        head: r.head()?,
    })
}

/// alibi: the relative biases, whole or the last queries' (a step with a KV cache).
pub(in crate::table_args) fn alibi(r: &Reader) -> Result<TableSpec, CliError> {
    let args = r.args;
    let params = AlibiParams {
        heads: r.heads()?,
        seq: r.seq()?,
        mode: alibi_mode(args)?,
    };
    let queries = match args.alibi.queries {
        Some(q) => non_negative("queries", q)?,
        None => params.seq,
    };
    let zero_heads = non_negative("zero_heads", args.alibi.zero_heads)?;
    Ok(if queries == params.seq && zero_heads == 0 {
        TableSpec::Alibi {
            params,
            head: r.head()?,
        }
    } else {
        TableSpec::AlibiWindow {
            params,
            queries,
            zero_heads,
            head: r.head()?,
        }
    })
}

/// sincos-2d-resample: a position table resampled to another grid.
pub(in crate::table_args) fn sincos_2d_resample(r: &Reader) -> Result<TableSpec, CliError> {
    let args = r.args;
    let to = r.grid()?;
    to.validate()?;
    let prefix_rows = non_negative("prefix_rows", args.grid2d.prefix_rows)?;
    let mode = resample_mode(args)?;
    let from = args
        .grid2d
        .from_grid
        .as_deref()
        .map(parse_grid_size)
        .transpose()?;
    let input = match (args.input.as_deref(), from) {
        (Some(path), _) => read_input_2d("input", path)?,
        (None, Some((grid_h, grid_w))) => {
            let source = TableSpec::SinCos2d(SinCos2dParams {
                grid: GridParams { grid_h, grid_w },
                dim: r.dim_of_4()?,
                base: args.sinusoidal.base(),
                order: crate::encoding::grid::parse_order(&args.grid2d.order)?,
                raster: args.grid2d.raster,
                prefix_rows,
                ..Default::default()
            });
            // The source table's size is --from-grid's: a memory refusal says so
            // (not "reduce --grid-h, --grid-w", which size the target).
            engine::cpu::compute(&source)
                .map_err(|error| match error {
                    engine::EngineError::Memory(memory) => CliError::usage(format!(
                        "--from-grid {}: the source {}",
                        args.grid2d.from_grid.as_deref().unwrap_or_default(),
                        memory.to_string().replace(
                            "reduce --grid-h, --grid-w or --dim",
                            "reduce --from-grid or --dim"
                        )
                    )),
                    other => engine_error(other),
                })?
                .into_real()
                .into_dimensionality::<Ix2>()
                .map_err(|e| CliError::usage(e.to_string()))?
        }
        (None, None) => {
            return Err(CliError::usage(
                "sincos-2d-resample needs --input (a [prefix + H*W, dim] .npy table) or \
                     --from-grid HxW with --dim (the sin-cos table made at that grid)",
            ));
        }
    };
    let from = match from {
        Some(from) => from,
        None => square_grid_of(input.nrows(), prefix_rows)?,
    };
    Ok(TableSpec::SinCos2dResample {
        input,
        params: ResampleParams {
            from,
            to: (to.grid_h, to.grid_w),
            prefix_rows,
            mode,
            antialias: args.grid2d.antialias.unwrap_or(false),
        },
    })
}

/// rope-2d-mixed: angles from learned frequencies.
pub(in crate::table_args) fn rope_2d_mixed(r: &Reader) -> Result<TableSpec, CliError> {
    let args = r.args;
    let grid = r.grid()?;
    grid.validate()?;
    let path = args.grid2d.freqs.as_deref().ok_or_else(|| {
        CliError::usage(
            "--freqs is required for rope-2d-mixed: a [2, dim/2] .npy array \
                 (row 0 theta_x, row 1 theta_y)",
        )
    })?;
    let freqs = read_input_2d("freqs", path)?;
    encoding::rope2d::check_mixed_freqs_shape(freqs.shape()).map_err(|e| {
        CliError::usage(format!(
            "--freqs {} has shape {}: {}",
            path.display(),
            e.value,
            e.allowed
        ))
    })?;
    Ok(TableSpec::Rope2dMixed { grid, freqs })
}
