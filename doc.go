// Package lvmsrebase embeds the repository's data trees so that one binary carries them:
// the kustomize base/ and overlays/ (kustomize.go) and the fixture images served by
// `lvms-rebase dev-registry` (fixtures.go).
package lvmsrebase
