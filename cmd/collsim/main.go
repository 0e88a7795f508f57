// Command collsim simulates collective communication algorithms on modelled
// machines. See README.md, or run `collsim --help`.
package main

import (
	"os"

	"github.com/collsim/collsim/cmd/collsim/internal/root"
)

func main() { os.Exit(root.Main(os.Args[1:], os.Stdout, os.Stderr)) }
