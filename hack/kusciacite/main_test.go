package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeTree writes files (slash paths to contents) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tinyKuscia is a checkout with a few declarations, and a file that does
// not parse.
var tinyKuscia = map[string]string{
	"pkg/agent/framework/pods.go": `package framework

type PodsController struct{}

func (pc *PodsController) syncPod() {}

func getPhase() {}

var notAFunction = 1
`,
	"pkg/agent/framework/pod.go": `package framework

func (pc PodsController) generateAPIPodStatus() {}

func (pc *PodsController) HandlePodCleanups() {}
`,
	"pkg/agent/framework/broken.go": "package framework\n\nfunc {\n",
}

// tinyContract cites tinyKuscia: two good citations, four bad ones, one
// that is not of the form, and a kubelet citation, which is not kuscia's.
const tinyContract = `# header
kuscia_commit: "0000000000000000000000000000000000000000"
promises:
  - where: package kri
    sentence: "One."
    specs: [KRI-POD-001]
    agent:
      - at: secretflow/kuscia pkg/agent/framework/pods.go syncPod
        breaks: "a method"
      - at: secretflow/kuscia pkg/agent/framework/pods.go getPhase
        breaks: "a function"
      - at: secretflow/kuscia pkg/agent/framework/pod.go generateAPIPodStatus
        breaks: "a method of a value receiver"
      - at: k8s.io/kubernetes/pkg/kubelet/kubelet.go SyncPod
        breaks: "not kuscia's"
  - where: PodLifecycleHandler
    sentence: "Two."
    specs: [KRI-POD-002]
    agent:
      - at: secretflow/kuscia pkg/agent/framework/pods.go notAFunction
        breaks: "a variable"
      - at: secretflow/kuscia pkg/agent/framework/pods.go HandlePodCleanups
        breaks: "declared in another file"
      - at: secretflow/kuscia pkg/agent/framework/gone.go syncPod
        breaks: "no such file"
      - at: secretflow/kuscia pkg/agent/framework/broken.go syncPod
        breaks: "does not parse"
      - at: secretflow/kuscia pkg/agent/framework/pods.go
        breaks: "no function"
    no_kuscia_caller: "ignored here"
`

// wantBad are the citations of tinyContract that check must report.
var wantBad = []string{
	"secretflow/kuscia pkg/agent/framework/pods.go notAFunction",
	"secretflow/kuscia pkg/agent/framework/pods.go HandlePodCleanups",
	"secretflow/kuscia pkg/agent/framework/gone.go syncPod",
	"secretflow/kuscia pkg/agent/framework/broken.go syncPod",
	"secretflow/kuscia pkg/agent/framework/pods.go",
}

func badCitations(problems []problem) []string {
	var got []string
	for _, p := range problems {
		got = append(got, p.cite.At)
	}
	return got
}

func TestCheckWorkTree(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, tinyKuscia)
	cites, err := kusciaCitations([]byte(tinyContract))
	if err != nil {
		t.Fatal(err)
	}
	if len(cites) != 8 {
		t.Fatalf("kusciaCitations found %d kuscia citations, want 8: %+v", len(cites), cites)
	}
	src, err := openSource(dir, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	problems := check(src, cites)
	if got := badCitations(problems); !slices.Equal(got, wantBad) {
		t.Errorf("check reported %q, want %q", got, wantBad)
	}
	for _, p := range problems {
		if p.cite.Promise != 2 || p.reason == "" {
			t.Errorf("problem %+v: want promise #2 and a reason", p)
		}
	}
}

// git runs git in dir and returns its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestCheckGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	work := t.TempDir()
	writeTree(t, work, tinyKuscia)
	git(t, work, "init", "-q")
	git(t, work, "add", ".")
	git(t, work, "commit", "-q", "-m", "tiny kuscia")
	commit := git(t, work, "rev-parse", "HEAD")
	bare := filepath.Join(t.TempDir(), "kuscia.git")
	git(t, work, "clone", "-q", "--bare", work, bare)
	// A file changed in the work tree after the commit: the work tree sees
	// it, the git directories read the commit.
	writeTree(t, work, map[string]string{"pkg/agent/framework/gone.go": "package framework\n\nfunc syncPod() {}\n"})

	cites, err := kusciaCitations([]byte(tinyContract))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		bad  []string
	}{
		{bare, wantBad},
		{filepath.Join(work, ".git"), wantBad},
		{work, slices.DeleteFunc(slices.Clone(wantBad), func(s string) bool { return strings.Contains(s, "gone.go") })},
	} {
		src, err := openSource(tc.path, "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		got, err := src.Commit()
		if err != nil || got != commit {
			t.Errorf("%s: Commit() = %q, %v; want %q", tc.path, got, err, commit)
		}
		if bad := badCitations(check(src, cites)); !slices.Equal(bad, tc.bad) {
			t.Errorf("%s: check reported %q, want %q", tc.path, bad, tc.bad)
		}
	}
	if _, err := openSource(t.TempDir(), "HEAD"); err == nil {
		t.Error("openSource of an empty directory: no error")
	}
}

func TestRecordCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "contract.yaml")
	if err := os.WriteFile(path, []byte(tinyContract), 0o644); err != nil {
		t.Fatal(err)
	}
	const commit = "e909d9f6d9a179c218de961cfe5a22fcafbda4b7"
	if err := recordCommit(path, commit); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(tinyContract, "0000000000000000000000000000000000000000", commit, 1)
	if string(b) != want {
		t.Errorf("recordCommit wrote\n%s\nwant\n%s", b, want)
	}
	got, err := recordedCommit(b)
	if err != nil || got != commit {
		t.Errorf("recordedCommit = %q, %v; want %q", got, err, commit)
	}
	if err := recordCommit(path, "not a commit"); err == nil {
		t.Error("recordCommit of a malformed commit: no error")
	}
}
