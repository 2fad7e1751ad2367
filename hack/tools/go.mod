// Tools for `make verify`, pinned here so that neither the root module nor the applier module
// requires them: golang.org/x/exp/cmd/apidiff (the applier's API compatibility check).
module github.com/lvms-rebase/lvms-rebase/hack/tools

go 1.26.3

require golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4

require (
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/tools v0.52.1-0.20261106145633-d407941a339a // indirect
)
