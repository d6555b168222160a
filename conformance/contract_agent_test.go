package conformance_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// The node agents whose code testdata/contract.yaml cites: the kubelet, read
// in the module cache (its functions are checked to exist), and kuscia's
// agent, cited by repository path (its module is not a dependency; the
// form is checked).
const (
	kubeletModule = "k8s.io/kubernetes"
	kusciaRepo    = "secretflow/kuscia"
)

// agentIndex checks the agent citations of the contract table.
type agentIndex struct {
	kubeletDir string // the k8s.io/kubernetes module in the module cache
	dirErr     error

	mu    sync.Mutex
	files map[string]string // source of the kubelet files read so far
}

func newAgentIndex(t *testing.T) *agentIndex {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", kubeletModule).Output()
	dir := strings.TrimSpace(string(out))
	if err == nil && dir == "" {
		err = fmt.Errorf("go list -m %s printed no directory (module not downloaded?)", kubeletModule)
	}
	return &agentIndex{kubeletDir: dir, dirErr: err, files: map[string]string{}}
}

// citation is "<path> <Func>" after the repository: a Go file and a
// function or method name.
var citation = regexp.MustCompile(`^(\S+\.go) ([A-Za-z_][A-Za-z0-9_]*)$`)

// check reports what is wrong with a: an empty reason, a citation of an
// unknown form, or a kubelet function that is not in its file.
func (x *agentIndex) check(a contractAgent) error {
	if strings.TrimSpace(a.Breaks) == "" {
		return fmt.Errorf("says nothing under breaks: what goes wrong in that code when a provider breaks the promise")
	}
	switch {
	case strings.HasPrefix(a.At, kubeletModule+"/"):
		m := citation.FindStringSubmatch(strings.TrimPrefix(a.At, kubeletModule+"/"))
		if m == nil {
			return fmt.Errorf("want %q", kubeletModule+"/<path>.go <Func>")
		}
		src, err := x.source(m[1])
		if err != nil {
			return err
		}
		if !regexp.MustCompile(`(?m)^func (\([^)]*\) )?` + m[2] + `[\[(]`).MatchString(src) {
			return fmt.Errorf("%s has no function or method %s", m[1], m[2])
		}
		return nil
	case strings.HasPrefix(a.At, kusciaRepo+" "):
		rest := strings.TrimPrefix(a.At, kusciaRepo+" ")
		if m := citation.FindStringSubmatch(rest); m == nil || !strings.HasPrefix(m[1], "pkg/agent/") {
			return fmt.Errorf("want %q", kusciaRepo+" pkg/agent/<path>.go <Func>")
		}
		return nil
	}
	return fmt.Errorf("cites neither the kubelet (%s/...) nor kuscia's agent (%s ...)", kubeletModule, kusciaRepo)
}

// source returns the text of path in the kubelet's module.
func (x *agentIndex) source(path string) (string, error) {
	if x.dirErr != nil {
		return "", fmt.Errorf("cannot find the %s module to check the citation: %v", kubeletModule, x.dirErr)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if src, ok := x.files[path]; ok {
		return src, nil
	}
	b, err := os.ReadFile(filepath.Join(x.kubeletDir, filepath.FromSlash(path)))
	if err != nil {
		return "", fmt.Errorf("%s is not a file of %s: %v", path, kubeletModule, err)
	}
	x.files[path] = string(b)
	return x.files[path], nil
}

func TestAgentCitations(t *testing.T) {
	x := newAgentIndex(t)
	for _, tc := range []struct {
		at, breaks string
		ok         bool
	}{
		{kubeletModule + "/pkg/kubelet/pod_workers.go isPodStatusCacheTerminal", "x", true},
		{kubeletModule + "/pkg/kubelet/kubelet.go SyncPod", "x", true}, // a method
		{kubeletModule + "/pkg/kubelet/pod_workers.go noSuchFunction", "x", false},
		{kubeletModule + "/pkg/kubelet/no_such_file.go SyncPod", "x", false},
		{kubeletModule + "/pkg/kubelet/kubelet.go", "x", false},
		{kusciaRepo + " pkg/agent/framework/pod.go generateAPIPodStatus", "x", true},
		{kusciaRepo + " cmd/main.go main", "x", false},
		{"github.com/virtual-kubelet/virtual-kubelet node/pod.go createOrUpdatePod", "x", false},
		{kubeletModule + "/pkg/kubelet/kubelet.go SyncPod", " ", false},
	} {
		err := x.check(contractAgent{At: tc.at, Breaks: tc.breaks})
		if (err == nil) != tc.ok {
			t.Errorf("check(%q, breaks %q) = %v, want ok %v", tc.at, tc.breaks, err, tc.ok)
		}
	}
}
