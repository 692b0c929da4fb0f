//! "What am I looking at?": for every view, the formula of what it draws, what its axes and
//! colours mean, which convention it shows and which reference implementation that matches,
//! and a few things to try. The panel that shows it is drawn above every view by the app.

use super::ViewKind;

/// One view's explanation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Explanation {
    /// The formula of what is drawn, in plain Unicode.
    pub formula: &'static str,
    /// What each axis and the colour mean.
    pub reading: &'static str,
    /// Which convention is shown and which reference implementation it matches.
    pub convention: &'static str,
    /// Things to try, each one sentence.
    pub try_these: &'static [&'static str],
}

impl ViewKind {
    /// What this view shows, explained.
    pub fn explanation(self) -> Explanation {
        match self {
            ViewKind::Sinusoidal => Explanation {
                formula: "PE[p, 2i] = sin(p·ω_i),  PE[p, 2i+1] = cos(p·ω_i),  ω_i = base^(−2i/d)",
                reading: "Rows are positions p (from Start down), columns the d dimensions; colour is the value, from −1 to +1. \
                          Each sine/cosine pair turns like a clock hand at its own speed ω_i: the left columns flicker every few rows, \
                          the right ones change so slowly that they look constant. Where a pixel covers several rows, it shows their mean, min or max (side panel).",
                convention: "Interleaved layout with Vaswani spacing is the formula of \"Attention Is All You Need\". \
                             Split layout (all sines, then all cosines) with t2t spacing base^(−i/(d/2−1)) is tensor2tensor's get_timing_signal_1d and fairseq's.",
                try_these: &[
                    "Drag the base to 500000 and watch the right-hand columns freeze: their wavelength 2π·base^(2i/d) is far longer than the sequence.",
                    "Click a column to plot it against position; its wavelength is marked.",
                    "Set Start to 1000000: the table still looks the same, because a position only sets angles, and angles wrap.",
                ],
            },
            ViewKind::DotDecay => Explanation {
                formula: "PE[a]·PE[a+k] = Σ_i (sin(aω_i) sin((a+k)ω_i) + cos(aω_i) cos((a+k)ω_i)) = Σ_i cos(k·ω_i)",
                reading: "The curve: offset k across, the dot product up (normalised: divided by d/2, its value at k = 0). \
                          The matrix: PE[i]·PE[j] for every pair of rows; it is constant along each diagonal because it depends only on j − i.",
                convention: "The same sinusoidal table as the Sinusoidal view (its layout and spacing do not change dot products). \
                             \"RoPE long-term decay\" is RoFormer's bound (section 3.4.3): the mean of the partial sums |Σ e^{i k θ_j}|, which shrinks with distance.",
                try_these: &[
                    "Move the anchor row: the curve does not move, since the product only sees the offset.",
                    "Pin the curve, then set the base to 100: every frequency is faster, so the curve falls sooner and ripples.",
                    "Halve the dimension and compare with the pinned curve: fewer frequencies, a rougher decay.",
                ],
            },
            ViewKind::Alibi => Explanation {
                formula: "bias[h, i, j] = −m_h·|i − j|,  m_h = 2^(−8(h+1)/H) for H heads (H a power of two)",
                reading: "The matrix: query i down, key j across, colour the bias added to the attention logit (0 on the diagonal, more negative further away; \
                          causal mode masks keys after the query). The slopes: one per head on a log axis. \
                          The curves: the query's attention over the keys when every content score is equal, i.e. the softmax of its bias row.",
                convention: "Slopes as get_slopes in ofirpress/attention_with_linear_biases, including its rule for a head count that is not a power of two \
                             (the slopes of the next power down, then every other slope of twice that many).",
                try_these: &[
                    "Tick All heads: the first head looks only a few tokens back, the last one almost everywhere.",
                    "Set Heads to 12 and look at the slopes: not one geometric series, but two interleaved.",
                    "Move the query to the last position and compare the heads' attention curves.",
                ],
            },
            ViewKind::Corkscrew => Explanation {
                formula: "RoPE rotates pair i of a query at position m by m·θ_i, θ_i = base^(−2i/d); \
                          q_m·k_n = Re Σ_i q_i conj(k_i) e^{i(m−n)θ_i}, so the score depends only on m − n",
                reading: "Each helix is one frequency pair: position runs along its axis, the rotated pair's two coordinates go round it. \
                          The marker is the query's position m, the ring the key's position n. The insets show each pair's rotated query and key \
                          and what they add to the score; the spectrum shows every pair's frequency against the sequence.",
                convention: "Interleaved pairs (2i, 2i+1) as Meta's Llama apply_rotary_emb and RoFormer; half pairs (i, i + d/2) as Hugging Face rotate_half and GPT-NeoX. \
                             Both rotate the same way; they pair different coordinates.",
                try_these: &[
                    "Lock the offset and press Play: query and key travel together, and the score stays put.",
                    "Drag the base up to 500000: the slow pairs barely turn over the whole sequence.",
                    "Switch the layout and watch the pairing diagram: which coordinates rotate together changes, the geometry does not.",
                ],
            },
            ViewKind::Patches => Explanation {
                formula: "For the query patch and a patch at offset (Δx, Δy): distances √(Δx²+Δy²), |Δx|+|Δy|, max(|Δx|, |Δy|); \
                          2D ALiBi −m_h·√(Δx²+Δy²); the similarities are the mean over frequency pairs of cos(f_x·Δx + f_y·Δy)",
                reading: "Each map is the patch grid: colour is the value that patch gets with the outlined query. \
                          The matrix below holds every query's row at once, [P, P] with patches in raster order (patch k at column k mod W, row k div W).",
                convention: "2D ALiBi as CROMA; axial and mixed RoPE as naver-ai/rope-vit (axial theta 100; mixed frequencies from its random initialisation or a file); \
                             sin-cos as MAE's get_2d_sincos_pos_embed.",
                try_these: &[
                    "Compare Euclidean distance with axial RoPE: axial RoPE sees x and y separately, so its similarity is a cross, not a disc.",
                    "Click a corner patch and look at the matrix: raster order splits neighbours in the same column W entries apart.",
                    "Pick mixed RoPE: its frequencies mix x and y, so the stripes turn oblique.",
                ],
            },
            ViewKind::Context => Explanation {
                formula: "Pair i turns θ_i per position. A method changes it to θ'_i (PI: θ_i/s; NTK-aware: base·s^(d/(d−2)); YaRN and Llama 3: by wavelength band). \
                          A cell (p, i) is unseen when p·θ'_i mod 2π lies beyond the angles (L−1)·θ_i that training reached",
                reading: "Wavelengths: pair across, 2π/θ'_i up on a log axis, the training length L and the target L' marked. \
                          The map: distance p down, pair across, coloured where the angle was never seen. \
                          The tabs: a score fitted within L evaluated past it, RoFormer's decay, ALiBi at L', the survey's accuracies. \
                          The vision half: a ViT's table resampled to a bigger grid against the table made for it.",
                convention: "Scalings as Hugging Face transformers' rope initialisers (linear, dynamic, yarn, llama3, longrope), from the model's config.json; \
                             resampling as timm's resample_abs_pos_embed on MAE's table.",
                try_these: &[
                    "Llama 2 at L' = 16384: with extrapolation the slow pairs are unseen from distance 4096; tick PI and the map empties.",
                    "Open the score tab: a score fitted within L explodes past it when extrapolated, and stays bounded under PI.",
                    "Switch to Vision and raise the grid to 24: the resampled table is not the one the formula gives for that grid.",
                ],
            },
            ViewKind::Relative => Explanation {
                formula: "logit(i, j) = q_i·k_j + b(j − i): Shaw adds q_i·w[clip(j − i, −K, K)], T5 a learned bias per bucket(j − i), ALiBi −m·|j − i|",
                reading: "Every board is the attention matrix's shape: query i down, key j across, one labelled cell per pair (hover for what it holds). \
                          Colour follows the number in the cell. White borders separate regions: clipped offsets, T5's exact and logarithmic buckets, \
                          the part of the skew trick's array that the final slice keeps.",
                convention: "Clipping as Shaw, Uszkoreit and Vaswani (2018); buckets as Hugging Face T5's _relative_position_bucket (in float32, as torch computes it); \
                             ALiBi slopes as ofirpress; the skew trick as Music Transformer's, in the pad-flatten-pad-reshape-slice form of lucidrains' relative_to_absolute; \
                             2D offsets as Stand-Alone Self-Attention and the Bottleneck Transformer (row and column embeddings summed).",
                try_these: &[
                    "Offsets: every diagonal holds one number; a relative scheme can only tell the diagonals apart.",
                    "T5: untick Bidirectional and every later key falls into bucket 0, with the query itself.",
                    "Skew trick: press Play, then watch row i slide i places right at the reshape, lining each offset up under its key.",
                ],
            },
            ViewKind::Tour => Explanation {
                formula: "from PE[p] = p, through bits and sines, to PE[p, 2i] = sin(p·ω_i), PE[p, 2i+1] = cos(p·ω_i), ω_i = base^(−2i/d), with PE[p + Δ] = PE[p]·T(Δ)",
                reading: "Nine steps, each a guess at a position code and what is wrong with it, or a property of the final table. \
                          Curves: position or offset across, the code's value up. Heatmaps: positions down, columns across, colour the value \
                          (−1 to +1 for sines, 0 to 1 for bits; T(Δ)'s rows and columns are the table's columns). The orange line under the text is measured on the settings above.",
                convention: "The final table is Vaswani et al.'s (sine and cosine interleaved, frequencies base^(−2i/d)), as poslab's sinusoidal table and the annotated transformer; \
                             the binary table is poslab's binary table, least significant bit first. The steps follow Kernes' \"Master Positional Encoding: Part I\", \
                             whose figure is the dot product at d = 128, L = 256 anchored at 128 (step 8's defaults).",
                try_these: &[
                    "Step 3: raise L past a power of two and watch one more column start to flip.",
                    "Step 7: drag Δ to 10000; the largest error of PE[p]·T(Δ) stays at the last bits of a float64.",
                    "Step 9: drag the base down to 100 and the white edge sweeps right: more dials turn within the same length.",
                ],
            },
            ViewKind::Learned => Explanation {
                formula: "similarity(i, j) = PE[i]·PE[j] / (|PE[i]| |PE[j]|);  PCA: PE − mean = U S V^T, row i drawn at (U S)[i, 0..3]",
                reading: "Top row: the learned table; bottom row: the sinusoidal table of the same size. Left: the cosine similarity of every pair of rows \
                          (position i down, j across, −1 to +1). Middle: every row projected on the directions of largest variance, joined in position order \
                          (axes say how much of the variance each carries). Right: the chosen columns against position.",
                convention: "A learned table is read as stored: [positions, dim] (GPT-2's wpe, BERT's position_embeddings) or timm's [1, positions, dim], \
                             float16, bfloat16, float32 or float64; the principal components come from nalgebra's singular value decomposition of the centred rows. \
                             The sinusoidal table is Vaswani et al.'s with base 10000.",
                try_these: &[
                    "Open GPT-2's wpe: its rows trace a smooth helix-like curve, as the sinusoidal rows do, though nobody asked for one.",
                    "Compare the similarity matrices: a band along the diagonal means near positions look alike.",
                    "Switch to 3D and orbit: a curve that winds round is a set of frequencies, as in the sinusoidal table.",
                ],
            },
            ViewKind::Check => Explanation {
                formula: "difference = loaded − reference; a file matches when |loaded − reference| ≤ atol + rtol·|reference| everywhere \
                          (or, for float32, when it equals PyTorch's own float32 computation to the contract's ulps)",
                reading: "Three aligned heatmaps on the same axes: poslab's reference, the loaded table, and their difference, \
                          with the largest errors and where they are. Identify tries every kind and convention and names the closest.",
                convention: "The references are the table contract's: Hugging Face transformers and Meta's Llama for RoPE (scaling and partial rotary included), \
                             ofirpress for ALiBi (and BLOOM's and MPT's stored forms), MAE for 2D sin-cos, tensor2tensor for t2t spacing.",
                try_these: &[
                    "Write a table with poslab table sinusoidal --layout split -o t.npy, open it and press Identify.",
                    "Open a cos cache saved from a transformers model: Identify names its scaling and rotary width.",
                    "Compare a table with the wrong layout on purpose and read where the errors sit.",
                ],
            },
        }
    }
}
