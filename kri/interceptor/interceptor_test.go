package interceptor_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// call is one call a recorder or an interceptor function saw.
type call struct {
	method string
	next   any // the next an interceptor function was handed; nil for the provider
	args   []any
}

// recorder is a provider of both kinds that records its calls and returns
// the results its test set per method.
type recorder struct {
	calls   []call
	results map[string][]any
}

func (r *recorder) record(method string, args ...any) []any {
	r.calls = append(r.calls, call{method: method, args: args})
	return r.results[method]
}

func (r *recorder) SyncPod(ctx context.Context, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
	return result[error](r.record("SyncPod", ctx, pod, st, rc), 0)
}

func (r *recorder) KillPod(ctx context.Context, pod *v1.Pod, running pkgcontainer.Pod, grace *int64) error {
	return result[error](r.record("KillPod", ctx, pod, running, grace), 0)
}

func (r *recorder) DeletePod(ctx context.Context, pod *v1.Pod) error {
	return result[error](r.record("DeletePod", ctx, pod), 0)
}

func (r *recorder) CleanupPods(ctx context.Context, pods []*v1.Pod, running []*pkgcontainer.Pod, possibly map[types.UID]sets.Empty) error {
	return result[error](r.record("CleanupPods", ctx, pods, running, possibly), 0)
}

func (r *recorder) RefreshPodStatus(pod *v1.Pod, st *v1.PodStatus) {
	r.record("RefreshPodStatus", pod, st)
}

func (r *recorder) GetPodStatus(ctx context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	res := r.record("GetPodStatus", ctx, pod)
	return result[*pkgcontainer.PodStatus](res, 0), result[error](res, 1)
}

func (r *recorder) GetPods(ctx context.Context, all bool) ([]*pkgcontainer.Pod, error) {
	res := r.record("GetPods", ctx, all)
	return result[[]*pkgcontainer.Pod](res, 0), result[error](res, 1)
}

func (r *recorder) Start(ctx context.Context) error {
	return result[error](r.record("Start", ctx), 0)
}

func (r *recorder) Stop() { r.record("Stop") }

func (r *recorder) SetPodSyncHandler(h kri.PodSyncHandler) { r.record("SetPodSyncHandler", h) }

func (r *recorder) Ping(ctx context.Context) error { return result[error](r.record("Ping", ctx), 0) }

func (r *recorder) ConfigureNode(ctx context.Context, name string) *v1.Node {
	return result[*v1.Node](r.record("ConfigureNode", ctx, name), 0)
}

func (r *recorder) RefreshNodeStatus(ctx context.Context, st *v1.NodeStatus) bool {
	return result[bool](r.record("RefreshNodeStatus", ctx, st), 0)
}

func (r *recorder) SetStatusUpdateCallback(ctx context.Context, cb func(*v1.Node)) {
	r.record("SetStatusUpdateCallback", ctx, cb)
}

// result returns res[i] as a T, the zero T when res is shorter.
func result[T any](res []any, i int) T {
	var zero T
	if i >= len(res) {
		return zero
	}
	return res[i].(T)
}

// same reports whether a and b are the same value: the same object for
// pointers, slices, maps and functions, equal for the rest.
func same(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if !va.IsValid() || !vb.IsValid() {
		return va.IsValid() == vb.IsValid()
	}
	if va.Type() != vb.Type() {
		return false
	}
	switch va.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Func, reflect.Chan:
		return va.Pointer() == vb.Pointer()
	}
	return reflect.DeepEqual(a, b)
}

func sameAll(a, b []any) bool {
	return slices.EqualFunc(a, b, same)
}

type ctxKey struct{}

type handler struct{ n int }

func (h *handler) HandlePodSyncByUID(types.UID) { h.n++ }

// methodCase is one method of a provider of type P: its arguments, how to
// call it with them, what the wrapped provider and an interceptor function
// return, and how to set its function in funcs of type F.
type methodCase[P, F any] struct {
	method          string
	args            []any
	call            func(p P) []any
	wrapped, funcRe []any
	set             func(f *F, fn func(next any, args ...any) []any)
}

type (
	podCase  = methodCase[kri.PodProvider, interceptor.PodFuncs]
	nodeCase = methodCase[kri.NodeProvider, interceptor.NodeFuncs]
)

func podCases() []podCase {
	ctx := context.WithValue(context.Background(), ctxKey{}, "the caller's")
	pod := &v1.Pod{}
	pst := &pkgcontainer.PodStatus{}
	rc := kri.NewReasonCache()
	running := pkgcontainer.Pod{ID: "uid-1", Name: "web"}
	grace := new(int64(7))
	pods := []*v1.Pod{pod}
	runningPods := []*pkgcontainer.Pod{&running}
	possibly := map[types.UID]sets.Empty{"uid-2": {}}
	apiStatus := &v1.PodStatus{}
	h := &handler{}
	errWrapped, errFunc := errors.New("from the wrapped provider"), errors.New("from the interceptor")
	stWrapped, stFunc := &pkgcontainer.PodStatus{}, &pkgcontainer.PodStatus{}
	listWrapped, listFunc := []*pkgcontainer.Pod{{}}, []*pkgcontainer.Pod{{}}
	return []podCase{
		{
			method: "SyncPod", args: []any{ctx, pod, pst, rc},
			call:    func(p kri.PodProvider) []any { return []any{p.SyncPod(ctx, pod, pst, rc)} },
			wrapped: []any{errWrapped}, funcRe: []any{errFunc},
			set: func(f *interceptor.PodFuncs, fn func(any, ...any) []any) {
				f.SyncPod = func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					return result[error](fn(next, ctx, pod, st, rc), 0)
				}
			},
		},
		{
			method: "KillPod", args: []any{ctx, pod, running, grace},
			call:    func(p kri.PodProvider) []any { return []any{p.KillPod(ctx, pod, running, grace)} },
			wrapped: []any{errWrapped}, funcRe: []any{errFunc},
			set: func(f *interceptor.PodFuncs, fn func(any, ...any) []any) {
				f.KillPod = func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, running pkgcontainer.Pod, grace *int64) error {
					return result[error](fn(next, ctx, pod, running, grace), 0)
				}
			},
		},
		{
			method: "DeletePod", args: []any{ctx, pod},
			call:    func(p kri.PodProvider) []any { return []any{p.DeletePod(ctx, pod)} },
			wrapped: []any{errWrapped}, funcRe: []any{errFunc},
			set: func(f *interceptor.PodFuncs, fn func(any, ...any) []any) {
				f.DeletePod = func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) error {
					return result[error](fn(next, ctx, pod), 0)
				}
			},
		},
		{
			method: "CleanupPods", args: []any{ctx, pods, runningPods, possibly},
			call:    func(p kri.PodProvider) []any { return []any{p.CleanupPods(ctx, pods, runningPods, possibly)} },
			wrapped: []any{errWrapped}, funcRe: []any{errFunc},
			set: func(f *interceptor.PodFuncs, fn func(any, ...any) []any) {
				f.CleanupPods = func(ctx context.Context, next kri.PodProvider, pods []*v1.Pod, running []*pkgcontainer.Pod, possibly map[types.UID]sets.Empty) error {
					return result[error](fn(next, ctx, pods, running, possibly), 0)
				}
			},
		},
		{
			method: "RefreshPodStatus", args: []any{pod, apiStatus},
			call: func(p kri.PodProvider) []any { p.RefreshPodStatus(pod, apiStatus); return nil },
			set: func(f *interceptor.PodFuncs, fn func(any, ...any) []any) {
				f.RefreshPodStatus = func(next kri.PodProvider, pod *v1.Pod, st *v1.PodStatus) { fn(next, pod, st) }
			},
		},
		{
			method: "GetPodStatus", args: []any{ctx, pod},
			call: func(p kri.PodProvider) []any {
				st, err := p.GetPodStatus(ctx, pod)
				return []any{st, err}
			},
			wrapped: []any{stWrapped, errWrapped}, funcRe: []any{stFunc, errFunc},
			set: func(f *interceptor.PodFuncs, fn func(any, ...any) []any) {
				f.GetPodStatus = func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
					res := fn(next, ctx, pod)
					return result[*pkgcontainer.PodStatus](res, 0), result[error](res, 1)
				}
			},
		},
		{
			method: "GetPods", args: []any{ctx, true},
			call: func(p kri.PodProvider) []any {
				list, err := p.GetPods(ctx, true)
				return []any{list, err}
			},
			wrapped: []any{listWrapped, errWrapped}, funcRe: []any{listFunc, errFunc},
			set: func(f *interceptor.PodFuncs, fn func(any, ...any) []any) {
				f.GetPods = func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
					res := fn(next, ctx, all)
					return result[[]*pkgcontainer.Pod](res, 0), result[error](res, 1)
				}
			},
		},
		{
			method: "Start", args: []any{ctx},
			call:    func(p kri.PodProvider) []any { return []any{p.Start(ctx)} },
			wrapped: []any{errWrapped}, funcRe: []any{errFunc},
			set: func(f *interceptor.PodFuncs, fn func(any, ...any) []any) {
				f.Start = func(ctx context.Context, next kri.PodProvider) error { return result[error](fn(next, ctx), 0) }
			},
		},
		{
			method: "Stop",
			call:   func(p kri.PodProvider) []any { p.Stop(); return nil },
			set: func(f *interceptor.PodFuncs, fn func(any, ...any) []any) {
				f.Stop = func(next kri.PodProvider) { fn(next) }
			},
		},
		{
			method: "SetPodSyncHandler", args: []any{h},
			call: func(p kri.PodProvider) []any {
				n, ok := p.(kri.PodSyncNotifier)
				if !ok {
					return []any{"the wrapper has no SetPodSyncHandler"}
				}
				n.SetPodSyncHandler(h)
				return nil
			},
			set: func(f *interceptor.PodFuncs, fn func(any, ...any) []any) {
				f.SetPodSyncHandler = func(next kri.PodSyncNotifier, h kri.PodSyncHandler) { fn(next, h) }
			},
		},
	}
}

// methodsOf lists the methods of the interfaces ifaces point to.
func methodsOf(ifaces ...any) []string {
	var names []string
	for _, i := range ifaces {
		t := reflect.TypeOf(i).Elem()
		for m := range t.Methods() {
			names = append(names, m.Name)
		}
	}
	slices.Sort(names)
	return names
}

// checkFuncs checks that funcs (a struct) has exactly one field per method
// of ifaces, of that method's type with next before the other arguments
// (after a context where the method takes one).
func checkFuncs(t *testing.T, funcs any, ifaces ...any) {
	t.Helper()
	ft := reflect.TypeOf(funcs)
	var fields []string
	for f := range ft.Fields() {
		fields = append(fields, f.Name)
	}
	slices.Sort(fields)
	if want := methodsOf(ifaces...); !slices.Equal(fields, want) {
		t.Fatalf("%s has fields %v, want one per method: %v", ft.Name(), fields, want)
	}
	for _, i := range ifaces {
		it := reflect.TypeOf(i).Elem()
		for m := range it.Methods() {
			f, _ := ft.FieldByName(m.Name)
			in := []reflect.Type{}
			for p := range m.Type.Ins() {
				in = append(in, p)
			}
			at := 0
			if len(in) > 0 && in[0] == reflect.TypeFor[context.Context]() {
				at = 1
			}
			in = slices.Insert(in, at, it)
			var out []reflect.Type
			for r := range m.Type.Outs() {
				out = append(out, r)
			}
			if want := reflect.FuncOf(in, out, false); f.Type != want {
				t.Errorf("%s.%s is %v, want %v", ft.Name(), m.Name, f.Type, want)
			}
		}
	}
}

// checkCovered checks that cases cover every method of ifaces.
func checkCovered[P, F any](t *testing.T, cases []methodCase[P, F], ifaces ...any) {
	t.Helper()
	var covered []string
	for _, c := range cases {
		covered = append(covered, c.method)
	}
	slices.Sort(covered)
	if want := methodsOf(ifaces...); !slices.Equal(covered, want) {
		t.Errorf("the tests cover %v, want every method: %v", covered, want)
	}
}

func TestPodFuncsHaveOneFunctionPerMethod(t *testing.T) {
	checkFuncs(t, interceptor.PodFuncs{}, (*kri.PodProvider)(nil), (*kri.PodSyncNotifier)(nil))
	checkCovered(t, podCases(), (*kri.PodProvider)(nil), (*kri.PodSyncNotifier)(nil))
}

func TestNodeFuncsHaveOneFunctionPerMethod(t *testing.T) {
	checkFuncs(t, interceptor.NodeFuncs{}, (*kri.NodeProvider)(nil))
	checkCovered(t, nodeCases(), (*kri.NodeProvider)(nil))
}

// checkForwards checks that with no function set every method reaches the
// wrapped provider with the caller's arguments, once, and its results
// reach the caller.
func checkForwards[P, F any](t *testing.T, cases []methodCase[P, F], wrap func(*recorder, F) P) {
	for _, c := range cases {
		t.Run(c.method, func(t *testing.T) {
			r := &recorder{results: map[string][]any{c.method: c.wrapped}}
			var none F
			got := c.call(wrap(r, none))
			if len(r.calls) != 1 || r.calls[0].method != c.method || !sameAll(r.calls[0].args, c.args) {
				t.Fatalf("the wrapped provider saw %+v, want one %s with the caller's arguments %v", r.calls, c.method, c.args)
			}
			if !sameAll(got, c.wrapped) {
				t.Errorf("the caller got %v, want the wrapped provider's %v", got, c.wrapped)
			}
		})
	}
}

// checkCalledWithNext sets every function; a call of one method must reach
// its function alone, with the wrapped provider as next and the caller's
// arguments, and the function's results must reach the caller.
func checkCalledWithNext[P, F any](t *testing.T, cases []methodCase[P, F], wrap func(*recorder, F) P) {
	for _, c := range cases {
		t.Run(c.method, func(t *testing.T) {
			r := &recorder{results: map[string][]any{}}
			var seen []call
			var funcs F
			for _, o := range cases {
				o.set(&funcs, func(next any, args ...any) []any {
					seen = append(seen, call{method: o.method, next: next, args: args})
					return o.funcRe
				})
			}
			got := c.call(wrap(r, funcs))
			if len(r.calls) != 0 {
				t.Errorf("the wrapped provider saw %+v, want no call: the function did not call next", r.calls)
			}
			if len(seen) != 1 || seen[0].method != c.method {
				t.Fatalf("functions called: %+v, want %s's alone", seen, c.method)
			}
			if seen[0].next != any(r) {
				t.Errorf("next = %T %p, want the wrapped provider %p", seen[0].next, seen[0].next, r)
			}
			if !sameAll(seen[0].args, c.args) {
				t.Errorf("the function got %v, want the caller's arguments %v", seen[0].args, c.args)
			}
			if !sameAll(got, c.funcRe) {
				t.Errorf("the caller got %v, want the function's %v", got, c.funcRe)
			}
		})
	}
}

func wrapPod(r *recorder, f interceptor.PodFuncs) kri.PodProvider {
	return interceptor.NewPodProvider(r, f)
}

func wrapNode(r *recorder, f interceptor.NodeFuncs) kri.NodeProvider {
	return interceptor.NewNodeProvider(r, f)
}

func TestNilPodFuncsForward(t *testing.T)         { checkForwards(t, podCases(), wrapPod) }
func TestNilNodeFuncsForward(t *testing.T)        { checkForwards(t, nodeCases(), wrapNode) }
func TestPodFuncsAreCalledWithNext(t *testing.T)  { checkCalledWithNext(t, podCases(), wrapPod) }
func TestNodeFuncsAreCalledWithNext(t *testing.T) { checkCalledWithNext(t, nodeCases(), wrapNode) }

// podOnly is a pod provider that is no PodSyncNotifier.
type podOnly struct{ kri.PodProvider }

func TestPodSyncNotifierIsKeptAndNotAdded(t *testing.T) {
	var funcs interceptor.PodFuncs
	for _, c := range podCases() {
		c.set(&funcs, func(any, ...any) []any { return nil })
	}
	for _, f := range []interceptor.PodFuncs{{}, funcs} {
		if _, ok := interceptor.NewPodProvider(&recorder{}, f).(kri.PodSyncNotifier); !ok {
			t.Error("the wrapper of a PodSyncNotifier is none")
		}
		if _, ok := interceptor.NewPodProvider(podOnly{&recorder{}}, f).(kri.PodSyncNotifier); ok {
			t.Error("the wrapper of a provider that is no PodSyncNotifier is one")
		}
	}
}

func TestNewProviderOfNilPanics(t *testing.T) {
	for name, wrap := range map[string]func(){
		"NewPodProvider":  func() { interceptor.NewPodProvider(nil, interceptor.PodFuncs{}) },
		"NewNodeProvider": func() { interceptor.NewNodeProvider(nil, interceptor.NodeFuncs{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s(nil) did not panic", name)
				}
			}()
			wrap()
		}()
	}
}

func nodeCases() []nodeCase {
	ctx := context.WithValue(context.Background(), ctxKey{}, "the caller's")
	st := &v1.NodeStatus{}
	cb := func(*v1.Node) {}
	return []nodeCase{
		{
			method: "Ping", args: []any{ctx},
			call:    func(p kri.NodeProvider) []any { return []any{p.Ping(ctx)} },
			wrapped: []any{errors.New("from the wrapped provider")}, funcRe: []any{errors.New("from the interceptor")},
			set: func(f *interceptor.NodeFuncs, fn func(any, ...any) []any) {
				f.Ping = func(ctx context.Context, next kri.NodeProvider) error { return result[error](fn(next, ctx), 0) }
			},
		},
		{
			method: "ConfigureNode", args: []any{ctx, "node-1"},
			call:    func(p kri.NodeProvider) []any { return []any{p.ConfigureNode(ctx, "node-1")} },
			wrapped: []any{&v1.Node{}}, funcRe: []any{&v1.Node{}},
			set: func(f *interceptor.NodeFuncs, fn func(any, ...any) []any) {
				f.ConfigureNode = func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
					return result[*v1.Node](fn(next, ctx, name), 0)
				}
			},
		},
		{
			method: "RefreshNodeStatus", args: []any{ctx, st},
			call:    func(p kri.NodeProvider) []any { return []any{p.RefreshNodeStatus(ctx, st)} },
			wrapped: []any{true}, funcRe: []any{false},
			set: func(f *interceptor.NodeFuncs, fn func(any, ...any) []any) {
				f.RefreshNodeStatus = func(ctx context.Context, next kri.NodeProvider, st *v1.NodeStatus) bool {
					return result[bool](fn(next, ctx, st), 0)
				}
			},
		},
		{
			method: "SetStatusUpdateCallback", args: []any{ctx, cb},
			call: func(p kri.NodeProvider) []any { p.SetStatusUpdateCallback(ctx, cb); return nil },
			set: func(f *interceptor.NodeFuncs, fn func(any, ...any) []any) {
				f.SetStatusUpdateCallback = func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node)) { fn(next, ctx, cb) }
			},
		},
	}
}
