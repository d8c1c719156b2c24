package archive

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"vigil/internal/event"
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
		var e event.Kernel
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
