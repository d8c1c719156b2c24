//go:build linux

package capture

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"vigil/internal/wire"
)

// rec builds a raw record as the kernel side lays it out, through the
// generated types.
type rec struct {
	hdr  vigilBPFVigilHdr
	body []byte
	strs []string
}

func (r rec) bytes() []byte {
	h := r.hdr
	h.Seq, h.TsNs, h.CgroupId, h.Pid, h.Tid = 7, 123456, 99, 1000, 1001
	for i, c := range "worker" {
		h.Comm[i] = int8(c)
	}
	for i := range h.Len {
		h.Len[i] = 0
		if i < len(r.strs) {
			h.Len[i] = uint16(len(r.strs[i]))
		}
	}
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, h)
	body := make([]byte, recFixedSize-recHdrSize)
	copy(body, r.body)
	b.Write(body)
	for _, s := range r.strs {
		b.WriteString(s)
	}
	return b.Bytes()
}

func structBytes[T any](v T) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, v)
	return b.Bytes()
}

func strSet(i int, more ...vigilBPFVigilFlag) uint32 {
	f := uint32(vigilBPFVigilFlagVIGIL_F_STR_SET) << (4 * i)
	for _, m := range more {
		f |= uint32(m) << (4 * i)
	}
	return f
}

func decodeOne(t *testing.T, b []byte) (wire.Kernel, bool) {
	t.Helper()
	var d decoder
	var ev wire.Kernel
	// Records arrive 8-byte aligned.
	buf := make([]uint64, (len(b)+7)/8)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(b))
	copy(raw, b)
	fault, err := d.decodeInto(&ev, raw)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return ev, fault
}

func TestRecordLayoutMatchesObject(t *testing.T) {
	if recHdrSize != 64 || recFixedSize != 192 {
		t.Fatalf("header %d bytes, fixed part %d: bpf/capture.h says 64 and 192", recHdrSize, recFixedSize)
	}
	// Every kind and hook the kernel can send has a name, and back.
	if len(kindByIndex) != numKinds || len(wire.Kinds) != numKinds {
		t.Fatalf("%d mapped kinds, %d event kinds, kernel has %d", len(kindByIndex), len(wire.Kinds), numKinds)
	}
	for i, k := range wire.Kinds {
		if kindByIndex[vigilBPFVigilKind(i)] != k {
			t.Errorf("kernel kind %d maps to %q, wire.Kinds[%d] is %q", i, kindByIndex[vigilBPFVigilKind(i)], i, k)
		}
	}
	if len(hookNames) != int(vigilBPFVigilHookVIGIL_NHOOKS) {
		t.Errorf("%d hooks named, kernel has %d", len(hookNames), vigilBPFVigilHookVIGIL_NHOOKS)
	}
}

func TestDecodeOpenResolvesComponents(t *testing.T) {
	body := structBytes(vigilBPFVigilSys{Ret: 3, Nr: 257, Op: 1, Args: [6]uint64{uint64(0xffffff9c), 0, 0o101, 0o644}, Ino: 5, Dev: 6, F_mode: 2})
	b := rec{hdr: vigilBPFVigilHdr{Kind: uint8(vigilBPFVigilKindVIGIL_KIND_OPEN), Hook: uint8(vigilBPFVigilHookVIGIL_HOOK_SYS_EXIT),
		Flags: strSet(0) | strSet(1)}, body: body, strs: []string{"b\x00a\x00", "x"}}.bytes()
	ev, fault := decodeOne(t, b)
	o := ev.Open
	if fault || ev.Kind != wire.KindOpen || ev.Hook != "tp_btf/sys_exit" || o == nil || o.File == nil ||
		o.File.Path != "/a/b" || o.Name.Requested != "x" || o.Name.Dir != nil || o.Access != wire.AccessWrite ||
		!o.Create || o.Ret != 3 || o.Dirfd != -100 || o.Ino != 5 || ev.Comm != "worker" || ev.PID != 1000 {
		t.Fatalf("open decoded as %+v %+v (fault %v)", ev, o, fault)
	}
}

func TestDecodeDetachedAndRootPaths(t *testing.T) {
	body := structBytes(vigilBPFVigilExec{Argc: 2})
	b := rec{hdr: vigilBPFVigilHdr{Kind: uint8(vigilBPFVigilKindVIGIL_KIND_EXEC), Hook: uint8(vigilBPFVigilHookVIGIL_HOOK_SCHED_PROCESS_EXEC),
		Flags: strSet(0, vigilBPFVigilFlagVIGIL_F_STR_DETACHED) | strSet(1) | strSet(2)}, body: body,
		strs: []string{"memfd:payload\x00", "/dev/fd/3", "prog\x00-x\x00"}}.bytes()
	ev, _ := decodeOne(t, b)
	x := ev.Exec
	if x.File.Path != "memfd:payload" || !x.File.Detached || x.Via != "fd" || len(x.Argv) != 2 || x.Argv[1] != "-x" {
		t.Fatalf("exec decoded as %+v", x)
	}
	// The root is the empty component list.
	body = structBytes(vigilBPFVigilSys{Ret: 0, Nr: 84, Op: 3, S0IsDir: 1})
	b = rec{hdr: vigilBPFVigilHdr{Kind: uint8(vigilBPFVigilKindVIGIL_KIND_RMDIR), Hook: uint8(vigilBPFVigilHookVIGIL_HOOK_SYS_EXIT),
		Flags: strSet(0) | strSet(1)}, body: body, strs: []string{"", "d"}}.bytes()
	ev, _ = decodeOne(t, b)
	if ev.FileOp == nil || ev.FileOp.Name == nil || ev.FileOp.Name.Dir == nil || ev.FileOp.Name.Dir.Path != "/" || ev.FileOp.ObjectPath() != "/d" {
		t.Fatalf("rmdir decoded as %+v", ev.FileOp)
	}
}

func TestDecodeRejectsMalformed(t *testing.T) {
	good := rec{hdr: vigilBPFVigilHdr{Kind: uint8(vigilBPFVigilKindVIGIL_KIND_EXIT), Hook: uint8(vigilBPFVigilHookVIGIL_HOOK_SCHED_PROCESS_EXIT)}}.bytes()
	cases := map[string][]byte{
		"short":        good[:100],
		"unknown kind": func() []byte { b := bytes.Clone(good); b[32] = 200; return b }(),
		"unknown hook": func() []byte { b := bytes.Clone(good); b[33] = 200; return b }(),
		"extra bytes":  append(bytes.Clone(good), 'x'),
		"short string": func() []byte { b := bytes.Clone(good); b[40] = 5; return b }(),
		// A program of an ended session emitting into a resident set's
		// ring as the next session began (bytes 34-35: hdr.gen).
		"another session": func() []byte { b := bytes.Clone(good); b[34] = 7; return b }(),
	}
	for name, b := range cases {
		var d decoder
		var ev wire.Kernel
		buf := make([]uint64, (len(b)+7)/8+1)
		raw := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(b))
		copy(raw, b)
		if _, err := d.decodeInto(&ev, raw); err == nil {
			t.Errorf("%s: decoded without error: %+v", name, ev)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans lines", name)
		}
	}
}

func TestPathRebuiltFromComponents(t *testing.T) {
	for _, c := range []struct {
		raw   string
		flags []vigilBPFVigilFlag
		want  wire.Bytes
	}{
		{"", nil, "/"},
		{"b\x00a\x00", nil, "/a/b"},
		{"c\x00b\x00a\x00", nil, "/a/b/c"},
		{"x\x00", []vigilBPFVigilFlag{vigilBPFVigilFlagVIGIL_F_STR_DETACHED}, "x"},
		{"c\x00b\x00", []vigilBPFVigilFlag{vigilBPFVigilFlagVIGIL_F_STR_TRUNC}, "b/c"},
		{"n\xff\x00d\x00", nil, "/d/n\xff"},
	} {
		var d decoder
		r := record{hdr: &vigilBPFVigilHdr{Flags: strSet(0, c.flags...)}}
		r.strs[0] = []byte(c.raw)
		p, _ := d.path(&r, 0)
		if p.Path != c.want {
			t.Errorf("components %q %v: path %q, want %q", c.raw, c.flags, p.Path, c.want)
		}
	}
}

// Each bit of a decoded record's missing set names its own part.
func TestIncompleteListsNameTheirBits(t *testing.T) {
	for bit, want := range map[missing]string{missRead: wire.IncompleteReadFailed, missPath: wire.IncompletePath, missName: wire.IncompleteName, missArgv: wire.IncompleteArgv} {
		if got := incompleteLists[bit]; len(got) != 1 || got[0] != want {
			t.Errorf("bit %#x names %q, want [%q]", bit, got, want)
		}
	}
	if got := incompleteLists[missAll]; !slices.Equal(got, wire.IncompleteOrder) {
		t.Errorf("every bit names %q, want %q", got, wire.IncompleteOrder)
	}
	if incompleteLists[0] != nil {
		t.Error("no bit names a part")
	}
}
