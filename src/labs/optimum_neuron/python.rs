//! Python training scripts, read without running them: which names a script imports (and from
//! where) and then uses, and integer literals assigned to a name or passed as a keyword
//! argument. Enough to tell "this script trains with optimum-neuron's `NeuronTrainer`" from
//! "it only mentions it in a comment".
//!
//! The tokenizer follows the Python reference, "Lexical analysis": comments and strings (prefixes
//! r/b/f/u and their pairs, triple quotes) are skipped, brackets join lines (implicit line
//! joining), a backslash before a newline joins lines (explicit line joining). Dotted names are
//! kept whole (`optimum.neuron.NeuronTrainer`).

use std::collections::{BTreeMap, BTreeSet};

/// One token of Python source: names (dotted names kept whole), numbers, operators, and the end
/// of a logical line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Name(String),
    Num(String),
    Op(String),
    Newline,
}

/// Two-character operators that must not read as two one-character ones (`==` is not `=`).
const TWO_CHAR_OPS: &[&str] = &["==", "!=", "<=", ">=", "->", ":=", "**", "//"];
const STRING_PREFIXES: &[&str] = &["r", "b", "f", "u", "rb", "br", "fr", "rf"];

pub fn tokens(src: &str) -> Vec<Tok> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let skip_string = |start: usize| -> usize {
        let q = chars[start];
        let triple = chars.get(start + 1) == Some(&q) && chars.get(start + 2) == Some(&q);
        let mut k = start + if triple { 3 } else { 1 };
        while k < chars.len() {
            match chars[k] {
                '\\' => k += 2,
                ch if ch == q && !triple => return k + 1,
                '\n' if !triple => return k,
                ch if ch == q && chars.get(k + 1) == Some(&q) && chars.get(k + 2) == Some(&q) => {
                    return k + 3
                }
                _ => k += 1,
            }
        }
        chars.len()
    };
    while i < chars.len() {
        let ch = chars[i];
        match ch {
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\\' if chars.get(i + 1) == Some(&'\n') => i += 2,
            '\n' => {
                if depth == 0 && out.last().is_some_and(|t| *t != Tok::Newline) {
                    out.push(Tok::Newline);
                }
                i += 1;
            }
            '\'' | '"' => i = skip_string(i),
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && is_word(chars[i]) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let prefix = STRING_PREFIXES.contains(&word.to_ascii_lowercase().as_str());
                if prefix && matches!(chars.get(i), Some('\'' | '"')) {
                    i = skip_string(i);
                    continue;
                }
                let mut name = word;
                while chars.get(i) == Some(&'.')
                    && chars
                        .get(i + 1)
                        .is_some_and(|c| c.is_alphabetic() || *c == '_')
                {
                    let s = i + 1;
                    i = s;
                    while i < chars.len() && is_word(chars[i]) {
                        i += 1;
                    }
                    name.push('.');
                    name.extend(&chars[s..i]);
                }
                out.push(Tok::Name(name));
            }
            c if c.is_ascii_digit() => {
                let start = i;
                while i < chars.len() && (is_word(chars[i]) || chars[i] == '.') {
                    i += 1;
                }
                out.push(Tok::Num(chars[start..i].iter().collect()));
            }
            c if c.is_whitespace() => i += 1,
            _ => {
                let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
                if TWO_CHAR_OPS.contains(&two.as_str()) {
                    out.push(Tok::Op(two));
                    i += 2;
                } else {
                    match ch {
                        '(' | '[' | '{' => depth += 1,
                        ')' | ']' | '}' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                    out.push(Tok::Op(ch.to_string()));
                    i += 1;
                }
            }
        }
    }
    out
}

/// What a script imports and uses.
#[derive(Debug, Default)]
pub struct PyScan {
    /// Local name → (module, name imported), for `from <module> import <name> [as <local>]`.
    pub from_imports: BTreeMap<String, (String, String)>,
    /// (local name, module), for `import <module> [as <local>]`.
    pub modules: Vec<(String, String)>,
    /// Names used outside import statements, in order.
    pub used: Vec<String>,
    /// `<name> = <int>` (an assignment or a keyword argument): the last one written.
    pub int_literals: BTreeMap<String, i64>,
}

impl PyScan {
    pub fn of(src: &str) -> PyScan {
        let toks = tokens(src);
        let mut scan = PyScan::default();
        for stmt in toks.split(|t| *t == Tok::Newline) {
            match stmt {
                [Tok::Name(from), Tok::Name(module), Tok::Name(import), rest @ ..]
                    if from == "from" && import == "import" =>
                {
                    for (name, local) in imported_names(rest) {
                        scan.from_imports.insert(local, (module.clone(), name));
                    }
                }
                [Tok::Name(import), rest @ ..] if import == "import" => {
                    for (module, local) in imported_names(rest) {
                        scan.modules.push((local, module));
                    }
                }
                _ => {
                    for (k, t) in stmt.iter().enumerate() {
                        let Tok::Name(n) = t else { continue };
                        scan.used.push(n.clone());
                        let assign = stmt.get(k + 1) == Some(&Tok::Op("=".into()));
                        if let (true, Some(Tok::Num(v))) = (assign, stmt.get(k + 2)) {
                            if let Ok(v) = v.replace('_', "").parse() {
                                scan.int_literals.insert(n.clone(), v);
                            }
                        }
                    }
                }
            }
        }
        scan
    }

    /// Which of `names` the script imports from a module `module` accepts and then uses,
    /// directly (`from m import N as x; x(…)`) or through the module (`import m as a; a.N(…)`),
    /// sorted. A name imported but never used, or only written in a comment or a string, is not
    /// in it.
    pub fn used_from(&self, module: impl Fn(&str) -> bool, names: &[&str]) -> Vec<String> {
        let mut found = BTreeSet::new();
        for u in &self.used {
            if let Some((m, orig)) = self.from_imports.get(u) {
                if module(m) && names.contains(&orig.as_str()) {
                    found.insert(orig.clone());
                }
            }
            for (local, _) in self.modules.iter().filter(|(_, m)| module(m)) {
                let Some(rest) = u
                    .strip_prefix(local.as_str())
                    .and_then(|r| r.strip_prefix('.'))
                else {
                    continue;
                };
                let last = rest.rsplit('.').next().unwrap_or(rest);
                if names.contains(&last) {
                    found.insert(last.to_string());
                }
            }
        }
        found.into_iter().collect()
    }

    /// The integer last written as `<name>=<int>`. The optimum-neuron lab reads
    /// `tensor_parallel_size` this way, a `NeuronTrainingArguments` field
    /// (huggingface/optimum-neuron v0.4.5 `optimum/neuron/trainers/training_args.py` l.361) that
    /// its docs pass as a keyword (`docs/source/quickstart.mdx` l.71: `tensor_parallel_size=8`).
    pub fn int_literal(&self, name: &str) -> Option<i64> {
        self.int_literals.get(name).copied()
    }
}

/// `a, b as c, (d, e)` after `import`: (name, local name).
fn imported_names(toks: &[Tok]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        match &toks[k] {
            Tok::Name(n) if n == "as" => {
                if let (Some(last), Some(Tok::Name(alias))) = (out.last_mut(), toks.get(k + 1)) {
                    last.1 = alias.clone();
                }
                k += 2;
                continue;
            }
            Tok::Name(n) => out.push((n.clone(), n.clone())),
            _ => {}
        }
        k += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRAINERS: &[&str] = &["NeuronTrainer", "NeuronTrainingArguments"];

    fn neuron(m: &str) -> bool {
        m == "optimum.neuron" || m.starts_with("optimum.neuron.")
    }

    #[test]
    fn tokens_skip_strings_and_comments() {
        let toks = tokens(
            "from optimum.neuron import (NeuronTrainer,\n    NeuronTrainingArguments)  # x\n\
             s = 'from optimum.neuron import NeuronTrainer'\nt = r\"NeuronTrainer\"\n\
             doc = \"\"\"NeuronTrainer\nmore\"\"\"\nargs = f(tensor_parallel_size=8, x == 2)\n",
        );
        let names: Vec<&str> = toks
            .iter()
            .filter_map(|t| match t {
                Tok::Name(n) => Some(n.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            names,
            [
                "from",
                "optimum.neuron",
                "import",
                "NeuronTrainer",
                "NeuronTrainingArguments",
                "s",
                "t",
                "doc",
                "args",
                "f",
                "tensor_parallel_size",
                "x"
            ]
        );
        // The bracketed import is one logical line.
        assert_eq!(toks.iter().filter(|t| **t == Tok::Newline).count(), 5);
        assert!(toks.contains(&Tok::Op("==".into())));
    }

    #[test]
    fn a_backslash_joins_lines_and_an_open_string_ends_safely() {
        let toks = tokens("x = \\\n  1\ny = 'never closed\nz = \"\"\"also never");
        assert_eq!(toks.iter().filter(|t| **t == Tok::Newline).count(), 2);
        assert_eq!(PyScan::of("x = \\\n  1\n").int_literal("x"), Some(1));
        // Text that is not Python yields tokens, never a panic.
        assert_eq!(tokens("\\"), [Tok::Op("\\".into())]);
        assert_eq!(tokens("'"), Vec::<Tok>::new());
    }

    #[test]
    fn names_used_from_a_module_directly_or_through_it() {
        let scan = PyScan::of(
            "from transformers import AutoTokenizer\n\
             from optimum.neuron import NeuronTrainer as NT, NeuronTrainingArguments\n\
             args = NeuronTrainingArguments(output_dir='o', tensor_parallel_size=8)\n\
             NT(model=m, args=args).train()\n",
        );
        assert_eq!(
            scan.used_from(neuron, TRAINERS),
            ["NeuronTrainer", "NeuronTrainingArguments"]
        );
        assert_eq!(scan.int_literal("tensor_parallel_size"), Some(8));
        assert_eq!(scan.int_literal("output_dir"), None);

        let module = PyScan::of("import optimum.neuron as on\ntrainer = on.NeuronTrainer(m)\n");
        assert_eq!(module.used_from(neuron, TRAINERS), ["NeuronTrainer"]);
        let dotted = PyScan::of("import optimum.neuron\noptimum.neuron.NeuronTrainer(m)\n");
        assert_eq!(dotted.used_from(neuron, TRAINERS), ["NeuronTrainer"]);
    }

    #[test]
    fn imported_but_unused_or_only_mentioned_is_not_used() {
        let idle = PyScan::of(
            "from optimum.neuron import NeuronTrainer\n# NeuronTrainer(m)\nprint('NeuronTrainer')\n",
        );
        assert!(idle.used_from(neuron, TRAINERS).is_empty());
        // The same name from another module is another thing.
        let other = PyScan::of("from mylib import NeuronTrainer\nNeuronTrainer(m)\n");
        assert!(other.used_from(neuron, TRAINERS).is_empty());
        let plain = PyScan::of(
            "from transformers import Trainer, TrainingArguments\nTrainer(m, TrainingArguments('o')).train()\n",
        );
        assert_eq!(
            plain.used_from(|m| m == "transformers", &["Trainer", "TrainingArguments"]),
            ["Trainer", "TrainingArguments"]
        );
        assert_eq!(plain.int_literal("tensor_parallel_size"), None);
    }

    #[test]
    fn the_last_literal_wins_and_comparisons_are_not_assignments() {
        let s = PyScan::of("tp = 2\nif tp == 4: pass\ntp = 8\nf(tp=1_6)\n");
        assert_eq!(s.int_literal("tp"), Some(16));
        let s = PyScan::of("if tp == 4: pass\n");
        assert_eq!(s.int_literal("tp"), None);
    }
}
