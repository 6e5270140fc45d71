#!/usr/bin/env bash
# Installs the real tools the conformance judge runs (requirements.txt, a full lock; botocore for
# the EKS token differential, eks_token.py) into a venv at
# ${TRAINLAB_CONFORMANCE_VENV:-target/conformance-venv} and prints, as its last line, the
# interpreter to run judge.py / standin_diff.py with.
#
# Idempotent: the venv keeps the hash of the requirements it was built from; when that matches and
# the tools import, nothing is downloaded (a second run takes seconds).
#
# Interpreter: $TRAINLAB_CONFORMANCE_PYTHON if set, else the first Python 3.12 or 3.13 found
# (megatron-core 0.19 needs >= 3.12; the lock's wheels exist for both).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
venv=${TRAINLAB_CONFORMANCE_VENV:-$repo/target/conformance-venv}
requirements=$here/requirements.txt
stamp=$venv/.trainlab-requirements.sha256

log() { echo "conformance setup: $*" >&2; }

# Prints the path of a Python 3.12/3.13, or nothing.
find_python() {
  local candidates=()
  if [ -n "${TRAINLAB_CONFORMANCE_PYTHON:-}" ]; then
    candidates+=("$TRAINLAB_CONFORMANCE_PYTHON")
  else
    candidates+=(python3.12 python3.13)
    # pyenv keeps versions here on this image; no shim is needed to use them.
    local root=${PYENV_ROOT:-$HOME/.pyenv}
    local v
    for v in "$root"/versions/3.12.* "$root"/versions/3.13.*; do
      [ -x "$v/bin/python" ] && candidates+=("$v/bin/python")
    done
    candidates+=(python3)
  fi
  local c
  for c in "${candidates[@]}"; do
    if command -v "$c" >/dev/null 2>&1 &&
      "$c" -c 'import sys, venv; sys.exit(0 if (3, 12) <= sys.version_info[:2] <= (3, 13) else 1)' 2>/dev/null; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}

# True when the venv holds exactly these requirements and every tool imports.
up_to_date() {
  [ -x "$venv/bin/python" ] || return 1
  [ -f "$stamp" ] || return 1
  [ "$(cat "$stamp")" = "$(sha256sum "$requirements" | cut -d' ' -f1)" ] || return 1
  "$venv/bin/python" - <<'PY' >/dev/null 2>&1
import importlib.util, sys
for name in ("torch", "megatron.training", "transformers", "deepspeed", "accelerate", "yaml", "botocore"):
    if importlib.util.find_spec(name) is None:
        sys.exit(1)
PY
}

if up_to_date; then
  log "up to date: $venv"
  echo "$venv/bin/python"
  exit 0
fi

python=$(find_python) || {
  log "needs Python 3.12 or 3.13 (megatron-core 0.19 requires >= 3.12) and none was found:"
  log "  looked for python3.12, python3.13, \$PYENV_ROOT/versions/3.1[23].*, python3."
  log "  Install one (e.g. 'pyenv install 3.12') or set TRAINLAB_CONFORMANCE_PYTHON=/path/to/python3.12."
  exit 1
}
log "using $python ($("$python" -c 'import sys; print(sys.version.split()[0])'))"

if [ -d "$venv" ]; then
  log "rebuilding $venv (requirements changed or an import failed)"
  rm -rf "$venv"
fi
mkdir -p "$(dirname "$venv")"

# The venv takes 5.3 GB on disk (2.8 GB of CUDA libraries torch links against, 1 GB of triton,
# 1.1 GB of torch), and pip holds each wheel while it unpacks it: measured on 2026-12-04, the disk
# in use rose by 8.0 GB at the install's peak. Say so before starting, with a margin, rather than
# stop halfway with pip's "No space left on device".
need_gb=9
free_kb=$(df -Pk "$(dirname "$venv")" | awk 'NR == 2 { print $4 }')
if [ "${free_kb:-0}" -lt $((need_gb * 1024 * 1024)) ]; then
  log "needs $need_gb GB free for the real tools' venv and only $((free_kb / 1024)) MB is free on"
  log "  $(df -Ph "$(dirname "$venv")" | awk 'NR == 2 { print $6 }') (where $venv goes)."
  log "  Free some space (cargo clean removes old builds), or set TRAINLAB_CONFORMANCE_VENV to a"
  log "  folder on a disk with room."
  exit 1
fi
"$python" -m venv "$venv"

start=$(date +%s)
# --no-deps: requirements.txt is the whole lock (see its header), and torch's declared CUDA
# dependencies include packages nothing loads on CPU. --no-compile: byte-compiling torch's
# thousands of modules costs minutes; Python compiles the few the judge imports on first use.
# --no-cache-dir: a copy of every wheel in pip's cache would take another 3 GB, for a venv that is
# only rebuilt when requirements.txt changes.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-compile \
  --no-cache-dir -r "$requirements" >&2
log "installed in $(($(date +%s) - start)) s"

sha256sum "$requirements" | cut -d' ' -f1 >"$stamp"
if ! up_to_date; then
  log "the tools do not import after installing; see the pip output above"
  exit 1
fi
echo "$venv/bin/python"
