package targets

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MappingFor resolves a type argument as kubectl does: resource (plural,
// singular, short name), then kind, with an optional .version.group.
//
// It is cli-runtime's (*resource.Builder).mappingFor (v0.36,
// pkg/resource/builder.go), kept line for line in behaviour because
// cli-runtime does not export it. The exported route,
// NewBuilder(...).ResourceTypeOrNameArgs(arg).Do().ResourceMapping(),
// first replaces categories through its own category expander: "all"
// would be expanded before --exclude applies and before its members can be
// marked optional (skipped for partial access, followed as types come and
// go), at the cost of a discovery read per argument.
func MappingFor(mapper meta.RESTMapper, arg string) (*meta.RESTMapping, error) {
	fullySpecifiedGVR, groupResource := schema.ParseResourceArg(arg)
	gvk := schema.GroupVersionKind{}
	if fullySpecifiedGVR != nil {
		gvk, _ = mapper.KindFor(*fullySpecifiedGVR)
	}
	if gvk.Empty() {
		gvk, _ = mapper.KindFor(groupResource.WithVersion(""))
	}
	if !gvk.Empty() {
		return mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}

	fullySpecifiedGVK, groupKind := schema.ParseKindArg(arg)
	if fullySpecifiedGVK == nil {
		gvk := groupKind.WithVersion("")
		fullySpecifiedGVK = &gvk
	}
	if !fullySpecifiedGVK.Empty() {
		if mapping, err := mapper.RESTMapping(fullySpecifiedGVK.GroupKind(), fullySpecifiedGVK.Version); err == nil {
			return mapping, nil
		}
	}
	mapping, err := mapper.RESTMapping(groupKind, gvk.Version)
	if err != nil {
		// A no-match error means the type is unknown; anything else is a
		// discovery problem worth showing as it is.
		if meta.IsNoMatchError(err) {
			return nil, &UnknownTypeError{Arg: arg, Resource: groupResource.Resource}
		}
		return nil, err
	}
	return mapping, nil
}

// UnknownTypeError is a type argument that discovery does not know.
type UnknownTypeError struct {
	// Arg is the argument as given; Resource its resource part.
	Arg, Resource string
}

func (e *UnknownTypeError) Error() string {
	return fmt.Sprintf("the server doesn't have a resource type %q: kubectl api-resources lists the types it has", e.Resource)
}
