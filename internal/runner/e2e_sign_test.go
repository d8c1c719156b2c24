//go:build linux

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/testenv"
)

// record --sign-key writes an archive that verify --pubkey accepts; the
// same run re-recorded unsigned is refused by it; a public key cannot
// sign, and nothing is written then.
func TestE2ESignedRecord(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	if r := runVigil(t, dir, "keygen", "ci"); r.code != 0 {
		t.Fatalf("keygen: %d %s", r.code, r.stderr)
	}
	arc := filepath.Join(dir, "signed.tar.gz")
	if r := runVigil(t, dir, "record", "--archive", arc, "--sign-key", "ci.key", "--", "cat", "/etc/hostname"); r.code != 0 {
		t.Fatalf("record --sign-key: %d %s", r.code, r.stderr)
	}
	r := runVigil(t, dir, "verify", "--pubkey", "ci.pub", arc)
	if r.code != 0 || !strings.Contains(r.stdout, "signature=verified:") {
		t.Fatalf("verify --pubkey: %d %s%s", r.code, r.stdout, r.stderr)
	}
	verifyAndRead(t, arc)

	unsigned := filepath.Join(dir, "unsigned.tar.gz")
	if r := runVigil(t, dir, "record", "--archive", unsigned, "--", "true"); r.code != 0 {
		t.Fatalf("record: %d %s", r.code, r.stderr)
	}
	if r := runVigil(t, dir, "verify", "--pubkey", "ci.pub", unsigned); r.code != 1 || !strings.Contains(r.stderr, "not signed") {
		t.Fatalf("unsigned archive against --pubkey: %d %s", r.code, r.stderr)
	}

	never := filepath.Join(dir, "never.tar.gz")
	r = runVigil(t, dir, "record", "--archive", never, "--sign-key", "ci.pub", "--", "true")
	if r.code != 125 || !strings.Contains(r.stderr, "--sign-key: a public key cannot sign") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("record --sign-key PUBLIC: %d %q", r.code, r.stderr)
	}
	r = runVigil(t, dir, "record", "--archive", never, "--sign-key", "missing.key", "--", "true")
	if r.code != 125 || !strings.Contains(r.stderr, "missing.key") {
		t.Fatalf("record --sign-key MISSING: %d %q", r.code, r.stderr)
	}
	if _, err := os.Stat(never); err == nil {
		t.Fatal("an archive was written with an unusable key")
	}
}
