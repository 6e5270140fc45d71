#!/usr/bin/env bash
# Seeds the fuzz corpora (fuzz/corpus/<target>/) from the repository's own inputs: lab files,
# the labs' manifests, the saved states under tests/data/, and the command lines, scripts,
# quantities and DeepSpeed configs inside them. Re-running it is harmless (files are named by
# content). Needs python3 with PyYAML (CI has it: moto depends on it).
#
#   fuzz/seed.sh            # all targets
#   fuzz/seed.sh shell argv # some
#   FUZZ_CORPUS=/tmp/seeds fuzz/seed.sh   # into another folder
set -euo pipefail
cd "$(dirname "$0")/.."

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(catalog catalog_mutate observe quantity shell argv ds_config selector kubeconfig judge judge_mutate)
fi

exec python3 - "${targets[@]}" <<'PY'
import hashlib, json, os, shlex, sys
from pathlib import Path

import yaml

ROOT = Path(".")
# FUZZ_CORPUS: another folder for the corpora (CI seeds a temporary one to replay).
OUT = Path(os.environ["FUZZ_CORPUS"]) if os.environ.get("FUZZ_CORPUS") else ROOT / "fuzz" / "corpus"

def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)

def manifests():
    """Every manifest file of the labs and the test states (not the saved fuzz inputs)."""
    files = []
    for base in [ROOT / "labs", ROOT / "tests" / "data", ROOT / "manifests"]:
        for p in sorted(base.rglob("*")):
            if p.suffix in (".yaml", ".yml", ".json") and "fuzz" not in p.parts and p.name != "lab.yaml":
                files.append(p)
    return files

def docs(path):
    try:
        return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except Exception:
        return []

def objects(path):
    for d in docs(path):
        if isinstance(d, dict) and isinstance(d.get("items"), list) and str(d.get("kind", "")).endswith("List"):
            yield from (i for i in d["items"] if isinstance(i, dict))
        elif isinstance(d, dict):
            yield d

def walk(v):
    yield v
    if isinstance(v, dict):
        for x in v.values():
            yield from walk(x)
    elif isinstance(v, list):
        for x in v:
            yield from walk(x)

def containers(obj):
    for v in walk(obj):
        if isinstance(v, dict) and isinstance(v.get("containers"), list):
            yield from (c for c in v["containers"] if isinstance(c, dict))
            yield from (c for c in v.get("initContainers") or [] if isinstance(c, dict))

SHELLS = {"sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/env"}

def command_lines():
    """(argv, script or None) of every container, and scripts kept in ConfigMaps."""
    for f in manifests():
        for o in objects(f):
            for c in containers(o):
                argv = [str(w) for w in (c.get("command") or []) + (c.get("args") or [])]
                script = None
                for i, w in enumerate(argv):
                    if w.startswith("-") and "c" in w and i + 1 < len(argv) and argv[0].split("/")[-1] in ("sh", "bash"):
                        script = argv[i + 1]
                        break
                yield argv, script
            if o.get("kind") == "ConfigMap":
                for k, v in (o.get("data") or {}).items():
                    if isinstance(v, str) and (k.endswith(".sh") or v.startswith("#!")):
                        yield None, v

def seed(target):
    if target == "catalog":
        for p in sorted((ROOT / "labs").glob("*/lab.yaml")):
            put(target, p.read_bytes())
    elif target == "catalog_mutate":
        # Lab index (two bytes), no edits: each shipped lab as it is.
        for i in range(32):
            put(target, bytes([0, i]))
    elif target == "observe":
        for p in manifests():
            put(target, p.read_bytes())
    elif target == "judge":
        # Mode byte (see fuzz/src/lib.rs grade_text), then one file's text: each state folder
        # as one multi-document file, read as a snapshot; each lab folder as the learner's files.
        data = ROOT / "tests" / "data"
        nodes = "".join("---\n" + p.read_text() for p in sorted((data / "kind-nodes").glob("*.yaml")))
        folders = sorted({p.parent for p in manifests()})
        for d in folders:
            text = "".join("---\n" + p.read_text() for p in sorted(d.iterdir()) if p.suffix in (".yaml", ".yml"))
            if not text:
                continue
            if "labs" in d.parts:
                put(target, b"\x00" + text.encode())
                put(target, b"\x02" + text.encode())
            else:
                put(target, b"\x01" + (text + nodes).encode())
                put(target, b"\x03" + (text + nodes).encode())
    elif target == "judge_mutate":
        # State index (two bytes), mode byte, no edits: each saved state as it is.
        for i in range(96):
            for mode in (0, 1):
                put(target, bytes([0, i, mode]))
    elif target == "quantity":
        keys = ("cpu", "memory", "storage", "ephemeral-storage", "nvidia.com/gpu",
                "vpc.amazonaws.com/efa", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore")
        seen = set()
        for f in manifests():
            for o in objects(f):
                for v in walk(o):
                    if isinstance(v, dict):
                        for k in keys:
                            if k in v and isinstance(v[k], (str, int, float)):
                                seen.add(str(v[k]))
        seen |= {"0", "1", "500m", "1.5", "64Gi", "1e3", "8Ei", "-1", "0.9n", "9223372036854775807",
                 "1E", "1e-9", ".5", "5.", "+8", "1Ki\x00512"}
        for q in sorted(seen):
            put(target, q)
            put(target, q + "\x004")
    elif target in ("shell", "argv"):
        for argv, script in command_lines():
            if target == "shell" and script:
                put(target, script)
            if target == "shell" and argv:
                put(target, shlex.join(argv))
            if target == "argv" and argv:
                put(target, "\x00".join(argv))
            if target == "argv" and script:
                for line in script.replace("\\\n", " ").splitlines():
                    try:
                        words = shlex.split(line, comments=True)
                    except ValueError:
                        continue
                    if words:
                        put(target, "\x00".join(words))
    elif target == "ds_config":
        for f in manifests():
            if f.suffix == ".json":
                put(target, f.read_bytes())
            for o in objects(f):
                if o.get("kind") == "ConfigMap":
                    for v in (o.get("data") or {}).values():
                        if isinstance(v, str) and v.lstrip().startswith("{"):
                            put(target, v)
        for argv, script in command_lines():
            for w in argv or []:
                if w.lstrip().startswith("{"):
                    put(target, w)
            if script and "{" in script:
                put(target, script[script.index("{"):])
        put(target, '{"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}, "bf16": {"enabled": "auto"}}')
    elif target == "selector":
        for s in ["app=trainer", "app in (trainer,launcher),!gpu", "tier notin (a, b),x!=y,z==1",
                  "trainlab.dev/learner\x00{learner}-{lab}\x00alice,bob", "\x00ws-{learner}\x00carol",
                  "a=b,c\x00{lab}.{learner}\x00x,,y"]:
            put(target, s)
    elif target == "kubeconfig":
        for s in [
            "apiVersion: v1\nkind: Config\ncurrent-context: kind-trainlab\ncontexts:\n- name: kind-trainlab\n  context: {cluster: kind, user: kind, namespace: default}\nclusters:\n- name: kind\n  cluster: {server: 'https://127.0.0.1:6443', insecure-skip-tls-verify: true}\nusers:\n- name: kind\n  user: {token: abc}\n",
            "apiVersion: v1\nkind: Config\ncurrent-context: arn:aws:eks:us-west-2:111122223333:cluster/train\ncontexts:\n- name: arn:aws:eks:us-west-2:111122223333:cluster/train\n  context: {cluster: train, user: train}\nclusters:\n- name: train\n  cluster: {server: 'https://ABC.gr7.us-west-2.eks.amazonaws.com', certificate-authority-data: LS0t}\nusers:\n- name: train\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: aws\n      args: [eks, get-token, --cluster-name, train]\n",
            "apiVersion: v1\nkind: Config\npreferences: {}\n---\napiVersion: v1\nkind: Config\ncurrent-context: b\n",
        ]:
            put(target, s)
    else:
        sys.exit(f"unknown target {target}")
    n = len(list((OUT / target).iterdir())) if (OUT / target).exists() else 0
    print(f"{target}: {n} inputs in fuzz/corpus/{target}")

for t in sys.argv[1:]:
    seed(t)
PY
