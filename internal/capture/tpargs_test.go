//go:build linux

package capture

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"vigil/internal/testenv"
)

// protoOf builds a tracepoint prototype as the kernel's BTF has it: a
// first void *__data, then the tracepoint's arguments.
func protoOf(args ...btf.Type) *btf.FuncProto {
	voidp := &btf.Pointer{Target: &btf.Void{}}
	ps := []btf.FuncParam{{Type: voidp}}
	for _, a := range args {
		ps = append(ps, btf.FuncParam{Type: a})
	}
	return &btf.FuncProto{Return: &btf.Void{}, Params: ps}
}

// TestCompleteArgs: each argument list io_uring_complete has had is
// accepted where the request (with its own completion) is passed, and
// refused, not read as another, where it is not.
func TestCompleteArgs(t *testing.T) {
	voidp := &btf.Pointer{Target: &btf.Void{}}
	u64 := &btf.Typedef{Name: "u64", Type: &btf.Int{Name: "long long unsigned int", Size: 8}}
	s32 := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	long := &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}
	uns := &btf.Int{Name: "unsigned int", Size: 4}
	ring := &btf.Pointer{Target: &btf.Struct{Name: "io_ring_ctx"}}
	cqe := &btf.Pointer{Target: &btf.Struct{Name: "io_uring_cqe"}}
	for _, tc := range []struct {
		name    string
		proto   *btf.FuncProto
		wantErr string
	}{
		{"6.13: the posted cqe", protoOf(ring, voidp, cqe), ""},
		{"5.19-6.12: values and CQE32 extras", protoOf(voidp, voidp, u64, s32, uns, u64, u64), ""},
		{"5.17-5.18: values, no req->cqe", protoOf(voidp, voidp, u64, s32, uns), "from before 5.19"},
		{"5.11-5.16: no request", protoOf(voidp, u64, s32, uns), "passes no request"},
		{"5.5-5.6: no request", protoOf(voidp, u64, long), "passes no request"},
		{"a pointer where the cqe was, to something else", protoOf(ring, voidp, voidp), "cannot read"},
		{"values with a 64-bit result", protoOf(voidp, voidp, u64, long, uns, u64, u64), "cannot read"},
		{"no arguments", protoOf(), "cannot read"},
	} {
		err := checkCompleteArgs(tc.proto)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: got %v; want an error saying %q", tc.name, err, tc.wantErr)
		}
	}
}

func TestSubmitArgs(t *testing.T) {
	req := &btf.Pointer{Target: &btf.Struct{Name: "io_kiocb"}}
	if err := checkSubmitArgs(protoOf(req)); err != nil {
		t.Errorf("(struct io_kiocb *req): %v", err)
	}
	voidp := &btf.Pointer{Target: &btf.Void{}}
	err := checkSubmitArgs(protoOf(voidp, req))
	if err == nil || !strings.Contains(err.Error(), "(void *, struct io_kiocb *)") {
		t.Errorf("(void *ctx, struct io_kiocb *req): got %v, want a refusal naming the arguments", err)
	}
}

// TestKernelCompleteArgs: this kernel's own prototype is one the program
// reads.
func TestKernelCompleteArgs(t *testing.T) {
	testenv.RequireRoot(t)
	p := probeTable[probeIndex(t, "tp_btf/io_uring_complete")]
	fp, err := kernelTarget(p)
	if err != nil {
		t.Fatalf("io_uring_complete: %v", err)
	}
	if err := checkCompleteArgs(fp); err != nil {
		t.Fatalf("this kernel's io_uring_complete %s: %v", describeParams(fp.Params), err)
	}
}

func probeIndex(t *testing.T, hook string) int {
	t.Helper()
	for i, p := range probeTable {
		if p.hook == hook {
			return i
		}
	}
	t.Fatalf("no probe %s", hook)
	return -1
}

// TestUnreadableArgsLeaveProbeOut: on a kernel whose io_uring_complete
// has arguments the program cannot read (simulated by refusing this
// kernel's), the capture still opens and the probe is reported missing
// with the reason (the archive's coverage then has the io_uring class
// unattached, from its hook's state).
func TestUnreadableArgsLeaveProbeOut(t *testing.T) {
	testenv.RequireRoot(t)
	i := probeIndex(t, "tp_btf/io_uring_complete")
	saved := probeTable[i]
	t.Cleanup(func() { probeTable[i] = saved })
	probeTable[i].args = func(fp *btf.FuncProto) error {
		return fmt.Errorf("this kernel's io_uring_complete passes no request (arguments %s)", describeParams(fp.Params))
	}
	c, err := Open(Config{CgroupPath: testCgroup(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range c.Probes() {
		if p.Name != saved.hook {
			continue
		}
		fp, err := kernelTarget(saved)
		if err != nil {
			t.Fatal(err)
		}
		if p.Attached || !strings.Contains(p.Error, "passes no request (arguments "+describeParams(fp.Params)+")") {
			t.Fatalf("probe %+v: want it left out, naming this kernel's arguments", p)
		}
		return
	}
	t.Fatalf("probes %+v: no %s", c.Probes(), saved.hook)
}
