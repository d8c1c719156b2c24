#!/usr/bin/env bash
# Compares the evidence pipeline's stage benchmarks of two revisions on one
# core, interleaved (old, new, old, new, ...) so that load from elsewhere
# on the machine hits both alike, and prints benchstat's comparison.
#
#   scripts/bench-pipeline.sh OLD_REV [NEW_REV|.] [COUNT]
#
# NEW_REV "." (the default) is the working tree. The benchmark files of the
# working tree (bench_test.go and the CPU-time helpers cputime_*_test.go)
# are used for both when OLD_REV builds with them (they call package
# internals such as deflateAll and readEntry); otherwise OLD_REV's own
# benchmark files are used, which the output says: a benchmark only one
# side has is then left out of the comparison by benchstat.
set -euo pipefail
old=${1:?usage: $0 OLD_REV [NEW_REV|.] [COUNT]}
new=${2:-.}
count=${3:-6}
bench=${BENCH:-Stage}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; git -C "$root" worktree remove --force "$tmp/new" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

build() { # rev name
	local dir=$root
	if [ "$1" != . ]; then
		dir=$tmp/$2
		git -C "$root" worktree add --detach -q "$dir" "$1"
		mkdir -p "$tmp/own-$2"
		cp "$dir"/internal/archive/bench_test.go "$dir"/internal/archive/cputime_*_test.go "$tmp/own-$2/" 2>/dev/null || true
		cp "$root"/internal/archive/bench_test.go "$root"/internal/archive/cputime_*_test.go "$dir/internal/archive/"
		if ! (cd "$dir" && GOFLAGS=-buildvcs=false go vet ./internal/archive/ >/dev/null 2>&1); then
			echo "bench-pipeline: $1 does not build with this tree's benchmarks; using its own" >&2
			rm -f "$dir"/internal/archive/cputime_*_test.go
			cp "$tmp/own-$2"/* "$dir/internal/archive/"
		fi
	fi
	(cd "$dir" && GOFLAGS=-buildvcs=false go test -c -o "$tmp/$2.test" ./internal/archive/)
}
build "$old" old
build "$new" new
for _ in $(seq "$count"); do
	for v in old new; do
		"$tmp/$v.test" -test.run '^$' -test.bench "$bench" -test.cpu 1 -test.benchtime 1s >>"$tmp/$v.txt"
	done
done
cd "$root" && go run golang.org/x/perf/cmd/benchstat "$tmp/old.txt" "$tmp/new.txt"
