package archive

import (
	"archive/tar"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// A crafted archive is small on disk and huge, or endless in lines, once
// inflated. Each is refused for its first defect, having inflated no more
// than the manifest and two pieces of one entry: the reader never trusts a
// size it has not compared, and checks lines as they arrive.

// craftedEntry is one tar entry of a crafted archive: size bytes read
// from body.
type craftedEntry struct {
	name string
	size int64
	body io.Reader
}

// repeat is an endless reader of copies of p.
type repeat struct {
	p   []byte
	off int
}

func (r *repeat) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		c := copy(b[n:], r.p[r.off:])
		n += c
		r.off = (r.off + c) % len(r.p)
	}
	return n, nil
}

// writeCrafted writes entries as a gzip'd tar at the best compression, as
// a bomb would be.
func writeCrafted(t testing.TB, w io.Writer, entries []craftedEntry) {
	t.Helper()
	gz, _ := gzip.NewWriterLevel(w, flate.BestCompression)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: entryMode, Size: e.size, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.size > maxCraftedWrite {
			// The reader must refuse it before its data: end the
			// stream here, truncated.
			gz.Close()
			return
		}
		if _, err := io.CopyN(tw, e.body, e.size); err == io.EOF {
			// A body shorter than its size: the stream ends here,
			// truncated.
			tw.Flush()
			gz.Close()
			return
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
}

// maxCraftedWrite is the largest entry writeCrafted writes out.
const maxCraftedWrite = 4 << 30

// craftedCase builds one crafted archive from the entries of a good one,
// with bomb as the size of its large part.
type craftedCase struct {
	name  string
	entry string   // the entry the error must name
	want  []string // in the error
	build func(t testing.TB, good []rawEntry, bomb int64) []craftedEntry
}

// asIs is good's entries unchanged, with entry name swapped for e.
func asIs(good []rawEntry, swap ...craftedEntry) []craftedEntry {
	var out []craftedEntry
	for _, g := range good {
		e := craftedEntry{g.hdr.Name, int64(len(g.data)), bytes.NewReader(g.data)}
		for _, s := range swap {
			if s.name == g.hdr.Name {
				e = s
			}
		}
		out = append(out, e)
	}
	return out
}

// declaring is good's manifest rewritten to declare entry at size bytes
// (with a sha256 nobody will get to compare).
func declaring(t testing.TB, good []rawEntry, entry string, size int64) craftedEntry {
	return declaringSum(t, good, entry, size, sha256.Sum256([]byte("never compared")))
}

// declaringData is declaring with data's true size and sha256.
func declaringData(t testing.TB, good []rawEntry, entry string, data []byte) craftedEntry {
	return declaringSum(t, good, entry, int64(len(data)), sha256.Sum256(data))
}

func declaringSum(t testing.TB, good []rawEntry, entry string, size int64, sum [sha256.Size]byte) craftedEntry {
	t.Helper()
	var m Manifest
	if err := json.Unmarshal(good[0].data, &m); err != nil {
		t.Fatal(err)
	}
	for i := range m.Entries {
		if m.Entries[i].Path == entry {
			m.Entries[i].Bytes, m.Entries[i].SHA256 = size, hex.EncodeToString(sum[:])
		}
	}
	data, err := marshalDoc(&m)
	if err != nil {
		t.Fatal(err)
	}
	return craftedEntry{evidence.EntryManifest, int64(len(data)), bytes.NewReader(data)}
}

func firstLine(t testing.TB, good []rawEntry, entry string) []byte {
	data := good[entryIndex(t, good, entry)].data
	return data[:bytes.IndexByte(data, '\n')+1]
}

var craftedCases = []craftedCase{
	{"bomb behind a tar header that disagrees with the manifest", evidence.EntryKernel, []string{"tar header says", "manifest.json says"},
		func(t testing.TB, g []rawEntry, bomb int64) []craftedEntry {
			return asIs(g, craftedEntry{evidence.EntryKernel, bomb, &repeat{p: []byte{0}}})
		}},
	{"bomb of zeros declared by a rewritten manifest", evidence.EntryKernel, []string{"line 1: longer than 1048576 bytes"},
		func(t testing.TB, g []rawEntry, bomb int64) []craftedEntry {
			return asIs(g, declaring(t, g, evidence.EntryKernel, bomb), craftedEntry{evidence.EntryKernel, bomb, &repeat{p: []byte{0}}})
		}},
	{"bomb of newlines", evidence.EntryKernel, []string{"line 1: empty line"},
		func(t testing.TB, g []rawEntry, bomb int64) []craftedEntry {
			return asIs(g, declaring(t, g, evidence.EntryKernel, bomb), craftedEntry{evidence.EntryKernel, bomb, &repeat{p: []byte{'\n'}}})
		}},
	{"millions of tiny lines", evidence.EntryKernel, []string{"line 1:", "missing propert"},
		func(t testing.TB, g []rawEntry, bomb int64) []craftedEntry {
			return asIs(g, declaring(t, g, evidence.EntryKernel, bomb), craftedEntry{evidence.EntryKernel, bomb, &repeat{p: []byte("{}\n")}})
		}},
	{"millions of copies of one valid line", evidence.EntryKernel, []string{"line 2: seq", "does not follow seq"},
		func(t testing.TB, g []rawEntry, bomb int64) []craftedEntry {
			return asIs(g, declaring(t, g, evidence.EntryKernel, bomb), craftedEntry{evidence.EntryKernel, bomb, &repeat{p: firstLine(t, g, evidence.EntryKernel)}})
		}},
	{"millions of copies of one valid SDK line", evidence.EntrySDK, []string{"line 1"},
		func(t testing.TB, g []rawEntry, bomb int64) []craftedEntry {
			// A valid SDK line alone proves nothing wrong; copies of it
			// are refused as the health counts disagree, after reading:
			// here the line is made invalid to show it is found early.
			line := bytes.Replace(firstLine(t, g, evidence.EntrySDK), []byte(`"`), []byte(`'`), 1)
			return asIs(g, declaring(t, g, evidence.EntrySDK, bomb), craftedEntry{evidence.EntrySDK, bomb, &repeat{p: line}})
		}},
	{"document declared at 512 MiB, one byte sent", evidence.EntrySurface, []string{"truncated"},
		func(t testing.TB, g []rawEntry, bomb int64) []craftedEntry {
			return asIs(g, declaring(t, g, evidence.EntrySurface, 512<<20), craftedEntry{evidence.EntrySurface, 512 << 20, strings.NewReader("{")})
		}},
	{"kernel layer declared at 512 MiB, one piece of valid lines sent", evidence.EntryKernel, []string{"truncated"},
		func(t testing.TB, g []rawEntry, bomb int64) []craftedEntry {
			return asIs(g, declaring(t, g, evidence.EntryKernel, 512<<20), craftedEntry{evidence.EntryKernel, 512 << 20, bytes.NewReader(validLines(t, pieceBytes))})
		}},
	{"huge size declared in the manifest", evidence.EntryManifest, []string{"declares layers/kernel.ndjson at 1099511627776 bytes, over the limit"},
		func(t testing.TB, g []rawEntry, bomb int64) []craftedEntry {
			return asIs(g, declaring(t, g, evidence.EntryKernel, 1<<40), craftedEntry{evidence.EntryKernel, 1 << 40, &repeat{p: []byte{0}}})
		}},
	{"deeply nested document", evidence.EntryRun, []string{"schema run", "exceeded max depth"},
		func(t testing.TB, g []rawEntry, bomb int64) []craftedEntry {
			depth := int(min(bomb/2, 1<<19))
			doc := strings.Repeat("[", depth) + strings.Repeat("]", depth)
			return asIs(g, declaringData(t, g, evidence.EntryRun, []byte(doc)), craftedEntry{evidence.EntryRun, int64(len(doc)), strings.NewReader(doc)})
		}},
	{"deeply nested manifest", evidence.EntryManifest, []string{"schema manifest"},
		func(t testing.TB, g []rawEntry, bomb int64) []craftedEntry {
			doc := `{"schema":` + strings.Repeat("[", 400000) + strings.Repeat("]", 400000) + "}\n"
			return asIs(g, craftedEntry{evidence.EntryManifest, int64(len(doc)), strings.NewReader(doc)})
		}},
}

func TestCraftedArchivesRefusedEarly(t *testing.T) {
	good := untar(t, good(t))
	const bomb = 64 << 20
	budget := int64(len(good[0].data)) + 2*pieceBytes + MaxLineBytes + 64<<10
	allocBudget := uint64(reserveFactor*budget + reserveFactor*pieceBytes/minKernelLine*int64(unsafe.Sizeof(wire.Kernel{})))
	for _, mode := range []string{"", "/folding the kernel layer", "/folding into a scratch file"} {
		for _, c := range craftedCases {
			name := c.name + mode
			var fold *folding
			switch mode {
			case "/folding the kernel layer":
				fold = &folding{}
			case "/folding into a scratch file": // as OpenDigest reads
				fold = scratchFolding(t)
			}
			t.Run(name, func(t *testing.T) {
				var buf bytes.Buffer
				writeCrafted(t, &buf, c.build(t, good, bomb))
				var inflated int64
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				m, files, err := readTarGzCounted(bytes.NewReader(buf.Bytes()), &inflated, fold)
				if err == nil {
					_, err = decodeFiles(m, files)
				}
				runtime.ReadMemStats(&after)
				var ee *evidence.EntryError
				if !errors.As(err, &ee) || ee.Entry != c.entry || strings.Contains(err.Error(), "\n") {
					t.Fatalf("%d-byte archive: error %v, want one line naming %s", buf.Len(), err, c.entry)
				}
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if inflated > budget {
					t.Errorf("inflated %d bytes before refusing (budget %d): %v", inflated, budget, err)
				}
				// What reading reserved, lies included: at most reserveFactor
				// times what was inflated, plus the events of one piece.
				if allocated := after.TotalAlloc - before.TotalAlloc; allocated > allocBudget {
					t.Errorf("allocated %d bytes before refusing (budget %d): %v", allocated, allocBudget, err)
				}
				t.Logf("%d-byte archive refused after inflating %d bytes: %v", buf.Len(), inflated, err)
			})
		}
	}
}

// BenchmarkVerifyCrafted is what refusing each crafted archive costs,
// with 1 GiB as the bomb size: time and allocated bytes per refusal.
func BenchmarkVerifyCrafted(b *testing.B) {
	good := untar(b, good(b))
	for _, c := range craftedCases {
		var buf bytes.Buffer
		writeCrafted(b, &buf, c.build(b, good, 1<<30))
		b.Run(strings.ReplaceAll(c.name, " ", "_"), func(b *testing.B) {
			b.ReportAllocs()
			var inflated int64
			for b.Loop() {
				m, files, err := readTarGzCounted(bytes.NewReader(buf.Bytes()), &inflated, nil)
				if err == nil {
					_, err = decodeFiles(m, files)
				}
				if err == nil {
					b.Fatal("accepted")
				}
			}
			b.ReportMetric(float64(buf.Len()), "archive-bytes")
			b.ReportMetric(float64(inflated), "inflated-bytes")
		})
	}
}

// validLines is at least n bytes of valid kernel lines with increasing seq.
func validLines(t testing.TB, n int) []byte {
	var out []byte
	for i := 0; len(out) < n; i++ {
		e := wire.Kernel{Seq: uint64(i), Kind: wire.KindExit, Hook: "tp_btf/sched_process_exit", Exit: &wire.Exit{GroupDead: true}}
		out = appendKernel(out, &e)
	}
	return out
}
