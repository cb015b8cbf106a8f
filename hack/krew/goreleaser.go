package krew

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"text/template"
	"time"

	"sigs.k8s.io/yaml"
)

// GoreleaserConfig is the part of .goreleaser.yaml that decides what the
// release archives are: enough to build one archive the way goreleaser
// does, and to check the krew template against it.
type GoreleaserConfig struct {
	Version     int                 `json:"version"`
	ProjectName string              `json:"project_name"`
	Builds      []GoreleaserBuild   `json:"builds"`
	Archives    []GoreleaserArchive `json:"archives"`
}

// GoreleaserBuild is one builds: entry.
type GoreleaserBuild struct {
	ID      string   `json:"id"`
	Main    string   `json:"main"`
	Binary  string   `json:"binary"`
	Env     []string `json:"env"`
	Goos    []string `json:"goos"`
	Goarch  []string `json:"goarch"`
	Flags   []string `json:"flags"`
	Ldflags []string `json:"ldflags"`
}

// GoreleaserArchive is one archives: entry.
type GoreleaserArchive struct {
	ID              string                     `json:"id"`
	IDs             []string                   `json:"ids"`
	Formats         []string                   `json:"formats"`
	FormatOverrides []GoreleaserFormatOverride `json:"format_overrides"`
	NameTemplate    string                     `json:"name_template"`
	Files           []GoreleaserFile           `json:"files"`
}

// GoreleaserFormatOverride is one format_overrides: entry.
type GoreleaserFormatOverride struct {
	Goos    string   `json:"goos"`
	Formats []string `json:"formats"`
}

// GoreleaserFile is one archives.files entry: a glob, or src/dst.
type GoreleaserFile struct {
	Src         string `json:"src"`
	Dst         string `json:"dst"`
	StripParent bool   `json:"strip_parent"`
}

// UnmarshalJSON accepts both forms of a files entry.
func (f *GoreleaserFile) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = GoreleaserFile{Src: s}
		return nil
	}
	type plain GoreleaserFile
	return json.Unmarshal(b, (*plain)(f))
}

// TemplateData are the goreleaser template fields the configuration uses.
type TemplateData struct {
	ProjectName     string
	Tag             string
	Version         string
	FullCommit      string
	ShortCommit     string
	CommitDate      string
	CommitTimestamp int64
	Os, Arch        string
}

// LoadGoreleaser reads the goreleaser configuration at path.
func LoadGoreleaser(path string) (*GoreleaserConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c GoreleaserConfig
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Version != 2 {
		return nil, fmt.Errorf("%s: version is %d, want 2", path, c.Version)
	}
	if len(c.Builds) != 1 || len(c.Archives) != 1 {
		return nil, fmt.Errorf("%s: want exactly one build and one archive, found %d and %d", path, len(c.Builds), len(c.Archives))
	}
	return &c, nil
}

// Targets lists the platforms the build produces.
func (c *GoreleaserConfig) Targets() []OSArch {
	out := make([]OSArch, 0, len(c.Builds[0].Goos)*len(c.Builds[0].Goarch))
	for _, goos := range c.Builds[0].Goos {
		for _, goarch := range c.Builds[0].Goarch {
			out = append(out, OSArch{goos, goarch})
		}
	}
	return out
}

// BinaryName is the executable's name in the archive for goos.
func (c *GoreleaserConfig) BinaryName(goos string) string {
	if goos == "windows" {
		return c.Builds[0].Binary + ".exe"
	}
	return c.Builds[0].Binary
}

// ArchiveFormat is the archive format for goos (format_overrides apply).
func (c *GoreleaserConfig) ArchiveFormat(goos string) string {
	a := c.Archives[0]
	for _, o := range a.FormatOverrides {
		if o.Goos == goos && len(o.Formats) > 0 {
			return o.Formats[0]
		}
	}
	if len(a.Formats) > 0 {
		return a.Formats[0]
	}
	return "tar.gz"
}

// ArchiveName is the archive's file name for the platform in d.
func (c *GoreleaserConfig) ArchiveName(d TemplateData) (string, error) {
	name, err := execTemplate(c.Archives[0].NameTemplate, d)
	if err != nil {
		return "", err
	}
	return name + "." + c.ArchiveFormat(d.Os), nil
}

// archiveEntry is a file to put in an archive.
type archiveEntry struct {
	name string // path in the archive
	src  string // path on disk
	mode os.FileMode
}

// ArchiveContents lists the names of the files the archive for d holds.
func (c *GoreleaserConfig) ArchiveContents(root string, d TemplateData) ([]string, error) {
	entries, err := c.extraFiles(root, d)
	if err != nil {
		return nil, err
	}
	names := []string{c.BinaryName(d.Os)}
	for _, e := range entries {
		names = append(names, e.name)
	}
	sort.Strings(names)
	return names, nil
}

// extraFiles resolves archives.files for d, relative to root.
func (c *GoreleaserConfig) extraFiles(root string, d TemplateData) ([]archiveEntry, error) {
	var out []archiveEntry
	for _, f := range c.Archives[0].Files {
		src, err := execTemplate(f.Src, d)
		if err != nil {
			return nil, err
		}
		matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(src)))
		if err != nil {
			return nil, err
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("archives.files %q matches no file", src)
		}
		for _, m := range matches {
			info, err := os.Stat(m)
			if err != nil {
				return nil, err
			}
			rel, err := filepath.Rel(root, m)
			if err != nil {
				return nil, err
			}
			name := filepath.ToSlash(rel)
			if f.StripParent {
				name = filepath.Base(m)
			}
			if f.Dst != "" {
				name = f.Dst + "/" + name
			}
			out = append(out, archiveEntry{name: name, src: m, mode: info.Mode().Perm()})
		}
	}
	return out, nil
}

// BuildArchive builds the binary for d.Os/d.Arch with the build's
// environment, flags and ldflags, and packs it with the archive's files
// into outDir, as "goreleaser release" would. It returns the archive path.
func (c *GoreleaserConfig) BuildArchive(root, outDir string, d TemplateData) (string, error) {
	b := c.Builds[0]
	var ldflags []string
	for _, l := range b.Ldflags {
		s, err := execTemplate(l, d)
		if err != nil {
			return "", err
		}
		ldflags = append(ldflags, s)
	}
	binDir, err := os.MkdirTemp(outDir, "build-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(binDir, c.BinaryName(d.Os))
	args := append([]string{"build"}, b.Flags...)
	args = append(args, "-ldflags", strings.Join(ldflags, " "), "-o", bin, b.Main)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), b.Env...), "GOOS="+d.Os, "GOARCH="+d.Arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return c.PackArchive(root, outDir, d, bin)
}

// PackArchive packs the executable bin with the archive's files into
// outDir, named and laid out as goreleaser makes the archive for d. It
// returns the archive path.
func (c *GoreleaserConfig) PackArchive(root, outDir string, d TemplateData, bin string) (string, error) {
	entries, err := c.extraFiles(root, d)
	if err != nil {
		return "", err
	}
	entries = append([]archiveEntry{{name: c.BinaryName(d.Os), src: bin, mode: 0o755}}, entries...)
	name, err := c.ArchiveName(d)
	if err != nil {
		return "", err
	}
	archive := filepath.Join(outDir, name)
	mtime := time.Unix(d.CommitTimestamp, 0)
	switch c.ArchiveFormat(d.Os) {
	case "tar.gz", "tgz":
		err = writeTarGz(archive, entries, mtime)
	case "zip":
		err = writeZip(archive, entries, mtime)
	default:
		err = fmt.Errorf("unsupported archive format %q in .goreleaser.yaml", c.ArchiveFormat(d.Os))
	}
	return archive, err
}

func writeTarGz(path string, entries []archiveEntry, mtime time.Time) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		data, err := os.ReadFile(e.src)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: e.name, Mode: int64(e.mode), Size: int64(len(data)), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(path string, entries []archiveEntry, mtime time.Time) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	zw := zip.NewWriter(f)
	for _, e := range entries {
		data, err := os.ReadFile(e.src)
		if err != nil {
			return err
		}
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime}
		hdr.SetMode(e.mode)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
			return err
		}
	}
	return zw.Close()
}

// execTemplate renders a goreleaser template with the fields of d.
func execTemplate(text string, d TemplateData) (string, error) {
	t, err := template.New("goreleaser").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", fmt.Errorf("goreleaser template %q: %w", text, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("goreleaser template %q: %w", text, err)
	}
	return b.String(), nil
}
