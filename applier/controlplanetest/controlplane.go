// Package controlplanetest is a test harness: it starts a real etcd and kube-apiserver on
// 127.0.0.1 from the binaries `make control-plane` builds into $KUBEBUILDER_ASSETS, for the
// applier's tests and the rebase tool's (cmd/lvms-rebase/app), which import it from here so
// there is one harness for the whole repository.
//
// It imports the testing package (Start takes a testing.TB) and only _test.go files may import
// it: MicroShift imports github.com/lvms-rebase/lvms-rebase/applier and never needs this package,
// and the lvms-rebase binary must not link it (cmd/lvms-rebase's TestNoTestCodeLinked and the
// applier's TestDependencies check both). It lives outside internal/ only so that the root module
// can import it.
//
// It starts the two processes directly instead of through controller-runtime's envtest: every
// requirement of the applier's go.mod lands in the module graph of MicroShift, which imports the
// applier, so the applier module must not require controller-runtime even for tests. It needs
// nothing beyond client-go, which the applier requires anyway. The certificates (serving,
// client, service-account key) are generated here with crypto/x509.
//
// A missing KUBEBUILDER_ASSETS fails the test with the command to run: silently skipping would let
// `go test ./...` pass without ever touching an API server. Under `go test -short` the
// control-plane tests are skipped instead.
package controlplanetest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// AssetsEnv names the directory holding the kube-apiserver and etcd binaries.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// startTimeout bounds the wait for /readyz: two shared cores make a cold start slow.
const startTimeout = 90 * time.Second

// ControlPlane is a running etcd + kube-apiserver.
type ControlPlane struct {
	// Config reaches the API server as a cluster administrator (system:masters client cert).
	Config *rest.Config
	dir    string
	etcd   *process
	api    *process
}

// process is a started binary; done closes when it exits.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// AssetsDir returns the binaries directory, or an error that says how to build it.
func AssetsDir() (string, error) {
	dir := os.Getenv(AssetsEnv)
	if dir == "" {
		return "", fmt.Errorf("%s is not set: run `make control-plane` (or `make test`, which builds it) "+
			"to build kube-apiserver and etcd, then export %s=<dir> or run the tests through make; use "+
			"`go test -short` to skip the control-plane tests", AssetsEnv, AssetsEnv)
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return "", fmt.Errorf("%s=%s has no %s (%w): run `make control-plane`", AssetsEnv, dir, bin, err)
		}
	}
	return dir, nil
}

// New starts a control plane whose state lives in a fresh temporary directory; Stop must be
// called.
func New() (*ControlPlane, error) {
	bin, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "applier-controlplane-")
	if err != nil {
		return nil, fmt.Errorf("control plane state dir: %w", err)
	}
	cp := &ControlPlane{dir: dir}
	if err := cp.start(bin); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	return cp, nil
}

func (cp *ControlPlane) start(bin string) error {
	pki, err := writePKI(cp.dir)
	if err != nil {
		return err
	}
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	cp.etcd, err = startProcess(cp.dir, "etcd", filepath.Join(bin, "etcd"),
		"--data-dir="+filepath.Join(cp.dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls=http://127.0.0.1:"+strconv.Itoa(ports[1]),
		"--unsafe-no-fsync=true", "--log-level=warn")
	if err != nil {
		return err
	}
	cp.api, err = startProcess(cp.dir, "kube-apiserver", filepath.Join(bin, "kube-apiserver"), apiServerArgs(pki, etcdURL, ports[2])...)
	if err != nil {
		return err
	}
	cp.Config = &rest.Config{
		Host: "https://127.0.0.1:" + strconv.Itoa(ports[2]),
		TLSClientConfig: rest.TLSClientConfig{
			CAData: pki.caPEM, CertData: pki.adminCertPEM, KeyData: pki.adminKeyPEM,
		},
		QPS: 50, Burst: 300,
	}
	return cp.waitReady()
}

func apiServerArgs(p *pkiFiles, etcdURL string, port int) []string {
	return []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + p.servingCert, "--tls-private-key-file=" + p.servingKey,
		"--client-ca-file=" + p.caCert,
		"--service-account-key-file=" + p.saKey, "--service-account-signing-key-file=" + p.saKey,
		"--service-account-issuer=https://127.0.0.1",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=RBAC", "--allow-privileged=true",
		// As envtest: no controller-manager creates service-account tokens, and without a node
		// the endpoint reconciler would keep rewriting the kubernetes Service's endpoints.
		"--disable-admission-plugins=ServiceAccount",
		"--endpoint-reconciler-type=none",
	}
}

// startProcess runs one binary with its output in <dir>/<name>.log, which failures quote.
func startProcess(dir, name, path string, args ...string) (*process, error) {
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(p.done) }()
	return p, nil
}

// waitReady polls /readyz until kube-apiserver (and through it etcd) answers ok.
func (cp *ControlPlane) waitReady() error {
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return fmt.Errorf("control plane client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var last error
	for {
		_, last = cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if last == nil {
			return nil
		}
		if cp.api.exited() || cp.etcd.exited() {
			return fmt.Errorf("control plane exited while starting: %w\n%s", last, cp.logTail())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready after %s: %w\n%s", startTimeout, last, cp.logTail())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// logTail returns the end of both logs for an error message.
func (cp *ControlPlane) logTail() string {
	var out string
	for _, name := range []string{"etcd", "kube-apiserver"} {
		b, _ := os.ReadFile(filepath.Join(cp.dir, name+".log"))
		if len(b) > 2000 {
			b = b[len(b)-2000:]
		}
		out += "--- " + name + ".log (tail) ---\n" + string(b)
	}
	return out
}

// Stop stops kube-apiserver, then etcd, and removes their data.
func (cp *ControlPlane) Stop() error {
	var errs []error
	for _, p := range []*process{cp.api, cp.etcd} {
		if p == nil {
			continue
		}
		if err := p.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(cp.dir); err != nil {
		errs = append(errs, fmt.Errorf("removing control plane state %s: %w", cp.dir, err))
	}
	return errors.Join(errs...)
}

// stop sends SIGTERM and, after 20 s, SIGKILL, and waits for the exit.
func (p *process) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(20 * time.Second):
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing %s: %w", p.cmd.Path, err)
	}
	<-p.done
	return nil
}

// freePorts reserves n distinct loopback ports by listening and closing.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("reserving a loopback port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Start starts a fresh control plane for one test and stops it when the test ends. It skips
// under -short and fails (never skips) when the binaries are missing.
func Start(t testing.TB) *rest.Config {
	t.Helper()
	if testing.Short() {
		t.Skip("control-plane test skipped under -short")
	}
	cp, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	return rest.CopyConfig(cp.Config)
}
