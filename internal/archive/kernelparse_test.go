package archive

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"regexp"
	"testing"

	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

// plainStrings replaces every string of v with one that needs no JSON
// escape, so that the line stays on parseCanonicalKernel's path.
func plainStrings(r *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			plainStrings(r, v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			plainStrings(r, v.Field(i))
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			plainStrings(r, v.Index(i))
		}
	case reflect.String:
		plain := []string{"", "x", "/usr/bin/a b", "é€", "memfd:payload", "tp_btf/sys_exit"}
		v.SetString(plain[r.IntN(len(plain))])
	}
}

// TestParseCanonicalKernelMatchesEncodingJSON: whatever the shortcut
// accepts, it reads as encoding/json does; and it accepts the common
// payloads when their strings need no escape.
func TestParseCanonicalKernelMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	accepted := map[string]int{}
	var arena lineArena
	for i := range 10000 {
		var e wire.Kernel
		fill(r, reflect.ValueOf(&e).Elem(), 0)
		if i%2 == 0 {
			plausible(r, &e)
			plainStrings(r, reflect.ValueOf(&e).Elem())
		}
		line := appendKernel(nil, &e)
		line = line[:len(line)-1]
		var got wire.Kernel
		if !parseCanonicalKernel(line, &got, &arena) {
			continue
		}
		var want wire.Kernel
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("event %d: accepted a line encoding/json refuses (%v): %s", i, err, line)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("event %d: read as\n%+v\nencoding/json reads\n%+v\nfrom %s", i, got, want, line)
		}
		if again := appendKernel(nil, &got); !bytes.Equal(again[:len(again)-1], line) {
			t.Fatalf("event %d: re-encodes as\n%s\nfrom %s", i, again, line)
		}
		if got.Incomplete != nil {
			accepted["incomplete"]++
		}
		switch {
		case got.Open != nil:
			accepted["open"]++
		case got.Exec != nil:
			accepted["exec"]++
		case got.Fork != nil:
			accepted["fork"]++
		case got.Exit != nil:
			accepted["exit"]++
		case got.FileOp != nil:
			accepted["file_op"]++
		case got.Net != nil:
			accepted["net"]++
		}
	}
	for _, p := range []string{"open", "exec", "fork", "exit", "file_op", "net", "incomplete"} {
		if accepted[p] < 50 {
			t.Errorf("only %d %s lines took the shortcut", accepted[p], p)
		}
	}
}

// Spoilers of TestParseCanonicalKernelRefuses: a value appendKernel
// writes otherwise ("-0"), or a key it leaves out when its value is zero.
var (
	retMinusZero = regexp.MustCompile(`"ret":-?[0-9]+`)
	zeroIno      = regexp.MustCompile(`("open":\{.*"syscall":"[a-z0-9]+")(,"ino":[0-9]+)?`)
	zeroDev      = regexp.MustCompile(`("open":\{.*"syscall":"[a-z0-9]+"(,"ino":[0-9]+)?)(,"dev":[0-9]+)?`)
	zeroOldTID   = regexp.MustCompile(`("exec":\{.*"dev":[0-9]+)(,"old_tid":[0-9]+)?\}`)
	zeroFlags    = regexp.MustCompile(`("flags":[0-9]+,)?"syscall":`)
)

// TestParseCanonicalKernelRefuses: a line that is not exactly a canonical
// one is not read, whichever byte is off.
func TestParseCanonicalKernelRefuses(t *testing.T) {
	k := evidencetest.Kernel(64, 1000)
	dir := &wire.ResolvedPath{Path: wire.Bytes("/w")}
	mode := uint32(0o755)
	k = append(k,
		wire.Kernel{Seq: 65, Kind: wire.KindRmdir, PID: 1, TID: 1, Comm: wire.Bytes("rm"), Hook: "tp_btf/sys_exit",
			FileOp: &wire.FileOp{Name: &wire.Name{Requested: wire.Bytes("d"), Dir: dir}, Flags: 512, Syscall: "unlinkat"}},
		wire.Kernel{Seq: 66, Kind: wire.KindMkdir, PID: 1, TID: 1, Comm: wire.Bytes("mkdir"), Hook: "tp_btf/sys_exit",
			FileOp: &wire.FileOp{Name: &wire.Name{Requested: wire.Bytes("d"), Dir: dir}, Mode: &mode, Syscall: "mkdirat"}})
	for i := range k {
		line := appendKernel(nil, &k[i])
		line = line[:len(line)-1]
		var e wire.Kernel
		ok := parseCanonicalKernel(line, &e, &lineArena{})
		if want := k[i].ExecFailed == nil && k[i].Migrate == nil && k[i].IOUring == nil; ok != want {
			t.Fatalf("event %d (%s): shortcut %v, want %v: %s", i, k[i].Kind, ok, want, line)
		}
		if !ok {
			continue
		}
		for _, bad := range [][]byte{
			line[:len(line)-1],
			append(bytes.Clone(line), ' '),
			bytes.Replace(line, []byte(`"pid":`), []byte(`"pid": `), 1),
			bytes.Replace(line, []byte(`"tid":`), []byte(`"pid":`), 1),
			bytes.Replace(line, []byte(`"agent"`), []byte(`"ag\u0065nt"`), 1),
			bytes.Replace(line, []byte(`"seq":`), []byte(`"seq":99999999999999999999`), 1),
			// Values appendKernel writes otherwise, or not at all.
			bytes.Replace(line, []byte(`"pid":`), []byte(`"pid":0`), 1),
			bytes.Replace(line, []byte(`"cgroup_id":`), []byte(`"cgroup_id":00`), 1),
			retMinusZero.ReplaceAll(line, []byte(`"ret":-0`)),
			bytes.Replace(line, []byte(`"syscall":"`), []byte(`"syscall":"<`), 1),
			bytes.Replace(line, []byte(`"syscall":"`), []byte(`"syscall":"\xff`), 1),
			bytes.Replace(line, []byte(`"syscall":"`), []byte("\"syscall\":\"\u2028"), 1),
			bytes.Replace(line, []byte(`"syscall":"`), []byte("\"syscall\":\"\x1f"), 1),
			zeroIno.ReplaceAll(line, []byte(`$1,"ino":0`)),
			zeroDev.ReplaceAll(line, []byte(`$1,"dev":0`)),
			zeroOldTID.ReplaceAll(line, []byte(`$1,"old_tid":0}`)),
			zeroFlags.ReplaceAll(line, []byte(`"flags":0,"syscall":`)),
		} {
			if bytes.Equal(bad, line) {
				continue // the line has no such part
			}
			if parseCanonicalKernel(bad, &e, &lineArena{}) {
				t.Fatalf("event %d: read a spoiled line: %s", i, bad)
			}
		}
	}
}

// FuzzParseCanonicalKernel holds parseCanonicalKernel's claim, on which
// verify relies instead of re-encoding: a line it accepts is exactly what
// appendKernel writes for the event it read.
func FuzzParseCanonicalKernel(f *testing.F) {
	k := evidencetest.Kernel(64, 1000)
	for i := range k {
		line := appendKernel(nil, &k[i])
		f.Add(line[:len(line)-1])
	}
	f.Add([]byte(`{"seq":01,"ts_ns":1,"kind":"open","pid":1,"tid":1,"comm":"a","cgroup_id":1,"hook":"h","open":{"name":{"requested":"a"},"dirfd":-0,"flags":0,"mode":0,"ret":3,"access":"read","create":false,"truncate":false,"append":false,"syscall":"openat","ino":0}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var e wire.Kernel
		if !parseCanonicalKernel(line, &e, &lineArena{}) {
			return
		}
		if again := appendKernel(nil, &e); !bytes.Equal(again[:len(again)-1], line) {
			t.Fatalf("accepted\n%s\nwhich appendKernel writes as\n%s", line, again)
		}
	})
}
