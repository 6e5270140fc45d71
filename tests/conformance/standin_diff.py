#!/usr/bin/env python3
"""Differential test: the trainer stand-in against the real parsers.

For every `megatron`, `hf-trainer` and `torchrun` case (cases files and variants.yaml), runs the
stand-in (manifests/trainer-standin: trainer.py, or the torchrun shim) as the pod would, and the
real tool through judge.py's adapters, and compares accept/refuse. The stand-in must accept
exactly what the real parser accepts. One line per case, then `N passed, N failed`.

Stand-in exit status: 0 accept; 2 its parser refused; 1 its validation refused (README.md
there); `--checkpoint-activations` exits 0 without training, which counts as a refusal, as the
judge counts Megatron's `exit()` for it. A `concept` case must be accepted by both.
"""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import judge  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
STANDIN = os.path.join(REPO, "manifests", "trainer-standin")
TOOLS = ("megatron", "hf-trainer", "torchrun")
BANNER = "trainlab stand-in (not a real trainer)"
# What trainer.py prints when it, not the torchrun shim, refuses (trainer.py `run`).
TRAINER_REFUSALS = ("trainlab stand-in: error:", "[trainlab stand-in] the real tool stops here with:")
CHECKPOINT_ACTIVATIONS = "--checkpoint-activations is no longer valid"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cases", nargs="*")
    p.add_argument("--variants", action="append", default=[])
    p.add_argument("--only")
    p.add_argument("--standin", default=STANDIN, help="folder with trainer.py and torchrun")
    opts = p.parse_args(argv)

    cases = []
    for path in opts.cases:
        cases += judge.load_cases(path)
    for path in opts.variants:
        cases += judge.variant_cases(path)
    # On kind the stand-in stands in for Megatron-LM's pretrain_gpt.py and for run_clm.py (what
    # the labs' kind solutions run): an HF line for another script is that script's to parse, and
    # the stand-in cannot know its arguments.
    cases = [
        c
        for c in cases
        if c.get("tool") in TOOLS
        and (c["tool"] != "hf-trainer" or c.get("script") == "run_clm.py")
    ]
    if opts.only:
        cases = [c for c in cases if opts.only in c["id"]]
    problems = judge.check_schema(cases)
    if problems or not cases:
        for msg in problems or ["no megatron, hf-trainer or torchrun case given"]:
            print(f"bad case: {msg}", file=sys.stderr)
        print(f"0 passed, {max(1, len(problems))} failed")
        return 1

    passed = failed = 0
    for case in cases:
        real = judge.run_isolated(case)
        standin = run_standin(case, opts.standin)
        ok, line = compare(case, real, standin)
        print(line)
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def run_standin(case, folder):
    """Runs the stand-in as the pod runs it; returns (verdict, message)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "TRAINLAB_STANDIN_ALLOCATE": "0",  # report the activation plan, do not hold it
        "TRAINLAB_STANDIN_SECONDS": "0",
        "TRAINLAB_TERMINATION_LOG": os.devnull,
        "PYTHONDONTWRITEBYTECODE": "1",  # the shim imports trainer.py: leave no __pycache__ in the repo
    }
    env.update({str(k): str(v) for k, v in (case.get("env") or {}).items()})
    if case["tool"] == "torchrun":
        # The shim resolves `gpu`/`auto` from TRAINLAB_STANDIN_GPUS, as the judge gives the real
        # torchrun the case's `gpus`.
        env["TRAINLAB_STANDIN_GPUS"] = str(case.get("gpus", 8))
        cmd = [sys.executable, os.path.join(folder, "torchrun"), *case["argv"]]
    else:
        # The shim passes trainer.run the script's arguments with WORLD_SIZE = nnodes x
        # nproc_per_node; the case's world_size is that number.
        env["WORLD_SIZE"] = str(case.get("world_size", 1))
        cmd = [sys.executable, os.path.join(folder, "trainer.py"), *case["argv"]]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    out, err = p.stdout, p.stderr
    message = last_line(err) or last_line(out)
    if case["tool"] == "torchrun":
        # Only torchrun's own options are judged: reaching the script counts as accepted,
        # whatever the script then says of its own arguments.
        reached = BANNER in out or any(m in err for m in TRAINER_REFUSALS) or CHECKPOINT_ACTIVATIONS in out
        return ("accept" if reached else "refuse"), message
    if p.returncode == 0 and CHECKPOINT_ACTIVATIONS not in out:
        return "accept", ""
    return "refuse", f"exit {p.returncode}: {message}"


def last_line(text):
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def compare(case, real, standin):
    s_verdict, s_message = standin
    r_verdict = real["verdict"]
    if r_verdict not in ("accept", "refuse"):
        return False, f"FAIL {case['id']} [{case['tool']}] real tool: {r_verdict}: {judge.one_line(real.get('message', ''))}"
    ok = r_verdict == s_verdict
    line = f"{'ok  ' if ok else 'FAIL'} {case['id']} [{case['tool']}] real: {r_verdict}, stand-in: {s_verdict}"
    if not ok:
        if r_verdict == "refuse":
            line += f" (real: {judge.one_line(real.get('message', ''), 200)})"
        if s_verdict == "refuse":
            line += f" (stand-in: {judge.one_line(s_message, 200)})"
        line += f"  from {case.get('origin', '')}"
    return ok, line


if __name__ == "__main__":
    sys.exit(main())
