module github.com/kubectl-deltas/kubectl-deltas

go 1.26.0

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	go.yaml.in/yaml/v2 v2.4.3 // indirect
	k8s.io/apimachinery v0.36.6 // indirect
	k8s.io/cli-runtime v0.36.6 // indirect
	k8s.io/client-go v0.36.6 // indirect
	k8s.io/utils v0.0.0-20260707023825-cf1189d6abe3 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)
