package wiretest

import (
	"strings"
	"testing"
)

type color string

type record struct {
	Name   string            `json:"name"`
	Count  int               `json:"count"`
	Ratio  float64           `json:"ratio,omitempty"`
	Tags   []string          `json:"tags"`
	Color  color             `json:"color"`
	ByKind map[color]uint64  `json:"by_kind"`
	Inner  *inner            `json:"inner,omitempty"`
	Extra  map[string]string `json:"-"`
	embedded
}

type inner struct {
	On bool `json:"on"`
}

type embedded struct {
	Flat string `json:"flat"`
}

const good = `{
  "type": "object", "additionalProperties": false,
  "required": ["name", "count", "tags", "color", "by_kind", "flat"],
  "properties": {
    "name": {"type": "string"}, "count": {"type": "integer"}, "ratio": {"type": "number"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "color": {"$ref": "#/$defs/color"},
    "by_kind": {"type": "object", "propertyNames": {"$ref": "#/$defs/color"}, "additionalProperties": {"type": "integer"}},
    "inner": {"type": "object", "additionalProperties": false, "required": ["on"], "properties": {"on": {"type": "boolean"}}},
    "flat": {"type": "string"}
  },
  "$defs": {"color": {"enum": ["red", "blue"]}}
}`

func TestAgree(t *testing.T) {
	enums := Enums{"wiretest.color": {"red", "blue"}}
	for _, tc := range []struct {
		name, schema string
		want         string // substring of a disagreement; "" for none
	}{
		{"agree", good, ""},
		{"field missing from schema", strings.Replace(good, `"flat": {"type": "string"}`, `"flat2": {"type": "string"}`, 1), "$.flat: Go field"},
		{"property no field writes", strings.Replace(good, `"name": {"type": "string"},`, `"name": {"type": "string"}, "gone": {"type": "string"},`, 1), "$.gone: schema property"},
		{"always written, not required", strings.Replace(good, `"name", "count"`, `"name"`, 1), "$.count: always written"},
		{"omitempty but required", strings.Replace(good, `"flat"]`, `"flat", "ratio"]`, 1), "$.ratio: may be left out"},
		{"json type", strings.Replace(good, `"count": {"type": "integer"}`, `"count": {"type": "number"}`, 1), "$.count: Go int writes JSON integer"},
		{"nested type", strings.Replace(good, `"on": {"type": "boolean"}`, `"on": {"type": "string"}`, 1), "$.inner.on:"},
		{"array items", strings.Replace(good, `"items": {"type": "string"}`, `"items": {"type": "integer"}`, 1), "$.tags[]:"},
		{"map values", strings.Replace(good, `"additionalProperties": {"type": "integer"}`, `"additionalProperties": {"type": "string"}`, 1), "$.by_kind{}:"},
		{"enum value Go lacks", strings.Replace(good, `["red", "blue"]`, `["red", "blue", "green"]`, 1), "schema allows [green]"},
		{"enum value schema lacks", strings.Replace(good, `["red", "blue"]`, `["red"]`, 1), "values [blue] are allowed nowhere"},
		{"open object", strings.Replace(good, `"type": "object", "additionalProperties": false,`+"\n  \"required\"", `"type": "object",`+"\n  \"required\"", 1), "$: schema admits unknown properties"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.schema == good && tc.want != "" {
				t.Fatal("the case did not change the schema")
			}
			errs, err := AgreeSchema(record{}, "test", []byte(tc.schema), enums)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(errs) != 0 {
					t.Fatalf("disagreements on a matching schema:\n%s", strings.Join(errs, "\n"))
				}
				return
			}
			if !strings.Contains(strings.Join(errs, "\n"), tc.want) {
				t.Fatalf("got %q, want one containing %q", errs, tc.want)
			}
		})
	}
}
