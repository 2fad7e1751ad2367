//go:build tools

// Package tools pins the tools `make verify` runs with `go run` from this module.
package tools

import _ "golang.org/x/exp/cmd/apidiff"
