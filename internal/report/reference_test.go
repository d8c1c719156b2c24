package report

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"vigil/internal/wire"
)

// referenceRun resembles the original study (linux-aarch64, n=20): OTel
// only ~880 ms, Runner only ~1860 ms, dual ~1738 ms, a bare arm the study
// lacked; wall interaction that wanders across blocks (dispatch-window
// noise); RSS additive (A ≈ C within 8 KiB, OTel ~0.25 MB); kernel capture
// clean through x1000; spans clipped to the newest 128 of 500 at s500.
func referenceRun() genCfg {
	g := genCfg{arms: fourArms, kinds: fourKinds, blocks: 20, warmup: 2, seed: 20260527, hostClass: "linux-arm64-6.8.0-117-generic",
		cells: []wire.Cell{cell("control", 0, 0, 1), cell("x1000", 1000, 0, 16), cell("s500", 0, 500, 1)}}
	g.wall = func(c wire.Cell, kind wire.ArmKind, block int, rng *rand.Rand) float64 {
		base := map[wire.ArmKind]float64{wire.ArmBare: 840e6, wire.ArmB: 880e6, wire.ArmA: 1860e6, wire.ArmC: 1738e6}[kind]
		v := base + float64(c.KernelEvents)*20e3 + float64(c.SpanEvents)*40e3 + rng.NormFloat64()*15e6
		if kind == wire.ArmC {
			v += (float64(block) - 9.5) * 25e6 // drifts by ~475 ms over the run
		}
		return v
	}
	g.mem = func(c wire.Cell, kind wire.ArmKind, block int, rng *rand.Rand) float64 {
		base := map[wire.ArmKind]float64{wire.ArmBare: 108_700_000, wire.ArmB: 108_953_600, wire.ArmA: 116_641_792, wire.ArmC: 116_649_984}[kind]
		return base + float64(c.KernelEvents)*4096 + float64(rng.IntN(8))*4096
	}
	g.invalid = func(c wire.Cell, arm string, block int) string {
		if c.Name == "x1000" && arm == string(wire.ArmC) && block == 3 {
			return "exit code 1"
		}
		return ""
	}
	return g
}

func TestReferenceScenarioFindings(t *testing.T) {
	p, ss := referenceRun().build()
	in := writeDir(t, p, ss)
	plans, samples, err := Load(in)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	s, err := WriteMerged(out, plans, samples, []string{in}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, FindingsFile))
	if err != nil {
		t.Fatal(err)
	}
	text := string(md)
	num := `[+−-]?[0-9.]+ (ms|s)`
	iv := num + ` \[` + num + `, ` + num + `\]`
	mustMatch := []string{
		// The four arms' medians with intervals, per cell.
		`In cell control, median wall time per arm \(95% order-statistic intervals\): bare ` + iv + `; A ` + iv + `; B ` + iv + `; C ` + iv + `\.`,
		// The Runner's and OpenTelemetry's separate costs.
		`the Runner's cost \(A − bare\) is \+` + iv,
		`OpenTelemetry's cost \(B − bare\) is \+` + iv,
		// Decomposition verdicts, wall and memory.
		`Wall time decomposition of the two layers' costs: inconclusive at this budget in control, x1000, s500\.`,
		`Memory \(tree_peak_bytes\) decomposition of the two layers' costs: additive in control, x1000, s500\.`,
		`more blocks of the same sampling will not settle it`,
		// Kernel capture health through x1000.
		`Kernel capture is healthy through x1000 \(1000 worker files, concurrency 16\)`,
		`cell x1000 \(1000 worker files, concurrency 16\): 41/41 A/C samples matched calibration \(write opens 1000 of 1000 expected, read opens 1000 of 1000\); ringbuf_drops 0`,
		// Span retention at s500 with the dropped end named.
		`At s500, OpenTelemetry retained 128/500 span events: the oldest events were dropped; the newest 128 kept\.`,
		`requested 500, retained 128, dropped 372, span event limit 128, dropped end: oldest`,
		// Scope and explicit non-claims.
		`\*\*Scope\.\*\* host_class linux-arm64-6\.8\.0-117-generic \(kernel 6\.8\.0-117-generic, arm64, 2 CPUs\), go go1\.26\.0, otel-sdk 1\.47\.0, vigil 0\.1\.0-test; 20 blocks planned, 2 warm-up, order random, seed 20260527`,
		`\*\*Not claimed\.\*\*`,
		`Timing in cell s500 is not span-event throughput at 500 events`,
		// The discarded sample is counted, not used.
		`cell x1000 arm C: 20 valid of 20 planned; 1 discarded; 2 warm-up excluded; "exit code 1" ×1`,
	}
	for _, re := range mustMatch {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("findings.md lacks /%s/", re)
		}
	}
	// The medians stated are the computed ones: B in control is ~880 ms.
	b := armNamed(s.Runs[0].Cells[0].Arms, string(wire.ArmB))
	if b.Wall.Median.Value < 860e6 || b.Wall.Median.Value > 900e6 {
		t.Errorf("B median %v, want about 880 ms", b.Wall.Median.Value)
	}
	if want := fmt.Sprintf("B %.0f ms [", b.Wall.Median.Value/1e6); !strings.Contains(text, want) {
		t.Errorf("findings.md does not state B's computed median %q", want)
	}
	// Memory C − A is the 8 KiB of the original, within its interval.
	cs := s.Runs[0].Cells[0]
	mc, ok := findCost(cs, armNamed(cs.Arms, string(wire.ArmA)), armNamed(cs.Arms, string(wire.ArmC)), wire.MetricTreePeak)
	if !ok || mc.Diff.Lo() > 8192 || mc.Diff.Hi() < 8192 {
		t.Errorf("C − A memory interval [%v, %v] does not cover 8 KiB", mc.Diff.Lo(), mc.Diff.Hi())
	}
	if testing.Verbose() {
		t.Log("\n" + text)
	}
	// VIGIL_REPORT_KEEP=DIR keeps the inputs and outputs for inspection.
	if keep := os.Getenv("VIGIL_REPORT_KEEP"); keep != "" {
		if _, err := WriteMerged(keep, plans, samples, []string{"reference-scenario"}, DefaultOptions()); err != nil {
			t.Fatal(err)
		}
	}
}
