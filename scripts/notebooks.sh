#!/usr/bin/env bash
# Runs every notebook in notebooks/ under a real Jupyter with the GoNB
# kernel, as CI does, and fails if a cell errored, a cell showed a kgrepl
# error, a notebook has no picture (image/svg+xml, image/png, or SVG in
# HTML), or its outputs differ from the committed ones (the notebooks are
# committed with their outputs, so that they show on a code host; kgrepl
# is deterministic, so a fresh run must give them byte for byte, once the
# kernel's timing metadata is left out). Then it exports each executed
# notebook to HTML (jupyter nbconvert --to html), opens it in headless
# Chromium and checks the rendered page: every picture the notebook holds
# is drawn with a non-zero size, the first one within the first screen, no
# error output shows, and no text box cuts its text off; it keeps a
# screenshot of each. Last, it starts a Jupyter Notebook server with the
# GoNB kernel and drives the first notebook's tick slider in headless
# Chromium as a reader would (notebooks/browser, with chromedp): its cells
# run with Shift+Enter, the slider moved, the picture checked to change;
# and the same slider in that notebook's HTML export, with no kernel (and
# with scripts off, where its animated diagram must play by itself), and
# in its output shown the way JupyterLab shows one.
#
# On a fresh Debian machine, as root, it first installs what is missing:
# Jupyter (nbconvert and Notebook 6) and Chromium from Debian's packages,
# gonb and goimports built at the versions go.mod pins, and the gonb
# kernel. When all that is there it goes straight to running the
# notebooks, as many at once as there are cores (KGREPL_NOTEBOOK_JOBS sets
# it).
#
#   scripts/notebooks.sh            # every notebook
#   scripts/notebooks.sh 03 11      # the notebooks whose names start so
#   scripts/notebooks.sh --update   # run them and write their outputs into notebooks/ (then commit them)
#
# --update is for after a change that changes what the notebooks show
# (a demo, a picture, the engine, `go run ./notebooks/gen`): it rewrites
# the committed outputs from a fresh run instead of comparing with them,
# and still runs every other check.
#
# The executed notebooks, their HTML and the Chromium logs go to
# $KGREPL_NOTEBOOK_OUT (a temporary folder by default); the screenshots to
# $KGREPL_SCREENSHOTS (build/notebook-screenshots/NN-name.png by default, the
# folder CI keeps as an artifact).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
update=0
if [ "${1:-}" = "--update" ]; then
  update=1
  shift
fi

export PATH="/usr/local/go/bin:$PATH"
gobin=$(go env GOBIN)
if [ -z "$gobin" ]; then gobin="$(go env GOPATH)/bin"; fi
mkdir -p "$gobin"
export PATH="$gobin:$PATH"

# --- Jupyter (Debian's packages) ---
packages=(jupyter-nbconvert python3-nbclient jupyter-client python3-ipykernel jupyter-notebook chromium)
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
chromium=/usr/bin/chromium

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
shots=${KGREPL_SCREENSHOTS:-$root/build/notebook-screenshots}
mkdir -p "$out" "$shots"
out=$(cd "$out" && pwd)
shots=$(cd "$shots" && pwd)
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

# check_outputs reads an executed notebook: no error, no kgrepl error, a
# picture somewhere. It prints how many pictures (kgrepl-picture blocks)
# the outputs hold, for the browser check.
check_outputs() {
  "$python" - "$1" <<'EOF'
import json, sys
path = sys.argv[1]
nb = json.load(open(path))
problems, pictures, blocks = [], 0, 0
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
        blocks += html.count('class="kgrepl-picture"')
if pictures == 0:
    problems.append("no picture (image/svg+xml, image/png or SVG in HTML) in any output")
for p in problems:
    print("  " + p, file=sys.stderr)
print(blocks)
sys.exit(1 if problems else 0)
EOF
}

# The script the browser check adds to a page: once the page has loaded
# and been laid out, it writes what it measured into the DOM, which
# Chromium's --dump-dom prints.
read -r -d '' measure <<'EOF' || true
<script>
window.addEventListener("load", function () {
  var r = {pictures: [], errors: 0, stderr: 0, cut: [], firstTop: -1};
  document.querySelectorAll(".kgrepl-picture").forEach(function (d) {
    // A tick slider's script moves its diagram into a shadow root.
    var el = d.querySelector("svg, img") || (d.shadowRoot && d.shadowRoot.querySelector("svg, img"));
    var b = el ? el.getBoundingClientRect() : {width: 0, height: 0, top: -1};
    r.pictures.push([Math.round(b.width), Math.round(b.height)]);
    if (r.firstTop < 0 && el) r.firstTop = Math.round(b.top + window.scrollY);
  });
  r.errors = document.querySelectorAll(".kgrepl-error").length;
  r.stderr = document.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]').length;
  document.querySelectorAll(".jp-OutputArea-output pre").forEach(function (p) {
    if (p.scrollHeight > p.clientHeight + 2) r.cut.push(p.textContent.slice(0, 60));
  });
  var out = document.createElement("pre");
  out.id = "kgrepl-browser-check";
  out.textContent = "KGREPL-CHECK " + JSON.stringify(r) + " END";
  document.body.appendChild(out);
});
</script>
EOF

# Chromium as CI runs it: headless, no sandbox (CI runs as root), no GPU, no
# network (the page's CDN scripts fail at once; kgrepl's output needs
# none), a fresh profile each time.
chromium_run() {
  local profile rc=0
  profile=$(mktemp -d)
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$profile" \
    --window-size=1280,3000 --hide-scrollbars --virtual-time-budget=10000 "$@" || rc=$?
  rm -rf "$profile"
  return $rc
}

# browser_check exports an executed notebook to HTML, renders it in
# Chromium, checks the page, and keeps a screenshot of its top.
browser_check() {
  local nb=$1 want=$2 base=${1%.ipynb}
  if ! "$jupyter" nbconvert --to html --output-dir "$out" "$out/$nb" >"$out/$base.html.log" 2>&1; then
    echo "  nbconvert --to html failed:" >&2
    tail -5 "$out/$base.html.log" >&2
    return 1
  fi
  "$python" - "$out/$base.html" "$out/$base.check.html" "$measure" <<'EOF'
import sys
page = open(sys.argv[1]).read()
i = page.rfind("</body>")
open(sys.argv[2], "w").write(page[:i] + sys.argv[3] + page[i:] if i >= 0 else page + sys.argv[3])
EOF
  chromium_run --dump-dom "file://$out/$base.check.html" >"$out/$base.dom" 2>"$out/$base.chromium.log" || true
  chromium_run --screenshot="$shots/$base.png" "file://$out/$base.html" >/dev/null 2>>"$out/$base.chromium.log" || true
  "$python" - "$out/$base.dom" "$want" "$shots/$base.png" <<'EOF'
import html, json, os, re, sys
dom, want, shot = open(sys.argv[1]).read(), int(sys.argv[2]), sys.argv[3]
# The last match: the first is the measuring script's own source.
m = ([None] + list(re.finditer(r"KGREPL-CHECK (\{.*?\}) END", dom)))[-1]
if not m:
    print("  the page never finished its check in Chromium (see its .chromium.log)", file=sys.stderr)
    sys.exit(1)
r = json.loads(html.unescape(m.group(1)))
problems = []
if len(r["pictures"]) != want:
    problems.append("%d picture(s) in the page, %d in the notebook's outputs" % (len(r["pictures"]), want))
for i, (w, h) in enumerate(r["pictures"]):
    if w <= 0 or h <= 0:
        problems.append("picture %d drawn %dx%d" % (i + 1, w, h))
# The first picture starts within the first screen of a 1280-pixel-wide
# window (800 pixels: a laptop's), so a reader sees one without scrolling.
if r["firstTop"] < 0 or r["firstTop"] > 800:
    problems.append("the first picture starts %d px down the page (at most 800: within the first screen)" % r["firstTop"])
if r["errors"] or r["stderr"]:
    problems.append("%d kgrepl error(s), %d stderr output(s) shown" % (r["errors"], r["stderr"]))
for t in r["cut"]:
    problems.append("a text box cuts its text off: %r" % t)
if not os.path.exists(shot) or os.path.getsize(shot) == 0:
    problems.append("no screenshot")
for p in problems:
    print("  " + p, file=sys.stderr)
print("%d pictures drawn" % len(r["pictures"]))
sys.exit(1 if problems else 0)
EOF
}

# normalize writes an executed notebook as it is committed: the committed
# notebook's metadata (the kernel's language_info names the Go version of
# the machine that ran it), and no cell's execution timing; everything else,
# outputs and execution counts, as the run gave it.
normalize() {
  "$python" - "$1" "$2" "$3" <<'EOF'
import json, sys
src, executed, dst = sys.argv[1:4]
committed, nb = json.load(open(src)), json.load(open(executed))
nb["metadata"] = committed["metadata"]
for c in nb["cells"]:
    c.get("metadata", {}).pop("execution", None)
with open(dst, "w") as f:
    f.write(json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n")
EOF
}

# compare_committed fails, saying which cells differ, when a committed
# notebook is not, as JSON, what a fresh run gives.
compare_committed() {
  "$python" - "$1" "$2" <<'EOF'
import json, sys
committed, fresh = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
if committed == fresh:
    sys.exit(0)  # equal as JSON (gen writes a text-only change itself, in Go's layout)
if len(committed["cells"]) != len(fresh["cells"]):
    print("  %d cells committed, %d run" % (len(committed["cells"]), len(fresh["cells"])), file=sys.stderr)
    sys.exit(1)
bad = 0
for a, b in zip(committed["cells"], fresh["cells"]):
    if a == b:
        continue
    bad += 1
    if bad > 5:
        continue
    what = "its source" if a.get("source") != b.get("source") else "its outputs"
    if what == "its outputs" and not a.get("outputs"):
        what = "its outputs (none committed)"
    print("  cell %s differs in %s: %s" % (a.get("id"), what, "".join(a.get("source", []))[:80].replace("\n", " ")), file=sys.stderr)
if bad == 0:
    print("  the notebooks' metadata differ", file=sys.stderr)
print("  %d cell(s) differ; if the change is meant, scripts/notebooks.sh --update writes the outputs" % bad, file=sys.stderr)
sys.exit(1)
EOF
}

# run_one executes one notebook, checks its outputs and its page, and
# writes its result to $out/NAME.status.
run_one() {
  local nb=$1 base=${1%.ipynb} start ms pics rendered
  start=$(date +%s%N)
  if ! "$jupyter" nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 \
      --output-dir "$out" "$nb" >"$out/$base.log" 2>&1; then
    {
      echo "FAIL $nb: nbconvert failed; the end of its log:"
      grep -v '^[IW][0-9]\{4\} ' "$out/$base.log" | tail -30  || true
    } >"$out/$base.status"
    return
  fi
  if ! pics=$(check_outputs "$out/$nb" 2>"$out/$base.problems"); then
    { echo "FAIL $nb (executed copy: $out/$nb)"; cat "$out/$base.problems"; } >"$out/$base.status"
    return
  fi
  normalize "$nb" "$out/$nb" "$out/$base.fresh.ipynb"
  local committed="committed outputs match"
  if [ "$update" = 1 ]; then
    if compare_committed "$nb" "$out/$base.fresh.ipynb" 2>/dev/null; then
      committed="committed outputs already up to date"
    else
      cp "$out/$base.fresh.ipynb" "$nb"
      committed="outputs written to notebooks/$nb"
    fi
  elif ! compare_committed "$nb" "$out/$base.fresh.ipynb" 2>"$out/$base.problems"; then
    { echo "FAIL $nb: the committed notebook is not what a fresh run gives (fresh: $out/$base.fresh.ipynb)"; cat "$out/$base.problems"; } >"$out/$base.status"
    return
  fi
  if ! rendered=$(browser_check "$nb" "$pics" 2>"$out/$base.problems"); then
    { echo "FAIL $nb in Chromium (page: $out/$base.html)"; cat "$out/$base.problems"; } >"$out/$base.status"
    return
  fi
  ms=$((($(date +%s%N) - start) / 1000000))
  printf 'ok   %4d.%01ds  %s (%s; %s)\n' $((ms / 1000)) $((ms % 1000 / 100)) "$nb" "$rendered" "$committed" >"$out/$base.status"
}

jobs=${KGREPL_NOTEBOOK_JOBS:-$(nproc)}
total_start=$(date +%s%N)
running=0
for nb in "${notebooks[@]}"; do
  rm -f "$out/${nb%.ipynb}.status"
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "$nb" &
  running=$((running + 1))
done
wait
failed=0
for nb in "${notebooks[@]}"; do
  status="$out/${nb%.ipynb}.status"
  if [ ! -s "$status" ]; then
    echo "FAIL $nb: no result (see $out/${nb%.ipynb}.log)"
    failed=$((failed + 1))
    continue
  fi
  cat "$status"
  grep -q '^ok ' "$status" || failed=$((failed + 1))
done
ms=$((($(date +%s%N) - total_start) / 1000000))
printf '%d notebook(s) in %d.%01ds on %d job(s), %d failed\n' "${#notebooks[@]}" $((ms / 1000)) $((ms % 1000 / 100)) "$jobs" "$failed"

# live_slider opens a notebook from a Jupyter Notebook server with the GoNB
# kernel in headless Chromium and moves its tick slider as a reader would
# (notebooks/browser, with chromedp), then does the same in the notebook's
# HTML export, which needs no kernel, and in its output shown the way
# JupyterLab shows one (JupyterLab is not among Debian's packages).
live_slider() {
  local nb=$1 base=${1%.ipynb} copy port token server rc=0
  copy=$(mktemp -d)
  cp "$root/notebooks/$nb" "$copy/"
  port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  token=$("$python" -c 'import secrets; print(secrets.token_hex(16))')
  # GoNB takes the Jupyter root from the server's folder (notebooks/, whose
  # `..` is this module); the server serves a copy of the notebook, so its
  # autosave never touches the committed one.
  (cd "$root/notebooks" && exec "$jupyter" notebook --no-browser --allow-root --ip=127.0.0.1 --port="$port" \
    --NotebookApp.token="$token" --NotebookApp.notebook_dir="$copy" >"$out/jupyter-server.log" 2>&1) &
  server=$!
  local up=0
  for _ in $(seq 1 120); do
    if "$python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
        "http://127.0.0.1:$port/api/status?token=$token" 2>/dev/null; then
      up=1
      break
    fi
    kill -0 "$server" 2>/dev/null || break
    sleep 0.5
  done
  if [ "$up" = 1 ]; then
    (cd "$root" && KGREPL_JUPYTER_URL="http://127.0.0.1:$port" KGREPL_JUPYTER_TOKEN="$token" KGREPL_NOTEBOOK="$nb" \
      KGREPL_EXPORT_HTML="$out/$base.html" KGREPL_EXECUTED_NOTEBOOK="$out/$base.fresh.ipynb" \
      KGREPL_SCREENSHOTS="$shots" KGREPL_CHROMIUM="$chromium" \
      go test -count=1 -v -timeout 15m ./notebooks/browser) >"$out/slider.log" 2>&1 || rc=$?
  else
    echo "the Jupyter server did not answer on port $port (see $out/jupyter-server.log)" >"$out/slider.log"
    rc=1
  fi
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  rm -rf "$copy"
  return $rc
}

slider=""
for nb in "${notebooks[@]}"; do
  if grep -q '^ok ' "$out/${nb%.ipynb}.status" 2>/dev/null && grep -q 's.Scrub(' "$nb"; then
    slider=$nb
    break
  fi
done
if [ -n "$slider" ]; then
  start=$(date +%s%N)
  if live_slider "$slider"; then
    ms=$((($(date +%s%N) - start) / 1000000))
    printf 'ok   %4d.%01ds  the tick slider of %s in a live notebook, its HTML export (scripts on and off) and as JupyterLab shows it\n' $((ms / 1000)) $((ms % 1000 / 100)) "$slider"
    grep -E '^ +slider_test.go:[0-9]+: (live|export|lab|no script):' "$out/slider.log" || true
  else
    echo "FAIL the tick slider of $slider (log: $out/slider.log):"
    grep -E '^\s+slider_test.go|^--- FAIL|^FAIL|panic' "$out/slider.log" | head -30 || tail -30 "$out/slider.log"
    failed=$((failed + 1))
  fi
elif [ "$failed" -eq 0 ]; then
  echo "FAIL no notebook run here has a tick slider to drive"
  failed=$((failed + 1))
fi
ms=$((($(date +%s%N) - total_start) / 1000000))
printf 'all in %d.%01ds, %d failed\nexecuted notebooks and pages: %s\nscreenshots: %s\n' \
  $((ms / 1000)) $((ms % 1000 / 100)) "$failed" "$out" "$shots"
[ "$failed" -eq 0 ]
