package conformance_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kri-kit/testkit/conformance"
)

// contractE2E cites a node e2e test of kubernetes/kubernetes that a spec
// mirrors: the file under test/e2e/common/node and the test's name, as in
// its ginkgo.It (or framework.ConformanceIt, f.It).
type contractE2E struct {
	File string `json:"file"`
	Test string `json:"test"`
	Note string `json:"note,omitempty"`
}

// e2eDir is where the cited e2e tests live in the kubernetes module.
const e2eDir = "test/e2e/common/node/"

// e2eNodeDir holds the node e2e tests of features the conformance tests of
// e2eDir leave out (restartable init containers: container_lifecycle_test.go).
const e2eNodeDir = "test/e2e_node/"

// podSpecGroup is the group of the specs of what the pod spec asks of the
// node; their entries must cite the e2e test they mirror.
const podSpecGroup = "pod-spec"

// check reports what is wrong with c: a file outside e2eDir, or a test
// name that is not in the file (as a quoted Go string).
func (x *agentIndex) checkE2E(c contractE2E) error {
	if !(strings.HasPrefix(c.File, e2eDir) || strings.HasPrefix(c.File, e2eNodeDir)) || !strings.HasSuffix(c.File, ".go") || strings.Contains(c.File, "..") {
		return fmt.Errorf("file %q is not a Go file under %s or %s", c.File, e2eDir, e2eNodeDir)
	}
	if strings.TrimSpace(c.Test) == "" {
		return fmt.Errorf("names no test")
	}
	src, err := x.source(c.File)
	if err != nil {
		return err
	}
	if !strings.Contains(src, strconv.Quote(c.Test)) {
		return fmt.Errorf("%s has no test %q", c.File, c.Test)
	}
	return nil
}

// checkE2E checks the e2e citations of entry e: each must name a test of
// the kubernetes module, and an entry that lists a pod-spec spec must cite
// at least one.
func checkE2E(t *testing.T, at string, e contractEntry, catalogue map[string]conformance.SpecInfo, x *agentIndex) {
	t.Helper()
	for _, c := range e.E2E {
		if err := x.checkE2E(c); err != nil {
			t.Errorf("%s: e2e %s %q: %v", at, c.File, c.Test, err)
		}
	}
	if len(e.E2E) > 0 && e.About != "" {
		t.Errorf("%s: promises nothing (about) but cites e2e tests", at)
	}
	for _, id := range e.Specs {
		if slices.Contains(catalogue[id].Labels, podSpecGroup) && len(e.E2E) == 0 {
			t.Errorf("%s: spec %s checks what the pod spec asks of the node; cite the node e2e test it mirrors (e2e: file under %s, test)", at, id, e2eDir)
		}
	}
}

func TestE2ECitations(t *testing.T) {
	x := newAgentIndex(t)
	for _, tc := range []struct {
		c  contractE2E
		ok bool
	}{
		{contractE2E{File: e2eDir + "runtime.go", Test: "should report termination message if TerminationMessagePath is set"}, true},
		{contractE2E{File: e2eDir + "expansion.go", Test: "should allow composing env vars into new env vars"}, true},
		{contractE2E{File: e2eDir + "runtime.go", Test: "should report termination message"}, false}, // a prefix is not a test
		{contractE2E{File: e2eDir + "runtime.go", Test: "no such test"}, false},
		{contractE2E{File: e2eDir + "no_such_file.go", Test: "x"}, false},
		{contractE2E{File: "pkg/kubelet/kubelet.go", Test: "SyncPod"}, false},
		{contractE2E{File: e2eDir + "../../../../pkg/kubelet/kubelet.go", Test: "x"}, false},
		{contractE2E{File: e2eDir + "runtime.go", Test: " "}, false},
		{contractE2E{File: e2eNodeDir + "container_lifecycle_test.go", Test: "should terminate sidecars in reverse order after all main containers have exited"}, true},
		{contractE2E{File: e2eNodeDir + "container_lifecycle_test.go", Test: "no such test"}, false},
		{contractE2E{File: "test/e2e_nodes/container_lifecycle_test.go", Test: "x"}, false},
	} {
		if err := x.checkE2E(tc.c); (err == nil) != tc.ok {
			t.Errorf("checkE2E(%+v) = %v, want ok %v", tc.c, err, tc.ok)
		}
	}
}
