package archive

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"vigil/internal/attest"
	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/spill"
	"vigil/internal/wire"
)

// streamed writes b's kernel layer through a KernelStream in blocks of
// random size, each block overwritten once written (as a recording reuses
// its decode buffers), and returns the streamed bundle and its layer.
func streamed(t *testing.T, b *evidence.Bundle, r *rand.Rand) (*evidence.Bundle, *KernelLayer) {
	t.Helper()
	return streamedWith(t, b, r, NewKernelStream())
}

// streamedWith is streamed through ks.
func streamedWith(t *testing.T, b *evidence.Bundle, r *rand.Rand, ks *KernelStream) (*evidence.Bundle, *KernelLayer) {
	t.Helper()
	for rest := b.Kernel; len(rest) > 0; {
		n := min(len(rest), 1+r.IntN(3000))
		block := append([]wire.Kernel(nil), rest[:n]...)
		if err := ks.Write(block); err != nil {
			t.Fatal(err)
		}
		for i := range block {
			block[i] = wire.Kernel{Seq: 1 << 60, Kind: "scribbled", Comm: wire.Bytes(strings.Repeat("x", 16))}
		}
		rest = rest[n:]
	}
	layer, err := ks.Close()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := evidence.AssembleStreamed(b.Run, layer.Digest(), b.SDK, evidence.InputOf(b.Health))
	if err != nil {
		t.Fatal(err)
	}
	return sb, layer
}

// The path sets give merged runs' space back through this method of the
// scratch file; were its signature to change, they would stop silently.
var _ interface{ Discard(off, n int64) error } = (*spill.File)(nil)

// sameArchive fails unless the files at got and want hold the same bytes.
func sameArchive(t *testing.T, got, want, what string) {
	t.Helper()
	g, _ := os.ReadFile(got)
	w, _ := os.ReadFile(want)
	if !bytes.Equal(g, w) {
		t.Fatalf("%s: archive %d bytes, in memory %d, first difference at %d", what, len(g), len(w), firstDiffAt(g, w))
	}
}

// spillingAgainstMemory writes b's archive in memory into dir and returns
// its path, with a spilling stream in dir to write it again.
func spillingAgainstMemory(t *testing.T, b *evidence.Bundle, dir string) (string, *KernelStream) {
	t.Helper()
	want := filepath.Join(dir, "memory.tar.gz")
	if err := Write(want, b); err != nil {
		t.Fatal(err)
	}
	ks, err := NewKernelStreamSpilling(dir)
	if err != nil {
		t.Fatal(err)
	}
	return want, ks
}

func spooledSegments(l *KernelLayer) int {
	n := 0
	for _, s := range l.segs {
		if s.spooled {
			n++
		}
	}
	return n
}

// An archive whose kernel layer was written as it arrived is byte for
// byte the archive of the same events held in memory, signed or not, and
// reads back to those events.
func TestStreamedArchiveIsTheInMemoryArchive(t *testing.T) {
	key, absent := signerAndAbsent(t)
	r := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	for _, n := range []int{0, 9, 1500, 20000} {
		for _, k := range []*attest.Key{nil, key} {
			b := absent
			if n > 0 {
				b = evidencetest.Bundle(n, 3)
			}
			want := filepath.Join(dir, "memory.tar.gz")
			if err := WriteSigned(want, b, k); err != nil {
				t.Fatal(err)
			}
			// The paths held in memory, or moved to an anonymous file a
			// few dozen at a time, the runs there merged every few.
			spilling, err := newKernelStreamSpilling(dir, evidence.SpillLimits{Paths: 40, Runs: 3})
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, ks := range []*KernelStream{NewKernelStream(), spilling} {
				sb, layer := streamedWith(t, b, r, ks)
				if layer.Size() == 0 != (n == 0) {
					t.Fatalf("%d events make a layer of %d bytes", n, layer.Size())
				}
				if st := layer.Digest().Spilled(); ks == spilling && (n >= 1500) != (st.PathRuns > 0 && st.Merges > 0) {
					t.Fatalf("%d events: spilled %+v", n, st)
				}
				if spooled := spooledSegments(layer); ks == spilling && spooled != len(layer.segs) || ks != spilling && spooled > 0 {
					t.Fatalf("%d events, spilling %v: %d of %d segments in the scratch file", n, ks == spilling, spooled, len(layer.segs))
				}
				got = filepath.Join(dir, "streamed.tar.gz")
				if err := WriteStreamed(got, sb, layer, k); err != nil {
					t.Fatal(err)
				}
				sameArchive(t, got, want, fmt.Sprintf("%d events, signed %v, spilling %v", n, k != nil, ks == spilling))
				if err := layer.Release(); err != nil {
					t.Fatal(err)
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 2 {
				t.Fatalf("%s holds %d names, want the two archives only", dir, len(ents))
			}
			back, err := Read(got)
			if err != nil {
				t.Fatalf("%d events: %v", n, err)
			}
			if len(back.Kernel) != n || (n > 0 && !reflect.DeepEqual(back.Kernel, b.Kernel)) {
				t.Fatalf("%d events: read back %d events, not the ones written", n, len(back.Kernel))
			}
		}
	}
}

// With the default limits, a layer touching more distinct paths than the
// digest holds moves them to its scratch file, and every compressed
// segment goes to the other; the archive is still the one made in memory,
// and releasing the layer leaves nothing in the directory.
func TestSpillingStreamAtDefaultLimits(t *testing.T) {
	b := evidencetest.Bundle(140_000, 3) // about 70,000 distinct paths
	dir := t.TempDir()
	want, ks := spillingAgainstMemory(t, b, dir)
	sb, layer := streamedWith(t, b, rand.New(rand.NewPCG(7, 8)), ks)
	if st := layer.Digest().Spilled(); st.PathRuns == 0 || st.Err != nil {
		t.Fatalf("spilled %+v, want runs at the default limits", st)
	}
	if n := spooledSegments(layer); n != len(layer.segs) || n < 2 {
		t.Fatalf("%d of %d segments in the scratch file", n, len(layer.segs))
	}
	got := filepath.Join(dir, "streamed.tar.gz")
	if err := WriteStreamed(got, sb, layer, nil); err != nil {
		t.Fatal(err)
	}
	if err := layer.Release(); err != nil {
		t.Fatal(err)
	}
	sameArchive(t, got, want, "spilled")
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("%s holds %d names, want the two archives only", dir, len(ents))
	}
	// Verified as vigil verify does, the archive's surface and paths go
	// to a scratch file too, and its documents are Open's.
	held, err := Open(got)
	if err != nil {
		t.Fatal(err)
	}
	folded, err := OpenDigest(got)
	if err != nil {
		t.Fatal(err)
	}
	if st := folded.Bundle.Streamed.Spilled(); st.PathRuns == 0 || st.Err != nil || folded.scratch == nil {
		t.Fatalf("verifying spilled %+v", st)
	}
	if !reflect.DeepEqual(surfaceWithPaths(t, folded.Bundle), held.Bundle.Surface) {
		t.Fatal("OpenDigest's surface differs from Open's")
	}
	folded.Close()
	// A released layer's segments are gone: it is never written again.
	if err := WriteStreamed(filepath.Join(dir, "again.tar.gz"), sb, layer, nil); err == nil || !strings.Contains(err.Error(), "released") {
		t.Fatalf("writing a released layer: %v", err)
	}
}

// A segment the scratch file refuses stays in memory and is counted: the
// archive is complete all the same.
func TestSpoolRefusalKeepsSegmentsInMemory(t *testing.T) {
	b := evidencetest.Bundle(30_000, 3)
	dir := t.TempDir()
	want, ks := spillingAgainstMemory(t, b, dir)
	// The segments' file closed under the stream: every write fails.
	ks.files[1].Close()
	sb, layer := streamedWith(t, b, rand.New(rand.NewPCG(9, 10)), ks)
	n, why := layer.Unspooled()
	if n == 0 || n != int64(len(layer.segs)) || why == nil || spooledSegments(layer) != 0 {
		t.Fatalf("%d of %d segments unspooled (%v), %d spooled", n, len(layer.segs), why, spooledSegments(layer))
	}
	got := filepath.Join(dir, "streamed.tar.gz")
	if err := WriteStreamed(got, sb, layer, nil); err != nil {
		t.Fatal(err)
	}
	layer.Release()
	sameArchive(t, got, want, "segments kept in memory")
}

// A streamed bundle is written only with the layer its digest came from,
// and a layer written out of seq order is refused before anything is
// written.
func TestWriteStreamedRefusesMismatch(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	b := evidencetest.Bundle(300, 1)
	sb, _ := streamed(t, b, r)
	_, other := streamed(t, b, r)
	dir := t.TempDir()
	if err := WriteStreamed(filepath.Join(dir, "a"), sb, other, nil); err == nil {
		t.Fatal("a bundle written with another layer's digest")
	}
	if err := WriteSigned(filepath.Join(dir, "b"), sb, nil); err == nil {
		t.Fatal("a streamed bundle written without its layer")
	}

	swapped := append([]wire.Kernel(nil), b.Kernel...)
	swapped[10], swapped[11] = swapped[11], swapped[10]
	ks := NewKernelStream()
	if err := ks.Write(swapped); err != nil {
		t.Fatal(err)
	}
	bad, err := ks.Close()
	if err != nil {
		t.Fatal(err)
	}
	badBundle, err := evidence.AssembleStreamed(b.Run, bad.Digest(), b.SDK, evidence.InputOf(b.Health))
	if err != nil {
		t.Fatal(err)
	}
	err = WriteStreamed(filepath.Join(dir, "c"), badBundle, bad, nil)
	if err == nil || !strings.Contains(err.Error(), "does not follow") {
		t.Fatalf("a layer out of seq order: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("refused writes left %d files", len(ents))
	}
}

// A streamed layer that outgrows the entry limit refuses the rest, and
// Close reports it: never an archive Read would refuse.
func TestKernelStreamRefusesWhatReadWouldRefuse(t *testing.T) {
	saved := limits
	defer func() { limits = saved }()
	limits.entry = 16384
	k := evidencetest.Bundle(200, 0).Kernel
	ks := NewKernelStream()
	var err error
	for i := 0; i < len(k) && err == nil; i += 10 {
		err = ks.Write(k[i : i+10])
	}
	if err == nil || !strings.Contains(err.Error(), "layers/kernel.ndjson") {
		t.Fatalf("a layer past the entry limit: %v", err)
	}
	if again := ks.Write(k[:1]); again == nil {
		t.Fatal("a write after the refusal was taken")
	}
	if _, err := ks.Close(); err == nil {
		t.Fatal("Close of a refused layer gave a layer")
	}
}

// A stream's compression workers end with it: aborted or closed, a
// spilling stream leaves no goroutine behind.
func TestSpillingStreamLeavesNoWorkers(t *testing.T) {
	dir := t.TempDir()
	before := runtime.NumGoroutine()
	for i := range 6 {
		ks, err := NewKernelStreamSpilling(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := ks.Write(evidencetest.Kernel(50, 0)); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			ks.Abort()
			continue
		}
		layer, err := ks.Close()
		if err != nil {
			t.Fatal(err)
		}
		layer.Release()
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after 6 streams, %d before", n, before)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("%s holds %d names", dir, len(ents))
	}
}

// Renames and endpoints spill as paths do: a layer with thousands of
// distinct ones (names with NUL, 0xff and non-UTF-8 bytes among them),
// spilled a few dozen at a time, makes the in-memory archive byte for
// byte, and vigil verify's way of reading it derives the same surface.
func TestRenamesAndEndpointsSpilledInArchive(t *testing.T) {
	var extra []wire.Kernel
	odd := []string{"", "\x00", "\xff", "a\x00\xffb", "é", "\xc3"}
	for i := range 3000 {
		from := wire.Bytes(fmt.Sprintf("/tmp/x%s-%d", odd[i%len(odd)], i%1700))
		to := wire.Bytes(fmt.Sprintf("/data/y-%d%s", i%900, odd[(i/7)%len(odd)]))
		extra = append(extra, wire.Kernel{Kind: wire.KindRename, FileOp: &wire.FileOp{Syscall: "rename",
			Name: &wire.Name{Requested: from}, NewName: &wire.Name{Requested: to}}})
		kind, syscall := wire.KindSend, "sendto"
		if i%3 == 1 {
			kind, syscall = wire.KindConnect, "connect"
		}
		if i%3 == 2 {
			kind, syscall = wire.KindBind, "bind"
		}
		family := []string{"inet", "inet6", "unix"}[i%3]
		extra = append(extra, wire.Kernel{Kind: kind, Net: &wire.Net{Fd: 3, Family: family,
			Addr: wire.Bytes(fmt.Sprintf("10.%d.%d%s", i%251, i%17, odd[i%len(odd)])), Port: uint16(i * 37),
			AddrFrom: "caller", SockType: "dgram", Syscall: syscall}})
	}
	b := evidencetest.WithExtra(200, 3, "", extra...)
	dir := t.TempDir()
	want := filepath.Join(dir, "memory.tar.gz")
	if err := Write(want, b); err != nil {
		t.Fatal(err)
	}
	ks, err := newKernelStreamSpilling(dir, evidence.SpillLimits{Paths: 40, Runs: 3})
	if err != nil {
		t.Fatal(err)
	}
	sb, layer := streamedWith(t, b, rand.New(rand.NewPCG(11, 12)), ks)
	if st := layer.Digest().Spilled(); st.PathRuns == 0 || st.Merges == 0 || st.Err != nil {
		t.Fatalf("spilled %+v, want runs and merges", st)
	}
	got := filepath.Join(dir, "streamed.tar.gz")
	if err := WriteStreamed(got, sb, layer, nil); err != nil {
		t.Fatal(err)
	}
	if err := layer.Release(); err != nil {
		t.Fatal(err)
	}
	sameArchive(t, got, want, "renames and endpoints spilled")
	held, err := Open(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(held.Bundle.Surface.FilesRenamed) < 1000 || len(held.Bundle.Surface.NetworkSent) < 500 || len(held.Bundle.Surface.NetworkLocal) < 500 {
		t.Fatalf("surface lists %d renames, %d sent, %d local", len(held.Bundle.Surface.FilesRenamed), len(held.Bundle.Surface.NetworkSent), len(held.Bundle.Surface.NetworkLocal))
	}
	folded, err := OpenDigest(got)
	if err != nil {
		t.Fatal(err)
	}
	defer folded.Close()
	if folded.Bundle.Surface.FilesRenamed != nil || folded.Bundle.Surface.Network != nil {
		t.Fatal("OpenDigest's surface holds its renames and endpoints")
	}
	if !reflect.DeepEqual(surfaceWithPaths(t, folded.Bundle), held.Bundle.Surface) {
		t.Fatal("OpenDigest's surface differs from Open's")
	}
}
