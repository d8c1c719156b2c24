//go:build linux

package capture

import (
	"testing"

	"github.com/cilium/ebpf/btf"

	"vigil/internal/testenv"
)

// TestProjectedKernelTypes checks the projection of the kernel's BTF against
// an independent, complete parse of it: every projected member must sit at
// the same offset and have the same size as in the kernel, and every member
// the programs read must be there.
func TestProjectedKernelTypes(t *testing.T) {
	testenv.RequireRoot(t)
	kt, err := kernelTypes.get()
	if err != nil {
		t.Fatal(err)
	}
	full, err := btf.LoadKernelSpec()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string][]string{}
	for typ, err := range kt.All() {
		if err != nil {
			t.Fatal(err)
		}
		s, ok := typ.(*btf.Struct)
		if !ok || s.Name == "" {
			continue
		}
		var ks *btf.Struct
		if err := full.TypeByName(s.Name, &ks); err != nil {
			t.Fatalf("projected struct %s: %v", s.Name, err)
		}
		if ks.Size != s.Size {
			t.Errorf("struct %s: size %d, kernel %d", s.Name, s.Size, ks.Size)
		}
		for _, m := range s.Members {
			off, mt, ok := findMember(ks, m.Name)
			if !ok {
				t.Errorf("%s.%s: not in the kernel", s.Name, m.Name)
				continue
			}
			if off != m.Offset {
				t.Errorf("%s.%s: offset %d bits, kernel %d", s.Name, m.Name, m.Offset, off)
			}
			want, err1 := btf.Sizeof(mt)
			got, err2 := btf.Sizeof(m.Type)
			if _, isStruct := btf.UnderlyingType(m.Type).(*btf.Struct); !isStruct && (err1 != nil || err2 != nil || want != got) {
				t.Errorf("%s.%s: size %d (%v), kernel %d (%v)", s.Name, m.Name, got, err2, want, err1)
			}
			seen[s.Name] = append(seen[s.Name], m.Name)
		}
	}
	for st, fields := range map[string][]string{
		"task_struct":   {"pid", "tgid", "exit_code", "mm", "signal", "cgroups"},
		"cgroup":        {"self", "kn"},
		"kernfs_node":   {"id"},
		"css_set":       {"dfl_cgrp"},
		"linux_binprm":  {"filename"},
		"mm_struct":     {"arg_start"},
		"signal_struct": {"live"},
	} {
		for _, f := range fields {
			found := false
			for _, g := range seen[st] {
				found = found || g == f
			}
			if !found {
				t.Errorf("projection lacks %s.%s (has %v)", st, f, seen[st])
			}
		}
	}
}

// findMember looks name up in s, inside anonymous members too, and returns
// its offset from the start of s.
func findMember(s btf.Type, name string) (btf.Bits, btf.Type, bool) {
	var members []btf.Member
	switch c := btf.UnderlyingType(s).(type) {
	case *btf.Struct:
		members = c.Members
	case *btf.Union:
		members = c.Members
	}
	for _, m := range members {
		if m.Name == name {
			return m.Offset, m.Type, true
		}
		if m.Name != "" {
			continue
		}
		if off, typ, ok := findMember(m.Type, name); ok {
			return m.Offset + off, typ, true
		}
	}
	return 0, nil, false
}
