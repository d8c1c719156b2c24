package diff_test

import (
	"fmt"

	"vigil/internal/diff"
	"vigil/internal/evidence/evidencetest"
)

// Two runs of the same agent, the second with one more tool call: numbered
// file names are normalized to one object ("file-{n}"), so the difference
// is the count of names behind it, and the extra call.
func ExampleCompare() {
	a := diff.Input{Archive: "a.tar.gz", Bundle: evidencetest.Bundle(20, 2)}
	b := diff.Input{Archive: "b.tar.gz", Bundle: evidencetest.Bundle(30, 3)}
	fmt.Print(diff.Compare(a, b, diff.Options{Rules: diff.DefaultRules()}).Text())
	// Output:
	// A  a.tar.gz  run run-0123456789abcdef: exit 0; kernel layer complete, cgroup correlation clean, sdk layer complete, 20 events
	// B  b.tar.gz  run run-0123456789abcdef: exit 0; kernel layer complete, cgroup correlation clean, sdk layer complete, 30 events
	//
	// files_read
	//   ~ /home/agent/work/file-{n}  (6 -> 11 names)
	//
	// files_written
	//   ~ /home/agent/work/file-{n}  (7 -> 12 names)
	//
	// files_created
	//   ~ /home/agent/work/file-{n}  (7 -> 12 names)
	//
	// tool call write_file#2
	//   files_read
	//     ~ /home/agent/work/file-{n}  (4 -> 5 names)
	//   files_written
	//     ~ /home/agent/work/file-{n}  (4 -> 5 names)
	//   files_created
	//     ~ /home/agent/work/file-{n}  (4 -> 5 names)
	//
	// tool call write_file#3: only in B
	//   files_read
	//     + /home/agent/work/file-{n}  (4 names)
	//   files_written
	//     + /home/agent/work/file-{n}  (4 names)
	//   files_created
	//     + /home/agent/work/file-{n}  (4 names)
	//
	// 10 difference(s)
}

func ExampleParseRule() {
	r, err := diff.ParseRule(`/tmp/tmp\.[A-Za-z0-9]+=/tmp/tmp.X`)
	if err != nil {
		panic(err)
	}
	fmt.Println(r)
	_, err = diff.ParseRule("(x=y")
	fmt.Println(err)
	// Output:
	// user: /tmp/tmp\.[A-Za-z0-9]+ => /tmp/tmp.X (every object)
	// normalize rule "(x=y": error parsing regexp: missing closing ): `(x`
}
