//go:build linux

package capture

import (
	"encoding/json"
	"strings"
	"testing"

	"vigil/internal/wire"
)

// Ring records come from the kernel, but the decoder must not trust their
// lengths and offsets: any bytes give an error or an event that is valid
// against the kernel-event schema, never a panic.
func FuzzDecodeRecord(f *testing.F) {
	open := rec{hdr: vigilBPFVigilHdr{Kind: uint8(vigilBPFVigilKindVIGIL_KIND_OPEN), Hook: uint8(vigilBPFVigilHookVIGIL_HOOK_SYS_EXIT),
		Flags: strSet(0) | strSet(1)}, body: structBytes(vigilBPFVigilSys{Ret: 3, Nr: 257, Op: 1, Args: [6]uint64{uint64(0xffffff9c), 0, 0o101, 0o644}, F_mode: 2}),
		strs: []string{"b\x00a\x00", "x"}}.bytes()
	f.Add(open)
	f.Add(open[:len(open)/2])
	f.Add(rec{hdr: vigilBPFVigilHdr{Kind: uint8(vigilBPFVigilKindVIGIL_KIND_UNLINK), Hook: uint8(vigilBPFVigilHookVIGIL_HOOK_SYS_EXIT), Flags: strSet(0)},
		body: structBytes(vigilBPFVigilSys{Nr: 87, Op: 3, S0IsDir: 1}), strs: []string{"gone"}}.bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d decoder
		var ev wire.Kernel
		if _, err := d.decodeInto(&ev, b); err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		data, err := json.Marshal(&ev)
		if err != nil {
			t.Fatalf("decoded event does not encode: %v", err)
		}
		if err := wire.Validate("kernel-event", data); err != nil {
			t.Fatalf("decoded event is not a valid kernel event: %v\n%s", err, data)
		}
	})
}
