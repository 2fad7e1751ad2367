// Wrapper module used only by hack/build-control-plane.sh to build kube-apiserver and etcd from the
// Go module proxy. It is a separate module so the main module never depends on k8s.io/kubernetes; the
// script copies this directory to a temporary directory and pins the versions there.
module github.com/lvms-rebase/lvms-rebase/hack/control-plane

go 1.26.0
