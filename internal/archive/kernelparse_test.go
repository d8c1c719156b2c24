package archive

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
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

// TestParseCanonicalKernelRefuses: a line that is not exactly a canonical
// one is not read, whichever byte is off.
func TestParseCanonicalKernelRefuses(t *testing.T) {
	k := evidencetest.Kernel(64, 1000)
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
		} {
			if parseCanonicalKernel(bad, &e, &lineArena{}) {
				t.Fatalf("event %d: read a spoiled line: %s", i, bad)
			}
		}
	}
}
