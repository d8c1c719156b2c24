// Package wiretest proves that a Go record type and the JSON Schema that
// describes it agree field by field, so that the type vigil writes and the
// schema vigil verifies against cannot drift apart unnoticed.
package wiretest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"vigil/internal/wire"
)

// Enums lists, for a named string type, every value the program may write.
// Agree requires the schema to allow exactly these values wherever a field
// has that type.
type Enums map[reflect.Type][]string

// Agree compares the Go type of v (a struct, or a pointer to one) with the
// schema named name, and returns every disagreement, one line each:
//   - a JSON field the schema does not define, or a schema property no Go
//     field writes;
//   - an object schema that admits unknown properties;
//   - a field always written (no omitempty) that the schema does not
//     require, or a field that may be left out (omitempty) that it requires;
//   - a JSON type that differs (string, integer, number, boolean, array,
//     object);
//   - an enumeration that differs from enums.
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
	return c.errs, nil
}

type checker struct {
	docs  map[string]map[string]any
	enums Enums
	errs  []string
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

// variants is node and every subschema that may describe the same value:
// allOf members, oneOf/anyOf alternatives and if/then/else branches, each
// resolved. Alternatives that only admit null are left out.
func (c *checker) variants(doc string, node map[string]any) []map[string]any {
	doc, node = c.resolve(doc, node)
	out := []map[string]any{node}
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
func types(vs []map[string]any) []string {
	var out []string
	for _, v := range vs {
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
	if values, ok := c.enums[gt]; ok {
		c.checkEnum(path, gt, values, vs)
	}
	switch gt.Kind() {
	case reflect.Slice, reflect.Array:
		if gt.Elem().Kind() == reflect.Uint8 {
			return
		}
		for _, v := range vs {
			if items, ok := v["items"].(map[string]any); ok {
				c.check(doc, path+"[]", gt.Elem(), items)
			}
		}
	case reflect.Map:
		for _, v := range vs {
			if ap, ok := v["additionalProperties"].(map[string]any); ok {
				c.check(doc, path+"{}", gt.Elem(), ap)
			}
			if pn, ok := v["propertyNames"].(map[string]any); ok {
				if values, ok := c.enums[gt.Key()]; ok {
					c.checkEnum(path+" keys", gt.Key(), values, c.variants(doc, pn))
				}
			}
		}
	case reflect.Struct:
		c.checkStruct(doc, path, gt, vs)
	}
}

func (c *checker) checkEnum(path string, gt reflect.Type, values []string, vs []map[string]any) {
	var allowed []string
	found := false
	for _, v := range vs {
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
	slices.Sort(allowed)
	allowed = slices.Compact(allowed)
	want := slices.Clone(values)
	slices.Sort(want)
	if !slices.Equal(allowed, want) {
		c.errorf(path, "Go %s values [%s], schema enum [%s]", gt, strings.Join(want, " "), strings.Join(allowed, " "))
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

func (c *checker) checkStruct(doc, path string, gt reflect.Type, vs []map[string]any) {
	props := map[string]map[string]any{}
	required := map[string]bool{}
	closed := false
	for i, v := range vs {
		if p, ok := v["properties"].(map[string]any); ok {
			for k, s := range p {
				if m, ok := s.(map[string]any); ok {
					if _, seen := props[k]; !seen {
						props[k] = m
					}
				}
			}
		}
		if ap, ok := v["additionalProperties"].(bool); ok && !ap {
			closed = true
		}
		// Only unconditional requirements: the node itself and its allOf
		// members (variants lists those right after the node).
		if i == 0 || isAllOfMember(vs[0], v) {
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
		c.check(doc, fp, f.typ, s)
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
