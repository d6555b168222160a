package fake

// What the pod spec asks of the runtime that the fake simulates by default,
// as the kubelet's runtime manager does it (pkg/kubelet/kuberuntime): the
// termination message of an exited instance (getTerminationMessage and the
// log fallback of convertToKubeContainerStatus; onRunEvent reads it once
// the instance exits: workload.Instance.TerminationMessage), imagePullPolicy Never
// (pkg/kubelet/images EnsureImageExists), and the environment with $(VAR)
// expansion (ExpandContainerCommandAndArgs), which workload.OfEnv applies.
