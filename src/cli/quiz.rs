//! `trainlab quiz [LAB...] [--answer X]`

use std::fmt::Write;
use std::io::{BufRead, IsTerminal};

use clap::Args;

use crate::report::fit::wrap_prose;

use super::{print, Global};
use crate::catalog::{Choice, Lab};
use crate::exit::ExitCode;
use crate::report::ui;
use crate::text::Lang;

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
    Choice::parse(s).ok_or_else(|| {
        crate::text::say(
            super::args::lang(),
            format!("A、B、C、D のどれかを書いてください。`{s}` でした"),
            format!("expected A, B, C or D, found `{s}`"),
        )
    })
}

pub fn run(g: &Global, a: &QuizArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let lang = g.lang();
    let labs: Vec<&Lab> = if a.labs.is_empty() {
        catalog.labs.iter().map(|b| &*b.lab).collect()
    } else {
        a.labs
            .iter()
            .map(|k| catalog.get(k).map(|b| &*b.lab))
            .collect::<Result<_, _>>()?
    };
    if let Some(answer) = a.answer {
        if labs.len() != 1 {
            return Err(crate::Error::usage(
                "--answer で採点するのは 1 問だけです。lab を 1 つ指定してください（例: `trainlab quiz 3 --answer A`）",
                "--answer grades exactly one question: name one lab, e.g. `trainlab quiz 3 --answer A`",
            ));
        }
        let width = crate::report::human::terminal_width();
        print(&wrap_prose(&question(labs[0], lang), width));
        let (text, right) = verdict_with_choice(labs[0], answer, lang);
        print(&wrap_prose(&text, width));
        return Ok(if right {
            ExitCode::Ok
        } else {
            ExitCode::Failed
        });
    }
    if !std::io::stdin().is_terminal() {
        return Err(crate::Error::usage(
            "quiz は質問するために端末が必要です。スクリプトからは `--answer A|B|C|D` で 1 問ずつ答えてください",
            "quiz needs a terminal to ask questions; in scripts answer one with `--answer A|B|C|D`",
        ));
    }
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout();
    let mut prompts = std::io::stderr();
    let width = crate::report::human::terminal_width();
    Ok(ask(&labs, lang, width, &mut input, &mut out, &mut prompts))
}

/// The interactive quiz over any input and outputs (a terminal in use; buffers in tests): asks
/// each question, says what was wrong with an invalid answer, echoes a wrong choice beside the
/// right one, waits for Enter between questions so the verdict stays on screen, and on Ctrl-D or
/// `q` counts only the questions answered.
pub fn ask(
    labs: &[&Lab],
    lang: Lang,
    width: Option<usize>,
    input: &mut dyn BufRead,
    out: &mut dyn std::io::Write,
    prompts: &mut dyn std::io::Write,
) -> ExitCode {
    let ja = lang == Lang::Ja;
    let mut right = 0;
    let mut answered = 0;
    let mut read = |buf: &mut String| -> bool {
        buf.clear();
        input.read_line(buf).unwrap_or(0) > 0 && !buf.trim().eq_ignore_ascii_case("q")
    };
    let mut line = String::new();
    for (i, lab) in labs.iter().enumerate() {
        let _ = write!(out, "{}", wrap_prose(&question(lab, lang), width));
        let choice = loop {
            let _ = write!(
                prompts,
                "{}",
                if ja {
                    "答え (A-D, q で終了): "
                } else {
                    "Your answer (A-D, q to quit): "
                }
            );
            let _ = prompts.flush();
            if !read(&mut line) {
                let _ = writeln!(out);
                return summary_to(out, right, answered, labs.len(), lang);
            }
            match Choice::parse(&line) {
                Some(c) => break c,
                // Enter alone: ask again, nothing was typed to refuse.
                None if line.trim().is_empty() => continue,
                None => {
                    let given = crate::catalog::echo(line.trim(), 40);
                    let _ = writeln!(
                        prompts,
                        "{}",
                        if ja {
                            format!("  `{given}` は選択肢ではありません。A、B、C、D のどれかを入力してください（q で終了）")
                        } else {
                            format!("  `{given}` is not a choice: type A, B, C or D (or q to quit)")
                        }
                    );
                }
            }
        };
        answered += 1;
        let (text, ok) = verdict_with_choice(lab, choice, lang);
        let _ = writeln!(out, "{}", wrap_prose(&text, width));
        right += usize::from(ok);
        if i + 1 < labs.len() {
            let _ = write!(
                prompts,
                "{}",
                if ja {
                    "Enter で次の問題へ (q で終了) "
                } else {
                    "Press Enter for the next question (q to quit) "
                }
            );
            let _ = prompts.flush();
            if !read(&mut line) {
                let _ = writeln!(out);
                return summary_to(out, right, answered, labs.len(), lang);
            }
        }
    }
    summary_to(out, right, answered, labs.len(), lang)
}

fn summary_to(
    out: &mut dyn std::io::Write,
    right: usize,
    answered: usize,
    total: usize,
    lang: Lang,
) -> ExitCode {
    let skipped = total - answered;
    let _ = match (lang, skipped) {
        (Lang::Ja, 0) => writeln!(out, "{right}/{answered} 問正解"),
        (Lang::Ja, n) => writeln!(out, "{right}/{answered} 問正解（未回答 {n} 問）"),
        (Lang::En, 0) => writeln!(out, "{right}/{answered} right"),
        (Lang::En, n) => writeln!(out, "{right}/{answered} right ({n} not answered)"),
    };
    // Quitting early is no wrong answer: exit 1 only when an answer given was wrong.
    if right == answered {
        ExitCode::Ok
    } else {
        ExitCode::Failed
    }
}

/// The verdict, with the learner's own choice echoed when it was wrong.
fn verdict_with_choice(lab: &Lab, choice: Choice, lang: Lang) -> (String, bool) {
    let (text, right) = verdict(lab, choice, lang);
    if right {
        return (text, true);
    }
    let mine = format!(
        "{}: {}) {}\n",
        if lang == Lang::Ja {
            "あなたの答え"
        } else {
            "your answer"
        },
        choice.letter(),
        lab.quiz.choices.get(choice).get(lang)
    );
    (format!("{mine}{text}"), false)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    fn run_with(keys: &[&str], typed: &str) -> (ExitCode, String, String) {
        let catalog = Catalog::embedded().unwrap();
        let labs: Vec<&Lab> = keys.iter().map(|k| &*catalog.get(k).unwrap().lab).collect();
        let mut input = std::io::Cursor::new(typed.as_bytes().to_vec());
        let (mut out, mut prompts) = (Vec::new(), Vec::new());
        let code = ask(&labs, Lang::En, None, &mut input, &mut out, &mut prompts);
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(prompts).unwrap(),
        )
    }

    #[test]
    fn an_invalid_answer_says_what_is_valid_and_asks_again() {
        let (code, out, prompts) = run_with(&["9"], "x\nB\n");
        assert!(
            prompts.contains("`x` is not a choice: type A, B, C or D"),
            "{prompts}"
        );
        assert!(out.contains("Right"), "{out}");
        assert_eq!(code, ExitCode::Ok);
    }

    #[test]
    fn a_wrong_answer_echoes_the_learners_choice_beside_the_right_one() {
        let (code, out, _) = run_with(&["9"], "a\n");
        assert!(
            out.contains("your answer: A) The job starts with 3 workers"),
            "{out}"
        );
        assert!(out.contains("Answer: B)"), "{out}");
        assert_eq!(code, ExitCode::Failed);
    }

    #[test]
    fn enter_is_awaited_between_questions_and_ctrl_d_counts_only_answered_ones() {
        // Right on 9, then Enter, then end of input at question 13.
        let (code, out, prompts) = run_with(&["9", "13", "15"], "B\n\n");
        assert!(
            prompts.contains("Press Enter for the next question"),
            "{prompts}"
        );
        assert!(out.contains("1/1 right (2 not answered)"), "{out}");
        assert_eq!(code, ExitCode::Ok);
        // No Enter yet: the next question is not shown.
        let (_, out, _) = run_with(&["9", "13"], "B\n");
        assert!(!out.contains("13. "), "{out}");
    }

    #[test]
    fn enter_alone_asks_again_without_calling_it_a_choice() {
        let (code, out, prompts) = run_with(&["9"], "\n  \nB\n");
        assert!(!prompts.contains("is not a choice"), "{prompts}");
        assert_eq!(prompts.matches("Your answer (A-D, q to quit)").count(), 3);
        assert!(out.contains("1/1 right"), "{out}");
        assert_eq!(code, ExitCode::Ok);
    }

    #[test]
    fn quitting_is_no_wrong_answer_and_a_wrong_one_given_still_counts() {
        let (code, out, _) = run_with(&["9", "13"], "q\n");
        assert!(out.contains("0/0 right (2 not answered)"), "{out}");
        assert_eq!(code, ExitCode::Ok);
        let (code, _, _) = run_with(&["9", "13"], "B\n\nq\n");
        assert_eq!(code, ExitCode::Ok);
        let (code, _, _) = run_with(&["9", "13"], "A\n\nq\n");
        assert_eq!(code, ExitCode::Failed);
    }
}
