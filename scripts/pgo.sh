#!/usr/bin/env bash
# Makes cmd/kgrepl/default.pgo again: the profile `go build` uses for the
# kgrepl binary (profile-guided optimization; `go build -pgo=off` builds
# without it). It is the CPU profiles of what the binary spends its time
# on, merged: two simulated minutes of T1 typed into the session
# (BenchmarkSteadyHourREPL), ten restarts of T2 under each protocol with
# traffic, the explorer's branches (BenchmarkBranchesREADME) and the
# demos (BenchmarkDemo). A stale profile still works (Go matches it by
# function, and ignores what it cannot place); make it again when the hot
# paths move. Only the binary uses it: `go test` builds the benchmarks of
# sim and kernel without it, so the figures in docs/benchmarks.md are
# without PGO unless they say otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go test -c -o "$dir/sim.test" ./sim
go test -c -o "$dir/kernel.test" ./kernel
go test -c -o "$dir/explore.test" ./kernel/explore
(cd "$dir" &&
  ./kernel.test -test.run XXX -test.bench SteadyHourREPL -replminutes 2 -test.benchtime 1x -test.cpuprofile repl.prof &&
  ./sim.test -test.run XXX -test.bench 'RollingRestartKafkaDefaults1000x100000/consumer' -rollrestarts 10 -historyms 10000 -test.benchtime 1x -test.cpuprofile t2c.prof &&
  ./sim.test -test.run XXX -test.bench 'RollingRestartKafkaDefaults1000x100000/classic' -rollrestarts 10 -historyms 10000 -test.benchtime 1x -test.cpuprofile t2k.prof &&
  ./explore.test -test.run XXX -test.bench BranchesREADME -test.benchtime 3s -test.cpuprofile explore.prof &&
  ./kernel.test -test.run XXX -test.bench 'BenchmarkDemo$' -test.benchtime 3s -test.cpuprofile demo.prof) >/dev/null
go tool pprof -proto "$dir/repl.prof" "$dir/t2c.prof" "$dir/t2k.prof" "$dir/explore.prof" "$dir/demo.prof" > cmd/kgrepl/default.pgo
echo "wrote cmd/kgrepl/default.pgo ($(wc -c < cmd/kgrepl/default.pgo) bytes)"
