//go:build linux

package bench

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"vigil/internal/wire"
)

// Payload sizes by name (bytes per worker file and per span event).
var payloadSizes = map[string]int{"small": 128, "medium": 4096, "large": 65536}

// Defaults for cells that do not say otherwise. Concurrency 1 keeps the file
// work sequential, so a cell's only variable is its event count; kc1000,
// corner and corner-lite set concurrency explicitly.
const (
	DefaultConcurrency  = 1
	DefaultPayloadBytes = 128
)

func preset(name string, kernel, span, conc, payload int) wire.Cell {
	return wire.Cell{Name: name, KernelEvents: kernel, SpanEvents: span, Concurrency: conc, PayloadBytes: payload}
}

// Presets are the original study's cells.
var Presets = map[string]wire.Cell{
	"control":     preset("control", 0, 0, DefaultConcurrency, DefaultPayloadBytes),
	"k100":        preset("k100", 100, 0, DefaultConcurrency, DefaultPayloadBytes),
	"k500":        preset("k500", 500, 0, DefaultConcurrency, DefaultPayloadBytes),
	"x500":        preset("x500", 500, 0, DefaultConcurrency, DefaultPayloadBytes),
	"k1000":       preset("k1000", 1000, 0, DefaultConcurrency, DefaultPayloadBytes),
	"x1000":       preset("x1000", 1000, 0, DefaultConcurrency, DefaultPayloadBytes),
	"s100":        preset("s100", 0, 100, DefaultConcurrency, DefaultPayloadBytes),
	"s500":        preset("s500", 0, 500, DefaultConcurrency, DefaultPayloadBytes),
	"s1000":       preset("s1000", 0, 1000, DefaultConcurrency, DefaultPayloadBytes),
	"kc1000":      preset("kc1000", 1000, 0, 16, DefaultPayloadBytes),
	"corner":      preset("corner", 100, 100, 4, 65536),
	"corner-lite": preset("corner-lite", 1000, 1000, 8, 65536),
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	out := make([]string, 0, len(Presets))
	for n := range Presets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ParseCellSpec parses a custom cell "name:kernel=N,span=M,conc=C,payload=B"
// (payload as bytes or small/medium/large). Omitted keys take the defaults.
func ParseCellSpec(spec string) (wire.Cell, error) {
	name, kv, ok := strings.Cut(spec, ":")
	name = strings.TrimSpace(name)
	if !ok || !validName(name) {
		return wire.Cell{}, fmt.Errorf("--cell %q: want NAME:kernel=N,span=M,conc=C,payload=B with NAME of letters, digits, '-', '_', '.'", spec)
	}
	c := preset(name, 0, 0, DefaultConcurrency, DefaultPayloadBytes)
	for _, part := range strings.Split(kv, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return wire.Cell{}, fmt.Errorf("--cell %q: %q is not key=value", spec, part)
		}
		var n int
		var err error
		if k == "payload" {
			n, err = parsePayload(v)
		} else {
			n, err = strconv.Atoi(v)
		}
		if err != nil || n < 0 {
			return wire.Cell{}, fmt.Errorf("--cell %q: %q is not KEY=N with N a non-negative number", spec, part)
		}
		switch k {
		case "kernel":
			c.KernelEvents = n
		case "span":
			c.SpanEvents = n
		case "conc":
			if n < 1 {
				return wire.Cell{}, fmt.Errorf("--cell %q: conc must be at least 1", spec)
			}
			c.Concurrency = n
		case "payload":
			c.PayloadBytes = n
		default:
			return wire.Cell{}, fmt.Errorf("--cell %q: unknown key %q (want kernel, span, conc, payload)", spec, k)
		}
	}
	return c, nil
}

func parsePayload(v string) (int, error) {
	if n, ok := payloadSizes[v]; ok {
		return n, nil
	}
	return strconv.Atoi(v)
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// ResolveCells turns --cells names and --cell custom specs into the plan's
// cells, in the order given (names first). A custom cell may be named in
// --cells too; it is listed once. Names must be unique.
func ResolveCells(names []string, customs []string) ([]wire.Cell, error) {
	custom := map[string]wire.Cell{}
	var customOrder []string
	for _, spec := range customs {
		c, err := ParseCellSpec(spec)
		if err != nil {
			return nil, err
		}
		if _, dup := custom[c.Name]; dup {
			return nil, fmt.Errorf("--cell %q: cell %s defined twice", spec, c.Name)
		}
		if _, clash := Presets[c.Name]; clash {
			return nil, fmt.Errorf("--cell %q: %q is a preset name; choose another", spec, c.Name)
		}
		custom[c.Name] = c
		customOrder = append(customOrder, c.Name)
	}
	var out []wire.Cell
	seen := map[string]bool{}
	add := func(c wire.Cell) error {
		if seen[c.Name] {
			return fmt.Errorf("--cells: %s listed twice", c.Name)
		}
		seen[c.Name] = true
		out = append(out, c)
		return nil
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if c, ok := Presets[n]; ok {
			if err := add(c); err != nil {
				return nil, err
			}
		} else if c, ok := custom[n]; ok {
			if err := add(c); err != nil {
				return nil, err
			}
		} else {
			return nil, fmt.Errorf("--cells: unknown cell %q (presets: %s; or define it with --cell)", n, strings.Join(PresetNames(), ", "))
		}
	}
	for _, n := range customOrder {
		if !seen[n] {
			_ = add(custom[n])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--cells: no cells selected")
	}
	return out, nil
}
