package staging

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestStagingVersion(t *testing.T) {
	for in, want := range map[string]string{"v1.37.2": "v0.37.2", "v1.36.0-rc.1": "v0.36.0-rc.1"} {
		if got, err := StagingVersion(in); err != nil || got != want {
			t.Errorf("StagingVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "v2.0.0", "1.37.2", "v1."} {
		if got, err := StagingVersion(bad); err == nil {
			t.Errorf("StagingVersion(%q) = %q, want an error", bad, got)
		}
	}
}

func TestReplaceBlock(t *testing.T) {
	gomod := []byte("module k8s.io/kubernetes\n\nreplace (\n\tk8s.io/zeta => ./staging/src/k8s.io/zeta\n\tk8s.io/api => ./staging/src/k8s.io/api\n\tgithub.com/x/y => github.com/x/y v1.0.0\n)\n")
	got, err := ReplaceBlock("v1.37.2", gomod)
	want := "replace (\n\tk8s.io/api => k8s.io/api v0.37.2\n\tk8s.io/zeta => k8s.io/zeta v0.37.2\n)\n"
	if err != nil || got != want {
		t.Errorf("ReplaceBlock = %q, %v; want %q", got, err, want)
	}
	if _, err := ReplaceBlock("v1.37.2", []byte("module x\n")); err == nil {
		t.Error("ReplaceBlock of a go.mod without staging replaces: want an error")
	}
}

// TestGoModsMatchPinnedKubernetes fails when a go.mod of the kit (or of a
// module of its own under testdata/ or examples/, or the build module of
// the API server end-to-end run, hack/e2e/apiserver) drifts from the replace
// block that the pinned
// k8s.io/kubernetes version needs: a staging module missing, extra, or pinned
// to another release.
func TestGoModsMatchPinnedKubernetes(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-json", "k8s.io/kubernetes").Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/kubernetes: %v", err)
	}
	var mod struct{ Version, GoMod string }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	kubeGoMod, err := os.ReadFile(mod.GoMod)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReplaceBlock(mod.Version, kubeGoMod)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join("..", "..", "..")
	paths := []string{filepath.Join(root, "go.mod")}
	for _, dir := range []string{"testdata", "examples"} {
		more, _ := filepath.Glob(filepath.Join(root, dir, "*", "go.mod"))
		paths = append(paths, more...)
	}
	paths = append(paths, filepath.Join(root, "hack", "e2e", "apiserver", "go.mod"))
	if !slices.Contains(paths, filepath.Join(root, "examples", "kubeletruntime", "go.mod")) {
		t.Fatalf("the go.mod of examples/kubeletruntime is not among the checked ones: %v", paths)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got := k8sReplaces(string(data))
		if got != want {
			t.Errorf("%s: the k8s.io replace directives do not match k8s.io/kubernetes %s.\ngot:\n%s\nwant (make replace-block):\n%s", path, mod.Version, got, want)
		}
	}
}

// k8sReplaces returns the k8s.io/* => k8s.io/* directives of a go.mod, in
// the form ReplaceBlock prints.
func k8sReplaces(gomod string) string {
	var b strings.Builder
	b.WriteString("replace (\n")
	for line := range strings.Lines(gomod) {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "replace "))
		if len(f) == 4 && f[1] == "=>" && strings.HasPrefix(f[0], "k8s.io/") && f[0] == f[2] {
			b.WriteString("\t" + strings.Join(f, " ") + "\n")
		}
	}
	b.WriteString(")\n")
	return b.String()
}
