package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"vigil/internal/attest"
	"vigil/internal/evidence"
)

// signatureFor is the signature entry of an archive with manifest mf: a
// DSSE envelope, signed with key, over an in-toto statement naming
// manifest.json and every entry it lists by sha256.
func signatureFor(b *evidence.Bundle, mf file, key *attest.Key) (file, error) {
	var m Manifest
	if err := json.Unmarshal(mf.data, &m); err != nil {
		return file{}, err
	}
	env, err := attest.Sign(key, attest.NewStatement(b.Run.RunID, b.Run.VigilVersion, statementEntries(mf, &m)))
	if err != nil {
		return file{}, fmt.Errorf("%s: %w", evidence.EntrySignature, err)
	}
	return file{path: evidence.EntrySignature, data: env}, nil
}

// statementEntries is what a signature's statement must name: the
// manifest and the entries it lists, in archive order.
func statementEntries(mf file, m *Manifest) []attest.Entry {
	sum := sha256.Sum256(mf.data)
	if mf.sum != nil {
		sum = *mf.sum
	}
	out := []attest.Entry{{Name: mf.path, SHA256: hex.EncodeToString(sum[:])}}
	for _, e := range m.Entries {
		out = append(out, attest.Entry{Name: e.Path, SHA256: e.SHA256})
	}
	return out
}

// checkSignature parses the signature entry and requires that its
// statement names exactly this archive: the manifest's own hash, every
// entry the manifest lists, and the run. Whether the signature is by a
// trusted key is the caller's question (Archive.VerifySignature).
func checkSignature(f file, mf file, m *Manifest) (*attest.Signed, error) {
	s, err := attest.Parse(f.data)
	if err != nil {
		return nil, entryErr(f.path, "%v", err)
	}
	got, _ := s.Statement.Entries()
	if why := mismatch(got, statementEntries(mf, m)); why != "" {
		return nil, entryErr(f.path, "%s: the archive was changed after signing", why)
	}
	if p := s.Statement.Predicate; p.RunID != m.RunID || p.VigilVersion != m.VigilVersion {
		return nil, entryErr(f.path, "the signed statement is about run %s (vigil %s), not %s (vigil %s)", p.RunID, p.VigilVersion, m.RunID, m.VigilVersion)
	}
	return s, nil
}

// mismatch says how the signed entries differ from the archive's, or ""
// when they are the same.
func mismatch(signed, archive []attest.Entry) string {
	for i := range max(len(signed), len(archive)) {
		switch {
		case i >= len(signed):
			return fmt.Sprintf("the signed statement does not name %s", archive[i].Name)
		case i >= len(archive):
			return fmt.Sprintf("the signed statement names %s, which the archive does not hold", signed[i].Name)
		case signed[i].Name != archive[i].Name:
			return fmt.Sprintf("the signed statement names %s where the archive holds %s", signed[i].Name, archive[i].Name)
		case signed[i].SHA256 != archive[i].SHA256:
			return fmt.Sprintf("%s has sha256 %s, the signed statement says %s", archive[i].Name, archive[i].SHA256, signed[i].SHA256)
		}
	}
	return ""
}
