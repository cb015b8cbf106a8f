package controlplane

import (
	"fmt"
	"os"
)

const clusterName = "deltas-local"

// writeKubeconfigs writes admin.kubeconfig and alice.kubeconfig into the work
// directory.
func (cp *ControlPlane) writeKubeconfigs() error {
	cp.adminKubeconfig = cp.path("admin.kubeconfig")
	cp.userKubeconfig = cp.path(UserName + ".kubeconfig")
	if err := os.WriteFile(cp.adminKubeconfig, []byte(kubeconfig(cp.Server(), AdminName, cp.adminToken)), 0o600); err != nil {
		return fmt.Errorf("write admin kubeconfig: %w", err)
	}
	if err := os.WriteFile(cp.userKubeconfig, []byte(kubeconfig(cp.Server(), UserName, cp.userToken)), 0o600); err != nil {
		return fmt.Errorf("write %s kubeconfig: %w", UserName, err)
	}
	return nil
}

// kubeconfig renders a kubeconfig with one cluster, one token user and one
// context (namespace default), which is the current context.
func kubeconfig(server, user, token string) string {
	context := clusterName + "-" + user
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: %[2]q
    insecure-skip-tls-verify: true
users:
- name: %[3]s
  user:
    token: %[4]q
contexts:
- name: %[5]s
  context:
    cluster: %[1]s
    user: %[3]s
    namespace: default
current-context: %[5]s
preferences: {}
`, clusterName, server, user, token, context)
}
