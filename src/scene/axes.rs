//! RoPE over time, height and width, for the Axes view: a sequence of text tokens, an image (or
//! a video of several frames) of patch tokens, then more text; the position ids each scheme
//! gives them, and how similar every token is to a chosen one under each.
//!
//! The ids follow the libraries: Qwen2-VL's `get_rope_index` (text counts on every axis at
//! once; an image starts at the next position, its rows and columns counted from there; the
//! text after it resumes past the image's larger side), and Flux's (text at 0 on every axis,
//! patches at their frame, row and column). Plain 1D RoPE numbers every token in order.

use crate::encoding::PairLayout;
use ndarray::Array2;

use crate::encoding::rope_axes::{AxesSplit, AxesValues, RopeAxesParams};

/// The tokens: text, then `frames` frames of `rows x cols` patches, then text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TokenLayout {
    pub text_before: usize,
    pub frames: usize,
    pub rows: usize,
    pub cols: usize,
    pub text_after: usize,
}

impl Default for TokenLayout {
    fn default() -> Self {
        Self {
            text_before: 4,
            frames: 1,
            rows: 6,
            cols: 8,
            text_after: 3,
        }
    }
}

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    /// Text token `index` of the text before (`after: false`) or after the image.
    Text { after: bool, index: usize },
    Patch {
        frame: usize,
        row: usize,
        col: usize,
    },
}

impl TokenLayout {
    pub fn patches(&self) -> usize {
        self.frames * self.rows * self.cols
    }

    pub fn tokens(&self) -> usize {
        self.text_before + self.patches() + self.text_after
    }

    pub fn token(&self, index: usize) -> Token {
        let patches = self.patches();
        if index < self.text_before {
            Token::Text {
                after: false,
                index,
            }
        } else if index < self.text_before + patches {
            let k = index - self.text_before;
            let per_frame = self.rows * self.cols;
            Token::Patch {
                frame: k / per_frame,
                row: k % per_frame / self.cols,
                col: k % self.cols,
            }
        } else {
            Token::Text {
                after: true,
                index: index - self.text_before - patches,
            }
        }
    }

    /// The index of a patch token.
    pub fn patch_index(&self, frame: usize, row: usize, col: usize) -> usize {
        self.text_before + (frame * self.rows + row) * self.cols + col
    }

    /// The patch nearest the middle of the first frame: the token chosen first.
    pub fn middle_patch(&self) -> usize {
        self.patch_index(0, self.rows / 2, self.cols / 2)
    }
}

/// Axis names, in the order of the position ids.
pub const AXIS_NAMES: [&str; 3] = ["time", "height", "width"];

/// How a model numbers its tokens' positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Scheme {
    /// Plain RoPE: one position per token, in sequence order (the image flattened).
    Flattened,
    /// Qwen2-VL's M-RoPE: time, height and width ids; sections of one RoPE.
    Mrope,
    /// Flux's per-axis RoPE: each axis its own RoPE, text at 0.
    PerAxis,
}

impl Scheme {
    pub const ALL: [Scheme; 3] = [Scheme::Flattened, Scheme::Mrope, Scheme::PerAxis];

    pub fn label(self) -> &'static str {
        match self {
            Scheme::Flattened => "1D RoPE, flattened",
            Scheme::Mrope => "M-RoPE (Qwen2-VL)",
            Scheme::PerAxis => "Per-axis RoPE (Flux)",
        }
    }

    /// Each token's `[time, height, width]` position under this scheme.
    pub fn position_ids(self, layout: &TokenLayout) -> Array2<f64> {
        let mut ids = Array2::zeros((layout.tokens(), 3));
        // Qwen2-VL: the image starts where the text before ends; the text after resumes past
        // the image's larger side (get_rope_index's current_pos += max(h, w)).
        let start = layout.text_before;
        let resume = start + layout.rows.max(layout.cols);
        for (index, mut row) in ids.rows_mut().into_iter().enumerate() {
            let at = match (self, layout.token(index)) {
                (Scheme::Flattened, _) => [index; 3],
                (
                    Scheme::Mrope,
                    Token::Text {
                        after: false,
                        index,
                    },
                ) => [index; 3],
                (Scheme::Mrope, Token::Text { after: true, index }) => [resume + index; 3],
                (Scheme::Mrope, Token::Patch { frame, row, col }) => {
                    [start + frame, start + row, start + col]
                }
                (Scheme::PerAxis, Token::Text { .. }) => [0; 3],
                (Scheme::PerAxis, Token::Patch { frame, row, col }) => [frame, row, col],
            };
            for (axis, value) in at.into_iter().enumerate() {
                row[axis] = value as f64;
            }
        }
        ids
    }

    /// How the scheme splits a head of `dim` dimensions (a multiple of 16) among the axes, in
    /// the proportions of the models: Qwen2-VL's 16, 24, 24 of 64 pairs; Flux's 16, 56, 56 of
    /// 128 dimensions. Plain RoPE is M-RoPE with the same position on every axis.
    pub fn split(self, dim: usize) -> AxesSplit {
        match self {
            Scheme::Flattened | Scheme::Mrope => {
                let pairs = dim / 2;
                let time = pairs / 4;
                let height = (pairs - time) / 2;
                AxesSplit::MropeSection {
                    dim,
                    sections: vec![time, height, pairs - time - height],
                }
            }
            Scheme::PerAxis => {
                let time = (dim / 8).max(2) & !1;
                let height = ((dim - time) / 2) & !1;
                AxesSplit::AxesDim(vec![time, height, dim - time - height])
            }
        }
    }

    /// The `rope-axes` table of this scheme's angles for `layout`.
    pub fn params(self, layout: &TokenLayout, dim: usize, theta: f64) -> RopeAxesParams {
        RopeAxesParams {
            ids: self.position_ids(layout),
            theta,
            split: self.split(dim),
            values: AxesValues::Angles,
            layout: PairLayout::Interleaved,
        }
    }
}

/// The similarity of every token to token `chosen`: the mean over the pairs of
/// `cos(angle_chosen - angle_token)`, what RoPE multiplies a query-key score by when every
/// pair holds the same content (1 for the token itself, and for any token at the same
/// position on every axis a pair uses).
pub fn similarity_to(params: &RopeAxesParams, chosen: usize) -> Vec<f64> {
    let pairs = params.pairs();
    let count = pairs.len().max(1) as f64;
    (0..params.ids.nrows())
        .map(|token| {
            pairs
                .iter()
                .map(|&(axis, w)| {
                    ((params.ids[[chosen, axis]] - params.ids[[token, axis]]) * w).cos()
                })
                .sum::<f64>()
                / count
        })
        .collect()
}

/// Runs of consecutive pairs turned by the same axis: `(axis, first pair, last pair)`.
pub fn axis_runs(params: &RopeAxesParams) -> Vec<(usize, usize, usize)> {
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for (pair, (axis, _)) in params.pairs().into_iter().enumerate() {
        match runs.last_mut() {
            Some((last, _, end)) if *last == axis => *end = pair,
            _ => runs.push((axis, pair, pair)),
        }
    }
    runs
}

/// Everything the view draws for one scheme.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SchemeMaps {
    pub scheme: Scheme,
    #[serde(with = "crate::jobs::remote::bulk")]
    pub ids: Array2<f64>,
    /// The similarity of every token to the chosen one.
    pub similarity: Vec<f64>,
    pub runs: Vec<(usize, usize, usize)>,
}

impl SchemeMaps {
    /// The low end of its colour scale: its least similar patch (text further away than that
    /// is drawn darkest, so that the image's own pattern shows), below 1, the chosen token.
    pub fn lowest_patch(&self, layout: &TokenLayout) -> f64 {
        let patches = layout.text_before..layout.text_before + layout.patches();
        self.similarity[patches]
            .iter()
            .copied()
            .fold(1.0f64, f64::min)
            .min(1.0 - 1e-6)
    }

    /// How many pairs each axis turns, "time 8 · height 12 · width 12"; `None` for 1D RoPE,
    /// where every pair turns with the token's place in the sequence.
    pub fn axis_sizes(&self) -> Option<String> {
        (self.scheme != Scheme::Flattened).then(|| {
            self.runs
                .iter()
                .map(|&(axis, first, last)| {
                    format!("{} {}", AXIS_NAMES[axis.min(2)], last + 1 - first)
                })
                .collect::<Vec<_>>()
                .join(" · ")
        })
    }
}

/// The three schemes' ids, similarities to `chosen` and axis runs.
pub fn all_schemes(layout: &TokenLayout, dim: usize, theta: f64, chosen: usize) -> Vec<SchemeMaps> {
    Scheme::ALL
        .iter()
        .map(|&scheme| {
            let params = scheme.params(layout, dim, theta);
            SchemeMaps {
                scheme,
                similarity: similarity_to(&params, chosen.min(layout.tokens() - 1)),
                runs: match scheme {
                    // Every axis holds the same position: one run, whatever the split.
                    Scheme::Flattened => vec![(0, 0, params.pair_count() - 1)],
                    _ => axis_runs(&params),
                },
                ids: params.ids,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_text_then_patches_then_text() {
        let layout = TokenLayout {
            text_before: 2,
            frames: 2,
            rows: 2,
            cols: 3,
            text_after: 1,
        };
        assert_eq!(layout.tokens(), 15);
        assert_eq!(
            layout.token(1),
            Token::Text {
                after: false,
                index: 1
            }
        );
        assert_eq!(
            layout.token(2),
            Token::Patch {
                frame: 0,
                row: 0,
                col: 0
            }
        );
        assert_eq!(
            layout.token(9),
            Token::Patch {
                frame: 1,
                row: 0,
                col: 1
            }
        );
        assert_eq!(layout.patch_index(1, 0, 1), 9);
        assert_eq!(
            layout.token(14),
            Token::Text {
                after: true,
                index: 0
            }
        );
    }

    #[test]
    fn the_splits_fill_the_head() {
        for dim in [16, 64, 128, 256] {
            for scheme in Scheme::ALL {
                let params = scheme.params(&TokenLayout::default(), dim, 10000.0);
                assert!(params.validate().is_ok(), "{scheme:?} {dim}");
                assert_eq!(params.pair_count(), dim / 2);
            }
        }
        assert_eq!(
            Scheme::Mrope.split(128),
            AxesSplit::MropeSection {
                dim: 128,
                sections: vec![16, 24, 24]
            }
        );
        assert_eq!(
            Scheme::PerAxis.split(128),
            AxesSplit::AxesDim(vec![16, 56, 56])
        );
    }
}
