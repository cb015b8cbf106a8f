package krew

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// Tools are krew's own binaries, built from the version pinned in
// hack/tools/go.mod ("make validate-krew-manifest" installs them into
// hack/tools/bin).
type Tools struct {
	// Validator is krew's validate-krew-manifest.
	Validator string
	// Krew is the krew binary, which kubectl runs as "kubectl krew".
	Krew string
}

// Validate runs validate-krew-manifest -skip-install on manifest, the
// manifest of the plugin called name, and returns its output. The
// validator takes the plugin's name from the file name, so manifest is
// written to NAME.yaml in a temporary directory first. A manifest the
// validator rejects is an error that includes the output.
func (t Tools) Validate(manifest []byte, name string) (string, error) {
	dir, err := os.MkdirTemp("", "validate-krew-manifest-")
	if err != nil {
		return "", fmt.Errorf("cannot make a directory for the manifest (check TMPDIR): %w", err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(file, manifest, 0o644); err != nil {
		return "", fmt.Errorf("cannot write the manifest (check TMPDIR): %w", err)
	}
	out, err := exec.Command(t.Validator, "-skip-install", "-manifest", file).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s rejects the manifest: %w\n%s", filepath.Base(t.Validator), err, out)
	}
	return string(out), nil
}

// Install runs "krew install --manifest=… --archive=archive" with
// KREW_ROOT=root and KREW_OS, KREW_ARCH set to pa, as "kubectl krew
// install" does on pa: krew downloads nothing, checks the archive's sha256
// against the manifest's, extracts it, moves its files into
// ROOT/store/NAME/VERSION and links the binary as ROOT/bin/kubectl-NAME. It
// returns krew's output; a failed install is an error that includes it.
func (t Tools) Install(manifest []byte, archive string, pa OSArch, root string) (string, error) {
	file := filepath.Join(root, "manifest.yaml")
	if err := os.WriteFile(file, manifest, 0o644); err != nil {
		return "", fmt.Errorf("cannot write the manifest into KREW_ROOT %s: %w", root, err)
	}
	cmd := exec.Command(t.Krew, "install", "--manifest="+file, "--archive="+archive)
	// The later of two values of a variable wins: the caller's KREW_*
	// cannot leak in.
	cmd.Env = append(os.Environ(),
		"KREW_ROOT="+root,
		"KREW_OS="+pa.OS,
		"KREW_ARCH="+pa.Arch,
		"KREW_NO_UPGRADE_CHECK=1", // no request for krew's latest release
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("krew install --manifest --archive=%s for %s: %w\n%s", filepath.Base(archive), pa, err, out)
	}
	return string(out), nil
}

// ForArchive returns p as YAML with the platform krew picks on pa
// downloading an archive whose sha256 is sum: what "krew install
// --archive" needs to accept a locally built archive.
func ForArchive(p *Plugin, pa OSArch, sum string) ([]byte, error) {
	local := *p
	local.Spec.Platforms = append([]Platform(nil), p.Spec.Platforms...)
	found := false
	for i := range local.Spec.Platforms {
		if Matches(local.Spec.Platforms[i].Selector, pa) {
			local.Spec.Platforms[i].Sha256 = sum
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("plugin %q does not offer installation for %s: add a platform to .krew.yaml", p.Metadata.Name, pa)
	}
	return yaml.Marshal(&local)
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
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
