//go:build linux

package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"vigil/internal/affinity"
	"vigil/internal/atomicfile"
	"vigil/internal/collector"
	"vigil/internal/memcg"
	"vigil/internal/wire"
)

// ErrInterrupted is returned when the run was stopped (SIGINT) between or
// during samples. Everything recorded so far is intact; --resume finishes.
var ErrInterrupted = errors.New("interrupted")

// ExitIncomplete is vigil bench's exit code when some cell/arm could not
// reach its sample count within the re-measure budget (all outputs are
// still written).
const ExitIncomplete = 3

// Config is one invocation of the harness.
type Config struct {
	Plan   wire.Plan
	OutDir string
	// Resume continues the samples already in OutDir; otherwise OutDir must
	// be empty or absent.
	Resume bool
	// VigilBin is the vigil binary the arms run (agent and record).
	VigilBin string
	// WorkRoot holds the per-sample work directories (default os.TempDir()).
	WorkRoot string
	// KeepArtifacts moves each sample's trace, archive, phase log, agent
	// result and output into OutDir/artifacts/ID instead of deleting them.
	KeepArtifacts bool
	// Timeout bounds one sample (0: none).
	Timeout time.Duration
	// Memcg is the memory cgroup controller (nil: detect).
	Memcg *memcg.Controller
	// Log receives progress and log lines; TTY selects the live line.
	Log io.Writer
	TTY bool
	// JaegerBin is the collector collector arms export to (empty:
	// collector.FindJaeger). bench starts it before the first sample and
	// stops it at the end.
	JaegerBin string
	// Report, when set, writes the report outputs at the end of the run.
	Report func(outDir string, plan wire.Plan, samples []wire.Sample) error
}

// Outcome summarizes a run.
type Outcome struct {
	// Samples holds every sample in samples.jsonl, earlier runs included.
	Samples []wire.Sample
	// Taken, Discarded count samples taken by this invocation.
	Taken, Discarded int
	// TornBytes is the size of an incomplete last line found on resume
	// and removed.
	TornBytes int
	// Shortfalls are the cell/arm pairs below their sample count.
	Shortfalls []shortfall
	// ReportErr is set when the report outputs could not be written.
	ReportErr error
}

// Incomplete names the short cell/arm pairs, e.g. "x1000/A (17 of 20 valid)".
func (o Outcome) Incomplete() []string {
	var out []string
	for _, s := range o.Shortfalls {
		out = append(out, fmt.Sprintf("%s/%s (%d of %d valid)", s.Cell, s.Arm, s.Valid, s.Want))
	}
	return out
}

// PrepareOut creates a fresh output directory (refusing a non-empty one)
// and writes plan.json into it.
func PrepareOut(dir string, p wire.Plan) error {
	ents, err := os.ReadDir(dir)
	switch {
	case err == nil && len(ents) > 0:
		return fmt.Errorf("--out %s is not empty (use --resume %s to continue it, or choose a new directory)", dir, dir)
	case err != nil && !os.IsNotExist(err):
		return fmt.Errorf("--out %s: %v", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out %s: %v", dir, err)
	}
	return WritePlan(dir, p)
}

// Run executes the plan's shard in cfg.OutDir, which must already hold
// plan.json (PrepareOut) or, with Resume, a run to continue.
func Run(ctx context.Context, cfg Config) (Outcome, error) {
	var out Outcome
	p := cfg.Plan
	shard, err := ParseShard(p.Shard)
	if err != nil {
		return out, err
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Memcg == nil {
		cfg.Memcg = memcg.Detect()
	}
	if cfg.WorkRoot == "" {
		cfg.WorkRoot = os.TempDir()
	}
	store, existing, torn, err := OpenStore(cfg.OutDir)
	if err != nil {
		return out, err
	}
	defer store.Close()
	out.TornBytes = torn
	if len(existing) > 0 && !cfg.Resume {
		return out, fmt.Errorf("%s already has samples; use --resume", cfg.OutDir)
	}
	root, err := os.MkdirTemp(cfg.WorkRoot, "vigil-bench-")
	if err != nil {
		return out, fmt.Errorf("work root: %v", err)
	}
	defer os.RemoveAll(root)

	led := newLedger(existing)
	all := append([]wire.Sample{}, existing...)
	blocks := Schedule(p, shard)
	hasWork := map[int]bool{}
	total := 0
	for _, b := range blocks {
		if !b.Warmup() {
			n := len(led.pending(p, b, true))
			total += n
			hasWork[b.Cell] = hasWork[b.Cell] || n > 0
		}
	}
	for _, b := range blocks {
		if b.Warmup() {
			total += len(led.pending(p, b, hasWork[b.Cell]))
		}
	}
	prog := NewProgress(cfg.Log, cfg.TTY, total)
	defer prog.Finish()
	if torn > 0 {
		prog.Logf("removed an incomplete last line (%d bytes) from %s", torn, SamplesFile)
	}
	if cfg.Memcg.Mode() == memcg.None {
		prog.Logf("no memory cgroup (%s): tree_peak_bytes will be -1", cfg.Memcg.Reason())
	}
	exe := &Executor{Memcg: cfg.Memcg, Timeout: cfg.Timeout, StopGrace: 5 * time.Second, StragglerGrace: 2 * time.Second}
	if p.CPUs != "" {
		if exe.CPUs, err = affinity.Parse("--cpus", p.CPUs); err != nil {
			return out, err
		}
	}
	r := &sampler{cfg: cfg, exe: exe, root: root}
	if slices.Contains(p.ArmExports, wire.ExportCollector) {
		bin := cfg.JaegerBin
		if bin == "" {
			bin = p.Collector
		}
		j, err := startCollector(ctx, bin)
		if err != nil {
			if ctx.Err() != nil {
				return out, ErrInterrupted
			}
			return out, err
		}
		r.jaeger = j
		defer func() {
			if err := j.Stop(); err != nil {
				prog.Logf("collector: %v", err)
			}
		}()
		r.otlp = j.TracesURL()
		prog.Logf("collector arms send to Jaeger at %s (query API %s)", j.OTLPEndpoint, j.QueryURL)
	}

	for _, b := range blocks {
		cell := p.Cells[b.Cell]
		for pos, a := range b.Order {
			if !contains(led.pending(p, b, hasWork[b.Cell]), a) {
				continue
			}
			label, kind := p.Arms[a], p.ArmKinds[a]
			ca := cellArm{cell.Name, label}
			if !b.Warmup() && led.tries[slot{cell.Name, b.Index, label}] > 0 && led.reruns[ca] >= p.MaxReruns {
				// A resumed slot whose earlier tries failed would be a
				// re-measure, and the budget is already spent.
				prog.Logf("%s/%s: re-measure budget (%d) spent; block %d stays without a valid %s sample", cell.Name, label, p.MaxReruns, b.Index, label)
				prog.Skip()
				continue
			}
			for {
				if ctx.Err() != nil {
					out.Samples = all
					return out, ErrInterrupted
				}
				k := slot{cell.Name, b.Index, label}
				s := wire.Sample{
					Schema: wire.SampleSchema, Cell: cell.Name, Arm: label, ArmKind: kind,
					Block: b.Index, Position: pos, Attempt: led.tries[k], Warmup: b.Warmup(),
					Seed: p.Seed, Host: p.Host, Versions: p.Versions,
				}
				s.ID = fmt.Sprintf("%s.%s.b%d.t%d", cell.Name, label, b.Index, s.Attempt)
				if shard.N > 1 {
					// Every shard runs its own warm-ups: keep ids unique
					// when vigil report merges the shards.
					s.ID += fmt.Sprintf(".shard%dof%d", shard.I, shard.N)
				}
				prog.Begin(cell.Name, label, b.Index, s.Attempt)
				interrupted, err := r.take(ctx, &s, cell)
				if interrupted {
					prog.Logf("interrupted during %s: its process tree was killed and the sample not recorded", s.ID)
					out.Samples = all
					return out, ErrInterrupted
				}
				if err != nil {
					return out, err
				}
				if err := store.Append(s); err != nil {
					return out, fmt.Errorf("%s: %v", SamplesFile, err)
				}
				led.record(s)
				all = append(all, s)
				out.Taken++
				if !s.Valid {
					out.Discarded++
				}
				prog.End(s)
				if s.Valid || s.Warmup {
					break
				}
				if led.reruns[ca] >= p.MaxReruns {
					prog.Logf("%s/%s: re-measure budget (%d) spent; block %d stays without a valid %s sample", cell.Name, label, p.MaxReruns, b.Index, label)
					break
				}
				// Re-measure at once, inside the same block, so the
				// block's arms stay side by side in time.
			}
		}
	}
	prog.Finish()
	out.Samples = all
	out.Shortfalls = led.shortfalls(p, shard)
	if cfg.Report != nil {
		// A report that cannot be written does not undo the samples: the
		// caller shows what it can and fails afterwards.
		if err := cfg.Report(cfg.OutDir, p, all); err != nil {
			out.ReportErr = fmt.Errorf("report: %v (samples are intact; retry with vigil report %s)", err, cfg.OutDir)
		}
	}
	return out, nil
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// sampler takes single samples.
type sampler struct {
	cfg    Config
	exe    *Executor
	root   string
	otlp   string // the collector's OTLP/HTTP traces URL, or ""
	jaeger *collector.Jaeger
}

// startCollector starts the Jaeger the collector arms export to.
func startCollector(ctx context.Context, bin string) (*collector.Jaeger, error) {
	if bin == "" {
		var err error
		if bin, err = collector.FindJaeger(); err != nil {
			return nil, fmt.Errorf("collector arms: %v", err)
		}
	}
	j, err := collector.Start(ctx, bin)
	if err != nil {
		return nil, fmt.Errorf("collector arms: %v", err)
	}
	return j, nil
}

// take runs one sample in a fresh directory and fills s. It reports
// interrupted (and records nothing) when ctx was cancelled mid-sample.
func (r *sampler) take(ctx context.Context, s *wire.Sample, cell wire.Cell) (interrupted bool, err error) {
	dir, err := os.MkdirTemp(r.root, strings.ReplaceAll(s.ID, "/", "_")+"-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	paths := samplePaths{
		Dir:      dir,
		Work:     filepath.Join(dir, "work"),
		Result:   filepath.Join(dir, "result.json"),
		Archive:  filepath.Join(dir, "run.tar.gz"),
		PhaseLog: filepath.Join(dir, "phases.json"),
		Stdout:   filepath.Join(dir, "stdout.log"),
		Stderr:   filepath.Join(dir, "stderr.log"),
	}
	otlp := ""
	switch r.cfg.Plan.ExportOf(s.Arm) {
	case wire.ExportFile:
		paths.Trace = filepath.Join(dir, "trace.otlp.jsonl")
	case wire.ExportCollector:
		otlp = r.otlp
		// A collector that died would fail every sample until the
		// re-measure budget is spent: stop the run instead.
		if err := r.jaeger.Exited(); err != nil {
			return false, fmt.Errorf("collector arms: %v", err)
		}
	}
	if !usesRunner(s.ArmKind) {
		paths.Archive, paths.PhaseLog = "", ""
	}
	if err := os.Mkdir(paths.Work, 0o755); err != nil {
		return false, err
	}
	stdout, err := os.Create(paths.Stdout)
	if err != nil {
		return false, err
	}
	defer stdout.Close()
	stderr, err := os.Create(paths.Stderr)
	if err != nil {
		return false, err
	}
	defer stderr.Close()

	user := r.cfg.Plan.Command
	argv, env := armCommand(r.cfg.VigilBin, s.ArmKind, cell, user, paths, r.cfg.Plan.CPUs, r.cfg.Plan.RunnerCPUs, r.cfg.Plan.Programs, otlp)
	env = append(env, "VIGIL_BENCH_WORK_DIR="+paths.Work)
	m, err := r.exe.Run(ctx, argv, env, paths.Work, stdout, stderr)
	if m.Interrupted {
		return true, nil
	}
	if err != nil {
		// The harness itself failed (cgroup, spawn, reap): that says
		// nothing about the workload, so it stops the run instead of
		// being recorded as the sample's fault.
		return false, fmt.Errorf("sample %s: %v%s", s.ID, err, stderrTail(paths.Stderr))
	}
	assess(s, sampleRun{m: m, kind: s.ArmKind, cell: cell, userMode: len(user) > 0, paths: paths, maxForeign: r.cfg.Plan.MaxForeignCPUs, collector: otlp != ""})
	if r.cfg.KeepArtifacts {
		if err := keep(paths, filepath.Join(r.cfg.OutDir, "artifacts", s.ID)); err != nil {
			return false, fmt.Errorf("--keep-artifacts: %v", err)
		}
	}
	return false, nil
}

// keep moves a sample's artifacts (not the workload's work directory)
// into dst.
func keep(p samplePaths, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, f := range []string{p.Result, p.Trace, p.Archive, p.PhaseLog, p.Stdout, p.Stderr} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			continue
		}
		target := filepath.Join(dst, filepath.Base(f))
		if err := os.Rename(f, target); err != nil {
			// Another file system: copy, so that a failure leaves no part.
			data, rerr := os.ReadFile(f)
			if rerr != nil {
				return rerr
			}
			if err := atomicfile.Write(target, data); err != nil {
				return err
			}
		}
	}
	return nil
}
