package components

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/go-logr/logr"
	"github.com/lvms-rebase/lvms-rebase/applier"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	embedded "github.com/openshift/microshift/assets"
	"github.com/openshift/microshift/pkg/config"
	"github.com/openshift/microshift/pkg/version"
)

// startCSIPlugin deploys the storage driver (LVMS) and the CSI snapshot controller from the
// embedded assets with the storage applier. An invalid lvmd.yaml fails only the storage driver:
// it is logged with the file and field, and MicroShift goes on starting.
func startCSIPlugin(ctx context.Context, cfg *config.Config, kubeconfigPath string) error {
	storage := applier.StorageConfig{Driver: string(cfg.Storage.Driver)}
	for _, c := range cfg.Storage.OptionalCSIComponents {
		storage.OptionalCSIComponents = append(storage.OptionalCSIComponents, string(c))
	}
	// Community builds should deploy upstream CSI drivers, e.g. TopoLVM, etc.
	// LVMS is not available without pull-secret access.
	if version.Get().BuildVariant == version.BuildVariantCommunity {
		klog.Warningf("CSI driver deployment is disabled for community builds")
		storage.Driver = applier.DriverNone
	}

	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		return err
	}
	// The applier logs through log/slog; this hands it klog (info as V(0), debug as V(4)).
	logger := slog.New(logr.ToSlogHandler(klog.Background()))
	opts := applier.Options{
		Assets:     embedded.FS(),
		Storage:    storage,
		RESTConfig: restCfg,
		Logger:     logger,
	}
	testOverrides(&opts) // consumer-only
	res, err := applier.Apply(ctx, opts)
	if res == nil {
		return err // invalid storage configuration or assets: nothing was applied
	}
	for _, c := range res.Components {
		var lvmdErr *applier.LvmdError
		switch {
		case c.Err == nil:
		case c.Name == applier.StorageComponent && errors.As(c.Err, &lvmdErr):
			klog.Errorf("CSI driver not deployed, fix %s (%s): %v", lvmdErr.File, lvmdErr.Field, lvmdErr)
		default:
			return fmt.Errorf("%s: %w", c.Name, c.Err)
		}
	}

	if res.Era == applier.EraLVMS && res.Plan.Storage {
		watch := applier.WatchOptions{Logger: logger}
		testWatchOverrides(&watch) // consumer-only
		go func() {
			if err := applier.WatchLvmd(ctx, watch); err != nil {
				klog.Errorf("lvmd config is not hot-reloaded: %v", err)
			}
		}()
	}
	return nil
}
