package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

// reordered builds the same bundle as evidencetest.Bundle(n, calls) from
// inputs presented in a different order: shuffled events, reversed probes
// and env names, maps filled in another order.
func reordered(n, calls int, seed uint64) *evidence.Bundle {
	const base = 1_000_000_000
	k := evidencetest.Kernel(n, base)
	r := rand.New(rand.NewPCG(seed, seed))
	r.Shuffle(len(k), func(i, j int) { k[i], k[j] = k[j], k[i] })
	in := evidencetest.CleanInput()
	sort.Slice(in.Probes, func(i, j int) bool { return in.Probes[i].Name > in.Probes[j].Name })
	emitted := evidence.CountKinds(k)
	in.Emitted = map[wire.Kind]uint64{}
	in.Drops = map[wire.Kind]uint64{}
	for i := len(wire.Kinds) - 1; i >= 0; i-- {
		in.Emitted[wire.Kinds[i]] = emitted[wire.Kinds[i]]
		in.Drops[wire.Kinds[i]] = 0
	}
	run := evidencetest.Run()
	phases := map[string]float64{}
	names := make([]string, 0, len(run.PhasesMS))
	for name := range run.PhasesMS {
		names = append(names, name)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	for _, name := range names {
		phases[name] = run.PhasesMS[name]
	}
	run.PhasesMS = phases
	for i, j := 0, len(run.EnvNames)-1; i < j; i, j = i+1, j-1 {
		run.EnvNames[i], run.EnvNames[j] = run.EnvNames[j], run.EnvNames[i]
	}
	var sdk []wire.SDK
	if calls > 0 {
		sdk = evidencetest.SDK(calls, n, base)
	}
	return evidence.Assemble(run, k, sdk, in)
}

func TestEncodeIsReproducible(t *testing.T) {
	for _, calls := range []int{0, 4} {
		a := encode(t, evidencetest.Bundle(500, calls))
		b := encode(t, evidencetest.Bundle(500, calls))
		if !bytes.Equal(a, b) {
			t.Fatalf("calls=%d: two encodings of the same bundle differ", calls)
		}
		for seed := uint64(1); seed <= 3; seed++ {
			if c := encode(t, reordered(500, calls, seed)); !bytes.Equal(a, c) {
				t.Fatalf("calls=%d seed=%d: differently ordered inputs gave different bytes", calls, seed)
			}
		}
		// Different content must give different bytes (the comparison
		// above could not fail otherwise).
		other := evidencetest.Bundle(501, calls)
		if bytes.Equal(a, encode(t, other)) {
			t.Fatal("different bundles encoded identically")
		}
	}
}

func TestWriteIsReproducibleAndAtomic(t *testing.T) {
	dir := t.TempDir()
	p1, p2 := filepath.Join(dir, "a.tar.gz"), filepath.Join(dir, "b.tar.gz")
	if err := Write(p1, evidencetest.Bundle(100, 2)); err != nil {
		t.Fatal(err)
	}
	if err := Write(p2, reordered(100, 2, 9)); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(p1)
	b, _ := os.ReadFile(p2)
	if !bytes.Equal(a, b) || len(a) == 0 {
		t.Fatal("Write gave different files for the same content")
	}
	if err := Verify(p1); err != nil {
		t.Fatal(err)
	}

	// A failed write leaves the previous file and no temporary behind.
	bad := evidencetest.Bundle(100, 2)
	bad.Health.Counts[wire.KindOpen]++
	err := Write(p1, bad)
	if err == nil || !strings.Contains(err.Error(), "observation-health.json: counts.open") {
		t.Fatalf("Write of an inconsistent bundle = %v", err)
	}
	if now, _ := os.ReadFile(p1); !bytes.Equal(now, a) {
		t.Fatal("failed Write changed the existing archive")
	}
	if err := Write(filepath.Join(dir, "new.tar.gz"), bad); err == nil {
		t.Fatal("inconsistent bundle written")
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 2 {
		var got []string
		for _, n := range names {
			got = append(got, n.Name())
		}
		t.Fatalf("directory holds %v, want only a.tar.gz and b.tar.gz", got)
	}
	if err := Write(filepath.Join(dir, "missing", "x.tar.gz"), evidencetest.Bundle(10, 0)); err == nil {
		t.Fatal("Write into a missing directory succeeded")
	}
}

func TestEncodeRefusesWhatReadWouldRefuse(t *testing.T) {
	saved := limits
	defer func() { limits = saved }()
	limits.entry = 16384 // over the capability surface, under the kernel layer
	var buf bytes.Buffer
	err := Encode(&buf, evidencetest.Bundle(200, 0))
	if err == nil || !strings.Contains(err.Error(), "layers/kernel.ndjson") || buf.Len() != 0 {
		t.Fatalf("oversized entry: err %v, %d bytes written", err, buf.Len())
	}
	limits = saved
	data := encode(t, evidencetest.Bundle(200, 0))
	var raw bytes.Buffer
	zr, _ := gzip.NewReader(bytes.NewReader(data))
	raw.ReadFrom(zr)
	// The writer's size estimate is exact for what it writes, so the
	// total limit binds at the same byte for both sides.
	limits.total = int64(raw.Len()) - 1
	if err := Encode(&buf, evidencetest.Bundle(200, 0)); err == nil || !strings.Contains(err.Error(), "uncompressed exceeds") {
		t.Fatalf("oversized archive: %v", err)
	}
	limits.total = int64(raw.Len())
	if _, err := Decode(bytes.NewReader(data)); err != nil {
		t.Fatalf("archive at exactly the total limit: %v", err)
	}
	if err := Encode(&buf, evidencetest.Bundle(200, 0)); err != nil {
		t.Fatalf("archive at exactly the total limit: %v", err)
	}
}

func TestLayout(t *testing.T) {
	data := encode(t, evidencetest.Bundle(100, 2))
	// gzip header: no FNAME/FCOMMENT/FEXTRA flags, MTIME 0.
	if data[0] != 0x1f || data[1] != 0x8b || data[3] != 0 || !bytes.Equal(data[4:8], []byte{0, 0, 0, 0}) {
		t.Fatalf("gzip header % x", data[:10])
	}
	zr, _ := gzip.NewReader(bytes.NewReader(data))
	if zr.Name != "" || zr.Comment != "" || !zr.ModTime.IsZero() {
		t.Fatalf("gzip header %+v", zr.Header)
	}
	entries := untar(t, data)
	var names []string
	for _, e := range entries {
		h := e.hdr
		names = append(names, h.Name)
		if h.Typeflag != tar.TypeReg || h.Mode != 0o644 || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" ||
			!h.ModTime.Equal(time.Unix(0, 0)) || h.Format != tar.FormatUSTAR {
			t.Errorf("%s: header %+v", h.Name, h)
		}
	}
	want := []string{"manifest.json", "capability-surface.json", "correlation-report.json", "layers/kernel.ndjson", "layers/sdk.ndjson", "observation-health.json", "run.json"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("entries %v, want %v", names, want)
	}
	noSDK := untar(t, encode(t, evidencetest.Bundle(100, 0)))
	for _, e := range noSDK {
		if e.hdr.Name == evidence.EntrySDK || e.hdr.Name == evidence.EntryCorrelation {
			t.Fatalf("%s written without an SDK layer", e.hdr.Name)
		}
	}
}

func TestEveryEntryValidates(t *testing.T) {
	bundles := map[string]*evidence.Bundle{
		"with sdk": evidencetest.Bundle(200, 5),
		"no sdk":   evidencetest.Bundle(200, 0),
	}
	in := evidencetest.CleanInput()
	in.CaptureAvailable, in.AbsentReason = false, "no BPF"
	bundles["absent kernel"] = evidence.Assemble(evidencetest.Run(), nil, nil, in)
	in = evidencetest.CleanInput()
	in.Drops = map[wire.Kind]uint64{wire.KindOpen: 2}
	in.SDKProblems = []string{"line 9: seq 3, want 2"}
	in.StragglersKilled = 1
	bundles["partial, invalid sdk"] = evidence.Assemble(evidencetest.Run(), evidencetest.Kernel(30, 5), evidencetest.SDK(2, 30, 5), in)

	for name, b := range bundles {
		t.Run(name, func(t *testing.T) {
			for _, e := range untar(t, encode(t, b)) {
				sch := evidence.EntrySchemas[e.hdr.Name]
				var err error
				if strings.HasSuffix(e.hdr.Name, ".ndjson") {
					err = wire.ValidateNDJSON(sch, e.data)
				} else {
					err = wire.Validate(sch, e.data)
				}
				if err != nil {
					t.Errorf("%s: %v", e.hdr.Name, err)
				}
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	in := evidencetest.CleanInput()
	in.CaptureAvailable, in.AbsentReason = false, "no BPF"
	cases := map[string]*evidence.Bundle{
		"with sdk":      evidencetest.Bundle(300, 7),
		"no sdk":        evidencetest.Bundle(300, 0),
		"absent kernel": evidence.Assemble(evidencetest.Run(), nil, nil, in),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			data := encode(t, b)
			got, err := Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			wantJSON, _ := json.Marshal(b)
			gotJSON, _ := json.Marshal(got)
			if !bytes.Equal(wantJSON, gotJSON) {
				t.Fatalf("round trip changed the bundle:\n%s\n%s", wantJSON, gotJSON)
			}
			if !bytes.Equal(encode(t, got), data) {
				t.Fatal("re-encoding a decoded archive changed its bytes")
			}
		})
	}
}
