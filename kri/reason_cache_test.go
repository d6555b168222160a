package kri_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
)

var errPull = errors.New("ErrImagePull")

// result builds a PodSyncResult from the given SyncResults.
func result(rs ...*pkgcontainer.SyncResult) pkgcontainer.PodSyncResult {
	return pkgcontainer.PodSyncResult{SyncResults: rs}
}

// failed returns a SyncResult for action on target that failed with err.
func failed(action pkgcontainer.SyncAction, target any, err error, msg string) *pkgcontainer.SyncResult {
	r := pkgcontainer.NewSyncResult(action, target)
	r.Fail(err, msg)
	return r
}

// succeeded returns a SyncResult for action on target without error.
func succeeded(action pkgcontainer.SyncAction, target any) *pkgcontainer.SyncResult {
	return pkgcontainer.NewSyncResult(action, target)
}

type update struct {
	uid    types.UID
	result pkgcontainer.PodSyncResult
}

type lookup struct {
	uid  types.UID
	name string
	want *kri.ReasonItem // nil: no entry
}

func TestReasonCacheUpdate(t *testing.T) {
	run := &kri.ReasonItem{Err: pkgcontainer.ErrRunContainer, Message: "exec: not found"}
	tests := []struct {
		name    string
		updates []update
		removes [][2]string // uid, container name
		lookups []lookup
		wantLen int
	}{
		{
			name:    "failed StartContainer sets an entry",
			updates: []update{{"u1", result(failed(pkgcontainer.StartContainer, "app", run.Err, run.Message))}},
			lookups: []lookup{{"u1", "app", run}},
			wantLen: 1,
		},
		{
			name:    "successful StartContainer sets nothing",
			updates: []update{{"u1", result(succeeded(pkgcontainer.StartContainer, "app"))}},
			lookups: []lookup{{"u1", "app", nil}},
		},
		{
			name: "success after failure clears the entry",
			updates: []update{
				{"u1", result(failed(pkgcontainer.StartContainer, "app", run.Err, run.Message))},
				{"u1", result(succeeded(pkgcontainer.StartContainer, "app"))},
			},
			lookups: []lookup{{"u1", "app", nil}},
		},
		{
			name: "a later failure replaces an earlier one",
			updates: []update{
				{"u1", result(failed(pkgcontainer.StartContainer, "app", run.Err, run.Message))},
				{"u1", result(failed(pkgcontainer.StartContainer, "app", errPull, "pull failed"))},
			},
			lookups: []lookup{{"u1", "app", &kri.ReasonItem{Err: errPull, Message: "pull failed"}}},
			wantLen: 1,
		},
		{
			name:    "failed KillContainer is ignored",
			updates: []update{{"u1", result(failed(pkgcontainer.KillContainer, "app", pkgcontainer.ErrKillContainer, "m"))}},
			lookups: []lookup{{"u1", "app", nil}},
		},
		{
			name:    "failed InitContainer is ignored",
			updates: []update{{"u1", result(failed(pkgcontainer.InitContainer, "app", pkgcontainer.ErrRunContainer, "m"))}},
			lookups: []lookup{{"u1", "app", nil}},
		},
		{
			name:    "failed CreatePodSandbox is ignored",
			updates: []update{{"u1", result(failed(pkgcontainer.CreatePodSandbox, "app", pkgcontainer.ErrCreatePodSandbox, "m"))}},
			lookups: []lookup{{"u1", "app", nil}},
		},
		{
			name:    "failed ConfigPodSandbox is ignored",
			updates: []update{{"u1", result(failed(pkgcontainer.ConfigPodSandbox, "app", pkgcontainer.ErrConfigPodSandbox, "m"))}},
			lookups: []lookup{{"u1", "app", nil}},
		},
		{
			name:    "failed KillPodSandbox is ignored",
			updates: []update{{"u1", result(failed(pkgcontainer.KillPodSandbox, "app", pkgcontainer.ErrKillPodSandbox, "m"))}},
			lookups: []lookup{{"u1", "app", nil}},
		},
		{
			name:    "failed ResizePodInPlace is ignored",
			updates: []update{{"u1", result(failed(pkgcontainer.ResizePodInPlace, "app", pkgcontainer.ErrResizePodInPlace, "m"))}},
			lookups: []lookup{{"u1", "app", nil}},
		},
		{
			name:    "failed RemoveContainer is ignored",
			updates: []update{{"u1", result(failed(pkgcontainer.RemoveContainer, "app", pkgcontainer.ErrRemoveContainer, "m"))}},
			lookups: []lookup{{"u1", "app", nil}},
		},
		{
			name: "a successful non-start action does not clear a failure",
			updates: []update{
				{"u1", result(failed(pkgcontainer.StartContainer, "app", run.Err, run.Message))},
				{"u1", result(succeeded(pkgcontainer.KillContainer, "app"))},
			},
			lookups: []lookup{{"u1", "app", run}},
			wantLen: 1,
		},
		{
			name: "a non-string Target is ignored without panic",
			updates: []update{{"u1", result(
				failed(pkgcontainer.StartContainer, 42, run.Err, run.Message),
				failed(pkgcontainer.StartContainer, nil, run.Err, run.Message),
				failed(pkgcontainer.StartContainer, &struct{}{}, run.Err, run.Message),
				nil,
			)}},
			lookups: []lookup{{"u1", "42", nil}, {"u1", "", nil}},
		},
		{
			name:    "an empty PodSyncResult changes nothing",
			updates: []update{{"u1", result()}},
			lookups: []lookup{{"u1", "app", nil}},
		},
		{
			name: "several results in one Update each apply",
			updates: []update{{"u1", result(
				failed(pkgcontainer.StartContainer, "a", run.Err, "a failed"),
				succeeded(pkgcontainer.StartContainer, "b"),
				failed(pkgcontainer.StartContainer, "c", errPull, "c failed"),
			)}},
			lookups: []lookup{
				{"u1", "a", &kri.ReasonItem{Err: run.Err, Message: "a failed"}},
				{"u1", "b", nil},
				{"u1", "c", &kri.ReasonItem{Err: errPull, Message: "c failed"}},
			},
			wantLen: 2,
		},
		{
			name: "within one Update a later success wins over an earlier failure",
			updates: []update{{"u1", result(
				failed(pkgcontainer.StartContainer, "app", run.Err, run.Message),
				succeeded(pkgcontainer.StartContainer, "app"),
			)}},
			lookups: []lookup{{"u1", "app", nil}},
		},
		{
			name: "within one Update a later failure wins over an earlier one",
			updates: []update{{"u1", result(
				failed(pkgcontainer.StartContainer, "app", run.Err, "first"),
				failed(pkgcontainer.StartContainer, "app", errPull, "second"),
			)}},
			lookups: []lookup{{"u1", "app", &kri.ReasonItem{Err: errPull, Message: "second"}}},
			wantLen: 1,
		},
		{
			name: "within one Update a later failure wins over an earlier success",
			updates: []update{{"u1", result(
				succeeded(pkgcontainer.StartContainer, "app"),
				failed(pkgcontainer.StartContainer, "app", run.Err, run.Message),
			)}},
			lookups: []lookup{{"u1", "app", run}},
			wantLen: 1,
		},
		{
			name: "pods with different UIDs are isolated",
			updates: []update{
				{"u1", result(failed(pkgcontainer.StartContainer, "app", run.Err, "u1"))},
				{"u2", result(failed(pkgcontainer.StartContainer, "app", errPull, "u2"))},
				{"u2", result(succeeded(pkgcontainer.StartContainer, "app"))},
			},
			lookups: []lookup{
				{"u1", "app", &kri.ReasonItem{Err: run.Err, Message: "u1"}},
				{"u2", "app", nil},
			},
			wantLen: 1,
		},
		{
			name: "uid a_b with container c and uid a with container b_c do not collide",
			updates: []update{
				{"a_b", result(failed(pkgcontainer.StartContainer, "c", run.Err, "first"))},
				{"a", result(failed(pkgcontainer.StartContainer, "b_c", errPull, "second"))},
			},
			lookups: []lookup{
				{"a_b", "c", &kri.ReasonItem{Err: run.Err, Message: "first"}},
				{"a", "b_c", &kri.ReasonItem{Err: errPull, Message: "second"}},
			},
			wantLen: 2,
		},
		{
			name: "removing a_b/c leaves a/b_c",
			updates: []update{
				{"a_b", result(failed(pkgcontainer.StartContainer, "c", run.Err, "first"))},
				{"a", result(failed(pkgcontainer.StartContainer, "b_c", errPull, "second"))},
			},
			removes: [][2]string{{"a_b", "c"}},
			lookups: []lookup{
				{"a_b", "c", nil},
				{"a", "b_c", &kri.ReasonItem{Err: errPull, Message: "second"}},
			},
			wantLen: 1,
		},
		{
			name:    "Remove drops the entry",
			updates: []update{{"u1", result(failed(pkgcontainer.StartContainer, "app", run.Err, run.Message))}},
			removes: [][2]string{{"u1", "app"}},
			lookups: []lookup{{"u1", "app", nil}},
		},
		{
			name:    "Remove of a missing key is a no-op",
			updates: []update{{"u1", result(failed(pkgcontainer.StartContainer, "app", run.Err, run.Message))}},
			removes: [][2]string{{"u1", "other"}, {"u2", "app"}, {"", ""}},
			lookups: []lookup{{"u1", "app", run}},
			wantLen: 1,
		},
		{
			name: "re-adding an existing key does not grow the cache",
			updates: []update{
				{"u1", result(failed(pkgcontainer.StartContainer, "app", run.Err, "1"))},
				{"u1", result(failed(pkgcontainer.StartContainer, "app", run.Err, "2"))},
				{"u1", result(failed(pkgcontainer.StartContainer, "app", run.Err, "3"))},
			},
			lookups: []lookup{{"u1", "app", &kri.ReasonItem{Err: run.Err, Message: "3"}}},
			wantLen: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := kri.NewReasonCache()
			for _, u := range tc.updates {
				c.Update(u.uid, u.result)
			}
			for _, r := range tc.removes {
				c.Remove(types.UID(r[0]), r[1])
			}
			for _, l := range tc.lookups {
				got, ok := c.Get(l.uid, l.name)
				switch {
				case l.want == nil && ok:
					t.Errorf("Get(%q, %q) = %+v, want no entry", l.uid, l.name, got)
				case l.want != nil && !ok:
					t.Errorf("Get(%q, %q) found no entry, want %+v", l.uid, l.name, l.want)
				case l.want != nil && (got == nil || !errors.Is(got.Err, l.want.Err) || got.Message != l.want.Message):
					t.Errorf("Get(%q, %q) = %+v, want %+v", l.uid, l.name, got, l.want)
				}
			}
			if got := c.Len(); got != tc.wantLen {
				t.Errorf("Len() = %d, want %d", got, tc.wantLen)
			}
		})
	}
}

func TestReasonCacheGetReturnsACopy(t *testing.T) {
	c := kri.NewReasonCache()
	c.Update("u1", result(failed(pkgcontainer.StartContainer, "app", pkgcontainer.ErrRunContainer, "original")))

	got, ok := c.Get("u1", "app")
	if !ok {
		t.Fatal("Get found no entry after a failed start")
	}
	got.Message = "changed"
	got.Err = errPull

	again, ok := c.Get("u1", "app")
	if !ok || again.Message != "original" || !errors.Is(again.Err, pkgcontainer.ErrRunContainer) {
		t.Fatalf("after mutating the returned item, Get = %+v, %v; want the original entry", again, ok)
	}
}

// fill adds a failed start for containers c0..c(n-1) of pod uid, in order.
func fill(c *kri.ReasonCache, uid types.UID, n int) {
	for i := range n {
		c.Update(uid, result(failed(pkgcontainer.StartContainer, fmt.Sprintf("c%d", i), pkgcontainer.ErrRunContainer, "")))
	}
}

func TestReasonCacheEviction(t *testing.T) {
	tests := []struct {
		name string
		// touch is a container Get before the overflowing entry is added.
		touch   string
		evicted []string
		kept    []string
	}{
		{
			name:    "the 1001st entry evicts the least recently used",
			evicted: []string{"c0"},
			kept:    []string{"c1", "c999", "c1000"},
		},
		{
			name:    "a Get refreshes recency so the touched entry survives",
			touch:   "c0",
			evicted: []string{"c1"},
			kept:    []string{"c0", "c2", "c1000"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := kri.NewReasonCache()
			fill(c, "u1", kri.DefaultReasonCacheSize)
			if got := c.Len(); got != kri.DefaultReasonCacheSize {
				t.Fatalf("Len() = %d after %d distinct failures, want %d", got, kri.DefaultReasonCacheSize, kri.DefaultReasonCacheSize)
			}
			if tc.touch != "" {
				if _, ok := c.Get("u1", tc.touch); !ok {
					t.Fatalf("Get(%q) found no entry before the cache overflowed", tc.touch)
				}
			}
			c.Update("u1", result(failed(pkgcontainer.StartContainer, fmt.Sprintf("c%d", kri.DefaultReasonCacheSize), pkgcontainer.ErrRunContainer, "")))
			if got := c.Len(); got != kri.DefaultReasonCacheSize {
				t.Errorf("Len() = %d after overflow, want %d", got, kri.DefaultReasonCacheSize)
			}
			for _, name := range tc.evicted {
				if _, ok := c.Get("u1", name); ok {
					t.Errorf("Get(%q) found an entry, want it evicted", name)
				}
			}
			for _, name := range tc.kept {
				if _, ok := c.Get("u1", name); !ok {
					t.Errorf("Get(%q) found no entry, want it kept", name)
				}
			}
		})
	}
}

func TestReasonCacheWithSize(t *testing.T) {
	for _, tc := range []struct {
		size, fill, wantLen int
	}{
		{size: 3, fill: 5, wantLen: 3},
		{size: 0, fill: 2, wantLen: 1},
		{size: -4, fill: 2, wantLen: 1},
	} {
		c := kri.NewReasonCacheWithSize(tc.size)
		fill(c, "u1", tc.fill)
		if got := c.Len(); got != tc.wantLen {
			t.Errorf("NewReasonCacheWithSize(%d) after %d failures: Len() = %d, want %d", tc.size, tc.fill, got, tc.wantLen)
		}
		if _, ok := c.Get("u1", fmt.Sprintf("c%d", tc.fill-1)); !ok {
			t.Errorf("NewReasonCacheWithSize(%d): newest entry missing", tc.size)
		}
	}
}

func TestReasonCacheConcurrentUse(t *testing.T) {
	const goroutines, rounds = 16, 500
	c := kri.NewReasonCacheWithSize(64)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			uid := types.UID(fmt.Sprintf("pod-%d", g%4))
			for i := range rounds {
				name := fmt.Sprintf("c%d", i%8)
				switch i % 3 {
				case 0:
					c.Update(uid, result(failed(pkgcontainer.StartContainer, name, pkgcontainer.ErrRunContainer, name)))
				case 1:
					if item, ok := c.Get(uid, name); ok && item.Message != name {
						t.Errorf("Get(%q, %q).Message = %q, want %q", uid, name, item.Message, name)
					}
				case 2:
					c.Remove(uid, name)
				}
				if n := c.Len(); n > 64 {
					t.Errorf("Len() = %d, above the bound 64", n)
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkReasonCacheGet(b *testing.B) {
	c := kri.NewReasonCache()
	fill(c, "u1", kri.DefaultReasonCacheSize)
	b.ReportAllocs()
	for b.Loop() {
		item, ok := c.Get("u1", "c500")
		if !ok || item.Err == nil {
			b.Fatal("entry missing")
		}
	}
}

func BenchmarkReasonCacheUpdate(b *testing.B) {
	c := kri.NewReasonCache()
	fail := result(failed(pkgcontainer.StartContainer, "app", pkgcontainer.ErrRunContainer, "m"))
	clear := result(succeeded(pkgcontainer.StartContainer, "app"))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			c.Update("u1", fail)
		} else {
			c.Update("u1", clear)
		}
		i++
	}
}

func BenchmarkReasonCacheParallel(b *testing.B) {
	c := kri.NewReasonCache()
	fill(c, "u1", kri.DefaultReasonCacheSize)
	fail := result(failed(pkgcontainer.StartContainer, "c1", pkgcontainer.ErrRunContainer, "m"))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if i%8 == 0 {
				c.Update("u1", fail)
			} else if _, ok := c.Get("u1", "c500"); !ok {
				b.Fatal("entry missing")
			}
			i++
		}
	})
}
