package attest

import (
	"bytes"
	"strings"
	"testing"
)

// A signature entry is untrusted input: any bytes are either an envelope
// Sign could have written or a one-line error, never a panic.
func FuzzParse(f *testing.F) {
	priv, _, _, err := GenerateKey()
	if err != nil {
		f.Fatal(err)
	}
	k, err := ParseKey("fuzz.key", priv)
	if err != nil {
		f.Fatal(err)
	}
	env, err := Sign(k, NewStatement("run-1", "1.0", []Entry{{"manifest.json", strings.Repeat("0", 64)}}))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(env)
	f.Add([]byte("{}"))
	f.Add(env[:len(env)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		// What parses is in the one encoding Sign writes.
		again, err := marshalEnvelope(&s.Envelope)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("accepted a second spelling: %v", err)
		}
		_ = s.VerifiedBy(k) // must not panic
	})
}
