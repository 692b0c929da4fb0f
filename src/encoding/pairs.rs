//! How the two dimensions of each frequency lie in a row, for sin/cos tables and RoPE alike:
//! side by side (interleaved, `(2i, 2i+1)`), or one in each half of the row (`(i, i + d/2)`).
//! Sinusoidal code calls the second "split" (all sines, then all cosines: tensor2tensor,
//! fairseq, diffusers), RoPE code "half" (Hugging Face's `rotate_half`, GPT-NeoX); it is one
//! layout, and the command line takes either word.

use clap::builder::PossibleValue;

/// Which dimensions of a row belong to frequency `i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum PairLayout {
    /// Pairs (2i, 2i+1): Vaswani et al.'s table, Meta's Llama apply_rotary_emb, RoFormer,
    /// GPT-J, llama.cpp's "normal".
    #[default]
    Interleaved,
    /// Pairs (i, i + dim/2): the sines then the cosines of a split sinusoidal table
    /// (tensor2tensor, fairseq); Hugging Face's rotate_half, GPT-NeoX, llama.cpp's "NeoX".
    Half,
}

impl PairLayout {
    /// The two dimensions that frequency `i` occupies, for a row of width `dim`.
    pub fn pair(self, i: usize, dim: usize) -> (usize, usize) {
        match self {
            PairLayout::Interleaved => (2 * i, 2 * i + 1),
            PairLayout::Half => (i, i + dim / 2),
        }
    }

    /// The frequency index of the pair that dimension `col` belongs to.
    pub fn pair_of_column(self, col: usize, dim: usize) -> usize {
        match self {
            PairLayout::Interleaved => col / 2,
            PairLayout::Half => col % (dim / 2),
        }
    }

    /// As sin/cos tables name it: `interleaved` or `split`.
    pub fn sinusoidal_name(self) -> &'static str {
        match self {
            PairLayout::Interleaved => "interleaved",
            PairLayout::Half => "split",
        }
    }

    /// As RoPE code names it: `interleaved` or `half`.
    pub fn rope_name(self) -> &'static str {
        match self {
            PairLayout::Interleaved => "interleaved",
            PairLayout::Half => "half",
        }
    }
}

/// `--layout interleaved`, `--layout half`, or `--layout split` (the same layout).
impl clap::ValueEnum for PairLayout {
    fn value_variants<'a>() -> &'a [Self] {
        &[PairLayout::Interleaved, PairLayout::Half]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            PairLayout::Interleaved => {
                PossibleValue::new("interleaved").help("Pairs (2i, 2i+1) side by side")
            }
            PairLayout::Half => PossibleValue::new("half")
                .alias("split")
                .help("Pairs (i, i + dim/2): one in each half of the row (also called split)"),
        })
    }
}
