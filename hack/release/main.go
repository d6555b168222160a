// Command release does the two things a release of the kit needs done to
// its go.mod files and module zips (the README's "Cutting a release"):
//
//	go run ./hack/release bump -version vX.Y.Z
//	go run ./hack/release proxy -dir DIR [-version V] [-no-bump]
//
// bump is the release commit: every go.mod of the repository that requires
// one of the kit's published modules (suite, sim, the kit, vk: Published)
// requires it at vX.Y.Z, the version the tags publish. It refuses a
// requirement that is not a release version (a placeholder such as
// v0.0.0-00010101000000-000000000000, a pseudo-version): the tree requires
// its siblings at real versions, the last release commit's, and its own
// builds resolve them with replace directives that no consumer sees.
//
// proxy builds a file GOPROXY (GOPROXY=file://DIR) that serves each
// published module of the working tree at V as the tags suite/vX, sim/vX,
// vX and vk/vX would publish it: the module zips (golang.org/x/mod/zip, which
// leaves out nested modules) of the files git tracks or would track, with
// the go.mod files bumped to V as a release commit would. It then checks
// that every requirement of a published module on a kit module is one the
// proxy serves, and fails naming it when not. -no-bump publishes the
// go.mod files as they are (what tagging the tree without a release commit
// would publish); -no-check then only warns, so that the consumers of make
// release-check meet the requirement as a user would. Without -version, V
// is v0.0.0-check.<hash of the published files>: a new version for every
// change, so that the module cache never serves an older build of the
// same version. It prints V.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// Published are the directories of the modules a release publishes,
// relative to the repository's root, each under the tag prefix of its
// directory ("" for the root: vX.Y.Z; suite/vX.Y.Z; sim/vX.Y.Z;
// vk/vX.Y.Z), in the order their tags are pushed: each after the kit
// modules it requires (suite and sim require none; the kit and vk require
// both), so that no tag reaches the proxy before what it needs.
var Published = []string{"suite", "sim", ".", "vk"}

// kitPrefix is the module path every module of the repository starts with.
const kitPrefix = "github.com/kri-kit/testkit"

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	root, err := repoRoot()
	if err != nil {
		fatal(err)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	version := fs.String("version", "", "the version to publish (vX.Y.Z)")
	dir := fs.String("dir", "", "proxy: the directory to write the file GOPROXY to")
	noBump := fs.Bool("no-bump", false, "proxy: publish the go.mod files unchanged, as a tag without a release commit would")
	noCheck := fs.Bool("no-check", false, "proxy: print the requirements the proxy cannot serve as a warning instead of failing (to see the consumers fail on them)")
	modules := fs.String("modules", strings.Join(Published, ","), "proxy: the module directories to publish (to see the check fail without one)")
	_ = fs.Parse(os.Args[2:])
	switch os.Args[1] {
	case "bump":
		if *version == "" || !isRelease(*version) {
			fatal(fmt.Errorf("bump: -version must be a release version vX.Y.Z, got %q", *version))
		}
		if err := bump(root, *version); err != nil {
			fatal(err)
		}
	case "proxy":
		if *dir == "" {
			usage()
		}
		v, err := buildProxy(root, *dir, *version, strings.Split(*modules, ","), !*noBump)
		var unservedErr *unservedError
		if errors.As(err, &unservedErr) && *noCheck {
			fmt.Fprintln(os.Stderr, "release: warning (-no-check):", err)
			v, err = unservedErr.version, nil
		}
		if err != nil {
			fatal(err)
		}
		fmt.Println(v)
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: go run ./hack/release bump -version vX.Y.Z\n       go run ./hack/release proxy -dir DIR [-version V] [-no-bump] [-no-check] [-modules suite,sim,.,vk]")
	os.Exit(2)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "release:", err)
	os.Exit(1)
}

func repoRoot() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse --show-toplevel: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// isRelease reports whether v is a release version: canonical semver, no
// prerelease, no build metadata.
func isRelease(v string) bool {
	return semver.IsValid(v) && semver.Canonical(v) == v && semver.Prerelease(v) == ""
}

// files lists the files git tracks or would track (untracked, not
// ignored) in the working tree, relative to root, that exist.
func files(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %v", err)
	}
	var list []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(root, f)); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		list = append(list, f)
	}
	sort.Strings(list)
	return slices.Compact(list), nil
}

// bump rewrites, in every go.mod of the repository, each requirement on a
// published module of the kit to version.
func bump(root, version string) error {
	all, err := files(root)
	if err != nil {
		return err
	}
	published, err := publishedPaths(root, Published)
	if err != nil {
		return err
	}
	for _, f := range all {
		if path.Base(f) != "go.mod" {
			continue
		}
		p := filepath.Join(root, f)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out, changed, err := bumpGoMod(f, data, published, version)
		if err != nil {
			return err
		}
		if changed {
			if err := os.WriteFile(p, out, 0o644); err != nil {
				return err
			}
			fmt.Printf("%s: the kit's modules required at %s\n", f, version)
		}
	}
	return nil
}

// publishedPaths maps the module path of each published directory to the
// directory.
func publishedPaths(root string, dirs []string) (map[string]string, error) {
	m := map[string]string{}
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(root, d, "go.mod"))
		if err != nil {
			return nil, err
		}
		mp := modfile.ModulePath(data)
		if mp == "" {
			return nil, fmt.Errorf("%s/go.mod: no module path", d)
		}
		m[mp] = d
	}
	return m, nil
}

// bumpGoMod sets every requirement of gomod (named name) on a module of
// published to version. A requirement on a kit module at a version that is
// not a release is an error: the tree must require its siblings at real
// versions.
func bumpGoMod(name string, gomod []byte, published map[string]string, version string) ([]byte, bool, error) {
	f, err := modfile.Parse(name, gomod, nil)
	if err != nil {
		return nil, false, err
	}
	changed := false
	var bumped []string
	for _, r := range f.Require {
		if !strings.HasPrefix(r.Mod.Path, kitPrefix) {
			continue
		}
		if !isRelease(r.Mod.Version) {
			return nil, false, fmt.Errorf("%s requires %s %s, a version no release publishes (a placeholder or pseudo-version): require the kit's modules at a release version, the last release commit's, and build the checkout's with a replace directive (README, \"Cutting a release\")", name, r.Mod.Path, r.Mod.Version)
		}
		if _, ok := published[r.Mod.Path]; !ok || r.Mod.Version == version {
			continue
		}
		bumped = append(bumped, r.Mod.Path)
		changed = true
	}
	if !changed {
		return gomod, false, nil
	}
	for _, p := range bumped {
		// AddRequire sets the version of an existing requirement in place,
		// keeping its block and comments.
		if err := f.AddRequire(p, version); err != nil {
			return nil, false, err
		}
	}
	out, err := f.Format()
	return out, true, err
}

// buildProxy writes the file GOPROXY to dir and returns the version it
// serves.
func buildProxy(root, dir, version string, dirs []string, doBump bool) (string, error) {
	all, err := files(root)
	if err != nil {
		return "", err
	}
	published, err := publishedPaths(root, dirs)
	if err != nil {
		return "", err
	}
	// The files of each module: under its directory (zip.Create leaves out
	// those of nested modules, which it finds by their go.mod).
	type mod struct {
		path, dir string
		files     []string
	}
	var mods []mod
	for mp, d := range published {
		var fs []string
		for _, f := range all {
			if d == "." || strings.HasPrefix(f, d+"/") {
				fs = append(fs, f)
			}
		}
		mods = append(mods, mod{mp, d, fs})
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].path < mods[j].path })
	if version == "" {
		h := sha256.New()
		for _, m := range mods {
			for _, f := range m.files {
				data, err := os.ReadFile(filepath.Join(root, f))
				if err != nil {
					return "", err
				}
				fmt.Fprintf(h, "%s\x00%d\x00", f, len(data))
				h.Write(data)
			}
		}
		fmt.Fprintf(h, "bump=%v", doBump)
		version = "v0.0.0-check." + hex.EncodeToString(h.Sum(nil))[:12]
	}
	if !semver.IsValid(version) {
		return "", fmt.Errorf("-version %q is not a semantic version", version)
	}
	var problems []string
	for _, m := range mods {
		gomodPath := path.Join(m.dir, "go.mod")
		gomod, err := os.ReadFile(filepath.Join(root, gomodPath))
		if err != nil {
			return "", err
		}
		if doBump {
			if gomod, _, err = bumpGoMod(gomodPath, gomod, published, version); err != nil {
				return "", err
			}
		}
		p, err := unserved(gomodPath, gomod, published, version)
		if err != nil {
			return "", err
		}
		problems = append(problems, p...)
		if err := writeModule(root, dir, m.path, m.dir, m.files, gomod, version); err != nil {
			return "", err
		}
	}
	if len(problems) > 0 {
		return "", &unservedError{version, problems}
	}
	return version, nil
}

// unservedError is buildProxy's error when a published module requires a
// kit module the proxy it built cannot serve; the proxy is complete.
type unservedError struct {
	version  string
	problems []string
}

func (e *unservedError) Error() string {
	return "a published module requires a sibling at a version no release of this tree serves:\n\t" + strings.Join(e.problems, "\n\t")
}

// unserved lists the requirements of gomod (named name) on a kit module
// that a proxy serving the modules of published at version cannot serve.
func unserved(name string, gomod []byte, published map[string]string, version string) ([]string, error) {
	f, err := modfile.Parse(name, gomod, nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range f.Require {
		if !strings.HasPrefix(r.Mod.Path, kitPrefix) {
			continue
		}
		if _, ok := published[r.Mod.Path]; !ok || r.Mod.Version != version {
			out = append(out, fmt.Sprintf("%s (as published) requires %s %s, which this proxy cannot serve: it serves %s at %s", name, r.Mod.Path, r.Mod.Version, strings.Join(sortedKeys(published), ", "), version))
		}
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// writeModule writes one module version into the proxy at dir: @v/list,
// .info, .mod and .zip.
func writeModule(root, dir, modPath, modDir string, fs []string, gomod []byte, version string) error {
	esc, err := module.EscapePath(modPath)
	if err != nil {
		return err
	}
	escV, err := module.EscapeVersion(version)
	if err != nil {
		return err
	}
	vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	var zfiles []modzip.File
	for _, f := range fs {
		rel := f
		if modDir != "." {
			rel = strings.TrimPrefix(f, modDir+"/")
		}
		if rel == "go.mod" {
			zfiles = append(zfiles, dataFile{name: rel, data: gomod})
			continue
		}
		zfiles = append(zfiles, diskFile{name: rel, path: filepath.Join(root, f)})
	}
	var zbuf bytes.Buffer
	if err := modzip.Create(&zbuf, module.Version{Path: modPath, Version: version}, zfiles); err != nil {
		return fmt.Errorf("zip of %s: %w", modPath, err)
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	for name, data := range map[string][]byte{
		"list":         []byte(version + "\n"),
		escV + ".info": info,
		escV + ".mod":  gomod,
		escV + ".zip":  zbuf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// diskFile is a file of the working tree, under its path in the zip.
type diskFile struct{ name, path string }

func (f diskFile) Path() string                 { return f.name }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.path) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.path) }

// dataFile is a file whose content is in memory (a bumped go.mod).
type dataFile struct {
	name string
	data []byte
}

func (f dataFile) Path() string                 { return f.name }
func (f dataFile) Lstat() (os.FileInfo, error)  { return dataInfo{f}, nil }
func (f dataFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type dataInfo struct{ f dataFile }

func (i dataInfo) Name() string       { return path.Base(i.f.name) }
func (i dataInfo) Size() int64        { return int64(len(i.f.data)) }
func (i dataInfo) Mode() os.FileMode  { return 0o644 }
func (i dataInfo) ModTime() time.Time { return time.Time{} }
func (i dataInfo) IsDir() bool        { return false }
func (i dataInfo) Sys() any           { return nil }
