//! [`Args`]: a lookup view over an argv, the way Python's argparse reads it.
//!
//! No schema is needed: a lookup names the flag, and the view finds every occurrence.
//! - `--a-b` and `--a_b` are the same flag (torchrun, accelerate and `HfArgumentParser` register
//!   both spellings: pytorch `torch/distributed/run.py`, accelerate `commands/launch.py`,
//!   transformers `hf_argparser.py`; the brief asks the same leniency for Megatron-LM).
//! - `--x=1` and `--x 1` are the same; a value is the next word unless that word is itself a
//!   flag (argparse's rule; negative numbers such as `-1` are values).
//! - `--` ends the options: nothing after it is looked up.
//! - Repeated flags: the last occurrence wins; typed lookups keep the earlier raw values in
//!   [`Setting::earlier`] (`cmdline::last_wins`, the rule every reader uses).
//! - A value that is a shell or Kubernetes variable reference is [`Known::Variable`], never an
//!   error and never a number ([`Known::read`]).

use super::{last_wins, FlagError, Known, Setting};

/// An argv to look flags up in. Cheap to build; lookups scan the words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    words: Vec<String>,
    /// Index of `--`, or `words.len()`.
    end: usize,
}

/// One occurrence of a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag<'a> {
    /// Position in the argv.
    pub index: usize,
    /// The flag as written, without any `=value`: `--tensor_model_parallel_size`.
    pub spelling: &'a str,
    /// The `=value` part, if written that way.
    pub inline: Option<&'a str>,
    /// The next word when it is not a flag (it may or may not belong to this flag: only the
    /// caller knows whether the flag takes a value).
    pub next: Option<&'a str>,
}

impl<'a> Flag<'a> {
    /// The value for a flag that takes one: the `=value`, else the next word.
    pub fn value(&self) -> Option<&'a str> {
        self.inline.or(self.next)
    }
}

impl Args {
    pub fn new<I, S>(words: I) -> Args
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let words: Vec<String> = words.into_iter().map(Into::into).collect();
        let end = words.iter().position(|w| w == "--").unwrap_or(words.len());
        Args { words, end }
    }

    /// All words, including any after `--`.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Every occurrence of any of `names` (written without dashes, `-` or `_` alike), in order.
    pub fn flags(&self, names: &[&str]) -> Vec<Flag<'_>> {
        let mut found = Vec::new();
        for (index, word) in self.words.iter().enumerate().take(self.end) {
            let Some((spelling, name, inline)) = split_flag(word) else {
                continue;
            };
            if !names.iter().any(|n| same_name(n, name)) {
                continue;
            }
            let next = self
                .words
                .get(index + 1)
                .filter(|_| index + 1 < self.end)
                .map(String::as_str)
                .filter(|w| !is_flag(w));
            found.push(Flag {
                index,
                spelling,
                inline,
                next,
            });
        }
        found
    }

    /// The last occurrence of any of `names`.
    pub fn last(&self, names: &[&str]) -> Option<Flag<'_>> {
        self.flags(names).pop()
    }

    pub fn has(&self, names: &[&str]) -> bool {
        !self.flags(names).is_empty()
    }

    /// The value of the last occurrence (`=value` or the next word), as written.
    pub fn value(&self, names: &[&str]) -> Option<&str> {
        self.last(names).and_then(|f| f.value())
    }

    /// The value of every occurrence that has one, in order.
    pub fn values(&self, names: &[&str]) -> Vec<&str> {
        self.flags(names).iter().filter_map(|f| f.value()).collect()
    }

    /// A flag that takes a value, parsed with `parse`; `expected` describes a good value for the
    /// error. Every occurrence must parse (argparse converts each); the last one wins.
    pub fn parse_with<T>(
        &self,
        names: &[&str],
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<Setting<T>>, FlagError> {
        let mut setting: Option<Setting<T>> = None;
        for flag in self.flags(names) {
            let Some(raw) = flag.value() else {
                return Err(FlagError::MissingValue {
                    flag: flag.spelling.to_string(),
                });
            };
            let next = Setting::read(flag.spelling, raw, expected, &parse)?;
            last_wins(&mut setting, next);
        }
        Ok(setting)
    }

    /// An integer flag (`type=int`).
    pub fn int(&self, names: &[&str]) -> Result<Option<Setting<i64>>, FlagError> {
        self.parse_with(names, "an integer", parse_int)
    }

    /// A float flag (`type=float`).
    pub fn float(&self, names: &[&str]) -> Result<Option<Setting<f64>>, FlagError> {
        self.parse_with(names, "a number", parse_float)
    }

    /// A string flag; only a missing value is an error.
    pub fn string(&self, names: &[&str]) -> Result<Option<Setting<String>>, FlagError> {
        self.parse_with(names, "a value", |s| Some(s.to_string()))
    }

    /// A flag restricted to `choices` (argparse `choices=`): anything else is an error.
    pub fn choice(
        &self,
        names: &[&str],
        choices: &[&str],
    ) -> Result<Option<Setting<String>>, FlagError> {
        let expected = format!("one of {}", choices.join(", "));
        self.parse_with(names, &expected, |s| {
            choices.contains(&s).then(|| s.to_string())
        })
    }

    /// An argparse `store_true` switch (Megatron-LM's `--bf16`, `--fp16`, …): present means
    /// true and never takes a value; `--bf16=yes` is argparse's "ignored explicit argument"
    /// error.
    pub fn switch(&self, names: &[&str]) -> Result<Option<Setting<bool>>, FlagError> {
        let flags = self.flags(names);
        if let Some(f) = flags.iter().find(|f| f.inline.is_some()) {
            return Err(FlagError::invalid(
                f.spelling,
                f.inline.unwrap_or_default(),
                "no value (the flag is a switch)",
            ));
        }
        let mut setting = None;
        for f in flags {
            let next = Setting {
                value: Known::Value(true),
                source: f.spelling.to_string(),
                raw: None,
                earlier: Vec::new(),
            };
            last_wins(&mut setting, next);
        }
        Ok(setting)
    }

    /// A boolean field of `HfArgumentParser` (transformers `hf_argparser.py`: bool fields get
    /// `nargs="?"`, `const=True`, `type=string_to_bool`): `--bf16` alone is true, and
    /// `--bf16 false` / `--bf16=0` / `--bf16 True` take the value. A next word that is not a
    /// boolean is an error, as `string_to_bool` raises on it. When `negation` is true,
    /// `--no_<name>` / `--no-<name>` set false (HfArgumentParser adds them only for fields whose
    /// default is True).
    pub fn hf_bool(
        &self,
        names: &[&str],
        negation: bool,
    ) -> Result<Option<Setting<bool>>, FlagError> {
        self.bool_with(names, negation, true)
    }

    /// Like [`Args::hf_bool`] but a next word that is not a boolean is left alone (the flag is
    /// then a plain switch): reads `--bf16` whether the script uses argparse `store_true`
    /// (Megatron-LM) or `HfArgumentParser`.
    pub fn lenient_bool(&self, names: &[&str]) -> Result<Option<Setting<bool>>, FlagError> {
        self.bool_with(names, false, false)
    }

    fn bool_with(
        &self,
        names: &[&str],
        negation: bool,
        strict_next: bool,
    ) -> Result<Option<Setting<bool>>, FlagError> {
        let negated: Vec<String> = if negation {
            names
                .iter()
                .map(|n| format!("no_{}", normalize(n)))
                .collect()
        } else {
            Vec::new()
        };
        let negated_refs: Vec<&str> = negated.iter().map(String::as_str).collect();
        let mut all: Vec<(Flag<'_>, bool)> = self
            .flags(names)
            .into_iter()
            .map(|f| (f, false))
            .chain(self.flags(&negated_refs).into_iter().map(|f| (f, true)))
            .collect();
        all.sort_by_key(|(f, _)| f.index);
        let mut setting: Option<Setting<bool>> = None;
        for (flag, is_negation) in all {
            let (value, raw) = if is_negation {
                // `store_false`: takes no value.
                if let Some(v) = flag.inline {
                    return Err(FlagError::invalid(
                        flag.spelling,
                        v,
                        "no value (the flag is a switch)",
                    ));
                }
                (Known::Value(false), None)
            } else {
                let candidate = match (flag.inline, flag.next) {
                    (Some(v), _) => Some(v),
                    (None, Some(next)) if strict_next => Some(next),
                    (None, Some(next)) if Known::read(next, string_to_bool).is_some() => Some(next),
                    _ => None,
                };
                match candidate {
                    None => (Known::Value(true), None),
                    Some(v) => match Known::read(v, string_to_bool) {
                        Some(value) => (value, Some(v)),
                        None => {
                            return Err(FlagError::invalid(
                                flag.spelling,
                                v,
                                "a boolean (yes/no, true/false, t/f, y/n, 1/0)",
                            ))
                        }
                    },
                }
            };
            let next = Setting {
                value,
                source: flag.spelling.to_string(),
                raw: raw.map(str::to_string),
                earlier: Vec::new(),
            };
            last_wins(&mut setting, next);
        }
        Ok(setting)
    }
}

/// transformers `hf_argparser.py` `string_to_bool`: yes/true/t/y/1 and no/false/f/n/0, any case.
pub(crate) fn string_to_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "yes" | "true" | "t" | "y" | "1" => Some(true),
        "no" | "false" | "f" | "n" | "0" => Some(false),
        _ => None,
    }
}

/// Python's `int()` on a command-line value: optional sign, digits, surrounding blanks.
pub(crate) fn parse_int(s: &str) -> Option<i64> {
    let t = s.trim();
    // Python also accepts `1_000`; Rust does not, so drop single underscores between digits.
    if t.contains("__") || t.starts_with('_') || t.ends_with('_') {
        return None;
    }
    t.replace('_', "").parse().ok()
}

/// Python's `float()` on a command-line value (`2e-5`, `0.5`, `65536`).
pub(crate) fn parse_float(s: &str) -> Option<f64> {
    let t = s.trim();
    // `float("nan")`/`float("inf")` are legal in Python but never a meaningful setting here.
    let v: f64 = t.parse().ok()?;
    v.is_finite().then_some(v)
}

/// True when the text contains a shell or Kubernetes variable reference or a command
/// substitution: `$NP`, `${NP}`, `${NP:-8}`, `$(NP)`, `$(hostname)`, `` `hostname` ``, `$1`.
/// A lone `$` (`cost$`) is not one.
pub fn is_var_ref(s: &str) -> bool {
    if s.contains('`') {
        return true;
    }
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' {
            if let Some(&n) = chars.peek() {
                if n == '{'
                    || n == '('
                    || n == '_'
                    || n.is_ascii_alphanumeric()
                    || matches!(n, '@' | '*' | '#' | '?' | '!' | '-' | '$')
                {
                    return true;
                }
            }
        }
    }
    false
}

/// `-`/`_` insensitive flag name: `tensor-model-parallel-size` → `tensor_model_parallel_size`.
pub(crate) fn normalize(name: &str) -> String {
    name.trim_start_matches('-').replace('-', "_")
}

/// Whether two flag names are the same once their leading dashes are dropped and `-` is taken
/// as `_` ([`normalize`], without making a string: a room's judging asks this of every word of
/// every command line, for every flag a check reads).
fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim_start_matches('-'), b.trim_start_matches('-'));
    let dash_as_underscore = |c: u8| if c == b'-' { b'_' } else { c };
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .all(|(x, y)| dash_as_underscore(x) == dash_as_underscore(y))
}

/// A word that starts an option: `-x`, `--xyz`, `--xyz=v`; not `-`, `--`, or a negative number.
pub(crate) fn is_flag(word: &str) -> bool {
    word.len() > 1
        && word.starts_with('-')
        && word != "--"
        && !is_number(word)
        && !word[1..].starts_with('=')
}

/// Whether `word` reads as a float (`-1`, `-.5`, `-inf`, `-NaN`), as Rust's `f64` parser takes
/// it. After its one optional sign a float starts with a digit, `.`, or the `i` or `n` of
/// `inf`, `infinity` and `nan`: any other word is answered without parsing (most words asked
/// are `--flag`s).
fn is_number(word: &str) -> bool {
    let unsigned = word.strip_prefix(['-', '+']).unwrap_or(word);
    match unsigned.as_bytes().first() {
        Some(c) if c.is_ascii_digit() || matches!(c.to_ascii_lowercase(), b'.' | b'i' | b'n') => {
            word.parse::<f64>().is_ok()
        }
        _ => false,
    }
}

/// `--x-y=1` → (`--x-y`, `x-y`, Some(`1`)); `-np` → (`-np`, `np`, None).
pub(crate) fn split_flag(word: &str) -> Option<(&str, &str, Option<&str>)> {
    if !is_flag(word) {
        return None;
    }
    let (spelling, inline) = match word.split_once('=') {
        Some((s, v)) => (s, Some(v)),
        None => (word, None),
    };
    let name = spelling
        .strip_prefix("--")
        .or_else(|| spelling.strip_prefix('-'))?;
    if name.is_empty() {
        return None;
    }
    Some((spelling, name, inline))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Args {
        Args::new(line.split_whitespace())
    }

    #[test]
    fn a_number_is_what_the_float_parser_takes_and_names_match_across_dashes() {
        for w in [
            "-1",
            "-1.5",
            "-.5",
            "-5.",
            "-1e3",
            "-1E-3",
            "+2",
            "-inf",
            "-Inf",
            "-infinity",
            "-NaN",
            "-nan",
            "--1",
            "-",
            "--",
            "-x",
            "-n",
            "-i",
            "-nx",
            "-in",
            "-infinite",
            "-.",
            "-e5",
            "--inf",
            "-np",
            "--nproc_per_node",
            "-0x10",
            "",
            "1",
            "abc",
            "-_1",
        ] {
            assert_eq!(is_number(w), w.parse::<f64>().is_ok(), "{w:?}");
        }
        assert!(same_name("--nproc-per-node", "nproc_per_node"));
        assert!(same_name("nproc_per_node", "-nproc-per-node"));
        assert!(!same_name("nproc_per_node", "nproc_per_nodes"));
        assert!(!same_name("tp", "pp"));
    }

    #[test]
    fn dash_and_underscore_spellings_are_one_flag() {
        for line in [
            "--tensor-model-parallel-size 8",
            "--tensor_model_parallel_size 8",
            "--tensor-model-parallel-size=8",
            "--tensor_model-parallel_size=8",
        ] {
            let a = args(line);
            let s = a.int(&["tensor-model-parallel-size"]).unwrap().expect(line);
            assert_eq!(s.known(), Some(&8), "{line}");
            assert_eq!(s.raw.as_deref(), Some("8"));
        }
        let a = args("--tensor_model_parallel_size=8");
        let s = a.int(&["tensor_model_parallel_size"]).unwrap().unwrap();
        assert_eq!(s.source, "--tensor_model_parallel_size");
    }

    #[test]
    fn inline_and_separate_values_read_alike() {
        let a = args("--master_addr=10.0.0.1 --master_port 29500");
        assert_eq!(a.value(&["master-addr"]), Some("10.0.0.1"));
        assert_eq!(a.value(&["master-port"]), Some("29500"));
        // `=` inside the value stays in the value.
        let a = args("--rdzv_conf=timeout=900,join_timeout=60");
        assert_eq!(a.value(&["rdzv-conf"]), Some("timeout=900,join_timeout=60"));
    }

    #[test]
    fn repeated_flags_last_wins_and_earlier_are_reported() {
        let a = args("--micro-batch-size 2 --lr 1e-4 --micro-batch-size=4");
        let s = a.int(&["micro-batch-size"]).unwrap().unwrap();
        assert_eq!(s.known(), Some(&4));
        assert_eq!(s.earlier, vec!["2".to_string()]);
        assert_eq!(a.values(&["micro_batch_size"]), vec!["2", "4"]);
        assert_eq!(a.flags(&["micro-batch-size"]).len(), 2);
    }

    #[test]
    fn numeric_errors_name_the_flag_and_value() {
        let a = args("--tensor-model-parallel-size=eight");
        let e = a.int(&["tensor-model-parallel-size"]).unwrap_err();
        assert_eq!(
            e,
            FlagError::Invalid {
                flag: "--tensor-model-parallel-size".into(),
                value: "eight".into(),
                expected: "an integer".into()
            }
        );
        assert_eq!(
            args("--lr fast").float(&["lr"]).unwrap_err().to_string(),
            "--lr=fast: expected a number"
        );
        // An invalid earlier occurrence is still an error, as argparse converts every one.
        assert!(args("--num-layers x --num-layers 4")
            .int(&["num-layers"])
            .is_err());
    }

    #[test]
    fn a_flag_without_its_value_is_an_error() {
        let a = args("--num-layers --bf16");
        assert_eq!(
            a.int(&["num-layers"]).unwrap_err(),
            FlagError::MissingValue {
                flag: "--num-layers".into()
            }
        );
        assert!(args("--num-layers").int(&["num-layers"]).is_err());
    }

    #[test]
    fn variable_values_are_unknown_not_errors() {
        for v in ["$TP", "${TP}", "${TP:-8}", "$(TP)", "`nproc`"] {
            let a = Args::new(["--tensor-model-parallel-size", v]);
            let s = a.int(&["tensor-model-parallel-size"]).unwrap().unwrap();
            assert_eq!(s.value, Known::Variable(v.to_string()), "{v}");
        }
    }

    #[test]
    fn negative_numbers_are_values_not_flags() {
        let a = args("--max_steps -1 --loss-scale -0.5");
        assert_eq!(a.int(&["max_steps"]).unwrap().unwrap().known(), Some(&-1));
        assert_eq!(
            a.float(&["loss-scale"]).unwrap().unwrap().known(),
            Some(&-0.5)
        );
    }

    #[test]
    fn nothing_after_double_dash_is_an_option() {
        let a = args("--nnodes 2 -- --nnodes 4");
        assert_eq!(a.values(&["nnodes"]), vec!["2"]);
        let a = args("--x --");
        assert_eq!(a.last(&["x"]).unwrap().next, None);
    }

    #[test]
    fn hf_booleans_follow_string_to_bool() {
        for (line, want) in [
            ("--bf16", true),
            ("--bf16 True", true),
            ("--bf16 true", true),
            ("--bf16 1", true),
            ("--bf16 yes", true),
            ("--bf16=True", true),
            ("--bf16=false", false),
            ("--bf16=False", false),
            ("--bf16 0", false),
            ("--bf16 --output_dir /x", true),
            ("--bf16 no", false),
        ] {
            let s = args(line).hf_bool(&["bf16"], false).unwrap().expect(line);
            assert_eq!(s.known(), Some(&want), "{line}");
        }
        assert_eq!(args("--fp16").hf_bool(&["bf16"], false).unwrap(), None);
        let e = args("--bf16 maybe").hf_bool(&["bf16"], false).unwrap_err();
        assert_eq!(e.flag(), "--bf16");
        assert!(e.to_string().contains("maybe"), "{e}");
        let s = args("--bf16 $USE_BF16").hf_bool(&["bf16"], false).unwrap();
        assert_eq!(s.unwrap().value, Known::Variable("$USE_BF16".into()));
    }

    #[test]
    fn hf_negation_flags_set_false_in_order() {
        let a = args("--zero_1 --no_zero_1");
        let s = a.hf_bool(&["zero_1"], true).unwrap().unwrap();
        assert_eq!(s.known(), Some(&false));
        assert_eq!(s.source, "--no_zero_1");
        let a = args("--no-zero-1 --zero_1 true");
        assert_eq!(
            a.hf_bool(&["zero_1"], true).unwrap().unwrap().known(),
            Some(&true)
        );
        // Without negation, --no_x is a different flag.
        assert_eq!(
            args("--no_zero_1").hf_bool(&["zero_1"], false).unwrap(),
            None
        );
    }

    #[test]
    fn store_true_switches_take_no_value() {
        let a = args("--bf16 --use-distributed-optimizer");
        let s = a.switch(&["bf16"]).unwrap().unwrap();
        assert_eq!(s.known(), Some(&true));
        assert_eq!(s.raw, None);
        assert_eq!(a.switch(&["fp16"]).unwrap(), None);
        assert!(args("--bf16=true").switch(&["bf16"]).is_err());
        let twice = args("--bf16 --bf16").switch(&["bf16"]).unwrap().unwrap();
        assert_eq!(twice.earlier.len(), 1);
    }

    #[test]
    fn lenient_booleans_leave_a_following_word_alone() {
        let a = args("--bf16 pretrain_gpt.py");
        assert_eq!(
            a.lenient_bool(&["bf16"]).unwrap().unwrap().known(),
            Some(&true)
        );
        let a = args("--bf16 false");
        assert_eq!(
            a.lenient_bool(&["bf16"]).unwrap().unwrap().known(),
            Some(&false)
        );
    }

    #[test]
    fn choices_reject_other_values() {
        let a = args("--recompute-granularity partial");
        let e = a
            .choice(&["recompute-granularity"], &["full", "selective"])
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "--recompute-granularity=partial: expected one of full, selective"
        );
    }

    #[test]
    fn var_refs_are_recognised() {
        for s in ["$X", "${X}", "a$X", "$(X)", "$1", "`x`", "${X:-1}", "$@"] {
            assert!(is_var_ref(s), "{s}");
        }
        for s in ["X", "cost$", "$ ", "1e-3", "a$"] {
            assert!(!is_var_ref(s), "{s}");
        }
    }

    #[test]
    fn python_style_numbers() {
        assert_eq!(parse_int(" 8 "), Some(8));
        assert_eq!(parse_int("+8"), Some(8));
        assert_eq!(parse_int("1_000"), Some(1000));
        assert_eq!(parse_int("8.0"), None);
        assert_eq!(parse_int("_1"), None);
        assert_eq!(parse_float("2e-5"), Some(2e-5));
        assert_eq!(parse_float("inf"), None);
        assert_eq!(parse_float("x"), None);
    }

    #[test]
    fn flag_shapes() {
        assert!(is_flag("-n"));
        assert!(is_flag("--np=4"));
        assert!(!is_flag("-"));
        assert!(!is_flag("--"));
        assert!(!is_flag("-3"));
        assert!(!is_flag("-1e5"));
        assert!(!is_flag("-=x"));
        assert_eq!(split_flag("--a=b=c"), Some(("--a", "a", Some("b=c"))));
        assert_eq!(split_flag("-np"), Some(("-np", "np", None)));
        assert_eq!(split_flag("x"), None);
        // Multi-byte text never panics.
        assert_eq!(split_flag("-é"), Some(("-é", "é", None)));
        assert!(!is_var_ref("é$"));
    }
}
