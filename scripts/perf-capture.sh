#!/usr/bin/env bash
# Kernel-capture cost of `vigil record`, measured on this host (root, BPF).
#
#   scripts/perf-capture.sh [bystander|fixed|scale|sweep|ring|tar|all]
#
# bystander  ns per syscall (getpid) of a task outside any session: no
#            program, a sys_exit program that only returns (the floor of
#            any syscall tracepoint), and an open capture; interleaved
#            rounds, medians (BenchmarkSyscall in internal/capture).
# fixed      wall time of `vigil record -- true` against `true`,
#            interleaved, RUNS each: median and interquartile range; the
#            working tree's vigil both loading its programs for each run
#            and taking a resident set (vigil resident load, pinned in a
#            BPF file system mounted for the script and unmounted after).
# scale      OPENS opens (vigil agent --kernel-events OPENS/2) at
#            concurrency 16 under vigil record with the default ring:
#            opens captured, drops, events/s; record's peak RSS and
#            archive_write phase, the archive's size, and what vigil
#            verify of it costs (wall, peak RSS). Needs GNU time.
# sweep      the same workload at concurrency 1..16: events/s reached and
#            drops, to find the rate at which the default ring first drops.
# ring       the same workload at concurrency 16 with rings of 16 KiB up
#            to the default: the ring size at which the host's fastest
#            rate first drops (the default's headroom at that rate).
# tar        GNU tar extracting FILES files (64 bytes, 1000 per directory)
#            into a fresh directory, bare and under vigil record, a
#            warm-up round then REPS rounds in a seeded shuffled order:
#            medians of wall, CPU and peak RSS, record's phases, events
#            captured, and the wall added per captured event (per-round
#            differences, vigil's fixed costs included). Put TMPDIR on a
#            tmpfs.
#
# BEFORE=REV also builds REV (e.g. BEFORE=wire) and runs it side by side,
# interleaved with the working tree; the benchmark source of the working
# tree is used for both, so only the capture itself differs.
# RUNS (30), OPENS (1000000), REPS (3), FILES (100000), TMPDIR override
# the defaults.
set -euo pipefail

mode=${1:-all}
case $mode in bystander|fixed|scale|sweep|ring|tar|all) ;; *)
	echo "perf-capture.sh: unknown mode '$mode' (bystander, fixed, scale, sweep, ring, tar or all)" >&2; exit 2 ;;
esac
RUNS=${RUNS:-30}
OPENS=${OPENS:-1000000}
REPS=${REPS:-3}
FILES=${FILES:-100000}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/perf-capture.XXXXXX")
cleanup() {
	if mountpoint -q "$work/bpf" 2>/dev/null; then umount "$work/bpf"; fi
	if [[ -n ${BEFORE:-} && -d $work/before-src ]]; then
		git -C "$root" worktree remove --force "$work/before-src" >/dev/null 2>&1 || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
export GOFLAGS=${GOFLAGS:--buildvcs=false}

# build NAME SRC: vigil and, for the bystander mode, the capture test
# binary of tree SRC.
build() {
	(cd "$2" && go build -o "$work/vigil-$1" ./cmd/vigil)
	if [[ $mode == bystander || $mode == all ]]; then
		(cd "$2/internal/capture" && go test -c -o "$work/capture-$1.test" .)
	fi
}
variants=(after)
build after "$root"
if [[ -n ${BEFORE:-} ]]; then
	git -C "$root" worktree add --detach "$work/before-src" "$BEFORE" >/dev/null 2>&1
	cp "$root/internal/capture/bench_test.go" "$root/internal/capture/helpers_test.go" "$work/before-src/internal/capture/"
	if ! build before "$work/before-src" 2>"$work/before-build.log"; then
		# The working tree's benchmarks use the capture's newer API: the
		# revision's own benchmark source it is, said so.
		echo "perf-capture.sh: $BEFORE does not build with the working tree's benchmarks; using its own" >&2
		git -C "$work/before-src" checkout -q -- internal/capture
		build before "$work/before-src"
	fi
	variants=(before after)
fi

# Another capture on the host runs its sys_exit program for every task,
# the measuring one included: the bystander numbers would be wrong.
others() {
	if command -v bpftool >/dev/null; then
		bpftool link show 2>/dev/null | grep -c "tp 'sys_exit'" || true
	else
		echo "?"
	fi
}

# stats LABEL FILE: median and quartiles of the numbers in FILE (ms).
stats() {
	sort -n "$2" | awk -v l="$1" '{a[NR]=$1} END {
		printf "%-14s n=%d median %.1f ms  p25 %.1f  p75 %.1f\n", l, NR, a[int((NR+1)/2)], a[int((NR+3)/4)], a[int((3*NR+3)/4)] }'
}

now_ms() { date +%s%N | awk '{printf "%.3f", $1/1e6}'; }

bystander() {
	echo "== bystander: ns per getpid outside the session (thread CPU time; medians of rounds)"
	echo "   other sys_exit programs attached on the host: $(others)"
	for r in $(seq "$REPS"); do
		for v in "${variants[@]}"; do
			"$work/capture-$v.test" -test.run '^$' -test.bench '^BenchmarkSyscall$' -test.benchtime 4000000x |
				awk -v v="$v" '/^BenchmarkSyscall/ { printf "%-7s", v; for (i = 3; i < NF; i += 2) printf "  %s %s", $(i+1), $i; print "" }'
		done
	done
}

# record V ARGS...: vigil record of variant V; after-resident is the
# working tree's vigil taking the resident set, after loads its programs.
record() {
	local v=$1
	shift
	case $v in
	after-resident) "$work/vigil-after" record --programs resident --resident-dir "$work/bpf/vigil" "$@" ;;
	after) "$work/vigil-after" record --programs load "$@" ;;
	*) "$work/vigil-$v" record "$@" ;;
	esac
}

fixed() {
	mkdir -p "$work/bpf"
	mount -t bpf bpf "$work/bpf"
	"$work/vigil-after" resident load --resident-dir "$work/bpf/vigil"
	local fv=("${variants[@]}" after-resident)
	echo "== fixed: wall time per run, $RUNS interleaved runs each"
	: >"$work/fixed-true"
	for v in "${fv[@]}"; do : >"$work/fixed-$v"; done
	for i in $(seq "$RUNS"); do
		t0=$(now_ms); true; /bin/true; t1=$(now_ms)
		echo "$t1 - $t0" | bc >>"$work/fixed-true"
		for v in "${fv[@]}"; do
			t0=$(now_ms)
			record "$v" -q --archive "$work/fixed.vgl" -- /bin/true
			t1=$(now_ms)
			echo "$t1 - $t0" | bc >>"$work/fixed-$v"
		done
	done
	stats "true" "$work/fixed-true"
	for v in "${fv[@]}"; do
		stats "record-$v" "$work/fixed-$v"
		# Per-iteration difference: the timing overhead of the shell cancels.
		paste "$work/fixed-$v" "$work/fixed-true" | awk '{print $1 - $2}' >"$work/added-$v"
		stats "added-$v" "$work/added-$v"
	done
	for v in "${fv[@]}"; do
		record "$v" -q --archive "$work/fixed.vgl" --phase-log "$work/ph.json" -- /bin/true
		echo "phases ($v): $(tr -d ' \n' <"$work/ph.json" | grep -o '"phases_ms":{[^}]*}')"
	done
	"$work/vigil-after" resident unload --resident-dir "$work/bpf/vigil" >/dev/null
	umount "$work/bpf"
}

# agent V OPENS CONC [RING]: one scale run; prints events/s, opens
# captured, drops.
agent() {
	local v=$1 opens=$2 conc=$3 ring=${4:-0} wd="$work/agent"
	rm -rf "$wd" && mkdir -p "$wd"
	local t0 t1
	t0=$(now_ms)
	/usr/bin/time -o "$work/scale-rss" -f %M "$work/vigil-$v" record -q --ring-size "$ring" --archive "$work/scale.vgl" --phase-log "$work/scale-ph.json" -- \
		"$work/vigil-$v" agent --otel=false --work-dir "$wd" --kernel-events $((opens / 2)) --concurrency "$conc" >/dev/null
	t1=$(now_ms)
	/usr/bin/time -o "$work/verify-cost" -f "%e %M" "$work/vigil-$v" verify "$work/scale.vgl" >/dev/null
	"$work/vigil-$v" inspect --json "$work/scale.vgl" >"$work/scale.json"
	python3 - "$work/scale.json" "$work/scale-ph.json" "$v" "$opens" "$conc" "$work/scale-rss" "$work/verify-cost" "$work/scale.vgl" "$ring" <<'PY'
import json, os, sys
ins = json.load(open(sys.argv[1])); ph = json.load(open(sys.argv[2]))
v, want, conc = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
# GNU time's peak is the largest process of the tree (here often the
# agent); vigil's own comes from its phase log, when it writes it (an
# older BEFORE does not).
tree_rss = int(open(sys.argv[6]).read().split()[-1]) / 1024
own = f"{ph['vigil_max_rss_kib'] / 1024:.0f} MiB" if ph.get("vigil_max_rss_kib") else "not reported"
vwall, vrss = open(sys.argv[7]).read().split()[-2:]
size = os.path.getsize(sys.argv[8])
ring = sys.argv[9] if sys.argv[9] != "0" else "default"
h = ins["health"]
opens = h["emitted"]["open"]
worker = sum(p["opens"] for p in ins["top_paths"] if "/workers/w-" in p["path"])
rt = ph["phases_ms"].get("child_runtime", 0) / 1000
total = ins["total_events"]
print(f"{v:7s} conc {conc:2d}  ring {ring:>8s}  events {total}  opens {opens} (worker files {want}, listed {worker})  "
      f"drops {h['ringbuf_drops']['total']}  child_runtime {rt:.2f}s  {total/rt if rt else 0:,.0f} events/s  "
      f"drain {ph['phases_ms'].get('drain', 0):.0f}ms  kernel_layer {h['kernel_layer']['status']}")
print(f"        record peak RSS: vigil {own}, tree {tree_rss:.0f} MiB  archive_write {ph['phases_ms'].get('archive_write', 0)/1000:.2f}s  "
      f"archive {size/1e6:.1f} MB ({size/max(total, 1):.1f} B/event)  verify {vwall}s, peak RSS {int(vrss)/1024:.0f} MiB")
PY
}

scale() {
	echo "== scale: $OPENS opens at concurrency 16, default ring"
	for v in "${variants[@]}"; do agent "$v" "$OPENS" 16; done
}

sweep() {
	echo "== sweep: $((OPENS / 5)) opens per run, default ring"
	for c in 1 2 4 8 16; do
		for v in "${variants[@]}"; do agent "$v" $((OPENS / 5)) "$c"; done
	done
}

# ring: the drop boundary by ring size. The host's fastest producers (16
# workers) against rings from 16 KiB to the default: where a smaller ring
# first drops, and so how much headroom the default has at this rate.
ring() {
	echo "== ring: $((OPENS / 5)) opens per run at concurrency 16, ring sizes up to the default"
	for r in 16384 65536 262144 1048576 4194304 0; do
		for v in "${variants[@]}"; do agent "$v" $((OPENS / 5)) 16 "$r"; done
	done
}

tarx() {
	echo "== tar: $FILES files extracted by GNU tar into $(df --output=fstype "$work" | tail -1), $REPS interleaved rounds, medians"
	python3 - "$work" "$FILES" "$REPS" "${variants[@]}" <<'PY'
import json, os, random, shutil, statistics, subprocess, sys, tarfile, time
work, files, reps, variants = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
src, arc, out = f"{work}/tar-src", f"{work}/files.tar", f"{work}/tar-out"
for i in range(files):
    d = f"{src}/d{i // 1000:04d}"
    if i % 1000 == 0:
        os.makedirs(d)
    with open(f"{d}/f{i:07d}.dat", "wb") as f:
        f.write(b"x" * 64)
with tarfile.open(arc, "w") as t:
    t.add(src, arcname=".")
shutil.rmtree(src)
if reps < 1:
    sys.exit("perf-capture.sh tar: REPS must be at least 1")
rows = {v: [] for v in ["bare"] + variants}
order = list(rows)
rnd = random.Random(1)
for rep in range(reps + 1):  # the first round warms up and is not kept
    rnd.shuffle(order)
    for v in order:
        shutil.rmtree(out, ignore_errors=True)
        os.mkdir(out)
        cmd = ["tar", "-xf", arc, "-C", out]
        if v != "bare":
            cmd = [f"{work}/vigil-{v}", "record", "-q", "--archive", f"{work}/tar-{v}.vgl", "--phase-log", f"{work}/tar-ph.json", "--"] + cmd
        t0 = time.monotonic()
        subprocess.run(["/usr/bin/time", "-o", f"{work}/tar-time", "-f", "%U %S %M"] + cmd, check=True, stdout=subprocess.DEVNULL)
        wall = time.monotonic() - t0
        u, s, m = open(f"{work}/tar-time").read().split()[-3:]
        r = {"wall": wall, "cpu": float(u) + float(s), "rss": int(m) / 1024}
        if v != "bare":
            pl = json.load(open(f"{work}/tar-ph.json"))
            ph = pl["phases_ms"]
            r.update({k: ph.get(k, 0) / 1000 for k in ("child_runtime", "drain", "archive_write")})
            # vigil's own peak when its phase log has it (GNU time's is
            # the tree's largest process; tar's own is the bare row's).
            r["own_rss"] = pl.get("vigil_max_rss_kib", 0) / 1024
        if rep > 0:
            rows[v].append(r)
shutil.rmtree(out, ignore_errors=True)
med = lambda v, k: statistics.median(r[k] for r in rows[v])
print(f"{'bare':7s} wall {med('bare', 'wall'):.3f} s  cpu {med('bare', 'cpu'):.3f} s  peak RSS {med('bare', 'rss'):.1f} MiB")
for v in variants:
    ins = json.loads(subprocess.run([f"{work}/vigil-{v}", "inspect", "--json", f"{work}/tar-{v}.vgl"], check=True, capture_output=True).stdout)
    n, h = ins["total_events"], ins["health"]
    added = statistics.median(a["wall"] - b["wall"] for a, b in zip(rows[v], rows["bare"]))
    own = f"{med(v, 'own_rss'):.1f} MiB" if med(v, 'own_rss') else "not reported"
    print(f"{v:7s} wall {med(v, 'wall'):.3f} s  cpu {med(v, 'cpu'):.3f} s  peak RSS: vigil {own}, tree {med(v, 'rss'):.1f} MiB  "
          f"child_runtime {med(v, 'child_runtime'):.3f} s  drain {med(v, 'drain'):.3f} s  archive_write {med(v, 'archive_write'):.3f} s")
    print(f"        events {n} (opens {h['emitted']['open']}), drops {h['ringbuf_drops']['total']}, kernel_layer {h['kernel_layer']['status']} (last round); "
          f"added wall {added:.3f} s = {added / n * 1e6:.2f} µs per captured event, fixed costs included")
if len(variants) == 2:
    a, b = variants
    d = statistics.median(x["wall"] - y["wall"] for x, y in zip(rows[b], rows[a]))
    print(f"{b} - {a}: median paired wall difference {d:+.3f} s ({d / n * 1e6:+.2f} µs per captured event)")
PY
}

case $mode in
tar) tarx ;;
bystander) bystander ;;
ring) ring ;;
fixed) fixed ;;
scale) scale ;;
sweep) sweep ;;
all) bystander; fixed; scale; sweep; ring; tarx ;;
esac
