package components

import (
	"bytes"
	"context"
	"encoding/pem"
	"flag"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lvms-rebase/lvms-rebase/applier"
	"github.com/lvms-rebase/lvms-rebase/applier/controlplanetest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"

	"github.com/openshift/microshift/pkg/assets"
	"github.com/openshift/microshift/pkg/config"
)

// apiProxy is a TLS reverse proxy in front of kube-apiserver that records every request's
// method, so a test can tell whether a start wrote anything. The kubeconfig startCSIPlugin reads
// points at it, as MicroShift's points at its API server.
type apiProxy struct {
	mu       sync.Mutex
	mutating []string
}

func (p *apiProxy) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.mutating
	p.mutating = nil
	return out
}

// startProxy serves cfg's API server through a counting proxy and writes a kubeconfig for it.
func startProxy(t *testing.T, cfg *rest.Config) (*apiProxy, string) {
	t.Helper()
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &apiProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			p.mu.Lock()
			p.mutating = append(p.mutating, r.Method+" "+r.URL.Path)
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["microshift"] = &clientcmdapi.Cluster{
		Server:                   srv.URL,
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
	}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["microshift"] = &clientcmdapi.Context{Cluster: "microshift", AuthInfo: "admin"}
	kc.CurrentContext = "microshift"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return p, path
}

// syncBuffer collects klog's output.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// captureKlog sends klog's output to a buffer.
func captureKlog(t *testing.T) *syncBuffer {
	t.Helper()
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for k, v := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL", "v": "0"} {
		if err := fs.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	buf := &syncBuffer{}
	klog.SetOutput(buf)
	return buf
}

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	lvmClusters = schema.GroupVersionResource{Group: "lvm.topolvm.io", Version: "v1alpha1", Resource: "lvmclusters"}
	crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// MicroShift after the documented patch, at release-4.17's requirements, against a real
// kube-apiserver: MicroShift's own CRD start-up, then startCSIPlugin three times — a first start
// deploys both components and logs through klog, a restart sends no mutating request, and a bad
// lvmd.yaml fails only the storage driver while the snapshot controller is still put back.
func TestStartCSIPlugin(t *testing.T) {
	restCfg := controlplanetest.Start(t)
	proxy, kubeconfig := startProxy(t, restCfg)
	logs := captureKlog(t)
	dir := t.TempDir()
	lvmdPath := filepath.Join(dir, "etc", "lvmd.yaml")
	if err := os.MkdirAll(filepath.Dir(lvmdPath), 0o755); err != nil {
		t.Fatal(err)
	}
	testOverrides = func(o *applier.Options) {
		o.LvmdPath, o.RuntimeLvmdPath = lvmdPath, filepath.Join(dir, "lvms", "lvmd.yaml")
		o.VolumeGroups = applier.StaticVolumeGroups{"rhel"}
		o.Arch = "x86_64"
	}
	testWatchOverrides = func(o *applier.WatchOptions) {
		o.LvmdPath, o.RuntimeLvmdPath = lvmdPath, filepath.Join(dir, "lvms", "lvmd.yaml")
		o.VolumeGroups = applier.StaticVolumeGroups{"rhel"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dyn := dynamic.NewForConfigOrDie(restCfg)
	cfg := &config.Config{}

	if err := assets.ApplyCRDs(ctx, kubeconfig); err != nil {
		t.Fatal(err)
	}
	proxy.take()
	if err := startCSIPlugin(ctx, cfg, kubeconfig); err != nil {
		t.Fatalf("first start: %v", err)
	}
	if muts := proxy.take(); len(muts) < 20 {
		t.Errorf("first start sent %d writes, want every object created: %v", len(muts), muts)
	}
	mustExist(t, dyn.Resource(lvmClusters).Namespace("openshift-storage"), "lvms")
	mustExist(t, dyn.Resource(deployments).Namespace("openshift-storage"), "lvms-operator")
	mustExist(t, dyn.Resource(deployments).Namespace("kube-system"), "csi-snapshot-controller")
	crd := mustExist(t, dyn.Resource(crdResource), "lvmclusters.lvm.topolvm.io")
	for _, mf := range crd.GetManagedFields() {
		if mf.Manager == applier.FieldManager {
			t.Errorf("the applier took over MicroShift's CRD: %+v", mf)
		}
	}
	if out := logs.String(); !strings.Contains(out, "created") || !strings.Contains(out, "lvms-operator") {
		t.Errorf("klog did not receive the applier's records:\n%s", out)
	}

	if err := startCSIPlugin(ctx, cfg, kubeconfig); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if muts := proxy.take(); len(muts) != 0 {
		t.Errorf("restart sent %d mutating requests: %v", len(muts), muts)
	}

	badLvmdFailsOnlyStorage(ctx, t, dyn, cfg, kubeconfig, lvmdPath, logs)
}

func badLvmdFailsOnlyStorage(ctx context.Context, t *testing.T, dyn dynamic.Interface, cfg *config.Config, kubeconfig, lvmdPath string, logs *syncBuffer) {
	t.Helper()
	if err := os.WriteFile(lvmdPath, []byte("device-classes:\n- name: default\n  volume-group: rhel\n  default: true\n  spare-gb: -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	operator := dyn.Resource(deployments).Namespace("openshift-storage")
	snapshot := dyn.Resource(deployments).Namespace("kube-system")
	for _, c := range []dynamic.ResourceInterface{operator, snapshot} {
		name := "lvms-operator"
		if c == snapshot {
			name = "csi-snapshot-controller"
		}
		if err := c.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := startCSIPlugin(ctx, cfg, kubeconfig); err != nil {
		t.Fatalf("a bad lvmd.yaml must not fail the start: %v", err)
	}
	mustExist(t, snapshot, "csi-snapshot-controller")
	if _, err := operator.Get(ctx, "lvms-operator", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("storage was applied with an invalid lvmd.yaml (get: %v)", err)
	}
	out := logs.String()
	if !slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool {
		return strings.Contains(l, "CSI driver not deployed, fix "+lvmdPath) && strings.Contains(l, "spare-gb")
	}) {
		t.Errorf("no klog error naming %s and the field:\n%s", lvmdPath, out)
	}
}

func mustExist(t *testing.T, ri dynamic.ResourceInterface, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := ri.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return u
}
