package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"vigil/internal/atomicfile"
	"vigil/internal/report/render"
	"vigil/internal/wire"
)

// Output file names.
const (
	SummaryFile  = render.SummaryFile
	BMFFile      = render.BMFFile
	BenchTxtFile = render.BenchTxtFile
	FindingsFile = render.FindingsFile
	HTMLFile     = render.HTMLFile
)

// WriteAll summarizes one bench run and writes every output into outDir.
// It is what vigil bench calls at the end of a run.
func WriteAll(outDir string, plan wire.Plan, samples []wire.Sample, opts Options) (*wire.Summary, error) {
	return WriteMerged(outDir, []wire.Plan{plan}, [][]wire.Sample{samples}, []string{outDir}, opts)
}

// WriteMerged summarizes several directories (as returned by Load, with
// their names in sources) and writes every output into outDir. Nothing is
// written unless every output renders: files go to temporaries first and
// are renamed into place at the end.
func WriteMerged(outDir string, plans []wire.Plan, samples [][]wire.Sample, sources []string, opts Options) (*wire.Summary, error) {
	if opts.Inputs != nil {
		sources = opts.Inputs
	}
	s, err := Build(plans, samples, sources, opts)
	if err != nil {
		return nil, err
	}
	if err := writeOutputs(outDir, s); err != nil {
		return nil, err
	}
	return s, nil
}

// ReadSummary reads a summary.json written by this version: it must match
// the schema, and every field must be known.
func ReadSummary(path string) (*wire.Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", path, errText(err))
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: malformed summary: %v", path, err)
	}
	if head.Schema != wire.SummarySchema {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, head.Schema, wire.SummarySchema)
	}
	if err := wire.Validate("summary", data); err != nil {
		return nil, fmt.Errorf("%s: does not match the summary schema: %v", path, oneLine(err))
	}
	var s wire.Summary
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: malformed summary: %v", path, err)
	}
	for i, f := range s.Findings {
		if f.Run < 0 || f.Run >= len(s.Runs) {
			return nil, fmt.Errorf("%s: finding %d refers to run %d of %d", path, i+1, f.Run, len(s.Runs))
		}
		if err := findingRefs(s.Runs[f.Run], f); err != nil {
			return nil, fmt.Errorf("%s: finding %d: %v", path, i+1, err)
		}
	}
	return &s, nil
}

// findingRefs checks that every cell, arm and interaction a finding names
// is in its run, as the renderers look them up: a summary that passes its
// schema but names a cell its run lacks is refused, not rendered.
func findingRefs(r *wire.RunSummary, f wire.Finding) error {
	cell := func(name string) (*wire.CellSummary, error) {
		if cs := r.CellNamed(name); cs != nil {
			return cs, nil
		}
		return nil, fmt.Errorf("names cell %q, which its run does not have", name)
	}
	arm := func(cs *wire.CellSummary, name string) error {
		if cs.ArmNamed(name) == nil {
			return fmt.Errorf("names arm %q, which cell %q does not have", name, cs.Name)
		}
		return nil
	}
	spans := func(name string) error {
		cs, err := cell(name)
		if err == nil && cs.Spans == nil {
			err = fmt.Errorf("cites the span events of cell %q, which has none", name)
		}
		return err
	}
	switch f.Kind {
	case wire.FindingArmCosts:
		if _, err := cell(f.Cell); err != nil {
			return err
		}
	case wire.FindingSpansClipped:
		if err := spans(f.Cell); err != nil {
			return err
		}
	case wire.FindingSpansRetained:
		for _, c := range f.Cells {
			if err := spans(c); err != nil {
				return err
			}
		}
	case wire.FindingKernel:
		if f.Status == wire.StatusHealthy || f.Status == wire.StatusHealthyThrough {
			if _, err := cell(f.HealthyThrough); err != nil {
				return err
			}
		}
	}
	for _, names := range [][]string{f.Cells, f.Unhealthy, f.Uncalibrated} {
		for _, c := range names {
			if _, err := cell(c); err != nil {
				return err
			}
		}
	}
	for _, v := range f.Verdicts {
		cs, err := cell(v.Cell)
		if err != nil {
			return err
		}
		if cs.InteractionOf(v.Metric) == nil {
			return fmt.Errorf("cites the %s decomposition of cell %q, which has none", v.Metric, v.Cell)
		}
	}
	for _, a := range f.Incomplete {
		cs, err := cell(a.Cell)
		if err != nil {
			return err
		}
		if err := arm(cs, a.Arm); err != nil {
			return err
		}
	}
	for _, c := range f.Costs {
		cs, err := cell(c.Cell)
		if err != nil {
			return err
		}
		if err := arm(cs, c.Base); err != nil {
			return err
		}
		if err := arm(cs, c.Other); err != nil {
			return err
		}
	}
	return nil
}

// WriteFromSummary renders every output again from a summary alone (no
// plan or samples) into outDir; it writes what WriteMerged wrote for the
// same data, byte for byte.
func WriteFromSummary(outDir string, s *wire.Summary) error {
	return writeOutputs(outDir, s)
}

// WriteTable prints the terminal summary table.
func WriteTable(w io.Writer, s *wire.Summary) error { return render.Table(w, s) }

// writeOutputs renders every output of s and writes them into outDir.
// Nothing is written unless every output renders and every temporary file
// is complete: each output goes to its own atomicfile first, and all are
// committed only at the end.
func writeOutputs(outDir string, s *wire.Summary) error {
	files, err := render.All(s)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("%s: %v", outDir, errText(err))
	}
	pending := make([]*atomicfile.File, 0, len(files))
	abort := func() {
		for _, f := range pending {
			if f != nil {
				f.Abort()
			}
		}
	}
	for _, f := range files {
		path := filepath.Join(outDir, f.Name)
		af, err := atomicfile.Open(path, atomicfile.Options{})
		if err != nil {
			abort()
			return err
		}
		pending = append(pending, af)
		if _, err := af.Write(f.Data); err != nil {
			abort()
			return fmt.Errorf("%s: %v", path, err)
		}
	}
	for i, af := range pending {
		if err := af.Commit(); err != nil {
			abort()
			return err
		}
		pending[i] = nil
	}
	return nil
}

// oneLine joins a multi-line error into one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
