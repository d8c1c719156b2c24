package archive

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"vigil/internal/attest"
	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

// streamed writes b's kernel layer through a KernelStream in blocks of
// random size, each block overwritten once written (as a recording reuses
// its decode buffers), and returns the streamed bundle and its layer.
func streamed(t *testing.T, b *evidence.Bundle, r *rand.Rand) (*evidence.Bundle, *KernelLayer) {
	t.Helper()
	ks := NewKernelStream()
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
	return evidence.AssembleStreamed(b.Run, layer.Digest(), b.SDK, evidence.InputOf(b.Health)), layer
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
			sb, layer := streamed(t, b, r)
			if layer.Size() == 0 != (n == 0) {
				t.Fatalf("%d events make a layer of %d bytes", n, layer.Size())
			}
			got := filepath.Join(dir, "streamed.tar.gz")
			if err := WriteStreamed(got, sb, layer, k); err != nil {
				t.Fatal(err)
			}
			g, _ := os.ReadFile(got)
			w, _ := os.ReadFile(want)
			if !bytes.Equal(g, w) {
				t.Fatalf("%d events, signed %v: streamed archive %d bytes, in memory %d, first difference at %d", n, k != nil, len(g), len(w), firstDiffAt(g, w))
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
	badBundle := evidence.AssembleStreamed(b.Run, bad.Digest(), b.SDK, evidence.InputOf(b.Health))
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
