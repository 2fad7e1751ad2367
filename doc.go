// Package lvmsrebase embeds the kustomize base/ and overlays/ (kustomize.go) so that the
// lvms-rebase binary carries them. Test fixtures (testdata/) are deliberately not embedded:
// tests and hack/dev-registry read them from the checkout (internal/testing/testregistry).
package lvmsrebase
