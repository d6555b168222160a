package vkremote

import (
	"context"
	"fmt"
	"sync"
	"time"

	pkgerrors "github.com/pkg/errors"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The tags the provider puts on each group: the node that runs it and the
// pod it stands for.
const (
	TagNode      = "vk-node"
	TagNamespace = "pod-namespace"
	TagName      = "pod-name"
)

// Config says which service a Provider forwards its pods to.
type Config struct {
	// Client reaches the remote service.
	Client *Client
	// NodeName is the virtual node's name; the provider tags its groups
	// with it and lists only those.
	NodeName string
	// PollInterval is how often the provider lists its groups to notice
	// changes of state (0: 2s).
	PollInterval time.Duration
}

// Provider is an async VK provider (node.PodLifecycleHandler and
// node.PodNotifier) that runs each pod as a Group of the remote service.
//
// It keeps the pod objects VK gave it, by namespace/name, and answers
// GetPod and GetPodStatus from them without calling the service: the spec
// as VK gave it (so VK's podsEqual finds no difference) and the status the
// service last reported. The service is the truth for the status: a poll
// loop, started by NotifyPods, lists the node's groups every PollInterval
// and notifies VK of every group whose Version grew.
type Provider struct {
	cfg Config

	// sendMu orders notifications: a status is read from pods and handed
	// to VK's callback under it, so that VK never gets an older status
	// after a newer one (the poll loop's Running after DeletePod's
	// Succeeded). Taken before mu; VK's callback is called without mu.
	sendMu sync.Mutex
	mu     sync.Mutex
	pods   map[string]*tracked // by namespace/name
	notify func(*corev1.Pod)
	polls  sync.WaitGroup
}

// tracked is a pod the provider runs: the object VK gave it (its status
// from the service) and the group Version that status comes from.
type tracked struct {
	pod     *corev1.Pod
	version int64
}

var (
	_ node.PodLifecycleHandler = (*Provider)(nil)
	_ node.PodNotifier         = (*Provider)(nil)
)

// New returns a provider that forwards pods to the service cfg.Client
// reaches. It calls the service only when VK calls it, and from the poll
// loop NotifyPods starts.
func New(cfg Config) *Provider {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 2 * time.Second
	}
	return &Provider{cfg: cfg, pods: map[string]*tracked{}}
}

func key(namespace, name string) string { return namespace + "/" + name }

// NotifyPods keeps cb and starts the poll loop, which runs until ctx is
// done. It returns at once.
func (p *Provider) NotifyPods(ctx context.Context, cb func(*corev1.Pod)) {
	p.mu.Lock()
	p.notify = cb
	p.mu.Unlock()
	p.polls.Go(func() { p.poll(ctx) })
}

// Wait returns once every poll loop NotifyPods started has ended (their
// contexts are done).
func (p *Provider) Wait() { p.polls.Wait() }

func (p *Provider) poll(ctx context.Context) {
	t := time.NewTicker(p.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// An error (the service unreachable) is left to the next tick.
		_ = p.refresh(ctx)
	}
}

// refresh lists the node's groups and notifies VK of each pod whose group
// changed since the provider last saw it.
func (p *Provider) refresh(ctx context.Context) error {
	groups, err := p.cfg.Client.List(ctx, map[string]string{TagNode: p.cfg.NodeName})
	if err != nil {
		return err
	}
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	var changed []*corev1.Pod
	p.mu.Lock()
	for i := range groups {
		g := &groups[i]
		t, ok := p.pods[key(g.Tags[TagNamespace], g.Tags[TagName])]
		// A group listed before a newer answer (Create, Delete) arrived is
		// stale: Version only grows.
		if !ok || string(t.pod.UID) != g.ID || g.Version <= t.version {
			continue
		}
		t.pod.Status = podStatus(g)
		t.version = g.Version
		changed = append(changed, t.pod.DeepCopy())
	}
	cb := p.notify
	p.mu.Unlock()
	if cb != nil {
		for _, pod := range changed {
			cb(pod)
		}
	}
	return nil
}

// CreatePod creates the pod's group, whose ID is the pod's UID. A pod it
// runs already (the same UID) is left alone; a group the service runs
// already under that UID (a create retried after a timeout, or a provider
// restarted) is taken as it is: the service's create is idempotent.
func (p *Provider) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	k := key(pod.Namespace, pod.Name)
	p.mu.Lock()
	t, ok := p.pods[k]
	p.mu.Unlock()
	if ok && t.pod.UID == pod.UID {
		return nil
	}
	g, err := p.cfg.Client.Create(ctx, p.toGroup(pod))
	if err != nil {
		// VK publishes the pod Pending, reason ProviderFailed, with this
		// message (node/pod.go handleProviderError) and retries.
		return pkgerrors.Wrapf(err, "creating the group of pod %s", k)
	}
	cp := pod.DeepCopy()
	cp.Status = podStatus(g)
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	p.mu.Lock()
	if t, ok := p.pods[k]; ok && t.pod.UID == pod.UID && t.version >= g.Version {
		p.mu.Unlock() // a concurrent refresh or create was first
		return nil
	}
	p.pods[k] = &tracked{pod: cp, version: g.Version}
	cb := p.notify
	p.mu.Unlock()
	if cb != nil {
		cb(cp.DeepCopy())
	}
	return nil
}

// UpdatePod takes what VK may change on a running pod (labels,
// annotations, the fields podsEqual compares) into the pod it keeps, so
// that GetPod answers them. The service's groups cannot change: a new
// image would need a new group (this provider does not do that).
func (p *Provider) UpdatePod(_ context.Context, pod *corev1.Pod) error {
	k := key(pod.Namespace, pod.Name)
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	p.mu.Lock()
	t, ok := p.pods[k]
	if !ok || t.pod.UID != pod.UID {
		p.mu.Unlock()
		return errdefs.NotFoundf("pod %s (UID %s) is not running here", k, pod.UID)
	}
	cp := pod.DeepCopy()
	cp.Status = t.pod.Status
	t.pod = cp
	cb := p.notify
	p.mu.Unlock()
	if cb != nil {
		cb(cp.DeepCopy())
	}
	return nil
}

// DeletePod deletes the pod's group with the pod's grace period
// (DeletionGracePeriodSeconds, else TerminationGracePeriodSeconds) and
// waits for the service's answer: the group's last state, every container
// exited. It then forgets the pod, so that GetPod answers NotFound and
// GetPods drops it, and notifies VK of that terminal status. A group the
// service does not run answers errdefs.NotFound, which VK takes for done.
func (p *Provider) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	k := key(pod.Namespace, pod.Name)
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if s := pod.DeletionGracePeriodSeconds; s != nil {
		grace = *s
	} else if s := pod.Spec.TerminationGracePeriodSeconds; s != nil {
		grace = *s
	}
	g, err := p.cfg.Client.Delete(ctx, string(pod.UID), grace)
	if err != nil && !errdefs.IsNotFound(err) {
		return pkgerrors.Wrapf(err, "deleting the group of pod %s", k)
	}
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	p.mu.Lock()
	t, ok := p.pods[k]
	if ok && t.pod.UID == pod.UID {
		delete(p.pods, k)
	}
	cb := p.notify
	p.mu.Unlock()
	if err != nil {
		return pkgerrors.Wrapf(err, "deleting the group of pod %s", k) // errdefs.IsNotFound follows Cause
	}
	end := pod.DeepCopy()
	if ok && t.pod.UID == pod.UID {
		end = t.pod.DeepCopy()
	}
	end.Status = podStatus(g)
	if cb != nil {
		cb(end)
	}
	return nil
}

// GetPod answers a copy of the pod it runs, or nil and errdefs.NotFound.
func (p *Provider) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.pods[key(namespace, name)]
	if !ok {
		return nil, errdefs.NotFoundf("pod %s is not running here", key(namespace, name))
	}
	return t.pod.DeepCopy(), nil
}

// GetPodStatus answers a copy of the status of the pod it runs, or nil and
// errdefs.NotFound. VK does not poll it (the provider is async).
func (p *Provider) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	pod, err := p.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods lists every group of the node the service runs: the pod VK gave
// for those it knows, and for the others (groups a previous run of the
// provider made) a pod rebuilt from the group's tags and containers, with
// which VK's deleteDanglingPods calls DeletePod when the API server no
// longer has it.
func (p *Provider) GetPods(ctx context.Context) ([]*corev1.Pod, error) {
	groups, err := p.cfg.Client.List(ctx, map[string]string{TagNode: p.cfg.NodeName})
	if err != nil {
		return nil, pkgerrors.Wrap(err, "listing the node's groups")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(groups))
	for i := range groups {
		g := &groups[i]
		if t, ok := p.pods[key(g.Tags[TagNamespace], g.Tags[TagName])]; ok && string(t.pod.UID) == g.ID {
			out = append(out, t.pod.DeepCopy())
			continue
		}
		out = append(out, podOfGroup(g))
	}
	return out, nil
}

// toGroup translates a pod into the group the service runs for it.
func (p *Provider) toGroup(pod *corev1.Pod) *Group {
	g := &Group{ID: string(pod.UID), Tags: map[string]string{
		TagNode: p.cfg.NodeName, TagNamespace: pod.Namespace, TagName: pod.Name,
	}}
	for _, c := range pod.Spec.Containers {
		gc := Container{Name: c.Name, Image: c.Image, Command: c.Command, Args: c.Args}
		for _, e := range c.Env {
			gc.Env = append(gc.Env, EnvVar{Name: e.Name, Value: e.Value}) // VK resolved valueFrom already
		}
		g.Containers = append(g.Containers, gc)
	}
	return g
}

// podOfGroup rebuilds the pod a group stands for from its tags and
// containers (a pod the provider did not get from VK in this run).
func podOfGroup(g *Group) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: g.Tags[TagNamespace], Name: g.Tags[TagName], UID: types.UID(g.ID)},
		Spec:       corev1.PodSpec{NodeName: g.Tags[TagNode]},
	}
	for _, c := range g.Containers {
		kc := corev1.Container{Name: c.Name, Image: c.Image, Command: c.Command, Args: c.Args}
		for _, e := range c.Env {
			kc.Env = append(kc.Env, corev1.EnvVar{Name: e.Name, Value: e.Value})
		}
		pod.Spec.Containers = append(pod.Spec.Containers, kc)
	}
	pod.Status = podStatus(g)
	return pod
}

// podStatus translates a group's state into the pod status VK publishes:
// Pending with its containers waiting in ContainerCreating, Running with
// every container running and ready, and once deleted Succeeded (every
// container exited 0) or Failed, every container terminated with its exit
// code.
func podStatus(g *Group) corev1.PodStatus {
	created := metav1.NewTime(g.Created)
	st := corev1.PodStatus{Phase: corev1.PodPending, StartTime: &created, PodIP: g.IP}
	if g.IP != "" {
		st.PodIPs = []corev1.PodIP{{IP: g.IP}}
	}
	ready := corev1.ConditionFalse
	if g.State == GroupRunning {
		st.Phase, ready = corev1.PodRunning, corev1.ConditionTrue
	}
	if g.State == GroupStopped {
		st.Phase = corev1.PodSucceeded
	}
	for _, c := range g.Containers {
		cs := corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image,
			ContainerID: fmt.Sprintf("vkremote://%s/%s", g.ID, c.Name),
			Started:     new(false),
		}
		switch g.State {
		case GroupPending:
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		case GroupRunning:
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(c.StartedAt)}
			cs.Ready, cs.Started = true, new(true)
		case GroupStopped:
			cs.State.Terminated = &corev1.ContainerStateTerminated{
				ExitCode: c.ExitCode, Reason: c.Reason, ContainerID: cs.ContainerID,
				StartedAt: metav1.NewTime(c.StartedAt), FinishedAt: metav1.NewTime(c.FinishedAt),
			}
			if c.ExitCode != 0 {
				st.Phase = corev1.PodFailed
			}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	scheduled := metav1.NewTime(g.Created)
	st.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: scheduled},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: scheduled},
		{Type: corev1.ContainersReady, Status: ready},
		{Type: corev1.PodReady, Status: ready},
	}
	return st
}
