package wire

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
	mu       sync.RWMutex
	compiler *jsonschema.Compiler
	compiled = map[string]*jsonschema.Schema{}
	loadErr  error
)

// setup registers every embedded schema with one compiler. Compiling is
// deferred to first use of each schema: compiling all of them costs tens of
// milliseconds, and most commands need one or two.
func setup() {
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
	compiler = c
}

var setupOnce sync.Once

// get returns the compiled schema name, compiling it on first use.
func get(name string) (*jsonschema.Schema, error) {
	mu.RLock()
	s, ok := compiled[name]
	mu.RUnlock()
	if ok {
		return s, nil
	}
	setupOnce.Do(setup)
	if loadErr != nil {
		return nil, loadErr
	}
	if _, err := files.Open(name + ".schema.json"); err != nil {
		return nil, fmt.Errorf("no schema named %q", name)
	}
	mu.Lock()
	defer mu.Unlock()
	if s, ok := compiled[name]; ok {
		return s, nil
	}
	s, err := compiler.Compile(idPrefix + name + ".schema.json")
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	compiled[name] = s
	return s, nil
}

// Warm compiles the named schemas now, so that a later Validate does not
// pay for it at a moment that is being timed.
func Warm(names ...string) error {
	for _, n := range names {
		if _, err := get(n); err != nil {
			return err
		}
	}
	return nil
}

// Names lists the embedded schema names, sorted.
func Names() []string {
	paths, _ := fs.Glob(files, "*.schema.json")
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, strings.TrimSuffix(p, ".schema.json"))
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
	s, err := get(name)
	if err != nil {
		return err
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

// ValidateNDJSON checks every line of data against schema name (an empty
// line is an error); the error names the 1-based line.
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
