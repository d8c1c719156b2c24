// Package wiretest proves that a Go record type and the JSON Schema that
// describes it agree field by field, so that the type vigil writes and the
// schema vigil verifies against cannot drift apart unnoticed.
package wiretest

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"vigil/internal/wire"
)

// Enums lists, for a named string type (by its qualified name, e.g.
// "wire.Kind"), every value the program may write. Agree requires the
// schema to allow exactly these values wherever a field has that type.
type Enums map[string][]string

// ConstEnums reads the Go files of the package in dir and returns, for
// each named string type of package pkg, the values of the constants
// declared with that type: the enumerations as the code defines them, so a
// new constant is held against the schemas without being listed anywhere.
func ConstEnums(dir, pkg string) (Enums, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	out := Enums{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				typ, ok := vs.Type.(*ast.Ident)
				if !ok {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					val, err := strconv.Unquote(lit.Value)
					if err != nil {
						return nil, err
					}
					key := pkg + "." + typ.Name
					out[key] = append(out[key], val)
				}
			}
		}
	}
	return out, nil
}

// Agree compares the Go type of v (a struct, or a pointer to one) with the
// schema named name, and returns every disagreement, one line each:
//   - a JSON field the schema does not define, or a schema property no Go
//     field writes;
//   - an object schema that admits unknown properties;
//   - a field always written (no omitempty) that the schema does not
//     require, or a field that may be left out (omitempty) that it requires;
//   - a JSON type that differs (string, integer, number, boolean, array,
//     object);
//   - a schema enumeration allowing a value Go does not define, or a Go
//     value of an enumeration that no place of the schema allows.
//
// Types with their own MarshalJSON (Bytes) are checked only for presence.
func Agree(v any, name string, enums Enums) ([]string, error) {
	raw, err := wire.Raw(name)
	if err != nil {
		return nil, err
	}
	return AgreeSchema(v, name, raw, enums)
}

// AgreeSchema is Agree with the schema given as JSON; name is how
// disagreements and "$ref"s to it are named.
func AgreeSchema(v any, name string, raw []byte, enums Enums) ([]string, error) {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	c := &checker{docs: map[string]map[string]any{name: doc}, enums: enums}
	c.check(name, "$", reflect.TypeOf(v), doc)
	c.finish(name)
	return c.errs, nil
}

type checker struct {
	docs  map[string]map[string]any
	enums Enums
	errs  []string
	// seen is, per enumeration, the values some place of the schema allows.
	seen map[string]map[string]bool
}

var marshaler = reflect.TypeFor[json.Marshaler]()

func (c *checker) errorf(path, format string, args ...any) {
	c.errs = append(c.errs, path+": "+fmt.Sprintf(format, args...))
}

// resolve follows $ref (local "#/$defs/x", or another schema's
// "NAME.schema.json#/$defs/x"), keeping sibling keywords.
func (c *checker) resolve(doc string, node map[string]any) (string, map[string]any) {
	for i := 0; i < 16; i++ {
		ref, ok := node["$ref"].(string)
		if !ok {
			return doc, node
		}
		file, frag, _ := strings.Cut(ref, "#")
		if file != "" {
			file = strings.TrimSuffix(file[strings.LastIndex(file, "/")+1:], ".schema.json")
			if _, ok := c.docs[file]; !ok {
				raw, err := wire.Raw(file)
				if err != nil {
					c.errorf(doc, "unresolvable $ref %q", ref)
					return doc, node
				}
				var d map[string]any
				if json.Unmarshal(raw, &d) != nil {
					c.errorf(doc, "unreadable schema for $ref %q", ref)
					return doc, node
				}
				c.docs[file] = d
			}
			doc = file
		}
		var target any = c.docs[doc]
		for _, part := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
			if part == "" {
				continue
			}
			m, _ := target.(map[string]any)
			target = m[part]
		}
		t, ok := target.(map[string]any)
		if !ok {
			c.errorf(doc, "unresolvable $ref %q", ref)
			return doc, node
		}
		merged := map[string]any{}
		for k, v := range t {
			merged[k] = v
		}
		for k, v := range node {
			if k != "$ref" {
				merged[k] = v
			}
		}
		node = merged
	}
	return doc, node
}

// variant is a subschema and the document its "$ref"s resolve in.
type variant struct {
	doc string
	m   map[string]any
}

// variants is node and every subschema that may describe the same value:
// allOf members, oneOf/anyOf alternatives and if/then/else branches, each
// resolved. Alternatives that only admit null are left out.
func (c *checker) variants(doc string, node map[string]any) []variant {
	doc, node = c.resolve(doc, node)
	out := []variant{{doc, node}}
	for _, key := range []string{"allOf", "oneOf", "anyOf"} {
		list, _ := node[key].([]any)
		for _, sub := range list {
			if m, ok := sub.(map[string]any); ok && !onlyNull(m) {
				out = append(out, c.variants(doc, m)...)
			}
		}
	}
	for _, key := range []string{"then", "else"} {
		if m, ok := node[key].(map[string]any); ok {
			out = append(out, c.variants(doc, m)...)
		}
	}
	return out
}

func onlyNull(m map[string]any) bool {
	t, ok := m["type"].(string)
	return ok && t == "null"
}

// types is the union of "type" over the variants; nil when none says.
func types(vs []variant) []string {
	var out []string
	for _, vr := range vs {
		v := vr.m
		switch t := v["type"].(type) {
		case string:
			out = append(out, t)
		case []any:
			for _, x := range t {
				if s, ok := x.(string); ok {
					out = append(out, s)
				}
			}
		}
		for _, key := range []string{"enum", "const"} {
			vals := []any{v[key]}
			if key == "enum" {
				vals, _ = v[key].([]any)
			} else if _, ok := v[key]; !ok {
				vals = nil
			}
			for _, x := range vals {
				out = append(out, jsonType(x))
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if i := slices.Index(out, "null"); i >= 0 && len(out) > 1 {
		out = slices.Delete(out, i, i+1)
	}
	return out
}

func jsonType(x any) string {
	switch v := x.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if v == float64(int64(v)) {
			return "integer"
		}
		return "number"
	case nil:
		return "null"
	case []any:
		return "array"
	}
	return "object"
}

func (c *checker) check(doc, path string, gt reflect.Type, node map[string]any) {
	for gt.Kind() == reflect.Pointer {
		gt = gt.Elem()
	}
	vs := c.variants(doc, node)
	if gt.Implements(marshaler) || reflect.PointerTo(gt).Implements(marshaler) {
		return
	}
	want := ""
	switch gt.Kind() {
	case reflect.String:
		want = "string"
	case reflect.Bool:
		want = "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "integer"
	case reflect.Float32, reflect.Float64:
		want = "number"
	case reflect.Slice, reflect.Array:
		want = "array"
	case reflect.Map, reflect.Struct:
		want = "object"
	case reflect.Interface:
		return
	}
	if ts := types(vs); len(ts) > 0 && !slices.Contains(ts, want) {
		// An integer schema value fits a float field only if it is a
		// const/enum; a number field declared "integer" is a mismatch.
		c.errorf(path, "Go %s writes JSON %s, schema says %s", gt, want, strings.Join(ts, "|"))
		return
	}
	if values, ok := c.enums[gt.String()]; ok {
		c.checkEnum(path, gt, values, vs)
	}
	switch gt.Kind() {
	case reflect.Slice, reflect.Array:
		if gt.Elem().Kind() == reflect.Uint8 {
			return
		}
		for _, v := range vs {
			if items, ok := v.m["items"].(map[string]any); ok {
				c.check(v.doc, path+"[]", gt.Elem(), items)
			}
		}
	case reflect.Map:
		for _, v := range vs {
			if ap, ok := v.m["additionalProperties"].(map[string]any); ok {
				c.check(v.doc, path+"{}", gt.Elem(), ap)
			}
			if pn, ok := v.m["propertyNames"].(map[string]any); ok {
				if values, ok := c.enums[gt.Key().String()]; ok {
					c.checkEnum(path+" keys", gt.Key(), values, c.variants(v.doc, pn))
				}
			}
		}
	case reflect.Struct:
		c.checkStruct(path, gt, vs)
	}
}

// checkEnum holds one place's allowed values against the Go values: a
// place may narrow the enumeration (a memory metric field allows only the
// memory metrics) but never allow a value Go does not define. The union
// over all places is compared with the Go values at the end (see finish).
func (c *checker) checkEnum(path string, gt reflect.Type, values []string, vs []variant) {
	var allowed []string
	found := false
	for _, vr := range vs {
		v := vr.m
		if e, ok := v["enum"].([]any); ok {
			found = true
			for _, x := range e {
				if s, ok := x.(string); ok {
					allowed = append(allowed, s)
				}
			}
		}
		if x, ok := v["const"].(string); ok {
			found = true
			allowed = append(allowed, x)
		}
	}
	if !found {
		c.errorf(path, "Go %s is an enumeration (%s); the schema does not enumerate it", gt, strings.Join(values, ", "))
		return
	}
	var unknown []string
	for _, a := range allowed {
		if !slices.Contains(values, a) {
			unknown = append(unknown, a)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		c.errorf(path, "schema allows [%s], which Go %s does not define", strings.Join(slices.Compact(unknown), " "), gt)
	}
	if c.seen == nil {
		c.seen = map[string]map[string]bool{}
	}
	name := gt.String()
	if c.seen[name] == nil {
		c.seen[name] = map[string]bool{}
	}
	for _, a := range allowed {
		c.seen[name][a] = true
	}
}

// finish reports, for each enumeration the schema uses, the Go values no
// place of the schema allows.
func (c *checker) finish(name string) {
	types := make([]string, 0, len(c.seen))
	for t := range c.seen {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		var missing []string
		for _, v := range c.enums[t] {
			if !c.seen[t][v] {
				missing = append(missing, v)
			}
		}
		if len(missing) > 0 {
			c.errorf(name, "Go %s values [%s] are allowed nowhere in the schema", t, strings.Join(missing, " "))
		}
	}
}

type jsonField struct {
	name      string
	typ       reflect.Type
	omitEmpty bool
}

// fields lists the JSON members encoding/json writes for struct t,
// flattening embedded structs without a tag.
func fields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				out = append(out, fields(et)...)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name: name, typ: f.Type, omitEmpty: slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")})
	}
	return out
}

func (c *checker) checkStruct(path string, gt reflect.Type, vs []variant) {
	props := map[string]variant{}
	required := map[string]bool{}
	closed := false
	for i, vr := range vs {
		v := vr.m
		if p, ok := v["properties"].(map[string]any); ok {
			for k, s := range p {
				if m, ok := s.(map[string]any); ok {
					if _, seen := props[k]; !seen {
						props[k] = variant{vr.doc, m}
					}
				}
			}
		}
		if ap, ok := v["additionalProperties"].(bool); ok && !ap {
			closed = true
		}
		// Only unconditional requirements: the node itself and its allOf
		// members (variants lists those right after the node).
		if i == 0 || isAllOfMember(vs[0].m, v) {
			if r, ok := v["required"].([]any); ok {
				for _, x := range r {
					if s, ok := x.(string); ok {
						required[s] = true
					}
				}
			}
		}
	}
	if !closed {
		c.errorf(path, "schema admits unknown properties (no \"additionalProperties\": false)")
	}
	seen := map[string]bool{}
	for _, f := range fields(gt) {
		seen[f.name] = true
		fp := path + "." + f.name
		s, ok := props[f.name]
		if !ok {
			c.errorf(fp, "Go field of %s is not in the schema", gt)
			continue
		}
		switch {
		case !f.omitEmpty && !required[f.name]:
			c.errorf(fp, "always written (no omitempty) but the schema does not require it")
		case f.omitEmpty && required[f.name]:
			c.errorf(fp, "may be left out (omitempty) but the schema requires it")
		}
		c.check(s.doc, fp, f.typ, s.m)
	}
	var extra []string
	for k := range props {
		if !seen[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		c.errorf(path+"."+k, "schema property that no field of Go %s writes", gt)
	}
}

func isAllOfMember(root, v map[string]any) bool {
	list, _ := root["allOf"].([]any)
	for _, sub := range list {
		if m, ok := sub.(map[string]any); ok && reflect.DeepEqual(m, v) {
			return true
		}
	}
	return false
}

// WireEnums is ConstEnums of package wire itself, found beside this
// package's source, so a test anywhere can hold its types against the
// enumerations wire defines.
func WireEnums() (Enums, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil, fmt.Errorf("wiretest: cannot locate package wire's source")
	}
	return ConstEnums(filepath.Join(filepath.Dir(file), ".."), "wire")
}

// Require fails t with every disagreement between v's type and schema
// (see Agree), using wire's enumerations, after adjust (if not nil) has
// widened or narrowed them for this document.
func Require(t testing.TB, v any, schema string, adjust func(Enums)) {
	t.Helper()
	enums, err := WireEnums()
	if err != nil {
		t.Fatal(err)
	}
	if adjust != nil {
		adjust(enums)
	}
	errs, err := Agree(v, schema, enums)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Errorf("%T and %s.schema.json disagree:\n%s", v, schema, strings.Join(errs, "\n"))
	}
}
