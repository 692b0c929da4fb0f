//! Options as keywords: a key/value map (Python's keyword arguments, a web page's query) read
//! through the same groups as the command line. A key is a long option with `_` for `-`
//! (`rotary_dim=64` is `--rotary-dim 64`), so a keyword means exactly what its option means,
//! and a bad one gets the command line's own message.

/// A keyword's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    /// Where the command line takes a comma list (`--positions 0,1,2`, `--axes-dim 16,56,56`).
    List(Vec<Value>),
}

impl Value {
    /// The value as the command line writes it: numbers in the shortest form that reads back
    /// as the same number, lists joined by commas.
    pub fn word(&self) -> String {
        match self {
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Text(t) => t.clone(),
            Value::List(items) => items.iter().map(Value::word).collect::<Vec<_>>().join(","),
        }
    }
}

/// The words of `pairs` for `command`, whose options give each key its meaning: a switch
/// (`--verbose`) is there for `true` and left out for `false`; any other option is
/// `--key=value` (one word, so that a value starting with `-` stays a value). A key that is
/// no option of `command` is passed on as one, for the parse to refuse in its own words.
pub fn words(command: &clap::Command, pairs: &[(String, Value)]) -> Vec<String> {
    let mut words = Vec::new();
    for (key, value) in pairs {
        let arg = command.get_arguments().find(|a| a.get_id().as_str() == key);
        let long = arg
            .and_then(|a| a.get_long())
            .map_or_else(|| key.replace('_', "-"), str::to_owned);
        let is_switch = arg.is_some_and(|a| !a.get_action().takes_values());
        match value {
            Value::Bool(given) if is_switch => {
                if *given {
                    words.push(format!("--{long}"));
                }
            }
            value => words.push(format!("--{long}={}", value.word())),
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Args;

    #[derive(Debug, Args)]
    struct Example {
        #[command(flatten)]
        sizes: crate::options::SizeOptions,
        #[command(flatten)]
        sinusoidal: crate::options::SinusoidalOptions,
        #[command(flatten)]
        relative: crate::options::RelativeOptions,
        #[command(flatten)]
        progress: crate::options::Progress,
    }

    fn parse(pairs: &[(&str, Value)]) -> Result<Example, String> {
        let command = Example::augment_args(clap::Command::new("example").no_binary_name(true));
        let pairs: Vec<(String, Value)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        let matches = command
            .clone()
            .try_get_matches_from(words(&command, &pairs))
            .map_err(|e| e.to_string())?;
        <Example as clap::FromArgMatches>::from_arg_matches(&matches).map_err(|e| e.to_string())
    }

    #[test]
    fn keywords_read_as_their_long_options() {
        let read = parse(&[
            ("seq", Value::Int(16)),
            ("base", Value::Float(5e5)),
            ("start", Value::Int(-3)),
            ("layout", Value::Text("split".into())),
            ("bidirectional", Value::Bool(false)),
            ("quiet", Value::Bool(true)),
            ("grid_h", Value::Int(7)),
        ])
        .unwrap();
        assert_eq!(read.sizes.seq, Some(16));
        assert_eq!(read.sizes.grid_h, Some(7));
        assert_eq!(read.sinusoidal.base, Some(500_000.0));
        // A negative value stays a value, for the reader to refuse in its own words.
        assert_eq!(read.sinusoidal.start, Some(-3));
        assert_eq!(
            read.sinusoidal.layout,
            Some(crate::encoding::PairLayout::Half)
        );
        assert_eq!(read.relative.bidirectional, Some(false));
        assert!(read.progress.quiet);
        // A switch given as false is left out.
        assert!(
            !parse(&[("quiet", Value::Bool(false))])
                .unwrap()
                .progress
                .quiet
        );
    }

    #[test]
    fn a_bad_keyword_gets_the_command_lines_message() {
        let error = parse(&[("colour", Value::Text("red".into()))]).unwrap_err();
        assert!(error.contains("'--colour'"), "{error}");
        let error = parse(&[("seq", Value::Float(1.5))]).unwrap_err();
        assert!(error.contains("'1.5' for '--seq <N>'"), "{error}");
    }

    #[test]
    fn values_are_written_so_that_they_read_back_the_same() {
        for f in [0.1, 1e-5, 1.0 / 3.0, 6.02e23, -2.5e-300, f64::MAX] {
            assert_eq!(Value::Float(f).word().parse::<f64>().unwrap(), f);
        }
        let list = Value::List(vec![Value::Int(16), Value::Int(24), Value::Int(24)]);
        assert_eq!(list.word(), "16,24,24");
    }
}
