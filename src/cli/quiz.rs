//! `trainlab quiz [LAB...] [--answer X]`

use std::fmt::Write;
use std::io::{BufRead, IsTerminal};

use clap::Args;

use super::{output::eprint, print, Global};
use crate::catalog::{Choice, Lab, Lang};
use crate::exit::ExitCode;
use crate::report::ui;

#[derive(Debug, Args)]
pub struct QuizArgs {
    /// Labs to ask (number, id or folder); all 15 when omitted
    pub labs: Vec<String>,
    /// Answer non-interactively (one lab): prints right/wrong and the explanation;
    /// exit 0 when right, 1 when wrong
    #[arg(long, value_name = "A|B|C|D", value_parser = parse_choice)]
    pub answer: Option<Choice>,
}

fn parse_choice(s: &str) -> Result<Choice, String> {
    Choice::parse(s).ok_or_else(|| format!("expected A, B, C or D, found `{s}`"))
}

pub fn run(g: &Global, a: &QuizArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let lang = g.lang();
    let labs: Vec<&Lab> = if a.labs.is_empty() {
        catalog.labs.iter().map(|b| &b.lab).collect()
    } else {
        a.labs
            .iter()
            .map(|k| catalog.get(k).map(|b| &b.lab))
            .collect::<Result<_, _>>()?
    };
    if let Some(answer) = a.answer {
        if labs.len() != 1 {
            return Err(crate::Error::Usage(
                "--answer grades exactly one question: name one lab, e.g. `trainlab quiz 9 --answer B`".into(),
            ));
        }
        print(&question(labs[0], lang));
        let (text, right) = verdict(labs[0], answer, lang);
        print(&text);
        return Ok(if right {
            ExitCode::Ok
        } else {
            ExitCode::Failed
        });
    }
    if !std::io::stdin().is_terminal() {
        return Err(crate::Error::Usage(
            "quiz needs a terminal to ask questions; in scripts answer one with `--answer A|B|C|D`"
                .into(),
        ));
    }
    let mut right = 0;
    let stdin = std::io::stdin();
    for lab in &labs {
        print(&question(lab, lang));
        let choice = loop {
            eprint(if lang == Lang::Ja {
                "答え (A-D, q で終了): "
            } else {
                "Your answer (A-D, q to quit): "
            });
            let mut line = String::new();
            if stdin.lock().read_line(&mut line).unwrap_or(0) == 0
                || line.trim().eq_ignore_ascii_case("q")
            {
                print("\n");
                return Ok(summary(right, labs.len(), lang));
            }
            match Choice::parse(&line) {
                Some(c) => break c,
                None => eprint("  A, B, C, D\n"),
            }
        };
        let (text, ok) = verdict(lab, choice, lang);
        print(&text);
        print("\n");
        right += usize::from(ok);
    }
    Ok(summary(right, labs.len(), lang))
}

fn summary(right: usize, total: usize, lang: Lang) -> ExitCode {
    print(&match lang {
        Lang::Ja => format!("{right}/{total} 問正解\n"),
        Lang::En => format!("{right}/{total} right\n"),
    });
    if right == total {
        ExitCode::Ok
    } else {
        ExitCode::Failed
    }
}

pub fn question(lab: &Lab, lang: Lang) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}. {}\n",
        lab.number,
        lab.quiz.question.get(lang).trim()
    );
    for c in Choice::ALL {
        let _ = writeln!(s, "  {}) {}", c.letter(), lab.quiz.choices.get(c).get(lang));
    }
    s.push('\n');
    s
}

/// Right/wrong, the answer, the explanation and any notes on where upstream differs.
pub fn verdict(lab: &Lab, choice: Choice, lang: Lang) -> (String, bool) {
    let right = choice == lab.quiz.answer;
    let key = lab.quiz.answer;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} — {}: {}) {}\n",
        ui(if right { "right" } else { "wrong" }, lang),
        ui("answer", lang),
        key.letter(),
        lab.quiz.choices.get(key).get(lang)
    );
    let _ = writeln!(
        s,
        "{}:\n\n{}\n",
        ui("explanation", lang),
        lab.quiz.explanation.get(lang).trim_end()
    );
    if !lab.notes.is_empty() {
        let _ = writeln!(s, "{}:\n", ui("notes", lang));
        for n in &lab.notes {
            let _ = writeln!(
                s,
                "- {}\n  ({})",
                n.text.get(lang).trim_end().replace('\n', "\n  "),
                n.source
            );
        }
    }
    (s, right)
}
