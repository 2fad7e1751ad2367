//go:build tools

// Package tools pins the tools `make verify` builds from this module (as kind's hack/tools
// does): apidiff for the applier's API compatibility check and golangci-lint for the linters.
package tools

import (
	_ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
	_ "golang.org/x/exp/cmd/apidiff"
)
