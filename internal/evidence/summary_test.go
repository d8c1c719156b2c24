package evidence_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

func TestSummarize(t *testing.T) {
	b := evidencetest.Bundle(40, 3)
	s := evidence.Summarize(b, 3)
	if len(s.TopPaths) != 3 || s.DistinctPaths != 18 {
		t.Fatalf("top paths %v of %d", s.TopPaths, s.DistinctPaths)
	}
	// Every worker file is opened twice; the failed open once.
	if s.TopPaths[0].Path != "/home/agent/work/file-00000" || s.TopPaths[0].Opens != 2 || s.TopPaths[2].Path != "/home/agent/work/file-00002" {
		t.Fatalf("top paths not by opens then path: %v", s.TopPaths)
	}
	if s.TotalEvents != 40 || len(s.ToolCalls) != 3 || s.ToolCalls[0].DurationNS != 12000 || s.Unattributed != 1 {
		t.Fatalf("summary %+v", s)
	}
	data, _ := json.Marshal(s)
	if err := wire.Validate("inspect", data); err != nil {
		t.Fatalf("inspect schema: %v", err)
	}
	text := s.Text()
	for _, want := range []string{"kernel layer        complete", "events              40: exec 1, fork 2, exit 2, open 34, connect 1",
		"read faults         0 events", "session tasks       0 alive at the end, 0 moved out of the session cgroup, 0 joined it", "skipped probe runs  none",
		"top paths (3 of 18 distinct", "/usr/bin/agent", "inet 127.0.0.1 port 4318", "tool calls (3; 1 kernel events outside", "call_001"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}

	// What the kernel lost or read only in part is shown, not just the
	// verdict.
	lossy := evidencetest.Bundle(40, 0)
	in := evidence.InputOf(lossy.Health)
	in.Drops = map[wire.Kind]uint64{wire.KindOpen: 4}
	in.RingFull = map[wire.Kind]uint64{wire.KindOpen: 1}
	in.SlotsBusy = map[wire.Kind]uint64{wire.KindOpen: 3}
	in.ReadFaults, in.ProgramMisses = 2, map[string]uint64{"sys_exit": 5}
	in.DecodeErrors, in.DecodeDetail = 1, "record of 3 bytes"
	lossy.Health = evidence.BuildHealth(lossy.Run.RunID, in)
	lt := evidence.Summarize(lossy, 3).Text()
	for _, want := range []string{"kernel layer        partial", "drops by kind       open 4", "ring buffer full  open 1", "slots busy        open 3",
		"first decode error  record of 3 bytes", "read faults         2 events", "skipped probe runs  5 (sys_exit: 5)",
		"- 2 events have a part missing"} {
		if !strings.Contains(lt, want) {
			t.Errorf("text lacks %q:\n%s", want, lt)
		}
	}

	// Which parts are missing, and in which events: the first of them
	// (at most top), then how many more.
	for _, i := range []int{3, 11} {
		lossy.Kernel[i].Incomplete = []string{wire.IncompleteReadFailed}
	}
	lossy.Kernel[7].Incomplete = []string{wire.IncompleteReadFailed, wire.IncompleteArgv}
	in.ReadFaults, in.IncompleteParts = 3, map[string]uint64{wire.IncompleteArgv: 1, wire.IncompleteReadFailed: 3}
	lossy.Health = evidence.BuildHealth(lossy.Run.RunID, in)
	sum := evidence.Summarize(lossy, 2)
	lt = sum.Text()
	e7 := lossy.Kernel[7]
	for _, want := range []string{"incomplete events   3 (read_failed 3, argv_truncated 1)",
		fmt.Sprintf("seq %-15d %s by pid %d (%s): read_failed, argv_truncated", e7.Seq, e7.Kind, e7.PID, e7.Comm.Text()),
		`  and 1 more ("incomplete" in layers/kernel.ndjson)`,
		"- 3 events have a part missing: 3 with a memory read that failed (read_failed); 1 with exec arguments longer than the capture keeps (argv_truncated) (an event can lack several)"} {
		if !strings.Contains(lt, want) {
			t.Errorf("text lacks %q:\n%s", want, lt)
		}
	}
	if len(sum.Incomplete) != 2 || sum.Incomplete[0].Seq != lossy.Kernel[3].Seq || sum.Incomplete[1].Seq != e7.Seq {
		t.Errorf("incomplete events %+v, want seqs %d and %d", sum.Incomplete, lossy.Kernel[3].Seq, e7.Seq)
	}
	if data, _ := json.Marshal(sum); wire.Validate("inspect", data) != nil {
		t.Fatalf("inspect schema: %v", wire.Validate("inspect", data))
	}

	none := evidence.Summarize(evidencetest.Bundle(10, 0), 100)
	if len(none.TopPaths) != none.DistinctPaths {
		t.Fatalf("top paths clipped without need")
	}
	if !strings.Contains(none.Text(), "tool calls          none (no SDK layer)") {
		t.Fatalf("text:\n%s", none.Text())
	}
	data, _ = json.Marshal(none)
	if err := wire.Validate("inspect", data); err != nil {
		t.Fatalf("inspect schema: %v", err)
	}
}

// io_uring operations that acted on objects the record does not name are
// counted by operation and shown; io_uring reads and decoded opens are not.
func TestSummarizeUnrecordedIOUring(t *testing.T) {
	ring := func(op string, res int64, file *wire.ResolvedPath) wire.Kernel {
		return wire.Kernel{Kind: wire.KindIOUring, Hook: "tp_btf/io_uring_complete",
			IOUring: &wire.IOUring{Opcode: uint32(slices.Index(wire.IOUringOps, op)), Op: op, Res: res, File: file}}
	}
	opened := ring("openat", 3, &wire.ResolvedPath{Path: "/w/x"})
	opened.IOUring.Created = wire.BoolRef(false)
	b := evidencetest.WithExtra(20, 0, "", ring("unlinkat", 0, nil), ring("unlinkat", -2, nil), ring("connect", 0, nil),
		ring("read", 4, nil), opened)
	s := evidence.Summarize(b, 3)
	if want := map[string]uint64{"io_uring unlinkat": 2, "io_uring connect": 1}; fmt.Sprint(s.Unrecorded) != fmt.Sprint(want) {
		t.Fatalf("unrecorded %v, want %v", s.Unrecorded, want)
	}
	data, _ := json.Marshal(s)
	if err := wire.Validate("inspect", data); err != nil {
		t.Fatalf("inspect schema: %v", err)
	}
	if text := s.Text(); !strings.Contains(text, "not recorded        io_uring connect 1, io_uring unlinkat 2: acted on files or addresses") {
		t.Errorf("text lacks the io_uring operations:\n%s", text)
	}
	if s := evidence.Summarize(evidencetest.Bundle(20, 0), 3); s.Unrecorded != nil || strings.Contains(s.Text(), "objects not recorded") {
		t.Errorf("a run without io_uring reports %v", s.Unrecorded)
	}
}

// inspect says what the run changed, list by list, the first paths of
// each and how many more.
func TestSummarizeChanges(t *testing.T) {
	b := evidencetest.Bundle(40, 0)
	b.Surface.FilesDeleted = []wire.Bytes{"/w/gone"}
	b.Surface.FilesRenamed = []evidence.Rename{{From: "/w/a", To: "/w/b"}}
	s := evidence.Summarize(b, 2)
	lists := map[string]evidence.ChangeList{}
	for _, c := range s.Changes {
		lists[c.List] = c
	}
	if c := lists["files_deleted"]; c.Total != 1 || len(c.Paths) != 1 || c.Paths[0] != "/w/gone" {
		t.Errorf("files_deleted %+v", c)
	}
	if c := lists["files_renamed"]; c.Total != 1 || c.Paths[0] != "/w/a -> /w/b" {
		t.Errorf("files_renamed %+v", c)
	}
	if c := lists["files_created"]; c.Total != len(b.Surface.FilesCreated) || len(c.Paths) != 2 {
		t.Errorf("files_created %+v, surface has %d", c, len(b.Surface.FilesCreated))
	}
	if _, ok := lists["dirs_created"]; ok {
		t.Error("an empty list is shown")
	}
	data, _ := json.Marshal(s)
	if err := wire.Validate("inspect", data); err != nil {
		t.Fatalf("inspect schema: %v", err)
	}
	text := s.Text()
	for _, want := range []string{"  files_deleted (1)\n    /w/gone\n", "    /w/a -> /w/b\n",
		fmt.Sprintf("    and %d more (capability-surface.json)\n", len(b.Surface.FilesCreated)-2)} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}
