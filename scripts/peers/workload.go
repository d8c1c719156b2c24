//go:build linux

package main

import (
	"archive/tar"
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"
)

// archiveInfo describes one workload archive.
type archiveInfo struct {
	N      int    `json:"n"`     // regular files
	Dirs   int    `json:"dirs"`  // directories holding them
	Path   string `json:"-"`     // where it lies for this run
	Bytes  int64  `json:"bytes"` // archive size
	SHA256 string `json:"sha256"`
}

// archiveEpoch is every entry's mtime, so an archive depends only on N,
// the seed and filesPerDir.
var archiveEpoch = time.Unix(1577836800, 0).UTC()

// archiveName is the name of file i; extractedFile matches it.
func archiveName(i, filesPerDir int) string {
	return fmt.Sprintf("d%04d/vpf%07d.dat", i/filesPerDir, i)
}

// dirsFor is how many directories hold n files.
func dirsFor(n, filesPerDir int) int { return (n + filesPerDir - 1) / filesPerDir }

// addedEvents is how many events of the traced set an archive of n files
// adds to the empty archive's: GNU tar opens each file once (O_CREAT),
// each directory once more (O_PATH, to set its times after its files)
// and, once there is a member at all, the -C directory (O_DIRECTORY).
func addedEvents(n, filesPerDir int) int {
	if n == 0 {
		return 0
	}
	return n + dirsFor(n, filesPerDir) + 1
}

// writeArchive writes a ustar archive of n small files (1 to 512 bytes of
// seeded random content, one data block each) in directories of
// filesPerDir, and returns its size and sha256. The same n, seed and
// filesPerDir give the same bytes.
func writeArchive(path string, n, filesPerDir int, seed uint64) (archiveInfo, error) {
	info := archiveInfo{N: n, Dirs: dirsFor(n, filesPerDir), Path: path}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return info, err
	}
	defer f.Close()
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<20)
	tw := tar.NewWriter(bw)
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	buf := make([]byte, 512)
	for i := 0; i < n; i++ {
		if i%filesPerDir == 0 {
			hdr := &tar.Header{Typeflag: tar.TypeDir, Name: fmt.Sprintf("d%04d/", i/filesPerDir),
				Mode: 0o755, ModTime: archiveEpoch, Format: tar.FormatUSTAR}
			if err := tw.WriteHeader(hdr); err != nil {
				return info, err
			}
		}
		size := 1 + rng.IntN(len(buf))
		for j := 0; j < size; j++ {
			buf[j] = byte(rng.Uint32())
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: archiveName(i, filesPerDir), Size: int64(size),
			Mode: 0o644, ModTime: archiveEpoch, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(hdr); err != nil {
			return info, err
		}
		if _, err := tw.Write(buf[:size]); err != nil {
			return info, err
		}
	}
	if err := tw.Close(); err != nil {
		return info, err
	}
	if err := bw.Flush(); err != nil {
		return info, err
	}
	st, err := f.Stat()
	if err != nil {
		return info, err
	}
	info.Bytes = st.Size()
	info.SHA256 = hex.EncodeToString(h.Sum(nil))
	return info, f.Close()
}
