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
// block that the k8s.io/kubernetes version it requires needs: a staging
// module missing, extra, or pinned to another release. The kit and
// testdata/consumer, the consumer that shows the oldest supported release,
// require the same version.
func TestGoModsMatchPinnedKubernetes(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	paths := []string{filepath.Join(root, "go.mod")}
	for _, dir := range []string{"testdata", "examples"} {
		more, _ := filepath.Glob(filepath.Join(root, dir, "*", "go.mod"))
		paths = append(paths, more...)
	}
	paths = append(paths, filepath.Join(root, "hack", "e2e", "apiserver", "go.mod"))
	for _, must := range []string{"examples/kubeletruntime/go.mod", "testdata/consumer/go.mod"} {
		if !slices.Contains(paths, filepath.Join(root, must)) {
			t.Fatalf("%s is not among the checked go.mod files: %v", must, paths)
		}
	}
	kubernetes, vkProviders := map[string]string{}, 0
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		version := required(string(data), "k8s.io/kubernetes")
		if required(string(data), vkModule) != "" {
			// A VK provider's module: it needs neither k8s.io/kubernetes
			// nor the replace block (make test-vk checks its build list).
			vkProviders++
			if version != "" || k8sReplaces(string(data)) != "replace (\n)\n" {
				t.Errorf("%s requires k8s.io/kubernetes %q or replaces k8s.io modules: a VK provider's module needs neither", path, version)
			}
			continue
		}
		if version == "" {
			t.Errorf("%s requires no k8s.io/kubernetes version", path)
			continue
		}
		kubernetes[path] = version
		out, err := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes@"+version).Output()
		if err != nil {
			t.Fatalf("go mod download k8s.io/kubernetes@%s: %v", version, err)
		}
		var mod struct{ GoMod string }
		if err := json.Unmarshal(out, &mod); err != nil {
			t.Fatal(err)
		}
		kubeGoMod, err := os.ReadFile(mod.GoMod)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ReplaceBlock(version, kubeGoMod)
		if err != nil {
			t.Fatal(err)
		}
		if got := k8sReplaces(string(data)); got != want {
			t.Errorf("%s: the k8s.io replace directives do not match k8s.io/kubernetes %s.\ngot:\n%s\nwant (make replace-block K8S_VERSION=%s):\n%s", path, version, got, version, want)
		}
	}
	if vkProviders == 0 {
		t.Errorf("no go.mod under testdata/ or examples/ requires %s: the VK providers' modules (testdata/vkconsumer, examples/vkremote) were not checked", vkModule)
	}
	kit, consumer := kubernetes[filepath.Join(root, "go.mod")], kubernetes[filepath.Join(root, "testdata", "consumer", "go.mod")]
	if kit != consumer {
		t.Errorf("the kit requires k8s.io/kubernetes %s and testdata/consumer %s: the consumer shows the oldest supported release, the kit's", kit, consumer)
	}
}

// TestSuiteModulesNeedNoKubelet fails when vk/ (the VK provider suite),
// suite/ (what the KRI and VK suites share, which vk requires) or sim/ (the
// kit's simulations and fake API server, which vk requires too) requires
// k8s.io/kubernetes or replaces k8s.io modules: a VK provider's module
// requires them all, and must need neither. suite/ and sim/ must not
// require virtual-kubelet either: the KRI kit requires them too.
func TestSuiteModulesNeedNoKubelet(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	for _, mod := range []string{"vk", "suite", "sim"} {
		path := filepath.Join(root, mod, "go.mod")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if version := required(string(data), "k8s.io/kubernetes"); version != "" || k8sReplaces(string(data)) != "replace (\n)\n" {
			t.Errorf("%s requires k8s.io/kubernetes %q or replaces k8s.io modules: a VK provider's module requires it and needs neither", path, version)
		}
		if mod != "vk" && required(string(data), "github.com/virtual-kubelet/virtual-kubelet") != "" {
			t.Errorf("%s requires virtual-kubelet: a module the KRI kit and vk share must not", path)
		}
	}
	if required(mustRead(t, filepath.Join(root, "vk", "go.mod")), suiteModule) == "" {
		t.Errorf("vk/go.mod does not require %s: what the suites share is written twice again", suiteModule)
	}
}

// suiteModule is the module of what the kit's suites share.
const suiteModule = "github.com/kri-kit/testkit/suite"

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// vkModule is the module of the virtual-kubelet provider suite. A module
// that requires it is a VK provider's and must not require
// k8s.io/kubernetes (README, "virtual-kubelet providers").
const vkModule = "github.com/kri-kit/testkit/vk"

// required returns the version of module a go.mod requires, or "".
func required(gomod, module string) string {
	for line := range strings.Lines(gomod) {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == module && strings.HasPrefix(f[1], "v") {
			return f[1]
		}
	}
	return ""
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

func TestEditArgs(t *testing.T) {
	var mod GoMod
	if err := json.Unmarshal([]byte(`{
		"Require": [
			{"Path": "github.com/onsi/ginkgo/v2", "Version": "v2.34.0"},
			{"Path": "k8s.io/api", "Version": "v0.35.4"},
			{"Path": "k8s.io/kubernetes", "Version": "v1.35.4"},
			{"Path": "k8s.io/streaming", "Version": "v0.37.2"},
			{"Path": "k8s.io/utils", "Version": "v0.0.0-20251002143259-bc988d571ff4"},
			{"Path": "k8s.io/klog/v2", "Version": "v2.130.1"}
		],
		"Replace": [
			{"Old": {"Path": "github.com/kri-kit/testkit"}, "New": {"Path": "../.."}},
			{"Old": {"Path": "k8s.io/api"}, "New": {"Path": "k8s.io/api", "Version": "v0.35.4"}},
			{"Old": {"Path": "k8s.io/streaming"}, "New": {"Path": "k8s.io/streaming", "Version": "v0.37.2"}}
		]}`), &mod); err != nil {
		t.Fatal(err)
	}
	got, err := EditArgs(mod, "v1.36.3", []string{"k8s.io/api", "k8s.io/client-go"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"-dropreplace=k8s.io/api", "-dropreplace=k8s.io/streaming",
		"-replace=k8s.io/api=k8s.io/api@v0.36.3", "-replace=k8s.io/client-go=k8s.io/client-go@v0.36.3",
		"-require=k8s.io/api@v0.36.3", "-require=k8s.io/kubernetes@v1.36.3", "-droprequire=k8s.io/streaming",
	}
	if !slices.Equal(got, want) {
		t.Errorf("EditArgs =\n%q\nwant\n%q", got, want)
	}
	if _, err := EditArgs(mod, "1.36", nil); err == nil {
		t.Error("EditArgs accepted the version 1.36")
	}
}
