#!/usr/bin/env python3
"""The real tools judge trainlab's command lines and configs.

Reads a cases file (README.md in this folder has the schema), runs each case through the real
tool's own parser and validation, in-process, and prints one line per case and, last,
`N passed, N failed`. Exit 0 only when every verdict matches its case's expectation.

Each case runs in a forked child of a process that has already imported the tool, so a case
costs milliseconds and no global state (Megatron's global args, accelerate's state, environment
variables) leaks from one case to the next.

Run it with the interpreter setup.sh prints (the pinned tools live in that venv).
"""

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import tools  # noqa: E402  (this folder's adapters to the real tools)

EXPECTS = ("accept", "refuse", "concept")
CASE_TIMEOUT_S = 300


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cases", nargs="*", help="cases files (JSON {\"cases\": [...]})")
    p.add_argument("--variants", action="append", default=[],
                   help="variants.yaml: each entry's `real` side becomes a case")
    p.add_argument("--results", help="write every verdict here as JSON")
    p.add_argument("--only", help="run only the cases whose id contains this text")
    opts = p.parse_args(argv)

    cases = []
    for path in opts.cases:
        cases += load_cases(path)
    for path in opts.variants:
        cases += variant_cases(path)
    if opts.only:
        cases = [c for c in cases if opts.only in c["id"]]
    problems = check_schema(cases)
    if problems:
        for msg in problems:
            print(f"bad case: {msg}", file=sys.stderr)
        print(f"0 passed, {len(problems)} failed")
        return 1
    if not cases:
        print("no cases given", file=sys.stderr)
        print("0 passed, 1 failed")
        return 1

    results = [judge(case) for case in cases]
    for r in results:
        print(result_line(r))
    if opts.results:
        with open(opts.results, "w", encoding="utf-8") as f:
            json.dump({"results": results}, f, indent=2)
    passed = sum(r["ok"] for r in results)
    failed = len(results) - passed
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


# --------------------------------------------------------------------------------------------
# Cases


def load_cases(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    cases = doc["cases"] if isinstance(doc, dict) else doc
    return [dict(c, _file=path) for c in cases]


def variant_cases(path):
    """variants.yaml entries → cases judged on their `real` side."""
    import yaml

    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    bases = doc.get("bases", {})
    out = []
    for i, v in enumerate(doc.get("variants", [])):
        v = dict(v)
        if "base" in v:
            # `base: NAME` + `argv`: the named complete command line with the variant appended
            # (argparse keeps the last occurrence of a repeated option).
            v["argv"] = list(bases[v["base"]]) + list(v.get("argv", []))
        case = {
            "id": v.get("id") or f"variant-{i + 1}",
            "origin": f"{os.path.basename(path)}: {v.get('from', '?')}",
            "tool": v["tool"],
            "expect": v["real"],
            "why": v.get("why", ""),
            "_file": path,
        }
        for key in ("argv", "config", "script", "world_size", "env", "files", "gpus", "gpu_arch", "message", "optional"):
            if key in v:
                case[key] = v[key]
        out.append(case)
    return out


def check_schema(cases):
    problems = []
    seen = set()
    for c in cases:
        cid = c.get("id")
        if not isinstance(cid, str) or not cid:
            problems.append(f"a case without an id in {c.get('_file')}")
            continue
        if cid in seen:
            problems.append(f"{cid}: id used twice")
        seen.add(cid)
        if c.get("tool") not in tools.RUNNERS:
            problems.append(f"{cid}: unknown tool {c.get('tool')!r} (known: {', '.join(sorted(tools.RUNNERS))})")
        if c.get("expect") not in EXPECTS:
            problems.append(f"{cid}: expect must be one of {', '.join(EXPECTS)}")
        if c.get("tool") == "deepspeed-config":
            if not isinstance(c.get("config"), dict):
                problems.append(f"{cid}: deepspeed-config needs `config` (an object)")
        elif not (isinstance(c.get("argv"), list) and all(isinstance(w, str) for w in c["argv"])):
            problems.append(f"{cid}: needs `argv` (a list of strings)")
        if c.get("expect") in ("refuse", "concept") and not c.get("why"):
            problems.append(f"{cid}: a {c.get('expect')} case needs `why`")
        # A refusal for another reason than the case's (a missing argument the case did not
        # mean, an adapter that changed) would pass unnoticed: every refuse case names the text
        # the tool's refusal must contain.
        if c.get("expect") == "refuse" and not (isinstance(c.get("message"), str) and c["message"].strip()):
            problems.append(f"{cid}: a refuse case needs `message` (text the tool's refusal must contain)")
    return problems


# --------------------------------------------------------------------------------------------
# Judging


def judge(case):
    """Runs one case; returns its result record."""
    verdict = run_isolated(case)
    expect = case["expect"]
    wanted = "refuse" if expect == "refuse" else "accept"
    if verdict["verdict"] == "unavailable":
        ok = bool(case.get("optional"))
    else:
        ok = verdict["verdict"] == wanted
    # `message`: text the refusal must contain, so a refuse case is pinned to its reason.
    # Compared with runs of whitespace as one space: pydantic splits its message over lines.
    if ok and expect == "refuse":
        ok = " ".join(case["message"].split()) in " ".join(verdict.get("message", "").split())
    return {
        "id": case["id"],
        "origin": case.get("origin", ""),
        "tool": case["tool"],
        "expect": expect,
        "verdict": verdict["verdict"],
        "message": verdict.get("message", ""),
        "notes": verdict.get("notes", []),
        "ok": ok,
    }


def result_line(r):
    mark = "ok  " if r["ok"] else "FAIL"
    want = r["expect"] + (" (tool must accept)" if r["expect"] == "concept" else "")
    line = f"{mark} {r['id']} [{r['tool']}] expect {want}, real tool: {r['verdict']}"
    if r["message"]:
        line += f": {one_line(r['message'])}"
    if not r["ok"] and r["origin"]:
        line += f"  (from {r['origin']})"
    return line


def one_line(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


_imported = {}


def ensure_imported(tool):
    """Imports the tool once in this process (children inherit it); None or the reason it failed."""
    if tool not in _imported:
        with quiet():
            try:
                tools.RUNNERS[tool].load()
                _imported[tool] = None
            except Exception as e:  # the tool is not installed or does not import here
                _imported[tool] = f"{type(e).__name__}: {e}"
    return _imported[tool]


def run_isolated(case):
    failure = ensure_imported(case["tool"])
    if failure:
        return {"verdict": "unavailable", "message": failure}
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        out = run_in_child(case)
        with os.fdopen(write_fd, "w", encoding="utf-8") as w:
            w.write(json.dumps(out))
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, encoding="utf-8") as r:
        data = r.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        return {"verdict": "error", "message": f"the judge's child died (wait status {status})"}
    return json.loads(data)


def run_in_child(case):
    import signal

    signal.alarm(CASE_TIMEOUT_S)
    clean_environment()
    with tempfile.TemporaryDirectory(prefix="trainlab-conformance-") as tmp:
        os.chdir(tmp)
        captured = io.StringIO()
        try:
            with quiet(captured):
                runner = tools.RUNNERS[case["tool"]]
                verdict = runner.run(case, tmp)
        except Exception:  # a fault of the judge itself, never a verdict about the tool
            return {"verdict": "error", "message": traceback.format_exc(limit=6)}
        if verdict.get("verdict") == "refuse" and not verdict.get("message"):
            verdict["message"] = tools.last_error_line(captured.getvalue())
        return verdict


# Variables the tools read to decide what a command line means. Only a case's own `env` may set
# them, so the verdict does not depend on the shell the judge runs in.
TOOL_ENV_PREFIXES = ("CUDA_", "PET_", "MASTER_", "NCCL_", "ACCELERATE_", "TORCHELASTIC_", "OMP_")
TOOL_ENV_NAMES = ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK", "GROUP_RANK")


def clean_environment():
    for name in list(os.environ):
        if name.startswith(TOOL_ENV_PREFIXES) or name in TOOL_ENV_NAMES:
            del os.environ[name]


@contextlib.contextmanager
def quiet(sink=None):
    """Sends the tools' own printing (Python and C level) away from the report."""
    sink = sink if sink is not None else io.StringIO()
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            yield sink
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


if __name__ == "__main__":
    sys.exit(main())
