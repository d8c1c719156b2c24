//go:build linux

package bench

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"vigil/internal/interference"
	"vigil/internal/wire"
)

// Request is one bench invocation, its flags parsed.
type Request struct {
	Options
	// AA runs the first arm a second time under its own label.
	AA bool
	// Out is the output directory of a new run ("": bench-YYYYMMDD-HHMMSS).
	Out string
	// Resume is the directory of an interrupted run to continue.
	Resume string
	// UntilDecided adds blocks a look at a time, LookEvery blocks apart
	// (0: Blocks), up to MaxBlocks, until every verdict is decided at
	// level Alpha.
	UntilDecided         bool
	LookEvery, MaxBlocks int
	Alpha                float64
	// VigilBin is the vigil binary the arms run ("": this executable).
	VigilBin string
	// Version is the harness's version, recorded in the plan.
	Version string
}

// Start is a run ready to be taken.
type Start struct {
	Plan     wire.Plan
	Out      string
	Resume   bool
	VigilBin string
}

// Prepare checks a request against this host and turns it into a run: a
// new plan written into a fresh output directory, or the saved plan of the
// run it resumes, which the options set explicitly must agree with. It
// prints the host's condition and the seed to log. On an error nothing is
// written.
func Prepare(req Request, started time.Time, log io.Writer) (Start, error) {
	st := Start{Out: req.Out, Resume: req.Resume != "", VigilBin: req.VigilBin}
	if st.VigilBin == "" {
		exe, err := os.Executable()
		if err != nil {
			return Start{}, fmt.Errorf("bench: cannot find the vigil binary: %v", err)
		}
		st.VigilBin = exe
	}
	opts := req.Options
	if len(opts.Command) > 0 {
		if _, err := exec.LookPath(opts.Command[0]); err != nil {
			return Start{}, fmt.Errorf("bench: command %q: %v", opts.Command[0], err)
		}
		opts.Given |= GivenCommand
	}
	if req.AA && len(opts.Arms) > 0 {
		opts.Arms = append(opts.Arms[:len(opts.Arms):len(opts.Arms)], opts.Arms[0])
	}
	host := HostInfo()
	fresh, err := NewPlan(opts, host, Versions(req.Version, st.VigilBin, opts.Command))
	if err != nil {
		return Start{}, err
	}
	st.Plan = fresh
	if st.Resume {
		if st.Out != "" && filepath.Clean(st.Out) != filepath.Clean(req.Resume) {
			return Start{}, fmt.Errorf("bench: --out %s and --resume %s name different directories", st.Out, req.Resume)
		}
		st.Out = req.Resume
		saved, err := LoadPlan(st.Out)
		if err != nil {
			return Start{}, err
		}
		if err := ResumeConflicts(saved, fresh, opts.Given); err != nil {
			return Start{}, err
		}
		if saved.Host.HostClass != host.HostClass {
			return Start{}, fmt.Errorf("--resume %s: plan was made on host class %s, this host is %s; resume it there or use --shard", st.Out, saved.Host.HostClass, host.HostClass)
		}
		st.Plan = saved
	}
	if err := checkPrivileges(st.Plan); err != nil {
		return Start{}, err
	}
	if req.UntilDecided && !st.Resume {
		every := req.LookEvery
		if every == 0 {
			every = st.Plan.Blocks
		}
		sq, err := NewSequential(st.Plan, req.Alpha, st.Plan.Blocks, every, req.MaxBlocks)
		if err != nil {
			return Start{}, err
		}
		st.Plan.Sequential = sq
	}
	// The host as it is now, printed and (for a new run) kept in the plan.
	hs := interference.ReadHost()
	if !st.Resume {
		st.Plan.HostState = &hs
	}
	printHostState(log, hs)
	if st.Out == "" {
		st.Out = "bench-" + started.Format("20060102-150405")
	}
	if !st.Resume {
		if err := PrepareOut(st.Out, st.Plan); err != nil {
			return Start{}, err
		}
	}
	if !st.Resume || opts.Given&GivenSeed == 0 {
		fmt.Fprintf(log, "vigil bench: seed %d (replay the same orders with --seed %d); output in %s\n", st.Plan.Seed, st.Plan.Seed, st.Out)
	}
	return st, nil
}

// printHostState prints the host's condition and what in it weakens
// wall-time comparisons.
func printHostState(w io.Writer, h wire.HostState) {
	gov := strings.Join(h.Governors, ",")
	if gov == "" {
		gov = "not exposed"
	}
	na := func(s string) string {
		if s == "" {
			return "not exposed"
		}
		return s
	}
	iso := h.IsolatedCPUs
	if iso == "" {
		iso = "none"
	}
	fmt.Fprintf(w, "vigil bench: host: governor %s, boost %s, SMT %s, isolated CPUs %s, load %.2f, %d MiB available, swap %d/%d MiB used\n",
		gov, na(h.Boost), na(h.SMT), iso, h.Load1, h.MemAvailable>>20, max(h.SwapUsed, 0)>>20, max(h.SwapTotal, 0)>>20)
	for _, warn := range h.Warnings {
		fmt.Fprintf(w, "vigil bench: warning: %s\n", warn)
	}
}

// checkPrivileges refuses Runner arms without root; bare and B run
// anyway (the run notes that the memory cgroup is unavailable).
func checkPrivileges(p wire.Plan) error {
	if os.Geteuid() == 0 {
		return nil
	}
	for _, k := range p.ArmKinds {
		if usesRunner(k) {
			return fmt.Errorf("bench: arm %s runs vigil record, which needs root; run as root or use --arms bare,B", k)
		}
	}
	return nil
}
