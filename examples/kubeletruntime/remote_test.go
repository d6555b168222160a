package kubeletruntime_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	critest "k8s.io/cri-api/pkg/apis/testing"
	crifake "k8s.io/cri-client/pkg/fake"

	"github.com/kri-kit/testkit/examples/kubeletruntime"
)

// TestDialCRI builds the provider over the CRI services DialCRI connects to,
// served over gRPC by k8s.io/cri-client's fake remote runtime: the runtime
// name comes from the Version the remote runtime answered, and a call goes
// through.
func TestDialCRI(t *testing.T) {
	endpoint := "unix://" + filepath.Join(t.TempDir(), "cri.sock")
	srv := crifake.NewFakeRemoteRuntime()
	if err := srv.Start(endpoint); err != nil {
		t.Fatalf("starting the fake CRI server at %s: %v", endpoint, err)
	}
	defer srv.Stop()

	rs, is, err := kubeletruntime.DialCRI(t.Context(), endpoint, 10*time.Second)
	if err != nil {
		t.Fatalf("DialCRI(%q): %v", endpoint, err)
	}
	defer func() {
		if err := rs.Close(t.Context()); err != nil {
			t.Errorf("closing the runtime service: %v", err)
		}
		if err := is.Close(t.Context()); err != nil {
			t.Errorf("closing the image service: %v", err)
		}
	}()
	p := newProvider(t, kubeletruntime.Options{RuntimeService: rs, ImageService: is})
	if got := p.RuntimeName(); got != critest.FakeRuntimeName {
		t.Errorf("RuntimeName() over the remote fake = %q, want %q (the Version it answers)", got, critest.FakeRuntimeName)
	}
	pods, err := p.GetPods(t.Context(), true)
	if err != nil || len(pods) != 0 {
		t.Errorf("GetPods(true) over the empty remote fake = %v, %v; want no pods, no error", pods, err)
	}
	if calls := srv.RuntimeService.GetCalls(); !containsCall(calls, "ListPodSandbox") {
		t.Errorf("the remote fake saw the calls %v, want ListPodSandbox among them: GetPods did not go over gRPC", calls)
	}
	srv.ImageService.SetFakeImages([]string{"busybox:1.36"})
	images, err := is.ListImages(t.Context(), nil)
	if err != nil || len(images) != 1 || len(images[0].RepoTags) != 1 || images[0].RepoTags[0] != "busybox:1.36" {
		t.Errorf("ListImages over the image service = %v, %v; want the remote fake's one image busybox:1.36", images, err)
	}
}

func containsCall(calls []string, name string) bool {
	for _, c := range calls {
		if c == name {
			return true
		}
	}
	return false
}

// TestDialCRIRejects checks that DialCRI names what is wrong with its
// arguments before it connects.
func TestDialCRIRejects(t *testing.T) {
	for _, c := range []struct {
		endpoint string
		timeout  time.Duration
		want     string
	}{
		{"", time.Second, "endpoint is empty"},
		{"unix:///run/x.sock", -time.Second, "timeout -1s is negative"},
		{"tcp://127.0.0.1:1", time.Second, `"tcp://127.0.0.1:1"`},
	} {
		rs, is, err := kubeletruntime.DialCRI(t.Context(), c.endpoint, c.timeout)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DialCRI(%q, %s) = %v, want an error containing %q", c.endpoint, c.timeout, err, c.want)
		}
		if rs != nil || is != nil {
			t.Errorf("DialCRI(%q, %s) returned services along with its error", c.endpoint, c.timeout)
		}
	}
}
