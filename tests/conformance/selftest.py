#!/usr/bin/env python3
"""The judge's own rules, without the real tools (the standard library only):

- tools.step() counts as the tool's refusal only what the tool's code raises or exits with: an
  exception from a file of the adapter's `owners` packages, or argparse's exit; an exception
  raised in the suite's own code, its stubs included, or an AttributeError on one of its stubs,
  propagates and becomes the judge's `error`;
- judge.check_schema() refuses a refuse case without `message`.

A throwaway package `fake_tool` written to a temp folder plays the tool. Prints one line per
rule and, last, `N passed, N failed`; exit 0 only when all hold. tests/conformance.rs runs it.
"""

import argparse
import os
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import judge  # noqa: E402
import tools  # noqa: E402

FAKE_TOOL = textwrap.dedent(
    """
    import argparse

    def refuse(value):
        if value != "ok":
            raise ValueError(f"the tool refuses {value!r}")
        return value

    def parse(argv):
        p = argparse.ArgumentParser(prog="fake")
        p.add_argument("--n", type=int)
        return p.parse_args(argv)

    def ask(helper):
        return helper.device_count()

    def call(fn):
        return fn()
    """
)


def outcome(fn, *args):
    """'refuse: message', 'accept' or 'error: Type' (propagated: the judge's error)."""
    try:
        fn(*args)
    except tools.Refused as e:
        return f"refuse: {e}"
    except BaseException as e:  # noqa: BLE001  (what step() let through)
        return f"error: {type(e).__name__}"
    return "accept"


def main():
    results = []

    def rule(name, got, want_prefix):
        ok = got.startswith(want_prefix)
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {got} (want {want_prefix}...)")

    with tempfile.TemporaryDirectory() as tmp:
        pkg = os.path.join(tmp, "fake_tool")
        os.mkdir(pkg)
        with open(os.path.join(pkg, "__init__.py"), "w", encoding="utf-8") as f:
            f.write(FAKE_TOOL)
        sys.path.insert(0, tmp)
        import fake_tool

        tools._owners = ("fake_tool",)
        rule("the tool's own exception", outcome(tools.step, fake_tool.refuse, "bad"), "refuse: ValueError: the tool refuses 'bad'")
        rule("the tool accepts", outcome(tools.step, fake_tool.refuse, "ok"), "accept")
        sink = open(os.devnull, "w", encoding="utf-8")
        saved, sys.stderr = sys.stderr, sink
        try:
            rule("the tool's argparse exit", outcome(tools.step, fake_tool.parse, ["--n", "x"]), "refuse")
        finally:
            sys.stderr = saved
            sink.close()

        class Stub:
            """A stub given in place of hardware, missing what the tool asks for."""

        rule("a stub missing an attribute", outcome(tools.step, fake_tool.ask, Stub()), "error: AttributeError")

        def suite_fault():
            raise KeyError("a bug in the adapter")

        rule("an exception raised in the suite, called by the tool", outcome(tools.step, fake_tool.call, suite_fault), "error: KeyError")
        rule("an exception raised in the suite directly", outcome(tools.step, suite_fault), "error: KeyError")

        def stands_in():
            raise tools.Refused("the suite stands in for the tool's run-time refusal")

        rule("Refused raised by the suite on purpose", outcome(tools.step, fake_tool.call, stands_in), "refuse: the suite stands in")

        tools._owners = ()
        rule("no frame of the tool's packages", outcome(tools.step, fake_tool.refuse, "bad"), "error: ValueError")

    case = {"id": "c", "tool": "megatron", "argv": [], "expect": "refuse", "why": "w"}
    problems = judge.check_schema([case])
    rule("a refuse case without message", "; ".join(problems) or "accepted", "c: a refuse case needs `message`")
    rule("a refuse case with message", "; ".join(judge.check_schema([dict(case, message="m")])) or "accepted", "accepted")

    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    sys.exit(main())
