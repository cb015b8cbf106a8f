// Package depspin holds blank imports of the dependencies the packages under
// construction will use, so that go mod tidy keeps them meanwhile.
// TODO: remove once the command package imports them.
package depspin

import (
	_ "github.com/spf13/cobra"
	_ "github.com/spf13/pflag"
	_ "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	_ "k8s.io/apimachinery/pkg/util/duration"
	_ "k8s.io/cli-runtime/pkg/genericclioptions"
	_ "k8s.io/cli-runtime/pkg/printers"
	_ "k8s.io/cli-runtime/pkg/resource"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/tools/cache"
	_ "k8s.io/client-go/tools/clientcmd"
	_ "k8s.io/client-go/util/jsonpath"
	_ "k8s.io/utils/clock/testing"
	_ "sigs.k8s.io/yaml"
)
