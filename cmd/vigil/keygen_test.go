package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/archive"
	"vigil/internal/attest"
	"vigil/internal/evidence/evidencetest"
)

// keygen's keys sign an archive that verify --pubkey accepts with the
// public key and refuses with another; unsigned archives say so.
func TestKeygenSignVerify(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "ci")
	out, _, err := runVigil(t, "keygen", name)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(out)
	if len(fields) != 3 || fields[1] != name+".key" || fields[2] != name+".pub" {
		t.Fatalf("keygen printed %q", out)
	}
	if st, err := os.Stat(name + ".key"); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode: %v %v", st, err)
	}
	if _, _, err := runVigil(t, "keygen", filepath.Join(dir, "other")); err != nil {
		t.Fatal(err)
	}
	key, err := attest.LoadKey(name + ".key")
	if err != nil {
		t.Fatal(err)
	}
	signed := filepath.Join(dir, "signed.tar.gz")
	if err := archive.WriteSigned(signed, evidencetest.Bundle(60, 2), key); err != nil {
		t.Fatal(err)
	}
	unsigned := filepath.Join(dir, "unsigned.tar.gz")
	if err := archive.Write(unsigned, evidencetest.Bundle(60, 2)); err != nil {
		t.Fatal(err)
	}
	id := fields[0]
	notKey := filepath.Join(dir, "notakey.pub")
	os.WriteFile(notKey, []byte("hello\n"), 0o644)
	runCLICases(t, []cliCase{
		{args: []string{"verify", signed}, stdout: "signature=unchecked:" + id},
		{args: []string{"verify", "--pubkey", name + ".pub", signed}, stdout: "signature=verified:" + id},
		{args: []string{"verify", "--pubkey", name + ".key", signed}, stdout: "signature=verified:" + id},
		{args: []string{"verify", unsigned}, stdout: "signature=unsigned"},
		{args: []string{"verify", "--pubkey", name + ".pub", unsigned}, code: ExitVerifyFailed, stderr: "signature.dsse.json: missing: the archive is not signed"},
		{args: []string{"verify", "--pubkey", filepath.Join(dir, "other.pub"), signed}, code: ExitVerifyFailed, stderr: "signed by key [" + id + "], not by"},
		{args: []string{"verify", "--pubkey", notKey, signed}, code: ExitRunnerFailure},
		{args: []string{"keygen", name}, code: ExitRunnerFailure},
	})
	// keygen refused to overwrite: the key still signs as before.
	if again, err := attest.LoadKey(name + ".key"); err != nil || again.ID() != id {
		t.Fatalf("key replaced: %v", err)
	}
	_, _, err = runVigil(t, "verify", "--pubkey", notKey, signed)
	if err == nil || !strings.Contains(err.Error(), "--pubkey "+notKey+": not a PEM key") {
		t.Fatalf("bad --pubkey: %v", err)
	}
}
