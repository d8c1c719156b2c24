package archive

import (
	"flag"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	flag.Parse()
	// Every kernel line the tests read and parseCanonicalKernel accepts
	// is re-encoded and compared (provenKernelLine panics on a
	// difference). Benchmarks measure what verify does, without it.
	reencodeParsed = flag.Lookup("test.bench").Value.String() == ""
	os.Exit(m.Run())
}
