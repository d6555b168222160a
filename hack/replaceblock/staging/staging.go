// Package staging derives the replace block for the k8s.io staging modules
// from the go.mod of k8s.io/kubernetes.
package staging

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// stagingReplace matches a line of the kubernetes go.mod that points a
// staging module at the in-repository copy, e.g.
// "k8s.io/api => ./staging/src/k8s.io/api".
var stagingReplace = regexp.MustCompile(`^\s*(k8s\.io/[\w.-]+)\s+=>\s+\./staging/src/`)

// StagingVersion maps a kubernetes release (v1.37.2) to the version its
// staging modules are published under (v0.37.2).
func StagingVersion(kubernetesVersion string) (string, error) {
	rest, ok := strings.CutPrefix(kubernetesVersion, "v1.")
	if !ok || rest == "" {
		return "", fmt.Errorf("kubernetes version %q: want the form v1.MINOR.PATCH", kubernetesVersion)
	}
	return "v0." + rest, nil
}

// Modules returns, sorted, the staging modules that the kubernetes go.mod
// replaces with its in-repository copies.
func Modules(kubernetesGoMod []byte) []string {
	var mods []string
	for line := range strings.Lines(string(kubernetesGoMod)) {
		if m := stagingReplace.FindStringSubmatch(line); m != nil {
			mods = append(mods, m[1])
		}
	}
	sort.Strings(mods)
	return mods
}

// ReplaceBlock returns the replace block, in go.mod syntax, that pins every
// staging module of kubernetesGoMod to the release matching
// kubernetesVersion.
func ReplaceBlock(kubernetesVersion string, kubernetesGoMod []byte) (string, error) {
	v, err := StagingVersion(kubernetesVersion)
	if err != nil {
		return "", err
	}
	mods := Modules(kubernetesGoMod)
	if len(mods) == 0 {
		return "", fmt.Errorf("the go.mod of k8s.io/kubernetes %s replaces no staging module", kubernetesVersion)
	}
	var b strings.Builder
	b.WriteString("replace (\n")
	for _, m := range mods {
		fmt.Fprintf(&b, "\t%s => %s %s\n", m, m, v)
	}
	b.WriteString(")\n")
	return b.String(), nil
}

// GoMod is the part of `go mod edit -json`'s output that EditArgs reads.
type GoMod struct {
	Require []struct {
		Path    string
		Version string
	}
	Replace []struct {
		Old struct{ Path string }
		New struct{ Path, Version string }
	}
}

// EditArgs returns the `go mod edit` flags that move a module, described by
// mod, to the kubernetes release kubernetesVersion whose staging modules
// are staged: k8s.io/kubernetes and each staging module it requires at that
// release (a staging module the release lacks is dropped), and its k8s.io
// replace block replaced by the release's. Replaces of modules outside
// k8s.io and those that point into the module's own tree are kept.
func EditArgs(mod GoMod, kubernetesVersion string, staged []string) ([]string, error) {
	v, err := StagingVersion(kubernetesVersion)
	if err != nil {
		return nil, err
	}
	if len(staged) == 0 {
		return nil, fmt.Errorf("the go.mod of k8s.io/kubernetes %s replaces no staging module", kubernetesVersion)
	}
	isStaged := func(p string) bool { _, ok := slices.BinarySearch(staged, p); return ok }
	var args []string
	for _, r := range mod.Replace {
		if strings.HasPrefix(r.Old.Path, "k8s.io/") && r.New.Version != "" {
			args = append(args, "-dropreplace="+r.Old.Path)
		}
	}
	for _, m := range staged {
		args = append(args, fmt.Sprintf("-replace=%s=%s@%s", m, m, v))
	}
	for _, r := range mod.Require {
		switch {
		case r.Path == "k8s.io/kubernetes":
			args = append(args, "-require=k8s.io/kubernetes@"+kubernetesVersion)
		case isStaged(r.Path):
			args = append(args, fmt.Sprintf("-require=%s@%s", r.Path, v))
		case strings.HasPrefix(r.Path, "k8s.io/") && strings.HasPrefix(r.Version, "v0.") && !strings.HasPrefix(r.Version, "v0.0.0-"):
			// A staging module of another release that this one lacks
			// (k8s.io/streaming came with 1.37, say).
			args = append(args, "-droprequire="+r.Path)
		}
	}
	return args, nil
}
