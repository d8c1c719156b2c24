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

	"vigil/internal/affinity"
	"vigil/internal/atomicfile"
	"vigil/internal/collector"
	"vigil/internal/hostinfo"
	"vigil/internal/wire"
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
	MaxReruns   int
	// MaxForeignCPUs is the interference gate (0: off).
	MaxForeignCPUs float64
	// CPUs pins the samples (a kernel CPU list; "" for none).
	CPUs string
	// RunnerCPUs pins vigil record in the Runner arms ("" for none).
	RunnerCPUs string
	// Programs is where the Runner arms' capture programs come from:
	// "load" (or ""), for each sample, or "resident".
	Programs string
	Shard    string
	Command  []string // user command; empty for the built-in agent
	// Jaeger is the collector binary for collector arms ("": found by
	// collector.FindJaeger).
	Jaeger string
	// Given marks the options set explicitly. Without GivenSeed the seed
	// is derived from the clock.
	Given Given
}

// NewPlan resolves opts into a plan for this host.
func NewPlan(opts Options, host wire.BenchHost, versions map[string]string) (wire.Plan, error) {
	labels, kinds, exports, err := ParseArms(opts.Arms)
	if err != nil {
		return wire.Plan{}, err
	}
	jaeger := ""
	if slices.Contains(exports, wire.ExportCollector) {
		if jaeger = opts.Jaeger; jaeger == "" {
			if jaeger, err = collector.FindJaeger(); err != nil {
				return wire.Plan{}, fmt.Errorf("--arms %s: %v", strings.Join(opts.Arms, ","), err)
			}
		} else if _, err := os.Stat(jaeger); err != nil {
			return wire.Plan{}, fmt.Errorf("--jaeger %v", err)
		}
		if abs, err := filepath.Abs(jaeger); err == nil {
			jaeger = abs // a resume from elsewhere finds it
		}
	}
	cells, err := ResolveCells(opts.Cells, opts.CustomCells)
	if err != nil {
		return wire.Plan{}, err
	}
	if opts.Blocks < 1 {
		return wire.Plan{}, fmt.Errorf("-n %d: need at least one block", opts.Blocks)
	}
	if opts.Warmup < 0 {
		return wire.Plan{}, fmt.Errorf("--warmup %d: must not be negative", opts.Warmup)
	}
	if opts.MaxReruns < 0 {
		return wire.Plan{}, fmt.Errorf("--max-reruns %d: must not be negative", opts.MaxReruns)
	}
	if !(opts.MaxForeignCPUs >= 0) || math.IsInf(opts.MaxForeignCPUs, 0) {
		return wire.Plan{}, fmt.Errorf("--max-foreign-cpus %v: want a number of CPUs >= 0 (0 turns the gate off)", opts.MaxForeignCPUs)
	}
	if opts.CPUs != "" {
		if _, err := affinity.Parse("--cpus", opts.CPUs); err != nil {
			return wire.Plan{}, err
		}
	}
	if opts.RunnerCPUs != "" {
		if _, err := affinity.Parse("--runner-cpus", opts.RunnerCPUs); err != nil {
			return wire.Plan{}, err
		}
	}
	switch opts.Programs {
	case "", "load":
		opts.Programs = ""
	case "resident":
	default:
		return wire.Plan{}, fmt.Errorf("--programs %q: want load or resident", opts.Programs)
	}
	if opts.Order != OrderRandom && opts.Order != OrderCounterbalanced {
		return wire.Plan{}, fmt.Errorf("--order %q: want random or counterbalanced", opts.Order)
	}
	shard, err := ParseShard(opts.Shard)
	if err != nil {
		return wire.Plan{}, err
	}
	now := time.Now()
	seed := opts.Seed
	if opts.Given&GivenSeed == 0 {
		// Positive and below 2^53 so it survives any JSON reader intact.
		seed = now.UnixNano() & (1<<53 - 1)
	}
	return wire.Plan{
		Schema:         wire.PlanSchema,
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
		Programs:       opts.Programs,
		Shard:          shard.String(),
		Command:        opts.Command,
		Host:           host,
		Versions:       versions,
	}, nil
}

// Given is a set of plan options, by the flag that sets each.
type Given uint32

// The options a user can set explicitly.
const (
	GivenArms Given = 1 << iota
	GivenCells
	GivenCustomCells
	GivenBlocks
	GivenWarmup
	GivenOrder
	GivenSeed
	GivenMaxReruns
	GivenShard
	GivenCPUs
	GivenRunnerCPUs
	GivenMaxForeignCPUs
	GivenCommand
	GivenPrograms
)

// resumeChecked lists, for each option a resume must agree on, its flag
// (for messages) and the plan field it sets.
var resumeChecked = []struct {
	given Given
	flag  string
	field func(p wire.Plan) any
}{
	{GivenArms, "arms", func(p wire.Plan) any { return p.Arms }},
	{GivenCells, "cells", func(p wire.Plan) any { return p.Cells }},
	{GivenCustomCells, "cell", func(p wire.Plan) any { return p.Cells }},
	{GivenBlocks, "blocks", func(p wire.Plan) any { return p.Blocks }},
	{GivenWarmup, "warmup", func(p wire.Plan) any { return p.Warmup }},
	{GivenOrder, "order", func(p wire.Plan) any { return p.Order }},
	{GivenSeed, "seed", func(p wire.Plan) any { return p.Seed }},
	{GivenMaxReruns, "max-reruns", func(p wire.Plan) any { return p.MaxReruns }},
	{GivenShard, "shard", func(p wire.Plan) any { return p.Shard }},
	{GivenCPUs, "cpus", func(p wire.Plan) any { return p.CPUs }},
	{GivenRunnerCPUs, "runner-cpus", func(p wire.Plan) any { return p.RunnerCPUs }},
	{GivenMaxForeignCPUs, "max-foreign-cpus", func(p wire.Plan) any { return p.MaxForeignCPUs }},
	{GivenCommand, "command", func(p wire.Plan) any { return p.Command }},
	{GivenPrograms, "programs", func(p wire.Plan) any { return p.Programs }},
}

// ResumeConflicts compares the options the user set explicitly with the
// saved plan and names the first that disagrees.
func ResumeConflicts(saved wire.Plan, fresh wire.Plan, given Given) error {
	for _, c := range resumeChecked {
		if given&c.given == 0 {
			continue
		}
		if a, b := c.field(saved), c.field(fresh); !reflect.DeepEqual(a, b) {
			return fmt.Errorf("--resume: --%s %v conflicts with the plan's %v; drop the flag or start a new --out", c.flag, b, a)
		}
	}
	return nil
}

// HostInfo describes this machine.
func HostInfo() wire.BenchHost {
	return wire.BenchHost{Host: hostinfo.Local(), CPUs: runtime.NumCPU()}
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
func WritePlan(dir string, p wire.Plan) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, PlanFile), append(data, '\n'))
}

// LoadPlan reads dir/plan.json.
func LoadPlan(dir string) (wire.Plan, error) {
	var p wire.Plan
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
	if p.Schema != wire.PlanSchema {
		return p, fmt.Errorf("%s: schema %q, want %q", filepath.Join(dir, PlanFile), p.Schema, wire.PlanSchema)
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
		if e == wire.ExportCollector {
			return exports
		}
	}
	return nil
}
