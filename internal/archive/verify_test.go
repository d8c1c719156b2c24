package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

func good(t testing.TB) []byte { return encode(t, evidencetest.Bundle(120, 3)) }

func TestVerifyGood(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run.tar.gz")
	if err := os.WriteFile(p, good(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Verify(p); err != nil {
		t.Fatal(err)
	}
	if err := Verify(p + ".missing"); err == nil || !strings.Contains(err.Error(), "run.tar.gz.missing") {
		t.Fatalf("Verify of a missing file = %v", err)
	}
	// OpenDigest gives the documents Open gives, and the events' digest
	// for the events.
	held, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	folded, err := OpenDigest(p)
	if err != nil {
		t.Fatal(err)
	}
	h, f := held.Bundle, folded.Bundle
	if len(f.Kernel) != 0 || f.Events() != 120 || h.Events() != 120 || folded.Size != held.Size {
		t.Fatalf("OpenDigest holds %d events, counts %d (Open %d), size %d (Open %d)", len(f.Kernel), f.Events(), h.Events(), folded.Size, held.Size)
	}
	// The surface's path lists are not held: the digest gives them.
	if f.SurfacePathSource() == nil || f.Surface.FilesRead != nil {
		t.Fatalf("OpenDigest's surface holds %d paths read, SurfacePathSource %v", len(f.Surface.FilesRead), f.SurfacePathSource())
	}
	if !reflect.DeepEqual([]any{h.Run, h.SDK, h.Surface, h.Correlation, h.Health}, []any{f.Run, f.SDK, surfaceWithPaths(t, f), f.Correlation, f.Health}) {
		t.Fatal("OpenDigest's documents differ from Open's")
	}
	if d := evidence.DigestOf(h.Kernel); !reflect.DeepEqual(d.SessionTasks(), f.Streamed.SessionTasks()) || d.SeqGaps() != f.Streamed.SeqGaps() {
		t.Fatal("OpenDigest's digest differs from the digest of Open's events")
	}
	if err := folded.Close(); err != nil {
		t.Fatal(err)
	}
	// Without SDK events there is no correlation report, and the fold
	// keeps no time index; the archive verifies all the same.
	plain := filepath.Join(t.TempDir(), "plain.tar.gz")
	if err := os.WriteFile(plain, encode(t, evidencetest.Bundle(300, 0)), 0o644); err != nil {
		t.Fatal(err)
	}
	if a, err := OpenDigest(plain); err != nil || a.Bundle.Correlation != nil || a.Bundle.Events() != 300 {
		t.Fatalf("OpenDigest of an archive without correlation: %v", err)
	}
}

// Every byte of every entry matters: flip one (first, middle, last) inside
// the entry's content, re-pack, and Verify must name that entry.
func TestVerifyFlippedByteInEveryEntry(t *testing.T) {
	orig := untar(t, good(t))
	for i, e := range orig {
		for _, at := range []int{0, len(e.data) / 2, len(e.data) - 1} {
			entries := untar(t, good(t))
			entries[i].data[at] ^= 0x01
			_, err := Decode(bytes.NewReader(retar(t, entries)))
			// A flip inside manifest.json may hit a recorded hash; the
			// error then names both the entry whose hash no longer matches
			// and manifest.json, since either could be the one altered.
			if err == nil || !strings.Contains(err.Error(), e.hdr.Name) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%s with byte %d flipped: Verify = %v", e.hdr.Name, at, err)
			}
		}
	}
}

func TestVerifyMissingEntry(t *testing.T) {
	for i, e := range untar(t, good(t)) {
		entries := untar(t, good(t))
		entries = append(entries[:i], entries[i+1:]...)
		if i == 0 {
			// Without the manifest the first entry is something else.
			mustFail(t, retar(t, entries), entries[0].hdr.Name, "first entry must be manifest.json")
			continue
		}
		mustFail(t, retar(t, entries), e.hdr.Name, "listed in manifest.json but missing from the archive")

		// Dropping it from the manifest as well: required entries are
		// still required, and optional ones must go in pairs.
		remanifest(t, entries)
		switch e.hdr.Name {
		case evidence.EntrySDK:
			mustFail(t, retar(t, entries), evidence.EntryHealth, "sdk_layer.events is 7 but layers/sdk.ndjson has 0 lines")
		case evidence.EntryCorrelation:
			mustFail(t, retar(t, entries), evidence.EntrySDK, "present without correlation-report.json")
		default:
			mustFail(t, retar(t, entries), e.hdr.Name, "missing (required in every archive)")
		}
	}
	mustFail(t, retar(t, nil), evidence.EntryManifest, "the archive has no entries")
}

func TestVerifyRejectsEntries(t *testing.T) {
	reg := func(name string, data string) rawEntry {
		return rawEntry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR}, []byte(data)}
	}
	cases := []struct {
		name  string
		mod   func([]rawEntry) []rawEntry
		entry string
		want  string
	}{
		{"extra unknown entry", func(e []rawEntry) []rawEntry { return append(e, reg("zz-extra.txt", "hi")) }, "zz-extra.txt", "unexpected entry"},
		{"path escape", func(e []rawEntry) []rawEntry { return append(e, reg("../x", "hi")) }, "../x", "path escapes the archive"},
		{"nested escape", func(e []rawEntry) []rawEntry { return append(e, reg("layers/../../x", "hi")) }, "layers/../../x", "path escapes the archive"},
		{"absolute path", func(e []rawEntry) []rawEntry { return append(e, reg("/etc/passwd", "hi")) }, "/etc/passwd", "absolute path"},
		{"dot path", func(e []rawEntry) []rawEntry { return append(e, reg("./run.json", "{}")) }, "./run.json", "not clean"},
		{"symlink", func(e []rawEntry) []rawEntry {
			s := reg("zz-link", "")
			s.hdr.Typeflag, s.hdr.Linkname = tar.TypeSymlink, "/etc/passwd"
			return append(e, s)
		}, "zz-link", "not a regular file"},
		{"directory", func(e []rawEntry) []rawEntry {
			d := reg("layers/", "")
			d.hdr.Typeflag = tar.TypeDir
			return append(e[:1], append([]rawEntry{d}, e[1:]...)...)
		}, "layers/", "not a regular file"},
		{"duplicate", func(e []rawEntry) []rawEntry { return append(e, e[len(e)-1]) }, evidence.EntryRun, "duplicate entry"},
		{"manifest not first", func(e []rawEntry) []rawEntry { e[0], e[1] = e[1], e[0]; return e }, evidence.EntrySurface, "first entry must be manifest.json"},
		{"manifest twice", func(e []rawEntry) []rawEntry { return append(e, e[0]) }, evidence.EntryManifest, "duplicate entry"},
		{"out of order", func(e []rawEntry) []rawEntry { e[1], e[2] = e[2], e[1]; return e }, evidence.EntrySurface, "out of order (after correlation-report.json)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustFail(t, retar(t, c.mod(untar(t, good(t)))), c.entry, c.want)
		})
	}

	// An expected entry that the manifest does not list.
	noSDK := untar(t, encode(t, evidencetest.Bundle(50, 0)))
	sdk := untar(t, good(t))[entryIndex(t, untar(t, good(t)), evidence.EntrySDK)]
	withExtra := append(noSDK[:3], append([]rawEntry{sdk}, noSDK[3:]...)...)
	mustFail(t, retar(t, withExtra), evidence.EntrySDK, "not listed in manifest.json")
}

func TestVerifyOversized(t *testing.T) {
	saved := limits
	defer func() { limits = saved }()
	data := good(t)
	entries := untar(t, data)
	kernel := entries[entryIndex(t, entries, evidence.EntryKernel)]

	// The manifest's declared sizes are checked before any other entry is
	// read; a tar header beyond the limit is refused before its data.
	limits.entry = int64(len(kernel.data)) - 1
	mustFail(t, data, evidence.EntryManifest, "declares layers/kernel.ndjson at", "over the limit")
	limits = saved

	limits.manifest = int64(len(entries[0].data)) - 1
	mustFail(t, data, evidence.EntryManifest, "exceeds the limit")
	limits = saved

	limits.total = int64(len(kernel.data))
	mustFail(t, data, evidence.EntryManifest, "declares more than the limit")
	limits = saved

	// A header claiming more than the limit is refused before its data is
	// read (the data need not even be there).
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: evidence.EntryManifest, Mode: 0o644, Size: MaxManifestBytes + 1})
	tw.Flush()
	gz.Close()
	mustFail(t, buf.Bytes(), evidence.EntryManifest, "exceeds the limit of 1048576 bytes")
}

func TestVerifyTruncatedAndTrailing(t *testing.T) {
	data := good(t)
	for _, cut := range []int{0, 5, 10, 64, len(data) / 3, len(data) / 2, len(data) - 9, len(data) - 4, len(data) - 1} {
		_, err := Decode(bytes.NewReader(data[:cut]))
		if err == nil {
			t.Fatalf("archive cut at %d of %d accepted", cut, len(data))
		}
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line error %q", err)
		}
	}
	mustFail(t, data[:len(data)-4], "", "truncated gzip stream")
	mustFail(t, append(append([]byte{}, data...), 0), "", "trailing data after the gzip stream")
	mustFail(t, append(append([]byte{}, data...), data...), "", "trailing data after the gzip stream")
	mustFail(t, []byte("PK\x03\x04 not a gzip"), "", "not a gzip stream")

	// Bytes after the tar end marker inside the gzip stream.
	var raw bytes.Buffer
	zr, _ := gzip.NewReader(bytes.NewReader(data))
	raw.ReadFrom(zr)
	raw.WriteString("hidden payload")
	var re bytes.Buffer
	zw := gzip.NewWriter(&re)
	zw.Write(raw.Bytes())
	zw.Close()
	mustFail(t, re.Bytes(), "", "data after the tar end marker")

	// The gzip trailer is checked: its CRC-32 and its length, each on an
	// otherwise intact stream.
	for _, at := range []int{len(data) - 8, len(data) - 1} {
		bad := append([]byte{}, data...)
		bad[at] ^= 0x01
		mustFail(t, bad, "", "invalid checksum")
	}

	// A corrupted compressed byte fails the stream (or its checksum).
	bad := append([]byte{}, data...)
	bad[len(bad)/2] ^= 0xff
	if _, err := Decode(bytes.NewReader(bad)); err == nil {
		t.Fatal("corrupted gzip accepted")
	}
}

// Edits that keep every hash right (the manifest is recomputed), so that
// only schema, canonical-form and consistency checks can catch them.
func TestVerifyConsistencyWithHashesRecomputed(t *testing.T) {
	editJSON := func(entry string, f func(m map[string]any)) func([]rawEntry) {
		return func(e []rawEntry) {
			i := entryIndex(t, e, entry)
			var m map[string]any
			if err := json.Unmarshal(e[i].data, &m); err != nil {
				t.Fatal(err)
			}
			f(m)
			data, _ := marshalDoc(m)
			e[i].data = data
		}
	}
	editBundle := func(f func(b *evidence.Bundle)) func([]rawEntry) {
		return func(e []rawEntry) {
			b := evidencetest.Bundle(120, 3)
			f(b)
			files, err := marshalEntries(b)
			if err != nil {
				t.Fatal(err)
			}
			// The manifest keeps its run id and version; remanifest
			// refreshes its hashes.
			for _, fl := range files[1:] {
				e[entryIndex(t, e, fl.path)].data = fl.data
			}
		}
	}
	// asIOUring turns the fixture's sixth event (an open) into an
	// io_uring completion u, health's counts moved with it.
	asIOUring := func(u wire.IOUring) func([]rawEntry) {
		return editBundle(func(b *evidence.Bundle) {
			e := &b.Kernel[5]
			if e.Kind != wire.KindOpen {
				t.Fatal("the fixture's sixth event is not an open")
			}
			*e = wire.Kernel{Seq: e.Seq, TimeNS: e.TimeNS, Kind: wire.KindIOUring, PID: e.PID, TID: e.TID, Comm: e.Comm,
				CgroupID: e.CgroupID, Hook: "tp_btf/io_uring_complete", IOUring: &u}
			b.Health.Counts[wire.KindOpen]--
			b.Health.Counts[wire.KindIOUring]++
		})
	}
	cases := []struct {
		name  string
		mod   func([]rawEntry)
		entry string
		want  []string
	}{
		{"health claims complete while drops > 0", editBundle(func(b *evidence.Bundle) {
			b.Health.RingbufDrops.PerKind[wire.KindOpen] = 3
			b.Health.RingbufDrops.Total = 3
		}), evidence.EntryHealth, []string{`kernel_layer.status is "complete" but the recorded inputs imply "partial"`, "ring buffer dropped 3 events"}},
		{"health hides a read fault behind complete", editBundle(func(b *evidence.Bundle) { b.Health.Schema, b.Health.ReadFaults = wire.HealthSchemaV2, 1 }),
			evidence.EntryHealth, []string{`kernel_layer.status is "complete" but the recorded inputs imply "partial"`, "1 events have a part missing"}},
		{"health hides skipped probe runs behind complete", editBundle(func(b *evidence.Bundle) { b.Health.ProgramMisses = map[string]uint64{"sys_exit": 2} }),
			evidence.EntryHealth, []string{`kernel_layer.status is "complete"`, "skipped 2 probe runs (sys_exit: 2)"}},
		{"read fault reason dropped from a partial layer", editBundle(func(b *evidence.Bundle) {
			b.Health.Schema, b.Health.ReadFaults = wire.HealthSchemaV2, 3
			b.Health.Drain.Proven = false
			b.Health.KernelLayer = wire.KernelLayer{Status: wire.LayerPartial, CaptureAvailable: true,
				Reasons: []string{"ring buffer drain not proven empty: " + b.Health.Drain.Detail}}
		}), evidence.EntryHealth, []string{"kernel_layer.reasons", "3 events have a part missing"}},
		{"drop causes that do not add up", editBundle(func(b *evidence.Bundle) {
			b.Health.RingbufDrops.PerKind[wire.KindOpen] = 3
			b.Health.RingbufDrops.Total = 3
			zero := func() map[wire.Kind]uint64 {
				m := map[wire.Kind]uint64{}
				for _, k := range wire.Kinds {
					m[k] = 0
				}
				return m
			}
			c := &wire.DropCauses{RingFull: zero(), SlotsBusy: zero(), AfterClose: zero()}
			c.RingFull[wire.KindOpen] = 1
			b.Health.RingbufDrops.Causes = c
			b.Health.KernelLayer = wire.KernelLayer{Status: wire.LayerPartial, CaptureAvailable: true,
				Reasons: []string{"ring buffer dropped 3 events (open: 3); causes: ring buffer full 1, record slots busy 0, after the capture closed 0"}}
		}), evidence.EntryHealth, []string{"kernel_layer.reasons", "drop causes do not add up to the drops: open: 1 + 0 + 0 != 3"}},
		{"decode detail on two lines", editJSON(evidence.EntryHealth, func(m map[string]any) { m["decode_detail"] = "a\nb" }),
			evidence.EntryHealth, []string{"schema observation-health"}},
		{"health complete while drain unproven", editBundle(func(b *evidence.Bundle) { b.Health.Drain.Proven = false }),
			evidence.EntryHealth, []string{"kernel_layer.status", "drain not proven"}},
		{"clean correlation with stragglers", editBundle(func(b *evidence.Bundle) { b.Health.CgroupCorrelation.StragglersKilled = 2 }),
			evidence.EntryHealth, []string{`cgroup_correlation.status is "clean" but the recorded inputs imply "partial"`}},
		{"health hides a task that left the session", editBundle(func(b *evidence.Bundle) {
			escapeForkedTask(t, b)
			b.Health.Counts = evidence.CountKinds(b.Kernel)
		}), evidence.EntryHealth, []string{"cgroup_correlation.left_session_tasks is 0 but layers/kernel.ndjson derives 1"}},
		{"health records a left task but calls the correlation clean", editBundle(func(b *evidence.Bundle) {
			escapeForkedTask(t, b)
			in := evidence.InputOf(b.Health)
			in.Counts = evidence.CountKinds(b.Kernel)
			in.SessionTasks = evidence.BalanceSessionTasks(b.Kernel)
			lied := evidence.BuildHealth(b.Run.RunID, in)
			lied.CgroupCorrelation.Status = wire.CorrelationClean
			lied.CgroupCorrelation.Reasons = []string{}
			lied.KernelLayer = b.Health.KernelLayer
			b.Health = lied
		}), evidence.EntryHealth, []string{`cgroup_correlation.status is "clean" but the recorded inputs imply "partial"`, "1 task(s) of the run were not seen exiting: still alive when the capture closed"}},
		{"an event lacks a part that health does not count", editBundle(func(b *evidence.Bundle) {
			b.Kernel[5].Incomplete = []string{wire.IncompleteArgv}
		}), evidence.EntryHealth, []string{"read_faults is 0 but 1 layers/kernel.ndjson events lack a part"}},
		{"an old health document beside events that name parts", editBundle(func(b *evidence.Bundle) {
			b.Kernel[5].Incomplete = []string{wire.IncompleteArgv}
			b.Health.Schema = wire.HealthSchemaV2
		}), evidence.EntryHealth, []string{"schema is vigil.observation-health/v2, which predates events naming the parts they lack, but 1 layers/kernel.ndjson events name some"}},
		{"an event whose fields show a cut its incomplete does not name", editBundle(func(b *evidence.Bundle) {
			for i := range b.Kernel {
				if o := b.Kernel[i].Open; o != nil && o.File != nil {
					o.File.Truncated = true
					return
				}
			}
			t.Fatal("no successful open in the fixture")
		}), evidence.EntryKernel, []string{"its fields show path_truncated but incomplete does not name it"}},
		{"a resolved path made relative without saying it was cut", editBundle(func(b *evidence.Bundle) {
			for i := range b.Kernel {
				if o := b.Kernel[i].Open; o != nil && o.File != nil {
					o.File.Path = o.File.Path[1:]
					return
				}
			}
			t.Fatal("no successful open in the fixture")
		}), evidence.EntryKernel, []string{"is neither absolute, detached nor marked truncated"}},
		{"an exec with arguments dropped without saying so", editBundle(func(b *evidence.Bundle) {
			for i := range b.Kernel {
				if x := b.Kernel[i].Exec; x != nil {
					x.Argc = uint32(len(x.Argv)) + 3
					return
				}
			}
			t.Fatal("no exec in the fixture")
		}), evidence.EntryKernel, []string{"arguments of argc", "neither argv_truncated nor a failed read"}},
		{"a failed open that says whether it created its file", editBundle(func(b *evidence.Bundle) {
			for i := range b.Kernel {
				if o := b.Kernel[i].Open; o != nil && o.Ret < 0 {
					o.Created = wire.BoolRef(false)
					return
				}
			}
			t.Fatal("no failed open in the fixture")
		}), evidence.EntryKernel, []string{"a failed open says whether it created its file"}},
		{"an open without O_CREAT that says it created its file", editBundle(func(b *evidence.Bundle) {
			for i := range b.Kernel {
				if o := b.Kernel[i].Open; o != nil && o.File != nil && !o.Create {
					o.Created = wire.BoolRef(true)
					return
				}
			}
			t.Fatal("no open without O_CREAT in the fixture")
		}), evidence.EntryKernel, []string{"an open without O_CREAT or O_TMPFILE says it created its file"}},
		{"an io_uring completion without a file that says whether it created one",
			asIOUring(wire.IOUring{Opcode: 18, Op: "openat", Res: -2, Created: wire.BoolRef(false)}),
			evidence.EntryKernel, []string{"an io_uring completion without an opened file says whether it created one"}},
		{"an io_uring read that says whether it created a file",
			asIOUring(wire.IOUring{Opcode: 22, Op: "read", Res: 5, Created: wire.BoolRef(false)}),
			evidence.EntryKernel, []string{"an io_uring read says whether it created a file"}},
		{"an io_uring event whose op is not its opcode's name",
			asIOUring(wire.IOUring{Opcode: 36, Op: "nop", Res: 0}),
			evidence.EntryKernel, []string{`io_uring op "nop" is not the name of opcode 36 (unlinkat)`}},
		{"a direct io_uring open that names a file",
			asIOUring(wire.IOUring{Opcode: 18, Op: "openat", Res: 0, Direct: true, File: &wire.ResolvedPath{Path: "/dev/null"},
				Access: wire.AccessRead, Created: wire.BoolRef(false)}),
			evidence.EntryKernel, []string{"only a completed io_uring open without a resolved file can be direct"}},
		{"an io_uring unlinkat with an opened file",
			asIOUring(wire.IOUring{Opcode: 36, Op: "unlinkat", Res: 0, File: &wire.ResolvedPath{Path: "/etc/passwd"}, Access: wire.AccessRead}),
			evidence.EntryKernel, []string{"an io_uring unlinkat names an opened file"}},
		{"an io_uring read with a name",
			asIOUring(wire.IOUring{Opcode: 22, Op: "read", Res: 5, Name: &wire.Name{Requested: "/etc/passwd"}}),
			evidence.EntryKernel, []string{"io_uring read has names it cannot have"}},
		{"an io_uring unlinkat with a second name",
			asIOUring(wire.IOUring{Opcode: 36, Op: "unlinkat", Res: 0, Name: &wire.Name{Requested: "/w/a"}, NewName: &wire.Name{Requested: "/w/b"}}),
			evidence.EntryKernel, []string{"io_uring unlinkat has names it cannot have"}},
		{"an event names its parts out of order", editBundle(func(b *evidence.Bundle) {
			b.Kernel[5].Incomplete = []string{wire.IncompleteArgv, wire.IncompleteReadFailed}
			b.Health.ReadFaults, b.Health.IncompleteParts = 1, map[string]uint64{wire.IncompleteArgv: 1, wire.IncompleteReadFailed: 1}
		}), evidence.EntryKernel, []string{`incomplete names "read_failed" twice or out of order`}},
		{"health counts more read faults than events lack parts", editBundle(func(b *evidence.Bundle) {
			b.Kernel[5].Incomplete = []string{wire.IncompleteArgv}
			b.Health.ReadFaults, b.Health.IncompleteParts = 2, map[string]uint64{wire.IncompleteArgv: 2}
		}), evidence.EntryHealth, []string{"read_faults is 2 but 1 layers/kernel.ndjson events lack a part"}},
		{"health names another part than the event lacks", editBundle(func(b *evidence.Bundle) {
			b.Kernel[5].Incomplete = []string{wire.IncompletePath}
			b.Health.ReadFaults, b.Health.IncompleteParts = 1, map[string]uint64{wire.IncompleteArgv: 1}
		}), evidence.EntryHealth, []string{`incomplete_parts is {"argv_truncated":1} but layers/kernel.ndjson derives {"path_truncated":1}`}},
		{"an event lacks a part nobody knows", editBundle(func(b *evidence.Bundle) {
			b.Kernel[5].Incomplete = []string{"half_there"}
		}), evidence.EntryKernel, []string{"schema kernel-event", "/incomplete/0"}},
		{"an event names a part twice", editBundle(func(b *evidence.Bundle) {
			b.Kernel[5].Incomplete = []string{wire.IncompletePath, wire.IncompletePath}
			b.Health.ReadFaults, b.Health.IncompleteParts = 1, map[string]uint64{wire.IncompletePath: 2}
		}), evidence.EntryKernel, []string{"schema kernel-event", "/incomplete"}},
		{"counts disagree with kernel lines", editBundle(func(b *evidence.Bundle) {
			b.Health.Counts[wire.KindExec] = 2
		}), evidence.EntryHealth, []string{"counts.exec is 2 but layers/kernel.ndjson has 1 exec events"}},
		{"kernel line removed", func(e []rawEntry) {
			i := entryIndex(t, e, evidence.EntryKernel)
			lines := bytes.SplitAfter(e[i].data, []byte("\n"))
			e[i].data = bytes.Join(append(lines[:10:10], lines[11:]...), nil)
		}, evidence.EntryHealth, []string{"counts.open"}},
		{"run ids differ", editBundle(func(b *evidence.Bundle) { b.Run.RunID = "run-other" }),
			evidence.EntryManifest, []string{`run_id "run-0123456789abcdef" differs from run.json's "run-other"`}},
		{"run id differs in health only", editBundle(func(b *evidence.Bundle) { b.Health.RunID = "run-other" }),
			evidence.EntryHealth, []string{`run_id "run-other" differs`}},
		{"vigil version differs", editBundle(func(b *evidence.Bundle) { b.Run.VigilVersion = "9.9.9" }),
			evidence.EntryManifest, []string{"vigil_version"}},
		{"schema violation in a kernel line", func(e []rawEntry) {
			i := entryIndex(t, e, evidence.EntryKernel)
			e[i].data = bytes.Replace(e[i].data, []byte(`"kind":"exec"`), []byte(`"kind":"teleport"`), 1)
		}, evidence.EntryKernel, []string{"line 2:", "/kind"}},
		{"kind payload mismatch", func(e []rawEntry) {
			i := entryIndex(t, e, evidence.EntryKernel)
			e[i].data = bytes.Replace(e[i].data, []byte(`"kind":"exec"`), []byte(`"kind":"fork"`), 1)
		}, evidence.EntryKernel, []string{"line 2:"}},
		{"secret env value", editBundle(func(b *evidence.Bundle) { b.Run.EnvNames = []string{"TOKEN=abc"} }),
			evidence.EntryRun, []string{"env_names"}},
		{"fields reordered", editJSON(evidence.EntryRun, func(map[string]any) {}),
			evidence.EntryRun, []string{"not in canonical encoding"}},
		{"not canonical", func(e []rawEntry) {
			i := entryIndex(t, e, evidence.EntryHealth)
			var buf bytes.Buffer
			json.Compact(&buf, e[i].data)
			e[i].data = buf.Bytes()
		}, evidence.EntryHealth, []string{"not in canonical encoding"}},
		{"duplicate key", func(e []rawEntry) {
			i := entryIndex(t, e, evidence.EntryRun)
			e[i].data = bytes.Replace(e[i].data, []byte(`  "exit_code": 0,`), []byte(`  "exit_code": 0,
  "exit_code": 0,`), 1)
		}, evidence.EntryRun, []string{"not in canonical encoding"}},
		{"kernel line with a space after a colon", func(e []rawEntry) {
			i := entryIndex(t, e, evidence.EntryKernel)
			e[i].data = bytes.Replace(e[i].data, []byte(`"kind":"exec"`), []byte(`"kind": "exec"`), 1)
		}, evidence.EntryKernel, []string{"line 2: not in canonical encoding (differs from its canonical form at byte " + kernelByte(t, 1, `"kind":`) + ")"}},
		{"kernel line with its keys reordered", func(e []rawEntry) {
			i := entryIndex(t, e, evidence.EntryKernel)
			e[i].data = bytes.Replace(e[i].data, []byte(`{"seq":1,"ts_ns":`), []byte(`{"ts_ns":`), 1)
			e[i].data = bytes.Replace(e[i].data, []byte(`,"kind":"exec"`), []byte(`,"seq":1,"kind":"exec"`), 1)
		}, evidence.EntryKernel, []string{"line 2: not in canonical encoding (differs from its canonical form at byte " + kernelByte(t, 1, `{"`) + ")"}},
		{"kernel layer without its last newline", func(e []rawEntry) {
			i := entryIndex(t, e, evidence.EntryKernel)
			e[i].data = e[i].data[:len(e[i].data)-1]
		}, evidence.EntryKernel, []string{"not in canonical encoding (differs from its canonical form at byte " + strconv.Itoa(len(kernelText(t))-1) + ")"}},
		{"surface and run.json both broken: the surface, first in the archive, is named", func(e []rawEntry) {
			i := entryIndex(t, e, evidence.EntrySurface)
			e[i].data = bytes.Replace(e[i].data, []byte(`"schema": "vigil.capability-surface/v2"`), []byte(`"schema": 5`), 1)
			i = entryIndex(t, e, evidence.EntryRun)
			var buf bytes.Buffer
			json.Compact(&buf, e[i].data)
			e[i].data = buf.Bytes()
		}, evidence.EntrySurface, []string{"schema"}},
		{"surface edited", editBundle(func(b *evidence.Bundle) { b.Surface.Execs = []wire.Bytes{} }),
			evidence.EntrySurface, []string{"execs differs from what layers/kernel.ndjson derives"}},
		{"correlation edited", editBundle(func(b *evidence.Bundle) { b.Correlation.ToolCalls[1].ToolName = "rm_rf" }),
			evidence.EntryCorrelation, []string{"tool_calls differs"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			entries := untar(t, good(t))
			c.mod(entries)
			remanifest(t, entries)
			mustFail(t, retar(t, entries), c.entry, c.want...)
		})
	}
}

// escapeForkedTask removes the exit of the last process the fixture forks, as if
// it had left the session cgroup, and renumbers the later events so the
// kernel layer stays contiguous; the surface and correlation are derived
// again so that only the health document disagrees with the events.
func escapeForkedTask(t *testing.T, b *evidence.Bundle) {
	t.Helper()
	var child uint32
	for _, e := range b.Kernel {
		if e.Kind == wire.KindFork && !e.Fork.Thread {
			child = e.Fork.ChildTID
		}
	}
	out := b.Kernel[:0]
	for _, e := range b.Kernel {
		if e.Kind == wire.KindExit && e.TID == child {
			continue
		}
		e.Seq = uint64(len(out))
		out = append(out, e)
	}
	if child == 0 || len(out) != len(b.Kernel)-1 {
		t.Fatalf("fixture has no forked task that exits (child %d)", child)
	}
	b.Kernel = out
	b.Surface = evidence.BuildSurface(b.Kernel)
	b.Surface.RunID = b.Run.RunID
	b.Correlation = evidence.Correlate(b.Kernel, b.SDK)
	b.Correlation.RunID = b.Run.RunID
}

// kernelText is the good fixture's kernel layer.
func kernelText(t *testing.T) []byte {
	e := untar(t, good(t))
	return e[entryIndex(t, e, evidence.EntryKernel)].data
}

// kernelByte is the entry offset, as a string, of the byte just after
// the first after in line n (0-based) of the good kernel layer.
func kernelByte(t *testing.T, n int, after string) string {
	lines := bytes.SplitAfter(kernelText(t), []byte("\n"))
	off := 0
	for _, l := range lines[:n] {
		off += len(l)
	}
	off += bytes.Index(lines[n], []byte(after)) + len(after)
	return strconv.Itoa(off)
}

// TestKernelTextNotKept: reading keeps the kernel layer's events, not its
// text, so a large archive costs its events once rather than text and
// events (every other entry keeps its data for decoding).
func TestKernelTextNotKept(t *testing.T) {
	text := kernelText(t)
	f, err := readEntry(bytes.NewReader(text), evidence.EntryKernel, int64(len(text)), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if f.data != nil || f.size() != int64(len(text)) {
		t.Errorf("kept %d bytes, size %d; want none kept, size %d", len(f.data), f.size(), len(text))
	}
	if want := bytes.Count(text, []byte("\n")); len(f.kernel) != want {
		t.Fatalf("%d events decoded, want %d", len(f.kernel), want)
	}
	if again, _ := marshalKernel(f.kernel); !bytes.Equal(again, text) {
		t.Error("the events decoded on the way do not re-encode to the layer")
	}
}

// TestDerivedSurfaceIsSchemaValid: reading accepts a capability surface
// without validating it when it is byte for byte the canonical encoding
// of what the kernel layer derives, so every such encoding must be valid
// against the schema. Events here carry every payload, with strings that
// need escapes and bytes that are not UTF-8.
func TestDerivedSurfaceIsSchemaValid(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 20 {
		k := make([]wire.Kernel, 500)
		for i := range k {
			fill(r, reflect.ValueOf(&k[i]).Elem(), 0)
			plausible(r, &k[i])
			k[i].Seq = uint64(i)
		}
		s := evidence.BuildSurface(k)
		s.RunID = "run-0123456789abcdef"
		data, err := marshalDoc(&s)
		if err != nil {
			t.Fatal(err)
		}
		if err := wire.Validate(evidence.EntrySchemas[evidence.EntrySurface], data); err != nil {
			t.Fatalf("round %d: the derived surface breaks its schema: %v", round, err)
		}
	}
}

// TestMinKernelLine: minKernelLine is below the shortest valid kernel
// lines: the payloads with the fewest required fields (an exit: three
// scalars; a file operation: its syscall and result), every field at its
// shortest.
func TestMinKernelLine(t *testing.T) {
	for _, e := range []wire.Kernel{
		{Kind: wire.KindExit, Hook: "tp_btf/x", Exit: &wire.Exit{GroupDead: true}},
		{Kind: wire.KindLink, Hook: "tp_btf/x", FileOp: &wire.FileOp{Syscall: "x"}},
		{Kind: wire.KindSend, Hook: "tp_btf/x", Net: &wire.Net{Family: "unix", AddrFrom: "socket", Syscall: "x"}},
	} {
		line := appendKernel(nil, &e)
		if err := wire.Validate(evidence.EntrySchemas[evidence.EntryKernel], line[:len(line)-1]); err != nil {
			t.Fatalf("%s: the shortest line is not valid: %v", e.Kind, err)
		}
		if len(line) < minKernelLine {
			t.Fatalf("a valid line of %d bytes is shorter than minKernelLine (%d): %s", len(line), minKernelLine, line)
		}
	}
}

// A scratch file that refuses a write part way through the surface costs
// memory, not the verdict: what went out is read back, the rest kept,
// and the archive verifies with Open's documents.
func TestFoldingScratchRefused(t *testing.T) {
	b := evidencetest.Bundle(140_000, 3) // a surface of two pieces (7 MB)
	data := encode(t, b)
	held, err := Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []*failingScratch{
		{failAfter: 0}, {failAfter: 100}, {failAfter: pieceBytes + 100},
		// Only the surface's first piece refused: the text stays in
		// memory, the paths go out and are compared from there.
		{failAfter: -1, refuseFirst: true},
	} {
		what := fmt.Sprintf("refused after %d bytes, or the first write (%v)", st.failAfter, st.refuseFirst)
		got, err := decode(bytes.NewReader(data), &folding{scratch: st})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !st.failed || !reflect.DeepEqual(surfaceWithPaths(t, got), held.Surface) {
			t.Fatalf("%s (failed %v): the surface differs from Open's", what, st.failed)
		}
		if st.refuseFirst || (st.failAfter < 0) != (got.Streamed.Spilled().PathRuns > 0) || got.SurfacePathSource() == nil {
			t.Fatalf("%s: %d path runs out, path source %v", what, got.Streamed.Spilled().PathRuns, got.SurfacePathSource())
		}
	}
}

// A scratch file that takes the paths but cannot give them back fails
// verification with its own error, not a panic, and not as a defect of
// the archive (an EntryError would say the archive is bad).
func TestFoldingScratchUnreadable(t *testing.T) {
	data := encode(t, evidencetest.Bundle(140_000, 3)) // 70,000 paths: some go out
	st := &failingScratch{failAfter: -1, refuseFirst: true, readErr: errors.New("disk gone")}
	_, err := decode(bytes.NewReader(data), &folding{scratch: st})
	var ee *evidence.EntryError
	if err == nil || !strings.Contains(err.Error(), "disk gone") || errors.As(err, &ee) {
		t.Fatalf("decode with an unreadable scratch file = %v (%T)", err, err)
	}
}

// failingScratch is a Scratch in memory that refuses every write once it
// holds failAfter bytes (never, below 0), or only the first write with
// refuseFirst; with readErr every read of it fails.
type failingScratch struct {
	b           []byte
	failAfter   int
	failed      bool
	refuseFirst bool
	readErr     error
}

func (m *failingScratch) Write(p []byte) (int, error) {
	if m.refuseFirst {
		m.refuseFirst, m.failed = false, true
		return 0, errors.New("scratch full")
	}
	if m.failAfter >= 0 && len(m.b)+len(p) > m.failAfter {
		n := max(0, m.failAfter-len(m.b))
		m.b = append(m.b, p[:n]...)
		m.failed = true
		return n, errors.New("scratch full")
	}
	m.b = append(m.b, p...)
	return len(p), nil
}

func (m *failingScratch) Size() int64 { return int64(len(m.b)) }

func (m *failingScratch) Section(off, n int64) io.Reader {
	if m.readErr != nil {
		return iotest.ErrReader(m.readErr)
	}
	return bytes.NewReader(m.b[off : off+n])
}
