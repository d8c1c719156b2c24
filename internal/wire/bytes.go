package wire

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bytes is a byte string the kernel handed over: a path, an argument, a
// command name. On Linux these are bytes, not text, so Bytes stores them
// losslessly: as a JSON string when they are valid UTF-8, and otherwise as
// {"text": T, "b64": B}, where B is the standard base64 of the exact bytes
// and T their UTF-8 rendering with U+FFFD for each invalid byte. Two
// different names therefore never become one in an archive, and a reader
// that only wants text reads T.
type Bytes string

// Text is b for display: valid UTF-8, with U+FFFD for invalid bytes.
func (b Bytes) Text() string { return strings.ToValidUTF8(string(b), "\uFFFD") }

// Valid reports whether b is valid UTF-8 (and so stored as a plain string).
func (b Bytes) Valid() bool { return utf8.ValidString(string(b)) }

type bytesObject struct {
	Text string `json:"text"`
	B64  string `json:"b64"`
}

// MarshalJSON writes a string for valid UTF-8 and the object otherwise.
func (b Bytes) MarshalJSON() ([]byte, error) {
	if b.Valid() {
		return json.Marshal(string(b))
	}
	return json.Marshal(bytesObject{Text: b.Text(), B64: base64.StdEncoding.EncodeToString([]byte(b))})
}

// UnmarshalJSON accepts either form and checks that the object form is
// consistent: b64 decodes, is not valid UTF-8 (it would be a plain string
// then) and text is its rendering.
func (b *Bytes) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*b = Bytes(s)
		return nil
	}
	var o bytesObject
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return fmt.Errorf("byte string: %w", err)
	}
	raw, err := base64.StdEncoding.DecodeString(o.B64)
	if err != nil {
		return fmt.Errorf("byte string: b64: %w", err)
	}
	if utf8.Valid(raw) {
		return fmt.Errorf("byte string: b64 holds valid UTF-8, which must be written as a plain string")
	}
	if Bytes(raw).Text() != o.Text {
		return fmt.Errorf("byte string: text %q is not the rendering of b64", o.Text)
	}
	*b = Bytes(raw)
	return nil
}
