package workload

import "time"

// How the sidecars (restartable init containers) of a pod stop, as the
// kubelet's runtime manager stops them; when they start, and when the pod
// stops them, is the start order's (pod_start_order.go). A kill of the pod
// (killContainersWithSyncResult with a terminationOrdering,
// kuberuntime_termination_order.go) runs every preStop hook at once; a
// sidecar then waits, within what is left of the grace period, until the
// app containers and the sidecars after it in spec order have exited, and
// gets SIGTERM with what is left then.
//
// The kubelet gives a container at least 2s after its preStop hook and its
// wait (minimumGracePeriodInSeconds); a Pod gives what is left, at least
// its MinimumGracePeriod (sigterm).

// stopTurn is the wait of a stopped sidecar for its turn: it gets SIGTERM
// once the containers before it in the termination order have exited, not
// before from (its preStop hook's end) and at the latest at end (its grace
// period's), with what is left until end.
type stopTurn struct {
	from, end time.Time
}

// stopSidecars stops the sidecars of the pod at now with grace: their
// planned starts are dropped; each running one runs its preStop hook, then
// waits for its turn (stopTurn). again: sidecars already stopping get the
// grace period again, which shortens theirs when it ends earlier (a second
// Stop); else they are left as they are.
func (p *Pod) stopSidecars(now time.Time, grace time.Duration, again bool) {
	for _, c := range p.Init {
		if !c.Restartable {
			continue
		}
		c.pending, c.Waiting = false, nil
		if !c.Running() {
			continue
		}
		r := c.Current
		switch {
		case r.stopping && again:
			p.kill(c, c.Current, now, grace)
		case r.turn != nil && again:
			r.turn.end = minTime(r.turn.end, now.Add(max(grace, 0)))
		case r.stopping || r.turn != nil:
		default:
			at, left := p.preStop(c, c.Current, now, grace)
			if left <= 0 {
				// No grace left: no wait for its turn (waitForTurn).
				r.stopping = true
				p.sigterm(c, r, now, at, 0)
				continue
			}
			r.turn = &stopTurn{from: at, end: at.Add(left)}
		}
	}
}

// turnAt returns when the i-th init container, a sidecar waiting for its
// turn, gets SIGTERM: once the app containers and the sidecars after it
// have exited (not before its preStop hook's end), at the latest when its
// grace period ends.
func (p *Pod) turnAt(i int) time.Time {
	turn := p.Init[i].Current.turn
	t := turn.from
	for _, c := range p.Containers()[i+1:] {
		if c.IsInit && !c.Restartable || c.Current == nil {
			continue
		}
		if c.Running() {
			return turn.end
		}
		t = maxTime(t, c.Current.FinishedAt())
	}
	return minTime(t, turn.end)
}

// takeTurn sends SIGTERM to sidecar c, whose turn has come at at, with
// what is left of its grace period.
func (p *Pod) takeTurn(c *PodContainer, at time.Time) {
	r := c.Current
	left := r.turn.end.Sub(at)
	r.turn, r.stopping = nil, true
	p.sigterm(c, r, at, at, left)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
