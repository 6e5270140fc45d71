//! The real binary on a pseudo-terminal (Python's `pty`, on every CI machine): for what a command
//! does only when a person sits at a terminal (the quiz's questions, a `[y/N]`).

use std::process::{Command, Output};

/// Forks `argv` on a pty with a fixed English, colourless environment; for each step waits for
/// its text on the terminal (failing if it never comes) and then types its input; after the
/// steps reads until `last` (if it comes), and prints the transcript and `EXIT <code>`.
const DRIVER: &str = r#"
import json, os, pty, sys, time, select
spec = json.loads(sys.argv[1])
argv = spec["argv"]
pid, fd = pty.fork()
if pid == 0:
    os.execve(argv[0], argv, {"LANG": "C.UTF-8", "NO_COLOR": "1", "TERM": "xterm"})
out = b""
def read_until(token, timeout=30):
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
for expect, send in spec["steps"]:
    assert read_until(expect.encode()), out
    os.write(fd, send.encode())
read_until(spec["last"].encode())
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))
sys.stdout.write("\nEXIT %d\n" % os.waitstatus_to_exitcode(status))
"#;

/// Runs `argv` (the program first) on a pseudo-terminal through [`DRIVER`]: `steps` are
/// (text to wait for, input to type) in order, `last` the text that ends the conversation.
/// The transcript, with `EXIT <code>` after it, is the output's stdout.
pub fn on_terminal(argv: &[&str], steps: &[(&str, &str)], last: &str) -> Output {
    let spec = serde_json::json!({ "argv": argv, "steps": steps, "last": last });
    Command::new("python3")
        .args(["-c", DRIVER, &spec.to_string()])
        .output()
        .expect("python3 runs the pty driver")
}
