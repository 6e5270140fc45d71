//! The interactive quiz under a real pseudo-terminal (Python's `pty`, on every CI machine): the
//! learner types an invalid answer, a wrong one, presses Enter, then Ctrl-D.

use std::process::Command;

const DRIVER: &str = r#"
import os, pty, sys, time, select
exe = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    os.execve(exe, [exe, "quiz", "9", "13"], {"LANG": "C.UTF-8", "NO_COLOR": "1", "TERM": "xterm"})
out = b""
def read_until(token, timeout=10):
    global out
    end = time.time() + timeout
    while token not in out and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    return token in out
assert read_until(b"Your answer"), out
os.write(fd, b"x\n")
assert read_until(b"is not a choice"), out
os.write(fd, b"A\n")
assert read_until(b"Press Enter"), out
os.write(fd, b"\n")
assert read_until(b"13. "), out
os.write(fd, b"\x04")
read_until(b"not answered")
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))
sys.stdout.write("\nEXIT %d\n" % os.waitstatus_to_exitcode(status))
"#;

#[test]
fn the_quiz_reads_a_real_terminal() {
    let out = Command::new("python3")
        .args(["-c", DRIVER, env!("CARGO_BIN_EXE_trainlab")])
        .output()
        .expect("python3 runs the pty driver");
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
