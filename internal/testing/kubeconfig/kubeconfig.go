// Package kubeconfig writes a kubeconfig file for a rest.Config, so that tests can hand a
// test API server (applier/controlplanetest) to lvms-rebase apply as a person would: by file.
// Test support only; it does not import testing.
package kubeconfig

import (
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Write writes a kubeconfig reaching cfg's server with its credentials into dir and returns
// its path. Its one context, "test", is the current one.
func Write(dir string, cfg *rest.Config) (string, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["test"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	kc.CurrentContext = "test"
	p := filepath.Join(dir, "kubeconfig")
	return p, clientcmd.WriteToFile(*kc, p)
}
