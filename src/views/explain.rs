//! "What am I looking at?": what every view explains, the formula of what it draws, what its
//! axes and colours mean, which convention it shows and which reference implementation that
//! matches, and a few things to try. Each view's module holds its own (in its `INFO`); the
//! panel that shows it is drawn above every view by the app.

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
