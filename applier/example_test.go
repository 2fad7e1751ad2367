package applier_test

import (
	"context"
	"log/slog"
	"os"
	"time"

	"k8s.io/client-go/rest"

	"github.com/lvms-rebase/lvms-rebase/applier"
)

// MicroShift's start-up: embedded assets, the storage section of its config, and the
// kube-apiserver it just started (Apply retries until it answers).
func ExampleApply() {
	storage, err := applier.ReadStorageConfig("/etc/microshift/config.yaml")
	if err != nil {
		slog.Error("bad storage config", "error", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := applier.Apply(ctx, applier.Options{
		Assets:     os.DirFS("/usr/share/microshift/assets"),
		Storage:    storage,
		RESTConfig: &rest.Config{Host: "https://127.0.0.1:6443"},
		Wait:       true,
	})
	if err != nil {
		slog.Error("storage not deployed", "error", err)
		return
	}
	slog.Info("storage applied", "era", res.Era, "created", len(res.Created), "updated", len(res.Updated), "unchanged", len(res.Unchanged))
}
