package diff

import (
	"encoding/json"
	"strings"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

func TestNormalizerObject(t *testing.T) {
	user, err := ParseRule(`^inet:127\.0\.0\.1:[0-9]+$=inet:127.0.0.1:{port}`)
	if err != nil {
		t.Fatal(err)
	}
	n := Normalizer{RunID: "53f5ff5564536f65", Rules: append([]Rule{user}, DefaultRules()...)}
	cases := []struct{ in, want string }{
		{"/proc/7678/maps", "/proc/{pid}/maps"},
		{"/proc/7678", "/proc/{pid}"},
		{"/proc/12/task/13/stat", "/proc/{pid}/task/{tid}/stat"},
		{"/proc/self/maps", "/proc/self/maps"},
		{"/tmp/tmp.AbCdEf1234/x", "/tmp/tmp.{rand}/x"},
		{"/tmp/vigil-sdk-53f5ff5564536f65-3470286872.ndjson", "/tmp/vigil-sdk-{run}-{n}.ndjson"},
		// vigil's pid, 3 digits once pids wrap: not left to "number".
		{"/tmp/vigil-sdk-352-53f5ff5564536f65-3470286872.ndjson", "/tmp/vigil-sdk-{pid}-{run}-{n}.ndjson"},
		{"/tmp/vigil-sdk-123456-53f5ff5564536f65-3470286872.ndjson", "/tmp/vigil-sdk-{pid}-{run}-{n}.ndjson"},
		{"/tmp/ag/w/workers/w-0000003", "/tmp/ag/w/workers/w-{n}"},
		{"/repo/.git/objects/ab/cdef0123456789abcdef0123", "/repo/.git/objects/ab/{hex}"},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"},
		{"/usr/lib/x86_64-linux-gnu/libacl.so.1.1.2301", "/usr/lib/x86_64-linux-gnu/libacl.so.1.1.2301"},
		{"/tmp/5555", "/tmp/{n}"},
		{"unix:/run/user/0/bus-12345", "unix:/run/user/0/bus-{n}"},
		{"inet:127.0.0.1:36937", "inet:127.0.0.1:{port}"},
		{"inet:10.0.0.1:36937", "inet:10.0.0.1:36937"}, // default rules leave ports alone
	}
	for _, c := range cases {
		if got := n.Object(c.in); got != c.want {
			t.Errorf("Object(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"nothing", "=x", "(unclosed=x"} {
		if _, err := ParseRule(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseRule(%q) = %v, want an error naming the rule", bad, err)
		}
	}
}

// bundleWith is the fixture run with extra events appended.
func bundleWith(t *testing.T, n, calls int, runID string, extra ...wire.Kernel) *evidence.Bundle {
	t.Helper()
	return evidencetest.WithExtra(n, calls, runID, extra...)
}

func readOf(p string) wire.Kernel {
	return wire.Kernel{Kind: wire.KindOpen, Open: &wire.Open{Syscall: "openat", Dirfd: -100, File: &wire.ResolvedPath{Path: wire.Bytes(p)},
		Name: wire.Name{Requested: wire.Bytes(p)}, Ret: 3, Access: wire.AccessRead}}
}

func TestCompareItselfIsEqual(t *testing.T) {
	b := evidencetest.Bundle(40, 2)
	r := Compare(Input{"a.tar.gz", b}, Input{"a.tar.gz", b}, Options{Rules: DefaultRules()})
	if !r.Equal || r.Differences != 0 || len(r.Sections) != 0 || len(r.Health) != 0 || !r.ToolCallsCompared {
		t.Fatalf("a run against itself: %+v", r)
	}
	if !strings.Contains(r.Text(), "no differences") {
		t.Errorf("text: %s", r.Text())
	}
}

func TestCompareFindsNewFileAndCountChange(t *testing.T) {
	b := bundleWith(t, 30, 2, "bbbbbbbbbbbbbbbb", readOf("/etc/passwd"), readOf("/tmp/out-bbbbbbbbbbbbbbbb.log"))
	// The same temp log name in A, with A's run id: not a difference.
	a := bundleWith(t, 20, 2, "aaaaaaaaaaaaaaaa", readOf("/tmp/out-aaaaaaaaaaaaaaaa.log"))
	r := Compare(Input{"a", a}, Input{"b", b}, Options{Rules: DefaultRules()})
	if r.Equal || r.Incomplete {
		t.Fatalf("equal=%v incomplete=%v", r.Equal, r.Incomplete)
	}
	sec := map[string]Section{}
	for _, s := range r.Sections {
		sec[s.Name] = s
	}
	read := sec["files_read"]
	if len(read.Added) != 1 || read.Added[0].Object != "/etc/passwd" || len(read.Removed) != 0 {
		t.Errorf("files_read: %+v", read)
	}
	if len(read.Changed) != 1 || read.Changed[0].Object != "/home/agent/work/file-{n}" || read.Changed[0].A >= read.Changed[0].B {
		t.Errorf("files_read changed: %+v", read.Changed)
	}
	if ign := Compare(Input{"a", a}, Input{"b", b}, Options{Rules: DefaultRules(), IgnoreCounts: true}); ign.Differences != 1 {
		t.Errorf("ignoring counts, %d differences, want 1 (/etc/passwd)", ign.Differences)
	}
	// Without the default rules, the numbered files are distinct names.
	raw := Compare(Input{"a", a}, Input{"b", b}, Options{})
	if raw.Differences <= r.Differences {
		t.Errorf("without rules %d differences, with %d", raw.Differences, r.Differences)
	}
	txt := r.Text()
	if !strings.Contains(txt, "  + /etc/passwd\n") || !strings.Contains(txt, "~ /home/agent/work/file-{n}") {
		t.Errorf("text:\n%s", txt)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.Validate("diff", data); err != nil {
		t.Fatalf("diff JSON against its schema: %v\n%s", err, data)
	}
}

func TestComparePartialRecordShownFirst(t *testing.T) {
	a := evidencetest.Bundle(20, 0)
	b := evidencetest.Bundle(20, 0)
	b.Health.KernelLayer.Status = wire.LayerPartial
	r := Compare(Input{"a", a}, Input{"b", b}, Options{Rules: DefaultRules()})
	if !r.Incomplete || r.Equal || len(r.Health) != 1 || r.Health[0].Field != "kernel_layer" {
		t.Fatalf("%+v", r)
	}
	if r.ToolCallsCompared || r.ToolCallsNote != "neither run has an SDK layer" {
		t.Errorf("tool calls: %v %q", r.ToolCallsCompared, r.ToolCallsNote)
	}
	txt := r.Text()
	w, h := strings.Index(txt, "warning: a record is incomplete"), strings.Index(txt, "kernel_layer")
	if w < 0 || h < w {
		t.Errorf("the incomplete record is not reported first:\n%s", txt)
	}
}

// A run with io_uring operations on objects the record does not name is
// incomplete for a comparison: what they did cannot show as a difference.
func TestCompareUnrecordedIOUringIsIncomplete(t *testing.T) {
	a := evidencetest.Bundle(20, 0)
	b := evidencetest.WithExtra(20, 0, "", wire.Kernel{Kind: wire.KindIOUring, Hook: "tp_btf/io_uring_complete",
		IOUring: &wire.IOUring{Opcode: 36, Op: "unlinkat", Res: 0}})
	r := Compare(Input{"a", a}, Input{"b", b}, Options{Rules: DefaultRules()})
	if !r.Incomplete || r.A.Unrecorded != 0 || r.B.Unrecorded != 1 {
		t.Fatalf("incomplete %v, unrecorded A %d B %d", r.Incomplete, r.A.Unrecorded, r.B.Unrecorded)
	}
	if txt := r.Text(); !strings.Contains(txt, "(1 events on objects not recorded)") || !strings.Contains(txt, "warning: a record is incomplete (B has 1 events on objects it does not name)") {
		t.Errorf("text:\n%s", txt)
	}
}

func TestCompareToolCalls(t *testing.T) {
	a := bundleWith(t, 40, 2, "aaaaaaaaaaaaaaaa")
	b := bundleWith(t, 40, 3, "bbbbbbbbbbbbbbbb")
	r := Compare(Input{"a", a}, Input{"b", b}, Options{Rules: DefaultRules()})
	if !r.ToolCallsCompared {
		t.Fatal(r.ToolCallsNote)
	}
	got := map[string]CallDiff{}
	for _, c := range r.ToolCalls {
		got[c.Key] = c
	}
	if c, ok := got["write_file#3"]; !ok || c.Presence != "b" || len(c.Sections) == 0 {
		t.Errorf("write_file#3 (only in B): %+v", c)
	}
	if _, ok := got["write_file#1"]; !ok {
		t.Errorf("write_file#1 covers different events in the two runs but is not reported: %+v", r.ToolCalls)
	}
}

func TestCompareRenamesNormalizeBothSides(t *testing.T) {
	ren := func(from, to string) wire.Kernel {
		return wire.Kernel{Kind: wire.KindRename, FileOp: &wire.FileOp{Syscall: "rename",
			Name: &wire.Name{Requested: wire.Bytes(from)}, NewName: &wire.Name{Requested: wire.Bytes(to)}}}
	}
	a := bundleWith(t, 20, 0, "aaaaaaaaaaaaaaaa", ren("/tmp/x-11111", "/data/out-2024"))
	b := bundleWith(t, 20, 0, "bbbbbbbbbbbbbbbb", ren("/tmp/x-22222", "/data/out-2025"))
	if r := Compare(Input{"a", a}, Input{"b", b}, Options{Rules: DefaultRules()}); !r.Equal {
		t.Errorf("renames differing only by numbers: %s", r.Text())
	}
	c := bundleWith(t, 20, 0, "cccccccccccccccc", ren("/tmp/x-22222", "/etc/out-2025"))
	r := Compare(Input{"a", a}, Input{"c", c}, Options{Rules: DefaultRules()})
	if len(r.Sections) != 1 || r.Sections[0].Name != "files_renamed" || len(r.Sections[0].Added) != 1 ||
		r.Sections[0].Added[0].Object != "/tmp/x-{n} -> /etc/out-{n}" {
		t.Errorf("%+v", r.Sections)
	}
}
