package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBytesRoundTrip(t *testing.T) {
	cases := []struct {
		in   Bytes
		json string
	}{
		{"plain/path", `"plain/path"`},
		{"", `""`},
		{"<&>", `"\u003c\u0026\u003e"`},
		{"bad\xffname", "{\"text\":\"bad\ufffdname\",\"b64\":\"YmFk/25hbWU=\"}"},
		{"bad\xfename", "{\"text\":\"bad\ufffdname\",\"b64\":\"YmFk/m5hbWU=\"}"},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.in)
		if err != nil || string(got) != c.json {
			t.Errorf("Marshal(%q) = %s, %v; want %s", c.in, got, err, c.json)
			continue
		}
		var back Bytes
		if err := json.Unmarshal(got, &back); err != nil || back != c.in {
			t.Errorf("Unmarshal(%s) = %q, %v; want %q", got, back, err, c.in)
		}
	}
}

func TestBytesRejectsInconsistentObjects(t *testing.T) {
	for _, doc := range []string{
		`{"text":"other","b64":"YmFk/25hbWU="}`,  // text is not the rendering
		`{"text":"plain","b64":"cGxhaW4="}`,      // valid UTF-8 must be a plain string
		`{"text":"x","b64":"!!"}`,                // not base64
		`{"text":"bad\ufffdname"}`,               // no bytes
		`{"text":"a","b64":"/w==","extra":true}`, // unknown field
	} {
		var b Bytes
		if err := json.Unmarshal([]byte(doc), &b); err == nil {
			t.Errorf("accepted %s as %q", doc, b)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("error spans lines: %v", err)
		}
	}
}

func TestNamePath(t *testing.T) {
	dir := &ResolvedPath{Path: "/work"}
	for _, c := range []struct {
		n    Name
		want Bytes
	}{
		{Name{Requested: "rel/x", Dir: dir}, "/work/rel/x"},
		{Name{Requested: "/abs", Dir: dir}, "/abs"},
		{Name{Requested: "x", Dir: &ResolvedPath{Path: "/"}}, "/x"},
		{Name{Requested: "x"}, "x"},
		{Name{Requested: "../up", Dir: dir}, "/work/../up"},
	} {
		if got := c.n.Path(); got != c.want {
			t.Errorf("%+v.Path() = %q, want %q", c.n, got, c.want)
		}
	}
}
