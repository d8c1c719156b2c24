// Package stats holds the pure statistical functions vigil report uses:
// order-statistic medians, interpolated quantiles, dispersion, paired and
// unpaired rank tests, trend tests and seeded bootstrap intervals. Every
// function is deterministic for its inputs (the bootstrap takes an explicit
// seed) and never modifies the slices it is given.
//
// Where golang.org/x/perf/benchmath (or the go-moremath package underneath
// it) already provides a statistic, it is wrapped rather than reimplemented:
// the median confidence interval and the Mann–Whitney U test come from there.
package stats
