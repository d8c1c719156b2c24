// Package attest signs vigil archives and checks their signatures in the
// formats supply-chain tooling already reads: a DSSE envelope (ed25519)
// whose payload is an in-toto Statement v1 naming manifest.json and every
// entry it lists by sha256. Keys are PEM files (PKCS#8 private key, PKIX
// public key) that openssl reads; key ids are securesystemslib's (the
// sha256 of the key's canonical JSON form), as in-toto uses them.
//
// Signing covers the manifest, and the manifest covers every entry, so an
// archive edited and re-hashed after the fact no longer matches the
// statement, and a statement re-made to match needs the private key.
// ed25519 signatures are deterministic: the same bundle and key give the
// same archive bytes.
package attest
