// Package schema embeds the JSON Schemas (draft 2020-12) for every JSON
// document vigil writes, and validates documents against them. The same
// schemas serve vigil verify, vigil bench/report and the tests.
//
// Each schema lives in NAME.schema.json; its "$id" is
// "https://vigil.invalid/schema/NAME.schema.json" and documents name it by
// NAME (e.g. "manifest", "kernel-event").
package schema

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

//go:embed *.schema.json
var files embed.FS

const idPrefix = "https://vigil.invalid/schema/"

var (
	once     sync.Once
	compiled map[string]*jsonschema.Schema
	loadErr  error
)

func load() {
	compiled = map[string]*jsonschema.Schema{}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	names, err := fs.Glob(files, "*.schema.json")
	if err != nil {
		loadErr = err
		return
	}
	for _, n := range names {
		data, err := files.ReadFile(n)
		if err != nil {
			loadErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			loadErr = fmt.Errorf("schema %s: %w", n, err)
			return
		}
		if err := c.AddResource(idPrefix+n, doc); err != nil {
			loadErr = fmt.Errorf("schema %s: %w", n, err)
			return
		}
	}
	for _, n := range names {
		s, err := c.Compile(idPrefix + n)
		if err != nil {
			loadErr = fmt.Errorf("schema %s: %w", n, err)
			return
		}
		compiled[strings.TrimSuffix(n, ".schema.json")] = s
	}
}

// Names lists the embedded schema names, sorted.
func Names() []string {
	once.Do(load)
	out := make([]string, 0, len(compiled))
	for n := range compiled {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Raw returns the text of schema name.
func Raw(name string) ([]byte, error) {
	return files.ReadFile(name + ".schema.json")
}

// Validate checks one JSON document against schema name. The error is a
// single line naming the first violation.
func Validate(name string, data []byte) error {
	once.Do(load)
	if loadErr != nil {
		return loadErr
	}
	s, ok := compiled[name]
	if !ok {
		return fmt.Errorf("no schema named %q", name)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	if err := s.Validate(doc); err != nil {
		return fmt.Errorf("%s", oneLine(err))
	}
	return nil
}

// ValidateNDJSON checks every non-empty line of data against schema name;
// the error names the 1-based line.
func ValidateNDJSON(name string, data []byte) error {
	line := 0
	for len(data) > 0 {
		line++
		i := bytes.IndexByte(data, '\n')
		var l []byte
		if i < 0 {
			l, data = data, nil
		} else {
			l, data = data[:i], data[i+1:]
		}
		if len(bytes.TrimSpace(l)) == 0 {
			return fmt.Errorf("line %d: empty line", line)
		}
		if err := Validate(name, l); err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
	}
	return nil
}

var printer = message.NewPrinter(language.English)

func oneLine(err error) string {
	if ve, ok := err.(*jsonschema.ValidationError); ok {
		// Descend to the deepest first cause: it names the offending field.
		for len(ve.Causes) > 0 {
			ve = ve.Causes[0]
		}
		loc := "/" + strings.Join(ve.InstanceLocation, "/")
		return fmt.Sprintf("at %s: %s", loc, strings.ReplaceAll(ve.ErrorKind.LocalizedString(printer), "\n", " "))
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}
