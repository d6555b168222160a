package vk

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The spec of a container's env (CapEnv), read through its termination
// message (CapTerminationMessages).

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-023", Level: Must, Capabilities: []Capability{CapEnv, CapTerminationMessages},
			Title: "a container's env, as VK hands it over, reaches its process, and the $(VAR) references of its command are expanded with it",
			VK: "internal/podutils/env.go PopulateEnvironmentVariables, makeEnvironmentMap (VK resolves the env before CreatePod: valueFrom, envFrom, $(VAR) " +
				"in values; the container gets the result as env, in no set order, but its command and args as written); node/pod.go createOrUpdatePod, " +
				"podsEqualWithResolvedEnvs, updatePodStatus"},
			run: envReachesTheProcess},
	)
}

// envReachesTheProcess runs a container with GREETING=hello and
// TARGET=$(GREETING)-world, which VK resolves to hello-world before
// CreatePod, and reads back what its command and its process saw of
// TARGET.
func envReachesTheProcess(e *env) {
	p := newPod("env")
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	c := e.w.WritesEnv("TARGET")
	c.Name = "app"
	c.Env = append(c.Env, corev1.EnvVar{Name: "GREETING", Value: "hello"}, corev1.EnvVar{Name: "TARGET", Value: "$(GREETING)-world"})
	p.Spec.Containers = []corev1.Container{c}
	p = e.createPod(p)
	key := podKey(p)
	const want = "hello-world:hello-world"
	var last *corev1.Pod
	if !e.await(statusBound, func() bool {
		last = e.apiPod(p.Namespace, p.Name)
		return last != nil && len(last.Status.ContainerStatuses) == 1 && last.Status.ContainerStatuses[0].State.Terminated != nil
	}) {
		e.failf("precondition: VK did not publish the container of pod %s (restartPolicy Never, %q, which exits at once) terminated within %v: "+
			"it published %s; %s", key, argv(c), statusBound, describeStatus(last), e.providerCallsOf(key))
	}
	msg := last.Status.ContainerStatuses[0].State.Terminated.Message
	if strings.HasSuffix(msg, want) {
		return
	}
	rest := msg // what the container wrote, after the runtime's message if any
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		rest = msg[i+len(": "):]
	}
	got, seen, _ := strings.Cut(rest, ":")
	e.failf("VK published the container of pod %s (env GREETING=hello, TARGET=$(GREETING)-world; %q) terminated with message %q, want %q: "+
		"its command saw $(TARGET) as %q and its process TARGET as %q. VK resolves the env before CreatePod (internal/podutils/env.go "+
		"PopulateEnvironmentVariables: TARGET=hello-world) and hands the command as written; the kubelet expands $(VAR) in command and args "+
		"with that env and starts the process with it, and the provider's backend must too%s",
		key, argv(c), msg, want, got, seen, publishedAsReported)
}
