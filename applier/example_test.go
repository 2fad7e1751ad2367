package applier_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/lvms-rebase/lvms-rebase/applier"
)

// startCSIPlugin is what MicroShift's pkg/components/storage.go and csi-snapshot-controller.go
// shrink to: one Apply for both components, a typed storage error that does not stop MicroShift,
// and the lvmd hot-reload watcher for the LVMS era. assetsFS is MicroShift's embedded assets/
// tree (its embed.FS); kubeconfigPath is the admin kubeconfig MicroShift wrote.
func startCSIPlugin(ctx context.Context, assetsFS fs.FS, kubeconfigPath string) error {
	storage, err := applier.LoadStorageConfig(applier.DefaultConfigFile, applier.DefaultConfigDropIn)
	if err != nil {
		return err // MicroShift has already validated its config; this cannot normally happen
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		return err
	}
	res, err := applier.Apply(ctx, applier.Options{
		Assets:     assetsFS,
		Storage:    storage,
		RESTConfig: restCfg,
		Logger:     slog.Default(),
	})
	var lvmdErr *applier.LvmdError
	switch {
	case errors.As(err, &lvmdErr):
		// Only the storage driver failed; the snapshot controller is applied. Log and go on.
		slog.Error("storage driver not deployed: fix the lvmd config", "file", lvmdErr.File, "field", lvmdErr.Field, "error", lvmdErr)
	case err != nil:
		return err
	}
	for _, c := range res.Components {
		slog.Info("storage component", "name", c.Name, "enabled", c.Enabled, "error", c.Err)
	}
	if res.Era == applier.EraLVMS && res.Plan.Storage {
		go func() {
			if err := applier.WatchLvmd(ctx, applier.WatchOptions{}); err != nil {
				slog.Error("lvmd config is not hot-reloaded", "error", err)
			}
		}()
	}
	return nil
}

// The call MicroShift's startCSIPlugin makes at start-up.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	assetsFS := os.DirFS("/usr/share/microshift/assets") // MicroShift: its embed.FS
	if err := startCSIPlugin(ctx, assetsFS, "/var/lib/microshift/resources/kubeadmin/kubeconfig"); err != nil {
		slog.Error("storage not started", "error", err)
	}
}
