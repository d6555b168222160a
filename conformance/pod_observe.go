package conformance

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/distribution/reference"
	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// --- reading statuses ---

// instancesOf returns the statuses of the instances of container name.
func instancesOf(st *pkgcontainer.PodStatus, name string) []*pkgcontainer.Status {
	var out []*pkgcontainer.Status
	for _, c := range st.ContainerStatuses {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// runningOf returns the running instance of container name, or nil.
func runningOf(st *pkgcontainer.PodStatus, name string) *pkgcontainer.Status {
	for _, c := range instancesOf(st, name) {
		if c.State == pkgcontainer.ContainerStateRunning {
			return c
		}
	}
	return nil
}

// exitedOf returns the exited instances of container name.
func exitedOf(st *pkgcontainer.PodStatus, name string) []*pkgcontainer.Status {
	var out []*pkgcontainer.Status
	for _, c := range instancesOf(st, name) {
		if c.State == pkgcontainer.ContainerStateExited {
			out = append(out, c)
		}
	}
	return out
}

// succeededOf returns an instance of container name that exited 0, or nil.
func succeededOf(st *pkgcontainer.PodStatus, name string) *pkgcontainer.Status {
	for _, c := range exitedOf(st, name) {
		if c.ExitCode == 0 {
			return c
		}
	}
	return nil
}

// describeStatus renders the containers of st for failure messages.
func describeStatus(st *pkgcontainer.PodStatus) string {
	if st == nil {
		return "<nil>"
	}
	if len(st.ContainerStatuses) == 0 {
		return "no containers"
	}
	parts := make([]string, 0, len(st.ContainerStatuses))
	for _, c := range st.ContainerStatuses {
		s := fmt.Sprintf("%s[%s %s", c.Name, c.ID.ID, c.State)
		if c.State == pkgcontainer.ContainerStateExited {
			s += fmt.Sprintf(" code=%d", c.ExitCode)
		}
		parts = append(parts, s+"]")
	}
	return strings.Join(parts, " ")
}

// canonicalStatus renders what the contract says of st in a form that does
// not depend on the order of its lists, to compare two answers.
func canonicalStatus(st *pkgcontainer.PodStatus) string {
	if st == nil {
		return "<nil>"
	}
	instances := func(ss []*pkgcontainer.Status) string {
		lines := make([]string, 0, len(ss))
		for _, c := range ss {
			if c == nil {
				lines = append(lines, "<nil>")
				continue
			}
			lines = append(lines, fmt.Sprintf("%s[%s %s code=%d image=%q restarts=%d created=%s started=%s finished=%s reason=%q]",
				c.Name, c.ID.String(), c.State, c.ExitCode, c.Image, c.RestartCount,
				c.CreatedAt.Format(time.RFC3339Nano), c.StartedAt.Format(time.RFC3339Nano), c.FinishedAt.Format(time.RFC3339Nano), c.Reason))
		}
		slices.Sort(lines)
		return strings.Join(lines, " ")
	}
	sandboxes := make([]string, 0, len(st.SandboxStatuses))
	for _, sb := range st.SandboxStatuses {
		if sb == nil {
			sandboxes = append(sandboxes, "<nil>")
			continue
		}
		sandboxes = append(sandboxes, sb.Id+"="+sb.State.String())
	}
	slices.Sort(sandboxes)
	return fmt.Sprintf("pod %s/%s (%s) IPs %v; containers: %s; active: %s; sandboxes: %s",
		st.Namespace, st.Name, st.ID, st.IPs, instances(st.ContainerStatuses), instances(st.ActiveContainerStatuses), strings.Join(sandboxes, " "))
}

// canonicalPod renders a pod of GetPods independently of the order of its
// containers and sandboxes.
func canonicalPod(p *pkgcontainer.Pod) string {
	list := func(cs []*pkgcontainer.Container) string {
		lines := make([]string, 0, len(cs))
		for _, c := range cs {
			if c == nil {
				lines = append(lines, "<nil>")
				continue
			}
			lines = append(lines, fmt.Sprintf("%s=%s/%s", c.Name, c.ID.String(), c.State))
		}
		slices.Sort(lines)
		return strings.Join(lines, " ")
	}
	return fmt.Sprintf("pod %s/%s (%s); containers: %s; sandboxes: %s", p.Namespace, p.Name, p.ID, list(p.Containers), list(p.Sandboxes))
}

// listedByUID returns the pod of list with pod's UID, or nil.
func listedByUID(list []*pkgcontainer.Pod, pod *v1.Pod) *pkgcontainer.Pod {
	for _, p := range list {
		if p != nil && p.ID == pod.UID {
			return p
		}
	}
	return nil
}

// describePods renders a GetPods answer for failure messages.
func describePods(list []*pkgcontainer.Pod) string {
	if len(list) == 0 {
		return "no pods"
	}
	parts := make([]string, 0, len(list))
	for _, p := range list {
		if p == nil {
			parts = append(parts, "<nil>")
			continue
		}
		parts = append(parts, canonicalPod(p))
	}
	return strings.Join(parts, "; ")
}

// defaultWaiting reports whether reason is what the agent publishes for a
// container it knows nothing about.
func defaultWaiting(reason string) bool {
	return reason == "" || reason == "ContainerCreating" || reason == "PodInitializing"
}

// settle lets container name of pod run, still running, for a moment before
// the spec sends SIGTERM: a real process is reported running before it has
// run far enough to ignore SIGTERM (sh executes its trap after it starts),
// which takes milliseconds. The moment is the short run (at most the stable
// window): a wait, not a check, so no longer than needed.
func (e *podEnv) settle(pod *v1.Pod, name string) {
	e.settleFor(pod, name, min(e.st.t.ShortRun, e.st.t.Stable))
}

// settleFor is settle for d.
func (e *podEnv) settleFor(pod *v1.Pod, name string, d time.Duration) {
	e.consistentlyFor(d, fmt.Sprintf("pod %s: %s keeps running before KillPod", podRef(pod), name), func(g gomega.Gomega) {
		st := e.status(pod)
		g.Expect(runningOf(st, name)).NotTo(gomega.BeNil(), "container %s is not running; status: %s", name, describeStatus(st))
	})
}

// runningIDs returns the IDs of the running containers of pod, by name.
func (e *podEnv) runningIDs(pod *v1.Pod) map[string]pkgcontainer.ContainerID {
	st := e.status(pod)
	out := map[string]pkgcontainer.ContainerID{}
	for _, c := range pod.Spec.Containers {
		if r := runningOf(st, c.Name); r != nil {
			out[c.Name] = r.ID
		}
	}
	return out
}

func statusNames(ss []v1.ContainerStatus) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// history follows the instances of one container as a pod worker sees them
// round after round. The order in which instances first appear is the order
// in which they were created. A runtime provider keeps every instance, so
// the suite, which looks after every round, sees them all; a remote provider
// may show only the newest, and one that restarts containers itself may run
// some that no round sees: RestartCount tells how many restarts happened.
type history struct {
	name   string
	order  []pkgcontainer.ContainerID
	latest map[pkgcontainer.ContainerID]*pkgcontainer.Status
	// maxRestarts is the highest RestartCount seen; decreased records the
	// first round in which the newest instance's RestartCount went down.
	maxRestarts int
	decreased   string
}

func newHistory(name string) *history {
	return &history{name: name, latest: map[pkgcontainer.ContainerID]*pkgcontainer.Status{}}
}

// observe records the instances of the container in st. Instances that
// appear in the same round are ordered by CreatedAt.
func (h *history) observe(st *pkgcontainer.PodStatus) {
	var fresh []*pkgcontainer.Status
	var newest *pkgcontainer.Status
	for _, c := range instancesOf(st, h.name) {
		if _, seen := h.latest[c.ID]; !seen {
			fresh = append(fresh, c)
		}
		h.latest[c.ID] = c
		if newest == nil || c.CreatedAt.After(newest.CreatedAt) {
			newest = c
		}
	}
	slices.SortStableFunc(fresh, func(a, b *pkgcontainer.Status) int { return a.CreatedAt.Compare(b.CreatedAt) })
	for _, c := range fresh {
		h.order = append(h.order, c.ID)
	}
	if newest == nil {
		return
	}
	if newest.RestartCount < h.maxRestarts && h.decreased == "" {
		h.decreased = fmt.Sprintf("the newest instance %s reports RestartCount %d after %d was seen", newest.ID.ID, newest.RestartCount, h.maxRestarts)
	}
	h.maxRestarts = max(h.maxRestarts, newest.RestartCount)
}

// restarts is how many times the container has been seen to restart: new
// instances, or a RestartCount that grew, whichever says more.
func (h *history) restarts() int {
	if len(h.order) == 0 {
		return 0
	}
	return max(len(h.order)-1, h.maxRestarts-h.latest[h.order[0]].RestartCount)
}

// newest returns the latest status of the newest instance seen, or nil.
func (h *history) newest() *pkgcontainer.Status {
	if len(h.order) == 0 {
		return nil
	}
	return h.latest[h.order[len(h.order)-1]]
}

// instances returns the latest status of every instance seen, oldest first.
func (h *history) instances() []*pkgcontainer.Status {
	out := make([]*pkgcontainer.Status, len(h.order))
	for i, id := range h.order {
		out[i] = h.latest[id]
	}
	return out
}

func (h *history) String() string {
	parts := make([]string, 0, len(h.order))
	for i, c := range h.instances() {
		parts = append(parts, fmt.Sprintf("#%d %s %s restarts=%d created=%s started=%s finished=%s",
			i, c.ID.ID, c.State, c.RestartCount, stamp(c.CreatedAt), stamp(c.StartedAt), stamp(c.FinishedAt)))
	}
	return fmt.Sprintf("instances of %s, in order of creation: [%s]", h.name, strings.Join(parts, ", "))
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "unset"
	}
	return t.Format(time.RFC3339Nano)
}

// restarted syncs pod until container name has restarted n-1 times (new
// instances or a growing RestartCount) and returns its history.
func (e *podEnv) restarted(pod *v1.Pod, name string, n int) *history {
	h := newHistory(name)
	e.syncUntil(pod, fmt.Sprintf("container %s restarted %d times", name, n-1), func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		h.observe(st)
		g.Expect(h.restarts()).To(gomega.BeNumerically(">=", n-1), "container %s has restarted %d times: %s", name, h.restarts(), h)
	})
	return h
}

// refreshSettled returns what RefreshPodStatus makes of the status the agent
// builds for pod (publish) while the pod's instances stay the same
// (GetPodStatus before and after agree), with the runtime status it was
// built from, so that its answer can be compared with h. No SyncPod runs
// meanwhile.
func (e *podEnv) refreshSettled(pod *v1.Pod, h *history) (v1.PodStatus, *pkgcontainer.PodStatus) {
	var ps v1.PodStatus
	var before *pkgcontainer.PodStatus
	e.eventually(fmt.Sprintf("pod %s: RefreshPodStatus between two identical GetPodStatus answers", podRef(pod)), func(g gomega.Gomega) {
		before = e.status(pod)
		ps = e.publish(pod, before)
		after := e.status(pod)
		h.observe(before)
		h.observe(after)
		g.Expect(canonicalStatus(after)).To(gomega.Equal(canonicalStatus(before)), "the pod's containers changed while RefreshPodStatus ran")
	})
	return ps, before
}

// newestOf returns the newest instance of container name in st (by
// CreatedAt), or nil.
func newestOf(st *pkgcontainer.PodStatus, name string) *pkgcontainer.Status {
	var newest *pkgcontainer.Status
	for _, c := range instancesOf(st, name) {
		if newest == nil || c.CreatedAt.After(newest.CreatedAt) {
			newest = c
		}
	}
	return newest
}

// apiStatusOf returns the API status of container name in ss, or nil.
func apiStatusOf(ss []v1.ContainerStatus, name string) *v1.ContainerStatus {
	for i := range ss {
		if ss[i].Name == name {
			return &ss[i]
		}
	}
	return nil
}

// sameImage reports whether got names the image want names: the same
// string, or the same reference once both are normalised as a container
// runtime normalises them (busybox:1.36 is docker.io/library/busybox:1.36).
// A digest reference (name@sha256:...) of the same repository matches too:
// runtimes may report the image by the digest they resolved.
func sameImage(got, want string) bool {
	if got == want {
		return true
	}
	g, err1 := reference.ParseNormalizedNamed(got)
	w, err2 := reference.ParseNormalizedNamed(want)
	if err1 != nil || err2 != nil {
		return false
	}
	if g.String() == reference.TagNameOnly(w).String() || reference.TagNameOnly(g).String() == reference.TagNameOnly(w).String() {
		return true
	}
	_, digested := g.(reference.Digested)
	return digested && g.Name() == w.Name()
}
