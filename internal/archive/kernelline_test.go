package archive

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"vigil/internal/event"
	"vigil/internal/evidence/evidencetest"
)

func TestFastKernelPathActive(t *testing.T) {
	if !fastKernel {
		t.Fatal("event types changed: update appendKernel and kernelFields (encoding falls back to encoding/json meanwhile)")
	}
}

// appendKernel must equal encoding/json byte for byte, for every kind and
// for strings that need escaping.
func TestAppendKernelMatchesEncodingJSON(t *testing.T) {
	nasty := []string{"", "plain", `q"uote`, `back\slash`, "<html>&amp;", "\x00\x01\x1f\x7f", "\b\f\n\r\t",
		"caf\u00e9 \u65e5\u672c", "\u2028\u2029", "bad\xff\xfeutf8", "trunc\xe6\x97", "emoji \U0001F600", "/tmp/a b/c"}
	r := rand.New(rand.NewPCG(1, 2))
	str := func() string {
		if r.IntN(3) == 0 {
			b := make([]byte, r.IntN(12))
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			return string(b)
		}
		return nasty[r.IntN(len(nasty))]
	}
	var events []event.Kernel
	events = append(events, evidencetest.Kernel(20, 7)...)
	for i := 0; i < 3000; i++ {
		e := event.Kernel{Seq: r.Uint64(), TimeNS: r.Uint64(), Kind: event.Kinds[r.IntN(len(event.Kinds))],
			PID: r.Uint32(), TID: r.Uint32(), Comm: str(), CgroupID: r.Uint64()}
		switch e.Kind {
		case event.KindExec:
			e.Exec = &event.Exec{Filename: str(), Argv0: str()}
		case event.KindFork:
			e.Fork = &event.Fork{ParentPID: r.Uint32(), ParentTID: r.Uint32(), ChildPID: r.Uint32(), ChildTID: r.Uint32(), Thread: r.IntN(2) == 0}
		case event.KindExit:
			e.Exit = &event.Exit{Code: r.Int32() - 1<<30, Signal: r.Int32N(64), GroupDead: r.IntN(2) == 0}
		case event.KindOpen:
			e.Open = &event.Open{Syscall: str(), Dirfd: r.Int32() - 1<<30, Path: str(), Flags: r.Uint64(), Mode: r.Uint64(),
				Ret: r.Int64() - 1<<62, Access: str(), Create: r.IntN(2) == 0, Truncate: r.IntN(2) == 0, Append: r.IntN(2) == 0, PathTruncated: r.IntN(2) == 0}
		case event.KindConnect:
			e.Connect = &event.Connect{Fd: r.Int32(), Family: str(), Addr: str(), Port: uint16(r.Uint32()), Ret: -r.Int64()}
		}
		if r.IntN(50) == 0 { // a malformed event with every payload
			e.Exec, e.Fork, e.Exit = &event.Exec{}, &event.Fork{}, &event.Exit{}
			e.Open, e.Connect = &event.Open{}, &event.Connect{}
		}
		events = append(events, e)
	}
	for i := range events {
		want, _ := json.Marshal(&events[i])
		want = append(want, '\n')
		if got := appendKernel(nil, &events[i]); !bytes.Equal(got, want) {
			t.Fatalf("event %d:\n got %s\nwant %s", i, got, want)
		}
	}
	fast, _ := marshalKernel(events)
	slow, _ := marshalLines(events)
	if !bytes.Equal(fast, slow) {
		t.Fatal("marshalKernel differs from marshalLines")
	}
}

// Encoding in blocks side by side gives the bytes encoding/json gives.
func TestMarshalKernelBlocks(t *testing.T) {
	for _, n := range []int{0, 1, 33, 4096, 4097, 12345} {
		k := evidencetest.Kernel(max(n, 8), 11)[:n]
		got, err := marshalKernel(k)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := marshalLines(k)
		if !bytes.Equal(got, want) {
			t.Fatalf("%d events: marshalKernel differs from encoding/json", n)
		}
	}
}
