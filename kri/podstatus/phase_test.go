package podstatus_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The cases of the kubelet's phase tests (TestPodPhaseWith... in
// pkg/kubelet/kubelet_pods_test.go). Those tests hand getPhase API container
// statuses; here the runtime instances and reason caches that make Generate
// produce those statuses are handed in, and the whole status is compared:
//
//	runningState                      a running instance
//	startedState                      a running instance whose previous status showed it started
//	stoppedState, succeededState      an instance exited 0
//	failedState                       an instance exited -1
//	waitingState                      a created instance
//	waitingStateWithLastTermination   a created instance replacing one that exited 0,
//	                                  or one exited 0 whose restart failed (CrashLoopBackOff)
//	waitingStateWithNonZeroTermination likewise with exit code -1
//	no status                         no instance (a Waiting status: getPhase's "unknown"
//	                                  and "waiting" give the same phase)
//	podIsTerminal                     GenerateTerminal, after KillPod (sandbox not ready)
//	podHasInitialized                 an app container in ActiveContainerStatuses

func TestPhaseRestartAlways(t *testing.T) {
	spec := v1.PodSpec{Containers: containers("containerA", "containerB"), RestartPolicy: v1.RestartPolicyAlways}
	const from = "TestPodPhaseWithRestartAlways/"
	runCases(t, []genCase{
		{
			from:   from + "waiting",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: noRuntime(),
			want: want(v1.PodPending, conds(noSandbox, initOK, crUnready("containerA containerB")),
				list(waitingC("containerA", "ContainerCreating"), waitingC("containerB", "ContainerCreating"))),
		},
		{
			from:   from + "all running",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(runningI("containerA", "a1", 1), runningI("containerB", "b1", 2)),
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crOK),
				list(runningC("containerA", "a1", 1), runningC("containerB", "b1", 2))),
		},
		{
			from:   from + "all stopped with restart always",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerA", "a1", 1, 0), exitedI("containerB", "b1", 2, 0)),
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("containerA containerB")),
				list(terminatedC("containerA", "a1", 1, 0), terminatedC("containerB", "b1", 2, 0))),
		},
		{
			from:     from + "all succeeded with restart always, but the pod is terminal",
			pod:      mkPod(spec, v1.PodStatus{}),
			status:   stoppedRuntime(exitedI("containerA", "a1", 1, 0), exitedI("containerB", "b1", 2, 0)),
			terminal: true,
			want: want(v1.PodSucceeded, conds(sandboxDown, initCompleted, crCompleted),
				list(terminatedC("containerA", "a1", 1, 0), terminatedC("containerB", "b1", 2, 0))),
		},
		{
			from:     from + "all stopped with restart always, but the pod is terminal",
			pod:      mkPod(spec, v1.PodStatus{}),
			status:   stoppedRuntime(exitedI("containerA", "a1", 1, 0), exitedI("containerB", "b1", 2, -1)),
			terminal: true,
			want: want(v1.PodFailed, conds(sandboxDown, initOK, crFailed),
				list(terminatedC("containerA", "a1", 1, 0), terminatedC("containerB", "b1", 2, -1))),
		},
		{
			from:   from + "mixed state #1 with restart always",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(runningI("containerA", "a1", 1), exitedI("containerB", "b1", 2, 0)),
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("containerB")),
				list(runningC("containerA", "a1", 1), terminatedC("containerB", "b1", 2, 0))),
		},
		{
			from:   from + "mixed state #2 with restart always",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(runningI("containerA", "a1", 1)),
			want: want(v1.PodPending, conds(sandboxOK, initOK, crUnready("containerB")),
				list(runningC("containerA", "a1", 1), waitingC("containerB", "ContainerCreating"))),
		},
		{
			from:   from + "mixed state #3 with restart always",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(runningI("containerA", "a1", 1), createdI("containerB", "b1", 2)),
			want: want(v1.PodPending, conds(sandboxOK, initOK, crUnready("containerB")),
				list(runningC("containerA", "a1", 1), createdC("containerB", "b1"))),
		},
		{
			from:     from + "backoff crashloop container with restart always",
			pod:      mkPod(spec, v1.PodStatus{}),
			status:   runtimeStatus(runningI("containerA", "a1", 1), exitedI("containerB", "b1", 2, 0)),
			failures: map[string][2]string{"containerB": crash},
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("containerB")),
				list(runningC("containerA", "a1", 1), crashLoopC("containerB", "b1", 2, 0))),
		},
	})
}

func TestPhaseRestartAlwaysInitContainers(t *testing.T) {
	spec := v1.PodSpec{
		InitContainers: containers("containerX"),
		Containers:     containers("containerA", "containerB"),
		RestartPolicy:  v1.RestartPolicyAlways,
	}
	const from = "TestPodPhaseWithRestartAlwaysInitContainers/"
	initializing := list(waitingC("containerA", "PodInitializing"), waitingC("containerB", "PodInitializing"))
	notInit := conds(sandboxOK, initIncomplete("containerX"), crUnready("containerA containerB"))
	runCases(t, []genCase{
		{
			from:   from + "empty, waiting",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: noRuntime(),
			want: want(v1.PodPending, conds(noSandbox, initIncomplete("containerX"), crUnready("containerA containerB")),
				initializing, waitingC("containerX", "PodInitializing")),
		},
		{
			from:   from + "init container running",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(runningI("containerX", "x1", 1)),
			want:   want(v1.PodPending, notInit, initializing, withReady(runningC("containerX", "x1", 1), false)),
		},
		{
			from:   from + "init container terminated non-zero",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerX", "x1", 1, -1)),
			want:   want(v1.PodPending, notInit, initializing, terminatedC("containerX", "x1", 1, -1)),
		},
		{
			from:   from + "init container waiting, terminated zero",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(createdI("containerX", "x2", 3), exitedI("containerX", "x1", 1, 0)),
			want: want(v1.PodPending, notInit, initializing,
				withLast(createdC("containerX", "x2"), terminatedS("x1", 1, 0))),
		},
		{
			from:     from + "init container waiting, terminated non-zero",
			pod:      mkPod(spec, v1.PodStatus{}),
			status:   runtimeStatus(exitedI("containerX", "x1", 1, -1)),
			failures: map[string][2]string{"containerX": crash},
			want:     want(v1.PodPending, notInit, initializing, crashLoopC("containerX", "x1", 1, -1)),
		},
		{
			from:   from + "init container waiting, not terminated",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(createdI("containerX", "x1", 1)),
			want:   want(v1.PodPending, notInit, initializing, createdC("containerX", "x1")),
		},
		{
			from:   from + "init container succeeded",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerX", "x1", 1, 0), runningI("containerA", "a1", 3), runningI("containerB", "b1", 4)),
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crOK),
				list(runningC("containerA", "a1", 3), runningC("containerB", "b1", 4)),
				withReady(terminatedC("containerX", "x1", 1, 0), true)),
		},
	})
}

func TestPhaseRestartAlwaysRestartableInitContainers(t *testing.T) {
	spec := v1.PodSpec{
		InitContainers: []v1.Container{sidecar("containerX")},
		Containers:     containers("containerA", "containerB"),
		RestartPolicy:  v1.RestartPolicyAlways,
	}
	const from = "TestPodPhaseWithRestartAlwaysRestartableInitContainers/"
	initializing := list(waitingC("containerA", "PodInitializing"), waitingC("containerB", "PodInitializing"))
	sidecarStarted := v1.PodStatus{InitContainerStatuses: list(startedC("containerX"))}
	// The sandbox was recreated: containerA and containerB still run in the
	// old one, containerX was started in the new one.
	recreated := runtimeStatus(runningI("containerA", "a1", 1), runningI("containerB", "b1", 2), runningI("containerX", "x2", 11))
	recreated.SandboxStatuses = []*runtimeapi.PodSandboxStatus{deadSandbox("sb-1", 0), readySandbox("sb-2", 10)}
	recreated.ActiveContainerStatuses = recreated.ContainerStatuses[2:]
	runCases(t, []genCase{
		{
			from:   from + "empty, waiting",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: noRuntime(),
			want: want(v1.PodPending, conds(noSandbox, initIncomplete("containerX"), crUnready("containerX containerA containerB")),
				initializing, waitingC("containerX", "PodInitializing")),
		},
		{
			from:   from + "restartable init container running",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(runningI("containerX", "x1", 1)),
			want: want(v1.PodPending, conds(sandboxOK, initOK, crUnready("containerA containerB")),
				initializing, runningC("containerX", "x1", 1)),
		},
		{
			from:   from + "restartable init container stopped",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerX", "x1", 1, 0)),
			want: want(v1.PodPending, conds(sandboxOK, initIncomplete("containerX"), crUnready("containerX containerA containerB")),
				initializing, terminatedC("containerX", "x1", 1, 0)),
		},
		{
			from:   from + "restartable init container started, 1/2 regular container running",
			pod:    mkPod(spec, sidecarStarted),
			status: runtimeStatus(runningI("containerX", "x1", 1), runningI("containerA", "a1", 2)),
			want: want(v1.PodPending, conds(sandboxOK, initOK, crUnready("containerB")),
				list(runningC("containerA", "a1", 2), waitingC("containerB", "PodInitializing")),
				runningC("containerX", "x1", 1)),
		},
		{
			from:   from + "restartable init container started, all regular containers running",
			pod:    mkPod(spec, sidecarStarted),
			status: runtimeStatus(runningI("containerX", "x1", 1), runningI("containerA", "a1", 2), runningI("containerB", "b1", 3)),
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crOK),
				list(runningC("containerA", "a1", 2), runningC("containerB", "b1", 3)),
				runningC("containerX", "x1", 1)),
		},
		{
			from:   from + "restartable init container running, all regular containers running",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(runningI("containerX", "x1", 1), runningI("containerA", "a1", 2), runningI("containerB", "b1", 3)),
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crOK),
				list(runningC("containerA", "a1", 2), runningC("containerB", "b1", 3)),
				runningC("containerX", "x1", 1)),
		},
		{
			from:   from + "restartable init container stopped, all regular containers running",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerX", "x1", 1, 0), runningI("containerA", "a1", 3), runningI("containerB", "b1", 4)),
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("containerX")),
				list(runningC("containerA", "a1", 3), runningC("containerB", "b1", 4)),
				terminatedC("containerX", "x1", 1, 0)),
		},
		{
			// The kubelet never applies a start failure to an init
			// container whose newest instance exited 0, a sidecar
			// included: the sidecar in back-off has a new instance,
			// created, whose start failed.
			from:     from + "backoff crashloop restartable init container, all regular containers running",
			pod:      mkPod(spec, v1.PodStatus{}),
			status:   runtimeStatus(createdI("containerX", "x2", 5), exitedI("containerX", "x1", 1, 0), runningI("containerA", "a1", 3), runningI("containerB", "b1", 4)),
			failures: map[string][2]string{"containerX": crash},
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("containerX")),
				list(runningC("containerA", "a1", 3), runningC("containerB", "b1", 4)),
				withState(withLast(createdC("containerX", "x2"), terminatedS("x1", 1, 0)), waitingS(crashLoop, crashMsg))),
		},
		{
			from:     from + "all regular containers succeeded and restartable init container failed with restart always, but the pod is terminal",
			pod:      mkPod(spec, v1.PodStatus{}),
			status:   stoppedRuntime(exitedI("containerX", "x1", 1, -1), exitedI("containerA", "a1", 3, 0), exitedI("containerB", "b1", 4, 0)),
			terminal: true,
			want: want(v1.PodSucceeded, conds(sandboxDown, initCompleted, crCompleted),
				list(terminatedC("containerA", "a1", 3, 0), terminatedC("containerB", "b1", 4, 0)),
				terminatedC("containerX", "x1", 1, -1)),
		},
		{
			// The same with startedState instead of runningState for
			// containerX: the phase reads Started from the previous
			// status (the kubelet's getPhase runs before its prober),
			// and a started sidecar does not hold the pod in Pending.
			from:   from + "re-initializing the pod after the sandbox is recreated, restartable init container started",
			pod:    mkPod(spec, sidecarStarted),
			status: recreated,
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crOK),
				list(runningC("containerA", "a1", 1), runningC("containerB", "b1", 2)),
				runningC("containerX", "x2", 11)),
		},
		{
			from:   from + "re-initializing the pod after the sandbox is recreated",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: recreated,
			want: want(v1.PodPending, conds(sandboxOK, initOK, crOK),
				list(runningC("containerA", "a1", 1), runningC("containerB", "b1", 2)),
				runningC("containerX", "x2", 11)),
		},
	})
}

func TestPhaseRestartAlwaysAndPodHasRun(t *testing.T) {
	spec := v1.PodSpec{
		InitContainers: []v1.Container{{Name: "containerX"}, sidecar("containerY")},
		Containers:     containers("containerA"),
		RestartPolicy:  v1.RestartPolicyAlways,
	}
	const from = "TestPodPhaseWithRestartAlwaysAndPodHasRun/"
	// active limits ActiveContainerStatuses to the first n instances: the
	// others belong to an earlier sandbox.
	active := func(s *pkgcontainer.PodStatus, n int) *pkgcontainer.PodStatus {
		s.ActiveContainerStatuses = s.ContainerStatuses[:n]
		return s
	}
	runCases(t, []genCase{
		{
			from:   from + "regular init containers, restartable init container and regular container are all running",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: active(runtimeStatus(runningI("containerX", "x1", 2), runningI("containerY", "y1", 3), runningI("containerA", "a1", 1)), 2),
			want: want(v1.PodPending, conds(sandboxOK, initOK, crOK),
				list(runningC("containerA", "a1", 1)),
				withReady(runningC("containerX", "x1", 2), false), runningC("containerY", "y1", 3)),
		},
		{
			from:   from + "re-created sandbox: regular init container is succeeded, restartable init container is running, old regular containers is stopped",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: active(runtimeStatus(exitedI("containerX", "x1", 2, 0), runningI("containerY", "y1", 4), exitedI("containerA", "a1", 0, 0)), 2),
			want: want(v1.PodPending, conds(sandboxOK, initOK, crUnready("containerA")),
				list(terminatedC("containerA", "a1", 0, 0)),
				withReady(terminatedC("containerX", "x1", 2, 0), true), runningC("containerY", "y1", 4)),
		},
		{
			from:   from + "regular init container is succeeded, restartable init container is running, regular containers is stopped",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerX", "x1", 2, 0), runningI("containerY", "y1", 4), exitedI("containerA", "a1", 5, 0)),
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("containerA")),
				list(terminatedC("containerA", "a1", 5, 0)),
				withReady(terminatedC("containerX", "x1", 2, 0), true), runningC("containerY", "y1", 4)),
		},
	})
}

func TestPhaseRestartNever(t *testing.T) {
	spec := v1.PodSpec{Containers: containers("containerA", "containerB"), RestartPolicy: v1.RestartPolicyNever}
	const from = "TestPodPhaseWithRestartNever/"
	runCases(t, []genCase{
		{
			from:   from + "all succeeded with restart never",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerA", "a1", 1, 0), exitedI("containerB", "b1", 2, 0)),
			want: want(v1.PodSucceeded, conds(sandboxOK, initCompleted, crCompleted),
				list(terminatedC("containerA", "a1", 1, 0), terminatedC("containerB", "b1", 2, 0))),
		},
		{
			from:   from + "all failed with restart never",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerA", "a1", 1, -1), exitedI("containerB", "b1", 2, -1)),
			want: want(v1.PodFailed, conds(sandboxOK, initOK, crFailed),
				list(terminatedC("containerA", "a1", 1, -1), terminatedC("containerB", "b1", 2, -1))),
		},
		{
			from:   from + "mixed state #1 with restart never",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(runningI("containerA", "a1", 1), exitedI("containerB", "b1", 2, 0)),
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("containerB")),
				list(runningC("containerA", "a1", 1), terminatedC("containerB", "b1", 2, 0))),
		},
	})
}

func TestPhaseRestartNeverInitContainers(t *testing.T) {
	spec := v1.PodSpec{
		InitContainers: containers("containerX"),
		Containers:     containers("containerA", "containerB"),
		RestartPolicy:  v1.RestartPolicyNever,
	}
	const from = "TestPodPhaseWithRestartNeverInitContainers/"
	initializing := list(waitingC("containerA", "PodInitializing"), waitingC("containerB", "PodInitializing"))
	runCases(t, []genCase{
		{
			from:   from + "init container terminated non-zero",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerX", "x1", 1, -1)),
			want: want(v1.PodFailed, conds(sandboxOK, initIncomplete("containerX"), crFailed),
				initializing, terminatedC("containerX", "x1", 1, -1)),
		},
		{
			from:   from + "init container waiting, terminated non-zero",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(createdI("containerX", "x2", 3), exitedI("containerX", "x1", 1, -1)),
			want: want(v1.PodFailed, conds(sandboxOK, initIncomplete("containerX"), crFailed),
				initializing, withLast(createdC("containerX", "x2"), terminatedS("x1", 1, -1))),
		},
		{
			from:   from + "init container succeeded",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerX", "x1", 1, 0), runningI("containerA", "a1", 3), runningI("containerB", "b1", 4)),
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crOK),
				list(runningC("containerA", "a1", 3), runningC("containerB", "b1", 4)),
				withReady(terminatedC("containerX", "x1", 1, 0), true)),
		},
	})
}

func TestPhaseRestartNeverRestartableInitContainers(t *testing.T) {
	spec := v1.PodSpec{
		InitContainers: []v1.Container{sidecar("containerX")},
		Containers:     containers("containerA", "containerB"),
		RestartPolicy:  v1.RestartPolicyNever,
	}
	const from = "TestPodPhaseWithRestartNeverRestartableInitContainers/"
	succeededApps := list(terminatedC("containerA", "a1", 3, 0), terminatedC("containerB", "b1", 4, 0))
	runCases(t, []genCase{
		{
			from:   from + "restartable init container started, main containers succeeded",
			pod:    mkPod(spec, v1.PodStatus{InitContainerStatuses: list(startedC("containerX"))}),
			status: runtimeStatus(runningI("containerX", "x1", 1), exitedI("containerA", "a1", 3, 0), exitedI("containerB", "b1", 4, 0)),
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("containerA containerB")),
				succeededApps, runningC("containerX", "x1", 1)),
		},
		{
			from:   from + "all containers succeeded",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerX", "x1", 1, 0), exitedI("containerA", "a1", 3, 0), exitedI("containerB", "b1", 4, 0)),
			want: want(v1.PodSucceeded, conds(sandboxOK, initCompleted, crCompleted),
				succeededApps, terminatedC("containerX", "x1", 1, 0)),
		},
		{
			from:   from + "backoff crashloop restartable init container, main containers succeeded",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(createdI("containerX", "x2", 5), exitedI("containerX", "x1", 1, 0), exitedI("containerA", "a1", 3, 0), exitedI("containerB", "b1", 4, 0)),
			want: want(v1.PodSucceeded, conds(sandboxOK, initCompleted, crCompleted),
				succeededApps, withLast(createdC("containerX", "x2"), terminatedS("x1", 1, 0))),
		},
		{
			from:     from + "backoff crashloop with non-zero restartable init container, main containers succeeded",
			pod:      mkPod(spec, v1.PodStatus{}),
			status:   runtimeStatus(exitedI("containerX", "x1", 1, -1), exitedI("containerA", "a1", 3, 0), exitedI("containerB", "b1", 4, 0)),
			failures: map[string][2]string{"containerX": crash},
			want: want(v1.PodSucceeded, conds(sandboxOK, initCompleted, crCompleted),
				succeededApps, crashLoopC("containerX", "x1", 1, -1)),
		},
	})
}

func TestPhaseRestartOnFailure(t *testing.T) {
	spec := v1.PodSpec{Containers: containers("containerA", "containerB"), RestartPolicy: v1.RestartPolicyOnFailure}
	const from = "TestPodPhaseWithRestartOnFailure/"
	runCases(t, []genCase{
		{
			from:   from + "all succeeded with restart onfailure",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerA", "a1", 1, 0), exitedI("containerB", "b1", 2, 0)),
			want: want(v1.PodSucceeded, conds(sandboxOK, initCompleted, crCompleted),
				list(terminatedC("containerA", "a1", 1, 0), terminatedC("containerB", "b1", 2, 0))),
		},
		{
			from:   from + "all failed with restart never",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerA", "a1", 1, -1), exitedI("containerB", "b1", 2, -1)),
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("containerA containerB")),
				list(terminatedC("containerA", "a1", 1, -1), terminatedC("containerB", "b1", 2, -1))),
		},
		{
			from:   from + "backoff crashloop container with restart onfailure",
			pod:    mkPod(spec, v1.PodStatus{}),
			status: runtimeStatus(runningI("containerA", "a1", 1), createdI("containerB", "b2", 4), exitedI("containerB", "b1", 2, 0)),
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("containerB")),
				list(runningC("containerA", "a1", 1), withLast(createdC("containerB", "b2"), terminatedS("b1", 2, 0)))),
		},
	})
}

func TestPhaseContainerRestartPolicy(t *testing.T) {
	const from = "TestPodPhaseWithContainerRestartPolicy/"
	one := func(p v1.ContainerRestartPolicy) v1.PodSpec {
		return v1.PodSpec{Containers: []v1.Container{withPolicy("failed-container", p)}, RestartPolicy: v1.RestartPolicyAlways}
	}
	failedOne := runtimeStatus(exitedI("failed-container", "f1", 1, -1))
	neverOnFailure := v1.PodSpec{
		Containers:    []v1.Container{withPolicy("containerA", v1.ContainerRestartPolicyNever), withPolicy("containerB", v1.ContainerRestartPolicyOnFailure)},
		RestartPolicy: v1.RestartPolicyAlways,
	}
	runCases(t, []genCase{
		{
			from:   from + "container with restart policy Never failed",
			pod:    mkPod(one(v1.ContainerRestartPolicyNever), v1.PodStatus{}),
			status: failedOne,
			want:   want(v1.PodFailed, conds(sandboxOK, initOK, crFailed), list(terminatedC("failed-container", "f1", 1, -1))),
		},
		{
			from:   from + "container with restart policy OnFailure failed",
			pod:    mkPod(one(v1.ContainerRestartPolicyOnFailure), v1.PodStatus{}),
			status: failedOne,
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("failed-container")),
				list(terminatedC("failed-container", "f1", 1, -1))),
		},
		{
			from:   from + "container with restart policy Always failed",
			pod:    mkPod(one(v1.ContainerRestartPolicyAlways), v1.PodStatus{}),
			status: failedOne,
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("failed-container")),
				list(terminatedC("failed-container", "f1", 1, -1))),
		},
		{
			from: from + "At least one container with restartable container-level restart policy failed",
			pod: mkPod(v1.PodSpec{
				Containers:    []v1.Container{withPolicy("containerA", v1.ContainerRestartPolicyAlways), {Name: "containerB"}},
				RestartPolicy: v1.RestartPolicyNever,
			}, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerA", "a1", 1, 0), exitedI("containerB", "b1", 2, -1)),
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("containerA containerB")),
				list(terminatedC("containerA", "a1", 1, 0), terminatedC("containerB", "b1", 2, -1))),
		},
		{
			from:   from + "All containers without restartable container-level restart policy failed",
			pod:    mkPod(neverOnFailure, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerA", "a1", 1, -1), exitedI("containerB", "b1", 2, 0)),
			want: want(v1.PodFailed, conds(sandboxOK, initOK, crFailed),
				list(terminatedC("containerA", "a1", 1, -1), terminatedC("containerB", "b1", 2, 0))),
		},
		{
			from:   from + "All containers succeeded",
			pod:    mkPod(neverOnFailure, v1.PodStatus{}),
			status: runtimeStatus(exitedI("containerA", "a1", 1, 0), exitedI("containerB", "b1", 2, 0)),
			want: want(v1.PodSucceeded, conds(sandboxOK, initCompleted, crCompleted),
				list(terminatedC("containerA", "a1", 1, 0), terminatedC("containerB", "b1", 2, 0))),
		},
	})
}

func TestPhaseContainerRestartPolicyInitContainers(t *testing.T) {
	const from = "TestPodPhaseWithContainerRestartPolicyInitContainers/"
	spec := func(p v1.ContainerRestartPolicy, pod v1.RestartPolicy) v1.PodSpec {
		return v1.PodSpec{
			InitContainers: []v1.Container{withPolicy("failed-container", p)},
			Containers:     containers("container"),
			RestartPolicy:  pod,
		}
	}
	failed := runtimeStatus(exitedI("failed-container", "f1", 1, -1))
	initializing := list(waitingC("container", "PodInitializing"))
	runCases(t, []genCase{
		{
			from:   from + "init container with restart policy Never failed",
			pod:    mkPod(spec(v1.ContainerRestartPolicyNever, v1.RestartPolicyAlways), v1.PodStatus{}),
			status: failed,
			want: want(v1.PodFailed, conds(sandboxOK, initIncomplete("failed-container"), crFailed),
				initializing, terminatedC("failed-container", "f1", 1, -1)),
		},
		{
			from:   from + "init container with restart policy OnFailure failed",
			pod:    mkPod(spec(v1.ContainerRestartPolicyOnFailure, v1.RestartPolicyNever), v1.PodStatus{}),
			status: failed,
			want: want(v1.PodPending, conds(sandboxOK, initIncomplete("failed-container"), crUnready("container")),
				initializing, terminatedC("failed-container", "f1", 1, -1)),
		},
		{
			// An init container with restart policy Always is a sidecar.
			from:   from + "container with restart policy Always failed",
			pod:    mkPod(spec(v1.ContainerRestartPolicyAlways, v1.RestartPolicyNever), v1.PodStatus{}),
			status: failed,
			want: want(v1.PodPending, conds(sandboxOK, initIncomplete("failed-container"), crUnready("failed-container container")),
				initializing, terminatedC("failed-container", "f1", 1, -1)),
		},
	})
}
