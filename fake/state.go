package fake

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/utils/clock"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/workload"
)

// RuntimeName is the container runtime type the fake reports in container
// IDs (pkgcontainer.ContainerID.Type).
const RuntimeName = "fake"

// maxInstancesPerContainer is how many instances of one container the fake
// remembers: the current one and the one before it, as a kubelet shows
// State and LastTerminationState.
const maxInstancesPerContainer = 2

// maxSandboxes is how many sandboxes of one pod the fake remembers: the
// current one and the one before it.
const maxSandboxes = 2

// PodRef names a pod.
type PodRef struct {
	UID       types.UID
	Namespace string
	Name      string
}

// Key returns "namespace/name", the key scripts and snapshots use.
func (r PodRef) Key() string { return podKey(r.Namespace, r.Name) }

func podKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// keyIs reports whether key is podKey(namespace, name), without building
// that string.
func keyIs(key, namespace, name string) bool {
	if namespace == "" {
		return key == name
	}
	return len(key) == len(namespace)+1+len(name) && key[len(namespace)] == '/' &&
		key[:len(namespace)] == namespace && key[len(namespace)+1:] == name
}

func refOf(pod *v1.Pod) PodRef {
	if pod == nil {
		return PodRef{}
	}
	return PodRef{UID: pod.UID, Namespace: pod.Namespace, Name: pod.Name}
}

// podState is everything the fake knows of one pod.
type podState struct {
	ref PodRef
	key string // ref.Key(), kept to look scripts up without allocating
	// pod is a private copy of what the fake uses of the latest pod handed
	// to SyncPod (see specCopy).
	pod       *v1.Pod
	createdAt time.Time
	// sandboxes, newest first.
	sandboxes []*sandboxState
	// containers by name; order keeps them in first-start order, for
	// stable output and to walk them without map lookups.
	containers map[string]*containerHistory
	order      []*containerHistory
	// lastStartErr holds the failure of the latest start of a container, if
	// it failed, for RefreshPodStatus.
	lastStartErr map[string]kri.ReasonItem
	// orphan is set once CleanupPods has stopped the pod: it is forgotten
	// as soon as none of its containers is active any more.
	orphan bool
	// retries are the wake-ups at which the agent is to be notified of the
	// pod: back-off ends, starts due to be tried again (podsync.go).
	retries []retryTimer
	// syncNotifiedAt is when a SyncPod's changes of the pod last notified
	// the agent, or are due to (paceSyncNotification).
	syncNotifiedAt time.Time
	// sim plays the pod's runs (workload.Pod, in the mode where the fake's
	// syncs start them: lifecycle.go newSim); wake is the wake-up at its
	// next event, due at wakeAt (advanceSim).
	sim    *workload.Pod
	wake   clock.Timer
	wakeAt time.Time
}

// anyActive reports whether some instance of the pod is created or
// running.
func (ps *podState) anyActive() bool {
	for _, h := range ps.order {
		for _, in := range h.instances {
			if in.active() {
				return true
			}
		}
	}
	return false
}

type sandboxState struct {
	id        string
	createdAt time.Time
	ready     bool
	attempt   uint32
	ip        string // WithPodIPs: the pod's IP; empty for host-network pods
}

// activeSandbox returns the newest sandbox if it is ready.
func (ps *podState) activeSandbox() *sandboxState {
	if len(ps.sandboxes) > 0 && ps.sandboxes[0].ready {
		return ps.sandboxes[0]
	}
	return nil
}

// containerHistory holds the instances of one container, oldest first.
type containerHistory struct {
	name      string
	instances []*instance
}

func (h *containerHistory) current() *instance {
	if h == nil || len(h.instances) == 0 {
		return nil
	}
	return h.instances[len(h.instances)-1]
}

func (h *containerHistory) previous() *instance {
	if h == nil || len(h.instances) < 2 {
		return nil
	}
	return h.instances[len(h.instances)-2]
}

// instance is one run of a container: what a runtime calls a container.
type instance struct {
	id           string
	name         string
	init         bool
	image        string
	imageID      string // imageID(image), kept to report it without allocating
	hash         uint64
	sandboxID    string
	seq          uint64
	restartCount int

	state      pkgcontainer.State
	createdAt  time.Time
	runningAt  time.Time // when the created container starts running
	startedAt  time.Time
	finishedAt time.Time
	exitCode   int
	reason     string
	message    string
	resources  v1.ResourceRequirements // CPU and memory it runs with (resize.go)

	// run is the instance's run in the pod simulation (podState.sim),
	// which plays it: when it runs, when it exits on its own, how SIGTERM,
	// SIGKILL and a stop after a hook end it, its files, its probes. sim
	// is its Instance. The fields above mirror its state (onRunEvent), for
	// reading without calls. Nil for an instance whose start failed.
	run         *workload.Run
	sim         *workload.Instance
	termination terminationSource

	// Lifecycle hooks (lifecycle.go: postStart, publishHook). hookFailure: its postStart hook failed
	// and the pod simulation kills it at termAt, the hook's end;
	// hookFailPending: that failure is still to be reported to the
	// ReasonCache.
	termAt          time.Time
	hookFailPending bool
	hookFailure     string
}

func (in *instance) active() bool {
	return in.state == pkgcontainer.ContainerStateCreated || in.state == pkgcontainer.ContainerStateRunning
}

// terminating reports whether a signal has set the end of the running
// instance: KillPod sent SIGTERM to a container that ignores it or takes a
// while to exit, or scheduled a sidecar's SIGTERM after the app
// containers.
func (in *instance) terminating() bool {
	if in.sim == nil {
		return false
	}
	_, _, ending := in.sim.Stopping()
	return ending
}

// exit ends the instance at once at at with code.
func (in *instance) exit(at time.Time, code int) {
	if in.sim == nil {
		in.state, in.finishedAt, in.exitCode, in.reason = pkgcontainer.ContainerStateExited, at, code, workload.ExitReason(code)
		return
	}
	in.sim.Exit(at, code)
	in.exited()
}

// exited copies the end of sim, which has exited, into the instance, with
// the termination message its command and its hooks left.
func (in *instance) exited() {
	in.state = pkgcontainer.ContainerStateExited
	in.finishedAt, in.exitCode = in.sim.FinishedAt(), in.sim.ExitCode()
	in.reason = workload.ExitReason(in.exitCode)
	if !in.startedAt.IsZero() {
		in.message = in.termination.message(in.sim)
	}
}

// Exit code and reason of an instance the runtime created but could not
// start, as containerd reports it.
const (
	exitCodeStartError = 128
	reasonStartError   = "StartError"
)
