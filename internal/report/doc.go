// Package report turns the bench output (plan.json + samples.jsonl, one or
// several shard directories) into statistics and findings: summary.json,
// bmf.json, bench.txt, findings.md, report.html and a terminal table.
//
// Only valid, non-warm-up samples enter statistics; every other sample is
// counted by reason. Comparisons are made only within one run (same
// host_class and plan seed); other runs are reported side by side.
package report
