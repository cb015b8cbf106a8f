package krew

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Installation is where Install put a plugin.
type Installation struct {
	// Dir is the plugin's directory: ROOT/store/NAME/VERSION.
	Dir string
	// Bin is the plugin's executable inside Dir.
	Bin string
	// Link is ROOT/bin/kubectl-NAME, the symbolic link krew puts on PATH.
	Link string
}

// Install installs p for the platform pa under root the way "kubectl krew
// install --manifest" does with KREW_ROOT=root, KREW_OS and KREW_ARCH: it
// picks the platform whose selector matches, fetches its uri (file:// only:
// this runs offline) while checking the sha256, extracts the archive,
// moves the files named by files (all of them when files is left out) into
// ROOT/store/NAME/VERSION, checks that bin is there and links it as
// ROOT/bin/kubectl-NAME.
func Install(p *Plugin, pa OSArch, root string) (*Installation, error) {
	pl, err := PlatformFor(p, pa)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(pl.URI)
	if err != nil || u.Scheme != "file" {
		return nil, fmt.Errorf("uri %q: only file:// URIs can be installed offline", pl.URI)
	}
	staging, err := os.MkdirTemp(root, "downloads-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging)
	if err := VerifySha256(u.Path, pl.Sha256); err != nil {
		return nil, err
	}
	if err := Extract(u.Path, staging); err != nil {
		return nil, fmt.Errorf("extracting %s: %w", u.Path, err)
	}

	inst := &Installation{Dir: filepath.Join(root, "store", p.Metadata.Name, p.Spec.Version)}
	if err := os.MkdirAll(inst.Dir, 0o755); err != nil {
		return nil, err
	}
	files := pl.Files
	if files == nil {
		files = []FileOperation{{From: "*", To: "."}}
	}
	for _, f := range files {
		if err := moveFiles(staging, inst.Dir, f); err != nil {
			return nil, err
		}
	}

	inst.Bin = filepath.Join(inst.Dir, filepath.FromSlash(pl.Bin))
	if !within(inst.Dir, inst.Bin) {
		return nil, fmt.Errorf("bin %q is outside the installation directory", pl.Bin)
	}
	info, err := os.Stat(inst.Bin)
	if err != nil {
		return nil, fmt.Errorf("bin %q was not extracted: %w", pl.Bin, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("bin %q is not a regular file", pl.Bin)
	}
	if pa.OS != "windows" && info.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("bin %q is not executable (mode %s): set the mode in the archive", pl.Bin, info.Mode())
	}

	binDir := filepath.Join(root, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return nil, err
	}
	inst.Link = filepath.Join(binDir, "kubectl-"+strings.ReplaceAll(p.Metadata.Name, "-", "_"))
	if pa.OS == "windows" {
		inst.Link += ".exe"
	}
	rel, err := filepath.Rel(binDir, inst.Bin)
	if err != nil {
		return nil, err
	}
	if err := os.Symlink(rel, inst.Link); err != nil {
		return nil, err
	}
	return inst, nil
}

// VerifySha256 checks the sha256 of the file at path.
func VerifySha256(path, want string) error {
	got, err := FileSha256(path)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("sha256 of %s is %s, the manifest says %s", filepath.Base(path), got, want)
	}
	return nil
}

// FileSha256 is the hexadecimal sha256 of the file at path.
func FileSha256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Extract unpacks a .tar.gz or .zip archive into dir, refusing entries
// that would land outside it.
func Extract(archive, dir string) error {
	switch {
	case strings.HasSuffix(archive, ".tar.gz"), strings.HasSuffix(archive, ".tgz"):
		return extractTarGz(archive, dir)
	case strings.HasSuffix(archive, ".zip"):
		return extractZip(archive, dir)
	}
	return fmt.Errorf("unknown archive type of %s: want .tar.gz or .zip", archive)
}

// entryPath is where an archive entry goes, or an error for an unsafe name.
func entryPath(dir, name string) (string, error) {
	clean := path.Clean("/" + name)
	if strings.Contains(name, `\`) || clean == "/" || path.Clean(name) != strings.TrimPrefix(clean, "/") {
		return "", fmt.Errorf("unsafe archive entry %q", name)
	}
	return filepath.Join(dir, filepath.FromSlash(clean)), nil
}

func extractTarGz(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target, err := entryPath(dir, hdr.Name)
		if err != nil {
			return err
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := writeFile(target, tr, os.FileMode(hdr.Mode).Perm()); err != nil {
				return err
			}
		default:
			return fmt.Errorf("archive entry %q has an unsupported type %q", hdr.Name, hdr.Typeflag)
		}
	}
}

func extractZip(archive, dir string) error {
	zr, err := zip.OpenReader(archive)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, zf := range zr.File {
		target, err := entryPath(dir, zf.Name)
		if err != nil {
			return err
		}
		if zf.FileInfo().IsDir() {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			return err
		}
		err = writeFile(target, rc, zf.Mode().Perm())
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func writeFile(target string, r io.Reader, mode os.FileMode) (err error) {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	_, err = io.Copy(f, r)
	return err
}

// moveFiles applies one file operation the way krew does: a From that
// names an existing path moves to To (to its own name when To is "."); a
// glob moves every match into the directory To. Nothing may leave fromDir
// or toDir.
func moveFiles(fromDir, toDir string, f FileOperation) error {
	if f.To != filepath.ToSlash(filepath.Clean(filepath.FromSlash(f.To))) {
		return fmt.Errorf("files: to %q is not a clean path", f.To)
	}
	type move struct{ from, to string }
	var moves []move
	direct := filepath.Join(fromDir, filepath.FromSlash(f.From))
	if _, err := os.Stat(direct); err == nil {
		to := f.To
		if to == "." {
			to = filepath.Base(direct)
		}
		moves = append(moves, move{direct, filepath.Join(toDir, filepath.FromSlash(to))})
	} else {
		matches, err := filepath.Glob(filepath.Join(fromDir, filepath.FromSlash(f.From)))
		if err != nil {
			return fmt.Errorf("files: from %q: %w", f.From, err)
		}
		if len(matches) == 0 {
			return fmt.Errorf("files: no file in the archive matches %q", f.From)
		}
		for _, m := range matches {
			moves = append(moves, move{m, filepath.Join(toDir, filepath.FromSlash(f.To), filepath.Base(m))})
		}
	}
	for _, m := range moves {
		if !within(fromDir, m.from) || !within(toDir, m.to) {
			return fmt.Errorf("files: moving %s to %s leaves the archive or the installation directory", m.from, m.to)
		}
		if err := os.MkdirAll(filepath.Dir(m.to), 0o755); err != nil {
			return err
		}
		if err := os.Rename(m.from, m.to); err != nil {
			return err
		}
	}
	return nil
}

// within tells whether p is base or inside it.
func within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
