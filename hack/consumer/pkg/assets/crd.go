// Package assets models MicroShift's pkg/assets/crd.go: MicroShift applies the storage CRDs
// itself, under its own field manager, before any component starts. The applier finds them
// applied by another field manager and leaves them alone.
package assets

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	embedded "github.com/openshift/microshift/assets"
)

// crds are the storage entries of MicroShift main's crds list, unchanged by the patch.
var crds = []string{
	"components/lvms/topolvm.io_logicalvolumes.yaml",
	"components/lvms/lvm.topolvm.io_lvmclusters.yaml",
	"components/lvms/lvm.topolvm.io_lvmvolumegroupnodestatuses.yaml",
	"components/lvms/lvm.topolvm.io_lvmvolumegroups.yaml",
	"components/csi-snapshot-controller/volumesnapshotclasses.yaml",
	"components/csi-snapshot-controller/volumesnapshotcontents.yaml",
	"components/csi-snapshot-controller/volumesnapshots.yaml",
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ApplyCRDs creates each absent CRD under the "microshift" field manager (an Update-operation
// entry, as library-go's resourceapply leaves; MicroShift also updates a changed spec, which
// does not matter here: the applier leaves the CRD alone either way).
func ApplyCRDs(ctx context.Context, kubeconfigPath string) error {
	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		return err
	}
	client := dynamic.NewForConfigOrDie(restCfg).Resource(crdResource)
	for _, name := range crds {
		data, err := embedded.Asset(name)
		if err != nil {
			return fmt.Errorf("error getting asset %s: %v", name, err)
		}
		crd := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &crd.Object); err != nil {
			return fmt.Errorf("asset %s: %w", name, err)
		}
		_, err = client.Create(ctx, crd, metav1.CreateOptions{FieldManager: "microshift"})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("applying CRD %s: %w", name, err)
		}
	}
	return nil
}
