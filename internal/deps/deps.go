// Package deps pins the chosen libraries while the packages that use them are written.
package deps

import (
	_ "github.com/Masterminds/semver/v3"
	_ "github.com/google/go-containerregistry/pkg/registry"
	_ "github.com/google/go-containerregistry/pkg/v1/layout"
	_ "github.com/google/go-containerregistry/pkg/v1/remote"
	_ "github.com/operator-framework/api/pkg/operators/v1alpha1"
	_ "github.com/operator-framework/operator-registry/pkg/registry"
	_ "github.com/spf13/cobra"
	_ "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/kubernetes"
	_ "sigs.k8s.io/controller-runtime/pkg/envtest"
	_ "sigs.k8s.io/kustomize/api/krusty"
	_ "sigs.k8s.io/kustomize/kyaml/filesys"
	_ "sigs.k8s.io/yaml"
)
