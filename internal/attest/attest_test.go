package attest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	intoto "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

func newKey(t *testing.T) (signer, verifier *Key) {
	t.Helper()
	priv, pub, id, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	signer, err = ParseKey("test.key", priv)
	if err != nil {
		t.Fatal(err)
	}
	verifier, err = ParseKey("test.pub", pub)
	if err != nil {
		t.Fatal(err)
	}
	if signer.ID() != id || verifier.ID() != id || !signer.CanSign() || verifier.CanSign() {
		t.Fatalf("ids %s %s %s, can sign %v %v", signer.ID(), verifier.ID(), id, signer.CanSign(), verifier.CanSign())
	}
	return signer, verifier
}

var entries = []Entry{
	{"manifest.json", strings.Repeat("a", 64)},
	{"run.json", strings.Repeat("b", 64)},
}

func TestSignParseVerify(t *testing.T) {
	signer, verifier := newKey(t)
	st := NewStatement("run-1", "1.0", entries)
	env, err := Sign(signer, st)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Sign(signer, st)
	if err != nil || !bytes.Equal(env, again) {
		t.Fatalf("signing twice gave different bytes (ed25519 is deterministic): %v", err)
	}
	s, err := Parse(env)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := s.Statement.Entries()
	if !ok || len(got) != 2 || got[1] != entries[1] || s.Statement.Predicate.RunID != "run-1" {
		t.Fatalf("entries %v %v, predicate %+v", got, ok, s.Statement.Predicate)
	}
	if err := s.VerifiedBy(verifier); err != nil {
		t.Fatal(err)
	}
	if err := s.VerifiedBy(signer); err != nil {
		t.Fatalf("a private key verifies too: %v", err)
	}
	if _, err := Sign(verifier, st); err == nil || !strings.Contains(err.Error(), "test.pub: is a public key") {
		t.Fatalf("signing with a public key: %v", err)
	}

	_, other := newKey(t)
	if err := s.VerifiedBy(other); err == nil || !strings.Contains(err.Error(), "signed by key ["+signer.ID()+"], not by "+other.ID()) {
		t.Fatalf("verify with another key: %v", err)
	}
}

// The statement is one existing tooling accepts: the in-toto attestation
// library's own Statement type reads it and finds it valid.
func TestStatementIsInTotoV1(t *testing.T) {
	signer, _ := newKey(t)
	env, err := Sign(signer, NewStatement("run-1", "1.0", entries))
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Payload string }
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	body, _ := base64.StdEncoding.DecodeString(e.Payload)
	var st intoto.Statement
	if err := protojson.Unmarshal(body, &st); err != nil {
		t.Fatalf("in-toto Statement: %v\n%s", err, body)
	}
	if err := st.Validate(); err != nil {
		t.Fatalf("in-toto Statement.Validate: %v", err)
	}
	if len(st.GetSubject()) != 2 || st.GetSubject()[0].GetDigest()["sha256"] != entries[0].SHA256 || st.GetPredicate().GetFields()["run_id"].GetStringValue() != "run-1" {
		t.Fatalf("read back: %v", &st)
	}
}

// A signature that was valid does not survive any change to what it
// covers, and a re-made statement needs the private key.
func TestTamperedEnvelope(t *testing.T) {
	signer, verifier := newKey(t)
	env, err := Sign(signer, NewStatement("run-1", "1.0", entries))
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]any
	json.Unmarshal(env, &e)
	body, _ := base64.StdEncoding.DecodeString(e["payload"].(string))
	forged := bytes.Replace(body, []byte(strings.Repeat("b", 64)), []byte(strings.Repeat("c", 64)), 1)
	e["payload"] = base64.StdEncoding.EncodeToString(forged)
	data, _ := json.MarshalIndent(e, "", "  ")
	// MarshalIndent of a map sorts the keys: put them back in order.
	s, err := Parse(reorder(t, data))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.VerifiedBy(verifier); err == nil || !strings.Contains(err.Error(), "does not verify: the archive was altered after signing") {
		t.Fatalf("forged payload: %v", err)
	}
}

func reorder(t *testing.T, data []byte) []byte {
	t.Helper()
	var env struct {
		PayloadType string `json:"payloadType"`
		Payload     string `json:"payload"`
		Signatures  []struct {
			KeyID string `json:"keyid"`
			Sig   string `json:"sig"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(env, "", "  ")
	return append(out, '\n')
}

func TestParseRejects(t *testing.T) {
	signer, _ := newKey(t)
	good, err := Sign(signer, NewStatement("run-1", "1.0", entries))
	if err != nil {
		t.Fatal(err)
	}
	payload := func(st string) []byte {
		return bytes.Replace(good, []byte(base64.StdEncoding.EncodeToString(must(json.Marshal(NewStatement("run-1", "1.0", entries))))),
			[]byte(base64.StdEncoding.EncodeToString([]byte(st))), 1)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"not JSON", []byte("nope"), "envelope:"},
		{"unknown field", bytes.Replace(good, []byte(`"payloadType"`), []byte(`"x": 1, "payloadType"`), 1), "unknown field"},
		{"reindented", bytes.ReplaceAll(good, []byte("  "), []byte("   ")), "canonical"},
		{"payload type", bytes.Replace(good, []byte(PayloadType), []byte("text/plain"), 1), "payloadType"},
		{"no signatures", bytes.Replace(good, good[bytes.Index(good, []byte(`"signatures"`)):], []byte("\"signatures\": []\n}\n"), 1), "no signature"},
		{"statement type", payload(`{"_type":"x","subject":[],"predicateType":"` + PredicateType + `","predicate":{"run_id":"r","vigil_version":"v"}}`), "statement _type"},
		{"predicate type", payload(`{"_type":"` + StatementType + `","subject":[],"predicateType":"y","predicate":{"run_id":"r","vigil_version":"v"}}`), "predicateType"},
		{"two digests", payload(`{"_type":"` + StatementType + `","subject":[{"name":"a","digest":{"sha1":"x","sha256":"y"}}],"predicateType":"` + PredicateType + `","predicate":{"run_id":"r","vigil_version":"v"}}`), "exactly one sha256"},
	} {
		if _, err := Parse(c.data); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Parse = %v, want one line with %q", c.name, err, c.want)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestLoadKeyRejects(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(data), 0o600)
		return p
	}
	rsaPEM := "-----BEGIN PUBLIC KEY-----\nMFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBAK3ehQ8bL0Vd0Ld4R0XW6dwY2CjN3k7ALHUp/PC2gsEiBbpJzPKmHXdLzWBGGvz+bb5nk0DgP5vx1lhvVqUFKoECAwEAAQ==\n-----END PUBLIC KEY-----\n"
	for _, c := range []struct{ path, want string }{
		{write("empty.pem", ""), "empty.pem: not a PEM key"},
		{write("junk.pem", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"), "junk.pem: not a PEM key"},
		{write("rsa.pub", rsaPEM), "rsa.pub: is a rsa key; vigil signs with ed25519"},
		{dir, "not a regular file"},
		{write("big.pem", strings.Repeat("x", maxKeyFile+1)), "too large"},
		{filepath.Join(dir, "missing.pem"), "missing.pem"},
	} {
		if _, err := LoadKey(c.path); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("LoadKey(%s) = %v, want one line with %q", c.path, err, c.want)
		}
	}
}
