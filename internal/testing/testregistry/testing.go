package testregistry

import (
	"context"
	"net"
	"net/http"
)

// EnvTB is what NoCredentials needs of a test (testing.TB has it; this package does not
// import testing, so that the programs using it do not register test flags).
type EnvTB interface {
	TB
	TempDir() string
	Setenv(key, value string)
}

// NoCredentials keeps the developer's registry credentials out of a test: HOME becomes a
// fresh directory (returned) and every other place an auth file is looked up is unset.
func NoCredentials(t EnvTB) (home string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"REGISTRY_AUTH_FILE", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "DOCKER_CONFIG"} {
		t.Setenv(v, "")
	}
	return home
}

// DialTo returns a transport that connects every request to addr whatever its host, so a
// test can give a loopback server a private-network or look-alike name.
func DialTo(addr string) *http.Transport {
	return &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}
