// Package staging derives the replace block for the k8s.io staging modules
// from the go.mod of k8s.io/kubernetes.
package staging

import (
	"fmt"
	"regexp"
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
