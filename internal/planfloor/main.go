// Command planfloor does what no plan of a spec file can avoid, and
// nothing more: it reads the file, parses it with yaml.v3 into nodes, as
// reconcile's loader does, and hashes it with SHA-256. reconcile's CLI
// benchmark runs it, one process per run, as the floor that `reconcile
// plan` is measured against.
//
// Usage: planfloor FILE
package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: planfloor FILE")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "planfloor:", err)
		os.Exit(1)
	}
	docs := 0
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			fmt.Fprintf(os.Stderr, "planfloor: %s: %v\n", os.Args[1], err)
			os.Exit(1)
		}
		docs++
	}
	fmt.Printf("%x %d\n", sha256.Sum256(data), docs)
}
