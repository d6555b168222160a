// Package memprovider is a tiny in-memory KRI provider, written the way a
// provider author outside the kit would write one, to show how a module gates
// itself on the conformance suite. It runs "containers" as records: a
// container's command decides whether it runs until killed, exits with a
// code (now or after a few seconds of wall time) or fails to start. A pod's
// containers run in its sandbox, a record too, which the first start attempt
// creates, and the first one after KillPod creates anew. It does not support
// init containers or grace periods: its test declares only the capabilities
// it has.
//
// The node agent syncs a pod only when told (kri.PodSyncNotifier), so the
// provider, with an embedded podsync.Notifier, tells it of every change it
// makes: a start (at once), an exit (a timer for when the container's time
// is up), KillPod's stop (at once), and the end of a wait: an exited
// container is restarted, and a failed start tried again, only a second
// (retryDelay) after, and a SyncPod that leaves a container waiting asks to
// be called again when the second is over.
package memprovider

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podsync"
	"github.com/kri-kit/testkit/sim/workload"
)

// RuntimeName is the Type of the container and sandbox IDs.
const RuntimeName = "mem"

// retryDelay is how long an exited container waits before it is
// restarted, and a failed start before it is tried again: a crash-loop
// back-off, short and fixed.
const retryDelay = time.Second

// Provider implements kri.PodProvider in memory, and kri.PodSyncNotifier
// by its embedded Notifier.
type Provider struct {
	podsync.Notifier

	mu   sync.Mutex
	pods map[types.UID]*podRecord
	seq  int

	runMu   sync.Mutex
	stop    chan struct{}
	stopped bool
	done    chan struct{} // closed when Start returns; nil before Start
}

var (
	_ kri.PodProvider     = (*Provider)(nil)
	_ kri.PodSyncNotifier = (*Provider)(nil)
)

type podRecord struct {
	pod       *v1.Pod
	createdAt time.Time
	// sandboxes of the pod, oldest first; only the newest may be ready.
	sandboxes []*sandbox
	// instances of each container, oldest first.
	instances map[string][]*instance
	// failures holds the last failed start of a container.
	failures map[string]failure
}

type failure struct {
	message string
	at      time.Time
}

type sandbox struct {
	id      string
	attempt uint32
	created time.Time
	ready   bool // until KillPod
}

type instance struct {
	id       string
	sandbox  string // ID of the sandbox the instance runs in
	name     string
	image    string
	restarts int // number of instances of the name before this one
	started  time.Time
	finished time.Time
	exitAt   time.Time // zero: runs until killed
	exitCode int
}

// New returns an empty provider.
func New() *Provider {
	return &Provider{pods: map[types.UID]*podRecord{}, stop: make(chan struct{})}
}

// behaviour interprets the command vocabulary of package workload (the
// provider does not model SIGTERM handlers: KillPod kills at once).
func behaviour(c v1.Container) (runFor time.Duration, forever bool, code int, missing bool) {
	b := workload.Of(&c)
	return b.RunFor, b.RunsUntilKilled, b.ExitCode, b.FailsToStart()
}

func (in *instance) running(now time.Time) bool {
	return in.finished.IsZero() && (in.exitAt.IsZero() || now.Before(in.exitAt))
}

// settle records the exit of containers whose time has come.
func (in *instance) settle(now time.Time) {
	if in.finished.IsZero() && !in.exitAt.IsZero() && !now.Before(in.exitAt) {
		in.finished = in.exitAt
	}
}

func validate(pod *v1.Pod) error {
	if pod == nil {
		return errors.New("memprovider: nil pod")
	}
	if pod.UID == "" {
		return fmt.Errorf("memprovider: pod %s/%s has no UID", pod.Namespace, pod.Name)
	}
	seen := map[string]bool{}
	for _, c := range append(append([]v1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if seen[c.Name] {
			return fmt.Errorf("memprovider: pod %s/%s has two containers named %q", pod.Namespace, pod.Name, c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// SyncPod starts every app container that is not running and may be
// (re)started under the pod's restart policy, in the pod's ready sandbox,
// which it creates first if there is none.
func (p *Provider) SyncPod(ctx context.Context, pod *v1.Pod, _ *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
	if err := validate(pod); err != nil {
		return err
	}
	if rc == nil {
		return errors.New("memprovider: nil ReasonCache")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The agent is told once p.mu is released (deferred calls run last
	// first), so that a handler that reads the status at once can.
	started := false
	defer func() {
		if started {
			p.Notify(pod.UID)
		}
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	rec := p.pods[pod.UID]
	if rec == nil {
		rec = &podRecord{createdAt: now, instances: map[string][]*instance{}, failures: map[string]failure{}}
		p.pods[pod.UID] = rec
	}
	rec.pod = pod.DeepCopy()
	var result pkgcontainer.PodSyncResult
	for _, c := range pod.Spec.Containers {
		insts := rec.instances[c.Name]
		if n := len(insts); n > 0 {
			last := insts[n-1]
			last.settle(now)
			if last.running(now) || !mayRestart(pod.Spec.RestartPolicy, last.exitCode) {
				continue
			}
			if wait := last.finished.Add(retryDelay).Sub(now); wait > 0 {
				p.NotifyAfter(pod.UID, wait) // to restart it then
				continue
			}
		}
		if f, failed := rec.failures[c.Name]; failed {
			if wait := f.at.Add(retryDelay).Sub(now); wait > 0 {
				p.NotifyAfter(pod.UID, wait) // to try again then
				continue
			}
		}
		sb := p.readySandbox(rec, now)
		r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
		result.AddSyncResult(r)
		runFor, forever, code, missing := behaviour(c)
		if workload.ImageMissing(c.Image) {
			msg := fmt.Sprintf("failed to pull image %q", c.Image)
			r.Fail(workload.ErrImagePull, msg)
			rec.failures[c.Name] = failure{msg, now}
			p.NotifyAfter(pod.UID, retryDelay)
			continue
		}
		if missing {
			msg := fmt.Sprintf("exec: %q: executable file not found", c.Command[0])
			r.Fail(pkgcontainer.ErrRunContainer, msg)
			rec.failures[c.Name] = failure{msg, now}
			p.NotifyAfter(pod.UID, retryDelay)
			continue
		}
		delete(rec.failures, c.Name)
		p.seq++
		in := &instance{id: fmt.Sprintf("%08d", p.seq), sandbox: sb.id, name: c.Name, image: c.Image, restarts: len(insts), started: now, exitCode: code}
		if !forever {
			in.exitAt = now.Add(runFor)
			in.settle(now)
			if runFor > 0 {
				p.NotifyAfter(pod.UID, runFor) // it exits then
			}
		}
		rec.instances[c.Name] = append(insts, in)
		started = true // (and exited, when runFor is 0)
	}
	rc.Update(pod.UID, result)
	return result.Error()
}

// readySandbox returns the ready sandbox of rec, creating one if there is
// none. The caller holds p.mu.
func (p *Provider) readySandbox(rec *podRecord, now time.Time) *sandbox {
	if n := len(rec.sandboxes); n > 0 && rec.sandboxes[n-1].ready {
		return rec.sandboxes[n-1]
	}
	p.seq++
	sb := &sandbox{id: fmt.Sprintf("%08d", p.seq), attempt: uint32(len(rec.sandboxes)), created: now, ready: true}
	rec.sandboxes = append(rec.sandboxes, sb)
	return sb
}

func mayRestart(policy v1.RestartPolicy, exitCode int) bool {
	switch policy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	}
	return true
}

// KillPod stops every running container of the pod at once (this provider
// has no grace periods), then its sandbox.
func (p *Provider) KillPod(ctx context.Context, pod *v1.Pod, running pkgcontainer.Pod, _ *int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	uid := running.ID
	if uid == "" && pod != nil {
		uid = pod.UID
	}
	defer p.Notify(uid) // its containers and sandbox stopped, once p.mu is released
	p.mu.Lock()
	defer p.mu.Unlock()
	if rec := p.pods[uid]; rec != nil {
		now := time.Now()
		for _, insts := range rec.instances {
			for _, in := range insts {
				in.settle(now)
				if in.running(now) {
					in.finished, in.exitCode = now, 143
				}
			}
		}
		for _, sb := range rec.sandboxes {
			sb.ready = false
		}
	}
	return nil
}

// DeletePod forgets the pod.
func (p *Provider) DeletePod(ctx context.Context, pod *v1.Pod) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if pod == nil {
		return errors.New("memprovider: nil pod")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.pods, pod.UID)
	p.Forget(pod.UID) // nothing more to tell of it
	return nil
}

// CleanupPods forgets every pod none of its arguments names.
func (p *Provider) CleanupPods(ctx context.Context, pods []*v1.Pod, running []*pkgcontainer.Pod, possibly map[types.UID]sets.Empty) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	keep := kri.PodsToKeep(pods, running, possibly)
	p.mu.Lock()
	defer p.mu.Unlock()
	for uid := range p.pods {
		if !keep.Has(uid) {
			delete(p.pods, uid)
			p.Forget(uid)
		}
	}
	return nil
}

// RefreshPodStatus fills the container statuses of a pod it knows, each
// from the newest instance of its container, with the one it replaced as
// LastTerminationState. It runs no probes: a running container is Started
// and Ready, as the kubelet's prober reports a container without probes.
func (p *Provider) RefreshPodStatus(pod *v1.Pod, status *v1.PodStatus) {
	if pod == nil || status == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	rec := p.pods[pod.UID]
	if rec == nil {
		return
	}
	now := time.Now()
	status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		cs := v1.ContainerStatus{Name: c.Name, Image: c.Image}
		insts := rec.instances[c.Name]
		switch f, failed := rec.failures[c.Name]; {
		case failed:
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "RunContainerError", Message: f.message}
		case len(insts) == 0:
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
		default:
			in := insts[len(insts)-1]
			in.settle(now)
			cs.ContainerID = in.apiID()
			cs.RestartCount = int32(in.restarts)
			if in.running(now) {
				cs.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(in.started)}
				started := true
				cs.Started, cs.Ready = &started, true
			} else {
				cs.State.Terminated = in.terminated()
			}
			if len(insts) > 1 {
				cs.LastTerminationState.Terminated = insts[len(insts)-2].terminated()
			}
		}
		status.ContainerStatuses = append(status.ContainerStatuses, cs)
	}
}

func (in *instance) containerID() pkgcontainer.ContainerID {
	return pkgcontainer.ContainerID{Type: RuntimeName, ID: in.id}
}

// apiID is the instance's ID as the API's statuses name it.
func (in *instance) apiID() string {
	id := in.containerID()
	return id.String()
}

// reason says why an exited instance exited, by the CRI convention.
func (in *instance) reason() string {
	if in.exitCode == 0 {
		return "Completed"
	}
	return "Error"
}

// terminated describes an exited instance; the caller has settled it.
func (in *instance) terminated() *v1.ContainerStateTerminated {
	return &v1.ContainerStateTerminated{
		ExitCode:    int32(in.exitCode),
		Reason:      in.reason(),
		StartedAt:   metav1.NewTime(in.started),
		FinishedAt:  metav1.NewTime(in.finished),
		ContainerID: in.apiID(),
	}
}

func (in *instance) status(now time.Time) *pkgcontainer.Status {
	in.settle(now)
	s := &pkgcontainer.Status{
		ID:           in.containerID(),
		Name:         in.name,
		Image:        in.image,
		State:        pkgcontainer.ContainerStateRunning,
		CreatedAt:    in.started,
		StartedAt:    in.started,
		FinishedAt:   in.finished,
		ExitCode:     in.exitCode,
		RestartCount: in.restarts,
	}
	if !in.running(now) {
		s.State = pkgcontainer.ContainerStateExited
		s.Reason = in.reason()
	}
	return s
}

func (sb *sandbox) status(pod *v1.Pod) *runtimeapi.PodSandboxStatus {
	s := &runtimeapi.PodSandboxStatus{
		Id:        sb.id,
		Metadata:  &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: sb.attempt},
		State:     runtimeapi.PodSandboxState_SANDBOX_NOTREADY,
		CreatedAt: sb.created.UnixNano(),
	}
	if sb.ready {
		s.State = runtimeapi.PodSandboxState_SANDBOX_READY
	}
	return s
}

func (sb *sandbox) container() *pkgcontainer.Container {
	// Container.CreatedAt and PodSandboxID exist from Kubernetes 1.36 on;
	// this module builds against 1.35 too, and no agent reads them.
	c := &pkgcontainer.Container{ID: pkgcontainer.ContainerID{Type: RuntimeName, ID: sb.id}, State: pkgcontainer.ContainerStateExited}
	if sb.ready {
		c.State = pkgcontainer.ContainerStateRunning
	}
	return c
}

// GetPodStatus reports every sandbox and container instance of the pod.
func (p *Provider) GetPodStatus(ctx context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st := &pkgcontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	p.mu.Lock()
	defer p.mu.Unlock()
	if rec := p.pods[pod.UID]; rec != nil {
		now := time.Now()
		for _, sb := range rec.sandboxes {
			st.SandboxStatuses = append(st.SandboxStatuses, sb.status(rec.pod))
		}
		for _, c := range rec.pod.Spec.Containers {
			for _, in := range rec.instances[c.Name] {
				st.ContainerStatuses = append(st.ContainerStatuses, in.status(now))
			}
		}
	}
	return st, nil
}

// GetPods lists the pods: with all, every container and sandbox; otherwise
// only running containers and the ready sandbox, and only pods that have a
// running container or a ready sandbox.
func (p *Provider) GetPods(ctx context.Context, all bool) ([]*pkgcontainer.Pod, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	var out []*pkgcontainer.Pod
	for uid, rec := range p.pods {
		rp := &pkgcontainer.Pod{ID: uid, Name: rec.pod.Name, Namespace: rec.pod.Namespace, CreatedAt: uint64(rec.createdAt.UnixNano())}
		for _, insts := range rec.instances {
			for _, in := range insts {
				s := in.status(now)
				if all || s.State == pkgcontainer.ContainerStateRunning {
					rp.Containers = append(rp.Containers, &pkgcontainer.Container{ID: s.ID, Name: s.Name, Image: s.Image, State: s.State})
				}
			}
		}
		for _, sb := range rec.sandboxes {
			if all || sb.ready {
				rp.Sandboxes = append(rp.Sandboxes, sb.container())
			}
		}
		if all || len(rp.Containers) > 0 || len(rp.Sandboxes) > 0 {
			out = append(out, rp)
		}
	}
	return out, nil
}

// Start blocks until ctx is done or Stop is called.
func (p *Provider) Start(ctx context.Context) error {
	p.runMu.Lock()
	if p.stopped || p.done != nil {
		p.runMu.Unlock()
		return nil
	}
	done := make(chan struct{})
	p.done = done
	p.runMu.Unlock()
	defer close(done)
	select {
	case <-ctx.Done():
	case <-p.stop:
	}
	return nil
}

// Stop ends Start and waits for it, and ends the calls of the agent's
// handler; later calls do nothing.
func (p *Provider) Stop() {
	p.runMu.Lock()
	if !p.stopped {
		p.stopped = true
		close(p.stop)
		p.Notifier.Stop()
	}
	done := p.done
	p.runMu.Unlock()
	if done != nil {
		<-done
	}
}
