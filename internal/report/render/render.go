// Package render writes the report outputs (summary.json, bmf.json,
// bench.txt, findings.md, report.html and the terminal table) from a
// wire.Summary alone: it computes no statistics, it only words and
// draws what the summary holds.
package render

import "vigil/internal/wire"

// Output file names.
const (
	SummaryFile  = "summary.json"
	BMFFile      = "bmf.json"
	BenchTxtFile = "bench.txt"
	FindingsFile = "findings.md"
	HTMLFile     = "report.html"
)

// File is one rendered output.
type File struct {
	Name string
	Data []byte
}

// All renders every output file of a summary, in a fixed order.
func All(s *wire.Summary) ([]File, error) {
	sum, err := SummaryJSON(s)
	if err != nil {
		return nil, err
	}
	bmf, err := BMF(s)
	if err != nil {
		return nil, err
	}
	bench, err := BenchTxt(s)
	if err != nil {
		return nil, err
	}
	page, err := HTML(s)
	if err != nil {
		return nil, err
	}
	return []File{
		{SummaryFile, sum},
		{BMFFile, bmf},
		{BenchTxtFile, bench},
		{FindingsFile, Findings(s)},
		{HTMLFile, page},
	}, nil
}
