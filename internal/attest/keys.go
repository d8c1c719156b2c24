package attest

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"

	"github.com/secure-systems-lab/go-securesystemslib/signerverifier"
)

// maxKeyFile bounds what is read from a key file.
const maxKeyFile = 64 << 10

// Key is a loaded ed25519 key: a public key, and the private key when it
// was loaded from one (then it can sign).
type Key struct {
	sv    *signerverifier.ED25519SignerVerifier
	id    string
	priv  bool
	label string // the file it came from, for messages
}

// ID is the key's securesystemslib key id.
func (k *Key) ID() string { return k.id }

// CanSign says whether the private half is loaded.
func (k *Key) CanSign() bool { return k.priv }

// LoadKey reads a PEM ed25519 key: a PKCS#8 private key (which can sign
// and verify) or a PKIX public key (verify only). The error names the file
// and what is wrong with it, on one line.
func LoadKey(path string) (*Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() > maxKeyFile {
		return nil, fmt.Errorf("%s: %d bytes is too large for a key file", path, st.Size())
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return ParseKey(path, data)
}

// ParseKey is LoadKey for data read from label.
func ParseKey(label string, data []byte) (*Key, error) {
	sk, err := signerverifier.LoadKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not a PEM key (PKCS#8 private or PKIX public): %v", label, err)
	}
	if sk.KeyType != signerverifier.ED25519KeyType {
		return nil, fmt.Errorf("%s: is a %s key; vigil signs with ed25519 (make one with vigil keygen)", label, sk.KeyType)
	}
	sv, err := signerverifier.NewED25519SignerVerifierFromSSLibKey(sk)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", label, err)
	}
	return &Key{sv: sv, id: sk.KeyID, priv: sk.KeyVal.Private != "", label: label}, nil
}

// GenerateKey makes an ed25519 key pair and returns it as PEM: the private
// key (PKCS#8) and the public key (PKIX), and the key id.
func GenerateKey() (private, public []byte, id string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, "", err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, nil, "", err
	}
	private = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	public = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	k, err := ParseKey("generated key", public)
	if err != nil {
		return nil, nil, "", err
	}
	return private, public, k.ID(), nil
}
