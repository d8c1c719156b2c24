//go:build linux

package capture

import (
	"testing"

	"vigil/internal/testenv"
)

// A record releases what loading parsed once its capture is open; a later
// Open in the same process must parse it again and still capture.
func TestReleaseCachesThenOpenAgain(t *testing.T) {
	testenv.RequireRoot(t)
	cg := testCgroup(t)
	first := openCaptureWith(t, Config{CgroupPath: cg, Resident: ResidentOff})
	if !held(embeddedSpec) || !held(kernelSpec) || !held(kernelBTF) {
		t.Fatal("loading programs did not go through the caches ReleaseCaches frees")
	}
	ReleaseCaches()
	for name, done := range map[string]bool{"embedded object": held(embeddedSpec), "kernel types": held(kernelTypes), "kernel spec": held(kernelSpec), "kernel BTF": held(kernelBTF)} {
		if done {
			t.Errorf("%s still cached after ReleaseCaches", name)
		}
	}
	if err := command(t, cg, "/bin/true").Run(); err != nil {
		t.Fatal(err)
	}
	if r := finish(t, first, cg); len(r.Events) == 0 {
		t.Fatal("the capture opened before ReleaseCaches recorded nothing")
	}

	again := openCaptureWith(t, Config{CgroupPath: cg, Resident: ResidentOff})
	if !held(embeddedSpec) || !held(kernelSpec) {
		t.Fatal("Open after ReleaseCaches did not parse again")
	}
	if err := command(t, cg, "/bin/true").Run(); err != nil {
		t.Fatal(err)
	}
	r := finish(t, again, cg)
	checkComplete(t, r)
	if len(r.Events) == 0 {
		t.Fatal("the capture opened after ReleaseCaches recorded nothing")
	}
}

func held[T any](p *parsed[T]) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}
