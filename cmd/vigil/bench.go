//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"vigil/internal/bench"
	"vigil/internal/interference"
	"vigil/internal/report"
	"vigil/internal/wire"
)

var benchFlags struct {
	arms, cells  string
	custom       []string
	blocks       int
	warmup       int
	order        string
	seed         int64
	maxReruns    int
	maxForeign   float64
	untilDecided bool
	aa           bool
	cpus         string
	runnerCPUs   string
	programs     string
	maxBlocks    int
	lookEvery    int
	out, resume  string
	shard        string
	quick        bool
	keep         bool
	timeout      time.Duration
	workRoot     string
	vigilBin     string
	noReport     bool
	jaeger       string
}

var benchCmd = &cobra.Command{
	Use:   "bench [flags] [-- CMD [ARGS...]]",
	Short: "Measure what each observation layer costs (arms bare, A, B, C)",
	Long: `vigil bench runs the same workload under four observation layers and measures
each run: wall time, CPU of the whole process tree, peak memory (largest
process from wait4, whole tree from a per-sample memory cgroup), artifact
sizes, and for the Runner arms the capture health, phases and calibration.

Arms (--arms, default bare,A,B,C; a kind may repeat for an A/A noise floor:
"A,A" runs labels A and A2):
  bare  vigil agent --otel=false
  A     vigil record --archive X --phase-log P -- vigil agent --otel=false
  B     vigil agent --otel=true --trace-out T
  C     vigil record ... -- vigil agent --otel=true --trace-out T
  B@collector, C@collector: B and C with the spans sent over OTLP/HTTP to a
        real collector (--otlp-endpoint) instead of a file: a Jaeger
        all-in-one (--jaeger) that bench starts on loopback before the first
        sample and stops at the end. Each sample records the agent's export
        counts ("otlp_export"); a sample with a failed span export is
        re-measured. Jaeger's own CPU is outside the sample (the interference
        gate sees it as foreign CPU). Run B,B@collector side by side to
        compare file and network export.
With "-- CMD...", CMD is measured instead of the agent; tracing is toggled with
OTEL_SDK_DISABLED=true/false (collector arms also set
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and CMD runs in its own fresh directory
(also in $VIGIL_BENCH_WORK_DIR).

Cells (--cells, default control,x1000,s500): control; k100, k500/x500,
k1000/x1000 (N worker files); s100, s500, s1000 (N span events); kc1000
(1000 files, concurrency 16); corner (100 files, 100 span events, concurrency
4, payload 65536); corner-lite (1000 files, 1000 span events, concurrency 8,
payload 65536). Unless a cell says otherwise, concurrency is 1 and the payload
128 bytes. Custom cells: --cell NAME:kernel=N,span=M,conc=C,payload=B (payload
also small/medium/large); a custom cell runs even if --cells does not name it.

Each block runs every arm once, in an order drawn from --seed (printed, and
recorded in plan.json) or rotated (--order counterbalanced). --warmup blocks
run first and are recorded with warmup=true but never counted. A sample is
valid only if it exited 0 and, for A/C, the capture is complete and clean with
no ring-buffer drops and the kernel calibration matches (2 opens per worker
file, N write + N read); for B/C the span events retained + dropped must equal
those requested. Invalid samples stay in samples.jsonl with their reason and
are re-measured at once within the same block, up to --max-reruns per cell and
arm.

Outputs in --out DIR (must be empty): plan.json, samples.jsonl (one line per
sample, synced as taken), then the report files. --resume DIR continues an
interrupted run without redoing valid samples. --shard i/n runs every n-th
block (from i) of the plan, so several hosts can share one plan and
"vigil report DIR..." merges them.

Measurement notes: wall time runs from starting the sample's process to
reaping it. Every sample starts as a small /bin/sh that joins the memory
cgroup (v1 hosts), forks the command and exits; vigil bench, a child
subreaper, then reaps the command itself. That start (a few ms with the
cgroup join; /bin/true measures about 4 ms in all) is inside every
arm's wall and CPU alike; max_rss_bytes is the command's own ru_maxrss (not
inflated by vigil bench's RSS, as a directly spawned child's would be). As an
asynchronous shell command, the workload starts with SIGINT and SIGQUIT
ignored; samples are stopped with SIGTERM, then SIGKILL.
Tree peaks include page cache the tree charged (files it wrote).

Needs root for arms A and C (vigil record) and for the memory cgroup; without
root, bare and B still run, with tree_peak_bytes -1.

Exit codes: 0 all cells complete; 3 some cell/arm fell short of its sample
count (named on stderr; all outputs are written); 130 interrupted (SIGINT or
SIGTERM: the current sample's processes are killed, recorded samples are kept);
125 vigil itself failed.`,
	Example: `  vigil bench --quick
  vigil bench --arms bare,A,B,C --cells control,x1000,s500 -n 20 --warmup 2 --out results
  vigil bench --arms A,A -n 30 --out aa-noise
  vigil bench --arms B,C,B@collector,C@collector --cells s500 -n 10 --out export-cost
  vigil bench --cell big:kernel=5000,conc=4 --cells big --out big
  vigil bench --resume results
  vigil bench --arms bare,B -n 10 --out mine -- ./my-agent --task x`,
	RunE: runBench,
}

func init() {
	f := benchCmd.Flags()
	f.StringVar(&benchFlags.arms, "arms", "bare,A,B,C", "arms to run, comma-separated (bare, A, B, C, B@collector, C@collector; repeat one for an A/A run)")
	f.StringVar(&benchFlags.cells, "cells", "control,x1000,s500", "cells to run, comma-separated (presets or --cell names)")
	f.StringArrayVar(&benchFlags.custom, "cell", nil, "custom cell NAME:kernel=N,span=M,conc=C,payload=B (repeatable)")
	f.IntVarP(&benchFlags.blocks, "blocks", "n", 20, "measured blocks per cell (each runs every arm once)")
	f.IntVar(&benchFlags.warmup, "warmup", 1, "warm-up blocks per cell, run first and discarded")
	f.StringVar(&benchFlags.order, "order", bench.OrderRandom, "arm order within a block: random (seeded) or counterbalanced (rotations)")
	f.Int64Var(&benchFlags.seed, "seed", 0, "seed for the arm orders (default: derived from the clock, printed and recorded)")
	f.Float64Var(&benchFlags.maxForeign, "max-foreign-cpus", interference.DefaultMaxForeignCPUs, "interference gate: re-measure a sample during which more than `N` CPUs were busy outside it on average (0 = off)")
	f.StringVar(&benchFlags.cpus, "cpus", "", "pin every sample's process tree to `LIST` (kernel CPU list, e.g. 1 or 0-1,3); kept in plan.json")
	f.StringVar(&benchFlags.runnerCPUs, "runner-cpus", "", "in the Runner arms, pin vigil record itself to `LIST`, apart from the workload (which runs on --cpus, or the sample's CPUs)")
	f.StringVar(&benchFlags.programs, "programs", "load", "where the Runner arms' capture programs come from: `load` (for each sample) or resident (the set vigil resident load pinned, which must be there; measures what a host with one pays)")
	f.BoolVar(&benchFlags.aa, "aa", false, "A/A calibration: run the first arm of --arms a second time under its own label, interleaved like the others; the report gives the false-difference rate of these settings on this host and cites it beside every wall-time claim")
	f.BoolVar(&benchFlags.untilDecided, "until-decided", false, "add blocks a look at a time until every decomposition verdict is decided or --max-blocks is reached (group-sequential: O'Brien-Fleming-type alpha spending, so repeated looks do not inflate false verdicts); -n is the first look")
	f.IntVar(&benchFlags.maxBlocks, "max-blocks", 60, "--until-decided: the most blocks per cell")
	f.IntVar(&benchFlags.lookEvery, "look-every", 0, "--until-decided: blocks added between looks (default: -n)")
	f.IntVar(&benchFlags.maxReruns, "max-reruns", 3, "re-measures allowed per cell and arm for invalid samples")
	f.StringVar(&benchFlags.out, "out", "", "output directory (must be empty; default bench-YYYYMMDD-HHMMSS)")
	f.StringVar(&benchFlags.resume, "resume", "", "continue the interrupted run in `DIR` (plan from DIR/plan.json)")
	f.StringVar(&benchFlags.shard, "shard", "1/1", "run only shard i/n of the plan's blocks")
	f.BoolVar(&benchFlags.quick, "quick", false, "a short look (about a minute on 2 cores): arms bare,A,B,C on control,x1000,s500, 6 blocks + 1 warm-up")
	f.BoolVar(&benchFlags.keep, "keep-artifacts", false, "keep each sample's trace, archive, phase log and output in OUT/artifacts/ID")
	f.DurationVar(&benchFlags.timeout, "timeout", 10*time.Minute, "stop (and discard) a sample that runs longer than this")
	f.StringVar(&benchFlags.workRoot, "work-root", os.TempDir(), "where per-sample work directories are created (and removed)")
	f.StringVar(&benchFlags.vigilBin, "vigil-bin", "", "vigil binary the arms run (default: this one)")
	f.BoolVar(&benchFlags.noReport, "no-report", false, "write only plan.json and samples.jsonl (run vigil report later)")
	f.StringVar(&benchFlags.jaeger, "jaeger", "", "Jaeger all-in-one binary for the collector arms (default: $VIGIL_JAEGER, tools/bin/jaeger, or jaeger on PATH)")
	_ = f.MarkHidden("vigil-bin")
	rootCmd.AddCommand(benchCmd)
}

// quickDefaults are the --quick settings; flags given explicitly win.
// Six blocks is the fewest for which a paired 95% interval exists (the
// Wilcoxon signed-rank test's smallest two-sided p at n=6 is 2/64).
var quickDefaults = map[string]string{"arms": "bare,A,B,C", "cells": "control,x1000,s500", "blocks": "6", "warmup": "1"}

// givenFlags maps the plan-shaping flags to the options they set, so a
// resume can check the ones given explicitly against the saved plan.
var givenFlags = map[string]bench.Given{
	"arms": bench.GivenArms, "cells": bench.GivenCells, "cell": bench.GivenCustomCells,
	"blocks": bench.GivenBlocks, "warmup": bench.GivenWarmup, "order": bench.GivenOrder,
	"seed": bench.GivenSeed, "max-reruns": bench.GivenMaxReruns, "shard": bench.GivenShard,
	"cpus": bench.GivenCPUs, "runner-cpus": bench.GivenRunnerCPUs, "max-foreign-cpus": bench.GivenMaxForeignCPUs,
	"programs": bench.GivenPrograms,
}

func runBench(cmd *cobra.Command, args []string) error {
	started := time.Now()
	fl := cmd.Flags()
	if dash := cmd.ArgsLenAtDash(); len(args) > 0 && dash != 0 {
		return fmt.Errorf("bench: unexpected argument %q; put a command to measure after --", args[0])
	}
	if benchFlags.quick {
		for name, v := range quickDefaults {
			if !fl.Changed(name) {
				_ = fl.Set(name, v)
			}
		}
	}
	var given bench.Given
	for name, g := range givenFlags {
		if fl.Changed(name) {
			given |= g
		}
	}
	st, err := bench.Prepare(bench.Request{
		Options: bench.Options{
			Arms: strings.Split(benchFlags.arms, ","), Cells: strings.Split(benchFlags.cells, ","),
			CustomCells: benchFlags.custom, Blocks: benchFlags.blocks, Warmup: benchFlags.warmup,
			Order: benchFlags.order, Seed: benchFlags.seed, MaxReruns: benchFlags.maxReruns,
			Shard: benchFlags.shard, Command: args, MaxForeignCPUs: benchFlags.maxForeign,
			CPUs: benchFlags.cpus, RunnerCPUs: benchFlags.runnerCPUs, Programs: benchFlags.programs, Jaeger: benchFlags.jaeger, Given: given,
		},
		AA: benchFlags.aa, Out: benchFlags.out, Resume: benchFlags.resume,
		UntilDecided: benchFlags.untilDecided, LookEvery: benchFlags.lookEvery, MaxBlocks: benchFlags.maxBlocks,
		// Rounded: 1 − 0.95 is 0.050000000000000044 in binary.
		Alpha:    math.Round((1-report.DefaultOptions().Confidence)*1e9) / 1e9,
		VigilBin: benchFlags.vigilBin, Version: version,
	}, started, os.Stderr)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	plan, out := st.Plan, st.Out
	cfg := bench.Config{
		Plan: plan, OutDir: out, Resume: st.Resume, VigilBin: st.VigilBin,
		WorkRoot: benchFlags.workRoot, KeepArtifacts: benchFlags.keep, Timeout: benchFlags.timeout,
		Log: os.Stderr, TTY: term.IsTerminal(int(os.Stderr.Fd())), JaegerBin: benchFlags.jaeger,
	}
	if !benchFlags.noReport {
		cfg.Report = writeBenchReport
	}
	var res bench.Outcome
	if plan.Sequential != nil {
		res, err = bench.RunSequential(ctx, cfg, report.Decided)
	} else {
		res, err = bench.Run(ctx, cfg)
	}
	if errors.Is(err, bench.ErrInterrupted) {
		fmt.Fprintf(os.Stderr, "vigil bench: interrupted after %d samples this run; %s is intact; continue with: vigil bench --resume %s\n", res.Taken, filepath.Join(out, bench.SamplesFile), out)
		return exitError{130}
	}
	if err != nil {
		return err
	}
	bench.WriteSummary(os.Stdout, plan, res.Samples)
	fmt.Fprintf(os.Stderr, "vigil bench: %d samples taken (%d discarded) in %s; outputs in %s", res.Taken, res.Discarded, time.Since(started).Round(time.Second), out)
	if cfg.Report != nil && res.ReportErr == nil {
		fmt.Fprintf(os.Stderr, " (statistics: %s, %s)", filepath.Join(out, report.FindingsFile), filepath.Join(out, report.HTMLFile))
	}
	fmt.Fprintln(os.Stderr)
	if res.ReportErr != nil {
		return res.ReportErr
	}
	if inc := res.Incomplete(); len(inc) > 0 {
		fmt.Fprintf(os.Stderr, "vigil bench: incomplete: %s\n", strings.Join(inc, ", "))
		return exitError{bench.ExitIncomplete}
	}
	return nil
}

// writeBenchReport writes the report outputs (summary.json, bmf.json,
// bench.txt, findings.md, report.html) for a finished run.
func writeBenchReport(outDir string, plan wire.Plan, samples []wire.Sample) error {
	opts := report.DefaultOptions()
	opts.Version = version
	_, err := report.WriteAll(outDir, plan, samples, opts)
	return err
}
