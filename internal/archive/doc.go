// Package archive turns an evidence.Bundle into a byte-reproducible
// gzip'd tar and back, and verifies archives.
//
// Layout: manifest.json first (schema id, run id, vigil version, and path,
// sha256 and size of every other entry), then the other entries in byte
// order of their paths. Every tar header is a regular file with mode 0644,
// uid/gid 0, no user/group names and mtime 0 (1970-01-01); the gzip header
// has no name, no comment and mtime 0, and the compression level is fixed.
// The deflate stream is cut into independently compressed segments at
// fixed points (SegmentBytes, restarting where the kernel layer's text
// begins and ends), so it compresses in parallel, the kernel layer can be
// compressed while a recording runs, and it is still the same bytes on
// every machine.
// JSON documents are indented with two spaces and end in a newline; NDJSON
// lines are compact. Struct fields encode in declaration order and maps in
// key order, so the same bundle always gives the same bytes.
//
// Reading trusts nothing: the archive is refused unless every entry is a
// regular file with an expected, clean path, appears once, is within the
// size limits, hashes to its manifest entry, validates against its schema,
// is in canonical encoding, and agrees with the others (evidence.Check).
// It streams: manifest.json is checked before anything else is inflated,
// and every later entry is compared with it before its data is read and
// validated piece by piece as it arrives (see readTarGz), so a crafted
// archive costs what its first bad piece costs.
//
// The kernel layer, by far the largest entry, is never held whole as
// text: writing encodes it a block of events at a time into segments that
// compress as they fill (KernelStream, which a recording feeds as the
// events arrive), and reading decodes each line into its event as it
// arrives. A recording holds not even the compressed layer, nor the paths
// its surface lists: NewKernelStreamSpilling puts both in anonymous
// scratch files (package spill), and the surface is written from them.
package archive

// Limits applied when reading. An archive beyond them is rejected, not
// clipped. MaxEntryBytes bounds one uncompressed entry (about 3 million
// kernel events of typical size), MaxTotalBytes the whole uncompressed tar,
// MaxManifestBytes the manifest.
const (
	MaxEntryBytes    = 1 << 30
	MaxTotalBytes    = 2 << 30
	MaxManifestBytes = 1 << 20
)

// limits are the limits in force; tests lower them.
var limits = struct{ entry, total, manifest int64 }{MaxEntryBytes, MaxTotalBytes, MaxManifestBytes}

// CompressionLevel is the fixed gzip level of every archive: best speed,
// because encoding sits inside the runner's measured archive_write phase.
// On a 20,000-event record (6.9 MB of tar) compress/flate takes about
// 15 ms at level 1 for 390 KB, 60 ms at the default level 6 for 320 KB
// (18% smaller) and 210 ms at level 9 for 300 KB; Huffman-only is slower
// than level 1 here and writes ten times the bytes. The deflater is
// klauspost/compress's, whose level 1 takes less than half the CPU time
// of compress/flate's for slightly smaller output (BenchmarkStageCompress);
// its output, like compress/flate's, depends only on the input and level.
const CompressionLevel = 1

// entryMode is the permission of every tar entry.
const entryMode = 0o644
