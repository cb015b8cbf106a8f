// Package krew checks the krew plugin manifest of kubectl deltas. krew's
// own tools, pinned in the tools module hack/tools (krew v0.4.4), judge the
// manifest as krew-index does:
//
//   - validate-krew-manifest -skip-install: krew's structural rules (API
//     version and kind, plugin name, semantic version, sha256 format,
//     selectors that match a platform and do not overlap, files);
//   - krew install --manifest --archive: an install from a local archive,
//     with krew's checksum check, extraction and file moves.
//
// Tools runs them. This package adds only what they cannot check:
// plugin.yaml has no unknown fields (krew reads manifests leniently, so a
// misspelt field would be ignored), it is .krew.yaml rendered the way
// krew-release-bot renders it (Render), and its platforms, archive names,
// binaries and files are those .goreleaser.yaml builds (goreleaser.go). The
// tests of this package run all of it on the repository's files;
// cmd/render-manifest regenerates plugin.yaml.
package krew

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// Plugin is a krew plugin manifest: the fields of krew's pkg/index types
// that a manifest may have.
type Plugin struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       Spec              `json:"spec"`
}

// Spec is the plugin's specification.
type Spec struct {
	Version          string     `json:"version"`
	ShortDescription string     `json:"shortDescription"`
	Description      string     `json:"description,omitempty"`
	Caveats          string     `json:"caveats,omitempty"`
	Homepage         string     `json:"homepage,omitempty"`
	Platforms        []Platform `json:"platforms"`
}

// Platform is one installation candidate, chosen by its selector.
type Platform struct {
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	URI      string                `json:"uri,omitempty"`
	Sha256   string                `json:"sha256,omitempty"`
	Files    []FileOperation       `json:"files,omitempty"`
	Bin      string                `json:"bin"`
}

// FileOperation copies the files of the archive matching the From glob
// into the To directory (or to the file To) of the installation.
type FileOperation struct {
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// OSArch is a platform krew can run on.
type OSArch struct{ OS, Arch string }

func (p OSArch) String() string { return p.OS + "/" + p.Arch }

// Parse reads a manifest strictly: unknown fields are errors, as a typo in
// a field name would otherwise go unnoticed (krew ignores it).
func Parse(data []byte) (*Plugin, error) {
	var p Plugin
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, fmt.Errorf("invalid plugin manifest (check the field names): %w", err)
	}
	return &p, nil
}

// Load reads and parses the manifest at path.
func Load(path string) (*Plugin, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Matches tells whether sel selects the platform pa, as krew decides which
// platform entry to install.
func Matches(sel *metav1.LabelSelector, pa OSArch) bool {
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set{"os": pa.OS, "arch": pa.Arch})
}

// PlatformFor returns the platform of p that krew would install on pa.
func PlatformFor(p *Plugin, pa OSArch) (*Platform, error) {
	for i := range p.Spec.Platforms {
		if Matches(p.Spec.Platforms[i].Selector, pa) {
			return &p.Spec.Platforms[i], nil
		}
	}
	return nil, fmt.Errorf("plugin %q does not offer installation for %s: add a platform to .krew.yaml", p.Metadata.Name, pa)
}

// ArchiveName is the file name part of a platform's uri.
func ArchiveName(pl *Platform) string {
	u, err := url.Parse(pl.URI)
	if err != nil {
		return filepath.Base(pl.URI)
	}
	return path.Base(u.Path)
}
