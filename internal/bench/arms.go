//go:build linux

package bench

import (
	"fmt"
	"strconv"
	"strings"

	"vigil/internal/wire"
)

// Kinds lists the arm kinds in canonical order.
var Kinds = []wire.ArmKind{wire.ArmBare, wire.ArmA, wire.ArmB, wire.ArmC}

// ParseArms turns "--arms bare,A,B,C,B@collector" into labels, kinds and
// exports. B and C write their spans to a file; B@collector and
// C@collector send them to a real collector instead (wire.ExportOf). An
// arm may repeat for an A/A noise-floor run: its second occurrence is
// labelled ARM2, the third ARM3, and so on.
func ParseArms(list []string) (labels []string, kinds []wire.ArmKind, exports []string, err error) {
	count := map[string]int{}
	for _, a := range list {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		name, export := a, ""
		if base, suffix, ok := strings.Cut(a, "@"); ok {
			if !strings.EqualFold("@"+suffix, wire.CollectorSuffix) {
				return nil, nil, nil, fmt.Errorf("--arms: unknown export %q in %q (want B@collector or C@collector)", suffix, a)
			}
			name, export = base, wire.ExportCollector
		}
		kind := wire.ArmKind("")
		for _, k := range Kinds {
			if strings.EqualFold(name, string(k)) {
				kind = k
			}
		}
		if kind == "" {
			return nil, nil, nil, fmt.Errorf("--arms: unknown arm %q (want bare, A, B, C, B@collector, C@collector)", a)
		}
		if export == "" && usesOTel(kind) {
			export = wire.ExportFile
		}
		if export == wire.ExportCollector && !usesOTel(kind) {
			return nil, nil, nil, fmt.Errorf("--arms: %q: only the traced arms B and C export to a collector", a)
		}
		base := string(kind)
		if export == wire.ExportCollector {
			base += wire.CollectorSuffix
		}
		count[base]++
		label := base
		if count[base] > 1 {
			label = base + strconv.Itoa(count[base])
		}
		labels = append(labels, label)
		kinds = append(kinds, kind)
		exports = append(exports, export)
	}
	if len(labels) == 0 {
		return nil, nil, nil, fmt.Errorf("--arms: no arms selected")
	}
	return labels, kinds, exports, nil
}

// usesRunner reports whether an arm kind runs under vigil record.
func usesRunner(kind wire.ArmKind) bool { return kind == wire.ArmA || kind == wire.ArmC }

// usesOTel reports whether an arm kind has tracing on.
func usesOTel(kind wire.ArmKind) bool { return kind == wire.ArmB || kind == wire.ArmC }

// samplePaths are the files one sample's command writes, all inside the
// sample's private directory.
type samplePaths struct {
	Dir      string // the sample directory (removed afterwards)
	Work     string // the workload's --work-dir and cwd
	Result   string // agent --result-out
	Trace    string // agent --trace-out (B/C)
	Archive  string // record --archive (A/C)
	PhaseLog string // record --phase-log (A/C)
	Stdout   string
	Stderr   string
}

// armCommand builds the argv and extra environment for one sample. With no
// user command, the workload is `vigil agent` with the cell's knobs; with
// one, tracing is toggled through OTEL_SDK_DISABLED and the command runs
// as given.
//
// With runnerCPUs set, the Runner arms pin vigil record there, apart from
// the workload (which keeps the sample's mask, or cpus).
//
// otlp is the collector endpoint of a collector arm: the agent sends its
// spans there instead of writing p.Trace.
func armCommand(vigil string, kind wire.ArmKind, cell wire.Cell, user []string, p samplePaths, cpus, runnerCPUs, programs, otlp string) (argv, env []string) {
	otel := usesOTel(kind)
	env = []string{"OTEL_SDK_DISABLED=" + strconv.FormatBool(!otel)}
	var work []string
	if len(user) > 0 {
		work = append(work, user...)
		if otel && otlp != "" {
			// The standard variables an OpenTelemetry SDK reads.
			env = append(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="+otlp, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf")
		}
	} else {
		work = []string{vigil, "agent",
			"--otel=" + strconv.FormatBool(otel),
			"--kernel-events", strconv.Itoa(cell.KernelEvents),
			"--span-events", strconv.Itoa(cell.SpanEvents),
			"--concurrency", strconv.Itoa(cell.Concurrency),
			"--payload-bytes", strconv.Itoa(cell.PayloadBytes),
			"--work-dir", p.Work,
			"--result-out", p.Result,
		}
		switch {
		case otel && otlp != "":
			work = append(work, "--otlp-endpoint", otlp)
		case otel:
			work = append(work, "--trace-out", p.Trace)
		}
	}
	if !usesRunner(kind) {
		return work, env
	}
	argv = []string{vigil, "record", "--archive", p.Archive, "--phase-log", p.PhaseLog, "--programs", "load"}
	if programs != "" {
		argv[len(argv)-1] = programs
	}
	if runnerCPUs != "" {
		argv = append(argv, "--runner-cpus", runnerCPUs)
		if cpus != "" {
			argv = append(argv, "--cpus", cpus)
		}
	}
	return append(append(argv, "--"), work...), env
}
