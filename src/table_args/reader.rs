//! The reading of one table's options, shared by every kind: its sizes, each checked against
//! the kind's range with one message, and the parameters several families share.

use super::*;

/// A table's options as its kind reads them; `--positions`, read once, set the length.
pub(super) struct Reader<'a> {
    pub args: &'a TableArgs,
    pub kind: Kind,
    pub given_positions: Option<Vec<f64>>,
}

impl<'a> Reader<'a> {
    pub fn new(args: &'a TableArgs) -> Result<Self, CliError> {
        // --positions: one row per position, so they set the table's length.
        let given_positions = args
            .placement
            .positions
            .as_deref()
            .map(position_list)
            .transpose()?;
        Ok(Self {
            args,
            kind: args.kind,
            given_positions,
        })
    }

    pub fn seq(&self) -> Result<usize, CliError> {
        let (args, kind) = (self.args, self.kind);
        match &self.given_positions {
            Some(list) => match args.sizes.seq {
                Some(n) if usize::try_from(n).ok() != Some(list.len()) => {
                    Err(CliError::usage(format!(
                        "--seq {n} and --positions ({} values) disagree: the table has one row per position, so leave out --seq",
                        list.len()
                    )))
                }
                _ => Ok(list.len()),
            },
            None => required(
                kind,
                "seq",
                args.sizes.seq,
                "the number of positions, 1 to 1073741824",
            ),
        }
    }

    /// The current length of a table of frequencies (what dynamic NTK and LongRoPE read), 0
    /// when none is given; refused under a scaling that does not read it, where it would
    /// change nothing.
    pub fn current_length(&self) -> Result<usize, CliError> {
        let Some(seq) = self.args.sizes.seq else {
            return Ok(0);
        };
        let scaling = self.args.scaled.scaling;
        if !scaling.reads_current_length() {
            return Err(CliError::usage(format!(
                "--seq changes nothing for {} under --scaling {}: only dynamic and longrope read the current length",
                kind_name(self.kind),
                scaling.name()
            )));
        }
        non_negative("seq", seq)
    }

    pub fn dim(&self, meaning: &str) -> Result<usize, CliError> {
        required(self.kind, "dim", self.args.sizes.dim, meaning)
    }

    pub fn even_dim(&self) -> Result<usize, CliError> {
        self.dim("the dimension, even, 2 to 1048576")
    }

    pub fn dim_of_4(&self) -> Result<usize, CliError> {
        self.dim("the dimension, a multiple of 4, 4 to 1048576")
    }

    pub fn heads(&self) -> Result<usize, CliError> {
        required(
            self.kind,
            "heads",
            self.args.sizes.heads,
            "the number of heads, 1 to 65536",
        )
    }

    pub fn start(&self) -> Result<u64, CliError> {
        non_negative("start", self.args.sinusoidal.start()).map(|s| s as u64)
    }

    pub fn grid(&self) -> Result<GridParams, CliError> {
        let (args, kind) = (self.args, self.kind);
        Ok(GridParams {
            grid_h: required(
                kind,
                "grid_h",
                args.sizes.grid_h,
                "rows of patches, 1 to 65536",
            )?,
            grid_w: required(
                kind,
                "grid_w",
                args.sizes.grid_w,
                "columns of patches, 1 to 65536",
            )?,
        })
    }

    pub fn head(&self) -> Result<Option<usize>, CliError> {
        self.args
            .sizes
            .head
            .map(|h| non_negative("head", h))
            .transpose()
    }

    pub fn sinusoidal(&self) -> Result<SinusoidalParams, CliError> {
        let args = self.args;
        let layout = args.sinusoidal.layout.unwrap_or_default();
        // diffusers' spelling of the base, checked under its own name.
        let base = match args.sinusoidal.max_period {
            Some(max_period) => {
                encoding::check_base("max_period", max_period)?;
                max_period
            }
            None => args.sinusoidal.base(),
        };
        Ok(SinusoidalParams {
            seq: self.seq()?,
            dim: self.even_dim()?,
            base,
            start: self.start()?,
            layout,
            spacing: args.sinusoidal.spacing(),
            first: args.sinusoidal.first(),
            amplitude: args.scale,
        })
    }

    /// The positions and head of a RoPE table, and its frequencies.
    pub fn rope_params(&self) -> Result<(RopeParams, RopeFrequencies), CliError> {
        let dim = self.even_dim()?;
        let params = RopeParams {
            seq: self.seq()?,
            dim,
            base: self.args.sinusoidal.base(),
            start: self.start()?,
        };
        Ok((params, rope_frequencies(self.args, dim)?))
    }

    /// A cos, sin or cos-sin cache of the RoPE the options describe.
    pub fn rope_cache(&self, layout: PairLayout, part: CachePart) -> Result<TableSpec, CliError> {
        let (params, freqs) = self.rope_params()?;
        Ok(TableSpec::RopeCache {
            params,
            freqs,
            layout,
            part,
        })
    }
}
