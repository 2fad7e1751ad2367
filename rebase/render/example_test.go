package render_test

import (
	"fmt"
	"os"

	lvmsrebase "github.com/lvms-rebase/lvms-rebase"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/render"
	"github.com/lvms-rebase/lvms-rebase/rebase/tree"
)

// Example shows the write path of a rebase: render the era, add the lock (which records the
// sha256 of every other file), and swap the whole set into the checkout in one atomic Write.
// A second Write of the same set changes nothing.
func Example() {
	e, err := era.For("4.18")
	if err != nil {
		panic(err)
	}
	// The LVMS objects would come from bundle.Translate; the snapshot overlay needs the
	// operator's assets (snapshot.Translate) to patch, so this example renders the LVMS part
	// alone: MicroShift's own objects of the era.
	part, err := render.RenderPart(render.Input{Era: e, Kustomize: lvmsrebase.Kustomize}, render.LVMSPart)
	if err != nil {
		panic(err)
	}
	out, err := render.Join(e, nil, part)
	if err != nil {
		panic(err)
	}
	files := out.Map()

	l := lock.New()
	l.ToolVersion, l.OCP, l.Era = "v0.0.0-example", "4.18", e.Name
	l.Bundle = lock.Image{Ref: "registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4", Digest: "sha256:" + fmt.Sprintf("%064d", 1)}
	l.Payloads = []lock.Payload{{Arch: "x86_64", Ref: "quay.io/openshift-release-dev/ocp-release:4.18.12-x86_64",
		Digest: "sha256:" + fmt.Sprintf("%064d", 2), Version: "4.18.12"}}
	l.SnapshotAssets = lock.SnapshotAssets{Source: "example", Commit: "0123abcd"}
	l.SetFiles(files)
	lb, err := l.Marshal()
	if err != nil {
		panic(err)
	}
	files[lock.Path] = lb

	root, err := os.MkdirTemp("", "microshift-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	plan, err := tree.Write(root, files, out.ManagedDirs)
	if err != nil {
		panic(err)
	}
	fmt.Println("added:", len(plan.Add))
	for _, p := range plan.Add[:3] {
		fmt.Println(" ", p)
	}
	plan, err = tree.Write(root, files, out.ManagedDirs)
	if err != nil {
		panic(err)
	}
	fmt.Println("second run changed:", plan.Changed())
	// Output:
	// added: 4
	//   assets/components/lvms/lvms_default-lvmcluster.yaml
	//   assets/components/lvms/topolvm-openshift-storage_namespace.yaml
	//   assets/components/lvms/topolvm_default-storage-class.yaml
	// second run changed: false
}
