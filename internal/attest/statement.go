package attest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// The envelope and statement types, as the DSSE and in-toto specifications
// name them, and the type of vigil's predicate.
const (
	PayloadType   = "application/vnd.in-toto+json"
	StatementType = "https://in-toto.io/Statement/v1"
	PredicateType = "https://vigil.invalid/attestation/evidence-archive/v1"
)

// Statement is an in-toto Statement v1 about one archive.
type Statement struct {
	Type          string    `json:"_type"`
	Subject       []Subject `json:"subject"`
	PredicateType string    `json:"predicateType"`
	Predicate     Predicate `json:"predicate"`
}

// Subject is one archive entry and its digest.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"` // "sha256": lower-case hex
}

// Predicate says which run the archive is evidence of.
type Predicate struct {
	RunID        string `json:"run_id"`
	VigilVersion string `json:"vigil_version"`
}

// Entry is an archive entry as a statement names it.
type Entry struct {
	Name   string
	SHA256 string // lower-case hex
}

// NewStatement is the statement over entries (manifest.json first, then
// the entries it lists, in archive order).
func NewStatement(runID, vigilVersion string, entries []Entry) Statement {
	st := Statement{Type: StatementType, PredicateType: PredicateType, Predicate: Predicate{runID, vigilVersion}}
	for _, e := range entries {
		st.Subject = append(st.Subject, Subject{e.Name, map[string]string{"sha256": e.SHA256}})
	}
	return st
}

// Entries is the statement's subjects as entries; ok is false when a
// subject has a digest other than exactly one sha256.
func (st Statement) Entries() (out []Entry, ok bool) {
	for _, s := range st.Subject {
		d, has := s.Digest["sha256"]
		if !has || len(s.Digest) != 1 {
			return nil, false
		}
		out = append(out, Entry{s.Name, d})
	}
	return out, true
}

// Sign is the DSSE envelope of st signed with k, as one JSON document
// (two-space indent, final newline).
func Sign(k *Key, st Statement) ([]byte, error) {
	if !k.CanSign() {
		return nil, fmt.Errorf("%s: is a public key; signing needs the private key", k.label)
	}
	body, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	es, err := dsse.NewEnvelopeSigner(k.sv)
	if err != nil {
		return nil, err
	}
	env, err := es.SignPayload(context.Background(), PayloadType, body)
	if err != nil {
		return nil, err
	}
	return marshalEnvelope(env)
}

func marshalEnvelope(env *dsse.Envelope) ([]byte, error) {
	data, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Signed is a parsed envelope and the statement it carries. Parsing
// checks the form only; VerifiedBy checks a signature.
type Signed struct {
	Envelope  dsse.Envelope
	Statement Statement
}

// KeyIDs are the key ids the envelope's signatures name.
func (s *Signed) KeyIDs() []string {
	var ids []string
	for _, sig := range s.Envelope.Signatures {
		ids = append(ids, sig.KeyID)
	}
	return ids
}

// Parse reads an envelope that Sign wrote: strict JSON in Sign's exact
// encoding, the in-toto payload type, a standard-base64 payload that is a
// Statement v1 with vigil's predicate, in its exact encoding too (so there
// is one spelling of a signed archive).
func Parse(data []byte) (*Signed, error) {
	var s Signed
	if err := strict(data, &s.Envelope); err != nil {
		return nil, fmt.Errorf("envelope: %v", err)
	}
	if again, err := marshalEnvelope(&s.Envelope); err != nil || !bytes.Equal(again, data) {
		return nil, errors.New("envelope not in canonical encoding")
	}
	if s.Envelope.PayloadType != PayloadType {
		return nil, fmt.Errorf("payloadType %q, want %q", s.Envelope.PayloadType, PayloadType)
	}
	if len(s.Envelope.Signatures) == 0 {
		return nil, errors.New("envelope has no signature")
	}
	body, err := base64.StdEncoding.Strict().DecodeString(s.Envelope.Payload)
	if err != nil {
		return nil, fmt.Errorf("payload is not standard base64: %v", err)
	}
	if err := strict(body, &s.Statement); err != nil {
		return nil, fmt.Errorf("statement: %v", err)
	}
	if again, err := json.Marshal(s.Statement); err != nil || !bytes.Equal(again, body) {
		return nil, errors.New("statement not in canonical encoding")
	}
	switch {
	case s.Statement.Type != StatementType:
		return nil, fmt.Errorf("statement _type %q, want %q", s.Statement.Type, StatementType)
	case s.Statement.PredicateType != PredicateType:
		return nil, fmt.Errorf("predicateType %q, want %q", s.Statement.PredicateType, PredicateType)
	}
	if _, ok := s.Statement.Entries(); !ok {
		return nil, errors.New("statement subject without exactly one sha256 digest")
	}
	return &s, nil
}

// VerifiedBy checks that k made one of the envelope's signatures.
func (s *Signed) VerifiedBy(k *Key) error {
	ev, err := dsse.NewEnvelopeVerifier(k.sv)
	if err != nil {
		return err
	}
	if _, err := ev.Verify(context.Background(), &s.Envelope); err != nil {
		if slices.Contains(s.KeyIDs(), k.ID()) {
			return fmt.Errorf("the signature by key %s does not verify: the archive was altered after signing", k.ID())
		}
		return fmt.Errorf("signed by key %v, not by %s (%s)", s.KeyIDs(), k.ID(), k.label)
	}
	return nil
}

func strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON document")
	}
	return nil
}
