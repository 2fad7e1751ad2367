package kube

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestConnectErrorsCarryNoCredentials: a kubeconfig server URL with user info and a query
// token appears in neither the error nor the retry log (MicroShift logs both).
func TestConnectErrorsCarryNoCredentials(t *testing.T) {
	var logs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	o := testOptions(&rest.Config{Host: "https://canary-user:canary-pass@127.0.0.1:1/?token=canary-token"})
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	_, err := Connect(ctx, o)
	if err == nil {
		t.Fatal("connected to nothing")
	}
	if s := err.Error() + logs.String(); strings.Contains(s, "canary") || !strings.Contains(s, "127.0.0.1:1") {
		t.Fatalf("error or log carries a credential (or no host):\n%v\n%s", err, logs.String())
	}
}
