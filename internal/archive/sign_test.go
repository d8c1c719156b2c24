package archive

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/attest"
	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
)

func testKey(t testing.TB) (signer, public *attest.Key) {
	t.Helper()
	priv, pub, _, err := attest.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if signer, err = attest.ParseKey("signer.key", priv); err != nil {
		t.Fatal(err)
	}
	if public, err = attest.ParseKey("signer.pub", pub); err != nil {
		t.Fatal(err)
	}
	return signer, public
}

func encodeSigned(t testing.TB, b *evidence.Bundle, key *attest.Key) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := EncodeSigned(&buf, b, key); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func openBytes(t testing.TB, data []byte) (*Archive, error) {
	t.Helper()
	m, files, err := readTarGz(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return decodeFiles(m, files)
}

func TestSignedArchive(t *testing.T) {
	signer, public := testKey(t)
	b := evidencetest.Bundle(120, 3)
	data := encodeSigned(t, b, signer)
	if again := encodeSigned(t, b, signer); !bytes.Equal(data, again) {
		t.Fatal("a signed archive is not reproducible")
	}
	entries := untar(t, data)
	if last := entries[len(entries)-1].hdr.Name; last != evidence.EntrySignature {
		t.Fatalf("last entry %s", last)
	}
	a, err := openBytes(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if a.Signature == nil || a.Signature.KeyIDs()[0] != public.ID() {
		t.Fatalf("signature %+v", a.Signature)
	}
	if err := a.VerifySignature(public); err != nil {
		t.Fatal(err)
	}
	_, other := testKey(t)
	if err := a.VerifySignature(other); err == nil || !strings.Contains(err.Error(), "signed by key") {
		t.Fatalf("verified by the wrong key: %v", err)
	}

	// The same bundle unsigned is the archive it always was, and says so.
	u, err := openBytes(t, encode(t, b))
	if err != nil {
		t.Fatal(err)
	}
	if u.Signature != nil {
		t.Fatal("unsigned archive has a signature")
	}
	if err := u.VerifySignature(public); err == nil || !strings.Contains(err.Error(), "signature.dsse.json: missing: the archive is not signed") {
		t.Fatalf("unsigned archive against a key: %v", err)
	}

	// Written to a file and opened by path.
	p := filepath.Join(t.TempDir(), "run.tar.gz")
	if err := WriteSigned(p, b, signer); err != nil {
		t.Fatal(err)
	}
	if a, err := Open(p); err != nil || a.VerifySignature(public) != nil {
		t.Fatalf("Open: %v", err)
	}
}

// An archive edited and re-hashed after signing: the manifest agrees
// with the entries again, but not with what was signed. Re-signing it
// takes a key, and another key is not the trusted one.
func TestSignedArchiveRehashed(t *testing.T) {
	signer, public := testKey(t)
	b := evidencetest.Bundle(120, 3)
	entries := untar(t, encodeSigned(t, b, signer))
	sig := entries[len(entries)-1]

	edited := *b
	edited.Run = b.Run
	edited.Run.Argv = []string{"/bin/true"}
	forged := untar(t, encode(t, &edited))
	mustFail(t, retar(t, append(forged, sig)), evidence.EntrySignature,
		"the archive was changed after signing", "manifest.json has sha256")

	// Same manifest, but one signature byte changed.
	i := bytes.Index(sig.data, []byte(`"sig": "`)) + len(`"sig": "`)
	flipped := append([]byte{}, sig.data...)
	flipped[i] ^= 'A' ^ 'B'
	if flipped[i] == sig.data[i] {
		t.Fatal("no change")
	}
	tampered := append(append([]rawEntry{}, entries[:len(entries)-1]...), rawEntry{sig.hdr, flipped})
	a, err := openBytes(t, retar(t, tampered))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.VerifySignature(public); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("flipped signature: %v", err)
	}

	// Re-signed by someone else's key: well formed, and not trusted.
	attacker, _ := testKey(t)
	a, err = openBytes(t, encodeSigned(t, &edited, attacker))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.VerifySignature(public); err == nil || !strings.Contains(err.Error(), "not by "+public.ID()) {
		t.Fatalf("re-signed by another key: %v", err)
	}
}

func TestSignatureEntryRules(t *testing.T) {
	signer, _ := testKey(t)
	entries := untar(t, encodeSigned(t, evidencetest.Bundle(120, 3), signer))
	sig := entries[len(entries)-1]
	body := entries[:len(entries)-1]

	// Anywhere but last is out of order.
	moved := append([]rawEntry{body[0], sig}, body[1:]...)
	mustFail(t, retar(t, moved), body[1].hdr.Name, "out of order")
	// Not valid as an envelope.
	mustFail(t, retar(t, append(append([]rawEntry{}, body...), rawEntry{sig.hdr, []byte("{}\n")})), evidence.EntrySignature, "schema signature")
	// Another run's signature.
	other := untar(t, encodeSigned(t, evidencetest.Bundle(60, 1), signer))
	mustFail(t, retar(t, append(append([]rawEntry{}, body...), other[len(other)-1])), evidence.EntrySignature, "changed after signing")
}
