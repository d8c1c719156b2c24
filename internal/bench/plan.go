//go:build linux

package bench

import (
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"vigil/internal/affinity"
	"vigil/internal/atomicfile"
	"vigil/internal/collector"
	"vigil/internal/sample"
)

// Options are the plan-shaping flags.
type Options struct {
	Arms        []string // kinds, possibly repeated (A,A)
	Cells       []string // cell names
	CustomCells []string // --cell specs
	Blocks      int
	Warmup      int
	Order       string
	Seed        int64
	SeedSet     bool // false: derive the seed from the clock
	MaxReruns   int
	// MaxForeignCPUs is the interference gate (0: off).
	MaxForeignCPUs float64
	// CPUs pins the samples (a kernel CPU list; "" for none).
	CPUs string
	// RunnerCPUs pins vigil record in the Runner arms ("" for none).
	RunnerCPUs string
	Shard      string
	Command    []string // user command; empty for the built-in agent
	// Jaeger is the collector binary for collector arms ("": found by
	// collector.FindJaeger).
	Jaeger string
}

// NewPlan resolves opts into a plan for this host.
func NewPlan(opts Options, host sample.Host, versions map[string]string) (sample.Plan, error) {
	labels, kinds, exports, err := ParseArms(opts.Arms)
	if err != nil {
		return sample.Plan{}, err
	}
	jaeger := ""
	if slices.Contains(exports, sample.ExportCollector) {
		if jaeger = opts.Jaeger; jaeger == "" {
			if jaeger, err = collector.FindJaeger(); err != nil {
				return sample.Plan{}, fmt.Errorf("--arms %s: %v", strings.Join(opts.Arms, ","), err)
			}
		} else if _, err := os.Stat(jaeger); err != nil {
			return sample.Plan{}, fmt.Errorf("--jaeger %v", err)
		}
		if abs, err := filepath.Abs(jaeger); err == nil {
			jaeger = abs // a resume from elsewhere finds it
		}
	}
	cells, err := ResolveCells(opts.Cells, opts.CustomCells)
	if err != nil {
		return sample.Plan{}, err
	}
	if opts.Blocks < 1 {
		return sample.Plan{}, fmt.Errorf("-n %d: need at least one block", opts.Blocks)
	}
	if opts.Warmup < 0 {
		return sample.Plan{}, fmt.Errorf("--warmup %d: must not be negative", opts.Warmup)
	}
	if opts.MaxReruns < 0 {
		return sample.Plan{}, fmt.Errorf("--max-reruns %d: must not be negative", opts.MaxReruns)
	}
	if !(opts.MaxForeignCPUs >= 0) || math.IsInf(opts.MaxForeignCPUs, 0) {
		return sample.Plan{}, fmt.Errorf("--max-foreign-cpus %v: want a number of CPUs >= 0 (0 turns the gate off)", opts.MaxForeignCPUs)
	}
	if opts.CPUs != "" {
		if _, err := affinity.Parse("--cpus", opts.CPUs); err != nil {
			return sample.Plan{}, err
		}
	}
	if opts.RunnerCPUs != "" {
		if _, err := affinity.Parse("--runner-cpus", opts.RunnerCPUs); err != nil {
			return sample.Plan{}, err
		}
	}
	if opts.Order != OrderRandom && opts.Order != OrderCounterbalanced {
		return sample.Plan{}, fmt.Errorf("--order %q: want random or counterbalanced", opts.Order)
	}
	shard, err := ParseShard(opts.Shard)
	if err != nil {
		return sample.Plan{}, err
	}
	now := time.Now()
	seed := opts.Seed
	if !opts.SeedSet {
		// Positive and below 2^53 so it survives any JSON reader intact.
		seed = now.UnixNano() & (1<<53 - 1)
	}
	return sample.Plan{
		Schema:         sample.PlanSchema,
		CreatedUnix:    now.Unix(),
		Arms:           labels,
		ArmKinds:       kinds,
		ArmExports:     collectorExports(exports),
		Collector:      jaeger,
		Cells:          cells,
		Blocks:         opts.Blocks,
		Warmup:         opts.Warmup,
		Order:          opts.Order,
		Seed:           seed,
		MaxReruns:      opts.MaxReruns,
		MaxForeignCPUs: opts.MaxForeignCPUs,
		CPUs:           opts.CPUs,
		RunnerCPUs:     opts.RunnerCPUs,
		Shard:          shard.String(),
		Command:        opts.Command,
		Host:           host,
		Versions:       versions,
	}, nil
}

// ResumeConflicts compares the flags the user set explicitly (by flag name)
// with the saved plan and names the first that disagrees.
func ResumeConflicts(saved sample.Plan, fresh sample.Plan, changed []string) error {
	for _, name := range changed {
		var a, b any
		switch name {
		case "arms":
			a, b = saved.Arms, fresh.Arms
		case "cells", "cell":
			a, b = saved.Cells, fresh.Cells
		case "blocks":
			a, b = saved.Blocks, fresh.Blocks
		case "warmup":
			a, b = saved.Warmup, fresh.Warmup
		case "order":
			a, b = saved.Order, fresh.Order
		case "seed":
			a, b = saved.Seed, fresh.Seed
		case "max-reruns":
			a, b = saved.MaxReruns, fresh.MaxReruns
		case "shard":
			a, b = saved.Shard, fresh.Shard
		case "cpus":
			a, b = saved.CPUs, fresh.CPUs
		case "runner-cpus":
			a, b = saved.RunnerCPUs, fresh.RunnerCPUs
		case "max-foreign-cpus":
			a, b = saved.MaxForeignCPUs, fresh.MaxForeignCPUs
		case "command":
			a, b = saved.Command, fresh.Command
		default:
			continue
		}
		if !reflect.DeepEqual(a, b) {
			return fmt.Errorf("--resume: --%s %v conflicts with the plan's %v; drop the flag or start a new --out", name, b, a)
		}
	}
	return nil
}

// HostInfo describes this machine.
func HostInfo() sample.Host {
	h := sample.Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
	h.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	h.HostClass = h.OS + "-" + h.Arch + "-" + h.Kernel
	return h
}

// Versions names the tools a run used: the harness, the Go toolchain and
// the vigil binary the arms run (with its OpenTelemetry SDK), and the user
// command when there is one.
func Versions(harnessVersion, vigilBin string, command []string) map[string]string {
	v := map[string]string{"vigil_bench": harnessVersion, "go_bench": runtime.Version()}
	if bi, err := buildinfo.ReadFile(vigilBin); err == nil {
		v["go_workload"] = bi.GoVersion
		v["vigil_module"] = bi.Main.Version
		for _, d := range bi.Deps {
			switch d.Path {
			case "go.opentelemetry.io/otel/sdk":
				v["otel_sdk"] = d.Version
			case "github.com/cilium/ebpf":
				v["cilium_ebpf"] = d.Version
			}
		}
	}
	if len(command) > 0 {
		v["command"] = strings.Join(command, " ")
	}
	return v
}

// Output file names.
const (
	PlanFile    = "plan.json"
	SamplesFile = "samples.jsonl"
)

// WritePlan writes plan.json atomically (temp file + rename).
func WritePlan(dir string, p sample.Plan) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, PlanFile), append(data, '\n'))
}

// LoadPlan reads dir/plan.json.
func LoadPlan(dir string) (sample.Plan, error) {
	var p sample.Plan
	data, err := os.ReadFile(filepath.Join(dir, PlanFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return p, fmt.Errorf("--resume %s: no %s there", dir, PlanFile)
		}
		return p, err
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return p, fmt.Errorf("%s: %v", filepath.Join(dir, PlanFile), err)
	}
	if p.Schema != sample.PlanSchema {
		return p, fmt.Errorf("%s: schema %q, want %q", filepath.Join(dir, PlanFile), p.Schema, sample.PlanSchema)
	}
	if len(p.Arms) == 0 || len(p.Arms) != len(p.ArmKinds) || len(p.Cells) == 0 || p.Blocks < 1 {
		return p, fmt.Errorf("%s: arms, arm_kinds, cells or blocks missing or inconsistent", filepath.Join(dir, PlanFile))
	}
	return p, nil
}

// collectorExports is exports when an arm sends to a collector, and nil
// otherwise (plans without collector arms stay as they were).
func collectorExports(exports []string) []string {
	for _, e := range exports {
		if e == sample.ExportCollector {
			return exports
		}
	}
	return nil
}
