package vk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/kri-kit/testkit/suite"
)

// Level is how much a spec weighs in the verdict: suite.Level, the level
// of every suite of the kit.
type Level = suite.Level

const (
	// Must: what VK publishes or decides goes wrong when the spec fails.
	Must = suite.Must
	// Should: VK's result stays right, at a cost (retries, extra calls).
	Should = suite.Should
)

// SpecInfo describes a spec of the catalogue.
type SpecInfo struct {
	ID    string // KVK-POD-001, KVK-NODE-001, ...
	Title string
	Level Level
	// VK names the code of virtual-kubelet the spec rests on (file and
	// function, in github.com/virtual-kubelet/virtual-kubelet).
	VK string
	// Capabilities the spec needs; it is skipped when Config.Capabilities
	// does not declare one of them.
	Capabilities []Capability
	// AsyncOnly: the spec judges what only an async provider (one that
	// implements node.PodNotifier) can get VK to publish, and is skipped
	// for a sync one.
	AsyncOnly bool
}

type spec struct {
	SpecInfo
	node bool // a node-provider spec (else a pod-provider one)
	// prepare, if set, runs before VK starts (on the provider VK will get).
	prepare func(e *env)
	run     func(e *env)
}

// specs is filled by the init functions of the spec files; use
// sortedSpecs.
var specs []spec

// sortedSpecs returns the specs ordered by ID.
func sortedSpecs() []spec {
	out := slices.Clone(specs)
	slices.SortFunc(out, func(a, b spec) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Catalogue returns every spec of the suite, ordered by ID.
func Catalogue() []SpecInfo {
	var out []SpecInfo
	for _, s := range sortedSpecs() {
		out = append(out, s.SpecInfo)
	}
	return out
}

// env is what a spec body gets: its VK, its provider as VK sees it and the
// calls the provider got. A body ends the spec with failf or skipf.
type env struct {
	ctx   context.Context
	cfg   Config
	w     Workloads // cfg.Workloads with its defaults
	judge *judge
	calls *callLog
	pods  node.PodLifecycleHandler // recorded; nil for a node spec
	async bool                     // pods implements node.PodNotifier
	nodes *recordedNode            // nil for a pod spec
	notes []string                 // diagnostics, shown with a failure
	// prepared is the pod prepare gave the provider, if any.
	prepared *corev1.Pod
	// stopPods stops the spec's PodController (a pod spec's VK going
	// down); the API server and the provider stay.
	stopPods func()
}

// specFailure and specSkip end a spec body (panics caught by runSpec).
type specFailure struct{ msg string }
type specSkip struct {
	reason string
	// notApplicable: the spec does not apply to the providers (it does
	// not count), rather than being skipped (ErrNotSupported, which counts).
	notApplicable bool
}

func (e *env) failf(format string, args ...any) {
	panic(specFailure{fmt.Sprintf(format, args...)})
}

func (e *env) skipf(format string, args ...any) {
	panic(specSkip{reason: fmt.Sprintf(format, args...)})
}

// notApplicable ends the body of a spec that does not apply to the
// providers.
func (e *env) notApplicable(reason string) {
	panic(specSkip{reason: reason, notApplicable: true})
}

func (e *env) notef(format string, args ...any) {
	e.notes = append(e.notes, fmt.Sprintf(format, args...))
}

// outcome is how a spec ended.
type outcome struct {
	Failed  bool
	Skipped bool
	// NotApplicable: the skip says the spec does not apply to the
	// providers (it does not count for the verdict).
	NotApplicable bool
	Message       string        // the failure or the skip reason
	Took          time.Duration // on the spec's clock: virtual with Config.VirtualTime
	Real          time.Duration // on the real clock
	Virtual       bool          // Took is virtual time
}

// runSpec runs s once against the providers cfg builds: inside a
// testing/synctest bubble of its own when cfg.VirtualTime (t is the test
// that owns it), on the real clock otherwise.
func runSpec(t *testing.T, s spec, cfg Config) outcome {
	start := time.Now()
	if cfg.VirtualTime {
		var o outcome
		var leaked any
		bubble := ""
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() { leaked = recover() }()
			synctest.Test(t, func(*testing.T) {
				bubble = bubbleOf()
				o = execute(s, cfg)
				// A goroutine that sleeps (a poll loop's period) and then
				// ends by itself is no leak: the bubble's clock runs on for
				// leakBound, and only what is left then, durably blocked,
				// makes synctest.Test panic.
				time.Sleep(leakBound)
			})
		}()
		<-done
		if leaked != nil {
			msg := fmt.Sprintf("goroutines of the provider or of VK outlived the spec by more than %v (of the spec's virtual clock): %v", leakBound, leaked)
			if o.Failed {
				o.Message += "\n" + msg
			} else {
				o = outcome{Failed: true, Took: o.Took, Message: msg + "; their stacks:\n" + bubbleStacks(bubble)}
			}
		}
		o.Real, o.Virtual = time.Since(start), true
		return o
	}
	o := execute(s, cfg)
	o.Real = time.Since(start)
	return o
}

// leakBound is how long, on the spec's virtual clock, a goroutine of the
// provider or of VK may outlive a spec run with Config.VirtualTime.
const leakBound = time.Minute

var bubbleRE = regexp.MustCompile(`synctest bubble (\d+)\]`)

// bubbleOf names the synctest bubble of the calling goroutine ("" outside
// one), as goroutine stacks name it.
func bubbleOf() string {
	buf := make([]byte, 512)
	buf = buf[:runtime.Stack(buf, false)]
	header, _, _ := strings.Cut(string(buf), "\n")
	if m := bubbleRE.FindStringSubmatch(header); m != nil {
		return m[1]
	}
	return ""
}

// bubbleStacks returns the stacks of the goroutines of synctest bubble b
// (the ones a synctest deadlock blames), at most 40 of them.
func bubbleStacks(b string) string {
	if b == "" {
		return "(the spec's bubble is unknown)"
	}
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		m := bubbleRE.FindStringSubmatch(header)
		if m == nil || m[1] != b || strings.Contains(header, "synctest.Run") {
			continue
		}
		if len(out) == 40 {
			out = append(out, "... (more goroutines)")
			break
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		return "(no goroutine of the bubble is left)"
	}
	return strings.Join(out, "\n\n")
}

// execute builds the spec's providers and VK, runs its body and stops
// everything it started.
func execute(s spec, cfg Config) (o outcome) {
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{ctx: ctx, cfg: cfg, w: cfg.Workloads.withDefaults(), calls: &callLog{}}
	defer func() {
		if e.judge != nil {
			e.judge.stop()
		}
		cancel()
		o.Took = time.Since(start)
		if c, ok := e.calls.notSupported(); ok && !o.Skipped {
			o = outcome{Skipped: true, Took: o.Took, Message: fmt.Sprintf("%s is not supported by the provider (%v)", c.Method, c.Err)}
		}
	}()
	defer func() {
		switch r := recover().(type) {
		case nil:
		case specFailure:
			o.Failed, o.Message = true, r.msg
			if e.judge != nil {
				if rejected := e.judge.api.Rejected(); len(rejected) > 0 {
					// What VK wrote and the API server refused is why
					// what it published is not what the provider said.
					o.Message += "\nthe API server rejected " + fmt.Sprint(len(rejected)) + " of VK's writes as invalid " +
						"(node/pod.go updatePodStatus returns the error and its queue retries the same status; the pod keeps the last status accepted), the last: " + rejected[len(rejected)-1]
				}
			}
			if len(e.notes) > 0 {
				o.Message += "\n" + strings.Join(e.notes, "\n")
			}
		case specSkip:
			o.Skipped, o.NotApplicable, o.Message = true, r.notApplicable, r.reason
		default:
			o.Failed, o.Message = true, fmt.Sprintf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	if reason := notApplicable(s, cfg); reason != "" {
		e.notApplicable(reason)
	}
	j, err := newJudge(ctx, cfg)
	if err != nil {
		e.failf("%v", err)
	}
	e.judge = j
	if s.node {
		np, err := cfg.NewNodeProvider(ctx)
		if suite.IsNotSupported(err) {
			e.skipf("NewNodeProvider is not supported by the provider (%v)", err)
		}
		if err != nil {
			e.failf("NewNodeProvider: %v", err)
		}
		e.nodes = &recordedNode{p: np, log: e.calls, returned: make(chan struct{})}
	} else {
		pp, err := cfg.NewPodProvider(ctx)
		if suite.IsNotSupported(err) {
			e.skipf("NewPodProvider is not supported by the provider (%v)", err)
		}
		if err != nil {
			e.failf("NewPodProvider: %v", err)
		}
		e.pods = recordPods(pp, e.calls)
		_, e.async = pp.(node.PodNotifier)
		judgedAs(pp, e.async)
		if s.AsyncOnly && !e.async {
			e.notApplicable(syncSkipReason)
		}
		if s.prepare != nil {
			s.prepare(e)
		}
		stop, err := e.judge.startPods(ctx, e.pods)
		if err != nil {
			e.failf("%v", err)
		}
		e.stopPods = stop
	}
	s.run(e)
	return o
}

// providerCall runs f, a call the suite makes to the provider itself (what
// names it: "CreatePod(default/x)"), in the setup step step ("" in a spec's
// body): a panic of the provider there fails the spec, naming the step and
// the call, so that it is not taken for one of VK's.
func (e *env) providerCall(step, what string, f func()) {
	defer func() {
		r := recover()
		switch r.(type) {
		case nil:
			return
		case specFailure, specSkip:
			panic(r)
		}
		where := "a call the suite made to it directly"
		if step != "" {
			where = "the suite's setup step " + step
		}
		e.failf("the provider panicked in %s, in %s: %v\n%s", where, what, r, debug.Stack())
	}()
	f()
}

// direct is providerCall in a spec's body: a call VK makes on a path the
// spec cannot steer to, which the suite makes itself.
func (e *env) direct(what string, f func()) { e.providerCall("", what, f) }

// syncSkipReason is why an AsyncOnly spec is skipped for a sync provider.
const syncSkipReason = "a sync provider: VK's syncProviderWrapper.DeletePod (node/sync.go) publishes every container terminated " +
	"with exit code 0, phase Succeeded, itself as soon as DeletePod returns, and never reads the provider's status of the pod again " +
	"(syncPodStatuses skips terminal pods): what the provider's containers do after DeletePod cannot reach the API server"

// newPod returns a pod of the spec's namespace bound to NodeName (createPod
// binds it to Config.NodeName), with one container that runs until it is
// stopped, and a grace period of 30s.
func newPod(prefix string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        prefix + "-" + rand.String(5),
			Namespace:   Namespace,
			Labels:      map[string]string{"app": prefix},
			Annotations: map[string]string{"kri-kit.io/spec": prefix},
		},
		Spec: corev1.PodSpec{
			NodeName:                      NodeName,
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: new(int64(30)),
			Containers: []corev1.Container{{
				Name:    "app",
				Image:   "registry.k8s.io/pause:3.10",
				Command: []string{"/pause"},
				Env:     []corev1.EnvVar{{Name: "MODE", Value: "conformance"}},
			}},
			Tolerations: []corev1.Toleration{{Key: "virtual-kubelet.io/provider", Operator: corev1.TolerationOpExists}},
		},
	}
}

// createPod creates pod in the API server, bound to the suite's node (VK
// then sees it).
func (e *env) createPod(pod *corev1.Pod) *corev1.Pod {
	pod.Spec.NodeName = e.judge.node
	created, err := e.judge.api.CoreV1().Pods(pod.Namespace).Create(e.ctx, pod, metav1.CreateOptions{})
	if err != nil {
		e.failf("creating pod %s in the API server: %v", podKey(pod), err)
	}
	return created
}

// apiPod returns the pod as the API server has it, nil once it is gone.
func (e *env) apiPod(namespace, name string) *corev1.Pod {
	p, err := e.judge.api.CoreV1().Pods(namespace).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return p
}

// livePod returns pod p as the API server has it, and fails the spec when
// it is gone: the specs that call it never delete it.
func (e *env) livePod(p *corev1.Pod) *corev1.Pod {
	cur := e.apiPod(p.Namespace, p.Name)
	if cur == nil {
		e.goneUndeleted(p)
	}
	return cur
}

// goneUndeleted fails the spec: pod p went away though nobody deleted it.
func (e *env) goneUndeleted(p *corev1.Pod) {
	e.failf("pod %s went away from the API server, though nobody deleted it", podKey(p))
}

// describeProbe names a probe in a message: "none", or its exec command.
func describeProbe(pr *corev1.Probe) string {
	switch {
	case pr == nil:
		return "none"
	case pr.Exec != nil:
		return "exec " + strings.Join(pr.Exec.Command, " ")
	}
	return "a probe other than exec"
}

// await polls cond every 100ms until it is true or bound, times
// Config.TimeoutScale, has passed; it answers whether cond became true.
func (e *env) await(bound time.Duration, cond func() bool) bool {
	return e.awaitEvery(100*time.Millisecond, bound, cond)
}

// awaitEvery is await polling every period.
func (e *env) awaitEvery(period, bound time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(e.scaled(bound))
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-time.After(period):
		case <-e.ctx.Done():
			return false
		}
	}
}

// scaled is d times Config.TimeoutScale (0 means 1): the bound of a wait
// for what VK and the provider must get done.
func (e *env) scaled(d time.Duration) time.Duration {
	if e.cfg.TimeoutScale == 0 {
		return d
	}
	return time.Duration(float64(d) * e.cfg.TimeoutScale)
}

// sleep lets d pass (not scaled: a window in which something must not
// happen, or VK's own time).
func (e *env) sleep(d time.Duration) {
	select {
	case <-time.After(d):
	case <-e.ctx.Done():
	}
}

// running reports whether VK published pod Running with every container
// running.
func running(p *corev1.Pod) bool {
	if p == nil || p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
	}
	return true
}

// statusBound is how long VK may take to publish a status the provider has:
// a sync provider is polled every 5s (node/sync.go, syncProviderWrapper.run),
// and VK retries a failed write with back-off.
const statusBound = 30 * time.Second

// runPod creates a pod and waits until VK has published it running; a
// spec that needs a running pod fails here, saying so, when it does not get
// one.
func (e *env) runPod(prefix string) *corev1.Pod {
	p := e.createPod(newPod(prefix))
	var last *corev1.Pod
	if !e.await(statusBound, func() bool { last = e.apiPod(p.Namespace, p.Name); return running(last) }) {
		e.failf("precondition: VK did not publish pod %s Running with its containers running within %v (it published %s); %s",
			podKey(p), statusBound, describeStatus(last), e.providerCallsOf(podKey(p)))
	}
	return last
}

// providerCallsOf sums up the lifecycle calls the pod got.
func (e *env) providerCallsOf(key string) string {
	var parts []string
	for _, m := range []string{"CreatePod", "UpdatePod", "DeletePod"} {
		cs := e.calls.of(m, key)
		s := fmt.Sprintf("%s ×%d", m, len(cs))
		if len(cs) > 0 && cs[len(cs)-1].Err != nil {
			s += fmt.Sprintf(" (last error: %v)", cs[len(cs)-1].Err)
		}
		parts = append(parts, s)
	}
	return "the provider got " + strings.Join(parts, ", ")
}

// describeStatus says what a pod's status shows, for messages.
func describeStatus(p *corev1.Pod) string {
	if p == nil {
		return "no pod (gone from the API server)"
	}
	s := fmt.Sprintf("phase %q", p.Status.Phase)
	if p.Status.Reason != "" {
		s += fmt.Sprintf(" reason %q message %q", p.Status.Reason, p.Status.Message)
	}
	var cs []string
	for _, c := range p.Status.ContainerStatuses {
		st := "unknown"
		switch {
		case c.State.Running != nil:
			st = "running"
		case c.State.Waiting != nil:
			st = "waiting (" + c.State.Waiting.Reason + ")"
		case c.State.Terminated != nil:
			st = fmt.Sprintf("terminated (exit %d, %s)", c.State.Terminated.ExitCode, c.State.Terminated.Reason)
		}
		cs = append(cs, fmt.Sprintf("%s %s ready=%t restarts=%d", c.Name, st, c.Ready, c.RestartCount))
	}
	if len(cs) > 0 {
		s += ", containers: " + strings.Join(cs, "; ")
	}
	if p.DeletionTimestamp != nil {
		s += ", Terminating"
	}
	return s
}

// wrapsNotFound reports whether err holds an error that says NotFound when
// followed with Unwrap (errors.As), as fmt.Errorf's %w wraps it: VK's
// errdefs.IsNotFound follows only Cause() (github.com/pkg/errors).
func wrapsNotFound(err error) bool {
	var nf interface{ NotFound() bool }
	return err != nil && errors.As(err, &nf) && nf.NotFound()
}

// entryMode is the report entry of a pod spec that says how VK judges its
// provider: async or sync (modeText).
const entryMode = "vk:mode"

// podMode is how the pod specs of this process judged their provider, for
// the summary and the console; said once, at the first pod spec.
var podMode struct {
	sync.Mutex
	text string
	said bool
}

// modeText says which of VK's two modes a provider of type typ is judged
// in.
func modeText(typ string, async bool) string {
	if async {
		return fmt.Sprintf("the pod provider (%s) implements node.PodNotifier: it is judged async: VK hands it a callback (NotifyPods) and never polls GetPodStatus, so a status reaches the API server only when the provider calls the callback", typ)
	}
	return fmt.Sprintf("the pod provider (%s) does not implement node.PodNotifier: it is judged sync: VK wraps it (syncProviderWrapper) and polls GetPodStatus every 5s, and the specs only an async provider can pass do not apply. "+
		"If it has NotifyPods(ctx, func(*v1.Pod)), a wrapper hides it: a type that embeds node.PodLifecycleHandler must forward NotifyPods too", typ)
}

// judgedAs records and, once, prints how the provider p is judged.
func judgedAs(p node.PodLifecycleHandler, async bool) {
	text := modeText(fmt.Sprintf("%T", p), async)
	podMode.Lock()
	first := !podMode.said
	podMode.said, podMode.text = true, text
	podMode.Unlock()
	if first {
		fmt.Fprintf(os.Stdout, "\nvk: %s.\n\n", text)
	}
}

// judgedText is what judgedAs recorded last ("" before a pod spec built a
// provider).
func judgedText() string {
	podMode.Lock()
	defer podMode.Unlock()
	return podMode.text
}
