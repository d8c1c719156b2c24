//go:build linux

package capture

import (
	"encoding/binary"
	"fmt"
	"testing"
	"unsafe"

	"vigil/internal/wire"
)

// TestReaderReusesNothingVisible decodes many records through one reader,
// as the ring reader does, reusing one input buffer: every event must keep
// its own strings and payload although they are carved out of shared
// arenas and slabs, and a malformed record in the middle must leave no
// event behind.
func TestReaderReusesNothingVisible(t *testing.T) {
	s := newReaderState(DefaultRingSize, nil, 0)
	buf := make([]byte, 0, 8192)
	const n = 5000
	for i := range n {
		path := fmt.Sprintf("/tmp/file-%d-%s", i, string(make([]byte, i%300)))
		body := structBytes(vigilBPFVigilSys{Ret: -2, Nr: 257, Args: [6]uint64{uint64(i)}, S0IsDir: 1})
		r := rec{hdr: vigilBPFVigilHdr{Kind: uint8(vigilBPFVigilKindVIGIL_KIND_OPEN), Hook: uint8(vigilBPFVigilHookVIGIL_HOOK_SYS_EXIT),
			Flags: strSet(1)}, body: body, strs: []string{"", path}}.bytes()
		buf = append(buf[:0], r...)
		binary.NativeEndian.PutUint64(buf[unsafe.Offsetof(vigilBPFVigilHdr{}.Seq):], uint64(i))
		s.handle(buf)
		for j := range buf {
			buf[j] = 0xff // the ring reader overwrites its buffer
		}
		if i == n/2 {
			s.handle([]byte{1, 2, 3})
		}
	}
	s.end()
	evs := s.pass.events()
	if len(evs) != n || s.records != n+1 || s.decodeErrors != 1 {
		t.Fatalf("got %d events from %d records with %d decode errors (first: %v)", len(evs), s.records, s.decodeErrors, s.firstDecode)
	}
	opens := map[*wire.Open]bool{}
	for i, ev := range evs {
		want := fmt.Sprintf("/tmp/file-%d-%s", i, string(make([]byte, i%300)))
		if ev.Kind != wire.KindOpen || string(ev.Open.Name.Requested) != want || ev.Open.Dirfd != int32(i) || ev.Comm != "worker" {
			t.Fatalf("event %d: %+v %+v", i, ev, ev.Open)
		}
		if opens[ev.Open] {
			t.Fatalf("event %d shares its payload with an earlier event", i)
		}
		opens[ev.Open] = true
	}
}
