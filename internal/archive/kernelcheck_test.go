package archive

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"vigil/internal/event"
	"vigil/internal/evidence/evidencetest"
	"vigil/schema"
)

func TestFastKernelCheckActive(t *testing.T) {
	if !fastKernelCheck() {
		t.Fatal("kernel-event.schema.json or the event types changed: revisit kernelFieldsValid, then update kernelSchemaSHA (verification validates every line with the general validator meanwhile)")
	}
}

// For every line appendKernel can write, the fast path and the schema
// validator agree, and what the fast path decodes is what encoding/json
// decodes.
func TestKernelFieldsValidMatchesSchema(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	str := func() string {
		switch r.IntN(4) {
		case 0:
			return strings.Repeat(pick("a", "\u00e9", "\u65e5", "\U0001F600"), 60+r.IntN(8))
		case 1:
			b := make([]byte, r.IntN(10))
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			return string(b)
		}
		return pick("", "x", `q"`, "\\", "<&>", "\x00\x1f", "\u2028", "tab\there", "/usr/bin/env")
	}
	kinds := []event.Kind{event.KindExec, event.KindFork, event.KindExit, event.KindOpen, event.KindConnect, "teleport", ""}
	i32 := func() int32 { return []int32{0, 1, -1, math.MaxInt32, math.MinInt32, r.Int32() - 1<<30}[r.IntN(6)] }
	events := evidencetest.Kernel(40, 3)
	accepted, rejected, notCanonical := 0, 0, 0
	for i := 0; i < 4000; i++ {
		e := event.Kernel{Seq: []uint64{0, math.MaxUint64, r.Uint64()}[r.IntN(3)], TimeNS: r.Uint64(), Kind: kinds[r.IntN(len(kinds))],
			PID: r.Uint32(), TID: []uint32{0, math.MaxUint32}[r.IntN(2)], Comm: str(), CgroupID: r.Uint64()}
		payload := e.Kind
		if r.IntN(8) == 0 {
			payload = kinds[r.IntN(5)]
		}
		switch payload {
		case event.KindExec:
			e.Exec = &event.Exec{Filename: str(), Argv0: str()}
		case event.KindFork:
			e.Fork = &event.Fork{ParentPID: r.Uint32(), ParentTID: r.Uint32(), ChildPID: math.MaxUint32, ChildTID: 0, Thread: r.IntN(2) == 0}
		case event.KindExit:
			e.Exit = &event.Exit{Code: i32(), Signal: i32(), GroupDead: r.IntN(2) == 0}
		case event.KindOpen:
			e.Open = &event.Open{Syscall: pick("openat", "openat2", "open", ""), Dirfd: i32(), Path: str(), Flags: r.Uint64(), Mode: r.Uint64(),
				Ret: []int64{math.MinInt64, math.MaxInt64, -2, 3}[r.IntN(4)], Access: pick("read", "write", "read_write", "exec", ""),
				Create: r.IntN(2) == 0, Truncate: r.IntN(2) == 0, Append: r.IntN(2) == 0, PathTruncated: r.IntN(2) == 0}
		case event.KindConnect:
			e.Connect = &event.Connect{Fd: i32(), Family: pick("inet", "inet6", "unix", "af_", "af_0", "af_123", "af_1x", "AF_1", "inet\n", "xinet", "inet66", "af_\u0661"),
				Addr: str(), Port: []uint16{0, math.MaxUint16, 4318}[r.IntN(3)], Ret: r.Int64() - 1<<62}
		}
		switch r.IntN(30) {
		case 0:
			e.Exec, e.Fork, e.Exit, e.Open, e.Connect = nil, nil, nil, nil, nil
		case 1:
			e.Exit = &event.Exit{}
		}
		events = append(events, e)
	}
	for i := range events {
		line := appendKernel(nil, &events[i])
		line = line[:len(line)-1]
		got, ok := parseKernelLine(line)
		if !ok {
			t.Fatalf("event %d: parseKernelLine rejects what appendKernel wrote: %s", i, line)
		}
		var want event.Kernel
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("event %d: parsed %+v, encoding/json decodes %+v", i, got, want)
		}
		schemaErr := schema.Validate("kernel-event", line)
		why := kernelFieldsValid(&got)
		if (why == "") != (schemaErr == nil) {
			t.Fatalf("event %d: kernelFieldsValid = %q, schema: %v\n%s", i, why, schemaErr, line)
		}
		// Invalid UTF-8 is written as \ufffd, which decodes to a string
		// that re-encodes differently: such a line is not canonical.
		again := appendKernel(nil, &got)
		canonical := string(again[:len(again)-1]) == string(line)
		_, _, proven := provenKernelLine(line, nil)
		if proven != (schemaErr == nil && canonical) {
			t.Fatalf("event %d: proven %v, canonical %v, schema: %v\n%s", i, proven, canonical, schemaErr, line)
		}
		switch {
		case proven:
			accepted++
		case canonical:
			rejected++
		default:
			notCanonical++
		}
	}
	if accepted < 500 || rejected < 500 || notCanonical < 100 {
		t.Fatalf("%d accepted, %d rejected, %d not canonical: the cases do not exercise every outcome", accepted, rejected, notCanonical)
	}
}

// A line in any other spelling than the canonical one is never vouched
// for, whatever the validator would say of it.
func TestProvenKernelLineOnlyCanonical(t *testing.T) {
	canon := `{"seq":1,"ts_ns":2,"kind":"exit","pid":3,"tid":3,"comm":"a","cgroup_id":4,"exit":{"code":0,"signal":0,"group_dead":true}}`
	if _, _, ok := provenKernelLine([]byte(canon), nil); !ok {
		t.Fatal("canonical line not proven")
	}
	for _, l := range []string{
		strings.Replace(canon, `"seq":1`, `"seq":01`, 1),
		strings.Replace(canon, `"code":0`, `"code":-0`, 1),
		strings.Replace(canon, `"seq":1,`, `"seq": 1,`, 1),
		strings.Replace(canon, `"comm":"a"`, `"comm":"\u0061"`, 1),
		strings.Replace(canon, `"comm":"a"`, `"comm":"\/"`, 1),
		strings.Replace(canon, `"tid":3,`, `"tid":3,"tid":3,`, 1),
		strings.Replace(canon, `"pid":3,"tid":3`, `"tid":3,"pid":3`, 1),
		strings.Replace(canon, `"group_dead":true`, `"group_dead":true,"x":1`, 1),
		strings.Replace(canon, `"seq":1`, `"seq":1.0`, 1),
		strings.Replace(canon, `"seq":1`, `"seq":18446744073709551616`, 1),
		strings.Replace(canon, `"pid":3`, `"pid":4294967296`, 1),
		strings.Replace(canon, `"comm":"a"`, `"comm":"\ud800"`, 1),
		strings.Replace(canon, `"comm":"a"`, "\"comm\":\"\xff\"", 1),
		canon + " ",
		" " + canon,
	} {
		if _, _, ok := provenKernelLine([]byte(l), nil); ok {
			t.Errorf("non-canonical line proven: %s", l)
		}
	}
}
