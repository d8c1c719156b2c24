package workload

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// tool is one function the agent can execute for the model.
type tool struct {
	description string
	run         func(root string, args map[string]string) (string, error)
}

// tools are the agent's tools; paths are relative to the workspace root
// and may not leave it.
var tools = map[string]tool{
	"write_file": {"Write text to a file in the workspace, creating directories as needed.", writeFileTool},
	"read_file":  {"Read a text file from the workspace.", readFileTool},
}

func workspacePath(root, rel string) (string, error) {
	if rel == "" || filepath.IsAbs(rel) {
		return "", fmt.Errorf("path %q must be relative to the workspace", rel)
	}
	p := filepath.Join(root, rel)
	if p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q leaves the workspace", rel)
	}
	return p, nil
}

func writeFileTool(root string, args map[string]string) (string, error) {
	p, err := workspacePath(root, args["path"])
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(p, []byte(args["content"]), 0o644); err != nil {
		return "", err
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(args["content"]), args["path"]), nil
}

func readFileTool(root string, args map[string]string) (string, error) {
	p, err := workspacePath(root, args["path"])
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
