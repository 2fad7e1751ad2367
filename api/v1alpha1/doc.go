// Package v1alpha1 declares lvms-rebase's machine-readable output: every document the commands
// print with -o json or -o yaml (docs/output.md), once. The library's own structs are free to
// change; what a script reads is these types, filled from the library by internal/output.
//
// Each document is one object shaped as kubectl prints objects: apiVersion and kind first
// (TypeMeta), then the command's fields.
//
// Versioning: within v1alpha1 fields may be added in any release; a field is renamed, removed
// or changes its type or unit only together with a new API version, stated in docs/output.md
// and in the README. JSON and YAML carry the same object: JSON keeps the field order of these
// types (apiVersion and kind first), YAML sorts keys as kubectl's YAML does.
package v1alpha1
