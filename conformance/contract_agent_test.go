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

// The node agents whose code testdata/contract.yaml cites: kuscia's agent,
// cited by repository path (its module is not a dependency: the form is
// checked here, and hack/kusciacite checks against a kuscia checkout that
// each cited file declares its function), and Kubernetes itself, read in the
// module cache (its functions are checked to exist).
const (
	kubeletModule = "k8s.io/kubernetes"
	kusciaRepo    = "secretflow/kuscia"
)

// providerCode are the paths, in the kubernetes module and in kuscia, of
// what KRI moves into the provider: the kubelet's runtime manager, PLEG,
// prober, image manager and runtime cache (kuscia's CRIProvider runs them),
// kuscia's copies of them and its providers. They are the yardstick of what
// a promise asks, never a caller of the provider, so never an agent.
var providerCode = map[string][]string{
	kubeletModule: {
		"pkg/kubelet/kuberuntime/",
		"pkg/kubelet/pleg/",
		"pkg/kubelet/prober/",
		"pkg/kubelet/images/",
		"pkg/kubelet/container/runtime_cache.go",
	},
	kusciaRepo: {
		"pkg/agent/kuberuntime/",
		"pkg/agent/pleg/",
		"pkg/agent/prober/",
		"pkg/agent/images/",
		"pkg/agent/container/runtime_cache.go",
		"pkg/agent/provider/",
	},
}

// isProviderCode reports whether path, in repo, is provider code.
func isProviderCode(repo, path string) bool {
	for _, p := range providerCode[repo] {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

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

// isKuscia reports whether a cites kuscia's agent.
func isKuscia(a contractAgent) bool { return strings.HasPrefix(a.At, kusciaRepo+" ") }

// check reports what is wrong with a: an empty reason, a citation of an
// unknown form or of provider code, or a kubelet function that is not in
// its file.
func (x *agentIndex) check(a contractAgent) error {
	if strings.TrimSpace(a.Breaks) == "" {
		return fmt.Errorf("says nothing under breaks: what goes wrong in that code when a provider breaks the promise")
	}
	const yardstick = "is provider code in KRI (as in kuscia's CRIProvider), the yardstick of the promise rather than its caller; cite the agent code that reads what the provider returns (a note may name the yardstick)"
	switch {
	case strings.HasPrefix(a.At, kubeletModule+"/"):
		m := citation.FindStringSubmatch(strings.TrimPrefix(a.At, kubeletModule+"/"))
		if m == nil {
			return fmt.Errorf("want %q", kubeletModule+"/<path>.go <Func>")
		}
		if isProviderCode(kubeletModule, m[1]) {
			return fmt.Errorf("%s %s", m[1], yardstick)
		}
		src, err := x.source(m[1])
		if err != nil {
			return err
		}
		if !regexp.MustCompile(`(?m)^func (\([^)]*\) )?` + m[2] + `[\[(]`).MatchString(src) {
			return fmt.Errorf("%s has no function or method %s", m[1], m[2])
		}
		return nil
	case isKuscia(a):
		m := citation.FindStringSubmatch(strings.TrimPrefix(a.At, kusciaRepo+" "))
		if m == nil || !strings.HasPrefix(m[1], "pkg/agent/") || strings.Contains(m[1], "..") {
			return fmt.Errorf("want %q", kusciaRepo+" pkg/agent/<path>.go <Func>")
		}
		if isProviderCode(kusciaRepo, m[1]) {
			return fmt.Errorf("%s %s", m[1], yardstick)
		}
		return nil
	}
	return fmt.Errorf("cites neither kuscia's agent (%s pkg/agent/...) nor Kubernetes (%s/...)", kusciaRepo, kubeletModule)
}

// checkEntry reports what is wrong with the agent citations of entry e, a
// promise that a MUST spec checks when must is set: each citation's own
// faults (check), and a list without kuscia. Every MUST promise, and every
// agent list, must cite kuscia's agent, unless no_kuscia_caller says why no
// code of it depends on the promise; then it cites no kuscia code.
func (x *agentIndex) checkEntry(e contractEntry, must bool) []error {
	var errs []error
	kuscia := 0
	for _, a := range e.Agent {
		if err := x.check(a); err != nil {
			errs = append(errs, fmt.Errorf("agent %q: %v", a.At, err))
		}
		if isKuscia(a) {
			kuscia++
		}
	}
	switch none := strings.TrimSpace(e.NoKusciaCaller) != ""; {
	case none && kuscia > 0:
		errs = append(errs, fmt.Errorf("cites kuscia's agent and says no_kuscia_caller; keep one"))
	case none:
	case must && kuscia == 0:
		errs = append(errs, fmt.Errorf("a MUST spec checks this promise, but no code of kuscia's agent is cited; name it (agent: at %q, breaks), or say why none depends on it (no_kuscia_caller) and make the promise a SHOULD", kusciaRepo+" pkg/agent/<path>.go <Func>"))
	case len(e.Agent) > 0 && kuscia == 0:
		errs = append(errs, fmt.Errorf("the agent list cites no code of kuscia's agent; cite it too, or say why none depends on the promise (no_kuscia_caller)"))
	}
	return errs
}

// kusciaCommit is a full secretflow/kuscia commit ID.
var kusciaCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// checkKusciaCommit reports a table that cites kuscia without the commit at
// which its citations were checked.
func checkKusciaCommit(table contractTable) error {
	for _, e := range table.Promises {
		for _, a := range e.Agent {
			if isKuscia(a) && !kusciaCommit.MatchString(table.KusciaCommit) {
				return fmt.Errorf("kuscia_commit is %q; want the 40-hex secretflow/kuscia commit at which 'make kuscia-cite' passed", table.KusciaCommit)
			}
		}
	}
	return nil
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
		{kubeletModule + "/pkg/scheduler/framework/plugins/noderesources/fit.go fitsRequest", "x", true},
		// The provider's insides, though the functions exist.
		{kubeletModule + "/pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions", "x", false},
		{kubeletModule + "/pkg/kubelet/pleg/generic.go Relist", "x", false},
		{kubeletModule + "/pkg/kubelet/prober/worker.go doProbe", "x", false},
		{kubeletModule + "/pkg/kubelet/images/image_manager.go EnsureImageExists", "x", false},
		{kubeletModule + "/pkg/kubelet/container/runtime_cache.go GetPods", "x", false},
		{kusciaRepo + " pkg/agent/framework/pod.go generateAPIPodStatus", "x", true},
		{kusciaRepo + " pkg/agent/status/status_manager.go updateStatusInternal", "x", true},
		{kusciaRepo + " pkg/agent/provider/pod/cri_provider.go SyncPod", "x", false},
		{kusciaRepo + " pkg/agent/kuberuntime/kuberuntime_manager.go SyncPod", "x", false},
		{kusciaRepo + " pkg/agent/framework/../provider/pod/cri_provider.go SyncPod", "x", false},
		{kusciaRepo + " cmd/main.go main", "x", false},
		{"github.com/virtual-kubelet/virtual-kubelet node/pod.go createOrUpdatePod", "x", false},
		{kubeletModule + "/pkg/kubelet/kubelet.go SyncPod", " ", false},
	} {
		err := x.check(contractAgent{At: tc.at, Breaks: tc.breaks})
		if (err == nil) != tc.ok {
			t.Errorf("check(%q, breaks %q) = %v, want ok %v", tc.at, tc.breaks, err, tc.ok)
		}
	}

	kuscia := contractAgent{At: kusciaRepo + " pkg/agent/framework/pods_controller.go syncPod", Breaks: "x"}
	kubelet := contractAgent{At: kubeletModule + "/pkg/kubelet/kubelet.go SyncPod", Breaks: "x"}
	kuberuntime := contractAgent{At: kubeletModule + "/pkg/kubelet/kuberuntime/kuberuntime_manager.go SyncPod", Breaks: "x"}
	for _, tc := range []struct {
		name     string
		agent    []contractAgent
		noKuscia string
		must, ok bool
	}{
		{"MUST citing kuscia", []contractAgent{kuscia}, "", true, true},
		{"MUST citing kuscia and the kubelet", []contractAgent{kubelet, kuscia}, "", true, true},
		{"MUST citing only the kubelet", []contractAgent{kubelet}, "", true, false},
		{"MUST citing nothing", nil, "", true, false},
		{"MUST citing kuscia and kuberuntime", []contractAgent{kuscia, kuberuntime}, "", true, false},
		{"MUST no kuscia caller, kubelet cited", []contractAgent{kubelet}, "why", true, true},
		{"MUST no kuscia caller, nothing cited", nil, "why", true, true},
		{"MUST no kuscia caller, kuberuntime cited", []contractAgent{kuberuntime}, "why", true, false},
		{"MUST no kuscia caller yet kuscia cited", []contractAgent{kuscia}, "why", true, false},
		{"MUST blank no kuscia caller", []contractAgent{kubelet}, " ", true, false},
		{"SHOULD citing nothing", nil, "", false, true},
		{"SHOULD citing only the kubelet", []contractAgent{kubelet}, "", false, false},
		{"SHOULD no kuscia caller, kubelet cited", []contractAgent{kubelet}, "why", false, true},
	} {
		errs := x.checkEntry(contractEntry{Agent: tc.agent, NoKusciaCaller: tc.noKuscia}, tc.must)
		if (len(errs) == 0) != tc.ok {
			t.Errorf("%s: checkEntry = %v, want ok %v", tc.name, errs, tc.ok)
		}
	}

	cites := contractTable{Promises: []contractEntry{{Agent: []contractAgent{kuscia}}}}
	for _, tc := range []struct {
		table  contractTable
		commit string
		ok     bool
	}{
		{cites, "e909d9f6d9a179c218de961cfe5a22fcafbda4b7", true},
		{cites, "", false},
		{cites, "e909d9f", false},
		{cites, "E909D9F6D9A179C218DE961CFE5A22FCAFBDA4B7", false},
		{contractTable{Promises: []contractEntry{{Agent: []contractAgent{kubelet}}}}, "", true},
	} {
		tc.table.KusciaCommit = tc.commit
		if err := checkKusciaCommit(tc.table); (err == nil) != tc.ok {
			t.Errorf("checkKusciaCommit(commit %q) = %v, want ok %v", tc.commit, err, tc.ok)
		}
	}
}
