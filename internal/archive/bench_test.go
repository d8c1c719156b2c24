package archive

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/spill"
)

// Per-stage benchmarks of the evidence pipeline after the ring reader.
// Each reports ns/event and events/s (wall time) and cpu-ns/event (CPU
// time of the whole process: with other work on the machine, wall time
// includes time the benchmark was not running; CPU time does not). Run
// them on one core, where the per-event cost is the cost:
//
//	go test -run '^$' -bench 'Stage' -cpu 1 -count 6 ./internal/archive/

// benchEvents is the kernel layer size of the stage benchmarks.
const benchEvents = 20000

// perEvent reports the per-event metrics of a benchmark that handled
// events events per iteration; cpu0 is processCPU at the start.
func perEvent(b *testing.B, events int, cpu0 int64) {
	n := float64(b.N) * float64(events)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
	b.ReportMetric(n/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(processCPU(b)-cpu0)/n, "cpu-ns/event")
}

// BenchmarkStageKernelLine is the kernel.ndjson encoder alone, into a
// reused buffer.
func BenchmarkStageKernelLine(b *testing.B) {
	k := evidencetest.Bundle(benchEvents, 50).Kernel
	var buf []byte
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		buf = buf[:0]
		for i := range k {
			buf = appendKernel(buf, &k[i])
		}
	}
	perEvent(b, len(k), cpu0)
	b.ReportMetric(float64(len(buf))/float64(len(k)), "line-bytes/event")
}

// BenchmarkStageCompress is the deflate of the kernel layer as the archive
// cuts it into segments (on one core, one segment after the other).
func BenchmarkStageCompress(b *testing.B) {
	k := evidencetest.Bundle(benchEvents, 50).Kernel
	data := appendKernels(nil, k)
	segs := cut([][]byte{data}, SegmentBytes)
	var out int
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		parts, err := deflateAll(segs, false)()
		if err != nil {
			b.Fatal(err)
		}
		out = 0
		for _, p := range parts {
			out += len(p)
		}
	}
	perEvent(b, len(k), cpu0)
	b.ReportMetric(float64(out)/float64(len(k)), "gz-bytes/event")
}

// BenchmarkStageEncode encodes a whole bundle (with 50 tool calls, so the
// SDK layer and correlation report are included), evidence.Check beside.
func BenchmarkStageEncode(b *testing.B) {
	bundle := evidencetest.Bundle(benchEvents, 50)
	size := len(encode(b, bundle))
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		if err := Encode(io.Discard, bundle); err != nil {
			b.Fatal(err)
		}
	}
	perEvent(b, benchEvents, cpu0)
	b.ReportMetric(float64(size), "archive-bytes")
	b.ReportMetric(float64(size)/benchEvents, "archive-bytes/event")
}

// BenchmarkStageWrite is Write: Encode into a file, synced and renamed
// into place.
func BenchmarkStageWrite(b *testing.B) {
	bundle := evidencetest.Bundle(benchEvents, 50)
	path := filepath.Join(b.TempDir(), "run.tar.gz")
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		if err := Write(path, bundle); err != nil {
			b.Fatal(err)
		}
	}
	perEvent(b, benchEvents, cpu0)
	if _, err := os.Stat(path); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStageVerify is full verification and decoding of the same
// archive, what vigil verify does.
func BenchmarkStageVerify(b *testing.B) {
	data := encode(b, evidencetest.Bundle(benchEvents, 50))
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		if _, err := Decode(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	perEvent(b, benchEvents, cpu0)
}

// BenchmarkStageStream is a recording's way to the same archive: each
// block of 1024 events folded, encoded, hashed and compressed as it
// arrives (KernelStream.Write, on the sink's goroutine while the command
// runs), then the archive assembled around the compressed layer.
func BenchmarkStageStream(b *testing.B) {
	bundle := evidencetest.Bundle(benchEvents, 50)
	k, in := bundle.Kernel, evidence.InputOf(bundle.Health)
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		ks := NewKernelStream()
		for i := 0; i < len(k); i += 1024 {
			if err := ks.Write(k[i:min(i+1024, len(k))]); err != nil {
				b.Fatal(err)
			}
		}
		layer, err := ks.Close()
		if err != nil {
			b.Fatal(err)
		}
		sb, err := evidence.AssembleStreamed(bundle.Run, layer.Digest(), bundle.SDK, in)
		if err != nil {
			b.Fatal(err)
		}
		if err := encodeTo(io.Discard, sb, layer, nil); err != nil {
			b.Fatal(err)
		}
	}
	perEvent(b, benchEvents, cpu0)
}

// BenchmarkStageVerifyFolding is verification as vigil verify makes it
// (OpenDigest): every check of StageVerify, the kernel layer folded
// batch by batch instead of held.
func BenchmarkStageVerifyFolding(b *testing.B) {
	data := encode(b, evidencetest.Bundle(benchEvents, 50))
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		scratch, err := spill.Create(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := decode(bytes.NewReader(data), &folding{scratch: scratch}); err != nil {
			b.Fatal(err)
		}
		scratch.Close()
	}
	perEvent(b, benchEvents, cpu0)
}

// BenchmarkCheck20k is the cross-document consistency check alone, which
// Encode runs beside the encoding.
func BenchmarkCheck20k(b *testing.B) {
	bundle := evidencetest.Bundle(20000, 50)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := evidence.Check(bundle); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStageVerifyKernel is verification of the kernel layer alone:
// reading kernel.ndjson piece by piece, hashing, schema-checking (proven
// canonical lines take the shortcut) and decoding every line. The rest of
// StageVerify grows with the other documents (the capability surface
// grows with distinct paths, not with events).
func BenchmarkStageVerifyKernel(b *testing.B) {
	k := evidencetest.Bundle(benchEvents, 50).Kernel
	data := appendKernels(nil, k)
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		f, err := readEntry(bytes.NewReader(data), evidence.EntryKernel, int64(len(data)), nil, false)
		if err != nil {
			b.Fatal(err)
		}
		if len(f.kernel) != len(k) {
			b.Fatalf("%d of %d lines proven", len(f.kernel), len(k))
		}
	}
	perEvent(b, len(k), cpu0)
}
