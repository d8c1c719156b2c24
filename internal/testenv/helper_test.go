//go:build linux

package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	Main(m, func(name string, args []string) error {
		switch name {
		case "echo":
			fmt.Println(strings.Join(args, " "))
			return nil
		case "exit":
			return ExitCode(7)
		}
		return errors.New("no such helper")
	})
}

// TestHelperCommand: a re-run test binary runs the named helper with its
// arguments, not the tests, and its outcome becomes the exit status.
func TestHelperCommand(t *testing.T) {
	out, err := HelperCommand(t, "echo", "a", "b c").Output()
	if err != nil || string(out) != "a b c\n" {
		t.Fatalf("echo: %q, %v", out, err)
	}
	for name, want := range map[string]int{"exit": 7, "nope": 1} {
		var stderr strings.Builder
		cmd := HelperCommand(t, name)
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != want {
			t.Errorf("%s: %v, want exit %d", name, err, want)
		}
		if name == "nope" && !strings.Contains(stderr.String(), "helper nope: no such helper") {
			t.Errorf("nope: stderr %q", stderr.String())
		}
	}
	if err := exec.Command("env", HelperEnv(ExecFromThread), os.Args[0]).Run(); err != nil {
		t.Errorf("%s: %v", ExecFromThread, err)
	}
}

func TestWriteReadFiles(t *testing.T) {
	dir := t.TempDir()
	if err := WriteReadFiles(dir, "x", 10, 3); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 10 || ents[0].Name() != "x000000" || ents[9].Name() != "x000009" {
		t.Fatalf("files %v", ents)
	}
	if err := WriteReadFiles(filepath.Join(dir, "missing"), "x", 1, 1); err == nil {
		t.Fatal("no error for a missing directory")
	}
}
