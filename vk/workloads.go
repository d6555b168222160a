package vk

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Workloads are the containers the capability specs ask the provider to
// run, each by what it must do. The defaults are shell commands in
// DefaultImage, which vk/simprovider plays and a real busybox runs to the
// same effect. A provider whose backend runs something else (an image of
// its own, a service that reads a container's behaviour from its env)
// sets the fields it needs, so that it can still declare the capabilities
// whose specs use them. Each function returns a container without Name; the
// suite names it. A field left nil takes DefaultWorkloads' function.
type Workloads struct {
	// Image of the default containers (default DefaultImage).
	Image string
	// ExitsAfter: a container that runs for about d, then exits with code
	// by itself (default: sh -c "sleep S; exit N"). KVK-POD-014, 015 and
	// the init containers of KVK-POD-019, 020.
	ExitsAfter func(d time.Duration, code int) corev1.Container
	// TrapsSIGTERM: a container that runs until it is stopped; on SIGTERM
	// its handler takes d, then exits with code (default: sh -c "trap
	// 'sleep S; exit N' TERM; sleep infinity & wait", without the sleep
	// when d is 0). KVK-POD-017, 018.
	TrapsSIGTERM func(d time.Duration, code int) corev1.Container
	// FailsToStart: a container the backend cannot start, every time
	// (default: /nonexistent/vk-conformance, a missing executable).
	// KVK-POD-016.
	FailsToStart func() corev1.Container
	// WritesTerminationMessage: a container that writes msg (no newline)
	// to its terminationMessagePath, then exits with code (default: sh -c
	// "echo -n MSG > /dev/termination-log; exit N"; msg is one word of
	// letters, digits and '-'). KVK-POD-021.
	WritesTerminationMessage func(msg string, code int) corev1.Container
	// LogsAndExits: a container that prints line to its standard output
	// (its log), writes no termination message, then exits with code
	// (default: sh -c "echo LINE; exit N"; line is one word of letters,
	// digits and '-'). The suite sets its terminationMessagePolicy to
	// FallbackToLogsOnError. KVK-POD-021.
	LogsAndExits func(line string, code int) corev1.Container
	// BecomesReady: a container that runs until it is stopped, with a
	// readiness probe that fails until about d after its start and passes
	// from then on (default: sh -c "sleep S; echo -n ready >
	// /tmp/vk-ready; sleep infinity & wait", its probe exec test -e
	// /tmp/vk-ready every second). KVK-POD-022.
	BecomesReady func(d time.Duration) corev1.Container
	// WritesEnv: a container that writes, as its termination message, the
	// expansion of $(name) in its command (the kubelet expands it with the
	// container's env), ':', and the value of its env variable name as its
	// process sees it, then exits 0 (default: sh -c "echo -n
	// $(NAME):$NAME > /dev/termination-log; exit 0"). KVK-POD-023.
	WritesEnv func(name string) corev1.Container
	// FailsLiveness: a container that runs until it is stopped, with a
	// liveness probe that passes for about d after its start and fails
	// from then on (default: sh -c "echo -n ok > /tmp/vk-alive; sleep S;
	// rm -f /tmp/vk-alive; sleep infinity & wait", its probe exec test -e
	// /tmp/vk-alive every second, failureThreshold 1). KVK-POD-024.
	FailsLiveness func(d time.Duration) corev1.Container
	// PostStartWrites: a container that runs for about d, then exits 0,
	// writing nothing itself, with a postStart exec hook that writes msg
	// (no newline) to its terminationMessagePath (default: sh -c "sleep
	// S; exit 0", its hook sh -c "echo -n MSG > /dev/termination-log";
	// msg is one word of letters, digits and '-'). KVK-POD-025.
	PostStartWrites func(msg string, d time.Duration) corev1.Container
	// PreStopWrites: a container that runs until it is stopped and exits
	// 0 at once on SIGTERM, with a preStop exec hook that writes msg (no
	// newline) to its terminationMessagePath (default: sh -c "trap 'exit
	// 0' TERM; sleep infinity & wait", its hook sh -c "echo -n MSG >
	// /dev/termination-log"). KVK-POD-026.
	PreStopWrites func(msg string) corev1.Container
	// FailsPostStart: a container that runs until it is stopped and exits
	// 0 at once on SIGTERM, with a postStart exec hook that fails (default:
	// sh -c "trap 'exit 0' TERM; sleep infinity & wait", its hook sh -c
	// "exit 1"). KVK-POD-027.
	FailsPostStart func() corev1.Container
	// StartsAfter: a container that runs until it is stopped, with a
	// startup probe that fails until about d after its start and passes
	// from then on, and a readiness probe that passes from its start
	// (default: sh -c "echo -n ok > /tmp/vk-ready; sleep S; echo -n ok >
	// /tmp/vk-started; sleep infinity & wait", its startup probe exec test
	// -e /tmp/vk-started every second, failureThreshold 60, its readiness
	// probe exec test -e /tmp/vk-ready every second). KVK-POD-028.
	StartsAfter func(d time.Duration) corev1.Container
	// NeverStarts: a container that runs until it is stopped and exits 0
	// at once on SIGTERM, with a startup probe that never passes,
	// failureThreshold 3 (default: sh -c "trap 'exit 0' TERM; sleep
	// infinity & wait", its startup probe exec test -e /tmp/vk-started
	// every second). KVK-POD-029.
	NeverStarts func() corev1.Container
}

// DefaultImage is the image of the default workloads: a shell and its
// sleep, echo and trap are all they need.
const DefaultImage = "busybox:1.36"

// DefaultWorkloads returns the default workloads in image (DefaultImage
// when empty).
func DefaultWorkloads(image string) Workloads {
	if image == "" {
		image = DefaultImage
	}
	sh := func(script string) corev1.Container {
		return corev1.Container{Image: image, Command: []string{"sh", "-c", script}, ImagePullPolicy: corev1.PullIfNotPresent}
	}
	return Workloads{
		Image: image,
		ExitsAfter: func(d time.Duration, code int) corev1.Container {
			return sh("sleep " + seconds(d) + "; exit " + strconv.Itoa(code))
		},
		TrapsSIGTERM: func(d time.Duration, code int) corev1.Container {
			action := "exit " + strconv.Itoa(code)
			if d > 0 {
				action = "sleep " + seconds(d) + "; " + action
			}
			return sh("trap '" + action + "' TERM; sleep infinity & wait")
		},
		FailsToStart: func() corev1.Container {
			return corev1.Container{Image: image, Command: []string{"/nonexistent/vk-conformance"}, ImagePullPolicy: corev1.PullIfNotPresent}
		},
		WritesTerminationMessage: func(msg string, code int) corev1.Container {
			return sh("echo -n " + msg + " > " + corev1.TerminationMessagePathDefault + "; exit " + strconv.Itoa(code))
		},
		LogsAndExits: func(line string, code int) corev1.Container {
			return sh("echo " + line + "; exit " + strconv.Itoa(code))
		},
		FailsLiveness: func(d time.Duration) corev1.Container {
			const file = "/tmp/vk-alive"
			c := sh("echo -n ok > " + file + "; sleep " + seconds(d) + "; rm -f " + file + "; sleep infinity & wait")
			c.LivenessProbe = &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-e", file}}},
				PeriodSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1, TimeoutSeconds: 1,
			}
			return c
		},
		WritesEnv: func(name string) corev1.Container {
			return sh("echo -n $(" + name + "):$" + name + " > " + corev1.TerminationMessagePathDefault + "; exit 0")
		},
		PostStartWrites: func(msg string, d time.Duration) corev1.Container {
			c := sh("sleep " + seconds(d) + "; exit 0")
			c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
				Command: []string{"sh", "-c", "echo -n " + msg + " > " + corev1.TerminationMessagePathDefault}}}}
			return c
		},
		PreStopWrites: func(msg string) corev1.Container {
			c := sh("trap 'exit 0' TERM; sleep infinity & wait")
			c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
				Command: []string{"sh", "-c", "echo -n " + msg + " > " + corev1.TerminationMessagePathDefault}}}}
			return c
		},
		FailsPostStart: func() corev1.Container {
			c := sh("trap 'exit 0' TERM; sleep infinity & wait")
			c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "exit 1"}}}}
			return c
		},
		StartsAfter: func(d time.Duration) corev1.Container {
			c := sh("echo -n ok > /tmp/vk-ready; sleep " + seconds(d) + "; echo -n ok > /tmp/vk-started; sleep infinity & wait")
			c.StartupProbe = &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-e", "/tmp/vk-started"}}},
				PeriodSeconds: 1, FailureThreshold: 60, SuccessThreshold: 1, TimeoutSeconds: 1,
			}
			c.ReadinessProbe = &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-e", "/tmp/vk-ready"}}},
				PeriodSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1, TimeoutSeconds: 1,
			}
			return c
		},
		NeverStarts: func() corev1.Container {
			c := sh("trap 'exit 0' TERM; sleep infinity & wait")
			c.StartupProbe = &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-e", "/tmp/vk-started"}}},
				PeriodSeconds: 1, FailureThreshold: 3, SuccessThreshold: 1, TimeoutSeconds: 1,
			}
			return c
		},
		BecomesReady: func(d time.Duration) corev1.Container {
			const file = "/tmp/vk-ready"
			c := sh("sleep " + seconds(d) + "; echo -n ready > " + file + "; sleep infinity & wait")
			c.ReadinessProbe = &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-e", file}}},
				PeriodSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1, TimeoutSeconds: 1,
			}
			return c
		},
	}
}

// withDefaults fills w's nil fields from DefaultWorkloads(w.Image).
func (w Workloads) withDefaults() Workloads {
	def := DefaultWorkloads(w.Image)
	w.Image = def.Image
	if w.ExitsAfter == nil {
		w.ExitsAfter = def.ExitsAfter
	}
	if w.TrapsSIGTERM == nil {
		w.TrapsSIGTERM = def.TrapsSIGTERM
	}
	if w.FailsToStart == nil {
		w.FailsToStart = def.FailsToStart
	}
	if w.WritesTerminationMessage == nil {
		w.WritesTerminationMessage = def.WritesTerminationMessage
	}
	if w.LogsAndExits == nil {
		w.LogsAndExits = def.LogsAndExits
	}
	if w.FailsLiveness == nil {
		w.FailsLiveness = def.FailsLiveness
	}
	if w.WritesEnv == nil {
		w.WritesEnv = def.WritesEnv
	}
	if w.BecomesReady == nil {
		w.BecomesReady = def.BecomesReady
	}
	if w.PostStartWrites == nil {
		w.PostStartWrites = def.PostStartWrites
	}
	if w.PreStopWrites == nil {
		w.PreStopWrites = def.PreStopWrites
	}
	if w.FailsPostStart == nil {
		w.FailsPostStart = def.FailsPostStart
	}
	if w.StartsAfter == nil {
		w.StartsAfter = def.StartsAfter
	}
	if w.NeverStarts == nil {
		w.NeverStarts = def.NeverStarts
	}
	return w
}

// seconds formats d as decimal seconds for sleep ("0.5", "10").
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// argv is a container's Command followed by its Args, for messages.
func argv(c corev1.Container) []string {
	return append(append([]string(nil), c.Command...), c.Args...)
}
