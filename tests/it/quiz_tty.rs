//! The interactive quiz under a real pseudo-terminal (Python's `pty`, on every CI machine): the
//! learner types an invalid answer, a wrong one, presses Enter, then Ctrl-D.

use crate::support::pty::on_terminal;

#[test]
fn the_quiz_reads_a_real_terminal() {
    let out = on_terminal(
        &[env!("CARGO_BIN_EXE_trainlab"), "quiz", "9", "13"],
        &[
            ("Your answer", "x\n"),
            ("is not a choice", "A\n"),
            ("Press Enter", "\n"),
            ("13. ", "\u{4}"),
        ],
        "not answered",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("`x` is not a choice"), "{text}");
    assert!(text.contains("your answer: A)"), "{text}");
    assert!(text.contains("0/1 right (1 not answered)"), "{text}");
    assert!(text.contains("EXIT 1"), "{text}");
}
