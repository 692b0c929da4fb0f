//! Relative position schemes: T5's buckets and Shaw et al.'s clipped distances.

use clap::Args;

/// T5's bucket count.
pub const NUM_BUCKETS: i64 = 32;
/// T5's distance from which every offset shares the last bucket.
pub const MAX_DISTANCE: i64 = 128;

/// T5 buckets and Shaw's clipping.
#[derive(Debug, Clone, Default, Args)]
pub struct RelativeOptions {
    /// t5-buckets and the relative figure's t5 panel: number of buckets (4 or more when bidirectional, 2 or more otherwise;
    /// default 32)
    #[arg(long, value_name = "N")]
    pub num_buckets: Option<i64>,

    /// t5-buckets and the t5 panel: distances from here on share the last bucket; above num-buckets/4
    /// (bidirectional) or num-buckets/2 (default 128)
    #[arg(long, value_name = "N")]
    pub max_distance: Option<i64>,

    /// t5-buckets and the t5 panel: true for encoder attention (both directions, the default), false for
    /// decoder (also accepted: yes/no, 1/0, in any case)
    #[arg(
        long,
        value_name = "BOOL",
        action = clap::ArgAction::Set,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub bidirectional: Option<bool>,

    /// relative-clip: the clipping distance K, 0 to 1073741824 (required); the relative
    /// figure's shaw panel: default 3
    #[arg(long, value_name = "K")]
    pub max_relative: Option<i64>,
}

impl RelativeOptions {
    pub fn num_buckets(&self) -> i64 {
        self.num_buckets.unwrap_or(NUM_BUCKETS)
    }

    pub fn max_distance(&self) -> i64 {
        self.max_distance.unwrap_or(MAX_DISTANCE)
    }

    /// Encoder buckets unless given.
    pub fn bidirectional(&self) -> bool {
        self.bidirectional.unwrap_or(true)
    }
}
