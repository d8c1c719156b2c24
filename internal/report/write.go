package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"vigil/internal/wire"
)

// Output file names.
const (
	SummaryFile  = "summary.json"
	BMFFile      = "bmf.json"
	BenchTxtFile = "bench.txt"
	FindingsFile = "findings.md"
	HTMLFile     = "report.html"
)

// WriteAll summarizes one bench run and writes every output into outDir.
// It is what vigil bench calls at the end of a run.
func WriteAll(outDir string, plan wire.Plan, samples []wire.Sample, opts Options) (*Summary, error) {
	return WriteMerged(outDir, []wire.Plan{plan}, [][]wire.Sample{samples}, []string{outDir}, opts)
}

// WriteMerged summarizes several directories (as returned by Load, with
// their names in sources) and writes every output into outDir. Nothing is
// written unless every output renders: files go to temporaries first and
// are renamed into place at the end.
func WriteMerged(outDir string, plans []wire.Plan, samples [][]wire.Sample, sources []string, opts Options) (*Summary, error) {
	if opts.Inputs != nil {
		sources = opts.Inputs
	}
	s, err := Build(plans, samples, sources, opts)
	if err != nil {
		return nil, err
	}
	sum, err := renderSummary(s)
	if err != nil {
		return nil, err
	}
	bmf, err := renderBMF(s)
	if err != nil {
		return nil, err
	}
	html, err := renderHTML(s)
	if err != nil {
		return nil, err
	}
	files := []struct {
		name string
		data []byte
	}{
		{SummaryFile, sum},
		{BMFFile, bmf},
		{BenchTxtFile, renderBenchTxt(s)},
		{FindingsFile, renderFindings(s)},
		{HTMLFile, html},
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: %v", outDir, errText(err))
	}
	var tmps []string
	cleanup := func() {
		for _, t := range tmps {
			os.Remove(t)
		}
	}
	for _, f := range files {
		t, err := writeTemp(outDir, f.name, f.data)
		if err != nil {
			cleanup()
			return nil, err
		}
		tmps = append(tmps, t)
	}
	for i, f := range files {
		if err := os.Rename(tmps[i], filepath.Join(outDir, f.name)); err != nil {
			cleanup()
			return nil, fmt.Errorf("%s: %v", filepath.Join(outDir, f.name), err)
		}
	}
	return s, nil
}

func writeTemp(dir, name string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("%s: %v", filepath.Join(dir, name), errText(err))
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("%s: %v", filepath.Join(dir, name), err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("%s: %v", filepath.Join(dir, name), err)
	}
	return f.Name(), nil
}
