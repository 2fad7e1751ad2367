package kube

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// testOptions are the applier's defaults for a server at cfg, with a silent logger.
func testOptions(cfg *rest.Config) Options {
	return Options{
		RESTConfig:    cfg,
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		WaitTimeout:   5 * time.Minute,
		DeleteTimeout: 2 * time.Minute,
		PollInterval:  time.Second,
	}
}

func TestContains(t *testing.T) {
	live := map[string]any{"a": int64(1), "b": []any{map[string]any{"x": "y", "z": true}}, "c": map[string]any{}}
	tests := []struct {
		want any
		ok   bool
	}{
		{map[string]any{"a": float64(1)}, true},
		{map[string]any{"a": int64(2)}, false},
		{map[string]any{"b": []any{map[string]any{"x": "y"}}}, true},
		{map[string]any{"b": []any{map[string]any{"x": "y"}, map[string]any{}}}, false},
		{map[string]any{"d": map[string]any{}}, true},
		{map[string]any{"d": nil, "e": []any{}}, true},
		{map[string]any{"d": "x"}, false},
		{map[string]any{"c": map[string]any{"k": "v"}}, false},
	}
	for i, tc := range tests {
		if got := contains(live, tc.want); got != tc.ok {
			t.Errorf("%d: contains(%v) = %v, want %v", i, tc.want, got, tc.ok)
		}
	}
}

// rolloutComplete follows `kubectl rollout status`: a Deployment mid-rollout, whose old pod is
// still the available one, is not ready.
func TestRolloutComplete(t *testing.T) {
	obj := func(kind string, gen int64, spec, status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": kind, "spec": spec, "status": status}}
		u.SetGeneration(gen)
		return u
	}
	tests := []struct {
		name string
		u    *unstructured.Unstructured
		want bool
	}{
		{name: "deployment done", want: true, u: obj("Deployment", 2, map[string]any{"replicas": int64(1)},
			map[string]any{"observedGeneration": int64(2), "replicas": int64(1), "updatedReplicas": int64(1), "availableReplicas": int64(1)})},
		{name: "deployment generation not observed", u: obj("Deployment", 3, map[string]any{"replicas": int64(1)},
			map[string]any{"observedGeneration": int64(2), "replicas": int64(1), "updatedReplicas": int64(1), "availableReplicas": int64(1)})},
		{name: "deployment old replica still serving", u: obj("Deployment", 2, map[string]any{"replicas": int64(1)},
			map[string]any{"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(1), "availableReplicas": int64(1)})},
		{name: "deployment updated pod not available", u: obj("Deployment", 2, map[string]any{"replicas": int64(1)},
			map[string]any{"observedGeneration": int64(2), "replicas": int64(1), "updatedReplicas": int64(1), "availableReplicas": int64(0)})},
		{name: "daemonset done", want: true, u: obj("DaemonSet", 1, map[string]any{},
			map[string]any{"observedGeneration": int64(1), "desiredNumberScheduled": int64(1), "updatedNumberScheduled": int64(1), "numberAvailable": int64(1)})},
		{name: "daemonset not updated", u: obj("DaemonSet", 1, map[string]any{},
			map[string]any{"observedGeneration": int64(1), "desiredNumberScheduled": int64(1), "updatedNumberScheduled": int64(0), "numberAvailable": int64(1)})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, state := rolloutComplete(tc.u); got != tc.want {
				t.Errorf("rolloutComplete = %v (%s), want %v", got, state, tc.want)
			}
		})
	}
}
