//! Settings written back as options: the words a figure's or a table's settings are, for
//! the commands the app's export dialog prints (`poslab figure ...`, `poslab table ...`).

/// Options as words, in the order they are written; the command's name and the rest are added
/// around them.
#[derive(Debug, Default)]
pub struct Words(Vec<String>);

impl Words {
    /// `--flag value`.
    pub fn option(&mut self, flag: &str, value: impl ToString) {
        self.0.push(format!("--{flag}"));
        self.0.push(value.to_string());
    }

    /// `--flag` alone.
    pub fn switch(&mut self, flag: &str) {
        self.0.push(format!("--{flag}"));
    }

    /// `--flag=value` as one word, for a value that may start with `-` (a negative yaw).
    pub fn joined(&mut self, flag: &str, value: impl std::fmt::Display) {
        self.0.push(format!("--{flag}={value}"));
    }

    /// Options by clap id (`rotary_dim`), as a group writes them.
    pub fn options(&mut self, options: impl IntoIterator<Item = (&'static str, String)>) {
        for (id, value) in options {
            self.option(&id.replace('_', "-"), value);
        }
    }

    /// Words written elsewhere, as they are.
    pub fn extend(&mut self, words: impl IntoIterator<Item = String>) {
        self.0.extend(words);
    }

    pub fn into_vec(self) -> Vec<String> {
        self.0
    }
}
