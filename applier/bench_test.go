package applier

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/applier/controlplanetest"
)

// BenchmarkFirstApply compares a first apply of the LVMS-era assets by the applier with
// `kubectl apply --server-side` of the same rendered objects (CRDs, wait Established, the rest).
// Each iteration gets a fresh control plane; its start-up is not timed.
// Run: make control-plane && go test ./applier -run '^$' -bench FirstApply -benchtime 3x
func BenchmarkFirstApply(b *testing.B) {
	for _, era := range []string{"4.17", "4.18"} {
		b.Run(era+"/applier", func(b *testing.B) {
			o := benchOptions(b, era)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				cp := startCP(b)
				o.RESTConfig = cp.Config
				os.Remove(o.RuntimeLvmdPath)
				b.StartTimer()
				if _, err := Apply(context.Background(), o); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				stopCP(b, cp)
				b.StartTimer()
			}
		})
		b.Run(era+"/kubectl", func(b *testing.B) {
			kubectl, err := exec.LookPath("kubectl")
			if err != nil {
				b.Skip("kubectl not installed")
			}
			crds, rest := renderForKubectl(b, benchOptions(b, era))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				cp := startCP(b)
				kc := writeKubeconfig(b, cp.Config)
				b.StartTimer()
				run(b, kubectl, "--kubeconfig", kc, "apply", "--server-side", "--field-manager", "bench", "-f", crds)
				run(b, kubectl, "--kubeconfig", kc, "wait", "--for", "condition=Established", "--timeout", "60s", "-f", crds)
				run(b, kubectl, "--kubeconfig", kc, "apply", "--server-side", "--field-manager", "bench", "-f", rest)
				b.StopTimer()
				stopCP(b, cp)
				b.StartTimer()
			}
		})
	}
}

// BenchmarkSecondApply measures an unchanged re-apply and reports its mutating requests, which
// must be zero; kubectl's re-apply (a PATCH per object) is timed for comparison.
func BenchmarkSecondApply(b *testing.B) {
	for _, era := range []string{"4.17", "4.18"} {
		b.Run(era+"/applier", func(b *testing.B) {
			cp := startCP(b)
			defer stopCP(b, cp)
			o := benchOptions(b, era)
			o.RESTConfig = cp.Config
			if _, err := Apply(context.Background(), o); err != nil {
				b.Fatal(err)
			}
			var c counter
			o.RESTConfig = c.wrap(cp.Config)
			b.ResetTimer() // b.Loop did this; the control plane and first apply are not timed
			for i := 0; i < b.N; i++ {
				if _, err := Apply(context.Background(), o); err != nil {
					b.Fatal(err)
				}
			}
			total, muts := c.snapshot()
			b.ReportMetric(float64(len(muts))/float64(b.N), "mutating-requests/op")
			b.ReportMetric(float64(total)/float64(b.N), "requests/op")
		})
		b.Run(era+"/kubectl", func(b *testing.B) {
			kubectl, err := exec.LookPath("kubectl")
			if err != nil {
				b.Skip("kubectl not installed")
			}
			crds, rest := renderForKubectl(b, benchOptions(b, era))
			cp := startCP(b)
			defer stopCP(b, cp)
			kc := writeKubeconfig(b, cp.Config)
			run(b, kubectl, "--kubeconfig", kc, "apply", "--server-side", "-f", crds)
			run(b, kubectl, "--kubeconfig", kc, "wait", "--for", "condition=Established", "--timeout", "60s", "-f", crds)
			run(b, kubectl, "--kubeconfig", kc, "apply", "--server-side", "-f", rest)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run(b, kubectl, "--kubeconfig", kc, "apply", "--server-side", "-f", crds)
				run(b, kubectl, "--kubeconfig", kc, "apply", "--server-side", "-f", rest)
			}
		})
	}
}

func benchOptions(b *testing.B, era string) Options {
	o := testOptions(b, era)
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return o
}

func startCP(b *testing.B) *controlplanetest.ControlPlane {
	b.Helper()
	if testing.Short() {
		b.Skip("control-plane benchmark skipped under -short")
	}
	cp, err := controlplanetest.New()
	if err != nil {
		b.Fatal(err)
	}
	return cp
}

func stopCP(b *testing.B, cp *controlplanetest.ControlPlane) {
	if err := cp.Stop(); err != nil {
		b.Error(err)
	}
}

// renderForKubectl writes the objects the applier would apply, one file each, split into CRDs
// and the rest, so kubectl gets exactly the same input.
func renderForKubectl(b *testing.B, o Options) (crdDir, restDir string) {
	b.Helper()
	o, _ = withDefaults(o)
	pl, err := prepare(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	crdDir, restDir = filepath.Join(dir, "crds"), filepath.Join(dir, "rest")
	for _, d := range []string{crdDir, restDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for i, ob := range pl.objects {
		u := ob.Obj.DeepCopy()
		target := restDir
		if u.GetKind() == "CustomResourceDefinition" {
			target = crdDir
		}
		if u.GetKind() == "ValidatingWebhookConfiguration" {
			u.SetNamespace("")
		}
		data, err := yaml.Marshal(u.Object)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(target, fmt.Sprintf("%03d.yaml", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return crdDir, restDir
}

func run(b *testing.B, name string, args ...string) {
	b.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

func writeKubeconfig(tb testing.TB, cfg *rest.Config) string {
	tb.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["test"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	kc.CurrentContext = "test"
	p := filepath.Join(tb.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, p); err != nil {
		tb.Fatal(err)
	}
	return p
}
