package atomicfile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"vigil/internal/atomicfile"
)

// Write replaces a file whole; Create refuses to replace one.
func Example() {
	dir, err := os.MkdirTemp("", "atomicfile-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "summary.json")

	if err := atomicfile.Write(path, []byte(`{"v":1}`)); err != nil {
		panic(err)
	}
	if err := atomicfile.Write(path, []byte(`{"v":2}`)); err != nil {
		panic(err)
	}
	data, _ := os.ReadFile(path)
	fmt.Println(string(data))

	err = atomicfile.Create(path, []byte("key"), 0o600)
	fmt.Println("create over an existing file fails:", err != nil)

	ents, _ := os.ReadDir(dir)
	fmt.Println(len(ents), "file in the directory, no temporary left")
	// Output:
	// {"v":2}
	// create over an existing file fails: true
	// 1 file in the directory, no temporary left
}

func ExampleCheckTarget() {
	dir, err := os.MkdirTemp("", "atomicfile-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	fmt.Println(atomicfile.CheckTarget(dir))
	fmt.Println(atomicfile.CheckTarget(filepath.Join(dir, "new.txt")))
	// Output:
	// is a directory
	// <nil>
}
