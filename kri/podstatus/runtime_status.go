package podstatus

import (
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// MaxInstanceOffset is the largest sub-second offset RuntimeStatus adds to
// the timestamps of an instance: its restart count in nanoseconds, capped
// here so that it never reaches a whole second.
const MaxInstanceOffset = time.Second - time.Nanosecond

// RuntimeStatus is the inverse of Generate: it turns the API status of a pod
// (pod.Status, as another cluster's kubelet reports it through its API
// server) back into the runtime status a KRI provider's GetPodStatus returns.
// It is what a provider that mirrors pods into a backend Kubernetes cluster
// (secretflow/kuscia's K8sProvider) needs: the backend's kubelet runs the
// containers, and the node agent in front wants them as instances.
//
// The result carries pod's UID, name and namespace (a provider replaces them
// with those of the agent's pod), the pod's IPs (PodIPs, else PodIP) and up
// to two instances per container status, in the order of the API lists
// (init, app, ephemeral containers):
//
//   - the newest run: State.Running (state Running), State.Terminated
//     (Exited, with exit code, reason, message and times), or, for
//     State.Waiting with a ContainerID and no LastTerminationState of
//     another ID, a created instance (Created) — with the status's
//     RestartCount, Image, ImageID (as ImageID and ImageRef) and
//     ContainerID parsed as pkgcontainer.ParseContainerID does (type://id);
//   - the run before it, from LastTerminationState.Terminated (Exited),
//     with RestartCount one less (never below 0) and the status's Image.
//
// A container Waiting to be started again (CrashLoopBackOff, ErrImagePull,
// ...) with a LastTerminationState has that termination as its newest run,
// with the status's RestartCount, as the kubelet builds such a status from
// its newest instance and its ReasonCache: Generate with a ReasonCache that
// holds the Waiting reason gives the status back. A Waiting container
// without ContainerID has no instance; a state without a container ID (the
// kubelet's ContainerStatusUnknown termination) is no instance either.
// No sandbox and no ActiveContainerStatuses are reported: the API names no
// sandbox, and Generate handles a provider without sandboxes.
//
// # What the API cannot tell
//
// The API keeps no creation time of a container, only two runs of it (older
// runs are gone), the image of the current run only, and timestamps in whole
// seconds (metav1.Time is RFC 3339 on the wire). A restart within the second
// the previous run finished in gives two runs with the same timestamps, and
// the kubelet, which sorts instances by CreatedAt, newest first
// (pkgcontainer.SortContainerStatusesByCreationTime), could take the old run
// for the current one. RuntimeStatus therefore orders instances by their
// restart counts: it adds to every timestamp of an instance with restart
// count k an offset of k nanoseconds (at most MaxInstanceOffset), and takes
// as CreatedAt the earliest of the instance's shifted StartedAt and
// FinishedAt. So, provided the API's times are the truncations of real ones
// (a run starts after the one before it finished):
//
//   - a newer run is created strictly after the run it replaced, and not
//     before that one finished; StartedAt and FinishedAt are not before
//     CreatedAt;
//   - an instance's timestamps depend only on its own run (its times and
//     restart count), so they stay the same from one call to the next,
//     when the current run becomes the previous one too;
//   - on the wire (metav1.Time) the offsets vanish: Generate of the result
//     gives the API's times back once serialised.
//
// A created instance, which has no time of its own, is created when the run
// before it finished, else at the pod's StartTime, else at its
// CreationTimestamp. A run without any of these is an error. In a status
// the API should not hold (a last termination with restart count 0, or one
// that ended after the current run began) the previous run is moved back
// just enough to come before the current one.
//
// # Bad input
//
// A nil pod, a container status without name or with the name of another
// one, a state with more than one of Running, Terminated and Waiting set, a
// negative restart count, a ContainerID that is not type://id, and a running
// or terminated state without any time to date it by are errors naming the
// container; RuntimeStatus never panics and never modifies pod.
func RuntimeStatus(pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	if pod == nil {
		return nil, errors.New("podstatus: RuntimeStatus of a nil pod")
	}
	out := &pkgcontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	for _, ip := range pod.Status.PodIPs {
		if ip.IP != "" {
			out.IPs = append(out.IPs, ip.IP)
		}
	}
	if len(out.IPs) == 0 && pod.Status.PodIP != "" {
		out.IPs = []string{pod.Status.PodIP}
	}
	seen := map[string]string{}
	lists := []struct {
		field    string
		statuses []v1.ContainerStatus
	}{
		{"initContainerStatuses", pod.Status.InitContainerStatuses},
		{"containerStatuses", pod.Status.ContainerStatuses},
		{"ephemeralContainerStatuses", pod.Status.EphemeralContainerStatuses},
	}
	for _, l := range lists {
		for i := range l.statuses {
			cs := &l.statuses[i]
			where := fmt.Sprintf("pod %s/%s: %s[%d]", pod.Namespace, pod.Name, l.field, i)
			if cs.Name == "" {
				return nil, fmt.Errorf("podstatus: %s has no name", where)
			}
			where = fmt.Sprintf("%s (container %q)", where, cs.Name)
			if other, dup := seen[cs.Name]; dup {
				return nil, fmt.Errorf("podstatus: %s: the name is taken by %s already", where, other)
			}
			seen[cs.Name] = where
			inst, err := instancesOf(pod, cs)
			if err != nil {
				return nil, fmt.Errorf("podstatus: %s: %w", where, err)
			}
			out.ContainerStatuses = append(out.ContainerStatuses, inst...)
		}
	}
	return out, nil
}

// instancesOf returns the runtime instances the API status cs tells of:
// the previous run (if any) first, then the newest.
func instancesOf(pod *v1.Pod, cs *v1.ContainerStatus) ([]*pkgcontainer.Status, error) {
	if n := statesSet(cs.State); n > 1 {
		return nil, fmt.Errorf("state has %d of running, terminated and waiting set, want at most one", n)
	}
	if cs.RestartCount < 0 {
		return nil, fmt.Errorf("negative restartCount %d", cs.RestartCount)
	}
	count := int(cs.RestartCount)
	last := cs.LastTerminationState.Terminated
	var newest *pkgcontainer.Status
	var err error
	switch s := cs.State; {
	case s.Running != nil:
		if cs.ContainerID == "" {
			return nil, errors.New("running without containerID")
		}
		newest, err = instance(pod, cs, cs.ContainerID, count, pkgcontainer.ContainerStateRunning, s.Running.StartedAt, metav1.Time{}, nil)
	case s.Terminated != nil:
		newest, err = instance(pod, cs, firstOf(s.Terminated.ContainerID, cs.ContainerID), count, pkgcontainer.ContainerStateExited,
			s.Terminated.StartedAt, s.Terminated.FinishedAt, s.Terminated)
	case last != nil && (cs.ContainerID == "" || last.ContainerID == "" || last.ContainerID == cs.ContainerID):
		// Waiting to be started again: the last termination is the
		// newest run.
		newest, err := instance(pod, cs, firstOf(last.ContainerID, cs.ContainerID), count, pkgcontainer.ContainerStateExited,
			last.StartedAt, last.FinishedAt, last)
		return nonNil(newest), err
	case cs.ContainerID != "":
		newest, err = instance(pod, cs, cs.ContainerID, count, pkgcontainer.ContainerStateCreated, metav1.Time{}, metav1.Time{}, nil)
	default:
		return nil, nil // waiting, never created
	}
	if err != nil || last == nil || last.ContainerID == "" || (newest != nil && last.ContainerID == newest.ID.String()) {
		return nonNil(newest), err
	}
	previous, err := instance(pod, cs, last.ContainerID, max(count-1, 0), pkgcontainer.ContainerStateExited, last.StartedAt, last.FinishedAt, last)
	if err != nil {
		return nil, fmt.Errorf("lastState: %w", err)
	}
	switch {
	case newest == nil || previous == nil:
	case newest.State == pkgcontainer.ContainerStateCreated:
		// A created instance has no time of its own: it was created
		// after the run before it finished.
		newest.CreatedAt = latest(previous.CreatedAt, previous.FinishedAt).Add(time.Nanosecond)
	case !newest.CreatedAt.After(previous.CreatedAt) || newest.CreatedAt.Before(previous.FinishedAt):
		// A status the API should not hold (a last termination with
		// restart count 0, or one that ended after the current run
		// began): the previous run is moved back just enough to come
		// first.
		d := latest(previous.CreatedAt, previous.FinishedAt).Sub(newest.CreatedAt) + time.Nanosecond
		previous.CreatedAt = previous.CreatedAt.Add(-d)
		if !previous.StartedAt.IsZero() {
			previous.StartedAt = previous.StartedAt.Add(-d)
		}
		if !previous.FinishedAt.IsZero() {
			previous.FinishedAt = previous.FinishedAt.Add(-d)
		}
	}
	return append(nonNil(previous), nonNil(newest)...), nil
}

// instance builds the runtime instance with API container ID id (none: no
// instance) and restart count count, its timestamps shifted by count
// nanoseconds; term carries exit code, reason and message.
func instance(pod *v1.Pod, cs *v1.ContainerStatus, id string, count int, state pkgcontainer.State, started, finished metav1.Time, term *v1.ContainerStateTerminated) (*pkgcontainer.Status, error) {
	if id == "" {
		return nil, nil
	}
	var cid pkgcontainer.ContainerID
	if err := cid.ParseString(id); err != nil || cid.Type == "" || cid.ID == "" {
		return nil, fmt.Errorf("containerID %q is not of the form type://id", id)
	}
	off := offset(count)
	st := &pkgcontainer.Status{
		ID: cid, Name: cs.Name, State: state, RestartCount: count,
		Image: cs.Image, ImageID: cs.ImageID, ImageRef: cs.ImageID,
	}
	if !started.IsZero() {
		st.StartedAt = started.Add(off)
	}
	if !finished.IsZero() {
		st.FinishedAt = finished.Add(off)
	}
	if term != nil {
		st.ExitCode, st.Reason, st.Message = int(term.ExitCode), term.Reason, term.Message
	}
	switch {
	case !st.StartedAt.IsZero() && (st.FinishedAt.IsZero() || st.StartedAt.Before(st.FinishedAt)):
		st.CreatedAt = st.StartedAt
	case !st.FinishedAt.IsZero():
		st.CreatedAt = st.FinishedAt
	case pod.Status.StartTime != nil && !pod.Status.StartTime.IsZero():
		st.CreatedAt = pod.Status.StartTime.Add(off)
	case !pod.CreationTimestamp.IsZero():
		st.CreatedAt = pod.CreationTimestamp.Add(off)
	case state == pkgcontainer.ContainerStateCreated && cs.LastTerminationState.Terminated != nil && cs.LastTerminationState.Terminated.ContainerID != "":
		// Dated by the run before it (instancesOf).
	default:
		return nil, fmt.Errorf("instance %s (%s) has neither startedAt nor finishedAt, and the pod neither startTime nor creationTimestamp to date it by", id, state)
	}
	return st, nil
}

// offset is the sub-second offset of the instance with restart count count.
func offset(count int) time.Duration {
	return min(time.Duration(count), MaxInstanceOffset)
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func statesSet(s v1.ContainerState) int {
	n := 0
	for _, set := range []bool{s.Running != nil, s.Terminated != nil, s.Waiting != nil} {
		if set {
			n++
		}
	}
	return n
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func nonNil(st *pkgcontainer.Status) []*pkgcontainer.Status {
	if st == nil {
		return nil
	}
	return []*pkgcontainer.Status{st}
}
