// Package krew checks the krew plugin manifest of kubectl deltas without
// krew itself (it is not a Go module one can depend on): it parses
// plugin.yaml, validates it against krew's and krew-index's rules, renders
// the krew-release-bot template .krew.yaml the way the bot does, and
// installs a manifest from a local archive the way "kubectl krew install"
// does. The tests of this package run those checks on the repository's
// files; cmd/render-manifest regenerates plugin.yaml.
package krew

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

const (
	// APIVersion is the only manifest API version krew accepts.
	APIVersion = "krew.googlecontainertools.github.com/v1alpha2"
	// Kind is the only manifest kind krew accepts.
	Kind = "Plugin"

	// MaxShortDescription keeps the short description to one column of
	// "kubectl krew search"; krew-index reviewers ask for a few words.
	MaxShortDescription = 50
	// MaxLineLength is the line length validate-krew-manifest warns about
	// in description and caveats.
	MaxLineLength = 80
)

// Plugin is a krew plugin manifest (krew's pkg/index types, the fields a
// manifest may have).
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

// KnownPlatforms are the os/arch pairs a selector is checked against for
// overlaps and for matching anything at all (krew's list, plus the
// architectures Go and krew support today).
var KnownPlatforms = []OSArch{
	{"linux", "386"}, {"linux", "amd64"}, {"linux", "arm"}, {"linux", "arm64"}, {"linux", "ppc64le"}, {"linux", "s390x"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "386"}, {"windows", "amd64"}, {"windows", "arm64"},
}

var (
	safePluginName = regexp.MustCompile(`^[\w-]+$`)
	sha256Hex      = regexp.MustCompile(`^[a-f0-9]{64}$`)
	// windowsReserved are names Windows cannot have as files.
	windowsReserved = []string{"CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
		"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9"}
)

// Parse reads a manifest strictly: unknown fields are errors, as a typo in
// a field name would otherwise go unnoticed.
func Parse(data []byte) (*Plugin, error) {
	var p Plugin
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, fmt.Errorf("invalid plugin manifest: %w", err)
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

// Validate checks p, the manifest of the plugin called name, against
// krew's structural validation (krew's internal/index/validation and
// cmd/validate-krew-manifest) and the krew-index review conventions. It
// returns every problem found, joined.
func Validate(p *Plugin, name string) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if p.APIVersion != APIVersion {
		bad("apiVersion is %q, krew only supports %q", p.APIVersion, APIVersion)
	}
	if p.Kind != Kind {
		bad("kind is %q, krew only supports %q", p.Kind, Kind)
	}
	if !IsSafePluginName(p.Metadata.Name) {
		bad("metadata.name %q is not allowed: it must match %s and not be a reserved Windows name", p.Metadata.Name, safePluginName)
	}
	if p.Metadata.Name != name {
		bad("metadata.name is %q, want %q", p.Metadata.Name, name)
	}
	if strings.ToLower(p.Metadata.Name) != p.Metadata.Name || strings.HasPrefix(p.Metadata.Name, "kubectl") {
		bad("metadata.name %q must be lower case and must not start with \"kubectl\" (krew naming guide)", p.Metadata.Name)
	}
	validateVersion(p.Spec.Version, bad)
	validateHomepage(p.Spec.Homepage, bad)
	validateTexts(&p.Spec, bad)

	if len(p.Spec.Platforms) == 0 {
		bad("spec.platforms is empty: at least one platform is required")
	}
	for i := range p.Spec.Platforms {
		validatePlatform(i, &p.Spec.Platforms[i], bad)
	}
	validateSelectorsCoverage(p.Spec.Platforms, bad)
	return errors.Join(errs...)
}

// IsSafePluginName is krew's rule for plugin names.
func IsSafePluginName(name string) bool {
	if !safePluginName.MatchString(name) {
		return false
	}
	for _, r := range windowsReserved {
		if strings.EqualFold(r, name) {
			return false
		}
	}
	return true
}

func validateVersion(v string, bad func(string, ...any)) {
	switch {
	case v == "":
		bad("spec.version is required")
	case !strings.HasPrefix(v, "v"):
		bad("spec.version %q must start with \"v\"", v)
	default:
		if _, err := utilversion.ParseSemantic(v); err != nil {
			bad("spec.version %q is not a semantic version: %v", v, err)
		}
	}
}

func validateHomepage(h string, bad func(string, ...any)) {
	if h == "" {
		bad("spec.homepage is required by krew-index")
		return
	}
	u, err := url.Parse(h)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		bad("spec.homepage %q must be an https URL", h)
	}
}

func validateTexts(s *Spec, bad func(string, ...any)) {
	sd := s.ShortDescription
	switch {
	case sd == "":
		bad("spec.shortDescription is required")
	case strings.ContainsAny(sd, "\r\n"):
		bad("spec.shortDescription must be one line")
	case len([]rune(sd)) > MaxShortDescription:
		bad("spec.shortDescription is %d characters, keep it to %d", len([]rune(sd)), MaxShortDescription)
	}
	if strings.HasSuffix(sd, ".") {
		bad("spec.shortDescription must not end with a period")
	}
	if strings.Contains(strings.ToLower(sd), "kubectl") {
		bad("spec.shortDescription must not mention kubectl: every plugin is for kubectl")
	}
	if strings.TrimSpace(s.Description) == "" {
		bad("spec.description is required by krew-index")
	} else if strings.TrimSpace(s.Description) == sd {
		bad("spec.description must say more than spec.shortDescription")
	}
	for field, text := range map[string]string{"description": s.Description, "caveats": s.Caveats} {
		for _, line := range strings.Split(text, "\n") {
			// Like validate-krew-manifest, a single long word is allowed.
			if len([]rune(line)) > MaxLineLength && strings.Contains(strings.TrimSpace(line), " ") {
				bad("spec.%s has a line longer than %d characters: %q", field, MaxLineLength, line)
			}
		}
	}
}

func validatePlatform(i int, pl *Platform, bad func(string, ...any)) {
	where := fmt.Sprintf("spec.platforms[%d]", i)
	if pl.URI == "" {
		bad("%s.uri is required", where)
	} else if u, err := url.Parse(pl.URI); err != nil || (u.Scheme != "https" && u.Scheme != "file") {
		bad("%s.uri %q must be an https URL", where, pl.URI)
	} else if !strings.HasSuffix(u.Path, ".tar.gz") && !strings.HasSuffix(u.Path, ".zip") {
		bad("%s.uri %q must name a .tar.gz or .zip archive", where, pl.URI)
	}
	if !sha256Hex.MatchString(pl.Sha256) {
		bad("%s.sha256 %q must be 64 lower-case hexadecimal digits", where, pl.Sha256)
	}
	validateSelector(where, pl.Selector, bad)
	if pl.Bin == "" {
		bad("%s.bin is required", where)
	}
	if pl.Files != nil && len(pl.Files) == 0 {
		bad("%s.files must be left out or not empty", where)
	}
	for j, f := range pl.Files {
		switch {
		case f.From == "" || f.To == "":
			bad("%s.files[%d] needs both from and to", where, j)
		case f.To != path.Clean(f.To):
			bad("%s.files[%d].to %q is not a clean path, want %q", where, j, f.To, path.Clean(f.To))
		case path.IsAbs(f.To) || strings.HasPrefix(path.Clean(f.To), ".."):
			bad("%s.files[%d].to %q leaves the installation directory", where, j, f.To)
		}
	}
	if pl.Files != nil && pl.Bin != "" && !filesProvide(pl.Files, pl.Bin) {
		bad("%s.bin %q is not extracted by any files entry", where, pl.Bin)
	}
	if pl.Files != nil && !filesProvide(pl.Files, "LICENSE") {
		bad("%s.files must extract the LICENSE (krew-index requirement)", where)
	}
	if goos, ok := selectedOS(pl.Selector); ok && pl.Bin != "" {
		if exe := strings.HasSuffix(pl.Bin, ".exe"); exe != (goos == "windows") {
			bad("%s.bin %q: Windows binaries, and only they, end in .exe", where, pl.Bin)
		}
	}
}

// filesProvide tells whether the file operations put a file at target
// (relative to the installation directory), as krew's move does: a From
// without wildcards moves to To (or to its own name when To is "."); a
// glob moves each match into the directory To.
func filesProvide(files []FileOperation, target string) bool {
	target = path.Clean(target)
	for _, f := range files {
		to := path.Clean(f.To)
		if !hasGlob(f.From) {
			if to == "." {
				to = path.Base(f.From)
			}
			if to == target {
				return true
			}
			continue
		}
		if ok, _ := path.Match(path.Join(to, path.Base(f.From)), target); ok {
			return true
		}
	}
	return false
}

func hasGlob(s string) bool { return strings.ContainsAny(s, `*?[\`) }

func validateSelector(where string, sel *metav1.LabelSelector, bad func(string, ...any)) {
	if sel == nil {
		bad("%s.selector is required", where)
		return
	}
	if sel.MatchLabels == nil && len(sel.MatchExpressions) == 0 {
		bad("%s.selector is empty", where)
	}
	if sel.MatchLabels != nil && len(sel.MatchLabels) == 0 {
		bad("%s.selector.matchLabels is given but empty", where)
	}
	for k := range sel.MatchLabels {
		if k != "os" && k != "arch" {
			bad("%s.selector uses the key %q: only os and arch are supported", where, k)
		}
	}
	for _, e := range sel.MatchExpressions {
		if e.Key != "os" && e.Key != "arch" {
			bad("%s.selector uses the key %q: only os and arch are supported", where, e.Key)
		}
	}
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		bad("%s.selector is invalid: %v", where, err)
	}
}

// validateSelectorsCoverage checks that each platform selects some known
// os/arch and that no os/arch is selected by two platforms.
func validateSelectorsCoverage(platforms []Platform, bad func(string, ...any)) {
	for i := range platforms {
		if len(Selected(&platforms[i])) == 0 && platforms[i].Selector != nil {
			bad("spec.platforms[%d].selector matches no supported platform", i)
		}
	}
	for _, pa := range KnownPlatforms {
		var idx []int
		for i := range platforms {
			if Matches(platforms[i].Selector, pa) {
				idx = append(idx, i)
			}
		}
		if len(idx) > 1 {
			bad("spec.platforms %v overlap: they all select %s", idx, pa)
		}
	}
}

// Matches tells whether sel selects the platform pa.
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

// Selected lists the known platforms pl's selector matches.
func Selected(pl *Platform) []OSArch {
	var out []OSArch
	for _, pa := range KnownPlatforms {
		if Matches(pl.Selector, pa) {
			out = append(out, pa)
		}
	}
	return out
}

// selectedOS is the one OS the selector selects, if it is one.
func selectedOS(sel *metav1.LabelSelector) (string, bool) {
	goos := ""
	for _, pa := range KnownPlatforms {
		if Matches(sel, pa) {
			if goos != "" && goos != pa.OS {
				return "", false
			}
			goos = pa.OS
		}
	}
	return goos, goos != ""
}

// PlatformFor returns the platform of p that krew would install on pa.
func PlatformFor(p *Plugin, pa OSArch) (*Platform, error) {
	for i := range p.Spec.Platforms {
		if Matches(p.Spec.Platforms[i].Selector, pa) {
			return &p.Spec.Platforms[i], nil
		}
	}
	return nil, fmt.Errorf("plugin %q does not offer installation for %s", p.Metadata.Name, pa)
}

// ArchiveName is the file name part of a platform's uri.
func ArchiveName(pl *Platform) string {
	u, err := url.Parse(pl.URI)
	if err != nil {
		return filepath.Base(pl.URI)
	}
	return path.Base(u.Path)
}
