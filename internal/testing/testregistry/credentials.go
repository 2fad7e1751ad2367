package testregistry

import "testing"

// NoCredentials keeps the developer's registry credentials out of a test: HOME becomes a
// fresh directory (returned) and every other place an auth file is looked up is unset.
func NoCredentials(t testing.TB) (home string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"REGISTRY_AUTH_FILE", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "DOCKER_CONFIG"} {
		t.Setenv(v, "")
	}
	return home
}
