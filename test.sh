#!/usr/bin/env bash
# Every test kgrepl has, on a fresh machine: formatting, vet, the unit,
# golden, property and pseudo-terminal tests, the fuzz seeds, and the outside
# contract of SPEC §6. Go modules come through the module proxy.
set -euo pipefail
cd "$(dirname "$0")"

echo "== go mod download"
go mod download

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test"
# A package's tests may take longer than go test's 10 minutes on a loaded
# machine (the kernel's session properties replay long sessions).
go test -count=1 -timeout 40m ./...

echo "== notebooks"; scripts/notebooks.sh

if [ -x ../shared/check-contract ]; then
  echo "== contract (../shared/check-contract)"
  ../shared/check-contract
fi
