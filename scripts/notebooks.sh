#!/usr/bin/env bash
# Runs every notebook in notebooks/ under a real Jupyter with the GoNB
# kernel, as CI does, and fails if a cell errored, a cell showed a kgrepl
# error, or a notebook has no picture (image/svg+xml, image/png, or SVG in
# HTML). On a fresh Debian machine, as root, it first installs what is
# missing: Jupyter from Debian's packages, gonb and goimports built at the
# versions go.mod pins, and the gonb kernel. When all that is there it goes
# straight to running the notebooks.
#
#   scripts/notebooks.sh            # every notebook
#   scripts/notebooks.sh 03 11      # the notebooks whose names start so
#
# The executed notebooks go to $KGREPL_NOTEBOOK_OUT (a temporary folder by
# default); the committed ones stay stripped.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

export PATH="/usr/local/go/bin:$PATH"
gobin=$(go env GOBIN)
if [ -z "$gobin" ]; then gobin="$(go env GOPATH)/bin"; fi
mkdir -p "$gobin"
export PATH="$gobin:$PATH"

# --- Jupyter (Debian's packages) ---
packages=(jupyter-nbconvert python3-nbclient jupyter-client python3-ipykernel)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "notebooks.sh: missing Debian packages ${missing[*]}; run as root or install them" >&2
    exit 1
  fi
  echo "== installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
jupyter=/usr/bin/jupyter
python=/usr/bin/python3

# --- gonb and goimports, at the versions go.mod pins (its tool directive) ---
# `go install github.com/janpfeifer/gonb@v0.11.1` is refused by the module
# proxy, but building it inside this module works.
want="gonb $(go list -m -f '{{.Version}}' github.com/janpfeifer/gonb) goimports $(go list -m -f '{{.Version}}' golang.org/x/tools)"
stamp="$gobin/.kgrepl-notebook-tools"
if [ ! -x "$gobin/gonb" ] || [ ! -x "$gobin/goimports" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "== building $want"
  go build -o "$gobin/gonb" github.com/janpfeifer/gonb
  go build -o "$gobin/goimports" golang.org/x/tools/cmd/goimports
  echo "$want" >"$stamp"
  rm -f "${JUPYTER_DATA_DIR:-$HOME/.local/share/jupyter}/kernels/gonb/kernel.json"
fi

# --- the gonb kernel (gopls is optional, hence --force_deps) ---
kernel="${JUPYTER_DATA_DIR:-$HOME/.local/share/jupyter}/kernels/gonb/kernel.json"
if ! grep -q "\"$gobin/gonb\"" "$kernel" 2>/dev/null; then
  echo "== gonb --install"
  gonb --install --force_deps --logtostderr=false >/dev/null 2>&1 || gonb --install --force_deps
fi

# --- run the notebooks ---
out=${KGREPL_NOTEBOOK_OUT:-$(mktemp -d)}
mkdir -p "$out"
export KGREPL_NB_DELAY=0 # Step's animation without pauses
cd "$root/notebooks"     # GoNB takes the Jupyter root from nbconvert's folder: `..` is the module
notebooks=()
if [ $# -gt 0 ]; then
  for prefix in "$@"; do
    for f in "$prefix"*.ipynb; do [ -e "$f" ] && notebooks+=("$f"); done
  done
else
  notebooks=([0-9][0-9]-*.ipynb)
fi
if [ ${#notebooks[@]} -eq 0 ]; then
  echo "notebooks.sh: no notebook matches $*" >&2
  exit 1
fi

failed=0
total_start=$(date +%s%N)
for nb in "${notebooks[@]}"; do
  start=$(date +%s%N)
  if ! "$jupyter" nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 \
      --output-dir "$out" "$nb" >"$out/${nb%.ipynb}.log" 2>&1; then
    echo "FAIL $nb: nbconvert failed; the end of its log:"
    grep -v '^[IW][0-9]\{4\} ' "$out/${nb%.ipynb}.log" | tail -30
    failed=$((failed + 1))
    continue
  fi
  ms=$((($(date +%s%N) - start) / 1000000))
  if ! "$python" - "$out/$nb" <<'EOF'; then
import json, sys
path = sys.argv[1]
nb = json.load(open(path))
problems, pictures = [], 0
for i, c in enumerate(nb["cells"]):
    if c["cell_type"] != "code":
        continue
    for o in c.get("outputs", []):
        if o.get("output_type") == "error":
            problems.append("cell %d: %s: %s" % (i, o.get("ename"), o.get("evalue")))
        data = o.get("data", {})
        html = "".join(data.get("text/html", []))
        if "kgrepl-error" in html:
            problems.append("cell %d shows a kgrepl error: %s" % (i, html[:300]))
        if "image/svg+xml" in data or "image/png" in data or "<svg" in html or "data:image/png" in html:
            pictures += 1
if pictures == 0:
    problems.append("no picture (image/svg+xml, image/png or SVG in HTML) in any output")
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
EOF
    echo "FAIL $nb (executed copy: $out/$nb)"
    failed=$((failed + 1))
    continue
  fi
  printf 'ok   %4d.%01ds  %s\n' $((ms / 1000)) $((ms % 1000 / 100)) "$nb"
done
ms=$((($(date +%s%N) - total_start) / 1000000))
printf '%d notebook(s) in %d.%01ds, %d failed; executed copies in %s\n' "${#notebooks[@]}" $((ms / 1000)) $((ms % 1000 / 100)) "$failed" "$out"
[ "$failed" -eq 0 ]
