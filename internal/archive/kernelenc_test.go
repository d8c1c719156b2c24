package archive

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"vigil/internal/wire"
)

// fill sets every field of v (a pointer) to a random value, by reflection,
// so that a field added to the event types and not to appendKernel makes
// the encodings differ.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	strs := []string{"", "x", "/usr/bin/a b", "<&>\"\\\n\t\x01", "bad\xffname", "\u2028é", "memfd:payload"}
	switch v.Kind() {
	case reflect.Pointer:
		if depth > 0 && r.IntN(3) == 0 {
			return // nil
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(r, v.Elem(), depth+1)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(r, v.Field(i), depth+1)
		}
	case reflect.Slice:
		if r.IntN(4) == 0 {
			return // nil
		}
		n := r.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(r, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.String:
		v.SetString(strs[r.IntN(len(strs))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		vals := []int64{0, 1, -1, -2, -4095, 1 << 30, -1 << 31}
		x := vals[r.IntN(len(vals))]
		if v.Kind() == reflect.Int64 && r.IntN(3) == 0 {
			x = r.Int64() - r.Int64()
		}
		v.SetInt(x)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		vals := []uint64{0, 1, 255, 65535, 1<<32 - 1}
		x := vals[r.IntN(len(vals))]
		if v.Kind() == reflect.Uint64 && r.IntN(3) == 0 {
			x = r.Uint64()
		}
		v.SetUint(x) // truncated to the field's width
	default:
		panic("fill: unhandled kind " + v.Kind().String())
	}
}

func TestAppendKernelMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		var e wire.Kernel
		fill(r, reflect.ValueOf(&e).Elem(), 0)
		want, err := json.Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, '\n')
		if got := appendKernel(nil, &e); !bytes.Equal(got, want) {
			t.Fatalf("event %d:\nappendKernel: %s\nencoding/json: %s", i, got, want)
		}
	}
}

// plausible turns a filled event into one that is valid but for what the
// random source breaks on purpose: a kind, its payload alone, enums in
// range, then one field spoiled in one of a dozen ways.
func plausible(r *rand.Rand, e *wire.Kernel) {
	kind := wire.Kinds[r.IntN(len(wire.Kinds))]
	keep := *e
	*e = wire.Kernel{Seq: keep.Seq, TimeNS: keep.TimeNS, Kind: kind, PID: keep.PID, TID: keep.TID, Comm: keep.Comm,
		CgroupID: keep.CgroupID, Hook: "tp_btf/sys_exit", IOWorker: keep.IOWorker}
	fillPtr := func(p any) { fill(r, reflect.ValueOf(p).Elem(), 1) }
	switch {
	case kind == wire.KindExec:
		e.Exec = &wire.Exec{}
		fillPtr(e.Exec)
		e.Exec.Via = "path"
		if e.Exec.Argv == nil {
			e.Exec.Argv = []wire.Bytes{}
		}
	case kind == wire.KindExecFailed:
		e.ExecFailed = &wire.ExecFailed{}
		fillPtr(e.ExecFailed)
		e.ExecFailed.Syscall, e.ExecFailed.Ret = "execve", -2
	case kind == wire.KindFork:
		e.Fork = &wire.Fork{}
		fillPtr(e.Fork)
	case kind == wire.KindExit:
		e.Exit = &wire.Exit{Code: 3, Signal: 0}
	case kind == wire.KindOpen:
		e.Open = &wire.Open{}
		fillPtr(e.Open)
		e.Open.Access, e.Open.Syscall = wire.AccessRead, "openat"
	case kind == wire.KindCgroupMigrate:
		e.Migrate = &wire.Migrate{}
		fillPtr(e.Migrate)
	case kind == wire.KindIOUring:
		e.IOUring = &wire.IOUring{}
		fillPtr(e.IOUring)
		e.IOUring.Opcode, e.IOUring.Op, e.IOUring.Access = 18, "openat", ""
	case slices.Contains(wire.NetKinds, kind):
		e.Net = &wire.Net{}
		fillPtr(e.Net)
		e.Net.Family, e.Net.AddrFrom, e.Net.SockType, e.Net.Syscall = "inet", "socket", "stream", "connect"
	default:
		e.FileOp = &wire.FileOp{}
		fillPtr(e.FileOp)
		e.FileOp.Syscall, e.FileOp.Ret = "unlinkat", 0
	}
	if r.IntN(3) == 0 {
		// Some of the parts an event can lack, in order.
		for _, part := range wire.IncompleteOrder {
			if r.IntN(2) == 0 {
				e.Incomplete = append(e.Incomplete, part)
			}
		}
	}
	spoil := []func(){
		func() {},
		func() {},
		func() { e.Kind = "teleport" },
		func() { e.Hook = "kprobe/x" },
		func() { e.Exit = &wire.Exit{} },
		func() { e.Exit = nil; e.Exec = &wire.Exec{Argv: []wire.Bytes{}, Via: "path"} },
		func() {
			if e.Exec != nil {
				e.Exec.Argv = nil
			}
		},
		func() {
			if e.Exit != nil {
				e.Exit.Code = 256
			}
		},
		func() {
			if e.ExecFailed != nil {
				e.ExecFailed.Ret = 0
			}
		},
		func() {
			if e.Open != nil {
				e.Open.Access = "rwx"
			}
		},
		func() {
			if e.FileOp != nil {
				e.FileOp.Ret = 5
			}
		},
		func() {
			if e.Net != nil {
				e.Net.Family = "bluetooth"
			}
		},
		func() {
			if e.Net != nil {
				e.Net.AddrFrom = "guess"
			}
		},
		func() {
			if e.IOUring != nil {
				e.IOUring.Opcode = 300
			}
		},
		func() {
			if e.IOUring != nil {
				e.IOUring.Access = "x"
			}
		},
		func() {
			if e.Open != nil {
				e.Open.Syscall = ""
			}
		},
		func() { e.Incomplete = []string{"half_there"} },
		func() { e.Incomplete = []string{wire.IncompletePath, wire.IncompletePath} },
		func() { e.Incomplete = append(e.Incomplete, wire.IncompleteArgv, wire.IncompleteArgv) },
	}
	spoil[r.IntN(len(spoil))]()
}

// For every canonical line, the fast path's verdict is the validator's.
func TestKernelValidMatchesSchema(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var valid, invalid int
	for i := range 4000 {
		var e wire.Kernel
		fill(r, reflect.ValueOf(&e).Elem(), 0)
		plausible(r, &e)
		line := appendKernel(nil, &e)
		line = line[:len(line)-1]
		schemaOK := wire.Validate("kernel-event", line) == nil
		proven := provenKernelLine(line, new(wire.Kernel), &proveScratch{})
		if proven != schemaOK {
			t.Fatalf("event %d: proven %v, schema valid %v (kernelValid: %q)\n%s", i, proven, schemaOK, kernelValid(&e), line)
		}
		if schemaOK {
			valid++
		} else {
			invalid++
		}
	}
	if valid < 1000 || invalid < 1000 {
		t.Fatalf("%d valid and %d invalid lines: the generator does not exercise both verdicts", valid, invalid)
	}
	// A line in another spelling is never proven, whatever its validity.
	var e wire.Kernel
	fill(r, reflect.ValueOf(&e).Elem(), 0)
	plausible(r, &e)
	line := appendKernel(nil, &e)
	spaced := bytes.Replace(line[:len(line)-1], []byte(`,"ts_ns":`), []byte(`, "ts_ns":`), 1)
	if provenKernelLine(spaced, new(wire.Kernel), &proveScratch{}) {
		t.Fatalf("a non-canonical line was proven: %s", spaced)
	}
}

// FuzzAppendBytes holds appendBytes and appendString to encoding/json for
// any bytes: escapes, HTML characters, invalid UTF-8, U+2028.
func FuzzAppendBytes(f *testing.F) {
	for _, s := range []string{"", "/usr/bin/a b", "<&>\"\\\n\t\x01\x7f", "bad\xffname", "\u2028é\u2029", "\xed\xa0\x80", "ok\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(wire.Bytes(s))
		if err != nil {
			t.Fatal(err)
		}
		prefix := []byte(`{"k":`)
		if got := appendBytes(prefix, wire.Bytes(s)); !bytes.Equal(got[len(prefix):], want) {
			t.Fatalf("appendBytes(%q) = %s, encoding/json: %s", s, got[len(prefix):], want)
		}
		if want, _ = json.Marshal(s); !bytes.Equal(appendString(nil, s), want) {
			t.Fatalf("appendString(%q) = %s, encoding/json: %s", s, appendString(nil, s), want)
		}
	})
}
