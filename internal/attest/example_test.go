package attest_test

import (
	"fmt"

	"vigil/internal/attest"
)

// A key pair signs a statement over an archive's entries; the public key
// alone verifies the envelope, and another key does not.
func ExampleSign() {
	priv, pub, id, err := attest.GenerateKey()
	if err != nil {
		panic(err)
	}
	signer, err := attest.ParseKey("ci.key", priv)
	if err != nil {
		panic(err)
	}
	st := attest.NewStatement("run-1", "0.1.0", []attest.Entry{
		{Name: "manifest.json", SHA256: "4f0c1f8a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6"},
		{Name: "run.json", SHA256: "9a8b7c6d5e4f30211f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c5b6a7988"},
	})
	envelope, err := attest.Sign(signer, st)
	if err != nil {
		panic(err)
	}

	signed, err := attest.Parse(envelope)
	if err != nil {
		panic(err)
	}
	verifier, err := attest.ParseKey("ci.pub", pub)
	if err != nil {
		panic(err)
	}
	fmt.Println("signed by the key:", signed.KeyIDs()[0] == id)
	fmt.Println("public key can sign:", verifier.CanSign())
	fmt.Println("verified:", signed.VerifiedBy(verifier) == nil)

	otherPriv, _, _, err := attest.GenerateKey()
	if err != nil {
		panic(err)
	}
	other, _ := attest.ParseKey("other.key", otherPriv)
	fmt.Println("verified by another key:", signed.VerifiedBy(other) == nil)
	// Output:
	// signed by the key: true
	// public key can sign: false
	// verified: true
	// verified by another key: false
}
